package av

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// FuzzCreationArguments: any arguments to the creating and relation
// actions, run as a preflight, answer a result or a coded refusal that
// wrote nothing; never a panic, never an uncoded error.
func FuzzCreationArguments(f *testing.F) {
	s := tooltest.NewStrict(f, false, testTools)
	db := s.MkDatabase(f, s.Doc)
	for _, seed := range []string{
		`{"action":"create","parentID":"` + s.Doc + `","columns":[{"name":"A","type":"text"}],"primaryKeyTexts":["x"]}`,
		`{"action":"create","previousID":"` + s.Blocks[0] + `","name":"N","columns":[{"name":1}]}`,
		`{"action":"create","parentID":"` + s.Doc + `","columns":"x"}`,
		`{"action":"render","blockID":"` + s.Doc + `","createIfNotExist":true}`,
		`{"action":"render","id":"` + db.AV + `","createIfNotExist":true}`,
		`{"action":"duplicate","avID":"` + db.AV + `","previousID":"bad"}`,
		`{"action":"add_column","avID":"` + db.AV + `","keyName":"R","keyType":"relation","relationAvID":"` + db.AV + `"}`,
		`{"action":"add_column","avID":"` + db.AV + `","keyName":"R","keyType":"rollup","rollupRelationKeyID":"` + db.Select + `","rollupKeyID":"` + db.Primary + `"}`,
		`{"action":"set_cells","avID":"` + db.AV + `","rowID":"` + db.Select + `","columnID":"` + db.Select + `","values":[1,2]}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var args map[string]any
		if json.Unmarshal([]byte(raw), &args) != nil || args == nil {
			return
		}
		args["validateOnly"] = true
		if _, e := s.Call(t, "av", args); e != nil {
			if e.Code == "" || e.Message == "" {
				t.Fatalf("%s: uncoded error %+v", raw, e)
			}
			if e.WriteAttempted != nil && *e.WriteAttempted {
				t.Fatalf("%s: a preflight says it wrote: %+v", raw, e)
			}
		}
	})
}

// FuzzVeil veils fuzzed stored databases (every row whose item ID ends in
// "h" is bound to a hidden block, every related row ending in "h" is
// hidden): nothing panics, no hidden row, no value of one, no link to a
// hidden row and no place of one in a view stays, and a state and a
// query agree with the veiled view.
func FuzzVeil(f *testing.F) {
	const (
		visible = "20260812120000-aaaaaav"
		hidden  = "20260812120000-aaaaaah"
		pk      = "20260812120000-kkkkkkk"
		rel     = "20260812120000-rrrrrrr"
		other   = "20260812120000-ooooooo"
	)
	f.Add(`{"id":"20260812120000-dbdbdbd","keyValues":[{"key":{"id":"` + pk + `","type":"block"},"values":[` +
		`{"blockID":"` + visible + `","keyID":"` + pk + `","type":"block","block":{"id":"20260812120000-bbbbbbb","content":"v"}},` +
		`{"blockID":"` + hidden + `","keyID":"` + pk + `","type":"block","block":{"id":"20260812120000-ccccccc","content":"secret"}}]},` +
		`{"key":{"id":"` + rel + `","type":"relation","relation":{"avID":"` + other + `"}},"values":[` +
		`{"blockID":"` + visible + `","keyID":"` + rel + `","type":"relation","relation":{"blockIDs":["` + hidden + `","` + visible + `"],"contents":[{"blockID":"` + hidden + `"}]}}]}],` +
		`"views":[{"id":"20260812120000-vvvvvvv","type":"table","itemIds":["` + hidden + `","` + visible + `"],"table":{"columns":[{"id":"` + pk + `","calc":{"operator":"Sum","result":{"number":{"content":7}}}}]}}]}`)
	f.Add(`{"keyValues":[{"key":null},{"values":[null]}],"views":[null,{"table":{"columns":[null,{"calc":"x"}]}}]}`)
	f.Fuzz(func(t *testing.T, raw string) {
		var stored siyuan.AttributeView
		if json.Unmarshal([]byte(raw), &stored) != nil {
			return
		}
		endsH := func(s string) bool { return strings.HasSuffix(s, "h") }
		v := &veil{avID: stored.ID, rows: map[string]bool{}, rels: map[string]map[string][]string{}, keys: map[string]*siyuan.AVKey{},
			related: map[string]*relatedVeil{}}
		for _, kv := range stored.KeyValues {
			if kv == nil || kv.Key == nil {
				continue
			}
			v.keys[kv.Key.ID] = kv.Key
			for _, val := range kv.Values {
				if val == nil {
					continue
				}
				if endsH(val.BlockID) {
					v.rows[val.BlockID] = true
				}
				if val.Relation != nil {
					if v.rels[val.BlockID] == nil {
						v.rels[val.BlockID] = map[string][]string{}
					}
					v.rels[val.BlockID][kv.Key.ID] = val.Relation.BlockIDs
				}
			}
			if kv.Key.Type == siyuan.AVKeyRelation && kv.Key.Relation != nil {
				r := &relatedVeil{rows: map[string]bool{}}
				v.related[kv.Key.Relation.AvID] = r
				for _, ids := range v.rels {
					for _, id := range ids[kv.Key.ID] {
						if endsH(id) {
							r.rows[id] = true
						}
					}
				}
			}
		}
		var w withheld
		out, err := v.attributeView(&stored, &w)
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range out.KeyValues {
			if kv == nil {
				continue
			}
			for _, val := range kv.Values {
				if val != nil && v.rows[val.BlockID] {
					t.Fatalf("a hidden row's value stayed: %+v", val)
				}
				if val != nil && val.Relation != nil && kv.Key != nil && kv.Key.Type == siyuan.AVKeyRelation {
					for _, id := range val.Relation.BlockIDs {
						if v.target(v.relatedOf(kv.Key.ID), id) {
							t.Fatalf("a link to a hidden row stayed: %+v", val.Relation)
						}
					}
				}
			}
		}
		for _, view := range out.Views {
			if view != nil && slices.ContainsFunc(view.ItemIDs, v.row) {
				t.Fatalf("a hidden row keeps its place: %v", view.ItemIDs)
			}
		}
		st := v.state(canonical(&stored, nil))
		for _, r := range st.Rows {
			if v.row(r.ID) {
				t.Fatalf("a hidden row is in the state: %+v", r)
			}
			for k, c := range r.Cells {
				if c != nil && c.Relation != nil && slices.ContainsFunc(c.Relation.BlockIDs, func(id string) bool { return v.target(v.relatedOf(k), id) }) {
					t.Fatalf("the state keeps a link to a hidden row: %+v", c.Relation)
				}
			}
		}
		_ = matchesQuery(raw, []string{raw})
	})
}

// FuzzVeilView: whatever view SiYuan renders (groups included), veiling it
// never panics, leaves no row the call may not see in it or its groups,
// and a compact render of the result builds.
func FuzzVeilView(f *testing.F) {
	if raw, err := os.ReadFile("testdata/grouped_render.json"); err == nil {
		var r struct {
			View json.RawMessage `json:"view"`
		}
		if json.Unmarshal(raw, &r) == nil {
			f.Add(string(r.View), "", 1, 10)
		}
	}
	f.Add(`{"rows":[{"id":"h"},null,{"id":"v","cells":[null,{"value":{"type":"text","text":{"content":"x"}}}]}],"groups":[null,{"rows":[{"id":"h"}]},{"rows":[{"id":"v"}],"groups":"x"}]}`, "x", 1, 1)
	f.Add(`{"groups":"nope"}`, "", 2, 3)
	f.Fuzz(func(t *testing.T, raw, query string, page, size int) {
		var view siyuan.AVTable
		if json.Unmarshal([]byte(raw), &view) != nil || page < 1 || size < 1 || size > 1000 {
			return
		}
		hidden := func(id string) bool { return strings.HasPrefix(id, "h") }
		rows := map[string]bool{}
		for _, r := range view.Rows {
			if r != nil && hidden(r.ID) {
				rows[r.ID] = true
			}
		}
		groups, _ := groupsOf(&view)
		for _, g := range groups {
			for _, r := range g.Rows {
				if r != nil && hidden(r.ID) {
					rows[r.ID] = true
				}
			}
		}
		v := &veil{rows: rows, rels: map[string]map[string][]string{}, keys: map[string]*siyuan.AVKey{}, related: map[string]*relatedVeil{}}
		var w withheld
		got, err := veilView(view, v, renderArgs{Query: query, Page: page, PageSize: size}, &w)
		if err != nil {
			return // groups SiYuan would never send: refused
		}
		check := func(rs []*siyuan.AVRow) {
			for _, r := range rs {
				if r != nil && hidden(r.ID) {
					t.Fatalf("a hidden row shows: %s", r.ID)
				}
			}
		}
		check(got.Rows)
		gs, err := groupsOf(&got)
		if err != nil {
			t.Fatalf("veiled groups do not decode: %v", err)
		}
		for _, g := range gs {
			check(g.Rows)
		}
		if _, err := compact(siyuan.AVRender{View: &got}, renderArgs{Page: page, PageSize: size}); err != nil {
			t.Fatal(err)
		}
	})
}
