package contract

import (
	"encoding/json"
	"net/http"
	"slices"
	"sort"
	"testing"
)

// The checks of /api/block/batchAppendBlock, batchPrependBlock and
// batchInsertBlock: a list of appendBlock/prependBlock/insertBlock entries,
// answered with one transaction per entry.

// opKeys are the keys of one operation of a transaction, as 3.7.3 writes
// every one of them whatever the action.
var opKeys = []string{"action", "avID", "backRelationKeyID", "blockID", "blockIDs", "context", "data", "deckID", "format", "groupID", "id", "ignoreDefaultFill", "isDetached", "isTwoWay", "keyID", "layout", "name", "nextID", "parentID", "previousID", "removeDest", "retData", "rowID", "srcIDs", "srcs", "targetGroupID", "type", "viewID"}

// batchOp is the part of an operation the checks compare.
type batchOp struct {
	Action     string `json:"action"`
	ID         string `json:"id"`
	ParentID   string `json:"parentID"`
	PreviousID string `json:"previousID"`
	NextID     string `json:"nextID"`
	Data       any    `json:"data"`
}

// batchCall posts blocks to a batch endpoint and returns each
// transaction's only operation, after checking the envelope, that every
// transaction has timestamp 0, exactly one operation and null undo
// operations, and that every operation has 3.7.3's keys.
func (s *suite) batchCall(t *testing.T, endpoint string, blocks []map[string]string) []batchOp {
	t.Helper()
	body, err := json.Marshal(map[string]any{"blocks": blocks})
	must(t, "marshal blocks", err)
	r := s.rawJSON(t, endpoint, string(body))
	var env struct {
		Code int    `json:"code"`
		Msg  string `json:"msg"`
		Data []struct {
			Timestamp      *int64            `json:"timestamp"`
			DoOperations   []json.RawMessage `json:"doOperations"`
			UndoOperations json.RawMessage   `json:"undoOperations"`
		} `json:"data"`
	}
	if r.status != http.StatusOK || json.Unmarshal(r.body, &env) != nil || env.Code != 0 {
		t.Fatalf("%s: HTTP %d %s", endpoint, r.status, r.body)
	}
	if len(env.Data) != len(blocks) {
		t.Fatalf("%s: %d transactions for %d entries: %s", endpoint, len(env.Data), len(blocks), r.body)
	}
	ops := make([]batchOp, len(env.Data))
	for i, tx := range env.Data {
		if tx.Timestamp == nil || *tx.Timestamp != 0 || len(tx.DoOperations) != 1 || string(tx.UndoOperations) != "null" {
			t.Fatalf("%s: transaction %d is not {timestamp:0, one doOperation, undoOperations:null}: %s", endpoint, i, r.body)
		}
		var keys map[string]json.RawMessage
		must(t, "decode operation", json.Unmarshal(tx.DoOperations[0], &keys))
		got := make([]string, 0, len(keys))
		for k := range keys {
			got = append(got, k)
		}
		sort.Strings(got)
		// rootID is written by 3.7.3 too; it is empty here.
		got = slices.DeleteFunc(got, func(k string) bool { return k == "rootID" })
		if !slices.Equal(got, opKeys) {
			t.Fatalf("%s: operation %d keys\n got %v\nwant %v", endpoint, i, got, opKeys)
		}
		must(t, "decode operation", json.Unmarshal(tx.DoOperations[0], &ops[i]))
		if ops[i].Action != "insert" {
			t.Fatalf("%s: operation %d action %q, want insert", endpoint, i, ops[i].Action)
		}
	}
	return ops
}

func md(parent, data string) map[string]string {
	return map[string]string{"parentID": parent, "dataType": "markdown", "data": data}
}

func checkBatchAppendPrepend(t *testing.T, s *suite) {
	doc, ps := s.docWithParas(t, "batchapp-"+randWord(6), "a", "b")
	other, os := s.docWithParas(t, "batchapp2-"+randWord(6), "o")
	ops := s.batchCall(t, "/api/block/batchAppendBlock", []map[string]string{
		md(doc, "m1"), md(other, "m2\n\nm3"), md(doc, "m4"),
		// Any dataType but markdown is taken as block DOM; text alone
		// becomes a paragraph.
		{"parentID": doc, "dataType": "text", "data": "raw"},
	})
	// Each entry is an insert after its parent's last child at the time,
	// entries applied in order.
	for i, want := range []batchOp{
		{ParentID: doc, PreviousID: ps[1]},
		{ParentID: other, PreviousID: os[0]},
		{ParentID: doc, PreviousID: ops[0].ID},
		{ParentID: doc, PreviousID: ops[2].ID, Data: "raw"},
	} {
		op := ops[i]
		if !nodeIDRe.MatchString(op.ID) || op.ParentID != want.ParentID || op.PreviousID != want.PreviousID || op.NextID != "" {
			t.Fatalf("append %d: %+v, want parent %s previous %s", i, op, want.ParentID, want.PreviousID)
		}
		if want.Data != nil && op.Data != want.Data {
			t.Fatalf("append %d: data %v, want %v as sent", i, op.Data, want.Data)
		}
	}
	kids := s.childIDs(t, other)
	requireOrder(t, "other doc after the batch append", kids[:2], []string{os[0], ops[1].ID})
	if len(kids) != 3 {
		t.Fatalf("other doc has %d children, want 3 (m2 and m3): %v", len(kids), kids)
	}
	requireOrder(t, "doc after the batch append", s.childIDs(t, doc), []string{ps[0], ps[1], ops[0].ID, ops[2].ID, ops[3].ID})
	if c := s.children(t, doc)[4].Content; c != "raw" {
		t.Fatalf("the block of dataType text has content %q, want raw", c)
	}

	ops = s.batchCall(t, "/api/block/batchPrependBlock", []map[string]string{md(doc, "p1"), md(doc, "p2")})
	for i, op := range ops {
		// A prepended block is reported with neither previousID nor nextID.
		if !nodeIDRe.MatchString(op.ID) || op.ParentID != doc || op.PreviousID != "" || op.NextID != "" {
			t.Fatalf("prepend %d: %+v", i, op)
		}
	}
	requireOrder(t, "doc after the batch prepend", s.childIDs(t, doc)[:3], []string{ops[1].ID, ops[0].ID, ps[0]})
}

func checkBatchInsert(t *testing.T, s *suite) {
	doc, ps := s.docWithParas(t, "batchins-"+randWord(6), "a", "b")
	ops := s.batchCall(t, "/api/block/batchInsertBlock", []map[string]string{
		{"previousID": ps[0], "dataType": "markdown", "data": "after a"},
		{"nextID": ps[1], "dataType": "markdown", "data": "before b\n\nalso before b"},
		{"parentID": doc, "dataType": "markdown", "data": "first"},
		{"previousID": unknownID, "dataType": "markdown", "data": "nowhere"},
	})
	for i, want := range []batchOp{
		{ParentID: doc, PreviousID: ps[0]},
		{ParentID: doc, NextID: ps[1]},
		{ParentID: doc},
	} {
		op := ops[i]
		if !nodeIDRe.MatchString(op.ID) || op.ParentID != want.ParentID || op.PreviousID != want.PreviousID || op.NextID != want.NextID {
			t.Fatalf("insert %d: %+v, want parent %q previous %q next %q", i, op, want.ParentID, want.PreviousID, want.NextID)
		}
	}
	// An anchor that does not exist inserts nothing and is answered with
	// an empty id and parent, as insertBlock's.
	if op := ops[3]; op.ID != "" || op.ParentID != "" || op.PreviousID != unknownID {
		t.Fatalf("insert after an unknown block: %+v, want empty id and parent", op)
	}
	kids := s.childIDs(t, doc)
	if len(kids) != 6 {
		t.Fatalf("doc has %d children, want 6: %v", len(kids), kids)
	}
	requireOrder(t, "doc after the batch insert", []string{kids[0], kids[1], kids[2], kids[3], kids[5]}, []string{ops[2].ID, ps[0], ops[0].ID, ops[1].ID, ps[1]})
}

func checkBatchInsertErrors(t *testing.T, s *suite) {
	doc, ps := s.docWithParas(t, "batchinserr-"+randWord(6), "leaf")
	good := `{"parentID":"` + doc + `","dataType":"markdown","data":"good"}`
	goodIns := `{"previousID":"` + ps[0] + `","dataType":"markdown","data":"good"}`
	leafMsg := `block [` + ps[0] + `] type "p" is a leaf block and cannot have children; use previousID to place the block as its sibling instead`
	for _, ep := range []string{"batchAppendBlock", "batchPrependBlock", "batchInsertBlock"} {
		g := good
		if ep == "batchInsertBlock" {
			g = goodIns
		}
		for _, c := range []struct{ what, body, msg string }{
			// Every entry is checked before any is applied, in order.
			{"a good entry then a non-id", `{"blocks":[` + g + `,{"parentID":"nope","dataType":"markdown","data":"x"}]}`, "invalid ID argument"},
			{"a good entry then an unknown parent", `{"blocks":[` + g + `,{"parentID":"` + unknownID + `","dataType":"markdown","data":"x"}]}`, "parent block not found: " + unknownID},
			{"an unknown parent then a non-id", `{"blocks":[{"parentID":"` + unknownID + `","dataType":"markdown","data":"x"},{"parentID":"nope","dataType":"markdown","data":"x"}]}`, "parent block not found: " + unknownID},
			{"a good entry then a leaf parent", `{"blocks":[` + g + `,{"parentID":"` + ps[0] + `","dataType":"markdown","data":"x"}]}`, leafMsg},
			{"an invalid IAL id", `{"blocks":[{"parentID":"` + doc + `","dataType":"markdown","data":"x\n{: id=\"20200101000000-zz\"}"}]}`, "data block DOM failed: found invalid ID [20200101000000-zz]"},
		} {
			wantEnvelope(t, ep+" with "+c.what, s.rawJSON(t, "/api/block/"+ep, c.body), http.StatusOK, -1, c.msg, 1)
		}
		// An empty list applies nothing and answers null data.
		wantEnvelope(t, ep+" with an empty list", s.rawJSON(t, "/api/block/"+ep, `{"blocks":[]}`), http.StatusOK, 0, "", 1)
		// 3.7.3 does not check the arguments' types: these answer code 0
		// and null data there (the embedded kernel says what is wrong).
		for _, body := range []string{`{}`, `{"blocks":"x"}`, `{"blocks":["x"]}`, `{"blocks":[{"parentID":"` + doc + `","dataType":"markdown"}]}`, `{"blocks":[{"parentID":"` + doc + `","data":"x"}]}`} {
			wantEnvelope(t, ep+" with "+body, s.rawJSONAny(t, "/api/block/"+ep, body), http.StatusOK, 0, "", 1)
		}
	}
	s.flush(t)
	requireOrder(t, "doc untouched by refused batches", s.childIDs(t, doc), ps)
}

// checkBatchInsertSharedAnchor: entries that share an anchor are each
// placed right at it when applied, in order: before a nextID they keep
// their order; after a previousID, and first in a parentID, the later
// entry lands before the earlier one (block.insert's blocks[] sends those
// last first to keep the order the call gave).
func checkBatchInsertSharedAnchor(t *testing.T, s *suite) {
	for _, c := range []struct {
		anchor string
		// want is the children after the batch, by index: -1, -2 the
		// first and second entry's block, 0, 1 the paragraphs.
		want []int
	}{
		{"previousID", []int{0, -2, -1, 1}},
		{"nextID", []int{0, -1, -2, 1}},
		{"parentID", []int{-2, -1, 0, 1}},
	} {
		doc, ps := s.docWithParas(t, "batchshared-"+randWord(6), "a", "b")
		id := map[string]string{"previousID": ps[0], "nextID": ps[1], "parentID": doc}[c.anchor]
		ops := s.batchCall(t, "/api/block/batchInsertBlock", []map[string]string{
			{c.anchor: id, "dataType": "markdown", "data": "first"},
			{c.anchor: id, "dataType": "markdown", "data": "second"},
		})
		var want []string
		for _, i := range c.want {
			switch i {
			case -1:
				want = append(want, ops[0].ID)
			case -2:
				want = append(want, ops[1].ID)
			default:
				want = append(want, ps[i])
			}
		}
		requireOrder(t, "two entries sharing "+c.anchor, s.childIDs(t, doc), want)
	}
}
