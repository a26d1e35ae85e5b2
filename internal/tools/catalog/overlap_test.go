package catalog

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// spans records when the kernel served each endpoint, slowing the two a
// gated call makes first (its notebook lookup and its first read) so that
// overlap shows.
type spans struct {
	mu  sync.Mutex
	got map[string][][2]time.Time
}

func (s *spans) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t0 := time.Now()
		if r.URL.Path == "/api/filetree/getPathByID" || r.URL.Path == "/api/block/getBlockKramdown" {
			time.Sleep(40 * time.Millisecond)
		}
		next.ServeHTTP(w, r)
		s.mu.Lock()
		s.got[r.URL.Path] = append(s.got[r.URL.Path], [2]time.Time{t0, time.Now()})
		s.mu.Unlock()
	})
}

func (s *spans) reset() {
	s.mu.Lock()
	s.got = map[string][][2]time.Time{}
	s.mu.Unlock()
}

// overlapped reports whether some span of a and some span of b ran at once.
func (s *spans) overlapped(a, b string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range s.got["/api/filetree/"+a] {
		for _, y := range s.got["/api/block/"+b] {
			if x[0].Before(y[1]) && y[0].Before(x[1]) {
				return true
			}
		}
	}
	return false
}

// TestGateOverlapsTheCall: where the gate must look up a block's notebook,
// the lookup runs while the call reads (a read's answer, a write's state at
// preflight and at commit), and a refusal still shows nothing, writes
// nothing and outlives a replay.
func TestGateOverlapsTheCall(t *testing.T) {
	s := tooltest.NewStrict(t, false, testTools)
	sp := &spans{}
	sp.reset()
	s.Wrap(sp.middleware)
	nb, b0 := s.NB, s.Blocks[0]
	// The default is read-only, the fixture's notebook rwd: a write must
	// find the block's notebook; with another notebook hidden, so must a
	// read.
	open := &tools.Policy{Default: tools.LevelRead, Notebooks: map[string]tools.Level{nb: tools.LevelDelete, "20200101000000-hiddenn": tools.LevelNone},
		AllActions: true, Strict: true, Version: "overlap"}
	s.Policy = open

	s.OK(t, "block", map[string]any{"action": "get_kramdown", "id": b0})
	if !sp.overlapped("getPathByID", "getBlockKramdown") {
		t.Fatalf("a read waited for the gate's lookup: %v", sp.got)
	}
	sp.reset()
	upd := map[string]any{"action": "update", "id": b0, "data": "overlapped"}
	pre := s.Preflight(t, "block", upd, "expectedStateHash", 1)
	if !sp.overlapped("getPathByID", "getBlockKramdown") {
		t.Fatal("a preflight read its state only after the gate's lookup")
	}
	sp.reset()
	res := s.Commit(t, "block", upd, pre)
	if !sp.overlapped("getPathByID", "getBlockKramdown") {
		t.Fatal("a commit read its state only after the gate's lookup")
	}

	// The notebook becomes read-only: the preflight is refused although
	// its state was read, and a replay of the committed request shows the
	// refusal, not the receipt.
	s.Policy = &tools.Policy{Default: tools.LevelRead, Notebooks: map[string]tools.Level{"20200101000000-hiddenn": tools.LevelNone}, AllActions: true, Strict: true, Version: "ro"}
	e := s.WantErr(t, "block", tooltest.CopyArgs(map[string]any{"action": "update", "id": b0, "data": "refused"}, "validateOnly", true), failure.PermissionDenied)
	if e.WriteAttempted == nil || *e.WriteAttempted || e.RequestID != "" {
		t.Fatalf("refused preflight %+v", e)
	}
	if e := s.WantErr(t, "block", tooltest.CommitArgs(upd, pre), failure.PermissionDenied); strings.Contains(e.Message, "overlapped") {
		t.Fatalf("a refused replay leaked the receipt: %+v", e)
	}
	if got := s.Text(t, s.Doc); !strings.Contains(got, "overlapped") || strings.Contains(got, "refused") {
		t.Fatalf("document after the refusals: %q (committed %v)", got, res["status"])
	}

	// A hidden notebook's block: the read ran, its text never shows, and
	// the answer is a missing block's.
	s.Policy = &tools.Policy{Default: tools.LevelRead, Notebooks: map[string]tools.Level{nb: tools.LevelNone}, AllActions: true, Strict: true, Version: "hidden"}
	hidden, missing := s.AsMissing(t, "block", map[string]any{"action": "get_kramdown", "id": b0}, map[string]string{b0: tooltest.NewID()})
	if strings.Contains(hidden, "overlapped") || hidden != missing || !strings.Contains(hidden, "not_found") {
		t.Fatalf("a refused read: %s, a missing block's: %s", hidden, missing)
	}
}

// TestResolvingGateOverlapsTheState: an action whose touches are worked out
// with a kernel read (av.set_cells reads the database's columns) makes that
// read while it reads its state, at preflight and at commit; a refusal
// still writes nothing and names no request.
func TestResolvingGateOverlapsTheState(t *testing.T) {
	s := tooltest.NewStrict(t, false, testTools)
	db := s.MkDatabase(t, s.Doc)
	row := tooltest.NewID()
	if err := s.C.AddAttributeViewBlocks(t.Context(), siyuan.AddAVBlocksRequest{AvID: db.AV, BlockID: db.Block,
		Srcs: []siyuan.AVSrc{{ItemID: row, Detached: true, Content: "row"}}}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	got := map[string][][2]time.Time{}
	slow := map[string]bool{"/api/av/getAttributeViewKeysByAvID": true, "/api/av/getAttributeView": true}
	s.Wrap(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			t0 := time.Now()
			if slow[r.URL.Path] {
				time.Sleep(40 * time.Millisecond)
			}
			next.ServeHTTP(w, r)
			mu.Lock()
			got[r.URL.Path] = append(got[r.URL.Path], [2]time.Time{t0, time.Now()})
			mu.Unlock()
		})
	})
	overlapped := func() bool {
		mu.Lock()
		defer mu.Unlock()
		defer clear(got)
		for _, x := range got["/api/av/getAttributeViewKeysByAvID"] {
			for _, y := range got["/api/av/getAttributeView"] {
				if x[0].Before(y[1]) && y[0].Before(x[1]) {
					return true
				}
			}
		}
		return false
	}
	s.Policy = &tools.Policy{Default: tools.LevelRead, Notebooks: map[string]tools.Level{s.NB: tools.LevelDelete}, AllActions: true, Strict: true, Version: "overlap"}
	set := map[string]any{"action": "set_cells", "avID": db.AV, "rowID": row, "columnID": db.Primary, "value": "overlapped"}
	pre := s.Preflight(t, "av", set, "expectedManifestHash", 1)
	if !overlapped() {
		t.Fatal("a preflight read its state only after the gate's column read")
	}
	if res := s.Commit(t, "av", set, pre); res["status"] != "committed" {
		t.Fatalf("commit %v", res)
	}
	if !overlapped() {
		t.Fatal("a commit read its state only after the gate's column read")
	}
	// Read-only: refused at preflight although the state was read.
	s.Policy = &tools.Policy{Default: tools.LevelRead, AllActions: true, Strict: true, Version: "ro"}
	e := s.WantErr(t, "av", tooltest.CopyArgs(map[string]any{"action": "set_cells", "avID": db.AV, "rowID": row, "columnID": db.Primary, "value": "refused"}, "validateOnly", true), failure.PermissionDenied)
	if e.WriteAttempted == nil || *e.WriteAttempted || e.RequestID != "" {
		t.Fatalf("refused preflight %+v", e)
	}
}
