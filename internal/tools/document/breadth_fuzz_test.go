package document

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
	for _, s := range []string{
		`{"id":"` + fx.Doc + `","attrs":{"icon":"1f4d4","cover":null},"validateOnly":true}`,
		`{"id":"` + fx.Doc + `","attrs":{"cover":"/assets/\"x.png"}}`,
		`{"notebook":"` + fx.NB + `","hPath":"/Guide","include":["docInfo","id"]}`,
		`{"notebook":"` + fx.NB + `","path":"Guide/Child"}`,
		`{"notebook":"` + fx.NB + `","query":"guide zebra","path":"/"}`,
		`{"id":"` + fx.Doc + `","mode":"html","size":1}`,
		`{"id":"` + fx.Doc + `","preview":true}`,
		`{"id":"` + fx.Blocks[1] + `"}`,
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
		v, err := r.Call(context.Background(), "document", raw)
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
