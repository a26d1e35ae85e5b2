package block

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/kernelview"
	"github.com/sisyphus-go/sisyphus/internal/tools/markup"
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
			id, typ := markup.BlockOf(n)
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
func readDocTree(ctx context.Context, env *tools.Env, rootID string) (*docTree, error) {
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
	ID       string   `arg:"id" help:"the block to move" id:""`
	IDs      []string `arg:"ids" help:"several blocks, placed in this order" id:""`
	Previous string   `arg:"previousID" help:"place the blocks right after this block" id:""`
	Parent   string   `arg:"parentID" help:"place the blocks first inside this container" id:""`
	// ids are the blocks moved (id or ids), previousID and parentID the
	// anchor given.
	ids                  []string
	previousID, parentID string
}

func (m moveArgs) anchor() string { return m.previousID + m.parentID }

func parseMoveArgs(m *moveArgs) error {
	if (m.ID != "") == (m.IDs != nil) {
		return failure.Invalid("pass either id or ids[], not both")
	}
	m.ids = m.IDs
	if m.ID != "" {
		m.ids = []string{m.ID}
	}
	if len(m.ids) == 0 || len(m.ids) > 50 {
		return failure.Invalid("ids[] must hold 1 to 50 blocks")
	}
	seen := map[string]bool{}
	for _, id := range m.ids {
		if seen[id] {
			return failure.Invalid("ids[] lists %s twice", id)
		}
		seen[id] = true
	}
	m.previousID, m.parentID = m.Previous, m.Parent
	if (m.previousID == "") == (m.parentID == "") {
		return failure.Invalid("pass either previousID (move after it) or parentID (move to its start), not both")
	}
	name := "previousID"
	if m.parentID != "" {
		name = "parentID"
	}
	if seen[m.anchor()] {
		return failure.Invalid("%s %s is one of the moved blocks", name, m.anchor())
	}
	return nil
}

func (m moveArgs) targets() []string { return append(slices.Clone(m.ids), m.anchor()) }

// childList is one parent's child blocks, in order.
type childList struct {
	ID       string   `json:"id"`
	Children []string `json:"children"`
}

// BlockMoveState is the structure block.move guards: the moved blocks'
// states and the child lists of their parents and of the destination.
type BlockMoveState struct {
	Blocks []kernelview.BlockState `json:"blocks"`
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
func readBlockMoveState(ctx context.Context, env *tools.Env, m moveArgs) (*BlockMoveState, error) {
	blocks, err := kernelview.ReadBlockStates(ctx, env, m.ids)
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
		root := siyuan.DocIDOfPath(p.Path)
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
			return failure.Missing("block", b.ID)
		}
		if st.isDoc[b.ID] {
			return failure.Invalid("%s is a document: move documents with document.move", b.ID)
		}
	}
	if st.AnchorMiss {
		return failure.Missing("block", m.anchor())
	}
	if m.previousID != "" && st.isDoc[m.previousID] {
		return failure.Invalid("previousID %s is a document; to move blocks to the start of a document pass parentID", m.previousID)
	}
	tree := st.trees[st.roots[m.anchor()]]
	for _, a := range append([]string{m.anchor()}, tree.ancestors(m.anchor())...) {
		if slices.Contains(m.ids, a) {
			return failure.Invalid("%s is inside block %s, which is being moved", m.anchor(), a)
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

var move = tools.Write[moveArgs, *BlockMoveState]{
	Name: "move", Summary: "move blocks (id or ids[], kept in that order) right after previousID, or to the start of parentID",
	Policy:      strict.WritePolicy{Class: strict.Mutation, Precondition: strict.ExpectedStructureHash},
	Destructive: true, Dangerous: true,
	Example:  map[string]any{"ids": []string{"20260812120000-aaaaaaa", "20260812120000-bbbbbbb"}, "previousID": "20260812120000-abcdefg", "validateOnly": true},
	Validate: parseMoveArgs,
	Scope:    tools.Scope[moveArgs]{Touches: func(m moveArgs) []tools.Touch { return tools.OnBlocks(m.targets(), tools.LevelWrite) }},
	Targets:  moveArgs.targets,
	State:    readBlockMoveState,
	Check:    func(m moveArgs, st *BlockMoveState) error { return st.check(m) },
	Execute: func(ctx context.Context, env *tools.Env, m moveArgs, _ *BlockMoveState) (tools.Payload, error) {
		// Moving each block to the same anchor, last first, leaves them in
		// the requested order.
		order := slices.Clone(m.ids)
		slices.Reverse(order)
		for i, id := range order {
			if err := env.Kernel.MoveBlock(ctx, id, m.previousID, m.parentID); err != nil {
				return nil, tools.WriteFailure(err, i > 0)
			}
		}
		return tools.Payload{"ids": m.ids, "moved": len(m.ids), "apiCallOrder": order}, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, m moveArgs, p tools.Payload) (any, error) {
		return tools.Await(ctx, func(ctx context.Context) (*BlockMoveState, error) { return readBlockMoveState(ctx, env, m) },
			func(st *BlockMoveState) error { return st.placed(m) })
	},
}
