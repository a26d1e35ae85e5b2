// Package testvars declares, once, every environment variable that switches
// the project's tests, and the helpers that read them. It is imported only by
// tests and by test-support packages (internal/tools/tooltest,
// internal/siyuan/contract); the sisyphus binary never reads these
// variables. The product's own variables (SISYPHUS_TOKEN,
// SISYPHUS_ALLOW_DIRS, SISYPHUS_STATE_DIR, ...) are flags' defaults and live
// with their flags in cmd/sisyphus.
//
// The switches:
//
//	SISYPHUS_LONG_TESTS=1          run the long tests, and the full size of
//	                               scaled ones (CI's first test pass)
//	SISYPHUS_REQUIRE_BROWSER=1     the browser test fails, rather than skips,
//	                               when no Chromium is found (CI)
//	SISYPHUS_LIVE_SIYUAN_URL,
//	SISYPHUS_LIVE_SIYUAN_TOKEN     run the live tests against this real SiYuan
//	SISYPHUS_BENCH_URL,
//	SISYPHUS_BENCH_TOKEN           benchmarks run against this kernel rather
//	                               than an embedded one
//	SISYPHUS_BENCH_E2E=1           run the end-to-end benchmark
//	                               (scripts/bench-e2e)
//	SISYPHUS_BENCH_RUNS=N          its rounds (60)
//	SISYPHUS_BENCH_SETTLE=D        quiet before each timed step (a duration)
//	SISYPHUS_BENCH_LOG_LEVEL=L     the benchmarked server's --log-level
//	SISYPHUS_BENCH_OUT=FILE        also write its table to FILE
//	SISYPHUS_BENCH_ROW=NAME        BenchmarkReadLayers times that row alone
//	SISYPHUS_UPDATE_TOOLSNAPS=1    rewrite the tools' snapshots
//	SISYPHUS_UPDATE=1              rewrite the generated docs tables and skills/
//	                               (internal/failure)
//	SISYPHUS_AV_GOLDEN=1           log the database contract's goldens
//	SISYPHUS_SETTINGS_SCREENSHOT=F save the settings page's screenshot to F
//	SISYPHUS_TOOLS_LIST_OUT=FILE   write the default tools/list to FILE
//	SISYPHUS_TEST_BINARY=PATH      cmd/sisyphus's tests run this build
//	SISYPHUS_TEST_SERVE_LOG=FILE   keep the tested servers' logs in FILE
//
// A yes/no switch is on for any value strconv.ParseBool reads as true, off
// when unset or false; any other value fails the test that reads it, so that
// a typo never silently turns a switch off.
package testvars

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// Var is one switch: its environment variable and what it does.
type Var struct {
	Name    string
	Meaning string
}

// The switches, each declared once (the package comment lists them too).
var (
	LongTests      = Var{"SISYPHUS_LONG_TESTS", "run the long tests, and the full size of scaled ones"}
	RequireBrowser = Var{"SISYPHUS_REQUIRE_BROWSER", "the browser test fails, rather than skips, without Chromium"}
	LiveURL        = Var{"SISYPHUS_LIVE_SIYUAN_URL", "the real SiYuan the live tests run against"}
	LiveToken      = Var{"SISYPHUS_LIVE_SIYUAN_TOKEN", "its API token"}
	BenchURL       = Var{"SISYPHUS_BENCH_URL", "the kernel benchmarks run against (else an embedded one)"}
	BenchToken     = Var{"SISYPHUS_BENCH_TOKEN", "its API token"}
	BenchE2E       = Var{"SISYPHUS_BENCH_E2E", "run the end-to-end benchmark"}
	BenchRuns      = Var{"SISYPHUS_BENCH_RUNS", "the end-to-end benchmark's rounds"}
	BenchSettle    = Var{"SISYPHUS_BENCH_SETTLE", "quiet before each timed step"}
	BenchLogLevel  = Var{"SISYPHUS_BENCH_LOG_LEVEL", "the benchmarked server's --log-level"}
	BenchOut       = Var{"SISYPHUS_BENCH_OUT", "a file the end-to-end benchmark also writes its table to"}
	BenchRow       = Var{"SISYPHUS_BENCH_ROW", "the one row BenchmarkReadLayers times"}
	UpdateToolSnap = Var{"SISYPHUS_UPDATE_TOOLSNAPS", "rewrite the tools' snapshots"}
	UpdateDocs     = Var{"SISYPHUS_UPDATE", "rewrite the generated docs tables and skills/"}
	AVGolden       = Var{"SISYPHUS_AV_GOLDEN", "log the database contract's goldens"}
	Screenshot     = Var{"SISYPHUS_SETTINGS_SCREENSHOT", "a file for the settings page's screenshot"}
	ToolsListOut   = Var{"SISYPHUS_TOOLS_LIST_OUT", "a file for the default tools/list"}
	TestBinary     = Var{"SISYPHUS_TEST_BINARY", "the build cmd/sisyphus's tests run"}
	TestServeLog   = Var{"SISYPHUS_TEST_SERVE_LOG", "a file that keeps the tested servers' logs"}
)

// All lists every switch, for the test that keeps this package and its
// comment in step.
var All = []Var{LongTests, RequireBrowser, LiveURL, LiveToken, BenchURL, BenchToken, BenchE2E, BenchRuns, BenchSettle,
	BenchLogLevel, BenchOut, BenchRow, UpdateToolSnap, UpdateDocs, AVGolden, Screenshot, ToolsListOut, TestBinary, TestServeLog}

// Value is the variable's value ("" when unset).
func (v Var) Value() string { return os.Getenv(v.Name) }

// On reports whether a yes/no switch is on; a value that is neither yes nor
// no fails tb.
func (v Var) On(tb testing.TB) bool {
	tb.Helper()
	s := v.Value()
	if s == "" {
		return false
	}
	on, err := strconv.ParseBool(s)
	if err != nil {
		tb.Fatalf("%s=%q: want 1 or 0 (%s)", v.Name, s, v.Meaning)
	}
	return on
}

// Long skips tb unless the long tests are on: tests that take tens of
// seconds or stream gigabytes (CI's first pass sets SISYPHUS_LONG_TESTS=1).
func Long(tb testing.TB) {
	tb.Helper()
	if !LongTests.On(tb) {
		tb.Skip("long test: set " + LongTests.Name + "=1")
	}
}

// LongOn reports whether the long tests are on, for a test that runs in
// either case but larger when they are.
func LongOn(tb testing.TB) bool {
	tb.Helper()
	return LongTests.On(tb)
}

// Live returns the real SiYuan the live tests run against, or skips tb
// when none is configured.
func Live(tb testing.TB) (url, token string) {
	tb.Helper()
	url, token = LiveURL.Value(), LiveToken.Value()
	if url == "" || token == "" {
		tb.Skip("set " + LiveURL.Name + " and " + LiveToken.Name + " to run against a real SiYuan")
	}
	return url, token
}

// BenchKernel returns the kernel a benchmark runs against, or "", "" for
// an embedded one of its own. A URL without its token fails tb: the
// figures would be of the wrong kernel.
func BenchKernel(tb testing.TB) (url, token string) {
	tb.Helper()
	url, token = BenchURL.Value(), BenchToken.Value()
	if url != "" && token == "" {
		tb.Fatalf("%s is set without %s", BenchURL.Name, BenchToken.Name)
	}
	return url, token
}

// Int is a whole-number switch's value, or def when unset; anything but a
// positive number fails tb.
func (v Var) Int(tb testing.TB, def int) int {
	tb.Helper()
	s := v.Value()
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		tb.Fatalf("%s=%q: want a positive number (%s)", v.Name, s, v.Meaning)
	}
	return n
}

// Duration is a duration switch's value, or def when unset; anything
// time.ParseDuration cannot read fails tb.
func (v Var) Duration(tb testing.TB, def time.Duration) time.Duration {
	tb.Helper()
	s := v.Value()
	if s == "" {
		return def
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		tb.Fatalf("%s=%q: want a duration such as 100ms (%s)", v.Name, s, v.Meaning)
	}
	return d
}

// Browsers are the names a Chromium (or Chrome) binary goes by.
var Browsers = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"}

// Browser returns the path of a Chromium binary. Without one it skips tb,
// or fails it when SISYPHUS_REQUIRE_BROWSER is on: CI installs Chromium, and
// a browser test that quietly skipped there would pass without testing.
func Browser(tb testing.TB) string {
	tb.Helper()
	for _, name := range Browsers {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	const why = "no chromium binary found (apt-get install -y chromium): the browser test needs one"
	if RequireBrowser.On(tb) {
		tb.Fatal(why + "; " + RequireBrowser.Name + " requires it")
	}
	tb.Skip(why)
	return ""
}
