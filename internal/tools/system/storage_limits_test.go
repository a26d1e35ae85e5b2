package system

import (
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// TestDeclaredLimitsAreTheConstants: the limits the arguments declare in
// their tags are the ones the reads enforce and report.
func TestDeclaredLimitsAreTheConstants(t *testing.T) {
	param := func(a *tools.Action, name string) tools.Param {
		for _, p := range a.Params {
			if p.Name == name {
				return p
			}
		}
		t.Fatalf("%s has no %s", a.Name, name)
		return tools.Param{}
	}
	for _, a := range []*tools.Action{listSnippets.Action(), readPluginStorage.Action()} {
		p := param(a, "maxChars")
		if p.Default != defaultChars || *p.Max != maxOutputChars {
			t.Errorf("%s maxChars: default %v max %d, want %d and %d", a.Name, p.Default, *p.Max, defaultChars, maxOutputChars)
		}
	}
	if p := param(listPluginStorage.Action(), "maxDepth"); *p.Max != maxStorageDepth {
		t.Errorf("maxDepth max %d, want %d", *p.Max, maxStorageDepth)
	}
}
