package embedded

import (
	"context"
	"html"
	"path"
	"strings"

	"github.com/88250/lute/ast"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/mdexport"
	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// refSearchTypes is SiYuan's default conf.search type filter.
const refSearchTypes = "('d','h','c','m','t','p','html','av')"

// searchRefBlock is /api/search/searchRefBlock, SiYuan's SearchRefBlock:
// the candidates a block ref typed in block id of document rootID can
// point at. Without a keyword, the blocks referenced most recently (each
// once); with one, the blocks whose text, name, alias or memo hold it,
// names and documents first, without the block itself, its document and
// a container whose first leaf it is. Arguments SiYuan reads unchecked
// answer just the reqId when missing, as its panic leaves the reply.
func (k *Kernel) searchRefBlock(ctx context.Context, a args) (any, error) {
	partial := map[string]any{"reqId": a["reqId"]}
	if a["id"] == nil {
		return partial, nil
	}
	isSquare, err1 := a.optBool("isSquareBrackets")
	isDatabase, err2 := a.optBool("isDatabase")
	rootID, ok1 := a["rootID"].(string)
	id, ok2 := a["id"].(string)
	keyword, ok3 := a["k"].(string)
	_, ok4 := a["beforeLen"]
	if err1 != nil || err2 != nil || !ok1 || !ok2 || !ok3 || !ok4 {
		return partial, nil
	}
	_ = isSquare // conf.editor.onlySearchForDoc is off by default
	beforeLen, err := a.optInt("beforeLen", 0)
	if err != nil {
		return partial, nil
	}
	keyword = strings.Map(func(r rune) rune {
		if r == '\u200b' || r == '\u200c' || r == '\u200d' || r == '\ufeff' {
			return -1
		}
		return r
	}, keyword)
	var blocks []*wire.Block
	newDoc := false
	if keyword == "" {
		if blocks, err = k.recentRefBlocks(ctx); err != nil {
			return nil, err
		}
	} else {
		if blocks, err = k.refCandidates(ctx, keyword, beforeLen); err != nil {
			return nil, err
		}
		kept := blocks[:0]
		for _, b := range blocks {
			if b.Type == "NodeAttributeView" || b.ID != id && b.ID != rootID && !k.firstLeafIs(b, id) {
				kept = append(kept, b)
			}
		}
		blocks = kept
		if isDatabase {
			newDoc = true
		} else if loc, ok := k.lookup(id); ok {
			if d, ok := k.doc(loc.Root); ok {
				hp := path.Join(k.hpathOf(d.Box, d.Path, d.Title), keyword)
				newDoc = len(k.docsByHPath(loc.Box, hp)) == 0
			}
		}
	}
	if err := k.refCounts(ctx, blocks); err != nil {
		return nil, err
	}
	names := map[string]string{}
	for _, b := range blocks {
		name, ok := names[b.Box]
		if !ok {
			if c, err := k.readBoxConf(b.Box); err == nil {
				name = c.Name
			}
			names[b.Box] = name
		}
		b.HPath = html.EscapeString(name) + b.HPath
		if b.Type == "NodeDocument" {
			b.HPath = strings.TrimSuffix(b.HPath, path.Base(b.HPath))
		}
	}
	if blocks == nil {
		blocks = []*wire.Block{}
	}
	return map[string]any{"blocks": blocks, "newDoc": newDoc, "k": html.EscapeString(keyword), "reqId": a["reqId"]}, nil
}

// firstLeafIs: b is a container (not a document) whose first leaf is id.
func (k *Kernel) firstLeafIs(b *wire.Block, id string) bool {
	if b.Type == "NodeDocument" {
		return false
	}
	_, n, err := k.viewOf(b.ID)
	if err != nil || !n.IsContainerBlock() {
		return false
	}
	leaf := mdexport.FirstLeafBlock(n)
	return leaf != nil && leaf.ID == id
}

// refText is SiYuan's getBlockRefText: the name attribute, else the block's
// text (a document's title), at most 96 characters.
func (k *Kernel) refText(id string) string {
	_, n, err := k.viewOf(id)
	if err != nil {
		return ""
	}
	if name := strings.TrimSpace(n.IALAttr("name")); name != "" {
		return searchMaxContent(html.EscapeString(name), 96)
	}
	return searchMaxContent(k.nodeRefText(n), 96)
}

// refCandidates is fullTextSearchRefBlock: one block by an id the keyword
// holds, else the FTS (or, without FTS5, LIKE) matches ranked as SiYuan
// ranks them, at most 64.
func (k *Kernel) refCandidates(ctx context.Context, keyword string, beforeLen int) ([]*wire.Block, error) {
	if id := extractNodeID(keyword); id != "" {
		blocks, _, _, err := k.sql.searchSQL(ctx, "SELECT * FROM blocks WHERE id = '"+id+"'", 1, 32)
		for _, b := range blocks {
			b.RefText = k.refText(b.ID)
		}
		return blocks, err
	}
	q := strings.ReplaceAll(keyword, "'", "''")
	rank := " ORDER BY CASE WHEN name = '" + q + "' THEN 10 WHEN alias = '" + q + "' THEN 20 WHEN memo = '" + q + "' THEN 30" +
		" WHEN content = '" + q + "' and type = 'd' THEN 40 WHEN content LIKE '%" + q + "%' and type = 'd' THEN 41" +
		" WHEN name LIKE '%" + q + "%' THEN 50 WHEN alias LIKE '%" + q + "%' THEN 60 WHEN content = '" + q + "' and type = 'h' THEN 70" +
		" WHEN content LIKE '%" + q + "%' and type = 'h' THEN 71 WHEN fcontent = '" + q + "' and type = 'i' THEN 80" +
		" WHEN fcontent LIKE '%" + q + "%' and type = 'i' THEN 81 WHEN memo LIKE '%" + q + "%' THEN 90" +
		" WHEN content LIKE '%" + q + "%' and type != 'i' and type != 'l' THEN 100 ELSE 65535 END ASC, sort ASC, length ASC"
	mark := func(t string, _ bool) string { return searchShorten(searchMarked(t), beforeLen) }
	var blocks []*wire.Block
	var err error
	if k.sql.fts {
		match := "{content name alias memo tag}:(" + assetQuery(keyword) + ")"
		blocks, _, _, _, err = k.sql.searchWhere(ctx, "blocks_fts", "blocks_fts MATCH ? AND type IN "+refSearchTypes, []any{match}, rank, " LIMIT 64", mark)
		if err != nil {
			return nil, nil // a malformed query finds nothing, as in SiYuan
		}
	} else {
		like := searchLikeArg(keyword)
		blocks, _, _, _, err = k.sql.searchWhere(ctx, "blocks", "(content LIKE ? ESCAPE '\\' OR name LIKE ? ESCAPE '\\' OR alias LIKE ? ESCAPE '\\' OR memo LIKE ? ESCAPE '\\' OR tag LIKE ? ESCAPE '\\') AND type IN "+refSearchTypes,
			[]any{like, like, like, like, like}, rank, " LIMIT 64", func(t string, _ bool) string { return searchMarkTerms(t, []string{keyword}, beforeLen) })
		if err != nil {
			return nil, err
		}
	}
	for _, b := range blocks {
		b.RefText = k.refText(b.ID)
	}
	return blocks, nil
}

// extractNodeID is SiYuan's extractID: the first node id inside s.
func extractNodeID(s string) string {
	for i := 0; i+22 <= len(s); i++ {
		if ast.IsNodeIDPattern(s[i : i+22]) {
			return s[i : i+22]
		}
	}
	return ""
}

// recentRefBlocks is the keyword-less candidate list: the targets of the
// newest refs (one per target, at most 32), from their trees, without
// highlights.
func (k *Kernel) recentRefBlocks(ctx context.Context) ([]*wire.Block, error) {
	rows, err := k.sql.db.QueryContext(ctx, "SELECT r.def_block_id FROM refs AS r, blocks AS b WHERE b.id = r.def_block_id AND b.type IN "+
		refSearchTypes+" GROUP BY r.def_block_id ORDER BY MAX(r.id) DESC LIMIT 32")
	if err != nil {
		return nil, err
	}
	var defs []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		defs = append(defs, id)
	}
	rows.Close()
	var out []*wire.Block
	for _, id := range defs {
		tree, n, err := k.viewOf(id)
		if err != nil {
			continue
		}
		row := sqlBlockOf(n, tree)
		b := searchBlockOf(map[string]any{"id": row.ID, "parent_id": row.ParentID, "root_id": row.RootID, "box": row.Box, "path": row.Path,
			"hpath": row.HPath, "name": row.Name, "alias": row.Alias, "memo": row.Memo, "tag": row.Tag, "content": row.Content,
			"fcontent": row.FContent, "markdown": row.Markdown, "type": row.Type, "subtype": row.SubType, "ial": row.IAL, "sort": int64(row.Sort)},
			func(t string, _ bool) string { return searchEscape(t) })
		b.RefText = k.refText(id)
		out = append(out, b)
	}
	return out, nil
}

// refCounts sets each block's refCount: the refs that point at it.
func (k *Kernel) refCounts(ctx context.Context, blocks []*wire.Block) error {
	for _, b := range blocks {
		if err := k.sql.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM refs WHERE def_block_id = ?", b.ID).Scan(&b.RefCount); err != nil {
			return err
		}
	}
	return nil
}
