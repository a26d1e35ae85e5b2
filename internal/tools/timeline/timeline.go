// Package timeline is the timeline tool: named checkpoints of a document
// (or of the whole workspace) on SiYuan's data repository, a block-by-block
// comparison of a document with one, and taking back the whole document or
// one block. A checkpoint ("node") is a tag on a repository snapshot, named
// and indexed on the document as upstream Sisyphus names and indexes them
// (names.go), so nodes made by either are listed and usable by the other.
// The comparison (diff.go, compare.go) reads the node's copy of the
// document from the repository and the document as it is now; the writes
// are strict: a node's creation is a staged creation (snapshot, tag,
// index), a node's deletion is guarded by the node, a document's rollback
// by the document's file, and a block's rollback by the change it takes
// back (write.go).
package timeline

import (
	"context"
	"slices"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// Tool returns the timeline tool.
func Tool() *tools.Tool {
	return &tools.Tool{
		Name:  "timeline",
		Title: "Timeline",
		Description: "Named checkpoints of a document on SiYuan's data repository: list and create them, compare a document with one block by block, " +
			"and roll back the document or one changed block. Writes are strict: call with validateOnly:true first.",
		Actions: []*tools.Action{listNodes.Action(), createNode.Action(), compareNode.Action(), deleteNode.Action(), rollbackDocument.Action(), rollbackBlock.Action()},
	}
}

// readAgain is what every write's answer tells the agent.
const readAgain = "read the document again (document.get_doc or block.get_kramdown) before writing to it: what you read before is stale"

// onDocument is the gate of a call that names a document: need on its
// notebook, nothing for a call without one (a workspace node).
func onDocument(id string, need tools.Level) []tools.Touch {
	if id == "" {
		return nil
	}
	return []tools.Touch{tools.OnBlock(id, need)}
}

// checkTagOf refuses a tag that is no timeline tag, an older tag without
// a document (upstream's timeline panel manages those), and a document
// tag named with another document: before anything is read.
func checkTagOf(tag, documentID string, documentRequired bool) error {
	switch {
	case !isTimelineTag(tag):
		return failure.Invalid("tag %q is not a timeline node's (they begin with %s_)", tag, tagPrefix)
	case isGlobalTag(tag):
		if documentRequired && documentID == "" {
			return failure.Invalid("pass documentId: the document to compare with the workspace node")
		}
		return nil
	}
	owner := tagDocument(tag)
	if owner == "" {
		return failure.Invalid("tag %q is an older timeline tag without a document; SiYuan's timeline panel of the upstream plugin manages those", tag)
	}
	if documentID != owner {
		e := failure.New(failure.TimelineTagMismatch, "tag %q belongs to document %s, not to %q", tag, owner, documentID)
		e.Action = "pass documentId " + owner + ", or a tag list_nodes gives for this document"
		return e.With("tagDocumentId", owner).Attempted(false)
	}
	return nil
}

// node is a node as listed.
type node struct {
	Name       string `json:"name"`
	Created    int64  `json:"created"`
	SnapshotID string `json:"snapshotId"`
	Tag        string `json:"tag,omitempty"`
	Scope      string `json:"scope"`
	Source     string `json:"source,omitempty"`
	// Tagged is false for an index entry whose tag is gone (its snapshot
	// may remain).
	Tagged bool `json:"tagged"`
}

// listNodesOf merges a document's index with the tags of its nodes (a tag
// not indexed is listed too) and the workspace nodes, newest first.
func listNodesOf(scope, documentID string, index []nodeRecord, tagged []snapshot) []node {
	tags := map[string]snapshot{}
	for _, s := range tagged {
		if isTimelineTag(s.Tag) {
			tags[s.Tag] = s
		}
	}
	var out []node
	if scope != "global" {
		seen := map[string]bool{}
		for _, r := range index {
			if r.Scope != "document" {
				continue
			}
			s, ok := tags[r.Tag]
			out = append(out, node{Name: r.Name, Created: r.Created, SnapshotID: r.SnapshotID, Tag: r.Tag, Scope: "document", Source: r.Source, Tagged: ok && s.ID == r.SnapshotID})
			seen[r.SnapshotID+"\x00"+r.Tag] = true
		}
		for _, s := range tagged {
			if tagDocument(s.Tag) != documentID || seen[s.ID+"\x00"+s.Tag] {
				continue
			}
			seen[s.ID+"\x00"+s.Tag] = true
			out = append(out, node{Name: tagLabel(s.Tag), Created: s.Created, SnapshotID: s.ID, Tag: s.Tag, Scope: "document", Tagged: true})
		}
	}
	if scope != "document" {
		for _, s := range tagged {
			if isGlobalTag(s.Tag) {
				out = append(out, node{Name: tagLabel(s.Tag), Created: s.Created, SnapshotID: s.ID, Tag: s.Tag, Scope: "global", Tagged: true})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b node) int {
		switch {
		case a.Created > b.Created:
			return -1
		case a.Created < b.Created:
			return 1
		}
		return 0
	})
	return out
}

type listArgs struct {
	Scope      string `arg:"scope" help:"document: the document's nodes; global: the workspace's; all: both" enum:"global,document,all" required:""`
	DocumentID string `arg:"documentId" help:"the document (for document and all)" id:""`
	Page       int    `arg:"page" help:"1-based page" default:"1" min:"1"`
	PageSize   int    `arg:"pageSize" help:"nodes per page" default:"50" min:"1" max:"100"`
}

func (a *listArgs) check() error {
	if a.Scope != "global" && a.DocumentID == "" {
		return failure.Invalid("pass documentId for scope %q", a.Scope)
	}
	return nil
}

var listNodes = tools.Read[listArgs]{
	Name: "list_nodes", Summary: "a document's nodes (its index and its tags), the workspace's, or both; newest first, paged",
	Example:  map[string]any{"scope": "document", "documentId": "20260812120000-abcdefg"},
	Validate: (*listArgs).check,
	Scope:    tools.Scope[listArgs]{Touches: func(a listArgs) []tools.Touch { return onDocument(a.docOf(), tools.LevelRead) }},
	Run: func(ctx context.Context, env *tools.Env, a listArgs) (any, error) {
		var index []nodeRecord
		if a.Scope != "global" {
			if _, err := describeDoc(ctx, env, a.DocumentID); err != nil {
				return nil, err
			}
			attrs, err := env.Kernel.GetBlockAttrs(ctx, a.DocumentID)
			if err != nil {
				return nil, err
			}
			index, _ = parseIndex(attrs[indexAttr], false)
		}
		tagged, err := tagSnapshots(ctx, env)
		if err != nil {
			return nil, err
		}
		all := listNodesOf(a.Scope, a.DocumentID, index, tagged)
		items, page := pageOf(all, a.Page, a.PageSize)
		out := map[string]any{"nodes": items}
		for k, v := range page {
			out[k] = v
		}
		return out, nil
	},
}

// docOf is the document a listing names ("" for the workspace's nodes).
func (a listArgs) docOf() string {
	if a.Scope == "global" {
		return ""
	}
	return a.DocumentID
}

// pageOf cuts one page of items and says where it is.
func pageOf[T any](all []T, page, size int) ([]T, map[string]any) {
	total := len(all)
	pages := (total + size - 1) / size
	start := min((page-1)*size, total)
	end := min(start+size, total)
	items := all[start:end]
	if items == nil {
		items = []T{}
	}
	return items, map[string]any{"page": page, "pageSize": size, "total": total, "pageCount": pages, "hasMore": page < pages}
}
