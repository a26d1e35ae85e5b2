package embedded

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/88250/lute/ast"
)

// FuzzAVTransactions sends database operations with fuzzed fields (the
// database, key and item IDs chosen among real, unknown and malformed
// ones; the value, srcs and data as fuzzed JSON) through /api/transactions
// and the /api/av/* forms: the kernel always answers an envelope without
// a recovered panic, and the database file always stays readable.
func FuzzAVTransactions(f *testing.F) {
	k, post := fuzzKernel(f)
	avID, block := ast.NewNodeID(), ast.NewNodeID()
	boot := f
	var nbs struct {
		Data struct{ Notebooks []struct{ ID string } }
	}
	env := post(boot, "/api/notebook/lsNotebooks", `{}`)
	raw, _ := json.Marshal(env)
	_ = json.Unmarshal(raw, &nbs)
	env = post(boot, "/api/filetree/createDocWithMd", `{"notebook":"`+nbs.Data.Notebooks[0].ID+`","path":"/Fuzz","markdown":"para"}`)
	doc, _ := env["data"].(string)
	post(boot, "/api/transactions", `{"reqId":1,"transactions":[{"doOperations":[{"action":"insert","id":"`+block+
		`","parentID":"`+doc+`","data":"<div data-node-id=\"`+block+`\" data-av-id=\"`+avID+`\" data-type=\"NodeAttributeView\" data-av-type=\"table\"></div>"}]}]}`)
	post(boot, "/api/av/renderAttributeView", `{"id":"`+avID+`","blockID":"`+block+`"}`)
	var keys []struct {
		ID string `json:"id"`
	}
	env = post(boot, "/api/av/getAttributeViewKeysByAvID", `{"avID":"`+avID+`"}`)
	raw, _ = json.Marshal(env["data"])
	_ = json.Unmarshal(raw, &keys)

	actions := []string{"insertAttrViewBlock", "removeAttrViewBlock", "addAttrViewCol", "removeAttrViewCol", "updateAttrViewCell",
		"setAttrViewName", "updateAttrViewColTemplate", "updateAttrViewColNumberFormat", "updateAttrViewColRelation",
		"updateAttrViewColRollup", "doUpdateUpdated"}
	forms := []string{"/api/av/addAttributeViewBlocks", "/api/av/setAttributeViewBlockAttr", "/api/av/batchSetAttributeViewBlockAttrs",
		"/api/av/addAttributeViewKey", "/api/av/removeAttributeViewKey", "/api/av/renderAttributeView", "/api/av/getAttributeViewKeys",
		"/api/av/getAttributeViewPrimaryKeyValues", "/api/av/searchAttributeView", "/api/av/duplicateAttributeViewBlock"}
	item := ast.NewNodeID()
	ids := []string{avID, keys[0].ID, keys[1].ID, item, block, doc, "", "x", "20200101000000-zzzzzzz"}
	f.Add(uint8(4), uint8(0), uint8(1), uint8(3), `{"text":{"content":"x"}}`, `[{"itemID":"`+item+`","isDetached":true,"content":"c"}]`, "text")
	f.Add(uint8(0), uint8(0), uint8(0), uint8(3), `null`, `[{"itemID":"`+item+`","isDetached":false,"id":"`+doc+`"}]`, "")
	f.Add(uint8(2), uint8(0), uint8(3), uint8(2), `"icon"`, `[]`, "relation")
	f.Add(uint8(8), uint8(0), uint8(0), uint8(1), `{"calc":{"operator":"Sum"}}`, `[null]`, "rollup")
	f.Add(uint8(4), uint8(0), uint8(2), uint8(3), `{"mSelect":[{"content":"a"},{"content":""},null]}`, `[{}]`, "mSelect")
	f.Add(uint8(4), uint8(0), uint8(1), uint8(3), `{"block":{"id":"`+doc+`","content":""},"isDetached":false}`, `7`, "block")
	f.Add(uint8(200), uint8(0), uint8(1), uint8(3), `{"number":{"content":1e308,"isNotEmpty":true,"format":"USD"}}`, `[{"isDetached":"yes"}]`, "number")
	f.Fuzz(func(t *testing.T, action, av, key, row uint8, data, srcs, typ string) {
		pick := func(i uint8) string { return ids[int(i)%len(ids)] }
		if !json.Valid([]byte(data)) {
			data = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(strings.ToValidUTF8(data, "")) + `"`
		}
		if !json.Valid([]byte(srcs)) {
			srcs = `[]`
		}
		typJSON, _ := json.Marshal(typ)
		op := `{"action":"` + actions[int(action)%len(actions)] + `","avID":"` + pick(av) + `","id":"` + pick(key) + `","keyID":"` + pick(key) +
			`","rowID":"` + pick(row) + `","parentID":"` + pick(row) + `","previousID":"` + pick(row) + `","blockID":"` + block +
			`","name":` + string(typJSON) + `,"type":` + string(typJSON) + `,"format":` + string(typJSON) + `,"data":` + data + `,"srcs":` + srcs +
			`,"srcIDs":["` + pick(row) + `"],"isTwoWay":true,"backRelationKeyID":"` + pick(row) + `"}`
		post(t, "/api/transactions", `{"reqId":1,"transactions":[{"doOperations":[`+op+`]}]}`)
		form := forms[int(action)%len(forms)]
		post(t, form, `{"avID":"`+pick(av)+`","id":"`+pick(av)+`","keyID":"`+pick(key)+`","itemID":"`+pick(row)+`","keyName":"n","keyType":`+
			string(typJSON)+`,"keyIcon":"","previousKeyID":"","value":`+data+`,"values":[{"keyID":"`+pick(key)+`","itemID":"`+pick(row)+`","value":`+data+
			`}],"srcs":`+srcs+`,"keyword":`+string(typJSON)+`,"page":1,"pageSize":2}`)
		if b, err := os.ReadFile(k.avPath(avID)); err == nil {
			if _, err := parseAV(b); err != nil && !bytes.Contains(b, []byte(`"spec":`)) {
				t.Fatalf("the database file is unreadable: %v\n%s", err, b)
			}
		}
	})
}
