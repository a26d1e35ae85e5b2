package catalog

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/tools"
)

var updateSurface = flag.Bool("update-surface", false, "rewrite testdata/surface.json from the declarations")

// TestSurface holds every action's declared arguments (names, types,
// help, rules, formats, defaults), class and example to
// testdata/surface.json: what tools/list and help show agents changes only
// on purpose (go test ./internal/tools/catalog -run TestSurface
// -update-surface, and the diff reviewed).
func TestSurface(t *testing.T) {
	type action struct {
		Tool, Action, Class string
		Params              []tools.Param
		Example             map[string]any `json:",omitempty"`
	}
	var got []action
	for _, tl := range All() {
		for _, a := range tl.Actions {
			forms := []*tools.Action{a}
			if w, _ := a.WriteForm(); w != nil {
				forms = append(forms, w)
			}
			for _, f := range forms {
				got = append(got, action{tl.Name, f.Name, fmt.Sprint(f.Policy.Class), f.Params, f.Example})
			}
		}
	}
	raw, err := json.MarshalIndent(got, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	raw = append(raw, '\n')
	path := filepath.Join("testdata", "surface.json")
	if *updateSurface {
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(raw, want) {
		t.Errorf("the declared surface differs from %s: run with -update-surface and review the diff", path)
	}
}
