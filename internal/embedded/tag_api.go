package embedded

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"unicode"

	"github.com/88250/lute/ast"
	"github.com/88250/lute/html"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
	"github.com/sisyphus-go/sisyphus/internal/siyuan/mdexport"
)

// The tag endpoints of SiYuan 3.7.3 (kernel/api/tag.go, model/tag.go),
// answered from the tag spans of the SQL index (tag_index.go), which they
// flush first as SiYuan does.

func (k *Kernel) tagRoutes() map[string]route {
	return map[string]route{
		endpoint.GetTag:    {json: k.getTag, emptyOK: true},
		endpoint.RenameTag: {json: k.renameTag},
		endpoint.RemoveTag: {json: k.removeTag},
		endpoint.SearchTag: {json: k.searchTag},
	}
}

// tagNode is one entry of getTag's tree.
type tagNode struct {
	Name     string     `json:"name"`
	Label    string     `json:"label"`
	Children []*tagNode `json:"children"`
	Type     string     `json:"type"`
	Depth    int        `json:"depth"`
	Count    int        `json:"count"`

	kids []*tagNode
}

// flushForTags makes the index current: the transaction queue, then the
// SQL queue (SiYuan's FlushTxQueue and sql.FlushQueue).
func (k *Kernel) flushForTags(ctx context.Context, locked bool) error {
	if !locked {
		k.writeMu.Lock()
		defer k.writeMu.Unlock()
	}
	k.applyPendingLocked()
	return k.sql.flush(ctx)
}

// tagSpanLabels counts the spans of each label (unescaped).
func (k *Kernel) tagSpanLabels(ctx context.Context) (map[string]int, error) {
	rows, err := k.sql.db.QueryContext(ctx, "SELECT content FROM spans WHERE type LIKE '%tag%'")
	if err != nil {
		return nil, fmt.Errorf("tags: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, fmt.Errorf("tags: %w", err)
		}
		out[html.UnescapeString(c)]++
	}
	return out, rows.Err()
}

func (k *Kernel) getTag(ctx context.Context, a args) (any, error) {
	sortVal, err := a.optInt("sort", 0)
	if err != nil {
		return nil, err
	}
	if _, err := a.optBool("ignoreMaxListHint"); err != nil {
		return nil, err
	}
	if _, err := a.optStr("app"); err != nil {
		return nil, err
	}
	if err := k.flushForTags(ctx, false); err != nil {
		return nil, err
	}
	labels, err := k.tagSpanLabels(ctx)
	if err != nil {
		return nil, err
	}
	var roots []*tagNode
	names := make([]string, 0, len(labels))
	for l := range labels {
		names = append(names, l)
	}
	sort.Strings(names) // map order must not decide the order of equal names
	for _, l := range names {
		roots = buildTagTree(roots, strings.Split(l, "/"), 0)
	}
	for _, t := range roots {
		t.Label = t.Name
		t.Count = labels[html.UnescapeString(t.Label)]
		tagChildren(t, labels, sortVal)
		sortTagNodes(t.Children, sortVal)
	}
	sortTagNodes(roots, sortVal)
	if roots == nil {
		roots = []*tagNode{}
	}
	return roots, nil
}

func buildTagTree(root []*tagNode, parts []string, depth int) []*tagNode {
	if len(parts) == 0 {
		return root
	}
	name := html.EscapeString(parts[0])
	i := 0
	for ; i < len(root); i++ {
		if root[i].Name == name {
			break
		}
	}
	if i == len(root) {
		root = append(root, &tagNode{Name: name, Type: "tag", Depth: depth})
	}
	root[i].kids = buildTagTree(root[i].kids, parts[1:], depth+1)
	return root
}

func tagChildren(t *tagNode, labels map[string]int, sortVal int) {
	sortTagNodes(t.kids, sortVal)
	for _, c := range t.kids {
		c.Label = t.Label + "/" + c.Name
		c.Count = labels[html.UnescapeString(c.Label)]
		t.Children = append(t.Children, c)
	}
	for _, c := range t.kids {
		tagChildren(c, labels, sortVal)
	}
}

// sortTagNodes orders tags as SiYuan's sortTags: by name ignoring case
// (0, 1; SiYuan compares GBK bytes, the same for ASCII), by reference count
// (7, 8), else naturally (numbers by value).
func sortTagNodes(ts []*tagNode, sortVal int) {
	switch sortVal {
	case 0:
		sort.SliceStable(ts, func(i, j int) bool { return strings.ToLower(ts[i].Name) < strings.ToLower(ts[j].Name) })
	case 1:
		sort.SliceStable(ts, func(i, j int) bool { return strings.ToLower(ts[j].Name) < strings.ToLower(ts[i].Name) })
	case 5:
		sort.SliceStable(ts, func(i, j int) bool { return naturalLess(ts[j].Name, ts[i].Name) })
	case 7:
		sort.SliceStable(ts, func(i, j int) bool { return ts[i].Count < ts[j].Count })
	case 8:
		sort.SliceStable(ts, func(i, j int) bool { return ts[i].Count > ts[j].Count })
	default:
		sort.SliceStable(ts, func(i, j int) bool { return naturalLess(ts[i].Name, ts[j].Name) })
	}
}

// naturalLess compares runs of digits by value and the rest by bytes.
func naturalLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := digitRun(a), digitRun(b)
		if da != "" && db != "" {
			na, nb := strings.TrimLeft(da, "0"), strings.TrimLeft(db, "0")
			if len(na) != len(nb) {
				return len(na) < len(nb)
			}
			if na != nb {
				return na < nb
			}
			a, b = a[len(da):], b[len(db):]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func digitRun(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}

// searchTagLimit is SiYuan's conf.search.limit default.
const searchTagLimit = 64

func (k *Kernel) searchTag(ctx context.Context, a args) (any, error) {
	kw, err := a.str("k")
	if err != nil {
		return nil, nil // SiYuan panics without k: code 0, data null
	}
	if err := k.flushForTags(ctx, false); err != nil {
		return nil, err
	}
	words := strings.Fields(kw)
	stmt := "SELECT content FROM spans WHERE type LIKE '%tag%' AND content != ''"
	var params []any
	for _, w := range words {
		stmt += " AND content LIKE ? ESCAPE '\\'"
		params = append(params, "%"+likeEscape(w)+"%")
	}
	stmt += fmt.Sprintf(" GROUP BY markdown LIMIT %d", searchTagLimit)
	rows, err := k.sql.db.QueryContext(ctx, stmt, params...)
	if err != nil {
		return nil, fmt.Errorf("searchTag: %w", err)
	}
	defer rows.Close()
	seen := map[string]bool{}
	tags := []string{}
	for rows.Next() {
		var label string
		if err := rows.Scan(&label); err != nil {
			return nil, fmt.Errorf("searchTag: %w", err)
		}
		if seen[label] {
			continue
		}
		seen[label] = true
		if len(words) == 0 {
			tags = append(tags, html.EscapeString(label))
		} else {
			tags = append(tags, searchMarkTerms(label, words, 1024))
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("searchTag: %w", err)
	}
	sort.Strings(tags)
	return map[string]any{"tags": tags, "k": kw}, nil
}

// likeEscape escapes a LIKE pattern's wildcards for ESCAPE '\'.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(s)
}

// tagMarkers are the characters SiYuan refuses in a new tag name (its
// treenode.IsMarker), checked only when the whole name is ASCII.
const tagMarkers = "*_[]\n!\\`<>&~${}()=#^"

func (k *Kernel) renameTag(ctx context.Context, a args) (any, error) {
	oldLabel, err := a.field("oldLabel", false)
	if err != nil {
		return nil, err
	}
	newLabel, err := a.field("newLabel", true)
	if err != nil {
		return nil, err
	}
	if ascii(newLabel) {
		if i := strings.IndexAny(newLabel, tagMarkers); i >= 0 {
			return nil, &apiError{code: -1, msg: fmt.Sprintf("Do not include Markdown syntax marker [%c]", newLabel[i]), data: map[string]any{"closeTimeout": 5000}}
		}
	}
	newLabel = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(newLabel, "/"), "/"))
	if newLabel == "" {
		return nil, &apiError{code: -1, msg: "Tag cannot be empty", data: map[string]any{"closeTimeout": 5000}}
	}
	if oldLabel == newLabel {
		return nil, nil
	}
	matches := func(l string) bool { return l == oldLabel || strings.HasPrefix(l, oldLabel+"/") }
	rewrite := func(l string) string { return strings.Replace(l, oldLabel, newLabel, 1) }
	return nil, k.rewriteTags(ctx, oldLabel, func(doc []string) []string {
		for i, t := range doc {
			if matches(t) {
				doc[i] = rewrite(t)
			}
		}
		return doc
	}, func(n *ast.Node) {
		if matches(n.TextMarkTextContent) {
			n.TextMarkTextContent = rewrite(n.TextMarkTextContent)
		}
	})
}

func (k *Kernel) removeTag(ctx context.Context, a args) (any, error) {
	label, err := a.field("label", false)
	if err != nil {
		return nil, err
	}
	return nil, k.rewriteTags(ctx, label, func(doc []string) []string {
		var keep []string
		for _, t := range doc {
			if t != label {
				keep = append(keep, t)
			}
		}
		return keep
	}, func(n *ast.Node) {
		if n.TextMarkTextContent == label {
			n.Unlink()
		}
	})
}

// rewriteTags applies a tag change to every block whose spans hold label
// (SiYuan selects them with LIKE '%label%', so a label inside a longer one
// selects its block too; the edit functions decide what changes): doc edits
// a document's tags attribute, inline one inline tag.
func (k *Kernel) rewriteTags(ctx context.Context, label string, doc func([]string) []string, inline func(*ast.Node)) error {
	if err := k.flushForTags(ctx, true); err != nil {
		return err
	}
	var stmt string
	var params []any
	if label == "" {
		stmt = "SELECT block_id, root_id FROM spans WHERE type LIKE '%tag%' AND content = '' GROUP BY block_id"
	} else {
		stmt = "SELECT block_id, root_id FROM spans WHERE type LIKE '%tag%' AND content LIKE ? ESCAPE '\\' GROUP BY block_id"
		params = append(params, "%"+likeEscape(label)+"%")
	}
	rows, err := k.sql.db.QueryContext(ctx, stmt, params...)
	if err != nil {
		return fmt.Errorf("tags: %w", err)
	}
	byTree := map[string][]string{}
	var roots []string
	for rows.Next() {
		var block, root string
		if err := rows.Scan(&block, &root); err != nil {
			rows.Close()
			return fmt.Errorf("tags: %w", err)
		}
		if _, ok := byTree[root]; !ok {
			roots = append(roots, root)
		}
		byTree[root] = append(byTree[root], block)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("tags: %w", err)
	}
	for _, root := range roots {
		tree, err := k.loadTree(root)
		if err != nil {
			return errf("%s", err.Error())
		}
		for _, id := range byTree[root] {
			n := mdexport.NodeByID(tree.Root, id)
			if n == nil {
				continue
			}
			if n.Type == ast.NodeDocument {
				// SiYuan keeps tags="" when the last label goes.
				if cur := docTagLabels(n); len(cur) > 0 {
					n.SetIALAttr("tags", html.EscapeAttrVal(strings.Join(doc(cur), ",")))
				}
				continue
			}
			var tags []*ast.Node
			ast.Walk(n, func(c *ast.Node, entering bool) ast.WalkStatus {
				if entering && c.Type == ast.NodeTextMark && c.IsTextMarkType("tag") {
					tags = append(tags, c)
				}
				return ast.WalkContinue
			})
			for _, t := range tags {
				inline(t)
			}
		}
		if err := k.writeTree(tree); err != nil {
			return err
		}
	}
	return k.sql.flush(ctx)
}

func ascii(s string) bool {
	for _, r := range s {
		if r > unicode.MaxASCII {
			return false
		}
	}
	return true
}
