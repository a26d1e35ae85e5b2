package av

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

func createArgsFor(parent string) map[string]any {
	return map[string]any{"action": "create", "parentID": parent, "name": "Reading list",
		"columns":         []any{map[string]any{"name": "Author", "type": "text"}, map[string]any{"name": "Done", "type": "checkbox"}},
		"primaryKeyTexts": []any{"Dune", "Solaris"}}
}

func dbOf(t *testing.T, s *tooltest.Fixture, avID string) DBState {
	t.Helper()
	st, err := ReadDBState(context.Background(), &tools.Env{Kernel: s.C}, avID)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// countAVs counts the database files the embedded kernel holds
// (data/storage/av/<id>.json), shown by a block or not.
func countAVs(t *testing.T, s *tooltest.Fixture) int {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(s.K.Dir(), "data", "storage", "av", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	return len(m)
}

func TestCreate(t *testing.T) {
	s := tooltest.NewStrict(t, false, testTools)
	args := createArgsFor(s.Doc)
	pre := s.Preflight(t, "av", args, "", 1)
	res := s.Commit(t, "av", args, pre)
	avID, blockID := res["avID"].(string), res["blockID"].(string)
	st := dbOf(t, s, avID)
	if st.Name != "Reading list" || !slices.Equal(st.Blocks, []string{blockID}) || len(st.Keys) != 4 || len(st.Rows) != 2 {
		t.Fatalf("database %+v", st)
	}
	cols := res["columnIDs"].([]any)
	if k, ok := st.key(cols[1].(string)); !ok || k.Name != "Done" || k.Type != "checkbox" {
		t.Fatalf("keys %+v", st.Keys)
	}
	if got := res["stages"].([]any); len(got) != 6 || got[0] != "block" || got[1] != "database" || got[5] != "rows" || res["stage"] != "rows" {
		t.Fatalf("stages %v", got)
	}
	if res["primaryKeyID"] != st.primary().ID || res["rowCount"] != float64(2) {
		t.Fatalf("receipt %v", res)
	}
	if kids := s.Kids(t, s.Doc); kids[0] != blockID {
		t.Fatalf("the database block is not first: %v", kids)
	}
	n := countAVs(t, s)
	rep := s.Replay(t, "av", args, pre, res)
	if rep["avID"] != avID || countAVs(t, s) != n {
		t.Fatalf("replay %v", rep)
	}
	// After a block, by previousID.
	after := map[string]any{"action": "create", "previousID": s.Blocks[1]}
	res2 := s.Commit(t, "av", after, s.Preflight(t, "av", after, "", 1))
	kids := s.Kids(t, s.Doc)
	if i := slices.Index(kids, s.Blocks[1]); i < 0 || kids[i+1] != res2["blockID"] {
		t.Fatalf("kids %v, new block %v", kids, res2["blockID"])
	}
}

func TestCreateRefusals(t *testing.T) {
	s := tooltest.NewStrict(t, false, testTools)
	for _, c := range []struct {
		args map[string]any
		code failure.Code
	}{
		{map[string]any{"action": "create"}, failure.InvalidArguments},
		{map[string]any{"action": "create", "parentID": tooltest.NewID()}, failure.NotFound},
		{map[string]any{"action": "create", "parentID": s.Doc, "columns": []any{map[string]any{"name": "x", "type": "block"}}}, failure.InvalidArguments},
		{map[string]any{"action": "create", "parentID": s.Doc, "columns": []any{map[string]any{"name": " "}}}, failure.InvalidArguments},
		{map[string]any{"action": "create", "parentID": s.Doc, "columns": []any{map[string]any{"name": "a", "type": "text"}, map[string]any{"name": "a", "type": "url"}}}, failure.InvalidArguments},
		{map[string]any{"action": "create", "parentID": s.Doc, "columns": []any{map[string]any{"name": "a", "type": "text", "options": 1}}}, failure.InvalidArguments},
		{map[string]any{"action": "create", "parentID": s.Doc, "name": strings.Repeat("n", 513)}, failure.InvalidArguments},
	} {
		e := s.WantErr(t, "av", tooltest.CopyArgs(c.args, "validateOnly", true), c.code)
		if e.WriteAttempted == nil || *e.WriteAttempted {
			t.Errorf("%v: %+v", c.args, e)
		}
	}
}

// TestCreateResumesAfterALostReply: the kernel applies a column and the
// reply is lost (outcome_unknown with the receipt so far); the replay
// finds the column with its reserved ID and finishes the same database.
// A row insert lost before the kernel got it stays in doubt: never sent
// again, outcome_unknown on every replay, and still one database.
func TestCreateResumesAfterALostReply(t *testing.T) {
	for _, c := range []struct {
		name, path string
		applied    bool
		want       failure.Code
	}{
		{"column applied, reply lost", "/api/av/addAttributeViewKey", true, ""},
		{"rows never reached the kernel", "/api/av/addAttributeViewBlocks", false, failure.OutcomeUnknown},
		{"database render applied, reply lost", "/api/av/renderAttributeView", true, ""},
		{"database render never reached the kernel (sent again: it creates only a missing id)", "/api/av/renderAttributeView", false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := tooltest.NewStrict(t, false, testTools)
			loseReplyOnce(s, onPath(c.path), c.applied)
			n := countAVs(t, s)
			args := createArgsFor(s.Doc)
			pre := s.Preflight(t, "av", args, "", 1)
			e := s.WantErr(t, "av", tooltest.CommitArgs(args, pre), failure.OutcomeUnknown)
			receipt, _ := e.Details["receipt"].(map[string]any)
			avID, _ := receipt["avID"].(string)
			if avID == "" || e.RequestID != pre["requestId"] || receipt["inDoubt"] == nil {
				t.Fatalf("outcome_unknown %+v", e)
			}
			// A restart between the failure and the replay.
			s.CloseLedger()
			s.Reopen(t, false)
			if c.want != "" {
				e2 := s.WantErr(t, "av", tooltest.CommitArgs(args, pre), c.want)
				if r2, _ := e2.Details["receipt"].(map[string]any); r2["avID"] != avID {
					t.Fatalf("second answer %+v", e2)
				}
			} else {
				res := s.OK(t, "av", tooltest.CommitArgs(args, pre))
				if res["status"] != "committed" || res["avID"] != avID {
					t.Fatalf("resume %v", res)
				}
				st := dbOf(t, s, avID)
				if len(st.Keys) != 4 || len(st.Rows) != 2 || st.Name != "Reading list" {
					t.Fatalf("database %+v", st)
				}
				rep := s.OK(t, "av", tooltest.CommitArgs(args, pre))
				if rep["replayed"] != true || rep["avID"] != avID {
					t.Fatalf("replay %v", rep)
				}
			}
			if got := countAVs(t, s); got != n+1 {
				t.Fatalf("%d databases, want %d", got, n+1)
			}
		})
	}
}

// loseReplyOnce makes the first kernel request match accepts lose its
// reply: the kernel acts on it (applied) or never sees it, and the
// connection drops either way.
func loseReplyOnce(f *tooltest.Fixture, match func(*http.Request) bool, applied bool) {
	var armed atomic.Bool
	armed.Store(true)
	f.Wrap(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if match(r) && armed.CompareAndSwap(true, false) {
				if applied {
					next.ServeHTTP(httptestDiscard{}, r)
				}
				panic(http.ErrAbortHandler)
			}
			next.ServeHTTP(w, r)
		})
	})
}

// onPath matches the requests of one kernel endpoint.
func onPath(p string) func(*http.Request) bool {
	return func(r *http.Request) bool { return r.URL.Path == p }
}

// httptestDiscard is a response writer that drops what the kernel says.
type httptestDiscard struct{}

func (httptestDiscard) Header() http.Header         { return http.Header{} }
func (httptestDiscard) Write(b []byte) (int, error) { return len(b), nil }
func (httptestDiscard) WriteHeader(int)             {}

func TestRenderCreateIfNotExist(t *testing.T) {
	s := tooltest.NewStrict(t, false, testTools)
	n := countAVs(t, s)
	// Without an id: one is reserved.
	args := map[string]any{"action": "render", "blockID": s.Doc, "createIfNotExist": true}
	pre := s.Preflight(t, "av", args, "", 1)
	res := s.Commit(t, "av", args, pre)
	avID, blockID := res["avID"].(string), res["blockID"].(string)
	if res["generatedAvID"] != true || res["materialized"] != true || len(res["columns"].([]any)) != 2 || countAVs(t, s) != n+1 {
		t.Fatalf("created %v", res)
	}
	if kids := s.Kids(t, s.Doc); kids[0] != blockID {
		t.Fatalf("kids %v", kids)
	}
	s.Replay(t, "av", args, pre, res)
	if countAVs(t, s) != n+1 {
		t.Fatal("the replay created")
	}
	// The new database renders as a read.
	r := s.OK(t, "av", map[string]any{"action": "render", "id": avID})
	if r["avID"] != avID || r["rowCount"] != float64(0) {
		t.Fatalf("render %v", r)
	}
	// With an id: that id. An existing one is refused at preflight.
	id := tooltest.NewID()
	withID := map[string]any{"action": "render", "id": id, "blockID": s.Blocks[0], "createIfNotExist": true}
	res2 := s.Commit(t, "av", withID, s.Preflight(t, "av", withID, "", 1))
	if res2["avID"] != id || res2["generatedAvID"] != false {
		t.Fatalf("created %v", res2)
	}
	// Of a database that exists it is a render, as upstream's is.
	if r := s.OK(t, "av", map[string]any{"action": "render", "id": id, "createIfNotExist": true}); r["avID"] != id || r["rowCount"] != float64(0) || r["requestId"] != nil {
		t.Fatalf("render of an existing database with createIfNotExist: %v", r)
	}
	s.WantErr(t, "av", map[string]any{"action": "render", "createIfNotExist": true, "validateOnly": true}, failure.InvalidArguments)
	s.WantErr(t, "av", map[string]any{"action": "render", "blockID": tooltest.NewID(), "createIfNotExist": true, "validateOnly": true}, failure.NotFound)
	// createIfNotExist:false stays a read (no requestId taken); with
	// validateOnly it runs as that read, as upstream's does, and says so.
	if r := s.OK(t, "av", map[string]any{"action": "render", "id": id, "createIfNotExist": false, "validateOnly": true}); r["avID"] != id || r["requestId"] != nil || r["preflight"] == nil {
		t.Fatalf("render with validateOnly: %v", r)
	}
	h := s.OK(t, "av", map[string]any{"action": "help", "topic": "render"})
	if wf, _ := h["writeForm"].(map[string]any); wf["class"] != "additive" {
		t.Fatalf("help %v", h)
	}
}

func TestDuplicate(t *testing.T) {
	s := newFix(t)
	n := countAVs(t, s.Fixture)
	args := map[string]any{"action": "duplicate", "avID": s.db.AV}
	pre := s.Preflight(t, "av", args, "expectedStateHash", 1)
	res := s.Commit(t, "av", args, pre)
	avID, blockID := res["avID"].(string), res["blockID"].(string)
	if avID == s.db.AV || res["sourceAvID"] != s.db.AV || res["insertedAfter"] != s.db.Block || countAVs(t, s.Fixture) != n+1 {
		t.Fatalf("duplicate %v", res)
	}
	cp := dbOf(t, s.Fixture, avID)
	if !slices.Equal(cp.Blocks, []string{blockID}) || !same(rowIDs(cp), rowIDs(s.state(t))) || !strings.Contains(cp.Name, "Duplicated") && cp.Name != "" {
		t.Fatalf("copy %+v", cp)
	}
	kids := s.Kids(t, s.Doc)
	if i := slices.Index(kids, s.db.Block); i < 0 || kids[i+1] != blockID {
		t.Fatalf("kids %v", kids)
	}
	s.Replay(t, "av", args, pre, res)
	if countAVs(t, s.Fixture) != n+1 {
		t.Fatal("the replay duplicated")
	}
	// A stale commit: state_changed, no copy.
	pre2 := s.Preflight(t, "av", args, "expectedStateHash", 1)
	s.Drifted(t, "av", args, pre2, func() { s.setText(t, s.rows[0], "drift") })
	if countAVs(t, s.Fixture) != n+1 {
		t.Fatal("a stale duplicate duplicated")
	}
	// A lost reply of the duplicate itself: in doubt with no id learned,
	// never sent again.
	loseReplyOnce(s.Fixture, onPath("/api/av/duplicateAttributeViewBlock"), true)
	pre3 := s.Preflight(t, "av", args, "expectedStateHash", 1)
	s.WantErr(t, "av", tooltest.CommitArgs(args, pre3), failure.OutcomeUnknown)
	e := s.WantErr(t, "av", tooltest.CommitArgs(args, pre3), failure.OutcomeUnknown)
	if r, _ := e.Details["receipt"].(map[string]any); r["inDoubt"] != "duplicated" {
		t.Fatalf("receipt %+v", e)
	}
	if countAVs(t, s.Fixture) != n+2 {
		t.Fatalf("%d databases, want %d (the lost one applied once)", countAVs(t, s.Fixture), n+2)
	}
	s.WantErr(t, "av", map[string]any{"action": "duplicate", "avID": tooltest.NewID(), "validateOnly": true}, failure.NotFound)
	s.WantErr(t, "av", map[string]any{"action": "duplicate", "avID": s.db.AV, "blockID": s.Blocks[0], "validateOnly": true}, failure.InvalidArguments)
}

// TestCreateAtItsCaps: the largest creation (50 columns, 100 rows: 153
// stages) fits the ledger's caps and commits.
func TestCreateAtItsCaps(t *testing.T) {
	s := tooltest.NewStrict(t, false, testTools)
	var cols, rows []any
	for i := range 50 {
		cols = append(cols, map[string]any{"name": fmt.Sprintf("Column %d", i), "type": "text"})
	}
	for i := range 100 {
		rows = append(rows, fmt.Sprintf("row %d", i))
	}
	args := map[string]any{"action": "create", "parentID": s.Doc, "name": "Big", "columns": cols, "primaryKeyTexts": rows}
	res := s.Commit(t, "av", args, s.Preflight(t, "av", args, "", 1))
	if st := dbOf(t, s, res["avID"].(string)); len(st.Keys) != 52 || len(st.Rows) != 100 {
		t.Fatalf("database: %d keys, %d rows", len(st.Keys), len(st.Rows))
	}
	s.WantErr(t, "av", tooltest.CopyArgs(args, "columns", append(cols, map[string]any{"name": "one more", "type": "text"}), "validateOnly", true), failure.InvalidArguments)
}
