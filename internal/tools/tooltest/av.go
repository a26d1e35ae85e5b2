package tooltest

import (
	"context"
	"crypto/rand"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// NewID is a fresh, well-formed SiYuan ID.
func NewID() string {
	const alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 7)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return time.Now().Format("20060102150405") + "-" + string(b)
}

// Database is a database made by MkDatabase: its database block, its ID,
// and the primary and select keys every new database has.
type Database struct {
	Block, AV       string
	Primary, Select string
}

// MkDatabase makes a database shown by a block first in parent (a
// document), as SiYuan's editor makes one: an insert of the block's DOM,
// then a render that writes the database file.
func (f *Fixture) MkDatabase(t testing.TB, parent string) Database {
	t.Helper()
	ctx := context.Background()
	db := Database{Block: NewID(), AV: NewID()}
	if _, err := f.C.Transactions(ctx, []siyuan.Transaction{{DoOperations: []siyuan.Operation{
		siyuan.InsertDatabaseBlockOp(db.Block, db.AV, "", parent)}}}); err != nil {
		t.Fatal(err)
	}
	r, err := f.C.RenderAttributeViewOrCreate(ctx, siyuan.RenderAVRequest{ID: db.AV, BlockID: db.Block})
	if err != nil {
		t.Fatal(err)
	}
	if r.View == nil || len(r.View.Columns) != 2 {
		t.Fatalf("new database: %+v", r.View)
	}
	db.Primary, db.Select = r.View.Columns[0].ID, r.View.Columns[1].ID
	return db
}
