package tools

import (
	"context"
	"reflect"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

func TestNormalizers(t *testing.T) {
	same := []struct{ name, a, b string }{
		{"kramdown attribute order and timestamps", `p{: id="x" updated="20260101000000" custom-a="1"}`, `p{: custom-a="1" id="x" updated="20270101000000"}`},
		{"kramdown created dropped", `{: created="1" id="x"}`, `{: id="x"}`},
	}
	for _, tt := range same {
		if normalizeKramdown(tt.a) != normalizeKramdown(tt.b) {
			t.Errorf("%s: %q vs %q", tt.name, normalizeKramdown(tt.a), normalizeKramdown(tt.b))
		}
	}
	domSame := [][2]string{
		{`<div data-node-id="x" updated="1" class="p"><span data-type="strong">b</span></div>`, `<div class="p" data-node-id="x" updated="2"><span data-type="strong">b</span></div>`},
	}
	for _, p := range domSame {
		if normalizeDOM(p[0]) != normalizeDOM(p[1]) {
			t.Errorf("DOM %q vs %q", normalizeDOM(p[0]), normalizeDOM(p[1]))
		}
	}
	domDiff := [][2]string{
		{`<div><span data-type="strong">b</span></div>`, `<div><span data-type="em">b</span></div>`},
		{`<span data-type="block-ref" data-subtype="s" data-id="x">t</span>`, `<span data-type="block-ref" data-subtype="d" data-id="x">t</span>`},
		{`<div>text</div>`, `<div>text!</div>`},
	}
	for _, p := range domDiff {
		if normalizeDOM(p[0]) == normalizeDOM(p[1]) {
			t.Errorf("DOM change lost: %q vs %q", p[0], p[1])
		}
	}
	if got := normalizeAttrs(map[string]string{"id": "x", "updated": "1", "created": "2", "custom-a": "b"}); !reflect.DeepEqual(got, map[string]string{"id": "x", "custom-a": "b"}) {
		t.Errorf("attrs: %v", got)
	}
}

func TestReadBlockState(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	env := &Env{Kernel: f.c}
	id := f.blocks[1]
	s1, err := readBlockState(ctx, env, id)
	if err != nil || s1.Missing || s1.Kramdown == "" || s1.DOM == "" || s1.Attrs["id"] != id {
		t.Fatalf("state: %+v %v", s1, err)
	}
	s2, _ := readBlockState(ctx, env, id)
	if !reflect.DeepEqual(s1, s2) {
		t.Fatal("two reads of an unchanged block differ")
	}
	if err := f.c.SetBlockAttrs(ctx, id, map[string]string{"custom-k": "v"}); err != nil {
		t.Fatal(err)
	}
	s3, _ := readBlockState(ctx, env, id)
	if reflect.DeepEqual(s2, s3) {
		t.Fatal("attribute drift must change the state")
	}
	if _, err := f.c.UpdateBlock(ctx, id, "markdown", "alpha **paragraph**"); err != nil {
		t.Fatal(err)
	}
	s4, _ := readBlockState(ctx, env, id)
	if reflect.DeepEqual(s3, s4) {
		t.Fatal("an inline change must change the state")
	}
	gone, err := readBlockState(ctx, env, "20200101000000-aaaaaaa")
	if err != nil || !gone.Missing {
		t.Fatalf("missing block: %+v %v", gone, err)
	}
	bad, _ := siyuan.New(siyuan.Config{BaseURL: "http://127.0.0.1:1", ReadAttempts: 1})
	if _, err := readBlockState(ctx, &Env{Kernel: bad}, id); err == nil {
		t.Fatal("an unreachable kernel must fail the state read")
	}
	many, err := readBlockStates(ctx, env, []string{f.blocks[2], f.blocks[0], f.blocks[2]})
	if err != nil || len(many) != 2 || many[0].ID > many[1].ID {
		t.Fatalf("states: %v %v", many, err)
	}
}

func TestUpdateKeepingAttrs(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	id := f.blocks[1]
	if err := f.c.SetBlockAttrs(ctx, id, map[string]string{"custom-tag": `a "quoted" value`, "name": "para", "bookmark": "★"}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, dataType, data string
		writes               int
	}{
		{"single markdown block: one write", "markdown", "rewritten with **bold**", 1},
		{"several blocks: attributes restored by a second write", "markdown", "first\n\nsecond", 2},
		{"dom: second write", "dom", `<div data-node-id="` + id + `" data-type="NodeParagraph" class="p"><div contenteditable="true" spellcheck="false">from dom</div><div class="protyle-attr" contenteditable="false"></div></div>`, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, err := f.c.GetBlockAttrs(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			writes, err := updateKeepingAttrs(ctx, f.c, id, tt.dataType, tt.data, before)
			if err != nil || writes != tt.writes {
				t.Fatalf("writes=%d err=%v, want %d", writes, err, tt.writes)
			}
			after, _ := f.c.GetBlockAttrs(ctx, id)
			for _, k := range []string{"custom-tag", "name", "bookmark"} {
				if after[k] != before[k] {
					t.Errorf("attribute %s = %q, want %q", k, after[k], before[k])
				}
			}
		})
	}
}
