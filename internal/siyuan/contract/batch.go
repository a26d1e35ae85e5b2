package contract

import (
	"encoding/json"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// The checks of /api/block/batchUpdateBlock, the one-transaction form of
// updateBlock a strict items[] update uses.

func checkBatchUpdate(t *testing.T, s *suite) {
	doc, ps := s.docWithParas(t, "batch-"+randWord(6), "one", "two", "three")
	txs, err := s.c.BatchUpdateBlock(t.Context(), []siyuan.BlockUpdate{
		{ID: ps[0], DataType: "markdown", Data: "ONE **bold**"},
		{ID: ps[2], DataType: "markdown", Data: "first"},
		{ID: ps[2], DataType: "markdown", Data: "THREE"},
	})
	must(t, "BatchUpdateBlock", err)
	if len(txs) != 1 || len(txs[0].DoOperations) != 3 {
		t.Fatalf("BatchUpdateBlock transactions = %+v, want one transaction of three operations", txs)
	}
	for i, want := range []string{ps[0], ps[2], ps[2]} {
		if op := txs[0].DoOperations[i]; op.Action != "update" || op.ID != want {
			t.Fatalf("operation %d = %+v, want update of %s", i, op, want)
		}
	}
	for id, want := range map[string]string{ps[0]: "ONE **bold**\n{: id=\"P\" updated=\"TS\"}", ps[1]: "two\n{: id=\"P\" updated=\"TS\"}", ps[2]: "THREE\n{: id=\"P\" updated=\"TS\"}"} {
		if got := normKramdown(s.kramdown(t, id), map[string]string{id: "P"}); got != want {
			t.Fatalf("kramdown of %s after the batch\n got %q\nwant %q (a later entry for a block wins)", id, got, want)
		}
	}
	requireOrder(t, "a batch update keeps ids and places", s.childIDs(t, doc), ps)
}

func checkBatchUpdateUnknown(t *testing.T, s *suite) {
	_, ps := s.docWithParas(t, "batchunknown-"+randWord(6), "kept")
	_, err := s.c.BatchUpdateBlock(t.Context(), []siyuan.BlockUpdate{
		{ID: ps[0], DataType: "markdown", Data: "changed"},
		{ID: unknownID, DataType: "markdown", Data: "x"},
	})
	wantAPIError(t, "BatchUpdateBlock with an unknown id", err, -1, "get block failed: tree not found")
	if got := normKramdown(s.kramdown(t, ps[0]), map[string]string{ps[0]: "P"}); got != "kept\n{: id=\"P\" updated=\"TS\"}" {
		t.Fatalf("a failed batch changed the first block: %q", got)
	}
}

func checkBatchUpdateArgs(t *testing.T, s *suite) {
	_, ps := s.docWithParas(t, "batchargs-"+randWord(6), "x")
	for _, c := range []struct{ what, body, msg string }{
		{"no blocks", `{}`, "Field [blocks] is required"},
		{"null blocks", `{"blocks":null}`, "Field [blocks] is required"},
		{"empty blocks", `{"blocks":[]}`, "Field [blocks] must not be empty"},
		{"blocks not an array", `{"blocks":"x"}`, "Field [blocks] should be of type [Array]"},
		{"a non-id", `{"blocks":[{"id":"nope","dataType":"markdown","data":"x"}]}`, "invalid ID argument"},
		{"an unknown id before a good one", `{"blocks":[{"id":"` + unknownID + `","dataType":"markdown","data":"x"},{"id":"` + ps[0] + `","dataType":"markdown","data":"y"}]}`, "get block failed: tree not found"},
	} {
		wantEnvelope(t, "batchUpdateBlock with "+c.what, s.rawJSON(t, "/api/block/batchUpdateBlock", c.body), http.StatusOK, -1, c.msg, 1)
	}
	if got := normKramdown(s.kramdown(t, ps[0]), map[string]string{ps[0]: "P"}); got != "x\n{: id=\"P\" updated=\"TS\"}" {
		t.Fatalf("a refused batch changed the block: %q", got)
	}
}

func checkUpdateUnknown(t *testing.T, s *suite) {
	_, err := s.c.UpdateBlock(t.Context(), unknownID, "markdown", "x")
	wantAPIError(t, "UpdateBlock of an unknown id", err, -1, "get block failed: tree not found")
}

// checkBatchReadsEqualSingle: getBlockKramdowns, getBlockDOMs and
// batchGetBlockAttrs answer, for every kind of block and a document, what
// the single reads answer (the order of IAL and of DOM attributes aside,
// which the kernel does not keep stable); an unknown id is left out of
// each.
func checkBatchReadsEqualSingle(t *testing.T, s *suite) {
	doc := s.newDoc(t, "batchreads-"+randWord(6), "# Heading\n\nplain **bold**\n\n- one\n- two\n\n> quoted\n\n```go\ncode\n```\n\n| a | b |\n| - | - |\n| 1 | 2 |\n")
	ids := append(s.childIDs(t, doc), doc)
	all := append(slices.Clone(ids), unknownID)
	kds, err := s.c.GetBlockKramdowns(t.Context(), all)
	must(t, "GetBlockKramdowns", err)
	doms, err := s.c.GetBlockDOMs(t.Context(), all)
	must(t, "GetBlockDOMs", err)
	attrs, err := s.c.BatchGetBlockAttrs(t.Context(), all)
	must(t, "BatchGetBlockAttrs", err)
	for _, id := range ids {
		if got, want := normKramdown(kds[id], nil), normKramdown(s.kramdown(t, id), nil); got != want {
			t.Errorf("kramdown of %s: batch %q, single %q", id, got, want)
		}
		d, err := s.c.GetBlockDOM(t.Context(), id)
		must(t, "GetBlockDOM", err)
		if sortTagAttrs(doms[id]) != sortTagAttrs(d.DOM) {
			t.Errorf("DOM of %s: batch and single differ\n%q\n%q", id, doms[id], d.DOM)
		}
		if a := s.attrs(t, id); !maps.Equal(attrs[id], a) {
			t.Errorf("attributes of %s: batch %v, single %v", id, attrs[id], a)
		}
	}
	if _, ok := kds[unknownID]; ok {
		t.Errorf("getBlockKramdowns answered an unknown id: %q", kds[unknownID])
	}
	if d, ok := doms[unknownID]; ok && d != "" {
		t.Errorf("getBlockDOMs answered an unknown id: %q", d)
	}
	if a, ok := attrs[unknownID]; ok && len(a) > 0 {
		t.Errorf("batchGetBlockAttrs answered an unknown id: %v", a)
	}
}

var (
	tagRE     = regexp.MustCompile(`<([a-zA-Z][\w-]*)((?:\s+[\w:-]+(?:="[^"]*")?)*)\s*(/?)>`)
	tagAttrRE = regexp.MustCompile(`[\w:-]+(?:="[^"]*")?`)
)

// sortTagAttrs writes every tag's attributes in sorted order.
func sortTagAttrs(dom string) string {
	return tagRE.ReplaceAllStringFunc(dom, func(tag string) string {
		m := tagRE.FindStringSubmatch(tag)
		attrs := tagAttrRE.FindAllString(m[2], -1)
		sort.Strings(attrs)
		out := "<" + m[1]
		for _, a := range attrs {
			out += " " + a
		}
		return out + m[3] + ">"
	})
}

// checkBlockDOMNodeIndex: SiYuan renders a block where it lives, so a
// document's child carries data-node-index="1" (it is the first of what is
// rendered), a document's children are numbered from 1, and a nested block
// has none.
func checkBlockDOMNodeIndex(t *testing.T, s *suite) {
	doc := s.newDoc(t, "nodeindex-"+randWord(6), "# H\n\n- a\n- b\n\nlast")
	kids := s.childIDs(t, doc)
	index := regexp.MustCompile(`data-node-index="(\d+)"`)
	indexes := func(id string) []string {
		d, err := s.c.GetBlockDOM(t.Context(), id)
		must(t, "GetBlockDOM", err)
		var out []string
		for _, m := range index.FindAllStringSubmatch(d.DOM, -1) {
			out = append(out, m[1])
		}
		return out
	}
	for _, id := range kids {
		if got := indexes(id); !slices.Equal(got, []string{"1"}) {
			t.Fatalf("a document's child %s renders data-node-index %v, want [1]", id, got)
		}
	}
	if got := indexes(doc); !slices.Equal(got, []string{"1", "2", "3"}) {
		t.Fatalf("a document renders data-node-index %v, want [1 2 3]", got)
	}
	items := s.childIDs(t, kids[1])
	if got := indexes(items[1]); len(got) != 0 {
		t.Fatalf("a list item renders data-node-index %v, want none", got)
	}
}

// checkTransactionsArguments: /api/transactions binds transactions (an
// array, not empty) before reqId (a number), and stamps every transaction
// it answers with the reqId, truncated.
func checkTransactionsArguments(t *testing.T, s *suite) {
	for _, c := range []struct{ what, body, msg string }{
		{"no transactions", `{"reqId":1}`, "Field [transactions] is required"},
		{"empty transactions", `{"transactions":[],"reqId":1}`, "Field [transactions] must not be empty"},
		{"no reqId", `{"transactions":[{"doOperations":[]}]}`, "Field [reqId] is required"},
		{"a string reqId", `{"transactions":[{"doOperations":[]}],"reqId":"x"}`, "Field [reqId] should be of type [Number]"},
	} {
		wantEnvelope(t, "transactions with "+c.what, s.rawJSON(t, "/api/transactions", c.body), http.StatusOK, -1, c.msg, 1)
	}
	r := s.rawJSON(t, "/api/transactions", `{"transactions":[{"doOperations":[]},{"doOperations":[]}],"reqId":1234567.9}`)
	var env struct {
		Code int `json:"code"`
		Data []struct {
			Timestamp int64 `json:"timestamp"`
		} `json:"data"`
	}
	if json.Unmarshal(r.body, &env) != nil || env.Code != 0 || len(env.Data) != 2 || env.Data[0].Timestamp != 1234567 || env.Data[1].Timestamp != 1234567 {
		t.Fatalf("transactions answer: %s", r.body)
	}
}

// checkInsertUpdatedFromID: a new block's updated is the time of its own
// id, a pinned old id's too, and the document it goes into keeps its own.
func checkInsertUpdatedFromID(t *testing.T, s *suite) {
	doc, _ := s.docWithParas(t, "insupd-"+randWord(6), "a")
	before := s.attrs(t, doc)["updated"]
	time.Sleep(1100 * time.Millisecond) // a later second than the document's
	old := "20210101120000-" + randLower(7)
	_, err := s.c.AppendBlock(t.Context(), "markdown", "pinned\n{: id=\""+old+"\"}", doc)
	must(t, "AppendBlock", err)
	if got := s.attrs(t, old)["updated"]; got != "20210101120000" {
		t.Fatalf("a block inserted with id %s has updated %q, want its id's time", old, got)
	}
	if got := s.attrs(t, doc)["updated"]; got != before {
		t.Fatalf("the document's updated went from %q to %q on an insert", before, got)
	}
}
