package testvars

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// fakeTB records whether a helper failed or skipped, and what it said
// first, without ending the test that drives it.
type fakeTB struct {
	testing.TB
	outcome string // "", "fail" or "skip"
	msg     string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) note(outcome string, args ...any) {
	if f.outcome == "" {
		f.outcome, f.msg = outcome, fmt.Sprint(args...)
	}
}
func (f *fakeTB) Fatal(args ...any)                 { f.note("fail", args...) }
func (f *fakeTB) Fatalf(format string, args ...any) { f.note("fail", fmt.Sprintf(format, args...)) }
func (f *fakeTB) Skip(args ...any)                  { f.note("skip", args...) }

func TestOn(t *testing.T) {
	for _, c := range []struct {
		value   string
		on      bool
		outcome string
	}{
		{"", false, ""},
		{"1", true, ""},
		{"true", true, ""},
		{"0", false, ""},
		{"false", false, ""},
		{"yes", false, "fail"}, // a typo must not silently mean off
	} {
		t.Run(c.value, func(t *testing.T) {
			t.Setenv(LongTests.Name, c.value)
			f := &fakeTB{TB: t}
			if got := LongTests.On(f); got != c.on || f.outcome != c.outcome {
				t.Errorf("%s=%q: on %v, outcome %q; want %v, %q", LongTests.Name, c.value, got, f.outcome, c.on, c.outcome)
			}
		})
	}
}

func TestLongAndLive(t *testing.T) {
	for _, c := range []struct {
		name             string
		long, url, token string
		longOutcome      string
		liveOutcome      string
	}{
		{"nothing set", "", "", "", "skip", "skip"},
		{"long on, a URL without its token", "1", "http://127.0.0.1:6806", "", "", "skip"},
		{"everything set", "1", "http://127.0.0.1:6806", "tok", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(LongTests.Name, c.long)
			t.Setenv(LiveURL.Name, c.url)
			t.Setenv(LiveToken.Name, c.token)
			f := &fakeTB{TB: t}
			Long(f)
			if f.outcome != c.longOutcome {
				t.Errorf("Long: %q, want %q", f.outcome, c.longOutcome)
			}
			f = &fakeTB{TB: t}
			url, token := Live(f)
			if f.outcome != c.liveOutcome {
				t.Errorf("Live: %q, want %q", f.outcome, c.liveOutcome)
			}
			if f.outcome == "" && (url != c.url || token != c.token) {
				t.Errorf("Live: %q %q", url, token)
			}
		})
	}
}

func TestIntAndDuration(t *testing.T) {
	for _, c := range []struct {
		value                string
		runs                 int
		settle               time.Duration
		runsFail, settleFail bool
	}{
		{value: "", runs: 60, settle: 100 * time.Millisecond},
		{value: "5", runs: 5, settleFail: true}, // a duration needs its unit
		{value: "250ms", runsFail: true, settle: 250 * time.Millisecond},
		{value: "-1", runsFail: true, settleFail: true},
	} {
		t.Run(c.value, func(t *testing.T) {
			t.Setenv(BenchRuns.Name, c.value)
			t.Setenv(BenchSettle.Name, c.value)
			fr, fs := &fakeTB{TB: t}, &fakeTB{TB: t}
			runs, settle := BenchRuns.Int(fr, 60), BenchSettle.Duration(fs, 100*time.Millisecond)
			if (fr.outcome == "fail") != c.runsFail || !c.runsFail && runs != c.runs {
				t.Errorf("runs: %d, outcome %q", runs, fr.outcome)
			}
			if (fs.outcome == "fail") != c.settleFail || !c.settleFail && settle != c.settle {
				t.Errorf("settle: %v, outcome %q", settle, fs.outcome)
			}
		})
	}
}

// TestBrowser: without a Chromium on PATH the browser test skips, unless a
// browser is required (as CI requires it): then it fails.
func TestBrowser(t *testing.T) {
	for _, c := range []struct {
		require, outcome string
	}{
		{"", "skip"},
		{"0", "skip"},
		{"1", "fail"},
	} {
		t.Run("require="+c.require, func(t *testing.T) {
			t.Setenv("PATH", t.TempDir())
			t.Setenv(RequireBrowser.Name, c.require)
			f := &fakeTB{TB: t}
			Browser(f)
			if f.outcome != c.outcome {
				t.Errorf("outcome %q (%s), want %q", f.outcome, f.msg, c.outcome)
			}
		})
	}
}

// TestDeclaredOnce: every switch has its own name and a meaning, and the
// package comment (the one place they are documented) lists each.
func TestDeclaredOnce(t *testing.T) {
	src, err := os.ReadFile("testvars.go")
	if err != nil {
		t.Fatal(err)
	}
	doc, _, _ := strings.Cut(string(src), "package testvars")
	seen := map[string]bool{}
	for _, v := range All {
		switch {
		case seen[v.Name]:
			t.Errorf("%s declared twice", v.Name)
		case v.Meaning == "" || !strings.HasPrefix(v.Name, "SISYPHUS_"):
			t.Errorf("%s: a switch is SISYPHUS_ something, with a meaning", v.Name)
		case !strings.Contains(doc, v.Name):
			t.Errorf("%s is not in the package comment", v.Name)
		}
		seen[v.Name] = true
	}
}
