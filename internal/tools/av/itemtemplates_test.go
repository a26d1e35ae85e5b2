package av

import (
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// TestSetNewItemTemplates: the list is stored as sent and normalised;
// a replay answers the same; a drift refuses; field values are checked
// against their columns at preflight.
func TestSetNewItemTemplates(t *testing.T) {
	s := newFix(t)
	t1, t2 := tooltest.NewID(), tooltest.NewID()
	args := map[string]any{"action": "set_new_item_templates", "avID": s.db.AV, "blockID": s.db.Block, "defaultTemplateID": t2,
		"templates": []map[string]any{
			{"id": t1, "name": " Task ", "icon": "1f600", "targetType": "detached", "primaryKeyTemplate": "Task",
				"fieldValues": map[string]any{s.text: map[string]any{"mode": "static", "value": map[string]any{"text": map[string]any{"content": "hi"}}}}},
			{"id": t2, "name": "Doc", "targetType": "document", "saveLocation": map[string]any{"pathTemplate": "/Items/"}}}}
	pre := s.Preflight(t, "av", args, "expectedStateHash", 1)
	res := s.Commit(t, "av", args, pre)
	s.Replay(t, "av", args, pre, res)
	st, err := readItemTemplates(t.Context(), &tools.Env{Kernel: s.C}, s.db.AV)
	if err != nil || len(st.Templates) != 2 || st.Templates[0].Name != "Task" || st.Templates[0].Icon != "" || st.Default != t2 ||
		st.Templates[0].FieldValues[s.text].Value.Type != "text" {
		t.Fatalf("stored %+v %v", st, err)
	}
	clear := map[string]any{"action": "set_new_item_templates", "avID": s.db.AV, "blockID": s.db.Block, "templates": []map[string]any{}}
	pre = s.Preflight(t, "av", clear, "expectedStateHash", 1)
	s.Drifted(t, "av", clear, pre, func() {
		other := tooltest.CopyArgs(args, "defaultTemplateID", t1)
		s.OK(t, "av", tooltest.CommitArgs(other, s.Preflight(t, "av", other, "expectedStateHash", 1)))
	})
	s.Commit(t, "av", clear, s.Preflight(t, "av", clear, "expectedStateHash", 1))
	if st, _ := readItemTemplates(t.Context(), &tools.Env{Kernel: s.C}, s.db.AV); len(st.Templates) != 0 || st.Default != "" {
		t.Fatalf("after clearing %+v", st)
	}
	fv := func(key string, v any) []map[string]any {
		return []map[string]any{{"id": t1, "name": "A", "targetType": "detached", "fieldValues": map[string]any{key: v}}}
	}
	for _, c := range []struct {
		templates any
		def       string
		code      failure.Code
	}{
		{[]map[string]any{{"id": "x", "name": "A", "targetType": "detached"}}, "", failure.InvalidArguments},
		{[]map[string]any{{"id": t1, "name": " ", "targetType": "detached"}}, "", failure.InvalidArguments},
		{[]map[string]any{{"id": t1, "name": "A", "targetType": "row"}}, "", failure.InvalidArguments},
		{[]map[string]any{{"id": t1, "name": "A", "targetType": "detached", "extra": 1}}, "", failure.InvalidArguments},
		{[]map[string]any{{"id": t1, "name": "A", "targetType": "detached"}}, t2, failure.InvalidArguments},
		{fv(tooltest.NewID(), map[string]any{"mode": "static", "value": map[string]any{"text": map[string]any{"content": "x"}}}), "", failure.NotFound},
		{fv(s.text, map[string]any{"mode": "currentTime"}), "", failure.InvalidArguments},
		{fv(s.text, map[string]any{"mode": "static", "value": map[string]any{"number": map[string]any{"content": 1}}}), "", failure.InvalidArguments},
		{fv(s.db.Primary, map[string]any{"mode": "static", "value": map[string]any{"text": map[string]any{"content": "x"}}}), "", failure.InvalidArguments},
		{[]map[string]any{{"id": t1, "name": "A", "targetType": "detached", "primaryKeyTemplate": `{{ readFile "/etc/passwd" }}`}}, "", failure.InvalidArguments},
	} {
		a := map[string]any{"action": "set_new_item_templates", "avID": s.db.AV, "blockID": s.db.Block, "templates": c.templates, "defaultTemplateID": c.def, "validateOnly": true}
		s.WantErr(t, "av", a, c.code)
	}
}
