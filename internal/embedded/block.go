package embedded

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/88250/lute"
	"github.com/88250/lute/ast"
	"github.com/88250/lute/parse"
	"github.com/88250/lute/render"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/mdexport"
	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// dataBlockDOM converts API markdown into block DOM as SiYuan's
// /api/block/* endpoints do, refusing IAL ids that are not node ids.
func dataBlockDOM(data string) (string, error) {
	l := mdexport.NewLute()
	l.SetHTMLTag2TextMark(true)
	var dom string
	var tree *parse.Tree
	if err := guardLute(func() { dom, tree = l.Md2BlockDOMTree(data, true) }); err != nil {
		return "", err
	}
	if dom == "" {
		blank := &ast.Node{Type: ast.NodeParagraph}
		dom = l.RenderNodeBlockDOM(blank)
	}
	if tree != nil {
		if err := checkIDs(tree.Root); err != nil {
			return "", err
		}
	}
	return dom, nil
}

// guardLute runs a Lute call, turning its panics into an error. Lute slices
// IAL ids by position and panics on malformed ones; SiYuan lets that panic
// become {code:0,data:null}, we answer with a clear error instead.
func guardLute(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed markdown or block IAL (ids must look like 20060102150405-abcdefg): %v", r)
		}
	}()
	f()
	return nil
}

// checkIDs refuses trees carrying ids that are not SiYuan node ids.
func checkIDs(root *ast.Node) error {
	var bad string
	ast.Walk(root, func(n *ast.Node, entering bool) ast.WalkStatus {
		if entering && n.ID != "" && !ast.IsNodeIDPattern(n.ID) {
			bad = n.ID
			return ast.WalkStop
		}
		return ast.WalkContinue
	})
	if bad != "" {
		return fmt.Errorf("found invalid ID [%s]", bad)
	}
	return nil
}

// blockData reads data/dataType and returns block DOM.
func blockData(a args) (string, error) {
	data, err := a.str("data")
	if err != nil {
		return "", err
	}
	dataType, err := a.str("dataType")
	if err != nil {
		return "", err
	}
	switch dataType {
	case "markdown":
		dom, err := dataBlockDOM(data)
		if err != nil {
			return "", errf("data block DOM failed: %v", err)
		}
		return dom, nil
	}
	// SiYuan converts only "markdown"; any other dataType is taken as block
	// DOM, as "dom" is.
	return data, nil
}

var containerTypes = map[string]bool{"d": true, "l": true, "i": true, "b": true, "s": true, "callout": true}

// checkContainerParent is SiYuan's guard for parent-only placement.
func (k *Kernel) checkContainerParent(parentID string) error {
	loc, ok := k.lookup(parentID)
	if !ok {
		return errf("parent block not found: %s", parentID)
	}
	if containerTypes[loc.Type] {
		return nil
	}
	if loc.Type == "h" {
		return errf("heading [%s] is a leaf block and cannot have children; to place a block below this heading, pass previousID=<heading id> or previousID=<last block below the heading> instead of parentID", parentID)
	}
	return errf("block [%s] type %q is a leaf block and cannot have children; use previousID to place the block as its sibling instead", parentID, loc.Type)
}

// subTree parses block DOM and names every top-level block.
func subTree(data string) (*parse.Tree, []*ast.Node, error) {
	l := mdexport.NewLute()
	var sub *parse.Tree
	if err := guardLute(func() { sub = l.BlockDOM2Tree(data) }); err != nil {
		return nil, nil, errf("%v", err)
	}
	if sub == nil || sub.Root == nil || sub.Root.FirstChild == nil {
		return nil, nil, errf("invalid data tree")
	}
	var nodes []*ast.Node
	for n := sub.Root.FirstChild; n != nil; n = n.Next {
		if n.Type == ast.NodeKramdownBlockIAL {
			continue
		}
		if !ast.IsNodeIDPattern(n.ID) {
			n.ID = ast.NewNodeID()
			n.SetIALAttr("id", n.ID)
		}
		nodes = append(nodes, n)
	}
	if len(nodes) == 0 {
		return nil, nil, errf("invalid data tree")
	}
	return sub, nodes, nil
}

func oneTx(op *wire.Operation) []*wire.Transaction {
	return []*wire.Transaction{{Timestamp: 0, DoOperations: []wire.Operation{*op}}}
}

func (k *Kernel) insertBlock(ctx context.Context, a args) (any, error) {
	op, err := k.insertOp(a)
	if err != nil {
		return nil, err
	}
	if err := k.doInsert(op); err != nil {
		return nil, err
	}
	return oneTx(op), nil
}

// insertOp checks insertBlock's arguments (one entry of batchInsertBlock)
// and makes the operation, without applying it.
func (k *Kernel) insertOp(a args) (*wire.Operation, error) {
	parentID, err := a.optID("parentID")
	if err != nil {
		return nil, err
	}
	previousID, err := a.optID("previousID")
	if err != nil {
		return nil, err
	}
	nextID, err := a.optID("nextID")
	if err != nil {
		return nil, err
	}
	if parentID != "" && previousID == "" && nextID == "" {
		if err := k.checkContainerParent(parentID); err != nil {
			return nil, err
		}
	}
	data, err := blockData(a)
	if err != nil {
		return nil, err
	}
	return &wire.Operation{Action: "insert", Data: data, ParentID: parentID, PreviousID: previousID, NextID: nextID}, nil
}

// doInsert places new blocks next to nextID, after previousID, or first in
// parentID. As in SiYuan, an anchor that does not exist fails silently
// inside the transaction: the reply still has code 0 and an empty id.
func (k *Kernel) doInsert(op *wire.Operation) error {
	var anchor string
	for _, id := range []string{op.NextID, op.PreviousID, op.ParentID} {
		if _, ok := k.lookup(id); ok && id != "" {
			anchor = id
			break
		}
	}
	if anchor == "" {
		return nil
	}
	tree, _, err := k.loadTreeOf(anchor)
	if err != nil {
		return err
	}
	_, nodes, err := subTree(op.Data.(string))
	if err != nil {
		return err
	}
	inserted, remains := nodes[0], nodes[1:]
	reID(tree.Root, nodes)
	switch {
	case op.NextID != "":
		node := mdexport.NodeByID(tree.Root, op.NextID)
		if node == nil {
			return nil
		}
		if inserted.Type == ast.NodeList && node.Parent != nil && node.Parent.Type == ast.NodeList {
			inserted = inserted.FirstChild
		}
		node.InsertBefore(inserted)
		for _, r := range remains {
			node.InsertBefore(r)
		}
	case op.PreviousID != "":
		node := mdexport.NodeByID(tree.Root, op.PreviousID)
		if node == nil {
			return nil
		}
		if node.Type == ast.NodeHeading && node.IALAttr("fold") == "1" {
			if ch := headingChildren(node); len(ch) > 0 {
				node = ch[len(ch)-1]
			}
		}
		if inserted.Type == ast.NodeList && node.Parent != nil && node.Parent.Type == ast.NodeList {
			inserted = inserted.FirstChild
		}
		for i := len(remains) - 1; i >= 0; i-- {
			node.InsertAfter(remains[i])
		}
		node.InsertAfter(inserted)
	default:
		node := mdexport.NodeByID(tree.Root, op.ParentID)
		if node == nil {
			return nil
		}
		switch {
		case node.Type == ast.NodeSuperBlock && node.FirstChild != nil && node.FirstChild.Next != nil:
			node.FirstChild.Next.InsertAfter(inserted)
		case !node.IsContainerBlock():
			for i := len(remains) - 1; i >= 0; i-- {
				node.InsertAfter(remains[i])
			}
			node.InsertAfter(inserted)
		default:
			for i := len(remains) - 1; i >= 0; i-- {
				node.PrependChild(remains[i])
			}
			node.PrependChild(inserted)
		}
	}
	k.prepareInsertedAV(inserted)
	touchInserted(inserted)
	for _, r := range remains {
		touchInserted(r)
	}
	if err := k.writeTree(tree); err != nil {
		return err
	}
	if err := k.rebindInsertedAV(inserted); err != nil {
		return err
	}
	op.ID = inserted.ID
	op.ParentID = inserted.Parent.ID
	return nil
}

// reID gives a block of the tree that has the ID of a block being
// inserted a new ID, as SiYuan 3.7.3 does: the inserted block keeps its
// ID and lands where asked, the one that had it is renamed (and, for a
// database block, is no longer a registered block of its database).
func reID(root *ast.Node, inserted []*ast.Node) {
	for _, n := range inserted {
		if n.ID == "" {
			continue
		}
		if old := mdexport.NodeByID(root, n.ID); old != nil {
			old.ID = ast.NewNodeID()
			old.SetIALAttr("id", old.ID)
		}
	}
}

func (k *Kernel) appendBlock(ctx context.Context, a args) (any, error)  { return k.pushBlock(a, false) }
func (k *Kernel) prependBlock(ctx context.Context, a args) (any, error) { return k.pushBlock(a, true) }

// pushBlock is appendBlock/prependBlock: new blocks become the last (first)
// children of a container parent.
func (k *Kernel) pushBlock(a args, prepend bool) (any, error) {
	parentID, data, err := k.pushArgs(a)
	if err != nil {
		return nil, err
	}
	op, err := k.doPush(parentID, data, prepend)
	if err != nil {
		return nil, err
	}
	return oneTx(op), nil
}

// pushArgs checks appendBlock's and prependBlock's arguments (one entry of
// their batch forms): the parent's id, that it can have children, the data.
func (k *Kernel) pushArgs(a args) (parentID, data string, err error) {
	if parentID, err = a.id("parentID"); err != nil {
		return "", "", err
	}
	if err := k.checkContainerParent(parentID); err != nil {
		return "", "", err
	}
	if data, err = blockData(a); err != nil {
		return "", "", err
	}
	return parentID, data, nil
}

// doPush places data's blocks last (first) in parentID and answers the
// operation as SiYuan reports it: an insert after the block before them.
func (k *Kernel) doPush(parentID, data string, prepend bool) (*wire.Operation, error) {
	action := "appendInsert"
	if prepend {
		action = "prependInsert"
	}
	op := &wire.Operation{Action: action, Data: data, ParentID: parentID}
	tree, node, err := k.loadTreeOf(parentID)
	if err != nil {
		return nil, err
	}
	_, toInserts, err := subTree(data)
	if err != nil {
		return nil, err
	}
	inserted := toInserts[0]
	if prepend {
		for i, j := 0, len(toInserts)-1; i < j; i, j = i+1, j-1 {
			toInserts[i], toInserts[j] = toInserts[j], toInserts[i]
		}
	}
	for _, n := range toInserts {
		switch {
		case node.Type == ast.NodeList && n.Type == ast.NodeList:
			var lis []*ast.Node
			for li := n.FirstChild; li != nil; li = li.Next {
				lis = append(lis, li)
			}
			if prepend {
				for i := len(lis) - 1; i >= 0; i-- {
					node.PrependChild(lis[i])
				}
			} else {
				for _, li := range lis {
					node.AppendChild(li)
				}
			}
		case node.Type == ast.NodeList:
			li := &ast.Node{ID: ast.NewNodeID(), Type: ast.NodeListItem, ListData: &ast.ListData{Typ: node.ListData.Typ}}
			li.SetIALAttr("id", li.ID)
			if prepend {
				node.PrependChild(li)
			} else {
				node.AppendChild(li)
			}
			li.AppendChild(n)
		case node.Type == ast.NodeSuperBlock:
			if prepend {
				if lm := node.ChildByType(ast.NodeSuperBlockLayoutMarker); lm != nil {
					lm.InsertAfter(n)
				} else {
					node.FirstChild.InsertAfter(n)
				}
			} else {
				node.LastChild.InsertBefore(n)
			}
		default:
			if prepend {
				node.PrependChild(n)
			} else {
				node.AppendChild(n)
			}
		}
		touchInserted(n)
	}
	if err := k.writeTree(tree); err != nil {
		return nil, err
	}
	op.ID = inserted.ID
	if inserted.Parent != nil {
		op.ParentID = inserted.Parent.ID
	}
	op.Action = "insert"
	if inserted.Previous != nil {
		op.PreviousID = inserted.Previous.ID
	}
	return op, nil
}

func (k *Kernel) updateBlock(ctx context.Context, a args) (any, error) {
	id, err := a.id("id")
	if err != nil {
		return nil, err
	}
	data, err := blockData(a)
	if err != nil {
		return nil, err
	}
	l := mdexport.NewLute()
	var sub *parse.Tree
	if err := guardLute(func() { sub = l.BlockDOM2Tree(data) }); err != nil {
		return nil, errf("parse tree failed: %v", err)
	}
	if sub == nil || sub.Root == nil || sub.Root.FirstChild == nil {
		return nil, errf("parse tree failed")
	}
	tree, old, err := k.loadTreeOf(id)
	if err != nil {
		return nil, errf("get block failed: tree not found")
	}
	if old.Type == ast.NodeDocument {
		// Updating a document replaces its whole body.
		var ops []wire.Operation
		for c := tree.Root.FirstChild; c != nil; {
			next := c.Next
			ops = append(ops, wire.Operation{Action: "delete", ID: c.ID, Data: map[string]any{"createEmptyParagraph": false}})
			c.Unlink()
			c = next
		}
		_, nodes, err := subTree(data)
		if err != nil {
			return nil, err
		}
		stamp := nowStamp()
		for _, n := range nodes {
			tree.Root.AppendChild(n)
			touchUpdated(n, stamp)
		}
		if err := k.writeTree(tree); err != nil {
			return nil, err
		}
		// The queue rewrites appendInsert into an insert with the new id.
		ins := wire.Operation{Action: "insert", Data: data, ParentID: id, ID: nodes[0].ID}
		if nodes[0].Previous != nil {
			ins.PreviousID = nodes[0].Previous.ID
		}
		ops = append(ops, ins)
		return []*wire.Transaction{{DoOperations: ops}}, nil
	}
	if old.Type == ast.NodeListItem && sub.Root.FirstChild.Type == ast.NodeList {
		sub.Root.AppendChild(sub.Root.FirstChild.FirstChild)
		sub.Root.FirstChild.Unlink()
		if sub.Root.FirstChild != nil && sub.Root.FirstChild.Type == ast.NodeKramdownBlockIAL {
			sub.Root.FirstChild.Unlink()
		}
	}
	if sub.Root.FirstChild != nil {
		sub.Root.FirstChild.SetIALAttr("id", id)
		sub.Root.FirstChild.ID = id
	} else {
		p := &ast.Node{Type: ast.NodeParagraph, ID: id}
		p.SetIALAttr("id", id)
		sub.Root.AppendChild(p)
	}
	data = l.Tree2BlockDOM(sub, l.RenderOptions, l.ParseOptions)
	op := &wire.Operation{Action: "update", ID: id, Data: data}

	// Apply: the new node replaces the old one with only the attributes the
	// DOM carries. SiYuan drops the old node's custom attributes here, and
	// so do we: clients must survive that.
	_, nodes, err := subTree(data)
	if err != nil {
		return nil, err
	}
	updated := nodes[0]
	if updated.Type == ast.NodeList && old.Parent != nil && old.Parent.Type == ast.NodeList {
		updated = updated.FirstChild
	}
	old.InsertAfter(updated)
	old.Unlink()
	touchUpdated(updated, nowStamp())
	if err := k.writeTree(tree); err != nil {
		return nil, err
	}
	return oneTx(op), nil
}

// batchUpdateBlock is /api/block/batchUpdateBlock: every entry is checked
// first (its id, its data, that the block exists), so a bad entry fails the
// call before anything is applied, as SiYuan's does; then each is updated
// in order (a later entry for the same block wins) and the answer is one
// transaction holding every entry's operations. Callers hold writeMu.
func (k *Kernel) batchUpdateBlock(ctx context.Context, a args) (any, error) {
	v, ok := a["blocks"]
	if !ok || v == nil {
		return nil, errf("Field [blocks] is required")
	}
	list, ok := v.([]any)
	if !ok {
		return nil, errf("Field [blocks] should be of type [Array]")
	}
	if len(list) == 0 {
		return nil, errf("Field [blocks] must not be empty")
	}
	entries := make([]args, 0, len(list))
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, errf("argument [blocks] must be an array of objects")
		}
		ea := args(m)
		id, err := ea.id("id")
		if err != nil {
			return nil, err
		}
		data, err := blockData(ea)
		if err != nil {
			return nil, err
		}
		var sub *parse.Tree
		if err := guardLute(func() { sub = mdexport.NewLute().BlockDOM2Tree(data) }); err != nil || sub == nil || sub.Root == nil || sub.Root.FirstChild == nil {
			return nil, errf("parse tree failed")
		}
		if _, ok := k.lookup(id); !ok {
			return nil, errf("get block failed: tree not found")
		}
		entries = append(entries, ea)
	}
	tx := &wire.Transaction{}
	for _, ea := range entries {
		out, err := k.updateBlock(ctx, ea)
		if err != nil {
			return nil, err
		}
		for _, t := range out.([]*wire.Transaction) {
			tx.DoOperations = append(tx.DoOperations, t.DoOperations...)
		}
	}
	return []*wire.Transaction{tx}, nil
}

// deleteBlockDelay is how long a queued delete waits before it is applied,
// SiYuan's transaction-queue tick.
const deleteBlockDelay = 50 * time.Millisecond

// deleteBlock answers before the delete is applied, as SiYuan's does (it
// queues the transaction and does not wait for it): a read right after it
// may still see the block. The next write, a flushTransaction, or the queue
// tick apply it. An unknown id is answered with code 0 and nothing happens.
// Callers hold writeMu.
func (k *Kernel) deleteBlock(ctx context.Context, a args) (any, error) {
	id, err := a.id("id")
	if err != nil {
		return nil, err
	}
	if loc, ok := k.lookup(id); ok && loc.Type == "d" {
		return nil, errf("can not delete a document with deleteBlock; use removeDoc")
	}
	k.pendingDeletes = append(k.pendingDeletes, id)
	if len(k.pendingDeletes) == 1 {
		time.AfterFunc(deleteBlockDelay, func() {
			k.writeMu.Lock()
			defer k.writeMu.Unlock()
			k.applyPendingLocked()
		})
	}
	return oneTx(&wire.Operation{Action: "delete", ID: id}), nil
}

// applyPendingLocked applies queued deletes in order. Callers hold writeMu.
func (k *Kernel) applyPendingLocked() {
	k.mu.Lock()
	k.staleTitles = nil
	k.mu.Unlock()
	ids := k.pendingDeletes
	k.pendingDeletes = nil
	for _, id := range ids {
		if err := k.applyDelete(id); err != nil {
			// As in SiYuan, a queued transaction's failure never reaches the
			// caller, who already had its reply.
			k.log.Warn("queued deleteBlock failed", "id", id, "err", err)
		}
	}
}

// applyDelete removes a block now.
func (k *Kernel) applyDelete(id string) error {
	if _, n, err := k.viewOf(id); err == nil && n.Type != ast.NodeDocument {
		k.beforeDeleteAV(n)
	}
	tree, node, err := k.loadTreeOf(id)
	if err != nil {
		return nil // already gone: a queued delete of an unknown block is a no-op
	}
	if node.Type == ast.NodeDocument {
		return errf("can not delete a document with deleteBlock")
	}
	parent := node.Parent
	node.Unlink()
	removeEmptyContainers(parent)
	if parent != nil && parent.IsBlock() && parent.ID != "" {
		touchUpdated(parent, nowStamp())
	}
	return k.writeTree(tree)
}

// removeEmptyContainers drops lists, list items, quotes and super blocks left
// without block children, walking up.
func removeEmptyContainers(n *ast.Node) {
	for n != nil && n.Type != ast.NodeDocument {
		switch n.Type {
		case ast.NodeList, ast.NodeListItem, ast.NodeBlockquote, ast.NodeSuperBlock, ast.NodeCallout:
		default:
			return
		}
		hasBlock := false
		for c := n.FirstChild; c != nil; c = c.Next {
			if c.IsBlock() && c.Type != ast.NodeKramdownBlockIAL {
				hasBlock = true
				break
			}
		}
		if hasBlock {
			return
		}
		p := n.Parent
		n.Unlink()
		n = p
	}
}

func (k *Kernel) moveBlock(ctx context.Context, a args) (any, error) {
	id, err := a.id("id")
	if err != nil {
		return nil, err
	}
	loc, ok := k.lookup(id)
	if !ok {
		return nil, errf("block not found [id=%s]", id)
	}
	parentID, err := a.optID("parentID")
	if err != nil {
		return nil, err
	}
	previousID, err := a.optID("previousID")
	if err != nil {
		return nil, err
	}
	if previousID != "" {
		if p, ok := k.lookup(previousID); !ok || p.Type == "d" {
			return nil, errf("`previousID` can not be the ID of a document")
		}
	}
	target := previousID
	if target == "" {
		target = parentID
	}
	tloc, ok := k.lookup(target)
	if target == "" || !ok {
		return nil, errf("target block not found [id=%s]", parentID)
	}
	if previousID == "" {
		if err := k.checkContainerParent(parentID); err != nil {
			return nil, err
		}
	}
	if target == id {
		return nil, errf("can not move a block relative to itself")
	}
	srcTree, node, err := k.loadTreeOf(id)
	if err != nil {
		return nil, err
	}
	if node.Type == ast.NodeDocument {
		return nil, errf("can not move a document with moveBlock")
	}
	dstTree := srcTree
	if tloc.Root != loc.Root {
		if dstTree, err = k.loadTree(tloc.Root); err != nil {
			return nil, err
		}
	}
	anchor := mdexport.NodeByID(dstTree.Root, target)
	for p := anchor; p != nil; p = p.Parent {
		if p.ID == id {
			return nil, errf("can not move a block into itself")
		}
	}
	oldParent := node.Parent
	if node.Type == ast.NodeHeading && node.IALAttr("fold") == "1" {
		// A folded heading carries its children along.
		children := headingChildren(node)
		place(node, anchor, previousID != "")
		last := node
		for _, c := range children {
			last.InsertAfter(c)
			last = c
		}
	} else {
		place(node, anchor, previousID != "")
	}
	removeEmptyContainers(oldParent)
	stamp := nowStamp()
	touchUpdated(node, stamp)
	if err := k.writeTree(dstTree); err != nil {
		return nil, err
	}
	if dstTree != srcTree {
		if err := k.writeTree(srcTree); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// place puts node after anchor (sibling) or first inside it (parent).
func place(node, anchor *ast.Node, after bool) {
	if after {
		if node.Type == ast.NodeListItem && anchor.Type != ast.NodeListItem {
			list := &ast.Node{Type: ast.NodeList, ID: ast.NewNodeID(), ListData: &ast.ListData{Typ: node.ListData.Typ}}
			list.SetIALAttr("id", list.ID)
			anchor.InsertAfter(list)
			list.AppendChild(node)
			return
		}
		anchor.InsertAfter(node)
		return
	}
	if anchor.Type == ast.NodeListItem && anchor.ListData != nil && anchor.ListData.Typ == 3 && anchor.FirstChild != nil {
		anchor.FirstChild.InsertAfter(node)
		return
	}
	if anchor.Type == ast.NodeSuperBlock {
		if lm := anchor.ChildByType(ast.NodeSuperBlockLayoutMarker); lm != nil {
			lm.InsertAfter(node)
			return
		}
	}
	anchor.PrependChild(node)
}

func (k *Kernel) foldBlock(ctx context.Context, a args) (any, error)   { return k.setFold(a, true) }
func (k *Kernel) unfoldBlock(ctx context.Context, a args) (any, error) { return k.setFold(a, false) }

func (k *Kernel) setFold(a args, fold bool) (any, error) {
	id, err := a.id("id")
	if err != nil {
		return nil, err
	}
	loc, ok := k.lookup(id)
	if !ok {
		return nil, errf("block tree not found [id=%s]", id)
	}
	if loc.Type == "d" {
		if fold {
			return nil, errf("document can not be folded")
		}
		return nil, errf("document can not be unfolded")
	}
	tree, node, err := k.loadTreeOf(id)
	if err != nil {
		return nil, err
	}
	if node.Type == ast.NodeHeading {
		// Heading folds mark the heading and its children, as SiYuan's
		// foldHeading/unfoldHeading transactions do.
		for _, c := range headingChildren(node) {
			ast.Walk(c, func(n *ast.Node, entering bool) ast.WalkStatus {
				if entering && n.IsBlock() && n.ID != "" {
					if fold {
						n.SetIALAttr("fold", "1")
						n.SetIALAttr("heading-fold", "1")
					} else {
						n.RemoveIALAttr("heading-fold")
						n.RemoveIALAttr("fold")
					}
				}
				return ast.WalkContinue
			})
		}
	}
	if fold {
		node.SetIALAttr("fold", "1")
	} else {
		node.RemoveIALAttr("fold")
	}
	return nil, k.writeTree(tree)
}

// kramdownOf renders one block (with descendants and IALs) as SiYuan's
// getBlockKramdown does, on a private copy of the block.
func kramdownOf(tree *parse.Tree, node *ast.Node, mode string) string {
	node = cloneSubtree(node)
	addBlockIALNodes(node)
	// As SiYuan: a new root holding the block and its IAL (for a document,
	// the document node itself and its IAL).
	root := &ast.Node{Type: ast.NodeDocument}
	if node.Next != nil && node.Next.Type == ast.NodeKramdownBlockIAL {
		root.AppendChild(node.Next)
	}
	root.PrependChild(node)
	l := mdexport.NewLute()
	if mode == "md" {
		l.SetPreventEncodeLinkSpace(true)
		md, err := lute.ProtyleExportMdNodeSync(root, l.ParseOptions, l.RenderOptions)
		if err != nil {
			return ""
		}
		return md
	}
	private := *tree
	private.Root = root
	return string(render.NewFormatRenderer(&private, l.RenderOptions, l.ParseOptions).Render())
}

// addBlockIALNodes materialises each block's IAL as a node after it, so the
// format renderer prints {: ...} lines.
func addBlockIALNodes(root *ast.Node) {
	var blocks []*ast.Node
	ast.Walk(root, func(n *ast.Node, entering bool) ast.WalkStatus {
		if !entering || !n.IsBlock() {
			return ast.WalkContinue
		}
		if n.Type == ast.NodeBlockQueryEmbed {
			if s := n.ChildByType(ast.NodeBlockQueryEmbedScript); s != nil {
				s.Tokens = []byte(strings.ReplaceAll(string(s.Tokens), "\n", " "))
			}
		} else if n.Type == ast.NodeHTMLBlock {
			t := strings.TrimSpace(string(n.Tokens))
			if !strings.HasPrefix(t, "<div>") {
				t = "<div>\n" + t
			}
			if !strings.HasSuffix(t, "</div>") {
				t += "\n</div>"
			}
			n.Tokens = []byte(t)
		}
		if len(n.KramdownIAL) > 0 {
			blocks = append(blocks, n)
		}
		return ast.WalkContinue
	})
	for _, b := range blocks {
		b.InsertAfter(&ast.Node{Type: ast.NodeKramdownBlockIAL, Tokens: parse.IAL2Tokens(b.KramdownIAL)})
	}
}

// kramdownMode reads the mode argument: "md" (the default: Markdown
// markers) or "textmark" (inline marks as spans).
func kramdownMode(a args) (string, error) {
	mode, err := a.optStr("mode")
	if err != nil {
		return "", err
	}
	switch mode {
	case "":
		return "md", nil
	case "md", "textmark":
		return mode, nil
	}
	return "", errf("Invalid mode")
}

func (k *Kernel) getBlockKramdown(ctx context.Context, a args) (any, error) {
	id, err := a.id("id")
	if err != nil {
		return nil, err
	}
	mode, err := kramdownMode(a)
	if err != nil {
		return nil, err
	}
	// SiYuan answers an unknown id with an empty kramdown and code 0.
	tree, node, err := k.viewOf(id)
	if err != nil {
		return map[string]any{"id": id, "kramdown": ""}, nil
	}
	return map[string]any{"id": id, "kramdown": kramdownOf(tree, node, mode)}, nil
}

func (k *Kernel) getBlockKramdowns(ctx context.Context, a args) (any, error) {
	ids, err := a.strList("ids")
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		if !validID(id) {
			// SiYuan answers {code:0,data:null} here; we say why.
			return nil, errf("invalid ID argument [%s]", id)
		}
	}
	mode, err := kramdownMode(a)
	if err != nil {
		return nil, err
	}
	ret := map[string]string{}
	for _, id := range ids {
		tree, node, err := k.viewOf(id)
		if err != nil {
			continue
		}
		ret[id] = kramdownOf(tree, node, mode)
	}
	return ret, nil
}

// getBlocksIndexes is SiYuan's model.GetBlocksIndexes: the document of the
// first id is loaded once and every id gets the 1-based position of the
// top-level block that holds it there; the document itself, and ids it
// does not hold, get 0. An unknown or malformed first id answers {}.
func (k *Kernel) getBlocksIndexes(ctx context.Context, a args) (any, error) {
	ids, err := a.strList("ids")
	if err != nil {
		return nil, err
	}
	ret := map[string]int{}
	if len(ids) == 0 || !validID(ids[0]) {
		return ret, nil
	}
	tree, _, err := k.viewOf(ids[0])
	if err != nil {
		return ret, nil
	}
	index := map[string]int{} // the document and ids it does not hold read 0
	for i, top := 1, tree.Root.FirstChild; top != nil; top = top.Next {
		if !top.IsBlock() || top.ID == "" {
			continue
		}
		ast.Walk(top, func(n *ast.Node, entering bool) ast.WalkStatus {
			if entering && n.IsBlock() && n.ID != "" {
				index[n.ID] = i
			}
			return ast.WalkContinue
		})
		i++
	}
	for _, id := range ids {
		ret[id] = index[id]
	}
	return ret, nil
}

func (k *Kernel) getChildBlocks(ctx context.Context, a args) (any, error) {
	id, err := a.id("id")
	if err != nil {
		return nil, err
	}
	ret := []wire.ChildBlock{}
	tree, node, err := k.viewOf(id)
	if err != nil {
		return ret, nil
	}
	var children []*ast.Node
	if node.Type == ast.NodeHeading {
		children = headingChildren(node)
	} else if node.IsContainerBlock() {
		for c := node.FirstChild; c != nil; c = c.Next {
			if c.IsBlock() && c.Type != ast.NodeKramdownBlockIAL && c.ID != "" {
				children = append(children, c)
			}
		}
	}
	for _, c := range children {
		row := sqlBlockOf(cloneSubtree(c), tree)
		if c.Type == ast.NodeAttributeView {
			rows := []sqlBlockRow{row}
			k.avContentRows(rows) // the database's text, as SiYuan builds the row now
			row = rows[0]
		}
		ret = append(ret, wire.ChildBlock{ID: c.ID, Type: row.Type, SubType: row.SubType, Content: row.Content, Markdown: row.Markdown})
	}
	return ret, nil
}

func (k *Kernel) blockDOM(id string) (string, bool) {
	_, node, err := k.viewOf(id)
	if err != nil {
		return "", false
	}
	l := mdexport.NewLute()
	c := cloneSubtree(node)
	if node.Parent != nil && node.Parent.Type == ast.NodeDocument {
		// SiYuan renders the node where it lives: a document's child is
		// numbered (data-node-index, from 1), a nested block is not.
		(&ast.Node{Type: ast.NodeDocument}).AppendChild(c)
	}
	return l.RenderNodeBlockDOM(c), true
}

func (k *Kernel) getBlockDOM(ctx context.Context, a args) (any, error) {
	id, err := a.str("id")
	if err != nil {
		return nil, err
	}
	dom, _ := k.blockDOM(id)
	return map[string]any{"id": id, "dom": dom}, nil
}

func (k *Kernel) getBlockDOMs(ctx context.Context, a args) (any, error) {
	ids, err := a.strList("ids")
	if err != nil {
		return nil, err
	}
	ret := map[string]string{}
	for _, id := range ids {
		if dom, ok := k.blockDOM(id); ok {
			ret[id] = dom
		}
	}
	return ret, nil
}

func (k *Kernel) getBlockInfo(ctx context.Context, a args) (any, error) {
	id, err := a.str("id")
	if err != nil {
		return nil, err
	}
	tree, _, err := k.viewOf(id)
	if err != nil {
		return nil, errf("Content block with id [%s] not found", id)
	}
	// SiYuan 3.7.3 reports the document id here, whatever block was asked for.
	rootChildID := tree.ID
	return map[string]any{
		"box": tree.Box, "path": tree.Path, "rootID": tree.ID,
		"rootTitle":      tree.Root.IALAttr("title"),
		"rootTitleEmpty": tree.Root.IALAttr("custom-sy-title-empty") == "true",
		"rootChildID":    rootChildID,
		"rootIcon":       tree.Root.IALAttr("icon"),
	}, nil
}

func (k *Kernel) getDocInfo(ctx context.Context, a args) (any, error) {
	id, err := a.str("id")
	if err != nil {
		return nil, err
	}
	tree, node, err := k.viewOf(id)
	if err != nil {
		return nil, errf("Content block with id [%s] not found", id)
	}
	_ = node
	// SiYuan answers with the holding document's name and attributes.
	ial := parse.IAL2Map(tree.Root.KramdownIAL)
	name := ial["title"]
	sub := k.visibleChildCount(tree.Box, strings.TrimSuffix(tree.Path, ".sy"))
	// A struct, as SiYuan's model.BlockInfo: its keys come out in field order.
	return &wire.DocInfo{ID: id, RootID: tree.ID, Name: name, SubFileCount: sub,
		RefIDs: []string{}, IAL: ial, Icon: ial["icon"]}, nil
}

func (k *Kernel) checkBlockExist(ctx context.Context, a args) (any, error) {
	id, err := a.str("id")
	if err != nil {
		return nil, err
	}
	_, ok := k.lookup(id)
	return ok, nil
}

// transactions applies raw block operations (insert, appendInsert,
// prependInsert, update, delete, move, setAttrs) in order, one transaction
// at a time, as /api/transactions does for these actions.
func (k *Kernel) transactions(ctx context.Context, a args) (any, error) {
	// SiYuan binds transactions (required, not empty) before reqId
	// (required, a number), and stamps every transaction with the reqId.
	switch v, ok := a["transactions"]; {
	case !ok || v == nil:
		return nil, errf("Field [transactions] is required")
	default:
		if l, isList := v.([]any); !isList {
			return nil, errf("Field [transactions] should be of type [Array]")
		} else if len(l) == 0 {
			return nil, errf("Field [transactions] must not be empty")
		}
	}
	var stamp int64
	switch v, ok := a["reqId"]; {
	case !ok || v == nil:
		return nil, errf("Field [reqId] is required")
	default:
		n, isNum := v.(json.Number)
		f, err := n.Float64()
		if !isNum || err != nil {
			return nil, errf("Field [reqId] should be of type [Number]")
		}
		stamp = int64(f)
	}
	raw, err := json.Marshal(a["transactions"])
	if err != nil {
		return nil, errf("invalid transactions: %v", err)
	}
	var txs []*wire.Transaction
	if err := json.Unmarshal(raw, &txs); err != nil || txs == nil {
		return nil, errf("argument [transactions] must be an array of transactions")
	}
	// A null operation decodes to a zero wire.Operation; spot the nulls so
	// they are refused as such, not as an unknown action.
	var present []struct {
		DoOperations []*struct{} `json:"doOperations"`
	}
	_ = json.Unmarshal(raw, &present)
	for i, tx := range txs {
		tx.Timestamp = stamp
		for j := range tx.DoOperations {
			if present[i].DoOperations[j] == nil {
				return nil, errf("null operation")
			}
			if err := k.applyOp(&tx.DoOperations[j]); err != nil {
				var failed *txFailure
				if errors.As(err, &failed) {
					// Reported only on SiYuan's websocket; the reply is code 0.
					k.log.Warn("transaction operation failed", "err", err)
					break
				}
				return nil, err
			}
		}
	}
	return txs, nil
}

func (k *Kernel) applyOp(op *wire.Operation) error {
	dataStr, _ := op.Data.(string)
	call := func(h handlerFunc, a args) error {
		_, err := h(context.Background(), a)
		return err
	}
	switch op.Action {
	case "insert":
		if _, err := subTreeOrErr(dataStr); err != nil {
			return err
		}
		return k.doInsert(op)
	case "appendInsert", "prependInsert":
		res, err := k.pushBlock(args{"parentID": op.ParentID, "dataType": "dom", "data": dataStr}, op.Action == "prependInsert")
		if err != nil {
			return err
		}
		done := res.([]*wire.Transaction)[0].DoOperations[0]
		op.ID, op.ParentID, op.PreviousID = done.ID, done.ParentID, done.PreviousID
		return nil
	case "update":
		return call(k.updateBlock, args{"id": op.ID, "dataType": "dom", "data": dataStr})
	case "delete":
		return k.applyDelete(op.ID) // /api/transactions waits for its operations
	case "move":
		m := args{"id": op.ID}
		if op.PreviousID != "" {
			m["previousID"] = op.PreviousID
		}
		if op.ParentID != "" {
			m["parentID"] = op.ParentID
		}
		return call(k.moveBlock, m)
	case "setAttrs":
		var attrs map[string]any
		if err := json.Unmarshal([]byte(dataStr), &attrs); err != nil {
			return errf("setAttrs data must be a JSON object string")
		}
		return call(k.setBlockAttrs, args{"id": op.ID, "attrs": attrs})
	}
	if handled, err := k.applyAVOp(op); handled {
		return err
	}
	return errf("unsupported transaction action [%s]", op.Action)
}

func subTreeOrErr(data string) (*parse.Tree, error) {
	t, _, err := subTree(data)
	return t, err
}
