package embedded

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/88250/lute/ast"
	"github.com/88250/lute/parse"
)

// sqlRefRow is one row of refs: a block ref held by a block, as SiYuan's
// refsFromTree builds it (each holder counts a target once).
type sqlRefRow struct {
	ID, DefBlockID, DefBlockParentID, DefBlockRootID, DefBlockPath, BlockID, RootID, Box, Path, Content, Markdown, Type string
}

// sqlRefRowsOf walks a document for its block refs. The target's parent,
// document and path come from the block tree; a target that is no block
// leaves them empty.
func (k *Kernel) sqlRefRowsOf(tree *parse.Tree) []sqlRefRow {
	var rows []sqlRefRow
	seen := map[[2]string]bool{}
	ast.Walk(tree.Root, func(n *ast.Node, entering bool) ast.WalkStatus {
		if entering || n.Type != ast.NodeTextMark || !n.IsTextMarkType("block-ref") {
			return ast.WalkContinue
		}
		holder := parentBlockOf(n)
		if holder == nil {
			return ast.WalkContinue
		}
		def := n.TextMarkBlockRefID
		if seen[[2]string{def, holder.ID}] {
			return ast.WalkContinue
		}
		seen[[2]string{def, holder.ID}] = true
		r := sqlRefRow{ID: ast.NewNodeID(), DefBlockID: def, BlockID: holder.ID, RootID: tree.ID, Box: tree.Box, Path: tree.Path,
			Content: n.TextMarkTextContent, Type: "textmark"}
		if loc, ok := k.lookup(def); ok {
			r.DefBlockRootID, r.DefBlockPath = loc.Root, loc.Path
			if _, dn, err := k.viewOf(def); err == nil {
				if p := parentBlockOf(dn); p != nil {
					r.DefBlockParentID = p.ID
				}
			}
		}
		// Only the block-ref type, so that other marks on the span do not
		// change its Markdown.
		typ := n.TextMarkType
		n.TextMarkType = "block-ref"
		r.Markdown = sqlMarkdown(n)
		n.TextMarkType = typ
		rows = append(rows, r)
		return ast.WalkContinue
	})
	return rows
}

// sqlWriteRefs replaces a document's refs rows inside the index's
// transaction (all: the table was wiped).
func sqlWriteRefs(ctx context.Context, tx *sql.Tx, rootID string, rows []sqlRefRow, all bool) error {
	if !all {
		if _, err := tx.ExecContext(ctx, "DELETE FROM refs WHERE root_id = ?", rootID); err != nil {
			return fmt.Errorf("SQL index: delete refs %s: %w", rootID, err)
		}
	}
	for _, r := range rows {
		if _, err := tx.ExecContext(ctx, "INSERT INTO refs (id, def_block_id, def_block_parent_id, def_block_root_id, def_block_path, block_id, root_id, box, path, content, markdown, type) "+
			"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", r.ID, r.DefBlockID, r.DefBlockParentID, r.DefBlockRootID, r.DefBlockPath,
			r.BlockID, r.RootID, r.Box, r.Path, r.Content, r.Markdown, r.Type); err != nil {
			return fmt.Errorf("SQL index: insert ref of %s: %w", r.BlockID, err)
		}
	}
	return nil
}
