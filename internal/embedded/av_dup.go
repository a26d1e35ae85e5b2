package embedded

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/88250/lute/ast"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// avDuplicate is model.DuplicateDatabaseBlock: a copy of the database file
// with every occurrence of its ID replaced by a new one (keys, views and
// rows keep their IDs), named "<name> (Duplicated <time>)" when it has a
// name, its two-way relations made one-way, written as is, and its bound
// blocks bound to the copy too. It answers the new ID and a new block ID
// for the database block the caller is to insert; no block is inserted.
// Callers hold writeMu.
func (k *Kernel) avDuplicate(avID string) (newAvID, newBlockID string, err error) {
	k.avMu.Lock()
	defer k.avMu.Unlock()
	old, err := k.readAV(avID)
	if err != nil {
		return "", "", err
	}
	data, err := os.ReadFile(k.avPath(avID))
	if err != nil {
		return "", "", fmt.Errorf("read attribute view [%s] failed: %w", avID, err)
	}
	newAvID, newBlockID = ast.NewNodeID(), ast.NewNodeID()
	data = bytes.ReplaceAll(data, []byte(avID), []byte(newAvID))
	dup := &wire.AttributeView{}
	if err := json.Unmarshal(data, dup); err != nil {
		return "", "", err
	}
	if dup.Name != "" {
		dup.Name = old.Name + " (Duplicated " + time.Now().Format("2006-01-02 15:04:05") + ")"
	}
	for _, kv := range dup.KeyValues {
		if kv != nil && kv.Key != nil && kv.Key.Relation != nil && kv.Key.Relation.IsTwoWay {
			kv.Key.Relation.IsTwoWay, kv.Key.Relation.BackKeyID = false, ""
		}
	}
	if data, err = json.Marshal(dup); err != nil {
		return "", "", err
	}
	if err := writeFileAtomic(k.avPath(newAvID), data, 0o644); err != nil {
		return "", "", err
	}
	if bkv := avBlockKeyValues(dup); bkv != nil {
		for _, v := range bkv.Values {
			if v.IsDetached || v.Block == nil || v.Block.ID == "" {
				continue
			}
			if err := k.bindBlock(newAvID, v.Block.ID); err != nil {
				return "", "", err
			}
		}
	}
	return newAvID, newBlockID, nil
}
