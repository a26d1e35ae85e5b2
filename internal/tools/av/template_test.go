package av

import (
	"context"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// TestTemplateColumnHelpers: a template column's template is rendered by
// SiYuan on every render of the database, so add_column refuses what
// file.render refuses: the environment and unknown functions always, the
// index readers while a notebook is hidden; nothing is written.
func TestTemplateColumnHelpers(t *testing.T) {
	s := newFix(t)
	hidden, err := s.C.CreateNotebook(context.Background(), "Hidden")
	if err != nil {
		t.Fatal(err)
	}
	hiding := &tools.Policy{Default: tools.LevelDelete, Notebooks: map[string]tools.Level{hidden.ID: tools.LevelNone}, AllActions: true, Strict: true}
	col := func(tpl string) map[string]any {
		return map[string]any{"action": "add_column", "avID": s.db.AV, "keyName": "T", "keyType": "template", "template": tpl, "validateOnly": true}
	}
	for _, c := range []struct {
		tpl    string
		policy *tools.Policy
		code   failure.Code
	}{
		{`.action{ env "HOME" }`, nil, failure.PermissionDenied},
		{`.action{ readFile "x" }`, nil, failure.InvalidArguments},
		{`.action{ querySQL "DELETE FROM blocks" }`, nil, failure.InvalidArguments},
		{`.action{ len (querySQL "SELECT * FROM blocks") }`, hiding, failure.PermissionDenied},
		{`.action{ (getBlock .id).Content }`, hiding, failure.PermissionDenied},
		{`.action{ len (querySQL "SELECT * FROM blocks") }`, nil, ""},
		{`L.action{ .Notes | upper }`, hiding, ""},
	} {
		s.Policy = c.policy
		if c.code == "" {
			s.OK(t, "av", col(c.tpl))
			continue
		}
		e := s.WantErr(t, "av", col(c.tpl), c.code)
		if e.WriteAttempted == nil || *e.WriteAttempted || e.RequestID != "" {
			t.Errorf("%s: %+v", c.tpl, e)
		}
	}
}
