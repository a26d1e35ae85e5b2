package block

import (
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// FuzzBreadthArguments sends fuzzed arguments to the breadth actions
// (batch_kramdown, transfer_references, breadcrumb, word_count, docs_info,
// recent_updated): every answer is a result or a typed failure, never a
// panic. Without a coordinator nothing is written.
func FuzzBreadthArguments(f *testing.F) {
	fx := tooltest.New(f, testTools)
	r, err := tools.NewRegistry(&tools.Env{Kernel: fx.C}, Tool())
	if err != nil {
		f.Fatal(err)
	}
	actions := []string{"batch_kramdown", "transfer_references", "breadcrumb", "word_count", "docs_info", "recent_updated"}
	tooltest.FuzzActions(f, r, "block", actions, []string{
		`{"ids":["` + fx.Blocks[0] + `","bad","` + fx.Doc + `"],"mode":"textmark"}`,
		`{"fromID":"` + fx.Blocks[0] + `","toID":"` + fx.Blocks[1] + `","refIDs":["` + fx.Blocks[2] + `"],"validateOnly":true}`,
		`{"id":"` + fx.Blocks[3] + `","excludeTypes":["tag"]}`,
		`{"id":"` + fx.Doc + `","ids":["` + fx.Doc + `"],"refCount":true,"av":true}`,
		`{"count":-1}`,
	})
}
