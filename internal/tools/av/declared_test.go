package av

import (
	"strings"
	"testing"
)

// TestColumnsHelpListsEveryType: the column types create's help names are
// the ones it accepts.
func TestColumnsHelpListsEveryType(t *testing.T) {
	for _, p := range create.Action().Params {
		if p.Name == "columns" {
			if !strings.HasSuffix(p.Description, "; type: "+strings.Join(columnTypes, ", ")) {
				t.Errorf("columns help %q does not end with the types %v", p.Description, columnTypes)
			}
			return
		}
	}
	t.Fatal("create has no columns")
}
