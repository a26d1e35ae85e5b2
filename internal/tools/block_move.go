package tools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
)

// docTree is the block structure of one document, read from its rendered
// DOM: every element carrying data-node-id is a block, its parent the
// nearest enclosing block (the document for top-level blocks). Headings are
// not containers here: the blocks under a heading are its siblings.
type docTree struct {
	root     string
	parent   map[string]string
	children map[string][]string
	typ      map[string]string
}

func parseDocTree(root, dom string) (*docTree, error) {
	nodes, err := html.ParseFragment(strings.NewReader(dom), &html.Node{Type: html.ElementNode, Data: "body", DataAtom: atom.Body})
	if err != nil {
		return nil, fmt.Errorf("parse the DOM of %s: %w", root, err)
	}
	t := &docTree{root: root, parent: map[string]string{}, children: map[string][]string{}, typ: map[string]string{root: "NodeDocument"}}
	var walk func(n *html.Node, parent string)
	walk = func(n *html.Node, parent string) {
		for ; n != nil; n = n.NextSibling {
			if n.Type != html.ElementNode {
				continue
			}
			p := parent
			var id, typ string
			for _, a := range n.Attr {
				switch a.Key {
				case "data-node-id":
					id = a.Val
				case "data-type":
					typ = a.Val
				}
			}
			if id != "" {
				t.parent[id] = parent
				t.children[parent] = append(t.children[parent], id)
				t.typ[id] = typ
				p = id
			}
			walk(n.FirstChild, p)
		}
	}
	for _, n := range nodes {
		walk(n, root) // ParseFragment detaches the nodes: each is walked alone
	}
	return t, nil
}

// readDocTree reads the block structure of the document holding id.
func readDocTree(ctx context.Context, env *Env, rootID string) (*docTree, error) {
	d, err := env.Kernel.GetBlockDOM(ctx, rootID)
	if err != nil {
		return nil, err
	}
	return parseDocTree(rootID, d.DOM)
}

func (t *docTree) index(parent, id string) int { return slices.Index(t.children[parent], id) }

// ancestors lists id's enclosing blocks, nearest first, up to the document.
func (t *docTree) ancestors(id string) []string {
	var out []string
	for p, ok := t.parent[id]; ok; p, ok = t.parent[p] {
		out = append(out, p)
	}
	return out
}

// moveArgs are block.move's arguments.
type moveArgs struct {
	ids                  []string
	previousID, parentID string
}

func (m moveArgs) anchor() string { return m.previousID + m.parentID }

func parseMoveArgs(a *Args) (moveArgs, error) {
	var m moveArgs
	if a.Has("id") == a.Has("ids") {
		return m, badArg("pass either id or ids[], not both")
	}
	m.ids = a.Strings("ids")
	if a.Has("id") {
		m.ids = []string{a.String("id")}
	}
	if len(m.ids) == 0 || len(m.ids) > 50 {
		return m, badArg("ids[] must hold 1 to 50 blocks")
	}
	seen := map[string]bool{}
	for i, id := range m.ids {
		if err := checkID(fmt.Sprintf("ids[%d]", i), id); err != nil {
			return m, err
		}
		if seen[id] {
			return m, badArg("ids[] lists %s twice", id)
		}
		seen[id] = true
	}
	m.previousID, m.parentID = a.String("previousID"), a.String("parentID")
	if (m.previousID == "") == (m.parentID == "") {
		return m, badArg("pass either previousID (move after it) or parentID (move to its start), not both")
	}
	name := "previousID"
	if m.parentID != "" {
		name = "parentID"
	}
	if err := checkID(name, m.anchor()); err != nil {
		return m, err
	}
	if seen[m.anchor()] {
		return m, badArg("%s %s is one of the moved blocks", name, m.anchor())
	}
	return m, nil
}

func moveTargets(a *Args) []string {
	m, err := parseMoveArgs(a)
	if err != nil {
		return nil
	}
	return append(slices.Clone(m.ids), m.anchor())
}

// childList is one parent's child blocks, in order.
type childList struct {
	ID       string   `json:"id"`
	Children []string `json:"children"`
}

// BlockMoveState is the structure block.move guards: the moved blocks'
// states and the child lists of their parents and of the destination.
type BlockMoveState struct {
	Blocks []BlockState `json:"blocks"`
	// Anchor is the previousID or parentID, and its parent.
	Anchor       string      `json:"anchor"`
	AnchorMiss   bool        `json:"anchorMissing,omitempty"`
	AnchorParent string      `json:"anchorParent,omitempty"`
	Parents      []childList `json:"parents"`

	trees map[string]*docTree
	roots map[string]string // block id → its document
	isDoc map[string]bool
}

// readBlockMoveState reads the moved blocks, the anchor, and the structure
// of every document involved.
func readBlockMoveState(ctx context.Context, env *Env, m moveArgs) (*BlockMoveState, error) {
	blocks, err := readBlockStates(ctx, env, m.ids)
	if err != nil {
		return nil, err
	}
	st := &BlockMoveState{Blocks: blocks, Anchor: m.anchor(), trees: map[string]*docTree{}, roots: map[string]string{}, isDoc: map[string]bool{}}
	ids := []string{}
	for _, b := range blocks {
		if !b.Missing {
			ids = append(ids, b.ID)
		}
	}
	ok, err := env.Kernel.CheckBlockExist(ctx, m.anchor())
	if err != nil {
		return nil, err
	}
	if ok {
		ids = append(ids, m.anchor())
	} else {
		st.AnchorMiss = true
	}
	for _, id := range ids {
		p, err := env.Kernel.GetPathByID(ctx, id)
		if err != nil {
			return nil, err
		}
		root := strings.TrimSuffix(path.Base(p.Path), ".sy")
		st.roots[id] = root
		st.isDoc[id] = root == id
		if st.trees[root] == nil {
			if st.trees[root], err = readDocTree(ctx, env, root); err != nil {
				return nil, err
			}
		}
	}
	parents := map[string]string{} // parent id → its document
	for _, id := range ids {
		if st.isDoc[id] {
			continue
		}
		root := st.roots[id]
		if p, ok := st.trees[root].parent[id]; ok {
			parents[p] = root
			if id == m.anchor() {
				st.AnchorParent = p
			}
		}
	}
	if m.parentID != "" && !st.AnchorMiss {
		parents[m.parentID] = st.roots[m.parentID]
	}
	keys := make([]string, 0, len(parents))
	for p := range parents {
		keys = append(keys, p)
	}
	sort.Strings(keys)
	for _, p := range keys {
		kids := st.trees[parents[p]].children[p]
		if kids == nil {
			kids = []string{}
		}
		st.Parents = append(st.Parents, childList{ID: p, Children: kids})
	}
	if st.Parents == nil {
		st.Parents = []childList{}
	}
	return st, nil
}

// check refuses a move the kernel would refuse or apply only in part.
func (st *BlockMoveState) check(m moveArgs) error {
	for _, b := range st.Blocks {
		if b.Missing {
			return notFound("block", b.ID)
		}
		if st.isDoc[b.ID] {
			return badArg("%s is a document: move documents with document.move", b.ID)
		}
	}
	if st.AnchorMiss {
		return notFound("block", m.anchor())
	}
	if m.previousID != "" && st.isDoc[m.previousID] {
		return badArg("previousID %s is a document; to move blocks to the start of a document pass parentID", m.previousID)
	}
	tree := st.trees[st.roots[m.anchor()]]
	for _, a := range append([]string{m.anchor()}, tree.ancestors(m.anchor())...) {
		if slices.Contains(m.ids, a) {
			return badArg("%s is inside block %s, which is being moved", m.anchor(), a)
		}
	}
	return nil
}

// placed reports whether the blocks are where the move put them: in order,
// the first right after previousID or first in parentID (after a task list
// item's own paragraph), each after the one before (a heading may bring the
// blocks under it along).
func (st *BlockMoveState) placed(m moveArgs) error {
	if st.AnchorMiss {
		return fmt.Errorf("the anchor %s is gone", m.anchor())
	}
	tree := st.trees[st.roots[m.anchor()]]
	dest := m.parentID
	if dest == "" {
		dest = tree.parent[m.previousID]
	}
	// top is the block or, when the kernel wrapped a list item moved next
	// to a non-list block, its new one-item list.
	top := func(id string) string {
		if tree.parent[id] == dest {
			return id
		}
		if l := tree.parent[id]; tree.typ[l] == "NodeList" && tree.parent[l] == dest && len(tree.children[l]) == 1 {
			return l
		}
		return ""
	}
	prev := -1
	if m.previousID != "" {
		prev = tree.index(dest, m.previousID)
	}
	for i, id := range m.ids {
		t := top(id)
		if t == "" {
			return fmt.Errorf("block %s is not under %s", id, dest)
		}
		at := tree.index(dest, t)
		adjacent := at == prev+1
		switch {
		case i == 0 && m.parentID != "":
			// A list item keeps its own paragraph first.
			adjacent = at == 0 || at == 1 && tree.typ[dest] == "NodeListItem"
		case i == 0 && tree.typ[m.previousID] == "NodeHeading", i > 0 && tree.typ[m.ids[i-1]] == "NodeHeading":
			adjacent = at > prev
		}
		if !adjacent {
			return fmt.Errorf("block %s is not where it was moved", id)
		}
		prev = at
	}
	return nil
}

// replaceable are the block types block.replace edits: leaf text blocks.
var replaceable = map[string]bool{"NodeParagraph": true, "NodeHeading": true}

// blockType is the data-type of a block's outer DOM element.
func blockType(dom string) string {
	z := html.NewTokenizer(strings.NewReader(dom))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return ""
		case html.StartTagToken, html.SelfClosingTagToken:
			for _, a := range z.Token().Attr {
				if a.Key == "data-type" {
					return a.Val
				}
			}
			return ""
		}
	}
}

// splitIAL separates a leaf block's kramdown into its body and its block
// IAL line.
func splitIAL(kd string) (body, ial string) {
	kd = strings.TrimRight(kd, "\n")
	i := strings.LastIndex(kd, "\n")
	if i >= 0 && strings.HasPrefix(kd[i+1:], "{:") && strings.HasSuffix(kd[i+1:], "}") {
		return kd[:i], kd[i+1:]
	}
	return kd, ""
}

// replaceEdit is a planned block.replace.
type replaceEdit struct {
	body, newBody string
	count         int
}

// planReplace checks the edit against the block's current state.
func planReplace(st BlockState, a *Args) (replaceEdit, error) {
	var e replaceEdit
	id, old, repl := a.String("id"), a.String("old"), a.String("new")
	if st.Missing {
		return e, notFound("block", id)
	}
	if typ := blockType(st.DOM); !replaceable[typ] {
		return e, badArg("block %s is a %s: replace edits the text of one paragraph or heading (not code, math, tables, HTML, embeds, "+
			"super blocks, databases or containers such as lists and quotes: target the paragraph inside)", id, strings.TrimPrefix(typ, "Node"))
	}
	e.body, _ = splitIAL(st.Kramdown)
	e.count = strings.Count(e.body, old)
	switch {
	case e.count == 0:
		return e, badArg("old does not occur in block %s", id)
	case e.count > 1 && !a.Bool("replaceAll"):
		return e, badArg("old occurs %d times in block %s: pass replaceAll:true or a longer old that occurs once", e.count, id)
	}
	n := 1
	if a.Bool("replaceAll") {
		n = -1
	}
	e.newBody = strings.Replace(e.body, old, repl, n)
	if strings.TrimSpace(e.newBody) == "" {
		return e, badArg("the edit would leave block %s empty: delete it with block.delete instead", id)
	}
	if blocks, err := topLevelBlocks(e.newBody); err != nil || blocks != 1 {
		return e, badArg("the edit must keep block %s one block (no blank lines or new block syntax)", id)
	}
	return e, nil
}

func replaceArgs(a *Args) error {
	if err := checkID("id", a.String("id")); err != nil {
		return err
	}
	if a.String("old") == "" {
		return badArg("old must not be empty")
	}
	if strings.Contains(a.String("new"), "{:") {
		return badArg("new must not contain an attribute list ({: ...}); set attributes with set_attrs")
	}
	return nil
}

// keptAttrs are the attributes a replace writes back in the block's IAL:
// all but the ones SiYuan manages.
func keptAttrs(attrs map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range attrs {
		if k != "id" && k != "updated" && v != "" {
			out[k] = v
		}
	}
	return out
}

func blockMoveActions() []*Action {
	return []*Action{
		{
			Name: "move", Summary: "move blocks (id or ids[], kept in that order) right after previousID, or to the start of parentID",
			Policy:      strict.Policy{Class: strict.Mutation, Precondition: strict.ExpectedStructureHash},
			Destructive: true,
			Params: []Param{
				idParam("id", "the block to move", false),
				{Name: "ids", Type: Strings, Description: "several blocks, placed in this order"},
				idParam("previousID", "place the blocks right after this block", false),
				idParam("parentID", "place the blocks first inside this container", false),
			},
			Write: &Write{
				Targets: moveTargets,
				State: func(ctx context.Context, env *Env, a *Args) (any, error) {
					m, err := parseMoveArgs(a)
					if err != nil {
						return nil, err
					}
					st, err := readBlockMoveState(ctx, env, m)
					if err != nil {
						return nil, err
					}
					if preflighting(a) {
						if err := st.check(m); err != nil {
							return nil, err
						}
					}
					return st, nil
				},
				Execute: func(ctx context.Context, env *Env, a *Args) (map[string]any, error) {
					m, err := parseMoveArgs(a)
					if err != nil {
						return nil, asInvalid(err)
					}
					// Moving each block to the same anchor, last first, leaves
					// them in the requested order.
					order := slices.Clone(m.ids)
					slices.Reverse(order)
					for i, id := range order {
						if err := env.Kernel.MoveBlock(ctx, id, m.previousID, m.parentID); err != nil {
							return nil, writeErr(err, i > 0)
						}
					}
					return map[string]any{"ids": m.ids, "moved": len(m.ids), "apiCallOrder": order}, nil
				},
				Readback: func(ctx context.Context, env *Env, a *Args, p map[string]any) (any, error) {
					m, _ := parseMoveArgs(a)
					var st *BlockMoveState
					var last error
					ok, err := poll(ctx, func() (bool, error) {
						var err error
						if st, err = readBlockMoveState(ctx, env, m); err != nil {
							return false, err
						}
						last = st.placed(m)
						return last == nil, nil
					})
					if err != nil {
						return nil, err
					}
					if !ok {
						return nil, last
					}
					return st, nil
				},
			},
		},
		{
			Name: "replace", Summary: "exact text edit inside one paragraph or heading: replace old with new in its kramdown (once, or every occurrence with replaceAll); attributes are kept",
			Policy: strict.Policy{Class: strict.Mutation, Precondition: strict.ExpectedStateHash},
			Params: []Param{
				idParam("id", "the block", true),
				{Name: "old", Type: String, Description: "the exact text to replace, as get_kramdown shows it; must occur once unless replaceAll", Required: true},
				{Name: "new", Type: String, Description: "the replacement (may be empty)", Required: true},
				{Name: "replaceAll", Type: Boolean, Description: "replace every occurrence", Default: false},
			},
			Write: &Write{
				Targets: idTarget,
				State: func(ctx context.Context, env *Env, a *Args) (any, error) {
					if err := replaceArgs(a); err != nil {
						return nil, err
					}
					st, err := readBlockState(ctx, env, a.String("id"))
					if err != nil {
						return nil, err
					}
					if preflighting(a) {
						if _, err := planReplace(st, a); err != nil {
							return nil, err
						}
					}
					return []BlockState{st}, nil
				},
				Execute: func(ctx context.Context, env *Env, a *Args) (map[string]any, error) {
					if err := replaceArgs(a); err != nil {
						return nil, asInvalid(err)
					}
					id := a.String("id")
					// Reads, before the one write: a failure applied nothing.
					st, err := readBlockState(ctx, env, id)
					if err != nil {
						return nil, strict.Reject(err)
					}
					edit, err := planReplace(st, a)
					if err != nil {
						return nil, asInvalid(err)
					}
					attrs, err := env.Kernel.GetBlockAttrs(ctx, id)
					if err != nil {
						return nil, strict.Reject(err)
					}
					data := edit.newBody
					if keep := keptAttrs(attrs); len(keep) > 0 {
						data += "\n" + ialLine(keep)
					}
					txs, err := env.Kernel.UpdateBlock(ctx, id, "markdown", data)
					if err != nil {
						return nil, writeErr(err, false)
					}
					out := map[string]any{"id": id, "replaced": edit.count}
					if env.strictOn() {
						// Verification details for the readback, which drops
						// them: digests only, never the text.
						out[detailExpect] = textDigest(edit.newBody)
						if t := appliedText(txs, id); t != "" {
							out[detailApplied] = textDigest(t)
						}
					}
					return out, nil
				},
				Readback: func(ctx context.Context, env *Env, a *Args, p map[string]any) (any, error) {
					id := a.String("id")
					expect, _ := p[detailExpect].(string)
					applied, _ := p[detailApplied].(string)
					var st BlockState
					var last error
					ok, err := poll(ctx, func() (bool, error) {
						var err error
						if st, err = readBlockState(ctx, env, id); err != nil {
							return false, err
						}
						if st.Missing {
							return false, fmt.Errorf("block %s is gone after the replace", id)
						}
						// The edited kramdown reads back exactly, or (when the
						// kernel respells markdown) the block shows exactly
						// the text the kernel applied for this edit.
						body, _ := splitIAL(st.Kramdown)
						if textDigest(body) == expect || applied != "" && textDigest(domText(st.DOM)) == applied {
							return true, nil
						}
						last = fmt.Errorf("block %s does not show the edit", id)
						return false, nil
					})
					if err != nil {
						return nil, err
					}
					if !ok {
						return nil, last
					}
					return []BlockState{st}, nil
				},
			},
		},
	}
}

// Payload keys the replace readback consumes.
const (
	detailExpect  = "_expectedTextDigest"
	detailApplied = "_appliedTextDigest"
)

func textDigest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// appliedText is the visible text of the DOM an update transaction applied
// to id ("" when the kernel did not report it).
func appliedText(txs []siyuan.Transaction, id string) string {
	for _, tx := range txs {
		for _, op := range tx.DoOperations {
			if d, ok := op.Data.(string); ok && op.ID == id {
				return domText(d)
			}
		}
	}
	return ""
}
