package fs

import (
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/kernelview"
)

// Tool returns the fs tool.
func Tool() *tools.Tool {
	pathParam := tools.Param{Name: "path", Type: tools.String, Required: true,
		Description: "a human path /<notebook name>/<title>/<child title>; / is the list of notebooks"}
	return &tools.Tool{
		Name:  "fs",
		Title: "Files by path",
		Description: "SiYuan documents as Markdown files addressed by human paths /<notebook>/<title>/<child>: " +
			"list, read in windows of whole blocks, create or overwrite, remove, move or rename, and set the manual order of children. " +
			"Writes are strict: call with validateOnly:true first, then repeat with the requestId (and for guarded actions the credential) it returns.",
		Actions: []*tools.Action{
			tools.Read[lsArgs]{
				Name: "ls", Summary: "the direct children of a path: notebooks under /, documents under a notebook or document",
				Example: map[string]any{"path": "/"},
				Params:  append([]tools.Param{pathParam}, tools.PageParams()...),
				Run:     ls,
			}.Action(),
			tools.Read[readArgs]{
				Name: "read", Summary: "a document as editable Markdown, in windows of whole top-level blocks",
				Example: map[string]any{"path": "/Research/Reading list"},
				Params:  append([]tools.Param{pathParam}, kernelview.WindowParams()...),
				Run:     readFile,
			}.Action(),
			write.Action(), rm.Action(), mv.Action(), reorder.Action(),
		},
	}
}

// sortedTargets are the paths a call touches, as its lease scope.
func sortedTargets(paths ...string) []string { return kernelview.SortedUnique(paths) }
