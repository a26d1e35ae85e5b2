package embedded

import (
	"context"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// The batch forms of appendBlock, prependBlock and insertBlock. SiYuan
// 3.7.3 checks every entry first, in order (its ids, that a parent exists
// and can have children, its data), so one bad entry fails the call with
// that entry's message and nothing is applied; then it applies the entries
// in order, each as its own transaction, and answers the list of them. An
// empty list is applied as nothing: code 0 and null data.

// batchEntries reads the blocks argument. SiYuan does not check its type
// (a missing or wrong one answers code 0 and null data); we answer an error
// instead, worded as batchUpdateBlock's, so a caller learns what is wrong.
func batchEntries(a args) ([]args, error) {
	v, ok := a["blocks"]
	if !ok || v == nil {
		return nil, errf("Field [blocks] is required")
	}
	list, ok := v.([]any)
	if !ok {
		return nil, errf("Field [blocks] should be of type [Array]")
	}
	entries := make([]args, 0, len(list))
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, errf("argument [blocks] must be an array of objects")
		}
		entries = append(entries, args(m))
	}
	return entries, nil
}

func (k *Kernel) batchAppendBlock(ctx context.Context, a args) (any, error) {
	return k.batchPush(a, false)
}

func (k *Kernel) batchPrependBlock(ctx context.Context, a args) (any, error) {
	return k.batchPush(a, true)
}

// batchPush is batchAppendBlock/batchPrependBlock. Callers hold writeMu.
func (k *Kernel) batchPush(a args, prepend bool) (any, error) {
	entries, err := batchEntries(a)
	if err != nil || len(entries) == 0 {
		return nil, err
	}
	type push struct{ parentID, data string }
	pushes := make([]push, 0, len(entries))
	for _, e := range entries {
		parentID, data, err := k.pushArgs(e)
		if err != nil {
			return nil, err
		}
		pushes = append(pushes, push{parentID, data})
	}
	txs := make([]*wire.Transaction, 0, len(pushes))
	for _, p := range pushes {
		op, err := k.doPush(p.parentID, p.data, prepend)
		if err != nil {
			return nil, err
		}
		txs = append(txs, oneTx(op)...)
	}
	return txs, nil
}

// batchInsertBlock is insertBlock over a list. An entry whose anchor does
// not exist is answered, as insertBlock's, with an empty id and nothing
// inserted. Callers hold writeMu.
func (k *Kernel) batchInsertBlock(ctx context.Context, a args) (any, error) {
	entries, err := batchEntries(a)
	if err != nil || len(entries) == 0 {
		return nil, err
	}
	ops := make([]*wire.Operation, 0, len(entries))
	for _, e := range entries {
		op, err := k.insertOp(e)
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
	}
	txs := make([]*wire.Transaction, 0, len(ops))
	for _, op := range ops {
		if err := k.doInsert(op); err != nil {
			return nil, err
		}
		txs = append(txs, oneTx(op)...)
	}
	return txs, nil
}
