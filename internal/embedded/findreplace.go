package embedded

import (
	"context"

	"github.com/88250/lute/ast"
	"github.com/88250/lute/parse"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/mdexport"
)

// findReplace is /api/search/findReplace, SiYuan 3.7.3's FindReplace: each
// id's block is walked and the node kinds that replaceTypes enables have
// the keyword replaced (without replaceTypes nothing is). A document id
// changes only its title and tags (docTitle). With no ids, every block the
// keyword finds is replaced. Search is case-insensitive (SiYuan's default
// conf.search.caseSensitive false) in text only.
func (k *Kernel) findReplace(ctx context.Context, a args) (any, error) {
	keyword, err := a.str("k")
	if err != nil {
		return nil, err
	}
	replacement, err := a.str("r")
	if err != nil {
		return nil, err
	}
	ids, err := a.strList("ids")
	if err != nil {
		return nil, err
	}
	var sa searchArgs
	for key, dst := range map[string]*int{"method": &sa.method, "orderBy": &sa.orderBy, "groupBy": &sa.groupBy} {
		if *dst, err = a.optInt(key, 0); err != nil {
			return nil, err
		}
	}
	types := map[string]bool{}
	if a["replaceTypes"] != nil {
		m, err := a.obj("replaceTypes")
		if err != nil {
			return nil, err
		}
		for t, v := range m {
			b, ok := v.(bool)
			if !ok {
				return nil, errf("argument [replaceTypes] must map names to booleans")
			}
			types[t] = b
		}
	}
	closing := map[string]any{"closeTimeout": 5000}
	switch {
	case sa.method == 2:
		return nil, &apiError{code: 1, msg: "SQL search mode does not support the replace operation, please use another search method", data: closing}
	case sa.groupBy != 0:
		return nil, &apiError{code: 1, msg: "The replacement operation is not supported after grouping by document. Please use ungrouping and then replace", data: closing}
	case keyword == replacement:
		return nil, nil
	}
	if sa.method == 1 {
		sa.method = 0 // the keyword is already the query's result keyword
	}
	if len(ids) == 0 {
		sa.query, sa.page, sa.pageSize = keyword, 1, 1<<30
		blocks, _, _, _, err := k.sql.search(ctx, &sa)
		if err != nil {
			return nil, err
		}
		for _, b := range blocks {
			ids = append(ids, b.ID)
		}
	}
	fr := newReplacer(keyword, replacement, sa.method, types)
	trees := map[string]*parse.Tree{}
	var order []string
	renames := map[string]string{}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		loc, ok := k.lookup(id)
		if !ok {
			continue
		}
		tree := trees[loc.Root]
		if tree == nil {
			if tree, err = k.loadTree(loc.Root); err != nil {
				continue
			}
			trees[loc.Root] = tree
			order = append(order, loc.Root)
		}
		node := mdexport.NodeByID(tree.Root, id)
		if node == nil {
			continue
		}
		if node.Type == ast.NodeDocument {
			if title, ok := fr.docTitle(node); ok {
				renames[node.ID] = title
			}
			continue
		}
		fr.block(node)
	}
	for _, root := range order {
		if err := k.writeTree(trees[root]); err != nil {
			return nil, err
		}
	}
	for id, title := range renames {
		if _, err := k.renameDocByID(ctx, args{"id": id, "title": title}); err != nil {
			return nil, err
		}
	}
	return nil, nil
}
