package kernelview

import (
	"context"
	"net/http"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

func TestNormalizers(t *testing.T) {
	same := []struct{ name, a, b string }{
		{"kramdown attribute order and timestamps", `p{: id="x" updated="20260101000000" custom-a="1"}`, `p{: custom-a="1" id="x" updated="20270101000000"}`},
		{"kramdown created dropped", `{: created="1" id="x"}`, `{: id="x"}`},
		{"kramdown reference count dropped", `p{: id="x" refcount="3"}`, `p{: id="x" refcount="4"}`},
	}
	for _, tt := range same {
		if NormalizeKramdown(tt.a) != NormalizeKramdown(tt.b) {
			t.Errorf("%s: %q vs %q", tt.name, NormalizeKramdown(tt.a), NormalizeKramdown(tt.b))
		}
	}
	domSame := [][2]string{
		{`<div data-node-id="x" updated="1" class="p"><span data-type="strong">b</span></div>`, `<div class="p" data-node-id="x" updated="2"><span data-type="strong">b</span></div>`},
		// SiYuan counts references to a block over every notebook: a
		// reference from a hidden notebook must not move a hash.
		{`<div data-node-id="x" data-type="NodeParagraph" class="p" refcount="1"><div contenteditable="true">t</div><div class="protyle-attr" contenteditable="false"><div class="protyle-attr--refcount popover__block">1</div>` + "\u200b" + `</div></div>`,
			`<div data-node-id="x" data-type="NodeParagraph" class="p" refcount="2"><div contenteditable="true">t</div><div class="protyle-attr" contenteditable="false"><div class="protyle-attr--refcount popover__block">2</div>` + "\u200b" + `</div></div>`},
		{`<div data-node-id="x" class="p" refcount="2"><div contenteditable="true">t</div><div class="protyle-attr" contenteditable="false"><div class="protyle-attr--refcount popover__block">2</div></div></div>`,
			`<div data-node-id="x" class="p"><div contenteditable="true">t</div><div class="protyle-attr" contenteditable="false"></div></div>`},
	}
	for _, p := range domSame {
		if NormalizeDOM(p[0]) != NormalizeDOM(p[1]) {
			t.Errorf("DOM %q vs %q", NormalizeDOM(p[0]), NormalizeDOM(p[1]))
		}
	}
	domDiff := [][2]string{
		{`<div><span data-type="strong">b</span></div>`, `<div><span data-type="em">b</span></div>`},
		{`<span data-type="block-ref" data-subtype="s" data-id="x">t</span>`, `<span data-type="block-ref" data-subtype="d" data-id="x">t</span>`},
		{`<div>text</div>`, `<div>text!</div>`},
	}
	for _, p := range domDiff {
		if NormalizeDOM(p[0]) == NormalizeDOM(p[1]) {
			t.Errorf("DOM change lost: %q vs %q", p[0], p[1])
		}
	}
	if got := NormalizeAttrs(map[string]string{"id": "x", "updated": "1", "created": "2", "refcount": "5", "custom-a": "b"}); !reflect.DeepEqual(got, map[string]string{"id": "x", "custom-a": "b"}) {
		t.Errorf("attrs: %v", got)
	}
}

func TestReadBlockState(t *testing.T) {
	f := tooltest.New(t, func() []*tools.Tool { return nil })
	ctx := context.Background()
	env := &tools.Env{Kernel: f.C}
	id := f.Blocks[1]
	s1, err := ReadBlockState(ctx, env, id)
	if err != nil || s1.Missing || s1.Kramdown == "" || s1.DOM == "" || s1.Attrs["id"] != id {
		t.Fatalf("state: %+v %v", s1, err)
	}
	s2, _ := ReadBlockState(ctx, env, id)
	if !reflect.DeepEqual(s1, s2) {
		t.Fatal("two reads of an unchanged block differ")
	}
	if err := f.C.SetBlockAttrs(ctx, id, map[string]string{"custom-k": "v"}); err != nil {
		t.Fatal(err)
	}
	s3, _ := ReadBlockState(ctx, env, id)
	if reflect.DeepEqual(s2, s3) {
		t.Fatal("attribute drift must change the state")
	}
	if _, err := f.C.UpdateBlock(ctx, id, "markdown", "alpha **paragraph**"); err != nil {
		t.Fatal(err)
	}
	s4, _ := ReadBlockState(ctx, env, id)
	if reflect.DeepEqual(s3, s4) {
		t.Fatal("an inline change must change the state")
	}
	gone, err := ReadBlockState(ctx, env, "20200101000000-aaaaaaa")
	if err != nil || !gone.Missing {
		t.Fatalf("missing block: %+v %v", gone, err)
	}
	bad, _ := siyuan.New(siyuan.Config{BaseURL: "http://127.0.0.1:1", ReadAttempts: 1})
	if _, err := ReadBlockState(ctx, &tools.Env{Kernel: bad}, id); err == nil {
		t.Fatal("an unreachable kernel must fail the state read")
	}
	many, err := ReadBlockStates(ctx, env, []string{f.Blocks[2], f.Blocks[0], f.Blocks[2]})
	if err != nil || len(many) != 2 || many[0].ID > many[1].ID {
		t.Fatalf("states: %v %v", many, err)
	}
}

// TestBatchStatesEqualSingle: several blocks are read with the batch reads,
// and each state is the one a read of that block alone gives, for every
// kind of block, a document, and a block that does not exist.
func TestBatchStatesEqualSingle(t *testing.T) {
	f := tooltest.New(t, func() []*tools.Tool { return nil })
	ctx := context.Background()
	env := &tools.Env{Kernel: f.C}
	doc := f.MkDoc(t, f.NB, "/Kinds", "# Heading\n\nplain **bold**\n\n- one\n- two\n\n> quoted\n\n```go\ncode\n```\n\n| a | b |\n| - | - |\n| 1 | 2 |\n")
	// Every block of the document, nested ones too (the batch cuts leaf
	// blocks out of the document's kramdown), a document, another
	// document's block and a block that does not exist.
	dom, err := f.C.GetBlockDOM(ctx, doc)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range regexp.MustCompile(`data-node-id="([^"]+)"`).FindAllStringSubmatch(dom.DOM, -1) {
		ids = append(ids, m[1])
	}
	if len(ids) < 10 {
		t.Fatalf("the document has %d blocks: %s", len(ids), dom.DOM)
	}
	ids = append(ids, doc, f.Blocks[0], "20200101000000-aaaaaaa")
	if err := f.C.SetBlockAttrs(ctx, f.Blocks[0], map[string]string{"custom-k": "v", "name": "n"}); err != nil {
		t.Fatal(err)
	}
	batch, err := ReadBlockStates(ctx, env, ids)
	if err != nil {
		t.Fatal(err)
	}
	for _, got := range batch {
		want, err := ReadBlockState(ctx, env, got.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("batch state of %s\n got %+v\nwant %+v", got.ID, got, want)
		}
	}
	for _, st := range batch {
		if st.ID == "20200101000000-aaaaaaa" && !st.Missing {
			t.Fatalf("a missing block in a batch: %+v", st)
		}
	}
	// A change to a nested block shows in the next batch read.
	var nested string
	for _, st := range batch {
		if strings.HasPrefix(st.Kramdown, "two\n") {
			nested = st.ID
		}
	}
	if nested == "" {
		t.Fatal("no nested list paragraph in the batch")
	}
	if _, err := f.C.UpdateBlock(ctx, nested, "markdown", "two changed"); err != nil {
		t.Fatal(err)
	}
	again, err := ReadBlockContents(ctx, env, ids)
	if err != nil {
		t.Fatal(err)
	}
	for i, st := range again {
		// The block and the containers holding it (list item, list,
		// document) change; nothing else does.
		holds := strings.Contains(st.Kramdown, "two changed")
		if changed := st.Kramdown != batch[i].Kramdown; changed != holds || st.ID == nested && !changed {
			t.Errorf("block %s: kramdown changed %v after an update of %s: %q -> %q", st.ID, changed, nested, batch[i].Kramdown, st.Kramdown)
		}
	}
}

// TestBatchStatesFromTheIndexedDocument: the document a batch read cuts
// its blocks from is the one the SQL index names (no block-tree lookup,
// which SiYuan answers by loading the document), and a stale index, after
// a block moved to another document, only costs the moved block a read of
// its own: every state is the kernel's current one.
func TestBatchStatesFromTheIndexedDocument(t *testing.T) {
	f := tooltest.New(t, func() []*tools.Tool { return nil })
	ctx := context.Background()
	env := &tools.Env{Kernel: f.C}
	a := f.MkDoc(t, f.NB, "/A", "a one\n\na two\n\na three")
	b := f.MkDoc(t, f.NB, "/B", "b one")
	as := f.Kids(t, a)
	sort.Strings(as)
	if err := f.C.FlushTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	var lookups atomic.Int32
	f.SetHook(func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/api/filetree/getPathByID" {
			lookups.Add(1)
		}
		return false
	})
	same := func(ids []string) {
		t.Helper()
		batch, err := ReadBlockContents(ctx, env, ids)
		if err != nil {
			t.Fatal(err)
		}
		for _, got := range batch {
			want, err := ReadBlockContent(ctx, env, got.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("batch state of %s\n got %+v\nwant %+v", got.ID, got, want)
			}
		}
	}
	same(as)
	if n := lookups.Load(); n != 0 {
		t.Errorf("indexed blocks: %d block-tree lookups, want none", n)
	}
	// The first block moves to B; the index still places it in A.
	if err := f.C.MoveBlock(ctx, as[0], f.Kids(t, b)[0], ""); err != nil {
		t.Fatal(err)
	}
	if rows, err := f.C.QuerySQL(ctx, "SELECT root_id FROM blocks WHERE id = '"+as[0]+"'"); err != nil || len(rows) != 1 || rows[0]["root_id"] != a {
		t.Fatalf("the index should still place the moved block in A: %v %v", rows, err)
	}
	same(as[:2])
	same(append([]string{as[0]}, f.Kids(t, b)...))
}
