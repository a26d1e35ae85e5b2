package block

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
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
	for _, s := range []string{
		`{"ids":["` + fx.Blocks[0] + `","bad","` + fx.Doc + `"],"mode":"textmark"}`,
		`{"fromID":"` + fx.Blocks[0] + `","toID":"` + fx.Blocks[1] + `","refIDs":["` + fx.Blocks[2] + `"],"validateOnly":true}`,
		`{"id":"` + fx.Blocks[3] + `","excludeTypes":["tag"]}`,
		`{"id":"` + fx.Doc + `","ids":["` + fx.Doc + `"],"refCount":true,"av":true}`,
		`{"count":-1}`,
	} {
		for i := range actions {
			f.Add(uint8(i), s)
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, args string) {
		var m map[string]any
		if json.Unmarshal([]byte(args), &m) != nil || m == nil {
			return
		}
		m["action"] = actions[int(which)%len(actions)]
		raw, _ := json.Marshal(m)
		v, err := r.Call(context.Background(), "block", raw)
		if err != nil {
			var te *failure.Error
			if !errors.As(err, &te) || te.Code == "" {
				t.Fatalf("untyped failure for %s: %v", raw, err)
			}
			return
		}
		if _, err := json.Marshal(v); err != nil {
			t.Fatalf("result does not encode: %v", err)
		}
	})
}
