package av

import (
	"context"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/canon"
	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

func testTools() []*tools.Tool { return []*tools.Tool{Tool()} }

// fix is a strict fixture with a database shown first in its document,
// with a text column and two detached rows.
type fix struct {
	*tooltest.Fixture
	db   tooltest.Database
	text string
	rows []string
}

func newFix(t *testing.T) *fix {
	s := &fix{Fixture: tooltest.NewStrict(t, false, testTools)}
	s.db = s.MkDatabase(t, s.Doc)
	s.text = tooltest.NewID()
	ctx := context.Background()
	if err := s.C.AddAttributeViewKey(ctx, siyuan.AddAVKeyRequest{AvID: s.db.AV, KeyID: s.text, KeyName: "Notes", KeyType: "text", PreviousKeyID: s.db.Select}); err != nil {
		t.Fatal(err)
	}
	s.rows = []string{tooltest.NewID(), tooltest.NewID()}
	if err := s.C.AddAttributeViewBlocks(ctx, siyuan.AddAVBlocksRequest{AvID: s.db.AV, BlockID: s.db.Block,
		Srcs: []siyuan.AVSrc{{ItemID: s.rows[0], Detached: true, Content: "first"}, {ItemID: s.rows[1], Detached: true, Content: "second"}}}); err != nil {
		t.Fatal(err)
	}
	return s
}

func (s *fix) state(t *testing.T) DBState {
	t.Helper()
	st, err := ReadDBState(context.Background(), &tools.Env{Kernel: s.C}, s.db.AV)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func (s *fix) digest(t *testing.T) string {
	t.Helper()
	d, err := canon.Digest(s.state(t))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func (s *fix) setText(t *testing.T, row, text string) {
	t.Helper()
	if _, err := s.C.SetAttributeViewBlockAttr(context.Background(), s.db.AV, s.text, row, &siyuan.AVValue{Text: &siyuan.AVValueContent{Content: text}}); err != nil {
		t.Fatal(err)
	}
}

func TestReads(t *testing.T) {
	s := newFix(t)
	s.setText(t, s.rows[0], "a note")
	av := s.db.AV
	got := s.OK(t, "av", map[string]any{"action": "get", "id": av})
	if got["avID"] != av || got["av"].(map[string]any)["id"] != av {
		t.Fatalf("get: %v", got)
	}
	s.WantErr(t, "av", map[string]any{"action": "get", "id": av, "blockID": s.Blocks[0]}, failure.InvalidArguments)

	r := s.OK(t, "av", map[string]any{"action": "render", "avID": av})
	rows := r["rows"].([]any)
	if r["rowCount"] != float64(2) || len(rows) != 2 || len(r["columns"].([]any)) != 3 || r["pageSize"] != float64(10) {
		t.Fatalf("render: %v", r)
	}
	first := rows[0].(map[string]any)
	if first["id"] != s.rows[0] || first["cells"].(map[string]any)[s.text] != "a note" || first["cells"].(map[string]any)[s.db.Primary] != "first" {
		t.Fatalf("render row: %v", first)
	}
	if r["readInfo"] != nil {
		t.Fatalf("a whole render has readInfo: %v", r)
	}
	r = s.OK(t, "av", map[string]any{"action": "render", "id": av, "pageSize": 1})
	if info := r["readInfo"].(map[string]any); info["coverage"] != "partial" {
		t.Fatalf("render page 1 readInfo: %v", r)
	}
	step := r["nextSteps"].([]any)[0].(map[string]any)
	if args := step["arguments"].(map[string]any); step["tool"] != "av" || args["action"] != "render" || args["avID"] != av || args["page"] != float64(2) || args["pageSize"] != float64(1) {
		t.Fatalf("render nextSteps: %v", step)
	}
	pk := s.OK(t, "av", map[string]any{"action": "get_primary_key_values", "id": av, "pageSize": 1})
	if info := pk["readInfo"].(map[string]any); info["coverage"] != "unknown" || pk["nextSteps"].([]any)[0].(map[string]any)["arguments"].(map[string]any)["page"] != float64(2) {
		t.Fatalf("get_primary_key_values full page: %v", pk)
	}
	if pk = s.OK(t, "av", map[string]any{"action": "get_primary_key_values", "id": av}); pk["readInfo"] != nil {
		t.Fatalf("get_primary_key_values whole: %v", pk)
	}
	r = s.OK(t, "av", map[string]any{"action": "render", "id": av, "pageSize": 1, "page": 2})
	if len(r["rows"].([]any)) != 1 || r["hasNextPage"] != false || r["pageCount"] != float64(2) {
		t.Fatalf("render page 2: %v", r)
	}
	if r = s.OK(t, "av", map[string]any{"action": "render", "id": av, "query": "second"}); r["rowCount"] != float64(1) {
		t.Fatalf("render query: %v", r)
	}
	if r = s.OK(t, "av", map[string]any{"action": "render", "id": av, "ignoreRows": true}); r["rows"] != nil {
		t.Fatalf("ignoreRows: %v", r)
	}
	if r = s.OK(t, "av", map[string]any{"action": "render", "id": av, "verbose": true}); r["view"] == nil {
		t.Fatalf("verbose: %v", r)
	}
	// createIfNotExist:true is the write form: it needs the parent block.
	e := s.WantErr(t, "av", map[string]any{"action": "render", "id": tooltest.NewID(), "createIfNotExist": true}, failure.InvalidArguments)
	if !strings.Contains(e.Message, "blockID") {
		t.Fatalf("createIfNotExist: %v", e)
	}
	s.WantErr(t, "av", map[string]any{"action": "render", "id": tooltest.NewID()}, failure.NotFound)
	s.WantErr(t, "av", map[string]any{"action": "render", "id": av, "avID": tooltest.NewID()}, failure.InvalidArguments)

	keys := s.OK(t, "av", map[string]any{"action": "get_attribute_view_keys", "avID": av})
	if keys["count"] != float64(3) {
		t.Fatalf("keys: %v", keys)
	}
	// Upstream 0.6.8's skills pass the database as id.
	if byID := s.OK(t, "av", map[string]any{"action": "get_attribute_view_keys", "id": av}); byID["avID"] != av || byID["count"] != float64(3) {
		t.Fatalf("keys by id: %v", byID)
	}
	if err := s.C.AddAttributeViewBlocks(context.Background(), siyuan.AddAVBlocksRequest{AvID: av, BlockID: s.db.Block,
		Srcs: []siyuan.AVSrc{{ItemID: tooltest.NewID(), ID: s.Blocks[0]}}}); err != nil {
		t.Fatal(err)
	}
	bk := s.OK(t, "av", map[string]any{"action": "get_attribute_view_keys", "id": s.Blocks[0]})
	if bk["count"] != float64(1) {
		t.Fatalf("keys of a bound block: %v", bk)
	}
	fs := s.OK(t, "av", map[string]any{"action": "get_attribute_view_filter_sort", "id": av, "blockID": s.db.Block})
	if _, ok := fs["filters"]; !ok {
		t.Fatalf("filter_sort: %v", fs)
	}
	pk = s.OK(t, "av", map[string]any{"action": "get_primary_key_values", "avID": av, "keyword": "sec"})
	if vals := pk["values"].([]any); len(vals) != 1 || vals[0].(map[string]any)["text"] != "second" {
		t.Fatalf("primary keys: %v", pk)
	}
	if _, err := s.C.Transactions(context.Background(), []siyuan.Transaction{{DoOperations: []siyuan.Operation{siyuan.SetAttrViewNameOp(av, "Reading list")}}}); err != nil {
		t.Fatal(err)
	}
	found := s.OK(t, "av", map[string]any{"action": "search", "keyword": "reading"})
	if found["count"] != float64(1) {
		t.Fatalf("search: %v", found)
	}
	// A hidden notebook's databases are left out of a search.
	s.Policy = &tools.Policy{Notebooks: map[string]tools.Level{s.NB: tools.LevelNone}, Default: tools.LevelDelete, AllActions: true, Strict: true, Version: "t"}
	if found = s.OK(t, "av", map[string]any{"action": "search", "keyword": "reading"}); found["count"] != float64(0) {
		t.Fatalf("search shows a hidden notebook's database: %v", found)
	}
	// Shown only there, it is a database that does not exist.
	s.WantMissing(t, "av", map[string]any{"action": "render", "id": av}, map[string]string{av: tooltest.NewID()})
}

// TestStateIsStable: two reads of an unchanged database hash equal, reads
// the kernel answers by saving (render, keys) included; each kind of change
// alters the hash.
func TestStateIsStable(t *testing.T) {
	s := newFix(t)
	ctx := context.Background()
	d := s.digest(t)
	if s.digest(t) != d {
		t.Fatal("two reads differ")
	}
	if _, err := s.C.RenderAttributeView(ctx, siyuan.RenderAVRequest{ID: s.db.AV, BlockID: s.db.Block}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.C.GetAttributeViewKeysByAvID(ctx, s.db.AV); err != nil {
		t.Fatal(err)
	}
	if s.digest(t) != d {
		t.Fatalf("a render changed the state:\n%+v", s.state(t))
	}
	seen := map[string]string{d: "initial"}
	for _, c := range []struct {
		name   string
		change func()
	}{
		{"rename", func() {
			s.C.Transactions(ctx, []siyuan.Transaction{{DoOperations: []siyuan.Operation{siyuan.SetAttrViewNameOp(s.db.AV, "Renamed")}}})
		}},
		{"a cell", func() { s.setText(t, s.rows[0], "changed") }},
		{"a row", func() {
			s.C.AddAttributeViewBlocks(ctx, siyuan.AddAVBlocksRequest{AvID: s.db.AV, BlockID: s.db.Block, Srcs: []siyuan.AVSrc{{ItemID: tooltest.NewID(), Detached: true, Content: "x"}}})
		}},
		{"a column", func() {
			s.C.AddAttributeViewKey(ctx, siyuan.AddAVKeyRequest{AvID: s.db.AV, KeyID: tooltest.NewID(), KeyName: "N", KeyType: "number", PreviousKeyID: s.text})
		}},
		{"a removed row", func() { s.C.RemoveAttributeViewBlocks(ctx, s.db.AV, []string{s.rows[1]}) }},
		{"a removed column", func() { s.C.RemoveAttributeViewKey(ctx, s.db.AV, s.db.Select, false) }},
		{"a mirror block", func() {
			s.C.Transactions(ctx, []siyuan.Transaction{{DoOperations: []siyuan.Operation{siyuan.InsertDatabaseBlockOp(tooltest.NewID(), s.db.AV, s.Blocks[0], "")}}})
		}},
	} {
		c.change()
		d := s.digest(t)
		if prev, dup := seen[d]; dup {
			t.Errorf("%s left the hash as after %s", c.name, prev)
		}
		seen[d] = c.name
	}
}
