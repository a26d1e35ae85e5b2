package embedded

// The refs table of the SQL index: one row per block reference, as
// SiYuan's sql.refsFromTree builds it when it indexes a document.

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/88250/lute/ast"
	"github.com/88250/lute/parse"
)

type sqlRefRow struct {
	ID, DefBlockID, DefBlockParentID, DefBlockRootID, DefBlockPath string
	BlockID, RootID, Box, Path, Content, Markdown, Type            string
}

// sqlRefRowsOf lists a document's block references with where their
// targets live now (a target unknown to the block tree keeps empty
// location fields).
func (k *Kernel) sqlRefRowsOf(tree *parse.Tree) []sqlRefRow {
	var out []sqlRefRow
	// SiYuan keeps the first reference of a block to each target only.
	seen := map[[2]string]bool{}
	ast.Walk(tree.Root, func(n *ast.Node, entering bool) ast.WalkStatus {
		if !entering || n.Type != ast.NodeTextMark || !n.IsTextMarkType("block-ref") {
			return ast.WalkContinue
		}
		b := blockOf(n)
		if b == nil || seen[[2]string{b.ID, n.TextMarkBlockRefID}] {
			return ast.WalkContinue
		}
		seen[[2]string{b.ID, n.TextMarkBlockRefID}] = true
		r := sqlRefRow{ID: ast.NewNodeID(), DefBlockID: n.TextMarkBlockRefID, BlockID: b.ID, RootID: tree.ID,
			Box: tree.Box, Path: tree.Path, Content: n.TextMarkTextContent, Type: "textmark",
			Markdown: refMarkdown(n)}
		if loc, ok := k.lookup(n.TextMarkBlockRefID); ok {
			r.DefBlockRootID, r.DefBlockPath = loc.Root, loc.Path
			r.DefBlockParentID = k.parentIDOf(n.TextMarkBlockRefID, loc.Root, tree)
		}
		out = append(out, r)
		return ast.WalkContinue
	})
	return out
}

// refMarkdown is a reference's kramdown: ((id 'dynamic')) or ((id "static")).
func refMarkdown(n *ast.Node) string {
	q := "'"
	if n.TextMarkBlockRefSubtype == "s" {
		q = "\""
	}
	return "((" + n.TextMarkBlockRefID + " " + q + strings.ReplaceAll(n.TextMarkTextContent, q, "\\"+q) + q + "))"
}

// parentIDOf is the id of a block's parent (the document for a top-level
// block), looked up in tree when the block lives there.
func (k *Kernel) parentIDOf(id, root string, tree *parse.Tree) string {
	var holder *ast.Node
	if tree.ID == root {
		holder = nodeByID(tree.Root, id)
	} else if d, ok := k.doc(root); ok {
		holder = nodeByID(d.tree.Root, id)
	}
	if holder == nil || holder.Parent == nil {
		return ""
	}
	return holder.Parent.ID
}

// insertRefRows replaces the refs rows of one document.
func insertRefRows(ctx context.Context, tx *sql.Tx, d sqlDocRows, all bool) error {
	if !all {
		if _, err := tx.ExecContext(ctx, "DELETE FROM refs WHERE root_id = ?", d.rootID); err != nil {
			return fmt.Errorf("SQL index: delete refs %s: %w", d.rootID, err)
		}
	}
	for _, r := range d.refs {
		if _, err := tx.ExecContext(ctx, "INSERT INTO refs (id, def_block_id, def_block_parent_id, def_block_root_id, def_block_path, block_id, root_id, box, path, content, markdown, type) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			r.ID, r.DefBlockID, r.DefBlockParentID, r.DefBlockRootID, r.DefBlockPath, r.BlockID, r.RootID, r.Box, r.Path, r.Content, r.Markdown, r.Type); err != nil {
			return fmt.Errorf("SQL index: insert ref in %s: %w", r.BlockID, err)
		}
	}
	return nil
}
