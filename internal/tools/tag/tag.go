// Package tag is the tag tool: list the workspace's tags (or search them
// by keyword), rename a tag everywhere, and remove it, with upstream
// Sisyphus's action names and arguments. Tags are global: a rename or a
// removal changes blocks in every notebook that uses the tag, so the gate
// asks for each of those notebooks, and the write is guarded by the
// manifest of every block that carries the tag (state.go). SiYuan cannot
// rename a tag in some notebooks only, so while a notebook is hidden from
// agents both are refused whatever the tag: a refusal that depended on
// where the tag is used would tell an agent what a hidden notebook holds.
package tag

import (
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// Tool returns the tag tool.
func Tool() *tools.Tool {
	return &tools.Tool{
		Name:  "tag",
		Title: "Tags",
		Description: "SiYuan's tags (#label# in text, and documents' tags attribute; a/b is nested under a): list them as a tree " +
			"with counts, or search them by keyword; rename a tag (its nested tags follow) or remove it from every block. " +
			"Writes are strict: call with validateOnly:true first, then repeat with the requestId and expectedManifestHash it returns.",
		Actions: []*tools.Action{list.Action(), rename.Action(), remove.Action()},
	}
}
