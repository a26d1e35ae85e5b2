package search

import (
	"strings"
	"testing"
)

// TestReplaceTypesHelpListsEveryKind: the kinds find_replace's help names
// are the ones it accepts.
func TestReplaceTypesHelpListsEveryKind(t *testing.T) {
	for _, p := range findReplaceAction().Params {
		if p.Name == "replaceTypes" {
			if !strings.HasSuffix(p.Description, ": "+strings.Join(replaceKinds, ", ")) {
				t.Errorf("replaceTypes help %q does not end with the kinds %v", p.Description, replaceKinds)
			}
			return
		}
	}
	t.Fatal("find_replace has no replaceTypes")
}
