package embedded

import (
	"context"
	"fmt"
	"strings"

	"github.com/88250/lute/ast"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// Database operations of /api/transactions, as the SiYuan 3.7.3 frontend
// sends them (model/transaction.go's dispatch):
//
//	insertAttrViewBlock  avID, srcs [{itemID, id, isDetached, content}], blockID (the database block), viewID, previousID, ignoreDefaultFill
//	removeAttrViewBlock  avID, srcIDs (item IDs)
//	addAttrViewCol       avID, id (new key ID), name, type, data (icon), previousID (key to follow)
//	removeAttrViewCol    avID, id, removeDest
//	updateAttrViewCell   avID, keyID, rowID (the item ID), data (the value)
//	setAttrViewName      id (the avID), data (the name)
//	updateAttrViewColTemplate      avID, id, type "template", data
//	updateAttrViewColNumberFormat  avID, id, type "number", format
//	updateAttrViewColRelation      avID, id (related avID), keyID, isTwoWay, backRelationKeyID, name, format
//	updateAttrViewColRollup        avID, id (rollup key), parentID (relation key), keyID (target key), data {calc}
//	doUpdateUpdated      id (a block), data (its new updated time)
//
// and the view settings of av_viewops.go.
//
// Creating a database is an insert of a NodeAttributeView block DOM with
// data-av-id, then renderAttributeView, which writes the file.

// txFailure is an operation that failed inside SiYuan's transaction
// queue: the kernel reports it only on its websocket and rolls the
// transaction back (database files already written stay written); the
// HTTP reply is still code 0 and the transaction's later operations are
// not applied.
type txFailure struct {
	action string
	err    error
}

func (f *txFailure) Error() string {
	return fmt.Sprintf("transaction operation %s failed: %v", f.action, f.err)
}

// applyAVOp applies a database operation; handled is false for actions
// that are not one.
func (k *Kernel) applyAVOp(op *wire.Operation) (handled bool, err error) {
	ctx := context.Background()
	str := func(v any) (string, error) {
		if v == nil {
			return "", nil
		}
		s, ok := v.(string)
		if !ok {
			return "", errf("data must be a string")
		}
		return s, nil
	}
	switch op.Action {
	case "insertAttrViewBlock":
		err = k.avAddRows(ctx, op.Srcs, op.AvID, op.BlockID, op.ViewID, op.GroupID, op.PreviousID, op.IgnoreDefaultFill)
	case "removeAttrViewBlock":
		err = k.avRemoveRows(op.SrcIDs, op.AvID)
	case "addAttrViewCol":
		var icon string
		if icon, err = str(op.Data); err == nil {
			err = k.avAddKey(op.AvID, op.ID, op.Name, op.Type, icon, op.PreviousID)
		}
	case "removeAttrViewCol":
		err = k.avRemoveKey(op.AvID, op.ID, op.RemoveDest)
	case "updateAttrViewCell":
		_, err = k.avSetCell(op.AvID, op.KeyID, op.RowID, op.Data)
	case "setAttrViewName":
		var name string
		if name, err = str(op.Data); err == nil && op.Data != nil {
			err = k.avSetName(op.ID, name)
		} else if err == nil {
			err = errf("data must be a string")
		}
	case "updateAttrViewColTemplate":
		var tpl string
		if tpl, err = str(op.Data); err == nil {
			err = k.avSetKeyTemplate(op.AvID, op.ID, op.Type, tpl)
		}
	case "updateAttrViewColNumberFormat":
		err = k.avSetNumberFormat(op.AvID, op.ID, op.Type, op.Format)
	case "updateAttrViewColRelation":
		err = k.avSetRelation(op.AvID, op.ID, op.KeyID, op.BackRelationKeyID, op.Name, op.Format, op.IsTwoWay)
	case "updateAttrViewColRollup":
		err = k.avSetRollup(op.AvID, op.ID, op.ParentID, op.KeyID, op.Data)
	case "doUpdateUpdated":
		err = k.doUpdateUpdated(op)
	default:
		if handled, err := k.applyAVRowOp(op); handled {
			return true, err
		}
		if handled, err := k.applyAVCardOp(op); handled {
			return true, err
		}
		return k.applyAVViewOp(op)
	}
	if err != nil {
		return true, &txFailure{op.Action, err}
	}
	return true, nil
}

// doUpdateUpdated sets a block's updated time (and its parents'); an
// unknown block is no error.
func (k *Kernel) doUpdateUpdated(op *wire.Operation) error {
	stamp, ok := op.Data.(string)
	if !ok {
		return errf("data must be a string")
	}
	tree, node, err := k.loadTreeOf(op.ID)
	if err != nil {
		return nil
	}
	node.SetIALAttr("updated", stamp)
	if !isTimeStr(stamp) || stamp < timeFromID(node.ID) {
		stamp = timeFromID(node.ID)
		node.SetIALAttr("updated", stamp)
	}
	for p := node.Parent; p != nil; p = p.Parent {
		if p.IsBlock() && p.ID != "" {
			p.SetIALAttr("updated", stamp)
		}
	}
	return k.writeTree(tree)
}

// prepareInsertedAV is what the kernel's doInsert does to the first
// inserted block for databases: a copy keeps no binding (custom-avs,
// av-names, static texts and flashcard decks are dropped), a database
// block without data-av-id gets a new database ID, and one whose database
// exists shows its current view (custom-sy-av-view, when unset).
func (k *Kernel) prepareInsertedAV(n *ast.Node) {
	for _, name := range []string{avAttrAvs, "av-names", "custom-riff-decks"} {
		n.RemoveIALAttr(name)
	}
	for _, kv := range append([][]string(nil), n.KramdownIAL...) {
		if strings.HasPrefix(kv[0], "custom-sy-av-s-text") {
			n.RemoveIALAttr(kv[0])
		}
	}
	if n.Type != ast.NodeAttributeView {
		return
	}
	if !validID(n.AttributeViewID) {
		n.AttributeViewID = ast.NewNodeID()
	}
	av, err := k.loadAV(n.AttributeViewID)
	if err != nil {
		return
	}
	if v := avViewByID(av, av.ViewID); v != nil {
		n.AttributeViewType = v.LayoutType
		if n.IALAttr(avAttrView) == "" {
			n.SetIALAttr(avAttrView, v.ID)
		}
	}
}

// rebindInsertedAV binds a database's rows to their blocks again after its
// block was inserted (a cut database block is pasted: the delete had
// unbound them).
func (k *Kernel) rebindInsertedAV(n *ast.Node) error {
	if n == nil || n.Type != ast.NodeAttributeView {
		return nil
	}
	av, err := k.loadAV(n.AttributeViewID)
	if err != nil {
		return nil
	}
	if bkv := avBlockKeyValues(av); bkv != nil {
		for _, v := range bkv.Values {
			if !v.IsDetached && v.Block != nil && v.Block.ID != "" {
				if _, ok := k.lookup(v.Block.ID); ok {
					if err := k.bindBlock(av.ID, v.Block.ID); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// beforeDeleteAV is the kernel's syncDelete2AvBlock for a block about to
// be deleted (its descendants included): a bound block's row loses its
// primary key (its other cells stay), and deleting a database's last
// block unbinds its rows' blocks. Callers hold writeMu.
func (k *Kernel) beforeDeleteAV(node *ast.Node) {
	var bound, dbBlocks []*ast.Node
	ast.Walk(node, func(n *ast.Node, entering bool) ast.WalkStatus {
		if !entering || !n.IsBlock() {
			return ast.WalkContinue
		}
		if n.IALAttr(avAttrAvs) != "" {
			bound = append(bound, n)
		}
		if n.Type == ast.NodeAttributeView {
			dbBlocks = append(dbBlocks, n)
		}
		return ast.WalkContinue
	})
	for _, n := range bound {
		for _, avID := range splitList(n.IALAttr(avAttrAvs)) {
			err := k.editAV(avID, func(av *wire.AttributeView) error {
				bkv := avBlockKeyValues(av)
				if bkv == nil {
					return errAVNoSave
				}
				for i, v := range bkv.Values {
					if v.Block != nil && v.Block.ID == n.ID {
						bkv.Values = append(bkv.Values[:i], bkv.Values[i+1:]...)
						return nil
					}
				}
				return errAVNoSave
			})
			if err != nil {
				k.log.Warn("remove a deleted block's row", "av", avID, "block", n.ID, "err", err)
			}
		}
	}
	for _, n := range dbBlocks {
		if len(k.mirrorBlocks(n.AttributeViewID)) > 1 {
			continue // another block still shows the database
		}
		av, err := k.loadAV(n.AttributeViewID)
		if err != nil {
			continue
		}
		if bkv := avBlockKeyValues(av); bkv != nil {
			for _, v := range bkv.Values {
				if v.IsDetached || v.Block == nil || v.Block.ID == "" {
					continue
				}
				if err := k.unbindBlock(av.ID, v.Block.ID); err != nil {
					k.log.Warn("unbind a row of a deleted database block", "av", av.ID, "block", v.Block.ID, "err", err)
				}
			}
		}
	}
}
