package embedded

import (
	"encoding/json"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// FuzzFindReplace replaces a fuzzed keyword by a fuzzed replacement (plain
// or regex, every kind) in a document of fuzzed Markdown through
// /api/search/findReplace: the kernel answers an envelope without a
// recovered panic, and the document stays readable.
func FuzzFindReplace(f *testing.F) {
	_, postRaw := fuzzKernel(f)
	post := jsonPoster(postRaw)
	nb := post(f, "/api/notebook/createNotebook", map[string]any{"name": "fuzz"})["data"].(map[string]any)["notebook"].(map[string]any)["id"].(string)
	kinds := map[string]any{}
	for _, kind := range []string{"text", "docTitle", "codeBlock", "mathBlock", "htmlBlock", "code", "em", "strong", "kbd", "mark", "s",
		"sub", "sup", "u", "tag", "inlineMath", "inlineMemo", "blockRef", "fileAnnotationRef", "imgText", "imgTitle", "imgSrc", "aText", "aTitle", "aHref"} {
		kinds[kind] = true
	}
	f.Add("apple **apple** `apple` #apple# $apple$ [apple](https://apple.x \"apple\") ![apple](apple.png)", "apple", "pear", false)
	f.Add("- a\n- b\n\n```\nab\n```\n\n<div>a</div>", "a", "", false)
	f.Add("x 12 y 345", `[0-9]+`, "$1#", true)
	f.Add("ref ((20200101000000-abcdefg 'anchor'))", "anchor", "**bold**", false)
	f.Fuzz(func(t *testing.T, md, k, r string, regex bool) {
		if k == "" || len(md) > 2000 {
			return
		}
		env := post(t, "/api/filetree/createDocWithMd", map[string]any{"notebook": nb, "path": "/d", "markdown": md})
		doc, ok := env["data"].(string)
		if !ok {
			return
		}
		var ids []any
		kids := post(t, "/api/block/getChildBlocks", map[string]any{"id": doc})
		if list, ok := kids["data"].([]any); ok {
			for _, c := range list {
				ids = append(ids, c.(map[string]any)["id"])
			}
		}
		ids = append(ids, doc)
		method := 0
		if regex {
			method = 3
		}
		post(t, "/api/search/findReplace", map[string]any{"k": k, "r": r, "ids": ids, "method": method, "replaceTypes": kinds})
		var kd wire.BlockKramdown
		env = post(t, "/api/block/getBlockKramdown", map[string]any{"id": doc})
		raw, _ := json.Marshal(env["data"])
		if err := json.Unmarshal(raw, &kd); err != nil || kd.ID != doc {
			t.Fatalf("the document does not read back after the replace: %v", env)
		}
		post(t, "/api/filetree/removeDocByID", map[string]any{"id": doc})
	})
}
