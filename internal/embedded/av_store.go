package embedded

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/88250/lute/ast"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// Attribute views (databases) live in data/storage/av/<avID>.json, one
// single-line JSON file each, in SiYuan 3.7.3's format (spec 5, see
// wire.AttributeView). The file is the only state: every call reads it
// and every change rewrites it, as SiYuan does (its cache only saves the
// read). avMu serialises the read-modify-write cycles, also those of
// endpoints that read but persist corrections (render, getAttributeViewKeys).

// avSpec is the format version SiYuan 3.7.3 writes.
const avSpec = 5

// avDefaultPageSize is SiYuan's ViewDefaultPageSize.
const avDefaultPageSize = 50

// Errors of kernel/av, with the kernel's texts.
var (
	errAVViewNotFound = errors.New("view not found") // also: no such database file
	errAVNotFound     = errors.New("attribute view not found")
	errAVInvalidID    = errors.New("invalid attribute view id")
	errAVKeyNotFound  = errors.New("key not found")
	errAVSpecTooNew   = errors.New("attribute view spec is too new")
)

// The English names SiYuan gives new views and keys (its _attrView
// language strings) and its name for an unnamed database.
const (
	avLangTable    = "Table"
	avLangKey      = "Primary Key"
	avLangSelect   = "Select"
	avLangUntitled = "Untitled"
)

func (k *Kernel) avDir() string { return filepath.Join(k.dataDir, "storage", "av") }

func (k *Kernel) avPath(id string) string { return filepath.Join(k.avDir(), id+".json") }

// avExists reports whether a database file exists.
func (k *Kernel) avExists(id string) bool {
	if !validID(id) {
		return false
	}
	_, err := os.Stat(k.avPath(id))
	return err == nil
}

// readAV reads and parses a database file, as ParseAttributeView: a
// malformed id is errAVInvalidID, a missing file errAVViewNotFound.
// loadAV reads a database under avMu, for a handler that only reads it.
func (k *Kernel) loadAV(id string) (*wire.AttributeView, error) {
	k.avMu.Lock()
	defer k.avMu.Unlock()
	return k.readAV(id)
}

func (k *Kernel) readAV(id string) (*wire.AttributeView, error) {
	if !validID(id) {
		return nil, errAVInvalidID
	}
	data, err := os.ReadFile(k.avPath(id))
	if errors.Is(err, os.ErrNotExist) {
		return nil, errAVViewNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("read attribute view [%s] failed: %w", id, err)
	}
	return parseAV(data)
}

// parseAV decodes a database file. It never panics on outside input; a
// spec newer than 3.7.3's is refused as the kernel refuses it.
func parseAV(data []byte) (*wire.AttributeView, error) {
	av := &wire.AttributeView{}
	if err := json.Unmarshal(data, av); err != nil {
		return nil, err
	}
	if av.Spec > avSpec {
		return nil, errAVSpecTooNew
	}
	// Drop what the kernel's code would dereference and crash on: keys
	// without a key, null values and views.
	av.KeyValues = slices.DeleteFunc(av.KeyValues, func(kv *wire.AVKeyValues) bool { return kv == nil || kv.Key == nil })
	for _, kv := range av.KeyValues {
		kv.Values = slices.DeleteFunc(kv.Values, func(v *wire.AVValue) bool { return v == nil })
	}
	av.Views = slices.DeleteFunc(av.Views, func(v *wire.AVView) bool { return v == nil })
	for _, v := range av.Views {
		if v.Table != nil {
			v.Table.Columns = slices.DeleteFunc(v.Table.Columns, func(c *wire.AVViewColumn) bool { return c == nil })
		}
		v.Filters = slices.DeleteFunc(v.Filters, func(f *wire.AVViewFilter) bool { return f == nil })
		v.Sorts = slices.DeleteFunc(v.Sorts, func(s *wire.AVViewSort) bool { return s == nil })
	}
	return av, nil
}

// encodeAV is SaveAttributeView's normalisation and encoding: the spec
// upgraded, duplicate rows of one item dropped, each view's row order
// without duplicates and its page size at least 1 (else 50).
func encodeAV(av *wire.AttributeView) ([]byte, error) {
	if !validID(av.ID) {
		return nil, errAVInvalidID
	}
	upgradeAVSpec(av)
	if bkv := avBlockKeyValues(av); bkv != nil {
		seen := map[string]bool{}
		bkv.Values = slices.DeleteFunc(bkv.Values, func(v *wire.AVValue) bool {
			dup := seen[v.BlockID]
			seen[v.BlockID] = true
			return dup
		})
	}
	for _, v := range av.Views {
		v.ItemIDs = dedupe(v.ItemIDs)
		if v.PageSize < 1 {
			v.PageSize = avDefaultPageSize
		}
	}
	return json.Marshal(av)
}

// saveAV writes a database file unless it already holds these bytes.
func (k *Kernel) saveAV(av *wire.AttributeView) error {
	data, err := encodeAV(av)
	if err != nil {
		return err
	}
	p := k.avPath(av.ID)
	if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, data) {
		return nil
	}
	if err := writeFileAtomic(p, data, 0o644); err != nil {
		return fmt.Errorf("save attribute view [%s] failed: %w", av.ID, err)
	}
	return nil
}

// upgradeAVSpec brings files of spec 2 to 4 up to 5 as SiYuan does: the
// filters of each view become one "and" root group. (Spec 0 and 1 files,
// written before 2024, are not upgraded further.)
func upgradeAVSpec(av *wire.AttributeView) {
	if av.Spec >= avSpec {
		return
	}
	for _, v := range av.Views {
		if len(v.Filters) == 1 && isFilterGroup(v.Filters[0]) {
			continue
		}
		var children []*wire.AVViewFilter
		for _, f := range v.Filters {
			if f != nil {
				children = append(children, f)
			}
		}
		v.Filters = []*wire.AVViewFilter{{Combination: "and", Filters: children}}
	}
	av.Spec = avSpec
}

func isFilterGroup(f *wire.AVViewFilter) bool {
	return f != nil && (f.Combination != "" || len(f.Filters) > 0)
}

// cloneJSON deep-copies a value through its JSON, as the kernel clones
// databases and values; nil when it does not encode.
func cloneJSON[T any](v *T) *T {
	data, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	c := new(T)
	if json.Unmarshal(data, c) != nil {
		return nil
	}
	return c
}

// newAV is av.NewAttributeView: a table view with a primary key and one
// select key, both shown.
func newAV(id string) *wire.AttributeView {
	blockKey := &wire.AVKey{ID: ast.NewNodeID(), Name: avLangKey, Type: wire.AVKeyBlock}
	view := newTableView(blockKey.ID)
	selectKey := &wire.AVKey{ID: ast.NewNodeID(), Name: avLangSelect, Type: wire.AVKeySelect}
	view.Table.Columns = append(view.Table.Columns, &wire.AVViewColumn{ID: selectKey.ID})
	return &wire.AttributeView{Spec: avSpec, ID: id,
		KeyValues: []*wire.AVKeyValues{{Key: blockKey}, {Key: selectKey}},
		ViewID:    view.ID, Views: []*wire.AVView{view}}
}

// newTableView is NewTableViewWithBlockKey's view: an empty "and" filter
// group, no sorts, 50 rows a page, the primary key as the only column.
func newTableView(blockKeyID string) *wire.AVView {
	return &wire.AVView{ID: ast.NewNodeID(), Name: avLangTable,
		Filters: []*wire.AVViewFilter{{Combination: "and"}}, Sorts: []*wire.AVViewSort{},
		PageSize: avDefaultPageSize, LayoutType: "table",
		Table: &wire.AVLayoutTable{ID: ast.NewNodeID(), ShowIcon: true,
			Columns: []*wire.AVViewColumn{{ID: blockKeyID}}}}
}

// ---------------------------------------------------------------- lookups

func avKeyValues(av *wire.AttributeView, keyID string) *wire.AVKeyValues {
	for _, kv := range av.KeyValues {
		if kv.Key.ID == keyID {
			return kv
		}
	}
	return nil
}

func avKey(av *wire.AttributeView, keyID string) *wire.AVKey {
	if kv := avKeyValues(av, keyID); kv != nil {
		return kv.Key
	}
	return nil
}

// avBlockKeyValues is the primary key's column.
func avBlockKeyValues(av *wire.AttributeView) *wire.AVKeyValues {
	for _, kv := range av.KeyValues {
		if kv.Key.Type == wire.AVKeyBlock {
			return kv
		}
	}
	return nil
}

// avValueOf is the cell of an item in a column, nil when it has none.
func avValueOf(kv *wire.AVKeyValues, itemID string) *wire.AVValue {
	for _, v := range kv.Values {
		if v.BlockID == itemID {
			return v
		}
	}
	return nil
}

// avBlockValue is an item's primary-key cell: the row itself.
func avBlockValue(av *wire.AttributeView, itemID string) *wire.AVValue {
	if bkv := avBlockKeyValues(av); bkv != nil {
		return avValueOf(bkv, itemID)
	}
	return nil
}

// avBoundValue is the row bound to a block.
func avBoundValue(av *wire.AttributeView, blockID string) *wire.AVValue {
	if bkv := avBlockKeyValues(av); bkv != nil {
		for _, v := range bkv.Values {
			if v.Block != nil && v.Block.ID == blockID {
				return v
			}
		}
	}
	return nil
}

func avViewByID(av *wire.AttributeView, id string) *wire.AVView {
	for _, v := range av.Views {
		if v.ID == id {
			return v
		}
	}
	return nil
}

// avCurrentView is GetCurrentView: the view asked for, else the current
// one, else the first.
func avCurrentView(av *wire.AttributeView, viewID string) (*wire.AVView, error) {
	if viewID != "" {
		if v := avViewByID(av, viewID); v != nil {
			return v, nil
		}
	}
	if v := avViewByID(av, av.ViewID); v != nil {
		return v, nil
	}
	if len(av.Views) == 0 {
		return nil, errAVViewNotFound
	}
	return av.Views[0], nil
}

// avName is the database's name, "Untitled" when it has none.
func avName(av *wire.AttributeView) string {
	if n := strings.TrimSpace(av.Name); n != "" {
		return n
	}
	return avLangUntitled
}
