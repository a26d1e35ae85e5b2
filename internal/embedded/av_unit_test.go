package embedded

import (
	"context"
	"slices"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

func TestPruneFiltersAndCheckAV(t *testing.T) {
	leaf := func(col string) *wire.AVViewFilter { return &wire.AVViewFilter{Column: col, Operator: "="} }
	for _, tc := range []struct {
		name    string
		filters []*wire.AVViewFilter
		want    []string // leaf columns left
		changed bool
	}{
		{"empty root kept as a new root", []*wire.AVViewFilter{{Combination: "and"}}, nil, false},
		{"valid leaf kept", []*wire.AVViewFilter{{Combination: "and", Filters: []*wire.AVViewFilter{leaf("k")}}}, []string{"k"}, false},
		{"invalid leaf dropped", []*wire.AVViewFilter{{Combination: "and", Filters: []*wire.AVViewFilter{leaf("k"), leaf("gone")}}}, []string{"k"}, true},
		{"group emptied", []*wire.AVViewFilter{{Combination: "or", Filters: []*wire.AVViewFilter{leaf("gone")}}}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			av := &wire.AttributeView{Name: "a\nb", KeyValues: []*wire.AVKeyValues{{Key: &wire.AVKey{ID: "k", Type: "text"},
				Values: []*wire.AVValue{{ID: "v", Type: "text"}}}}}
			view := &wire.AVView{Filters: tc.filters, Sorts: []*wire.AVViewSort{{Column: "gone"}}}
			changed := checkAV(av, view)
			var got []string
			var walk func(fs []*wire.AVViewFilter)
			walk = func(fs []*wire.AVViewFilter) {
				for _, f := range fs {
					if isFilterGroup(f) {
						walk(f.Filters)
					} else {
						got = append(got, f.Column)
					}
				}
			}
			walk(view.Filters)
			if !slices.Equal(got, tc.want) || !changed || len(view.Sorts) != 0 || av.Name != "a b" {
				t.Fatalf("filters %v sorts %v name %q changed %v", got, view.Sorts, av.Name, changed)
			}
			if len(view.Filters) != 1 || view.Filters[0].Combination == "" {
				t.Fatalf("root = %+v", view.Filters)
			}
		})
	}
}

func TestRefreshKeyIDs(t *testing.T) {
	av := &wire.AttributeView{KeyIDs: []string{"gone", "b"}, KeyValues: []*wire.AVKeyValues{
		{Key: &wire.AVKey{ID: "a"}}, {Key: &wire.AVKey{ID: "b"}}, {Key: &wire.AVKey{ID: "c"}}}}
	refreshKeyIDs(av)
	if !slices.Equal(av.KeyIDs, []string{"b", "a", "c"}) {
		t.Fatalf("keyIDs = %v", av.KeyIDs)
	}
}

func TestAVContent(t *testing.T) {
	av := &wire.AttributeView{Name: "DB", Views: []*wire.AVView{{Name: "Table"}}, KeyValues: []*wire.AVKeyValues{
		{Key: &wire.AVKey{Name: "Primary Key", Type: "block"}, Values: []*wire.AVValue{{Type: "block", Block: &wire.AVValueBlock{Content: "row"}}}},
		{Key: &wire.AVKey{Name: "N", Type: "number"}, Values: []*wire.AVValue{{Type: "number", Number: &wire.AVValueNumber{FormattedContent: "1,000"}}}},
		{Key: &wire.AVKey{Name: "Empty", Type: "text"}}}}
	if got := avContent(av); got != "DB Table Primary Key row N 1,000 Empty" {
		t.Fatalf("avContent = %q", got)
	}
}

func TestTemplateKeysInOrder(t *testing.T) {
	k := &Kernel{}
	funcs := k.templateFuncs(context.Background(), time.Now())
	av := &wire.AttributeView{KeyValues: []*wire.AVKeyValues{
		{Key: &wire.AVKey{ID: "outer", Name: "Outer", Type: "template", Template: ".action{.Inner}"}},
		{Key: &wire.AVKey{ID: "broken", Name: "Broken", Type: "template", Template: ".action{"}},
		{Key: &wire.AVKey{ID: "inner", Name: "Inner", Type: "template", Template: `.action{index . "Text"}`}},
		{Key: &wire.AVKey{ID: "text", Name: "Text", Type: "text"}}}}
	var got []string
	for _, key := range templateKeysInOrder(av, funcs) {
		got = append(got, key.ID)
	}
	// As the kernel's: every pass lists the keys it resolves again, so a
	// template rendered in an earlier pass is rendered again (its output
	// taken as a template).
	if !slices.Equal(got, []string{"broken", "inner", "outer", "broken", "inner"}) {
		t.Fatalf("order = %v", got)
	}
	vars, err := templateVars(`.action{if .A}.action{$x := .B}.action{end} .action{index . "C"}`, funcs)
	// As the kernel's: names inside if, range and with are not seen.
	if err != nil || vars["A"] || vars["B"] || !vars["C"] {
		t.Fatalf("vars = %v, %v", vars, err)
	}
}

func TestExecuteTemplateCell(t *testing.T) {
	k := &Kernel{}
	funcs := k.templateFuncs(context.Background(), time.Now())
	kvs := []*wire.AVKeyValues{
		{Key: &wire.AVKey{ID: "pk", Name: "Name", Type: "block"}, Values: []*wire.AVValue{{Type: "block", BlockID: "20260101120000-itemaaa",
			Block: &wire.AVValueBlock{Content: "row", Created: 1, Updated: 2}}}},
		{Key: &wire.AVKey{ID: "n", Name: "N", Type: "number"}, Values: []*wire.AVValue{{Type: "number", Number: &wire.AVValueNumber{Content: 2.5, IsNotEmpty: true}}}},
		{Key: &wire.AVKey{ID: "e", Name: "E", Type: "number"}, Values: []*wire.AVValue{{Type: "number", Number: &wire.AVValueNumber{}}}},
		{Key: &wire.AVKey{ID: "m", Name: "M", Type: "mSelect"}, Values: []*wire.AVValue{{Type: "mSelect", MSelect: []*wire.AVValueSelect{{Content: "a"}, {Content: "b"}}}}},
	}
	for _, tc := range []struct{ src, want string }{
		{`.action{.Name}`, "row"},
		{`.action{.id}`, "20260101120000-itemaaa"},
		{`.action{.N}`, "2.5"},
		{`.action{.E}`, ""}, // "<no value>" alone is empty
		{`x .action{.E}`, "x &lt;no value&gt;"},
		{`<b>.action{.M_str}</b>`, "<b>a b</b>"},
		{`.action{index .id_mod "n"} .action{.created.Year}`, "2.5 2026"},
		{`.action{len .M}`, "2"},
	} {
		tpl, err := template.New("").Delims(".action{", "}").Funcs(funcs).Parse(tc.src)
		if err != nil {
			t.Fatal(err)
		}
		got, err := executeTemplateCell(tpl, map[string]string{}, kvs)
		if err != nil || got != tc.want {
			t.Errorf("%s = %q, %v; want %q", tc.src, got, err, tc.want)
		}
	}
}

// TestFailedAVOperationEndsItsTransaction: the operations after a failed
// one are not applied, the next transaction is, and the reply is code 0.
func TestFailedAVOperationEndsItsTransaction(t *testing.T) {
	e := ixOpen(t)
	f := newAVFixture(t, e)
	r := e.post("/api/transactions", map[string]any{"reqId": 1, "transactions": []map[string]any{
		{"doOperations": []map[string]any{
			{"action": "setAttrViewName", "id": f.av, "data": "one"},
			{"action": "updateAttrViewCell", "avID": f.av, "keyID": "20200101000000-nokey00", "rowID": f.rows[0], "data": map[string]any{}},
			{"action": "setAttrViewName", "id": f.av, "data": "two"}}},
		{"doOperations": []map[string]any{{"action": "setAttrViewName", "id": f.b, "data": "three"}}}}})
	if r.Code != 0 || !strings.Contains(string(r.Data), `"updateAttrViewCell"`) {
		t.Fatalf("reply: %+v", r)
	}
	a, _ := e.k.readAV(f.av)
	b, _ := e.k.readAV(f.b)
	if a.Name != "one" || b.Name != "three" {
		t.Fatalf("names %q %q, want one and three", a.Name, b.Name)
	}
}
