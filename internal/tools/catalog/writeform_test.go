package catalog

import (
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// TestWriteForms: a read that becomes a write when one argument is true
// (av.render with createIfNotExist) or has one value
// (document.ensure_link_targets with mode create) is gated as that write (its notebook
// at the write's level, preflight included), refuses at preflight what a
// read shows is wrong, and documents the write form in help with a valid
// preflight example.
func TestWriteForms(t *testing.T) {
	s := tooltest.NewStrict(t, false, testTools)
	const gone = "20200101000000-aaaaaaa"
	cases := map[string]struct {
		args    map[string]any
		need    tools.Level
		refusal map[string]any
		code    failure.Code
	}{
		"av.render": {map[string]any{"blockID": s.Doc, "createIfNotExist": true}, tools.LevelWrite,
			map[string]any{"blockID": gone, "createIfNotExist": true}, failure.NotFound},
		"document.ensure_link_targets": {map[string]any{"notebook": s.NB, "parentId": s.Doc, "mode": "create", "targets": []any{map[string]any{"key": "k", "title": "T"}}}, tools.LevelWrite,
			map[string]any{"notebook": s.NB, "parentId": gone, "mode": "create", "targets": []any{map[string]any{"key": "k", "title": "T"}}}, failure.NotFound},
	}
	for _, tool := range s.R.Tools() {
		for _, a := range tool.Actions {
			w, when := a.WriteForm()
			if w == nil {
				continue
			}
			name := tool.Name + "." + a.Name
			c, ok := cases[name]
			if !ok {
				t.Errorf("%s has a write form (%s) without a case here", name, when)
				continue
			}
			delete(cases, name)
			if w.Policy.Class == strict.Read || c.args[when] != a.WriteOn() {
				t.Errorf("%s: write form %+v, case %v", name, w.Policy, c.args)
			}
			for _, level := range []tools.Level{tools.LevelNone, tools.LevelRead, tools.LevelWrite, tools.LevelDelete} {
				s.Policy = policyAt(s.NB, level)
				_, err := s.Call(t, tool.Name, tooltest.CopyArgs(c.args, "action", a.Name, "validateOnly", true))
				denied := err != nil && err.Code == failure.PermissionDenied
				if level == tools.LevelNone {
					// Hidden: the answer of a parent that does not exist.
					hidden, missing := s.AsMissing(t, tool.Name, tooltest.CopyArgs(c.args, "action", a.Name, "validateOnly", true), map[string]string{s.Doc: tooltest.NewID()})
					if hidden != missing || err == nil || err.Code != failure.NotFound {
						t.Errorf("%s in a hidden notebook: %s, for a missing parent: %s", name, hidden, missing)
					}
					continue
				}
				if denied != (level < c.need) {
					t.Errorf("%s at %s: %v", name, level, err)
				}
				if denied && (err.WriteAttempted == nil || *err.WriteAttempted) {
					t.Errorf("%s at %s: a refused write must say writeAttempted:false: %+v", name, level, err)
				}
			}
			s.Policy = nil
			e := s.WantErr(t, tool.Name, tooltest.CopyArgs(c.refusal, "action", a.Name, "validateOnly", true), c.code)
			if e.WriteAttempted == nil || *e.WriteAttempted || e.RequestID != "" {
				t.Errorf("%s: refused preflight %+v", name, e)
			}
			h := s.OK(t, tool.Name, map[string]any{"action": "help", "topic": a.Name})
			wf, _ := h["writeForm"].(map[string]any)
			ex, _ := wf["example"].(map[string]any)
			if wf["class"] != w.Policy.Class.String() || ex[when] != a.WriteOn() || ex["validateOnly"] != true || wf["when"] != a.WriteCondition() {
				t.Errorf("%s help: %v", name, h)
			}
			if _, err := s.Call(t, tool.Name, ex); err != nil && err.Code == failure.InvalidArguments {
				t.Errorf("%s: its write-form example %v is refused: %s", name, ex, err.Message)
			}
		}
	}
	for name := range cases {
		t.Errorf("case %s names no write form", name)
	}
}
