package timeline

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

var (
	additive = strict.WritePolicy{Class: strict.Additive}
	guarded  = strict.WritePolicy{Class: strict.Mutation, Precondition: strict.ExpectedStateHash}
)

// ---- create_node ----

type createArgs struct {
	Name       string `arg:"name" help:"the node's name; its letters and digits (at most 48) name its tag" required:"" maxLen:"512"`
	Scope      string `arg:"scope" help:"document: a node of one document (indexed on it); global: of the workspace" enum:"global,document" required:""`
	DocumentID string `arg:"documentId" help:"the document (for scope document)" id:""`
}

func (a *createArgs) check() error {
	a.Name = strings.TrimSpace(a.Name)
	switch {
	case a.Name == "":
		return failure.Invalid("name must not be empty")
	case a.Scope == "document" && a.DocumentID == "":
		return failure.Invalid("pass documentId for scope document")
	case a.Scope == "global":
		a.DocumentID = "" // a workspace node names no document
	}
	return nil
}

// createState is what a new node is made against: the tags that exist
// (a new tag must not be one) and whether the document's index can be
// written.
type createState struct {
	Tags     []string `json:"tags"`
	IndexErr string   `json:"indexError,omitempty"`
}

// Ids a creation reserves and learns.
const (
	idTag      = "tag"
	idCreated  = "created"
	idSnapshot = "snapshotId"
)

var createNode = tools.Write[createArgs, createState]{
	Name: "create_node", Summary: "create a node: a repository snapshot of the workspace, tagged, and (scope document) indexed on the document; answers its tag; a replay makes no second snapshot or tag",
	Policy:   additive,
	Example:  map[string]any{"name": "Before rewrite", "scope": "document", "documentId": "20260812120000-abcdefg", "validateOnly": true},
	Validate: (*createArgs).check,
	Scope:    tools.Scope[createArgs]{Touches: func(a createArgs) []tools.Touch { return onDocument(a.DocumentID, tools.LevelWrite) }},
	Targets:  func(a createArgs) []string { return []string{targetOf(a.DocumentID)} },
	State: func(ctx context.Context, env *tools.Env, a createArgs) (createState, error) {
		st := createState{Tags: []string{}}
		if a.DocumentID != "" {
			if _, err := describeDoc(ctx, env, a.DocumentID); err != nil {
				return st, err
			}
			attrs, err := env.Kernel.GetBlockAttrs(ctx, a.DocumentID)
			if err != nil {
				return st, err
			}
			if _, err := parseIndex(attrs[indexAttr], true); err != nil {
				st.IndexErr = err.Error()
			}
		}
		snaps, err := tagSnapshots(ctx, env)
		if err != nil {
			return st, err
		}
		for _, s := range snaps {
			st.Tags = append(st.Tags, s.Tag)
		}
		slices.Sort(st.Tags)
		return st, nil
	},
	Check: func(_ createArgs, st createState) error {
		if st.IndexErr != "" {
			return badIndex(st.IndexErr)
		}
		return nil
	},
	Stages: &tools.Stages[createArgs, createState]{
		Reserve: func(a createArgs, st createState) (map[string]string, error) {
			existing := map[string]bool{}
			for _, t := range st.Tags {
				existing[t] = true
			}
			now := time.Now()
			return map[string]string{idTag: newTag(a.Name, a.DocumentID, existing, now), idCreated: strconv.FormatInt(now.UnixMilli(), 10)}, nil
		},
		Steps: func(a createArgs) []tools.Step[createArgs] {
			steps := []tools.Step[createArgs]{snapshotStep(), tagStep()}
			if a.DocumentID != "" {
				steps = append(steps, indexStep())
			}
			return steps
		},
		Receipt: func(a createArgs, ids map[string]string, done []string) tools.Payload {
			created, _ := strconv.ParseInt(ids[idCreated], 10, 64)
			p := tools.Payload{"node": map[string]any{"name": a.Name, "created": created, "snapshotId": ids[idSnapshot], "tag": ids[idTag], "scope": a.Scope},
				"tag": ids[idTag], "stages": slices.Clone(done)}
			if a.DocumentID != "" {
				p["documentId"] = a.DocumentID
			}
			return p
		},
	},
	Readback: func(ctx context.Context, env *tools.Env, a createArgs, p tools.Payload) (any, error) {
		tag, err := tools.PayloadKey[string](p, "tag")
		if err != nil {
			return nil, err
		}
		return tools.Await(ctx, func(ctx context.Context) (nodeState, error) {
			return readNodeState(ctx, env, tag, a.DocumentID)
		}, func(st nodeState) error {
			switch {
			case st.SnapshotID == "":
				return fmt.Errorf("no snapshot carries the tag %s", tag)
			case a.DocumentID != "" && !st.Indexed:
				return fmt.Errorf("document %s does not index the tag %s", a.DocumentID, tag)
			}
			return nil
		})
	},
}

// targetOf is a call's lease target: its document, or the workspace's
// timeline.
func targetOf(documentID string) string {
	if documentID == "" {
		return "timeline:global"
	}
	return documentID
}

func badIndex(why string) error {
	e := failure.Invalid("the document's timeline index (attribute %s) is not a list of nodes (%s); it is not rewritten", indexAttr, why)
	e.Action = "repair or remove the attribute with block.set_attrs, then call again"
	return e.Attempted(false)
}

// snapshotStep takes the snapshot. SiYuan chooses its id, which is
// learned from the listing after: in doubt there is nothing to look for,
// so it is never sent again.
func snapshotStep() tools.Step[createArgs] {
	return tools.Step[createArgs]{Name: "snapshot",
		Do: func(ctx context.Context, env *tools.Env, a createArgs, _ map[string]string) (map[string]string, error) {
			before, err := newestSnapshots(ctx, env)
			if err != nil {
				return nil, tools.Refuse(err)
			}
			seen := map[string]bool{}
			for _, s := range before {
				seen[s.ID] = true
			}
			if err := createSnapshot(ctx, env, a.Name); err != nil {
				return nil, tools.WriteFailure(err, false)
			}
			after, err := newestSnapshots(ctx, env)
			if err != nil {
				return nil, err
			}
			for _, s := range after {
				if !seen[s.ID] && s.Memo == a.Name {
					return map[string]string{idSnapshot: s.ID}, settle(ctx, s.Created)
				}
			}
			// SiYuan takes no snapshot of data unchanged since the
			// newest one: that one holds the workspace as it is, and
			// is the node's.
			if len(after) > 0 && len(before) > 0 && after[0].ID == before[0].ID {
				return map[string]string{idSnapshot: after[0].ID}, settle(ctx, after[0].Created)
			}
			return nil, fmt.Errorf("the snapshot was taken but is not listed")
		},
		Present: func(ctx context.Context, env *tools.Env, _ createArgs, ids map[string]string) (bool, error) {
			if ids[idSnapshot] == "" {
				return false, nil
			}
			snaps, err := newestSnapshots(ctx, env)
			return slices.ContainsFunc(snaps, func(s snapshot) bool { return s.ID == ids[idSnapshot] }), err
		},
	}
}

// tagStep tags the snapshot; tagging it again with the same name changes
// nothing.
func tagStep() tools.Step[createArgs] {
	return tools.Step[createArgs]{Name: "tag", Redo: true,
		Do: func(ctx context.Context, env *tools.Env, _ createArgs, ids map[string]string) (map[string]string, error) {
			return nil, tools.WriteFailure(tagSnapshot(ctx, env, ids[idSnapshot], ids[idTag]), false)
		},
		Present: func(ctx context.Context, env *tools.Env, _ createArgs, ids map[string]string) (bool, error) {
			return tools.Poll(ctx, func() (bool, error) {
				snaps, err := tagSnapshots(ctx, env)
				return slices.ContainsFunc(snaps, func(s snapshot) bool { return s.Tag == ids[idTag] && s.ID == ids[idSnapshot] }), err
			})
		},
	}
}

// indexStep adds the node to the document's index, unless it holds the
// tag already.
func indexStep() tools.Step[createArgs] {
	return tools.Step[createArgs]{Name: "index", Redo: true,
		Do: func(ctx context.Context, env *tools.Env, a createArgs, ids map[string]string) (map[string]string, error) {
			attrs, err := env.Kernel.GetBlockAttrs(ctx, a.DocumentID)
			if err != nil {
				return nil, tools.Refuse(err)
			}
			index, err := parseIndex(attrs[indexAttr], true)
			if err != nil {
				return nil, badIndex(err.Error())
			}
			if slices.ContainsFunc(index, func(r nodeRecord) bool { return r.Tag == ids[idTag] }) {
				return nil, nil
			}
			created, _ := strconv.ParseInt(ids[idCreated], 10, 64)
			index = append(index, nodeRecord{Name: a.Name, Created: created, SnapshotID: ids[idSnapshot], Tag: ids[idTag], Scope: "document"})
			v, err := formatIndex(index)
			if err != nil {
				return nil, err
			}
			return nil, tools.WriteFailure(env.Kernel.SetBlockAttrs(ctx, a.DocumentID, map[string]string{indexAttr: v}), false)
		},
		Present: func(ctx context.Context, env *tools.Env, a createArgs, ids map[string]string) (bool, error) {
			return tools.Poll(ctx, func() (bool, error) {
				st, err := readNodeState(ctx, env, ids[idTag], a.DocumentID)
				return st.Indexed, err
			})
		},
	}
}

// ---- delete_node ----

// nodeState is a node as a deletion is guarded by: the snapshot its tag
// marks ("" when the tag is gone) and whether the document indexes it.
type nodeState struct {
	Tag        string `json:"tag"`
	SnapshotID string `json:"snapshotId"`
	Indexed    bool   `json:"indexed"`
	Index      string `json:"index,omitempty"` // the index's value, which the deletion rewrites
}

func readNodeState(ctx context.Context, env *tools.Env, tag, documentID string) (nodeState, error) {
	st := nodeState{Tag: tag}
	snaps, err := tagSnapshots(ctx, env)
	if err != nil {
		return st, err
	}
	for _, s := range snaps {
		if s.Tag == tag {
			st.SnapshotID = s.ID
		}
	}
	if documentID == "" {
		return st, nil
	}
	attrs, err := env.Kernel.GetBlockAttrs(ctx, documentID)
	if err != nil {
		return st, err
	}
	st.Index = attrs[indexAttr]
	index, _ := parseIndex(st.Index, false)
	st.Indexed = slices.ContainsFunc(index, func(r nodeRecord) bool { return r.Tag == tag })
	return st, nil
}

type deleteArgs struct {
	Tag        string `arg:"tag" help:"the node's tag" required:"" maxLen:"512"`
	DocumentID string `arg:"documentId" help:"the document a document node's tag names (omit for a workspace node)" id:""`
}

func (a *deleteArgs) check() error { return checkTagOf(a.Tag, a.DocumentID, false) }

var deleteNode = tools.Write[deleteArgs, nodeState]{
	Name: "delete_node", Summary: "delete a node: its tag and its index entry; the snapshot stays in the repository; needs delete on the document's notebook (a person must confirm)",
	Policy: guarded, Destructive: true, Dangerous: true, OffByDefault: true,
	Example:  map[string]any{"tag": "sisyphustimeline_20260812120000-abcdefg_Beforerewrite", "documentId": "20260812120000-abcdefg", "validateOnly": true},
	Validate: (*deleteArgs).check,
	Scope:    tools.Scope[deleteArgs]{Touches: func(a deleteArgs) []tools.Touch { return onDocument(a.DocumentID, tools.LevelDelete) }},
	Targets:  func(a deleteArgs) []string { return []string{a.Tag} },
	State: func(ctx context.Context, env *tools.Env, a deleteArgs) (nodeState, error) {
		if a.DocumentID != "" {
			if _, err := describeDoc(ctx, env, a.DocumentID); err != nil {
				return nodeState{}, err
			}
		}
		return readNodeState(ctx, env, a.Tag, a.DocumentID)
	},
	Check: func(a deleteArgs, st nodeState) error {
		if st.SnapshotID == "" && !st.Indexed {
			return failure.Missing("timeline node", a.Tag).Attempted(false)
		}
		if st.Indexed {
			if _, err := parseIndex(st.Index, true); err != nil {
				return badIndex(err.Error())
			}
		}
		return nil
	},
	Execute: func(ctx context.Context, env *tools.Env, a deleteArgs, st nodeState) (tools.Payload, error) {
		applied := false
		if st.Indexed {
			index, _ := parseIndex(st.Index, true)
			v, err := formatIndex(slices.DeleteFunc(index, func(r nodeRecord) bool { return r.Tag == a.Tag }))
			if err != nil {
				return nil, err
			}
			if err := env.Kernel.SetBlockAttrs(ctx, a.DocumentID, map[string]string{indexAttr: v}); err != nil {
				return nil, tools.WriteFailure(err, false)
			}
			applied = true
		}
		if st.SnapshotID != "" {
			if err := removeTag(ctx, env, a.Tag); err != nil {
				return nil, tools.WriteFailure(err, applied)
			}
		}
		return tools.Payload{"tag": a.Tag, "snapshotId": st.SnapshotID, "scope": scopeOf(a.Tag), "snapshotRetained": st.SnapshotID != ""}, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a deleteArgs, _ tools.Payload) (any, error) {
		return tools.Await(ctx, func(ctx context.Context) (nodeState, error) {
			return readNodeState(ctx, env, a.Tag, a.DocumentID)
		}, func(st nodeState) error {
			if st.SnapshotID != "" || st.Indexed {
				return fmt.Errorf("the node %s is still tagged or indexed", a.Tag)
			}
			return nil
		})
	},
}

// ---- rollback_document ----

type rollbackDocArgs struct {
	DocumentID string `arg:"documentId" help:"the document to restore" id:"" required:""`
	Tag        string `arg:"tag" help:"the node to restore it from" required:"" maxLen:"512"`
}

func (a *rollbackDocArgs) check() error { return checkTagOf(a.Tag, a.DocumentID, true) }

// docState is what a document's rollback is guarded by: the digest of the
// document's file as it is, and the node's copy of it.
type docState struct {
	DocHash       string `json:"docHash"`
	FileID        string `json:"fileId"`
	ChangedBlocks int    `json:"changedBlocks"`
	InNode        bool   `json:"inNode"`
	old           []string
}

func readDocState(ctx context.Context, env *tools.Env, documentID, tag string) (docState, error) {
	doc, err := describeDoc(ctx, env, documentID)
	if err != nil {
		return docState{}, err
	}
	n, err := findNode(ctx, env, tag)
	if err != nil {
		return docState{}, err
	}
	c, err := compareDoc(ctx, env, doc, n)
	if err != nil {
		return docState{}, err
	}
	st := docState{DocHash: c.DocHash, FileID: c.FileID, ChangedBlocks: statsOf(c.Changes).ChangedBlocks, InNode: c.InNode()}
	for _, ch := range c.Changes {
		if ch.Old != nil {
			st.old = append(st.old, ch.Old.norm)
		}
	}
	return st, nil
}

var rollbackDocument = tools.WriteWith[rollbackDocArgs, docState, []string]{Write: tools.Write[rollbackDocArgs, docState]{
	Name: "rollback_document", Summary: "restore one document's file from a node (not the whole repository); refused when nothing differs; needs delete on its notebook (a person must confirm)",
	Policy: guarded, Destructive: true, Dangerous: true, OffByDefault: true,
	Example:  map[string]any{"documentId": "20260812120000-abcdefg", "tag": "sisyphustimeline_20260812120000-abcdefg_Beforerewrite", "validateOnly": true},
	Validate: (*rollbackDocArgs).check,
	Scope:    tools.Scope[rollbackDocArgs]{Touches: func(a rollbackDocArgs) []tools.Touch { return onDocument(a.DocumentID, tools.LevelDelete) }},
	Targets:  func(a rollbackDocArgs) []string { return []string{a.DocumentID} },
	State: func(ctx context.Context, env *tools.Env, a rollbackDocArgs) (docState, error) {
		return readDocState(ctx, env, a.DocumentID, a.Tag)
	},
	Check: func(a rollbackDocArgs, st docState) error {
		switch {
		case !st.InNode:
			return failure.Invalid("document %s did not exist in the node %s: there is no copy of it to restore", a.DocumentID, a.Tag).Attempted(false)
		case st.ChangedBlocks == 0:
			return failure.Invalid("document %s already matches the node %s: nothing to roll back", a.DocumentID, a.Tag).Attempted(false)
		}
		return nil
	},
	Notes: func(_ rollbackDocArgs, st docState) map[string]any {
		return map[string]any{"changedBlocks": st.ChangedBlocks}
	},
},
	Execute: func(ctx context.Context, env *tools.Env, a rollbackDocArgs, st docState) (tools.Payload, []string, error) {
		if err := rollbackFile(ctx, env, st.FileID); err != nil {
			return nil, nil, tools.WriteFailure(err, false)
		}
		return tools.Payload{"documentId": a.DocumentID, "tag": a.Tag, "snapshotFileId": st.FileID, "restoredBlocks": st.ChangedBlocks, "next": readAgain}, st.old, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a rollbackDocArgs, _ tools.Payload, want []string) (any, error) {
		return tools.Await(ctx, func(ctx context.Context) (side, error) { return currentSide(ctx, env, a.DocumentID) }, func(s side) error {
			var got []string
			for _, b := range s.Blocks {
				got = append(got, b.norm)
			}
			if !slices.Equal(got, want) {
				return fmt.Errorf("document %s has %d top-level blocks that do not all match the node's %d", a.DocumentID, len(got), len(want))
			}
			return nil
		})
	},
}

// ---- rollback_block ----

type rollbackBlockArgs struct {
	DocumentID string `arg:"documentId" help:"the document" id:"" required:""`
	Tag        string `arg:"tag" help:"the node" required:"" maxLen:"512"`
	ChangeKey  string `arg:"changeKey" help:"the changeKey of a change compare_node listed" required:"" maxLen:"64"`
}

func (a *rollbackBlockArgs) check() error { return checkTagOf(a.Tag, a.DocumentID, true) }

// blockState is what a block's rollback is guarded by: the change its key
// names in the comparison as it is now (found false once the block or the
// node's copy differs from what the key was made of), the blocks it is
// placed by, and whether a removed block's id is used elsewhere.
type blockState struct {
	ChangeKey  string    `json:"changeKey"`
	Found      bool      `json:"found"`
	Status     string    `json:"status,omitempty"`
	Old        *docBlock `json:"old,omitempty"`
	Current    *docBlock `json:"current,omitempty"`
	PreviousID string    `json:"previousID,omitempty"`
	NextID     string    `json:"nextID,omitempty"`
	Reason     string    `json:"reason,omitempty"`
	Elsewhere  bool      `json:"elsewhere,omitempty"`
	oldDOM     string
}

func readBlockState(ctx context.Context, env *tools.Env, a rollbackBlockArgs) (blockState, error) {
	st := blockState{ChangeKey: a.ChangeKey}
	doc, err := describeDoc(ctx, env, a.DocumentID)
	if err != nil {
		return st, err
	}
	n, err := findNode(ctx, env, a.Tag)
	if err != nil {
		return st, err
	}
	c, err := compareDoc(ctx, env, doc, n)
	if err != nil {
		return st, err
	}
	ch, ok := c.changeOf(a.ChangeKey)
	if !ok {
		return st, nil
	}
	// A block's place in the list is not part of what the rollback is
	// guarded by: an edit elsewhere in the document moves it without
	// changing the change (a removed block's neighbours are).
	st.Found, st.Status, st.Old, st.Current, st.PreviousID, st.NextID = true, ch.Status, unplaced(ch.Old), unplaced(ch.Current), ch.PreviousID, ch.NextID
	if !ch.Rollbackable {
		st.Reason = ch.Reason
	}
	if ch.Old != nil {
		st.oldDOM = ch.Old.dom
	}
	if ch.Status == statusRemoved && ch.Rollbackable {
		exists, err := env.Kernel.CheckBlockExist(ctx, ch.Old.ID)
		if err != nil {
			return st, err
		}
		st.Elsewhere = exists
	}
	return st, nil
}

// unplaced is a block without its order.
func unplaced(b *docBlock) *docBlock {
	if b == nil {
		return nil
	}
	c := *b
	c.Order = 0
	return &c
}

var rollbackBlock = tools.WriteWith[rollbackBlockArgs, blockState, blockState]{Write: tools.Write[rollbackBlockArgs, blockState]{
	Name: "rollback_block", Summary: "take back one change compare_node listed: a modified block gets its old content, an added one is deleted, a removed one is inserted where it was; refused when the changeKey is stale or the position unsafe; needs delete on the notebook (a person must confirm)",
	Policy: guarded, Destructive: true, Dangerous: true, OffByDefault: true,
	Example:  map[string]any{"documentId": "20260812120000-abcdefg", "tag": "sisyphustimeline_20260812120000-abcdefg_Beforerewrite", "changeKey": "0123456789abcdef01234567", "validateOnly": true},
	Validate: (*rollbackBlockArgs).check,
	Scope:    tools.Scope[rollbackBlockArgs]{Touches: func(a rollbackBlockArgs) []tools.Touch { return onDocument(a.DocumentID, tools.LevelDelete) }},
	Targets:  func(a rollbackBlockArgs) []string { return []string{a.DocumentID} },
	State:    readBlockState,
	Check: func(a rollbackBlockArgs, st blockState) error {
		switch {
		case !st.Found:
			e := failure.New(failure.StateChanged, "changeKey %s names no change between document %s and the node now: the block or the document changed since the comparison that gave it", a.ChangeKey, a.DocumentID)
			e.Action = "run compare_node again and take the changeKey it gives"
			return e.Attempted(false)
		case st.Reason != "":
			return failure.Invalid("this change cannot be rolled back safely: %s", st.Reason).Attempted(false)
		case st.Elsewhere:
			return failure.Invalid("the removed block %s exists elsewhere now (it was moved to another document); restoring it would give two blocks one id", st.Old.ID).Attempted(false)
		}
		return nil
	},
	Notes: func(_ rollbackBlockArgs, st blockState) map[string]any { return map[string]any{"status": st.Status} },
},
	Execute: func(ctx context.Context, env *tools.Env, a rollbackBlockArgs, st blockState) (tools.Payload, blockState, error) {
		var err error
		p := tools.Payload{"documentId": a.DocumentID, "tag": a.Tag, "changeKey": a.ChangeKey, "status": st.Status, "next": readAgain}
		switch st.Status {
		case statusModified:
			_, err = env.Kernel.UpdateBlock(ctx, st.Current.ID, "dom", st.oldDOM)
			p["blockId"] = st.Current.ID
		case statusAdded:
			_, err = env.Kernel.DeleteBlock(ctx, st.Current.ID)
			p["blockId"] = st.Current.ID
		case statusRemoved:
			req := siyuan.InsertBlockRequest{DataType: "dom", Data: st.oldDOM, PreviousID: st.PreviousID, NextID: st.NextID}
			if st.PreviousID == "" && st.NextID == "" {
				req.ParentID = a.DocumentID
			}
			_, err = env.Kernel.InsertBlock(ctx, req)
			p["blockId"] = st.Old.ID
		default:
			return nil, st, tools.Refuse(fmt.Errorf("change status %q cannot be rolled back", st.Status))
		}
		if err != nil {
			return nil, st, tools.WriteFailure(err, false)
		}
		return p, st, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a rollbackBlockArgs, _ tools.Payload, want blockState) (any, error) {
		return tools.Await(ctx, func(ctx context.Context) (side, error) { return currentSide(ctx, env, a.DocumentID) }, func(s side) error { return verifyBlock(s, want) })
	},
}

// verifyBlock checks a block rollback against the document after it.
func verifyBlock(s side, want blockState) error {
	at := slices.IndexFunc(s.Blocks, func(b docBlock) bool {
		return (want.Old != nil && b.ID == want.Old.ID) || (want.Current != nil && b.ID == want.Current.ID)
	})
	switch want.Status {
	case statusAdded:
		if s.All[want.Current.ID] {
			return fmt.Errorf("block %s is still in the document", want.Current.ID)
		}
		return nil
	case statusModified, statusRemoved:
		if at < 0 {
			return fmt.Errorf("block %s is not a top-level block of the document", want.Old.ID)
		}
		if s.Blocks[at].norm != want.Old.norm {
			return fmt.Errorf("block %s does not read as the node's copy", want.Old.ID)
		}
		if want.Status == statusRemoved {
			if want.PreviousID != "" && (at == 0 || s.Blocks[at-1].ID != want.PreviousID) {
				return fmt.Errorf("block %s is not after %s", want.Old.ID, want.PreviousID)
			}
			if want.PreviousID == "" && want.NextID != "" && (at+1 >= len(s.Blocks) || s.Blocks[at+1].ID != want.NextID) {
				return fmt.Errorf("block %s is not before %s", want.Old.ID, want.NextID)
			}
		}
		return nil
	}
	return fmt.Errorf("change status %q", want.Status)
}

// currentSide is a document's blocks as its file holds them now, once the
// kernel's transaction queue is flushed: what a rollback's readback reads.
func currentSide(ctx context.Context, env *tools.Env, docID string) (side, error) {
	doc, err := describeDoc(ctx, env, docID)
	if err != nil {
		return side{}, err
	}
	if err := env.Kernel.FlushTransaction(ctx); err != nil {
		return side{}, err
	}
	data, err := readDocFile(ctx, env, doc.Box, doc.Path)
	if err != nil {
		return side{}, err
	}
	return sideFromSY(data)
}
