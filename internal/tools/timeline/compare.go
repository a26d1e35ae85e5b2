package timeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/kernelview"
)

// Finding a document's file in a node's snapshot. SiYuan reads a file of a
// snapshot by the file's id, which only a diff of two snapshots gives; its
// API has no read of a snapshot's file by path. Upstream therefore takes a
// new untagged snapshot on every comparison and leaves it behind. This
// tool compares the node with the newest snapshot SiYuan already has
// first: if the document differs there, the node's file is found without
// a new snapshot. Only when it does not (the document is unchanged from
// the node up to the newest snapshot) does it take one, with upstream's
// memo, and the comparisons after it reuse that one while nothing else is
// taken. The current side is always the document as it is now, read from
// its file, never the snapshot's copy.

// currentMemo is the memo of a snapshot a comparison takes (upstream's).
const currentMemo = "[Sisyphus Timeline Current]"

// docRef is the document a timeline call names.
type docRef struct {
	ID, Box, Path string
}

// repoPath is the document's path in the repository (data/ relative).
func (d docRef) repoPath() string { return "/" + d.Box + d.Path }

// describeDoc resolves a document id; a block that is not a document is
// refused.
func describeDoc(ctx context.Context, env *tools.Env, id string) (docRef, error) {
	if err := kernelview.MustExist(ctx, env, id); err != nil {
		return docRef{}, err
	}
	info, err := env.Kernel.GetBlockInfo(ctx, id)
	if err != nil {
		return docRef{}, err
	}
	if info.RootID != id {
		return docRef{}, failure.Invalid("documentId %s is a block of document %s, not a document: pass the document's id", id, info.RootID)
	}
	return docRef{ID: id, Box: info.Box, Path: info.Path}, nil
}

// findNode reads the snapshot a timeline tag marks.
func findNode(ctx context.Context, env *tools.Env, tag string) (snapshot, error) {
	snaps, err := tagSnapshots(ctx, env)
	if err != nil {
		return snapshot{}, err
	}
	for _, s := range snaps {
		if s.Tag == tag {
			return s, nil
		}
	}
	return snapshot{}, failure.Missing("timeline node", tag)
}

// comparison is a document compared with a node.
type comparison struct {
	Doc  docRef
	Node snapshot
	// FileID is the document's file in the node ("": the document did
	// not exist then).
	FileID string
	// SnapshotTaken is the snapshot this comparison took ("" when it took
	// none).
	SnapshotTaken string
	Changes       []change // every block, unchanged ones included
	// DocHash is the digest of the document's file as read.
	DocHash string
	current side
	same    bool // the document's file did not change since the node
}

// locate finds the document's file in the node's snapshot (see above).
// found is false when the document did not exist in the node; same is
// true when the document's file did not change from the node to the
// snapshot the diff was made with (fileID then unknown).
func locate(ctx context.Context, env *tools.Env, node snapshot, path string, right string) (fileID string, found, same bool, err error) {
	d, err := diffSnapshots(ctx, env, node.ID, right)
	if err != nil {
		return "", false, false, err
	}
	for _, f := range d.UpdatesLeft {
		if f.Path == path {
			return f.FileID, true, false, nil
		}
	}
	for _, f := range d.RemovesRight {
		if f.Path == path {
			return f.FileID, true, false, nil
		}
	}
	for _, f := range d.AddsLeft {
		if f.Path == path {
			return "", false, false, nil
		}
	}
	return "", true, true, nil
}

// compareDoc compares a document with a node.
func compareDoc(ctx context.Context, env *tools.Env, doc docRef, node snapshot) (comparison, error) {
	c := comparison{Doc: doc, Node: node}
	if err := env.Kernel.FlushTransaction(ctx); err != nil {
		return c, err
	}
	data, err := readDocFile(ctx, env, doc.Box, doc.Path)
	if err != nil {
		return c, err
	}
	if len(data) > maxDocBytes {
		return c, tooLarge(doc.ID)
	}
	sum := sha256.Sum256(data)
	c.DocHash = hex.EncodeToString(sum[:])
	if c.current, err = sideFromSY(data); err != nil {
		return c, err
	}
	found, same := true, true
	before, err := newestSnapshots(ctx, env)
	if err != nil {
		return c, err
	}
	if snaps := before; len(snaps) > 0 && snaps[0].ID != node.ID {
		if c.FileID, found, same, err = locate(ctx, env, node, doc.repoPath(), snaps[0].ID); err != nil {
			return c, err
		}
	}
	if found && same {
		// Unchanged up to the newest snapshot: one of the document as it
		// is now tells.
		memo := fmt.Sprintf("%s %s %s", currentMemo, doc.ID, time.Now().UTC().Format(time.RFC3339))
		if err := createSnapshot(ctx, env, memo); err != nil {
			return c, err
		}
		snaps, err := newestSnapshots(ctx, env)
		if err != nil {
			return c, err
		}
		switch {
		case len(snaps) == 0:
			return c, fmt.Errorf("the snapshot taken to compare with is not listed")
		case snaps[0].ID == node.ID:
			// SiYuan takes no snapshot of data unchanged since the
			// newest: the workspace is as in the node.
		default:
			if !slices.ContainsFunc(before, func(s snapshot) bool { return s.ID == snaps[0].ID }) {
				c.SnapshotTaken = snaps[0].ID
				if err := settle(ctx, snaps[0].Created); err != nil {
					return c, err
				}
			}
			if c.FileID, found, same, err = locate(ctx, env, node, doc.repoPath(), snaps[0].ID); err != nil {
				return c, err
			}
		}
	}
	old := side{All: map[string]bool{}}
	c.same = same
	switch {
	case same:
		old = c.current // the document is as it was in the node
	case found:
		f, err := openSnapshotFile(ctx, env, c.FileID)
		if err != nil {
			return c, err
		}
		if f.DisplayInText {
			return c, tooLarge(doc.ID)
		}
		if old, err = sideFromDOM(f.Content); err != nil {
			return c, err
		}
	}
	c.Changes = diffSides(old, c.current)
	return c, nil
}

func tooLarge(id string) error {
	e := failure.Invalid("document %s is larger than 1 MiB; SiYuan shows so large a document's snapshot as text, which this tool does not compare block by block", id)
	e.Action = "compare it in SiYuan's data history"
	return e.Attempted(false)
}

// InNode reports whether the node holds the document: its file was found,
// or it did not change since.
func (c comparison) InNode() bool { return c.FileID != "" || c.same }

// changeOf finds a change by key (unchanged entries excluded).
func (c comparison) changeOf(key string) (change, bool) {
	for _, ch := range c.Changes {
		if ch.Key == key && ch.Status != statusUnchanged {
			return ch, true
		}
	}
	return change{}, false
}
