package av

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// veiled is a database of a visible notebook with rows bound to blocks of
// a hidden notebook, and a relation, a rollup and templates reaching them.
type veiled struct {
	*fix
	hidden          string // the hidden notebook
	secret          string // text only the hidden notebook holds
	rowV, rowH      string // rows bound to a visible and to a hidden block
	hiddenBlock     string
	other           tooltest.Database
	targetV, target string // the related database's visible and hidden rows
	rel, roll       string // relation and rollup columns
	sqlTpl, tpl     string // a template reading the index, a plain one
}

func newVeiled(t *testing.T) *veiled {
	s := &veiled{fix: newFix(t), secret: "zanzibarsecret"}
	ctx := context.Background()
	nb, err := s.C.CreateNotebook(ctx, "Vault")
	if err != nil {
		t.Fatal(err)
	}
	s.hidden = nb.ID
	hdoc := s.MkDoc(t, nb.ID, "/Secret", s.secret+" one\n\n"+s.secret+" two\n")
	hb := s.Kids(t, hdoc)
	s.hiddenBlock = hb[0]
	s.rowV, s.rowH = tooltest.NewID(), tooltest.NewID()
	if err := s.C.AddAttributeViewBlocks(ctx, siyuan.AddAVBlocksRequest{AvID: s.db.AV, BlockID: s.db.Block,
		Srcs: []siyuan.AVSrc{{ItemID: s.rowV, ID: s.Blocks[0]}, {ItemID: s.rowH, ID: hb[0]}}}); err != nil {
		t.Fatal(err)
	}
	s.setText(t, s.rowV, "visible note")
	s.setText(t, s.rowH, s.secret+" note")
	s.setText(t, s.rows[0], "first note")

	// A related database shown in the visible document: one detached row,
	// one bound to the hidden notebook's second block.
	s.other = s.MkDatabase(t, s.Doc)
	s.targetV, s.target = tooltest.NewID(), tooltest.NewID()
	if err := s.C.AddAttributeViewBlocks(ctx, siyuan.AddAVBlocksRequest{AvID: s.other.AV, BlockID: s.other.Block,
		Srcs: []siyuan.AVSrc{{ItemID: s.targetV, Detached: true, Content: "visible target"}, {ItemID: s.target, ID: hb[1]}}}); err != nil {
		t.Fatal(err)
	}
	add := func(args map[string]any) string {
		t.Helper()
		args = tooltest.CopyArgs(args, "action", "add_column", "avID", s.db.AV)
		pre := s.OK(t, "av", tooltest.CopyArgs(args, "validateOnly", true))
		return s.OK(t, "av", tooltest.CommitArgs(args, pre))["columnID"].(string)
	}
	s.rel = add(map[string]any{"keyName": "Links", "keyType": "relation", "relationAvID": s.other.AV})
	s.roll = add(map[string]any{"keyName": "Rolled", "keyType": "rollup", "rollupRelationKeyID": s.rel, "rollupKeyID": s.other.Primary})
	s.sqlTpl = add(map[string]any{"keyName": "Indexed", "keyType": "template", "template": `.action{ len (querySQL "SELECT id FROM blocks") }`})
	s.tpl = add(map[string]any{"keyName": "Plain", "keyType": "template", "template": "P:.action{.Notes}"})
	// The person links the first row to both related rows.
	if _, err := s.C.SetAttributeViewBlockAttr(ctx, s.db.AV, s.rel, s.rows[0], &siyuan.AVValue{Relation: &siyuan.AVValueRelation{BlockIDs: []string{s.targetV, s.target}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.C.FlushTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	s.Policy = &tools.Policy{Notebooks: map[string]tools.Level{nb.ID: tools.LevelNone}, Default: tools.LevelDelete, AllActions: true, Strict: true, Version: "veil"}
	return s
}

// shows reports whether an answer holds anything of the hidden notebook.
func (s *veiled) shows(v any) bool {
	b, _ := json.Marshal(v)
	for _, x := range []string{s.secret, s.hidden, s.rowH, s.hiddenBlock, s.target} {
		if strings.Contains(string(b), x) {
			return true
		}
	}
	return false
}

func rowsOf(r map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, row := range r["rows"].([]any) {
		m := row.(map[string]any)
		out[m["id"].(string)] = m
	}
	return out
}

// TestVeiledReads: every read of the database leaves out the row bound to
// the hidden block and what is computed from it, counts only what it
// shows, and says how much it withheld.
func TestVeiledReads(t *testing.T) {
	s := newVeiled(t)
	av := s.db.AV
	r := s.OK(t, "av", map[string]any{"action": "render", "avID": av, "pageSize": 10})
	rows := rowsOf(r)
	if s.shows(r) || len(rows) != 3 || r["rowCount"] != float64(3) || rows[s.rowV] == nil {
		t.Fatalf("render shows the hidden notebook, or not every visible row: %v", r)
	}
	if w := r["withheld"].(map[string]any); w["rows"] != float64(1) || w["cells"].(float64) < 3 {
		t.Fatalf("withheld %v", w)
	}
	// Each database read says it left the hidden notebook out.
	for _, args := range []map[string]any{{"action": "render", "avID": av}, {"action": "get", "avID": av},
		{"action": "get_primary_key_values", "avID": av}, {"action": "get_attribute_view_keys", "avID": av}} {
		res := s.OK(t, "av", args)
		info, _ := res["readInfo"].(map[string]any)
		if info["coverage"] != "partial" || !strings.Contains(fmt.Sprint(info["limitations"]), "hidden") {
			t.Fatalf("%s while a notebook is hidden: readInfo %v", args["action"], res["readInfo"])
		}
	}
	first := rows[s.rows[0]]["cells"].(map[string]any)
	if first[s.rel] != "visible target" || first[s.roll] != nil || first[s.sqlTpl] != nil || first[s.tpl] != nil {
		t.Fatalf("the first row's computed cells: %v", first)
	}
	if cells := rows[s.rowV]["cells"].(map[string]any); cells[s.tpl] != "P:visible note" || cells[s.sqlTpl] != nil {
		t.Fatalf("a visible row's templates: %v", cells)
	}
	// Pages and counts cover only the rows shown.
	last := s.OK(t, "av", map[string]any{"action": "render", "avID": av, "page": 3, "pageSize": 1})
	if len(last["rows"].([]any)) != 1 || last["pageCount"] != float64(3) || last["hasNextPage"] != false || last["rowCount"] != float64(3) {
		t.Fatalf("the last page: %v", last)
	}
	if cols := s.OK(t, "av", map[string]any{"action": "render", "avID": av, "ignoreRows": true}); cols["rowCount"] != float64(3) || cols["rows"] != nil {
		t.Fatalf("ignoreRows: %v", cols)
	}
	// A query matches only what is shown.
	for q, want := range map[string]int{s.secret: 0, "visible": 2, "note": 2, "first note": 1} {
		res := s.OK(t, "av", map[string]any{"action": "render", "avID": av, "query": q})
		if len(res["rows"].([]any)) != want || res["rowCount"] != float64(want) || s.shows(res) {
			t.Errorf("query %q: %v", q, res)
		}
	}
	verbose := s.OK(t, "av", map[string]any{"action": "render", "avID": av, "verbose": true})
	if s.shows(verbose) {
		t.Fatalf("verbose render shows the hidden notebook: %v", verbose)
	}

	got := s.OK(t, "av", map[string]any{"action": "get", "avID": av})
	if s.shows(got) || got["withheld"].(map[string]any)["rows"] != float64(1) {
		t.Fatalf("get shows the hidden notebook: %v", got)
	}
	pk := s.OK(t, "av", map[string]any{"action": "get_primary_key_values", "avID": av, "pageSize": 2})
	if s.shows(pk) || len(pk["values"].([]any)) != 2 || pk["withheld"].(map[string]any)["rows"] != float64(1) {
		t.Fatalf("primary keys: %v", pk)
	}
	if pk2 := s.OK(t, "av", map[string]any{"action": "get_primary_key_values", "avID": av, "pageSize": 2, "page": 2}); len(pk2["values"].([]any)) != 1 {
		t.Fatalf("primary keys, page 2: %v", pk2)
	}
	keys := s.OK(t, "av", map[string]any{"action": "get_attribute_view_keys", "id": s.Blocks[0]})
	if s.shows(keys) || keys["count"] != float64(1) {
		t.Fatalf("keys of the visible row's block: %v", keys)
	}
	s.WantMissing(t, "av", map[string]any{"action": "get_attribute_view_keys", "id": s.hiddenBlock}, map[string]string{s.hiddenBlock: tooltest.NewID()})

	// Without a hidden notebook, every row shows (and no count is given).
	s.Policy = nil
	if all := s.OK(t, "av", map[string]any{"action": "render", "avID": av}); all["rowCount"] != float64(4) || all["withheld"] != nil {
		t.Fatalf("unveiled render: %v", all)
	}
}

// TestVeiledWrites: a row bound to a hidden block is a row the database
// does not have, for every write that names it, at preflight; a relation
// cell set keeps the rows it links that the call cannot see; a change of
// the whole database that would reach hidden rows is refused; what a
// hidden row holds never changes a hash.
func TestVeiledWrites(t *testing.T) {
	s := newVeiled(t)
	av := s.db.AV
	for _, args := range []map[string]any{
		{"action": "set_cells", "avID": av, "rowID": s.rowH, "columnID": s.text, "value": "x", "validateOnly": true},
		{"action": "remove_rows", "avID": av, "srcIDs": []string{s.rowH}, "validateOnly": true},
		// The hidden block's ID, as a row ID: no hint that it is bound.
		{"action": "remove_rows", "avID": av, "srcIDs": []string{s.hiddenBlock}, "validateOnly": true},
		{"action": "set_cells", "avID": av, "rowID": s.rows[0], "columnID": s.rel, "values": []string{s.target}, "validateOnly": true},
	} {
		s.WantMissing(t, "av", args, map[string]string{s.rowH: tooltest.NewID(), s.hiddenBlock: tooltest.NewID(), s.target: tooltest.NewID()})
	}

	// The relation cell: emptied, it keeps the hidden link (the call
	// neither sees nor changes it); set again, the visible link goes first.
	set := map[string]any{"action": "set_cells", "avID": av, "rowID": s.rows[0], "columnID": s.rel, "value": ""}
	s.Commit(t, "av", set, s.Preflight(t, "av", set, "expectedManifestHash", 1))
	set = map[string]any{"action": "set_cells", "avID": av, "rowID": s.rows[0], "columnID": s.rel, "values": []string{s.targetV}}
	s.Commit(t, "av", set, s.Preflight(t, "av", set, "expectedManifestHash", 1))
	stored, err := s.C.GetAttributeView(context.Background(), av)
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range stored.KeyValues {
		for _, v := range kv.Values {
			if kv.Key.ID == s.rel && v.BlockID == s.rows[0] && !slices.Equal(v.Relation.BlockIDs, []string{s.targetV, s.target}) {
				t.Fatalf("the relation cell lost its hidden link: %v", v.Relation.BlockIDs)
			}
		}
	}

	// A change of the hidden row between preflight and commit is not a
	// change of what the call guards.
	rename := map[string]any{"action": "rename", "avID": av, "name": "Renamed"}
	pre := s.Preflight(t, "av", rename, "expectedStateHash", 1)
	s.setText(t, s.rowH, s.secret+" changed")
	if res := s.Commit(t, "av", rename, pre); res["status"] != "committed" {
		t.Fatalf("rename after a hidden change: %v", res)
	}

	for _, args := range []map[string]any{
		{"action": "remove_column", "avID": av, "keyID": s.text, "validateOnly": true},
		{"action": "duplicate", "avID": av, "validateOnly": true},
	} {
		e := s.WantErr(t, "av", args, failure.PermissionDenied)
		if s.shows(e.Result()) || e.WriteAttempted == nil || *e.WriteAttempted {
			t.Errorf("%v: %+v", args["action"], e)
		}
	}
	// A template reading the index is not added while a notebook is hidden.
	e := s.WantErr(t, "av", map[string]any{"action": "add_column", "avID": av, "keyName": "Q", "keyType": "template",
		"template": `.action{ queryBlocks "SELECT * FROM blocks" }`, "validateOnly": true}, failure.PermissionDenied)
	if !strings.Contains(e.Message, "index") {
		t.Fatalf("template refusal: %v", e)
	}
}

// TestDatabaseShownOnlyInHiddenNotebooks: such a database answers every
// action as one that does not exist, search leaves it out, and render
// with createIfNotExist and its id renders (not_found) instead of telling
// whether it exists.
func TestDatabaseShownOnlyInHiddenNotebooks(t *testing.T) {
	s := newVeiled(t)
	s.Policy = nil
	ctx := context.Background()
	hdoc := s.MkDoc(t, s.hidden, "/Hidden base", "x")
	db := s.MkDatabase(t, hdoc)
	if _, err := s.C.Transactions(ctx, []siyuan.Transaction{{DoOperations: []siyuan.Operation{siyuan.SetAttrViewNameOp(db.AV, "Zanzibar ledger")}}}); err != nil {
		t.Fatal(err)
	}
	s.Policy = &tools.Policy{Notebooks: map[string]tools.Level{s.hidden: tools.LevelNone}, Default: tools.LevelDelete, AllActions: true, Strict: true, Version: "veil"}
	gone := map[string]string{db.AV: tooltest.NewID()}
	for _, args := range []map[string]any{
		{"action": "get", "avID": db.AV},
		{"action": "render", "avID": db.AV},
		{"action": "render", "avID": db.AV, "blockID": s.Doc, "createIfNotExist": true},
		{"action": "get_attribute_view_keys", "avID": db.AV},
		{"action": "get_attribute_view_keys", "id": db.AV}, // upstream's alias: as a block id that names nothing
		{"action": "get_attribute_view_filter_sort", "avID": db.AV},
		{"action": "get_primary_key_values", "avID": db.AV},
		{"action": "rename", "avID": db.AV, "name": "x", "validateOnly": true},
		{"action": "add_rows", "avID": db.AV, "primaryKeyTexts": []string{"x"}, "validateOnly": true},
		{"action": "duplicate", "avID": db.AV, "validateOnly": true},
		{"action": "add_column", "avID": s.db.AV, "keyName": "L", "keyType": "relation", "relationAvID": db.AV, "validateOnly": true},
	} {
		s.WantMissing(t, "av", args, gone)
	}
	if found := s.OK(t, "av", map[string]any{"action": "search", "keyword": "zanzibar"}); found["count"] != float64(0) {
		t.Fatalf("search finds a database shown only in a hidden notebook: %v", found)
	}
	// Mirrored into the visible document too, it is that document's.
	mirror := tooltest.NewID()
	if _, err := s.C.Transactions(ctx, []siyuan.Transaction{{DoOperations: []siyuan.Operation{siyuan.InsertDatabaseBlockOp(mirror, db.AV, "", s.Doc)}}}); err != nil {
		t.Fatal(err)
	}
	got := s.OK(t, "av", map[string]any{"action": "get", "avID": db.AV})
	if fmt.Sprint(got["blockIDs"]) != fmt.Sprint([]any{mirror}) {
		t.Fatalf("blocks showing it: %v", got["blockIDs"])
	}
	found := s.OK(t, "av", map[string]any{"action": "search", "keyword": "zanzibar"})
	if found["count"] != float64(1) || s.shows(found) || strings.Contains(fmt.Sprint(found), hdoc) {
		t.Fatalf("search of a database shown in both: %v", found)
	}
}

// TestSearchThroughHiddenBlocks: databases SiYuan finds through blocks of
// a hidden notebook, each also shown in the visible document, are answered
// through the visible block, with its notebook's name; the notebooks are
// listed once for the whole search, not once per such hit.
func TestSearchThroughHiddenBlocks(t *testing.T) {
	s := newVeiled(t)
	s.Policy = nil
	ctx := context.Background()
	hdoc := s.MkDoc(t, s.hidden, "/Hidden bases", "x")
	for i := range 3 {
		db := s.MkDatabase(t, hdoc)
		ops := []siyuan.Operation{siyuan.SetAttrViewNameOp(db.AV, fmt.Sprintf("Quokka ledger %d", i)), siyuan.InsertDatabaseBlockOp(tooltest.NewID(), db.AV, "", s.Doc)}
		if _, err := s.C.Transactions(ctx, []siyuan.Transaction{{DoOperations: ops}}); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	listed := 0
	s.SetHook(func(_ http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/api/notebook/lsNotebooks" {
			mu.Lock()
			listed++
			mu.Unlock()
		}
		return false
	})
	s.Policy = &tools.Policy{Notebooks: map[string]tools.Level{s.hidden: tools.LevelNone}, Default: tools.LevelDelete, AllActions: true, Strict: true, Version: "veil"}
	found := s.OK(t, "av", map[string]any{"action": "search", "keyword": "quokka"})
	if found["count"] != float64(3) || s.shows(found) || strings.Contains(fmt.Sprint(found), hdoc) {
		t.Fatalf("search of databases shown in both notebooks: %v", found)
	}
	for _, r := range found["results"].([]any) {
		if hp := r.(map[string]any)["hPath"].(string); !strings.HasPrefix(hp, "Strict/") {
			t.Fatalf("a hit's human path does not start with the visible notebook's name: %v", r)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if listed > 1 {
		t.Fatalf("the notebooks were listed %d times for one search", listed)
	}
}

// BenchmarkVeiledRender times a page of a 500-row database (40 rows bound
// to blocks, half of them in a notebook that is hidden in the second
// case) rendered through the tool without and with a hidden notebook, in
// one run: the veil reads the view whole, the database and where its
// bound blocks live, and pages here.
//
//	go test ./internal/tools/av -run '^$' -bench BenchmarkVeiledRender -benchtime 50x
func BenchmarkVeiledRender(b *testing.B) {
	f := tooltest.NewStrict(b, false, testTools)
	ctx := context.Background()
	db := f.MkDatabase(b, f.Doc)
	nb, err := f.C.CreateNotebook(ctx, "Vault")
	if err != nil {
		b.Fatal(err)
	}
	var md strings.Builder
	for i := range 20 {
		fmt.Fprintf(&md, "secret %d\n\n", i)
	}
	hidden := f.Kids(b, f.MkDoc(b, nb.ID, "/Secret", md.String()))
	shown := f.Kids(b, f.MkDoc(b, f.NB, "/Shown", strings.ReplaceAll(md.String(), "secret", "shown")))
	var srcs []siyuan.AVSrc
	for i := range 460 {
		srcs = append(srcs, siyuan.AVSrc{ItemID: tooltest.NewID(), Detached: true, Content: fmt.Sprintf("row %d", i)})
	}
	for i := range 20 {
		srcs = append(srcs, siyuan.AVSrc{ItemID: tooltest.NewID(), ID: hidden[i]}, siyuan.AVSrc{ItemID: tooltest.NewID(), ID: shown[i]})
	}
	for chunk := range slices.Chunk(srcs, 100) {
		if err := f.C.AddAttributeViewBlocks(ctx, siyuan.AddAVBlocksRequest{AvID: db.AV, BlockID: db.Block, Srcs: chunk}); err != nil {
			b.Fatal(err)
		}
	}
	if err := f.C.FlushTransaction(ctx); err != nil {
		b.Fatal(err)
	}
	args := map[string]any{"action": "render", "avID": db.AV, "pageSize": 10}
	for _, c := range []struct {
		name   string
		policy *tools.Policy
	}{
		{"open", &tools.Policy{Default: tools.LevelDelete, AllActions: true, Strict: true, Version: "open"}},
		{"hidden", &tools.Policy{Default: tools.LevelDelete, Notebooks: map[string]tools.Level{nb.ID: tools.LevelNone}, AllActions: true, Strict: true, Version: "hidden"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			f.Policy = c.policy
			for b.Loop() {
				f.OK(b, "av", args)
			}
		})
	}
}

// BenchmarkVeilTemplateCells times veiling the template cells of 500 rows:
// the template's check decided once per key (as veilOf records it) against
// once per cell (a veil that does not know the key).
//
//	go test ./internal/tools/av -run '^$' -bench BenchmarkVeilTemplateCells
func BenchmarkVeilTemplateCells(b *testing.B) {
	const key = "20260812120000-tttttttt"
	tpl := `{{ .Name }} costs {{ mul .Price 2 }} ({{ if gt .Price 10.0 }}dear{{ else }}cheap{{ end }}, {{ now | date "2006-01-02" }})`
	k := &siyuan.AVKey{ID: key, Type: siyuan.AVKeyTemplate, Template: tpl}
	rows := make([]string, 500)
	for i := range rows {
		rows[i] = fmt.Sprintf("20260812120000-r%06d", i)
	}
	for _, c := range []struct {
		name   string
		impure map[string]bool
	}{{"per key", map[string]bool{tpl: impureTemplate(tpl)}}, {"per cell", nil}} {
		b.Run(c.name, func(b *testing.B) {
			v := &veil{rows: map[string]bool{}, rels: map[string]map[string][]string{}, keys: map[string]*siyuan.AVKey{key: k},
				related: map[string]*relatedVeil{}, impure: c.impure}
			var w withheld
			for b.Loop() {
				for _, r := range rows {
					if v.value(r, nil, &siyuan.AVValue{KeyID: key, BlockID: r, Type: siyuan.AVKeyTemplate}, &w) == nil {
						b.Fatal("a pure template's cell was emptied")
					}
				}
			}
		})
	}
}

// groupedRender is a real SiYuan 3.7.3's render of a table grouped by its
// select column (testdata/grouped_render.json): SiYuan puts the rows in
// the groups, none in the view. Red holds a visible paragraph's row and a
// row bound to a block of another notebook; Blue only such a row; the
// default group a detached row.
const (
	groupedRed       = "20261205150834-4c82cym"
	groupedBlue      = "20261205150834-0qmnmxt"
	groupedHiddenRed = "20261205150834-ehq7fdr"
	groupedBare      = "20261205150834-8v39g06"
)

// TestVeilGroupedView: while the other notebook is hidden a grouped view
// shows in each group only the rows the call may see, counted and paged
// per group; a group of hidden rows alone is left out (its name is a
// hidden row's value), one that only has no row matching the query stays;
// each hidden row is withheld once.
func TestVeilGroupedView(t *testing.T) {
	raw, err := os.ReadFile("testdata/grouped_render.json")
	if err != nil {
		t.Fatal(err)
	}
	var r siyuan.AVRender
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	v := &veil{rows: map[string]bool{groupedBlue: true, groupedHiddenRed: true}, rels: map[string]map[string][]string{},
		keys: map[string]*siyuan.AVKey{}, related: map[string]*relatedVeil{}}
	for _, c := range []struct {
		args   renderArgs
		groups string
		count  float64
	}{
		{renderArgs{Page: 1, PageSize: 10}, "Red:" + groupedRed + " Field [Select] is empty:" + groupedBare, 2},
		{renderArgs{Page: 1, PageSize: 10, Query: "gamma"}, "Red: Field [Select] is empty:" + groupedBare, 1},
		{renderArgs{Page: 2, PageSize: 1}, "Red: Field [Select] is empty:", 2},
	} {
		var w withheld
		view, err := veilView(*r.View, v, c.args, &w)
		if err != nil {
			t.Fatal(err)
		}
		rr := r
		rr.View = &view
		out, err := compact(rr, c.args)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, g := range out["groups"].([]map[string]any) {
			var ids []string
			for _, row := range g["rows"].([]map[string]any) {
				ids = append(ids, row["id"].(string))
			}
			got = append(got, g["name"].(string)+":"+strings.Join(ids, ","))
		}
		if strings.Join(got, " ") != c.groups || out["rowCount"] != int(c.count) || w.Rows != 2 {
			t.Errorf("%+v: groups %q, rowCount %v, withheld %+v; want %q, %v", c.args, got, out["rowCount"], w, c.groups, c.count)
		}
		b, _ := json.Marshal(map[string]any{"compact": out, "view": view})
		if strings.Contains(string(b), "secret") || strings.Contains(string(b), groupedBlue) || strings.Contains(string(b), groupedHiddenRed) {
			t.Errorf("%+v shows a hidden row: %s", c.args, b)
		}
	}
}

// TestCompactGroupedView: without a hidden notebook a grouped view shows
// its groups with their rows (SiYuan leaves the view's own rows empty).
func TestCompactGroupedView(t *testing.T) {
	raw, err := os.ReadFile("testdata/grouped_render.json")
	if err != nil {
		t.Fatal(err)
	}
	var r siyuan.AVRender
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	out, err := compact(r, renderArgs{Page: 1, PageSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	gs := out["groups"].([]map[string]any)
	if len(gs) != 3 || gs[0]["rowCount"] != 2 || len(gs[0]["rows"].([]map[string]any)) != 2 || gs[1]["name"] != "Blue" || out["rowCount"] != 4 {
		t.Fatalf("grouped view: %v", out)
	}
	if _, ok := out["rows"]; ok {
		t.Fatalf("a grouped view lists rows outside its groups: %v", out)
	}
}
