package feedback

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

func testTools() []*tools.Tool { return []*tools.Tool{Tool()} }

// endpoint records what was posted to it and answers status.
type endpoint struct {
	mu     sync.Mutex
	bodies []map[string]any
	ctypes []string
	status int
	srv    *httptest.Server
}

func newEndpoint(t *testing.T, status int) *endpoint {
	e := &endpoint{status: status}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		json.Unmarshal(b, &m)
		e.mu.Lock()
		e.bodies = append(e.bodies, m)
		e.ctypes = append(e.ctypes, r.Method+" "+r.Header.Get("Content-Type"))
		e.mu.Unlock()
		w.WriteHeader(e.status)
	}))
	t.Cleanup(e.srv.Close)
	return e
}

func (e *endpoint) posts() []map[string]any {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]map[string]any(nil), e.bodies...)
}

func policy(url string) *tools.Policy {
	return &tools.Policy{Default: tools.LevelDelete, AllActions: true, Strict: true, FeedbackURL: url}
}

func TestSubmitPostsOnceWithBusinessFieldsOnly(t *testing.T) {
	f := tooltest.NewStrict(t, false, testTools)
	e := newEndpoint(t, http.StatusCreated)
	f.Policy = policy(e.srv.URL + "/feedback")
	args := map[string]any{"action": "submit", "description": "  ## Summary\nslow ls  ", "impact": "browsing", "agent": "Claude"}
	res := f.OK(t, "feedback", args)
	if res["submitted"] != true || res["status"] != float64(201) || res["writeSafetyGuaranteed"] != false || res["writeAttempted"] != true {
		t.Fatalf("submit: %v", res)
	}
	posts := e.posts()
	if len(posts) != 1 || e.ctypes[0] != "POST application/json" {
		t.Fatalf("posts %v %v", posts, e.ctypes)
	}
	want := map[string]any{"description": "## Summary\nslow ls", "impact": "browsing", "agent": "Claude"}
	if b1, b2 := mustJSON(posts[0]), mustJSON(want); b1 != b2 {
		t.Errorf("posted %s, want exactly %s", b1, b2)
	}
	if f.WantErr(t, "feedback", tooltest.CopyArgs(args, "validateOnly", true), failure.PreflightUnavailable); len(e.posts()) != 1 {
		t.Error("a preflight posted")
	}
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

func TestSubmitWithoutEndpointSendsNothing(t *testing.T) {
	f := tooltest.NewStrict(t, false, testTools)
	f.Policy = policy("")
	e := f.WantErr(t, "feedback", map[string]any{"action": "submit", "description": "x"}, failure.NotConfigured)
	if e.WriteAttempted == nil || *e.WriteAttempted || !strings.Contains(e.CallerAction(), "sisyphus config feedback") {
		t.Fatalf("not configured: %+v (%s)", e, e.CallerAction())
	}
}

func TestSubmitFailures(t *testing.T) {
	f := tooltest.NewStrict(t, false, testTools)
	for _, c := range []struct {
		status    int
		code      failure.Code
		attempted bool
	}{
		{http.StatusBadRequest, failure.Rejected, false},
		{http.StatusFound, failure.Rejected, false},
		{http.StatusBadGateway, failure.OutcomeUnknown, true},
	} {
		e := newEndpoint(t, c.status)
		f.Policy = policy(e.srv.URL)
		err := f.WantErr(t, "feedback", map[string]any{"action": "submit", "description": "x"}, c.code)
		if err.WriteAttempted == nil || *err.WriteAttempted != c.attempted || len(e.posts()) != 1 {
			t.Errorf("HTTP %d: %+v, %d posts", c.status, err, len(e.posts()))
		}
	}
	// Nothing listening: refused before anything was sent.
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	f.Policy = policy("http://" + addr + "/x")
	if err := f.WantErr(t, "feedback", map[string]any{"action": "submit", "description": "x"}, failure.Rejected); *err.WriteAttempted {
		t.Errorf("unreachable: %+v", err)
	}
	// A server that takes the request and closes without answering.
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	}))
	defer hang.Close()
	f.Policy = policy(hang.URL)
	if err := f.WantErr(t, "feedback", map[string]any{"action": "submit", "description": "x"}, failure.OutcomeUnknown); !*err.WriteAttempted {
		t.Errorf("no answer: %+v", err)
	}
}

// TestReportArguments: the report's declared limits and its trimming.
func TestReportArguments(t *testing.T) {
	act := submit.Action()
	for _, c := range []struct {
		in map[string]string
		ok bool
	}{
		{map[string]string{"description": "x"}, true},
		{map[string]string{"description": " "}, false},
		{map[string]string{}, false},
		{map[string]string{"description": strings.Repeat("é", 4000)}, true},
		{map[string]string{"description": strings.Repeat("é", 4001)}, false},
		{map[string]string{"description": "x", "agent": strings.Repeat("a", 201)}, false},
		{map[string]string{"description": "x", "source": strings.Repeat("a", 101)}, false},
		{map[string]string{"description": "x", "impact": strings.Repeat("a", 1001)}, false},
	} {
		raw, _ := json.Marshal(c.in)
		if _, err := act.ParseArgs(raw); (err == nil) != c.ok {
			t.Errorf("%.40v: %v", c.in, err)
		}
	}
	v, err := act.ParseArgs(json.RawMessage(`{"description":"  x  ","agent":" a "}`))
	if r, _ := v.(Report); err != nil || r.Description != "x" || r.Agent != "a" {
		t.Errorf("trimmed: %+v %v", v, err)
	}
}
