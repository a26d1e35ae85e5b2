package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/testvars"
)

// uiProxy stands between serve and the kernel and records the UI nudges
// serve sends; hold, when set, makes every nudge wait until it is closed.
type uiProxy struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []string // "reloadProtyle <id>", "reloadFiletree", ...
	// answers are the kernel's replies to the nudges, in order.
	answers []string
	hold    chan struct{}
	fail    bool
}

func startUIProxy(t *testing.T, kernelURL string) *uiProxy {
	t.Helper()
	target, err := url.Parse(kernelURL)
	if err != nil {
		t.Fatal(err)
	}
	p := &uiProxy{}
	rp := httputil.NewSingleHostReverseProxy(target)
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, isUI := strings.CutPrefix(r.URL.Path, "/api/ui/")
		if !isUI {
			rp.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var arg struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(body, &arg)
		p.mu.Lock()
		p.seen = append(p.seen, strings.TrimSpace(name+" "+arg.ID))
		hold, fail := p.hold, p.fail
		p.mu.Unlock()
		if hold != nil {
			select {
			case <-hold:
			case <-r.Context().Done():
				return
			}
		}
		if fail {
			http.Error(w, "boom", http.StatusInternalServerError)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		rp.ServeHTTP(rec, r)
		p.mu.Lock()
		ans := rec.Body.Bytes()
		if rec.Header().Get("Content-Encoding") == "gzip" {
			if zr, err := gzip.NewReader(bytes.NewReader(ans)); err == nil {
				ans, _ = io.ReadAll(zr)
			}
		}
		p.answers = append(p.answers, fmt.Sprintf("%d %s", rec.Code, bytes.TrimSpace(ans)))
		p.mu.Unlock()
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *uiProxy) nudges() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.seen...)
}

// waitFor polls until every wanted nudge was seen since index from.
func (p *uiProxy) waitFor(t *testing.T, from int, want ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := p.nudges()[from:]
		missing := ""
		for _, w := range want {
			found := false
			for _, g := range got {
				found = found || g == w
			}
			if !found {
				missing = w
				break
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nudge %q not sent; sent %v", missing, got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestUIRefreshAfterCommittedWrites: after a committed write serve asks the
// kernel to reload the editors of the documents it touched (and the
// document tree when documents changed); a preflight and a replay ask
// nothing; a kernel whose nudges fail or hang changes nothing of the
// write's answer.
func TestUIRefreshAfterCommittedWrites(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	p := startUIProxy(t, k.url)
	s := startServeWith(t, "--siyuan-url", p.srv.URL, "--siyuan-token", "tok", "--state-dir", t.TempDir())
	a := connect(t, s.url, "2025-11-25")
	doc, para := firstParagraph(a)

	// A preflight writes nothing and asks nothing.
	upd := map[string]any{"action": "update", "id": para, "data": "shown at once"}
	pre := a.ok("block", with(upd, "validateOnly", true))
	time.Sleep(300 * time.Millisecond)
	if n := p.nudges(); len(n) != 0 {
		t.Fatalf("a preflight sent nudges: %v", n)
	}
	res := a.ok("block", commitOf(upd, pre))
	if res["status"] != "committed" {
		t.Fatalf("update: %v", res)
	}
	p.waitFor(t, 0, "reloadProtyle "+doc)
	for _, n := range p.nudges() {
		if n == "reloadFiletree" {
			t.Fatalf("a block update reloaded the document tree: %v", p.nudges())
		}
	}
	time.Sleep(300 * time.Millisecond)
	seen := len(p.nudges())
	if rep := a.ok("block", commitOf(upd, pre)); rep["replayed"] != true {
		t.Fatalf("replay: %v", rep)
	}
	time.Sleep(300 * time.Millisecond)
	if n := p.nudges(); len(n) != seen {
		t.Fatalf("a replay sent nudges: %v", n[seen:])
	}

	// A new document: the tree and the new document's editor.
	nb := a.ok("notebook", map[string]any{"action": "list"})["notebooks"].([]any)[0].(map[string]any)["id"].(string)
	created := a.strictDo("document", map[string]any{"action": "create", "notebook": nb, "path": "/Shown", "markdown": "new"})
	p.waitFor(t, seen, "reloadFiletree", "reloadProtyle "+created["id"].(string))

	// Nudges that hang: the write is answered while they wait.
	p.mu.Lock()
	p.hold, p.fail = make(chan struct{}), true
	p.mu.Unlock()
	seen = len(p.nudges())
	for i, text := range []string{"while the kernel hangs", "and again"} {
		if res := a.strictDo("block", map[string]any{"action": "update", "id": para, "data": text}); res["status"] != "committed" {
			t.Fatalf("update %d with hanging nudges: %v", i, res)
		}
	}
	p.waitFor(t, seen, "reloadProtyle "+doc)
	p.mu.Lock()
	close(p.hold)
	p.hold = nil
	p.mu.Unlock()
	// Failing nudges: still committed, and the next write nudges again.
	seen = len(p.nudges())
	if res := a.strictDo("block", map[string]any{"action": "update", "id": para, "data": "after failures"}); res["status"] != "committed" {
		t.Fatalf("update with failing nudges: %v", res)
	}
	p.waitFor(t, seen, "reloadProtyle "+doc)
	if got := a.ok("block", map[string]any{"action": "get_kramdown", "id": para})["kramdown"]; !strings.Contains(got.(string), "after failures") {
		t.Fatalf("kramdown %q", got)
	}
}

// TestNoUIRefresh: --no-ui-refresh sends no nudge.
func TestNoUIRefresh(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	p := startUIProxy(t, k.url)
	s := startServeWith(t, "--siyuan-url", p.srv.URL, "--siyuan-token", "tok", "--state-dir", t.TempDir(), "--no-ui-refresh")
	a := connect(t, s.url, "2025-11-25")
	_, para := firstParagraph(a)
	a.strictDo("block", map[string]any{"action": "update", "id": para, "data": "quiet"})
	time.Sleep(500 * time.Millisecond)
	if n := p.nudges(); len(n) != 0 {
		t.Fatalf("nudges with --no-ui-refresh: %v", n)
	}
}

// TestUIRefreshLive: against a real SiYuan (SISYPHUS_LIVE_SIYUAN_URL and
// _TOKEN), the nudges after a document creation and a block update reach
// the kernel and are answered code 0.
func TestUIRefreshLive(t *testing.T) {
	kurl, tok := testvars.Live(t)
	p := startUIProxy(t, kurl)
	s := startServeWith(t, "--siyuan-url", p.srv.URL, "--siyuan-token", tok, "--state-dir", t.TempDir())
	a := connect(t, s.url, "2025-11-25")
	nb := a.strictDo("notebook", map[string]any{"action": "create", "name": fmt.Sprintf("sisyphus-live-ui-%d", time.Now().UnixNano())})["notebook"].(string)
	s.config(t, "permission", nb, "rwd")
	s.config(t, "enable", "notebook.remove")
	defer a.strictDo("notebook", map[string]any{"action": "remove", "notebook": nb, "confirm": true})
	doc := a.strictDo("document", map[string]any{"action": "create", "notebook": nb, "path": "/Shown", "markdown": "first"})["id"].(string)
	para := a.ok("block", map[string]any{"action": "get_children", "id": doc})["data"].([]any)[0].(map[string]any)["id"].(string)
	p.waitFor(t, 0, "reloadFiletree", "reloadProtyle "+doc)
	seen := len(p.nudges())
	a.strictDo("block", map[string]any{"action": "update", "id": para, "data": "second"})
	p.waitFor(t, seen, "reloadProtyle "+doc)
	time.Sleep(200 * time.Millisecond)
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, ans := range p.answers {
		if ans != `200 {"code":0,"msg":"","data":null}` {
			t.Errorf("nudge %s answered %s", p.seen[i], ans)
		}
	}
	t.Logf("nudges: %v", p.seen)
}
