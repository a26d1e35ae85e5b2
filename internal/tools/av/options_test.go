package av

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// optionNames are a column's options as "name:color:desc".
func optionNames(st DBState, keyID string) string {
	k, _ := st.key(keyID)
	var out []string
	for _, o := range k.Options {
		out = append(out, o.Name+":"+o.Color+":"+o.Desc)
	}
	return strings.Join(out, ",")
}

// TestSetColumnOptions: the list given is the column's options exactly,
// in its order; options left out leave the cells; omitted colours and
// descriptions keep the option's own; a replay answers the same; a drift
// refuses the commit; what the state shows is wrong is refused at
// preflight.
func TestSetColumnOptions(t *testing.T) {
	s := newFix(t)
	ctx := context.Background()
	for i, v := range []string{`[{"content":"Todo","color":"4"}]`, `[{"content":"Doing","color":"5"}]`} {
		if _, err := s.C.SetAttributeViewBlockAttr(ctx, s.db.AV, s.db.Select, s.rows[i], &siyuan.AVValue{MSelect: mustSelect(t, v)}); err != nil {
			t.Fatal(err)
		}
	}
	if got := optionNames(s.state(t), s.db.Select); !strings.HasPrefix(got, "Todo:4:,Doing:5:") {
		t.Fatalf("options before: %s", got)
	}
	args := map[string]any{"action": "set_column_options", "avID": s.db.AV, "keyID": s.db.Select,
		"options": []map[string]any{{"name": "New", "desc": "fresh"}, {"name": "Doing", "color": "9"}, {"name": "Todo"}}}
	pre := s.Preflight(t, "av", args, "expectedStateHash", 1)
	res := s.Commit(t, "av", args, pre)
	st := s.state(t)
	if got := optionNames(st, s.db.Select); got != "New:1:fresh,Doing:9:,Todo:4:" {
		t.Fatalf("options after: %s", got)
	}
	s.Replay(t, "av", args, pre, res)

	// Removing one drops it from its cell.
	args = map[string]any{"action": "set_column_options", "avID": s.db.AV, "keyID": s.db.Select, "options": []map[string]any{{"name": "Doing"}}}
	res = s.Commit(t, "av", args, s.Preflight(t, "av", args, "expectedStateHash", 1))
	st = s.state(t)
	if got := optionNames(st, s.db.Select); got != "Doing:9:" {
		t.Fatalf("options after removal: %s", got)
	}
	if r, _ := st.row(s.rows[0]); r.Cells[s.db.Select] != nil && len(r.Cells[s.db.Select].MSelect) != 0 {
		t.Fatalf("removed option still in its cell: %+v", r.Cells[s.db.Select])
	}
	if rm, _ := res["removed"].([]any); len(rm) != 2 {
		t.Fatalf("removed: %v", res["removed"])
	}
	// An empty list removes every option.
	args = map[string]any{"action": "set_column_options", "avID": s.db.AV, "keyID": s.db.Select, "options": []map[string]any{}}
	s.Commit(t, "av", args, s.Preflight(t, "av", args, "expectedStateHash", 1))
	if got := optionNames(s.state(t), s.db.Select); got != "" {
		t.Fatalf("options after an empty list: %s", got)
	}

	// A drift of the column refuses the commit.
	args = map[string]any{"action": "set_column_options", "avID": s.db.AV, "keyID": s.db.Select, "options": []map[string]any{{"name": "A"}}}
	pre = s.Preflight(t, "av", args, "expectedStateHash", 1)
	s.Drifted(t, "av", args, pre, func() {
		_, _ = s.C.SetAttributeViewBlockAttr(ctx, s.db.AV, s.db.Select, s.rows[1], &siyuan.AVValue{MSelect: mustSelect(t, `[{"content":"Z","color":"2"}]`)})
	})

	for _, c := range []struct {
		options any
		key     string
		code    failure.Code
	}{
		{[]map[string]any{{"name": ""}}, s.db.Select, failure.InvalidArguments},
		{[]map[string]any{{"name": "a"}, {"name": "a"}}, s.db.Select, failure.InvalidArguments},
		{[]map[string]any{{"name": "a", "color": "15"}}, s.db.Select, failure.InvalidArguments},
		{[]map[string]any{{"name": "a", "colour": "1"}}, s.db.Select, failure.InvalidArguments},
		{[]map[string]any{{"name": "a"}}, s.text, failure.InvalidArguments}, // a text column
		{[]map[string]any{{"name": "a"}}, s.rows[0], failure.NotFound},      // a row, not a column
	} {
		a := map[string]any{"action": "set_column_options", "avID": s.db.AV, "keyID": c.key, "options": c.options, "validateOnly": true}
		if e := s.WantErr(t, "av", a, c.code); strings.Contains(e.Message, "%!") {
			t.Fatalf("message %q", e.Message)
		}
	}
}

func mustSelect(t *testing.T, s string) []*siyuan.AVValueSelect {
	t.Helper()
	var out []*siyuan.AVValueSelect
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		t.Fatal(err)
	}
	return out
}
