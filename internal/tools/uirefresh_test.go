package tools

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

func TestRefreshOf(t *testing.T) {
	const b1, b2, nb, av = "20240101000000-aaaaaaa", "20240101000000-bbbbbbb", "20240101000000-nnnnnnn", "20240101000000-vvvvvvv"
	tests := []struct {
		name     string
		tool     string
		touches  []Touch
		business map[string]any
		result   map[string]any
		want     UIRefresh
	}{
		{"block update", "block", []Touch{OnBlock(b1, LevelWrite)}, nil, map[string]any{"status": "committed"},
			UIRefresh{Blocks: []string{b1}}},
		{"insert names the new block", "block", []Touch{OnBlock(b1, LevelWrite)}, nil, map[string]any{"id": b2},
			UIRefresh{Blocks: []string{b1, b2}}},
		{"a notebook touch is no document", "document", []Touch{OnNotebook(nb, LevelWrite)}, nil, map[string]any{"id": b2},
			UIRefresh{Blocks: []string{b2}, Filetree: true}},
		{"malformed ids are dropped", "block", nil, nil, map[string]any{"id": "x", "rootID": 5},
			UIRefresh{}},
		{"fs and notebook reload the tree", "fs", nil, nil, nil, UIRefresh{Filetree: true}},
		{"tags", "tag", nil, nil, nil, UIRefresh{Tags: true}},
		{"databases", "av", []Touch{OnBlock(b1, LevelWrite)}, map[string]any{"avID": av}, nil,
			UIRefresh{Blocks: []string{b1}, AVs: []string{av}}},
		{"duplicates once", "block", []Touch{OnBlock(b1, LevelWrite), OnBlock(b1, LevelRead)}, nil, map[string]any{"id": b1},
			UIRefresh{Blocks: []string{b1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := refreshOf(tc.tool, tc.touches, tc.business, tc.result); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// fakeKernel answers getPathByID from paths and records every UI nudge.
type fakeKernel struct {
	mu    sync.Mutex
	paths map[string]string
	seen  []string
	gate  chan struct{} // when set, the first nudge waits for it
	fail  bool
}

func (f *fakeKernel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var arg struct {
		ID string `json:"id"`
	}
	_ = json.NewDecoder(r.Body).Decode(&arg)
	if r.URL.Path == "/api/filetree/getPathByID" {
		p, ok := f.paths[arg.ID]
		if !ok {
			w.Write([]byte(`{"code":-1,"msg":"not found","data":null}`))
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"code": 0, "msg": "", "data": map[string]any{"notebook": "20240101000000-nnnnnnn", "path": p}})
		return
	}
	f.mu.Lock()
	f.seen = append(f.seen, strings.TrimSpace(strings.TrimPrefix(r.URL.Path, "/api/ui/")+" "+arg.ID))
	g := f.gate
	f.gate = nil
	f.mu.Unlock()
	if g != nil {
		<-g
	}
	if f.fail {
		http.Error(w, "down", http.StatusBadGateway)
		return
	}
	w.Write([]byte(`{"code":0,"msg":"","data":null}`))
}

func TestUIRefresher(t *testing.T) {
	const blk, sub, doc, gone, av = "20240101000000-bbbbbbb", "20240101000000-ccccccc", "20240101000000-ddddddd", "20240101000000-ggggggg", "20240101000000-vvvvvvv"
	f := &fakeKernel{paths: map[string]string{blk: "/" + doc + ".sy", sub: "/" + doc + "/" + sub + ".sy", doc: "/" + doc + ".sy"}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	c, err := siyuan.New(siyuan.Config{BaseURL: srv.URL, Token: "t", Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	u := NewUIRefresher(c, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// One batch: a block and its document reload the document once; a
	// removed block reloads nothing; a sub-document is its own document.
	u.Refresh(UIRefresh{Blocks: []string{blk, doc, gone, sub}, AVs: []string{av}, Filetree: true, Tags: true})
	u.Wait(ctx)
	want := []string{"reloadProtyle " + doc, "reloadProtyle " + sub, "reloadAttributeView " + av, "reloadFiletree", "reloadTag"}
	if !slices.Equal(f.seen, want) {
		t.Fatalf("sent %v, want %v", f.seen, want)
	}

	// While a batch is being sent, later requests coalesce into one batch.
	f.mu.Lock()
	f.seen, f.gate = nil, make(chan struct{})
	g := f.gate
	f.mu.Unlock()
	u.Refresh(UIRefresh{Filetree: true})
	for {
		f.mu.Lock()
		n := len(f.seen)
		f.mu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	for range 3 {
		u.Refresh(UIRefresh{Filetree: true, Blocks: []string{blk}})
	}
	close(g)
	u.Wait(ctx)
	if want := []string{"reloadFiletree", "reloadProtyle " + doc, "reloadFiletree"}; !slices.Equal(f.seen, want) {
		t.Fatalf("coalesced: sent %v, want %v", f.seen, want)
	}

	// A failing kernel: the nudges are tried, nothing panics, and the
	// refresher goes idle.
	f.mu.Lock()
	f.seen, f.fail = nil, true
	f.mu.Unlock()
	u.Refresh(UIRefresh{Tags: true})
	u.Wait(ctx)
	if len(f.seen) == 0 || f.seen[0] != "reloadTag" {
		t.Fatalf("failing kernel: sent %v", f.seen)
	}
	if ctx.Err() != nil {
		t.Fatal("the refresher did not go idle")
	}
	// nil refreshers and empty requests are no-ops.
	var none *UIRefresher
	none.Refresh(UIRefresh{Tags: true})
	none.Wait(ctx)
	u.Refresh(UIRefresh{})
}
