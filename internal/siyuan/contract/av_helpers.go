package contract

// Databases (attribute views): helpers of the av checks. Each check makes
// its own database blocks in a document of the suite's notebook and its
// database files in data/storage/av/, removed when the check ends.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// avDB is a database made by a check: the document and block showing it,
// and the IDs of its primary key and of the select key every new database
// has.
type avDB struct {
	doc, block, av string
	pk, sel        string
}

// removeAV removes a database file when the check ends.
func (s *suite) removeAV(t *testing.T, avID string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.c.RemoveFile(ctx, "/data/storage/av/"+avID+".json"); err != nil && !errors.Is(err, siyuan.ErrFileNotFound) {
			t.Errorf("cleanup: RemoveFile(av %s): %v", avID, err)
		}
	})
}

// tx submits one transaction of the operations.
func (s *suite) tx(t *testing.T, ops ...siyuan.Operation) []siyuan.Transaction {
	t.Helper()
	txs, err := s.c.Transactions(t.Context(), []siyuan.Transaction{{DoOperations: ops}})
	must(t, "Transactions", err)
	return txs
}

// newDB makes a document holding a paragraph per text (after the
// database block) and a database shown by a block first in it, as the
// editor makes one: an insert of the block's DOM, then a render that
// creates the file.
func (s *suite) newDB(t *testing.T, texts ...string) (avDB, []string) {
	t.Helper()
	if len(texts) == 0 {
		texts = []string{"row block"}
	}
	doc, paras := s.docWithParas(t, "db-"+randWord(8), texts...)
	db := avDB{doc: doc, block: freshID(), av: freshID()}
	s.removeAV(t, db.av)
	txs := s.tx(t, siyuan.InsertDatabaseBlockOp(db.block, db.av, "", doc))
	if op := oneInsert(t, txs); op.ID != db.block || op.ParentID != doc {
		t.Fatalf("insert database block: operation %+v", op)
	}
	r, err := s.c.RenderAttributeViewOrCreate(t.Context(), siyuan.RenderAVRequest{ID: db.av, BlockID: db.block})
	must(t, "RenderAttributeViewOrCreate", err)
	if len(r.View.Columns) != 2 {
		t.Fatalf("new database columns = %+v", r.View.Columns)
	}
	db.pk, db.sel = r.View.Columns[0].ID, r.View.Columns[1].ID
	return db, paras
}

// addCols adds keys after the select key, in order: name → type.
func (s *suite) addCols(t *testing.T, db avDB, cols ...[3]string) {
	t.Helper()
	prev := db.sel
	var ops []siyuan.Operation
	for _, c := range cols { // id, name, type
		ops = append(ops, siyuan.AddAttrViewColOp(db.av, c[0], c[1], c[2], "", prev))
		prev = c[0]
	}
	s.tx(t, ops...)
}

func (s *suite) render(t *testing.T, req siyuan.RenderAVRequest) siyuan.AVRender {
	t.Helper()
	r, err := s.c.RenderAttributeView(t.Context(), req)
	must(t, "RenderAttributeView", err)
	return r
}

func (s *suite) storedAV(t *testing.T, avID string) *siyuan.AttributeView {
	t.Helper()
	av, err := s.c.GetAttributeView(t.Context(), avID)
	must(t, "GetAttributeView", err)
	if av == nil {
		t.Fatalf("GetAttributeView(%s) = nil", avID)
	}
	return av
}

func rowIDs(r siyuan.AVRender) []string {
	var ids []string
	for _, row := range r.View.Rows {
		ids = append(ids, row.ID)
	}
	return ids
}

// cellOf is the rendered cell of an item in a column.
func cellOf(t *testing.T, r siyuan.AVRender, itemID, keyID string) *siyuan.AVCell {
	t.Helper()
	for _, row := range r.View.Rows {
		if row.ID != itemID {
			continue
		}
		for _, c := range row.Cells {
			if c.Value != nil && c.Value.KeyID == keyID {
				return c
			}
		}
	}
	t.Fatalf("no cell of item %s in key %s in %s", itemID, keyID, renderText(r))
	return nil
}

// cellText is a cell's value as comparable text: the type, then the part
// of that type as JSON, with the names given for IDs; times are left out.
func cellText(v *siyuan.AVValue, names map[string]string) string {
	if v == nil {
		return "nil"
	}
	c := *v
	c.ID, c.KeyID, c.BlockID, c.CreatedAt, c.UpdatedAt = "", "", "", 0, 0
	if c.Block != nil {
		b := *c.Block
		b.Created, b.Updated = 0, 0
		c.Block = &b
	}
	if c.Relation != nil {
		r := *c.Relation
		var contents []*siyuan.AVValue
		for _, x := range r.Contents {
			y := &siyuan.AVValue{Type: x.Type, BlockID: x.BlockID}
			if x.Block != nil {
				b := *x.Block
				b.Created, b.Updated = 0, 0
				y.Block = &b
			}
			contents = append(contents, y)
		}
		r.Contents = contents
		c.Relation = &r
	}
	data, _ := json.Marshal(c)
	return anyIDRe.ReplaceAllStringFunc(string(data), func(id string) string {
		if n, ok := names[id]; ok {
			return n
		}
		return "ID?"
	})
}

// renderText is a render's rows for failure messages.
func renderText(r siyuan.AVRender) string {
	var b strings.Builder
	for _, row := range r.View.Rows {
		fmt.Fprintf(&b, "\n  row %s:", row.ID)
		for _, c := range row.Cells {
			fmt.Fprintf(&b, " %s", cellText(c.Value, nil))
		}
	}
	return b.String()
}

// keyNames are a database's keys as "name:type", in stored order.
func keyNames(av *siyuan.AttributeView) []string {
	var ks []string
	for _, kv := range av.KeyValues {
		ks = append(ks, kv.Key.Name+":"+kv.Key.Type)
	}
	return ks
}

// viewColumns are the IDs of a view's table columns.
func viewColumns(v *siyuan.AVView) []string {
	var ids []string
	if v.Table != nil {
		for _, c := range v.Table.Columns {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	sort.Strings(c)
	return c
}

func wantEqual[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Fatalf("%s:\n got %v\nwant %v", what, got, want)
	}
}

var dupNameRe = regexp.MustCompile(`^Original \(Duplicated \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\)$`)

var nodeIndexRe = regexp.MustCompile(` data-node-index="\d+"`)

// treeAttrs are a block's attributes as its document holds them, read
// from its kramdown. SiYuan's getBlockAttrs answers from a cache that
// binding a block to a database (custom-avs, static texts) does not
// always refresh: it may keep answering the attributes from before.
func (s *suite) treeAttrs(t *testing.T, id string) map[string]string {
	t.Helper()
	k := s.kramdown(t, id)
	m := map[string]string{}
	all := ialRe.FindAllStringSubmatch(k, -1)
	if len(all) == 0 {
		t.Fatalf("kramdown of %s has no IAL: %q", id, k)
	}
	for _, a := range attrRe.FindAllStringSubmatch(all[len(all)-1][1], -1) {
		m[a[1]] = html.UnescapeString(a[2])
	}
	return m
}
