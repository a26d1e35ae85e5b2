package block

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

func TestBlockReads(t *testing.T) {
	f := tooltest.New(t, testTools)
	kd := f.OK(t, "block", map[string]any{"action": "get_kramdown", "id": f.Blocks[1]})
	if !strings.HasPrefix(kd["kramdown"].(string), "alpha paragraph\n{: ") {
		t.Fatalf("kramdown: %v", kd)
	}
	attrs := f.OK(t, "block", map[string]any{"action": "get_attrs", "id": f.Blocks[1]})
	if attrs["attrs"].(map[string]any)["id"] != f.Blocks[1] {
		t.Fatalf("attrs: %v", attrs)
	}
	info := f.OK(t, "block", map[string]any{"action": "info", "id": f.Blocks[1]})
	doc := info["document"].(map[string]any)
	if doc["id"] != f.Doc || doc["hpath"] != "/Guide" || doc["notebook"] != f.NB || info["isDocument"] != false {
		t.Fatalf("info: %v", info)
	}
	dom := f.OK(t, "block", map[string]any{"action": "dom", "id": f.Blocks[1]})
	if !strings.Contains(dom["dom"].(string), `data-node-id="`+f.Blocks[1]+`"`) {
		t.Fatalf("dom: %v", dom)
	}
	kids := f.OK(t, "block", map[string]any{"action": "get_children", "id": f.Doc, "pageSize": 2, "page": 2})
	if kids["total"].(float64) != 6 || kids["pageCount"].(float64) != 3 || len(kids["data"].([]any)) != 2 || kids["hasNextPage"] != true {
		t.Fatalf("children page: %v", kids)
	}
	// A heading's children are the blocks under it.
	hk := f.OK(t, "block", map[string]any{"action": "get_children", "id": f.Blocks[0]})
	if hk["total"].(float64) != 3 {
		t.Fatalf("heading children: %v", hk)
	}
}

// get_kramdown's answer is encoded as the map it replaced was: the same
// bytes, keys sorted.
func TestKramdownResultBytes(t *testing.T) {
	for _, tc := range []struct{ id, kd string }{
		{"20260812120000-abcdefg", "alpha\n{: id=\"20260812120000-abcdefg\"}"},
		{"", ""},
		{"x", "<b>&amp; \u2028 \"quoted\" \\ tab\t"},
	} {
		got, err1 := json.Marshal(kramdownResult{tc.id, tc.kd})
		want, err2 := json.Marshal(map[string]any{"id": tc.id, "kramdown": tc.kd})
		if err1 != nil || err2 != nil || string(got) != string(want) {
			t.Fatalf("%s != %s (%v %v)", got, want, err1, err2)
		}
	}
}
