package main

import (
	"context"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// TestStateHashIgnoresHiddenReferences: SiYuan marks a referenced block
// with how many blocks reference it, over every notebook (a refcount
// attribute, which its editor saves into the block's attributes, and a
// count in the block's attribute bar). The agent preflights writes of a
// block in its notebook; the person then references that block from a
// hidden notebook and their editor saves it again, same text, with the
// new count. The commits go through: the hash the agent holds does not
// tell it that a hidden notebook references the block.
func TestStateHashIgnoresHiddenReferences(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	k := startKernel(t, t.TempDir())
	s := startServeWith(t, "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", t.TempDir())
	a := connect(t, s.url, "2026-07-28")
	c := kernelClient(t, k.url, "tok")
	open, err := c.CreateNotebook(ctx, "Open")
	if err != nil {
		t.Fatal(err)
	}
	vault, err := c.CreateNotebook(ctx, "Vault")
	if err != nil {
		t.Fatal(err)
	}
	odoc, err := c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: open.ID, Path: "/Plan", Markdown: "target text\n\nsecond\n"})
	if err != nil {
		t.Fatal(err)
	}
	kids, err := c.GetChildBlocks(ctx, odoc)
	if err != nil {
		t.Fatal(err)
	}
	x, y := kids[0].ID, kids[1].ID
	// What SiYuan's editor sends when the person edits a block it shows
	// with n references.
	editorSave := func(id, text string, n string) {
		t.Helper()
		dom := `<div data-node-id="` + id + `" data-type="NodeParagraph" class="p" refcount="` + n + `"><div contenteditable="true" spellcheck="false">` + text +
			`</div><div class="protyle-attr" contenteditable="false"><div class="protyle-attr--refcount popover__block">` + n + "</div>\u200b</div></div>"
		if _, err := c.UpdateBlock(ctx, id, "dom", dom); err != nil {
			t.Fatal(err)
		}
		if err := c.FlushTransaction(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: open.ID, Path: "/Refs", Markdown: "see ((" + x + " 'x')) and ((" + y + " 'y'))\n"}); err != nil {
		t.Fatal(err)
	}
	editorSave(x, "target text", "1")
	editorSave(y, "second", "1")
	s.config(t, "permission", open.ID, "rwd")
	s.config(t, "permission", vault.ID, "none")

	upd := map[string]any{"action": "update", "id": x, "data": "target text, edited"}
	attrs := map[string]any{"action": "set_attrs", "id": y, "attrs": map[string]any{"custom-status": "done"}}
	preU := a.ok("block", with(upd, "validateOnly", true))
	preA := a.ok("block", with(attrs, "validateOnly", true))

	// The person references both blocks from the hidden notebook; their
	// editor saves each again with the count it now shows.
	if _, err := c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: vault.ID, Path: "/Secret", Markdown: "((" + x + " 'x')) ((" + y + " 'y'))\n"}); err != nil {
		t.Fatal(err)
	}
	editorSave(x, "target text", "2")
	editorSave(y, "second", "2")
	if got, err := c.GetBlockAttrs(ctx, x); err != nil || got["refcount"] != "2" {
		t.Fatalf("the kernel does not keep the editor's count in the attributes: %v %v", got, err)
	}

	for _, w := range []struct{ args, pre map[string]any }{{upd, preU}, {attrs, preA}} {
		res, isErr := a.call("block", commitOf(w.args, w.pre))
		if isErr || res["status"] != "committed" {
			t.Errorf("%s after a reference from the hidden notebook: %v", w.args["action"], res)
		}
	}
	if kd := a.ok("block", map[string]any{"action": "get_kramdown", "id": x}); !strings.Contains(kd["kramdown"].(string), "edited") {
		t.Fatalf("the update did not land: %v", kd)
	}
}
