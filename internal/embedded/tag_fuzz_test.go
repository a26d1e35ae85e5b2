package embedded

import (
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/mdexport"
)

// FuzzTags writes a document of fuzzed Markdown and renames and removes
// fuzzed labels through the tag endpoints: every answer is an envelope
// without a recovered panic, every span belongs to a block of the
// document, and getTag's tree stays well formed.
func FuzzTags(f *testing.F) {
	k, postRaw := fuzzKernel(f)
	post := jsonPoster(postRaw)
	nbs := post(f, "/api/notebook/lsNotebooks", map[string]any{})["data"].(map[string]any)["notebooks"].([]any)
	box := nbs[0].(map[string]any)["id"].(string)
	for _, seed := range [][3]string{
		{"a #x# b #x/y#", "x", "z"},
		{"- #lt&x# **#b#**\n  - #deep#", "lt&x", "q"},
		{"# h #x#\n\n> #q#", "x", "x/x"},
		{"#a b# #a/b/c#", "a", "/ b /"},
		{"no tags", "", "#"},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	f.Fuzz(func(t *testing.T, md, old, nw string) {
		env := post(t, "/api/filetree/createDocWithMd", map[string]any{"notebook": box, "path": "/f" + time.Now().Format("150405.000000000"), "markdown": md})
		id, ok := env["data"].(string)
		if !ok {
			return // refused Markdown
		}
		tree, err := k.loadTree(id)
		if err != nil {
			t.Fatal(err)
		}
		for _, sp := range sqlTagSpansOf(tree) {
			if mdexport.NodeByID(tree.Root, sp.BlockID) == nil || !(sp.Type == "tag" || strings.HasPrefix(sp.Type, "textmark ")) {
				t.Fatalf("span %+v of a block not in the document", sp)
			}
		}
		post(t, "/api/tag/renameTag", map[string]any{"oldLabel": old, "newLabel": nw})
		post(t, "/api/tag/removeTag", map[string]any{"label": nw})
		post(t, "/api/search/searchTag", map[string]any{"k": old})
		tags, _ := post(t, "/api/tag/getTag", map[string]any{})["data"].([]any)
		var walk func(l []any, depth int)
		walk = func(l []any, depth int) {
			for _, x := range l {
				m := x.(map[string]any)
				if int(m["depth"].(float64)) != depth || m["type"] != "tag" {
					t.Fatalf("tag %v at depth %d", m, depth)
				}
				kids, _ := m["children"].([]any)
				walk(kids, depth+1)
			}
		}
		walk(tags, 0)
	})
}
