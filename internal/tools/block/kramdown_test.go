package block

import (
	"context"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

func TestUpdateKeepingAttrs(t *testing.T) {
	f := tooltest.New(t, testTools)
	ctx := context.Background()
	id := f.Blocks[1]
	if err := f.C.SetBlockAttrs(ctx, id, map[string]string{"custom-tag": `a "quoted" value`, "name": "para", "bookmark": "★"}); err != nil {
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
			before, err := f.C.GetBlockAttrs(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			single, _ := shapeOf(tt.dataType, tt.data)
			writes, _, err := updateKeeping(ctx, f.C, id, tt.dataType, tt.data, single, before)
			if err != nil || writes != tt.writes {
				t.Fatalf("writes=%d err=%v, want %d", writes, err, tt.writes)
			}
			after, _ := f.C.GetBlockAttrs(ctx, id)
			for _, k := range []string{"custom-tag", "name", "bookmark"} {
				if after[k] != before[k] {
					t.Errorf("attribute %s = %q, want %q", k, after[k], before[k])
				}
			}
		})
	}
}

func TestShapeOf(t *testing.T) {
	tests := []struct {
		name, dataType, data string
		single               bool
		blocks               int
	}{
		{"one paragraph", "markdown", "rewritten with **bold**", true, 1},
		{"a heading", "markdown", "## Title", true, 1},
		{"a list is one block", "markdown", "- one\n- two", true, 1},
		{"two paragraphs", "markdown", "first\n\nsecond", false, 2},
		{"a block with its own IAL", "markdown", "text\n{: style=\"color: red\"}", false, 1},
		{"nothing", "markdown", "", false, 0},
		{"dom is the kernel's to read", "dom", `<div data-type="NodeParagraph">x</div>`, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			single, blocks := shapeOf(tt.dataType, tt.data)
			if single != tt.single || blocks != tt.blocks {
				t.Fatalf("shapeOf = %v, %d; want %v, %d", single, blocks, tt.single, tt.blocks)
			}
		})
	}
}
