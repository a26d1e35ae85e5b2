package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// fakePlacement is a kernel that knows where blocks live and answers the
// calls placeBlocks makes, counting them.
type fakePlacement struct {
	mu      sync.Mutex
	calls   map[string]int
	docOf   map[string]string // block -> document
	nbOf    map[string]string // document -> notebook
	indexes bool              // serves getBlocksIndexes
	broken  bool              // getPathByID fails without an answer
}

func (f *fakePlacement) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[r.URL.Path]++
	var arg struct {
		ID  string   `json:"id"`
		IDs []string `json:"ids"`
	}
	json.NewDecoder(r.Body).Decode(&arg)
	answer := func(code int, data any) {
		json.NewEncoder(w).Encode(map[string]any{"code": code, "msg": map[bool]string{true: "tree not found"}[code != 0], "data": data})
	}
	switch r.URL.Path {
	case "/api/filetree/getPathByID":
		if f.broken {
			http.Error(w, "down", http.StatusBadGateway)
			return
		}
		doc, ok := f.docOf[arg.ID]
		if !ok {
			answer(-1, nil)
			return
		}
		answer(0, map[string]string{"notebook": f.nbOf[doc], "path": "/" + doc + ".sy"})
	case "/api/block/getBlocksIndexes":
		if !f.indexes {
			http.NotFound(w, r)
			return
		}
		out := map[string]int{}
		if len(arg.IDs) > 0 {
			if first, ok := f.docOf[arg.IDs[0]]; ok {
				for i, id := range arg.IDs {
					if f.docOf[id] == first && id != first {
						out[id] = i + 1
					} else {
						out[id] = 0
					}
				}
			}
		}
		answer(0, out)
	case "/api/notebook/lsNotebooks":
		var nbs []map[string]any
		for _, nb := range f.nbOf {
			nbs = append(nbs, map[string]any{"id": nb, "name": nb})
		}
		answer(0, map[string]any{"notebooks": nbs})
	case "/api/block/checkBlockExist":
		_, ok := f.docOf[arg.ID]
		answer(0, ok)
	default:
		http.NotFound(w, r)
	}
}

func TestPlaceBlocks(t *testing.T) {
	const (
		nb1, nb2         = "20260101000000-nbaaaaa", "20260101000000-nbbbbbb"
		docA, docB       = "20260101000000-docaaaa", "20260101000000-docbbbb"
		a1, a2, a3       = "20260101000001-aaaaaa1", "20260101000001-aaaaaa2", "20260101000001-aaaaaa3"
		b1, b2, unknown  = "20260101000002-bbbbbb1", "20260101000002-bbbbbb2", "20260101000009-unknown"
		getPath, indexes = "/api/filetree/getPathByID", "/api/block/getBlocksIndexes"
	)
	docOf := map[string]string{a1: docA, a2: docA, a3: docA, docA: docA, b1: docB, b2: docB, docB: docB}
	for _, c := range []struct {
		name      string
		blocks    []string
		noIndexes bool
		want      map[string]string
		calls     map[string]int
	}{
		{"one block: one lookup", []string{a1}, false, map[string]string{a1: nb1}, map[string]int{getPath: 1}},
		{"one document: one lookup and the indexes", []string{a1, a2, a3, docA}, false,
			map[string]string{a1: nb1, a2: nb1, a3: nb1, docA: nb1}, map[string]int{getPath: 1, indexes: 1}},
		{"led by the document", []string{docA, a3, a1}, false,
			map[string]string{docA: nb1, a3: nb1, a1: nb1}, map[string]int{getPath: 1, indexes: 1}},
		{"two documents: the other's blocks each", []string{a1, b1, a2, b2}, false,
			map[string]string{a1: nb1, a2: nb1, b1: nb2, b2: nb2}, map[string]int{getPath: 3, indexes: 1}},
		{"a notebook first", []string{nb2, a1, a2}, false,
			map[string]string{nb2: nb2, a1: nb1, a2: nb1}, map[string]int{getPath: 3, indexes: 1, "/api/notebook/lsNotebooks": 1}},
		{"unknown first", []string{unknown, a1}, false,
			map[string]string{unknown: "", a1: nb1}, map[string]int{getPath: 2, indexes: 1, "/api/notebook/lsNotebooks": 1, "/api/block/checkBlockExist": 1}},
		{"a kernel without the indexes: each looked up", []string{a1, a2, a3}, true,
			map[string]string{a1: nb1, a2: nb1, a3: nb1}, map[string]int{getPath: 3, indexes: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &fakePlacement{calls: map[string]int{}, docOf: docOf, nbOf: map[string]string{docA: nb1, docB: nb2}, indexes: !c.noIndexes}
			env := &Env{Kernel: fakeClient(t, f)}
			got, err := placeBlocks(t.Context(), env, c.blocks)
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, c.want) {
				t.Errorf("placed %v, want %v", got, c.want)
			}
			if !maps.Equal(f.calls, c.calls) {
				t.Errorf("kernel calls %v, want %v", f.calls, c.calls)
			}
		})
	}
	t.Run("a failed lookup fails the whole", func(t *testing.T) {
		f := &fakePlacement{calls: map[string]int{}, docOf: docOf, nbOf: map[string]string{docA: nb1}, indexes: true, broken: true}
		if got, err := placeBlocks(t.Context(), &Env{Kernel: fakeClient(t, f)}, []string{a1, a2}); err == nil {
			t.Fatalf("placed %v with the kernel failing", got)
		}
	})
}

func fakeClient(t *testing.T, h http.Handler) *siyuan.Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, err := siyuan.New(siyuan.Config{BaseURL: srv.URL, Token: "t", ReadAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// panicking is a kernel transport that panics on the requests when
// matches, as a bug in decoding a kernel's answer would, and passes the
// others on.
type panicking struct {
	when func(path, body string) bool
	next http.RoundTripper
}

func (p panicking) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	if p.when(r.URL.Path, string(body)) {
		panic("a bug answering " + r.URL.Path)
	}
	return p.next.RoundTrip(r)
}

// A panic in one of placeBlocks' own goroutines (the indexes' lookup, a
// block's lookup) is the call's internal_error, not the end of the
// process.
func TestPlaceBlocksAnswersPanics(t *testing.T) {
	const (
		nb1, nb2   = "20260101000000-nbaaaaa", "20260101000000-nbbbbbb"
		docA, docB = "20260101000000-docaaaa", "20260101000000-docbbbb"
		a1, a2, b1 = "20260101000001-aaaaaa1", "20260101000001-aaaaaa2", "20260101000002-bbbbbb1"
	)
	for _, c := range []struct {
		name   string
		blocks []string
		when   func(path, body string) bool
	}{
		{"the indexes' lookup", []string{a1, a2}, func(path, _ string) bool { return path == "/api/block/getBlocksIndexes" }},
		{"a block's lookup", []string{a1, b1}, func(path, body string) bool {
			return path == "/api/filetree/getPathByID" && strings.Contains(body, b1)
		}},
		{"the one block's lookup", []string{b1}, func(path, _ string) bool { return path == "/api/filetree/getPathByID" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &fakePlacement{calls: map[string]int{}, docOf: map[string]string{a1: docA, a2: docA, b1: docB},
				nbOf: map[string]string{docA: nb1, docB: nb2}, indexes: true}
			srv := httptest.NewServer(f)
			t.Cleanup(srv.Close)
			kc, err := siyuan.New(siyuan.Config{BaseURL: srv.URL, Token: "t", ReadAttempts: 1,
				HTTPClient: &http.Client{Transport: panicking{when: c.when, next: http.DefaultTransport}}})
			if err != nil {
				t.Fatal(err)
			}
			got, err := placeBlocks(t.Context(), &Env{Kernel: kc}, c.blocks)
			var fe *failure.Error
			if !errors.As(err, &fe) || fe.Code != failure.Internal || failure.PanicOf(err) == nil {
				t.Fatalf("placed %v, %v; want the panic as an internal_error", got, err)
			}
		})
	}
}

// A panic while the gate decides (here, working out what a call touches)
// is the call's internal_error, and a write's says nothing was attempted.
func TestGateAnswersPanics(t *testing.T) {
	for _, writes := range []bool{false, true} {
		g := startGate(t.Context(), &Env{}, nil, nil, func() ([]Touch, error) { panic("a bug resolving") }, writes)
		err := g.wait()
		var fe *failure.Error
		if !errors.As(err, &fe) || fe.Code != failure.Internal || failure.PanicOf(err) == nil {
			t.Fatalf("writes=%v: %v, want the panic as an internal_error", writes, err)
		}
		if writes != (fe.WriteAttempted != nil && !*fe.WriteAttempted) {
			t.Fatalf("writes=%v: writeAttempted %v", writes, fe.WriteAttempted)
		}
	}
}
