// Package av is the av tool: SiYuan's databases (attribute views) —
// read one whole, render a view as a compact table, list columns, filters
// and sorts, primary-key values, search databases by name; rename a
// database, add and remove rows and columns, set cells — with upstream
// Sisyphus's action names and arguments.
//
// A database belongs to no notebook of its own: it lives in
// data/storage/av/<avID>.json and is shown in documents by database blocks
// (several blocks may show one: mirrors). Its permission is that of every
// notebook holding a block that shows it, resolved with
// getMirrorDatabaseBlocks; a database no block shows is refused, since no
// notebook's permission covers it.
package av

import (
	"context"
	"crypto/rand"
	"fmt"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// Tool returns the av tool.
func Tool() *tools.Tool {
	return &tools.Tool{
		Name:  "av",
		Title: "Databases (attribute views)",
		Description: "SiYuan's databases (attribute views): get one whole, render a view as a compact table, list its columns, " +
			"filters and sorts or primary-key values, search databases by name; rename a database, add rows (bound to blocks or " +
			"detached), remove rows, add and remove columns, set cells; create a database (create, or render with createIfNotExist:true) and duplicate one; shape the view a database block shows (add_view, filters, sorts, group, column visibility and order). Row IDs (rowID, srcIDs) are the database's item IDs, not block IDs. " +
			"Writes are strict: call with validateOnly:true first, then repeat with the requestId (and the credential) it returns.",
		Actions: []*tools.Action{
			get.Action(), render.Action(), getKeys.Action(), getFilterSort.Action(), search.Action(), getPrimaryKeyValues.Action(),
			rename.Action(), addColumn.Action(), addRows.Action(), setCells.Action(), removeRows.Action(), removeColumn.Action(),
			create.Action(), duplicate.Action(),
			addView.Action(), setFilters.Action(), setSorts.Action(), setGroup.Action(), setColumnVisibility.Action(), setColumnOrder.Action(),
			setColumnOptions.Action(), duplicateRows.Action(), setNewItemTemplates.Action(), createFromTemplate.Action(),
			configureTwoWayAction.Action(), configureRollupAction.Action(), setRelationAction.Action(),
		},
	}
}

// dbTouches resolves a database to the database blocks showing it, each
// needing the level in its notebook. A database no block shows cannot be
// placed in a notebook: refused (not_found when it does not exist at all).
// A block in a notebook hidden from agents does not count: a database
// shown only there is not found, as one that does not exist.
func dbTouches(ctx context.Context, env *tools.Env, avID string, need tools.Level) ([]tools.Touch, error) {
	blocks, err := env.Kernel.GetMirrorDatabaseBlocks(ctx, avID)
	if err != nil {
		return nil, fmt.Errorf("find the blocks showing database %s: %w", avID, err)
	}
	if len(blocks) > 0 && tools.Hiding(ctx) {
		shown, err := tools.VisibleBlocks(ctx, env, blocks)
		if err != nil {
			return nil, err
		}
		if len(shown) == 0 {
			return nil, failure.Missing("database", avID)
		}
		blocks = shown
	}
	if len(blocks) == 0 {
		av, err := env.Kernel.GetAttributeView(ctx, avID)
		if err != nil {
			return nil, fmt.Errorf("read database %s: %w", avID, err)
		}
		if av == nil {
			return nil, failure.Missing("database", avID)
		}
		e := failure.New(failure.PermissionDenied, "database %s is shown by no database block, so no notebook's permission covers it; nothing was run", avID)
		e.Action = "insert a database block for it in a document (SiYuan's editor), then call again"
		return nil, e.Attempted(false)
	}
	out := make([]tools.Touch, 0, len(blocks))
	for _, b := range blocks {
		out = append(out, tools.OnBound(b, need)) // a block gone since is passed over
	}
	return out, nil
}

// ctxBlock is upstream's blockID of a write: the database block the call
// means, which must show the database. Permission is still that of every
// notebook showing the database, as without it.
type ctxBlock struct {
	BlockID string `arg:"blockID" help:"a database block showing the database (upstream's exact context); refused when it does not show avID. The permission needed is still that of every notebook showing the database" id:""`
}

// dbTouchesAt is dbTouches that first refuses a blockID not showing the
// database.
func dbTouchesAt(ctx context.Context, env *tools.Env, avID, blockID string, need tools.Level) ([]tools.Touch, error) {
	ts, err := dbTouches(ctx, env, avID, need)
	if err != nil || blockID == "" {
		return ts, err
	}
	if _, err := checkBlock(ctx, env, avID, blockID); err != nil {
		return nil, err
	}
	return ts, nil
}

// scopeOn is the scope of an action on one database.
func scopeOn[A any](avID func(A) string, need tools.Level) tools.Scope[A] {
	return tools.Scope[A]{Resolve: func(ctx context.Context, env *tools.Env, a A) ([]tools.Touch, error) {
		return dbTouches(ctx, env, avID(a), need)
	}}
}

// avRef is the database named by avID or its alias id (upstream's
// names); AvID is the one given, once Validate resolved it.
type avRef struct {
	Given string `arg:"avID" help:"the database (attribute view), as data-av-id shows it on its database block" id:""`
	Alias string `arg:"id" help:"alias of avID" id:""`
	AvID  string
}

// resolve reads the database's ID from avID or its alias id.
func (r *avRef) resolve() error {
	id, alias := r.Alias, r.Given
	switch {
	case id != "" && alias != "" && id != alias:
		return failure.Invalid("id and avID name the same database; pass one of them")
	case id == "":
		id = alias
	}
	if id == "" {
		return failure.Invalid("missing argument \"avID\" (the database's ID; id is an alias)")
	}
	r.AvID = id
	return nil
}

// dbArg is the database an action on one database takes by avID alone.
type dbArg struct {
	AvID string `arg:"avID" help:"the database" id:"" required:""`
}

// newID is a fresh SiYuan ID for a key or a row the kernel would otherwise
// name without saying which: pinned IDs let the readback find exactly what
// was added.
func newID() string {
	const alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 7)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return time.Now().Format("20060102150405") + "-" + string(b)
}

// exists refuses an action on a database whose file does not exist.
func exists(st DBState) error {
	if st.Missing {
		return failure.Missing("database", st.ID)
	}
	return nil
}
