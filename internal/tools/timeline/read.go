package timeline

import (
	"context"
	"fmt"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

type compareArgs struct {
	DocumentID       string `arg:"documentId" help:"the document to compare" id:"" required:""`
	Tag              string `arg:"tag" help:"the node's tag (from create_node or list_nodes)" required:"" maxLen:"512"`
	Page             int    `arg:"page" help:"1-based page of changes" default:"1" min:"1"`
	PageSize         int    `arg:"pageSize" help:"changes per page" default:"20" min:"1" max:"100"`
	IncludeUnchanged bool   `arg:"includeUnchanged" help:"list unchanged blocks too"`
	Cursor           string `arg:"cursor" help:"nextCursor of the previous page (instead of page); refused once the comparison changed" maxLen:"512"`
}

func (a *compareArgs) check() error { return checkTagOf(a.Tag, a.DocumentID, true) }

var compareNode = tools.Read[compareArgs]{
	Name: "compare_node", Summary: "compare a document as it is now with a node, block by block: each changed block with its changeKey, status, old and current Markdown, and whether it can be rolled back; paged",
	Example:  map[string]any{"documentId": "20260812120000-abcdefg", "tag": "sisyphustimeline_20260812120000-abcdefg_Beforerewrite"},
	Validate: (*compareArgs).check,
	Scope:    tools.Scope[compareArgs]{Touches: func(a compareArgs) []tools.Touch { return onDocument(a.DocumentID, tools.LevelRead) }},
	// It may take a repository snapshot (compare.go): not before the
	// gate has decided.
	SideEffects: true,
	Run: func(ctx context.Context, env *tools.Env, a compareArgs) (any, error) {
		doc, err := describeDoc(ctx, env, a.DocumentID)
		if err != nil {
			return nil, err
		}
		n, err := findNode(ctx, env, a.Tag)
		if err != nil {
			return nil, err
		}
		c, err := compareDoc(ctx, env, doc, n)
		if err != nil {
			return nil, err
		}
		return answerOf(a, c)
	},
}

// answerOf is a comparison's answer: one page of its changes.
func answerOf(a compareArgs, c comparison) (map[string]any, error) {
	list := c.Changes
	if !a.IncludeUnchanged {
		list = changedOnly(list)
	}
	digest := digestOf(c.Changes)
	page := a.Page
	if a.Cursor != "" {
		cur, err := decodeCursor(a.Cursor)
		if err != nil {
			return nil, failure.Invalid("argument \"cursor\" is not a cursor this action gave (%v): pass nextCursor unchanged, or start again without cursor", err)
		}
		switch {
		case cur.Tag != a.Tag || cur.Doc != a.DocumentID || cur.All != a.IncludeUnchanged || cur.Size != a.PageSize:
			return nil, failure.Invalid("the cursor belongs to another comparison (another documentId, tag, includeUnchanged or pageSize): pass the same arguments as the page that gave it")
		case cur.Digest != digest:
			return nil, failure.Invalid("the document or the node changed since the cursor was given: start again without cursor")
		}
		page = cur.Page
	}
	items, meta := pageOf(list, page, a.PageSize)
	st := statsOf(c.Changes)
	out := map[string]any{
		"node":         map[string]any{"name": tagLabel(c.Node.Tag), "memo": c.Node.Memo, "created": c.Node.Created, "snapshotId": c.Node.ID, "tag": c.Node.Tag, "scope": scopeOf(c.Node.Tag)},
		"documentId":   c.Doc.ID,
		"noChanges":    st.ChangedBlocks == 0,
		"stats":        st,
		"changes":      items,
		"comparedWith": "the document as it is now (its file), with the node's copy of it",
	}
	if !c.InNode() {
		out["comparedWith"] = "the document as it is now (its file); it did not exist in the node, so every block is added"
	}
	for k, v := range meta {
		out[k] = v
	}
	if c.SnapshotTaken != "" {
		out["snapshotTaken"] = c.SnapshotTaken
	}
	if hasMore, _ := meta["hasMore"].(bool); hasMore {
		out["nextCursor"] = encodeCursor(compareCursor{Tag: a.Tag, Doc: a.DocumentID, All: a.IncludeUnchanged, Size: a.PageSize, Page: page + 1, Digest: digest})
	}
	return out, nil
}

func scopeOf(tag string) string {
	if isGlobalTag(tag) {
		return "global"
	}
	return "document"
}

// compareCursor is where a paged comparison goes on, and which
// comparison it pages.
type compareCursor struct {
	Tag    string `json:"t"`
	Doc    string `json:"d"`
	All    bool   `json:"u,omitempty"`
	Size   int    `json:"s"`
	Page   int    `json:"p"`
	Digest string `json:"h"`
}

// A cursor's version and purpose (tools.EncodeCursor); the page checks
// the payload against the comparison.
const (
	cursorVersion = "c1"
	cursorPurpose = "timeline compare"
)

func encodeCursor(c compareCursor) string { return tools.EncodeCursor(cursorVersion, cursorPurpose, c) }

func decodeCursor(s string) (compareCursor, error) {
	var c compareCursor
	if err := tools.DecodeCursor(s, cursorVersion, cursorPurpose, &c); err != nil {
		return c, err
	}
	if c.Page < 1 || c.Size < 1 {
		return c, fmt.Errorf("its payload is not a cursor")
	}
	return c, nil
}
