package embedded

import (
	"encoding/json"
	"testing"
)

// FuzzBlockDocEndpoints sends the breadth endpoints (breadcrumb, word
// count, documents' info, recent blocks, searchDocs, getDoc, the outline,
// transferBlockRef) fuzzed JSON arguments, ids chosen among a real block,
// a real document, an unknown and a malformed one: the kernel always
// answers an envelope without a recovered panic, and the document stays
// readable.
func FuzzBlockDocEndpoints(f *testing.F) {
	_, post := fuzzKernel(f)
	var nbs struct {
		Data struct{ Notebooks []struct{ ID string } }
	}
	raw, _ := json.Marshal(post(f, "/api/notebook/lsNotebooks", `{}`))
	_ = json.Unmarshal(raw, &nbs)
	doc, _ := post(f, "/api/filetree/createDocWithMd", `{"notebook":"`+nbs.Data.Notebooks[0].ID+`","path":"/Fuzz","markdown":"# H\n\npara"}`)["data"].(string)
	kids, _ := post(f, "/api/block/getChildBlocks", `{"id":"`+doc+`"}`)["data"].([]any)
	para := kids[1].(map[string]any)["id"].(string)
	post(f, "/api/filetree/createDocWithMd", `{"notebook":"`+nbs.Data.Notebooks[0].ID+`","path":"/Refs","markdown":"see ((`+para+` 'x'))"}`)
	ids := []string{para, doc, "20200101000000-aaaaaaa", "bad"}
	paths := []string{"/api/block/getBlockBreadcrumb", "/api/block/getBlocksWordCount", "/api/block/getDocsInfo",
		"/api/block/getRecentUpdatedBlocks", "/api/filetree/searchDocs", "/api/filetree/getDoc", "/api/outline/getDocOutline",
		"/api/block/transferBlockRef"}
	f.Add(uint8(0), uint8(0), uint8(1), `{"excludeTypes":["NodeHeading"]}`)
	f.Add(uint8(2), uint8(1), uint8(0), `{"refCount":true,"av":false}`)
	f.Add(uint8(4), uint8(0), uint8(0), `{"k":"fuzz para","excludeIDs":[3]}`)
	f.Add(uint8(5), uint8(1), uint8(0), `{"size":-3,"mode":0}`)
	f.Add(uint8(7), uint8(0), uint8(1), `{"refIDs":["x"],"reloadUI":"no"}`)
	f.Fuzz(func(t *testing.T, which, a, b uint8, extra string) {
		var fields map[string]any
		if json.Unmarshal([]byte(extra), &fields) != nil || fields == nil {
			fields = map[string]any{"k": extra}
		}
		for _, key := range []string{"id", "fromID"} {
			if _, ok := fields[key]; !ok {
				fields[key] = ids[int(a)%len(ids)]
			}
		}
		if _, ok := fields["toID"]; !ok {
			fields["toID"] = ids[int(b)%len(ids)]
		}
		if _, ok := fields["ids"]; !ok {
			fields["ids"] = []string{ids[int(a)%len(ids)], ids[int(b)%len(ids)]}
		}
		body, _ := json.Marshal(fields)
		post(t, paths[int(which)%len(paths)], string(body))
		if env := post(t, "/api/block/getBlockKramdown", `{"id":"`+doc+`"}`); env["code"] != float64(0) {
			t.Fatalf("document unreadable after %s %s: %v", paths[int(which)%len(paths)], body, env)
		}
	})
}
