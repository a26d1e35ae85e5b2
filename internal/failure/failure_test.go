package failure

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/testvars"
)

// update rewrites the generated docs tables; SISYPHUS_UPDATE=1 does too.
var update = flag.Bool("update", false, "rewrite the generated docs tables")

func TestCodeTable(t *testing.T) {
	seen := map[Code]bool{}
	for _, e := range Codes {
		switch {
		case seen[e.Code]:
			t.Errorf("%s listed twice", e.Code)
		case e.Meaning == "" || e.CallerAction == "":
			t.Errorf("%s needs a meaning and a caller action", e.Code)
		case e.Surface != ToolResult && e.Surface != HTTP:
			t.Errorf("%s has no surface", e.Code)
		case strings.ToLower(string(e.Code)) != string(e.Code) || strings.ContainsAny(string(e.Code), " -"):
			t.Errorf("%s is not snake_case", e.Code)
		}
		seen[e.Code] = true
	}
	// The core codes of Strict Safe Writes, exactly.
	var seed []Code
	for _, e := range Codes {
		if e.Seed {
			seed = append(seed, e.Code)
		}
	}
	want := []Code{PreconditionRequired, PreflightLeaseInvalid, StateChanged, OutcomeUnknown, ReadbackMismatch,
		IdempotencyConflict, CoordinatorUnavailable, PreflightUnavailable}
	if !reflect.DeepEqual(seed, want) {
		t.Errorf("seed codes %v, want %v", seed, want)
	}
}

func TestErrorResult(t *testing.T) {
	cause := errors.New("internal detail: connection reset by peer")
	e := Wrap(StateChanged, cause, "the target changed").Attempted(false)
	e.RequestID, e.ExpectedHash, e.CurrentHash = "ab12", "c0de", "f00d"
	e.With("revalidateRequired", true)
	got := e.Result()
	raw, _ := json.Marshal(got)
	if strings.Contains(string(raw), "connection reset") {
		t.Fatalf("the internal cause leaked: %s", raw)
	}
	body := got["error"].(map[string]any)
	if body["code"] != "state_changed" || body["message"] != "the target changed" || body["revalidateRequired"] != true {
		t.Fatalf("body %v", body)
	}
	if entry, _ := Lookup(StateChanged); body["action"] != entry.CallerAction {
		t.Fatalf("action %v, want the table's", body["action"])
	}
	if got["writeAttempted"] != false || got["requestId"] != "ab12" || got["expectedHash"] != "c0de" || got["currentHash"] != "f00d" {
		t.Fatalf("outcome fields %v", got)
	}
	if !errors.Is(e, cause) {
		t.Fatal("the cause must stay reachable with errors.Is")
	}
	// Details never override the fixed fields.
	e2 := New(NotFound, "x").With("code", "forged").With("message", "forged")
	if b := e2.Body(); b["code"] != "not_found" || b["message"] != "x" {
		t.Fatalf("details overrode fixed fields: %v", b)
	}
	back, ok := Parse(raw)
	if !ok || back.Code != StateChanged || back.Message != e.Message || *back.WriteAttempted || back.RequestID != "ab12" ||
		back.ExpectedHash != "c0de" || back.Details["revalidateRequired"] != true || back.Action != body["action"] {
		t.Fatalf("parse round trip: %+v", back)
	}
	if _, ok := Parse([]byte(`{"rows":[]}`)); ok {
		t.Fatal("a result without an error parsed as one")
	}
}

// TestDocsTables keeps the code tables in the docs generated from Codes.
func TestDocsTables(t *testing.T) {
	all := table(func(Entry) bool { return true })
	strictOnly := table(func(e Entry) bool {
		switch e.Code {
		case LedgerUnavailable, StrictModeDisabled, Rejected, Cancelled, CoordinatorChanged:
			return true
		}
		return e.Seed
	})
	for _, f := range []struct{ file, body string }{
		{"ERRORS.md", all},
		{"STRICT_WRITES.md", strictOnly},
	} {
		path := filepath.Join("..", "..", "docs", f.file)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		next, err := replaceRegion(string(data), f.body)
		if err != nil {
			t.Fatalf("%s: %v", f.file, err)
		}
		if next == string(data) {
			continue
		}
		if *update || testvars.UpdateDocs.On(t) {
			if err := os.WriteFile(path, []byte(next), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("docs/%s is out of date with failure.Codes: run go test ./internal/failure -update", f.file)
	}
}

func table(keep func(Entry) bool) string {
	var b strings.Builder
	b.WriteString("| code | where | meaning | what the caller does |\n|---|---|---|---|\n")
	for _, e := range Codes {
		if !keep(e) {
			continue
		}
		where := string(e.Surface)
		if e.Seed {
			where += " (core)"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", e.Code, where, cell(e.Meaning), cell(e.CallerAction))
	}
	return b.String()
}

func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

const beginMark, endMark = "<!-- codes:begin (generated from internal/failure) -->\n", "<!-- codes:end -->"

func replaceRegion(doc, body string) (string, error) {
	i := strings.Index(doc, beginMark)
	j := strings.Index(doc, endMark)
	if i < 0 || j < i {
		return "", fmt.Errorf("no generated region (%q ... %q)", strings.TrimSpace(beginMark), endMark)
	}
	return doc[:i+len(beginMark)] + body + doc[j:], nil
}

// TestPrefixed: a failure keeps its code and details with the prefix
// before its message, and the original is not changed; another error is
// wrapped.
func TestPrefixed(t *testing.T) {
	orig := Invalid("bad value").With("argument", "x")
	plain := errors.New("read failed")
	for _, c := range []struct {
		name string
		err  error
		want string
		code Code
	}{
		{"failure", orig, "invalid_arguments: conf.name: bad value", InvalidArguments},
		{"wrapped failure", fmt.Errorf("outer: %w", orig), "invalid_arguments: conf.name: bad value", InvalidArguments},
		{"other error", plain, "conf.name: read failed", ""},
	} {
		got := Prefixed(c.err, "conf.name: ")
		if got.Error() != c.want {
			t.Errorf("%s: %q, want %q", c.name, got.Error(), c.want)
		}
		var fe *Error
		if errors.As(got, &fe) != (c.code != "") || fe != nil && (fe.Code != c.code || fe.Details["argument"] != "x") {
			t.Errorf("%s: %#v", c.name, got)
		}
	}
	if !errors.Is(Prefixed(plain, "p: "), plain) {
		t.Error("a wrapped error loses its cause")
	}
	if orig.Message != "bad value" {
		t.Errorf("the original changed: %q", orig.Message)
	}
}

// TestOrAttempted: an error that says whether a write was attempted keeps
// its word; one that leaves it open gets the caller's; the original never
// changes.
func TestOrAttempted(t *testing.T) {
	yes, no := true, false
	for _, c := range []struct {
		name string
		has  *bool
		or   bool
		want bool
	}{
		{"open, nothing attempted", nil, false, false},
		{"open, attempted", nil, true, true},
		{"attempted stays attempted", &yes, false, true},
		{"not attempted stays so", &no, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := Invalid("x").With("k", 1)
			e.WriteAttempted = c.has
			got := e.OrAttempted(c.or)
			if got == e || got.WriteAttempted == nil || *got.WriteAttempted != c.want {
				t.Fatalf("OrAttempted(%v) = %+v, want a copy saying %v", c.or, got, c.want)
			}
			got.With("k", 2)
			if e.WriteAttempted != c.has || e.Details["k"] != 1 {
				t.Fatalf("the original changed: %+v", e)
			}
		})
	}
}
