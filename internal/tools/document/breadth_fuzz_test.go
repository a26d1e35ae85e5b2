package document

import (
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// FuzzBreadthArguments sends fuzzed arguments to the breadth actions
// (set_attr's attrs, lookup's include and aliases, search_docs, get_doc's
// modes, get_outline, get_child_sort_mode): every answer is a result or a
// typed failure, never a panic. Without a coordinator nothing is written.
func FuzzBreadthArguments(f *testing.F) {
	fx := tooltest.New(f, testTools)
	r, err := tools.NewRegistry(&tools.Env{Kernel: fx.C}, Tool())
	if err != nil {
		f.Fatal(err)
	}
	actions := []string{"set_attr", "lookup", "search_docs", "get_doc", "get_outline", "get_child_sort_mode", "get_child_blocks"}
	tooltest.FuzzActions(f, r, "document", actions, []string{
		`{"id":"` + fx.Doc + `","attrs":{"icon":"1f4d4","cover":null},"validateOnly":true}`,
		`{"id":"` + fx.Doc + `","attrs":{"cover":"/assets/\"x.png"}}`,
		`{"notebook":"` + fx.NB + `","hPath":"/Guide","include":["docInfo","id"]}`,
		`{"notebook":"` + fx.NB + `","path":"Guide/Child"}`,
		`{"notebook":"` + fx.NB + `","query":"guide zebra","path":"/"}`,
		`{"id":"` + fx.Doc + `","mode":"html","size":1}`,
		`{"id":"` + fx.Doc + `","preview":true}`,
		`{"id":"` + fx.Blocks[1] + `"}`,
	})
}
