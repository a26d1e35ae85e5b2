package fs

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/kernelview"
)

// treeArgs are fs.tree's arguments.
type treeArgs struct {
	RawPath  string `arg:"path" help:"/ (every notebook you may see), /<notebook> or a document path" required:""`
	MaxDepth int    `arg:"maxDepth" help:"levels of children to nest (past it, children is a count)" default:"3" min:"0" max:"20"`
	Path     humanPath
}

// node is one entry of a tree: Children is the nested list, or past
// maxDepth the number of children as an integer.
type node struct {
	Name     string `json:"name"`
	Path     string `json:"path"`
	ID       string `json:"id,omitempty"`
	Children any    `json:"children"`
	Closed   bool   `json:"closed,omitempty"`
	Virtual  bool   `json:"virtual,omitempty"`
	ReadOnly bool   `json:"readOnly,omitempty"`
	Shadowed bool   `json:"shadowed,omitempty"`
}

// subtreeError is a top-level subtree the tree could not read.
type subtreeError struct {
	Type    string `json:"type"`
	Name    string `json:"name"`
	Path    string `json:"path"`
	Message string `json:"message"`
}

// subtreeLanes is how many top-level subtrees are read at once (upstream's 8).
const subtreeLanes = 8

// maxTreeLists bounds the directory listings of one tree, inside one read's
// budget of kernel calls: past it, deeper documents show their child count
// and the tree says it is truncated, where the whole read would otherwise
// fail with read_budget_exceeded.
const maxTreeLists = 96

// lister lists directories within maxTreeLists; cut records that it
// refused one.
type lister struct {
	n, max atomic.Int32
	cut    atomic.Bool
}

func newLister(max int32) *lister {
	l := &lister{}
	l.max.Store(max)
	return l
}

// list lists a directory; ok is false when the bound is reached.
func (l *lister) list(ctx context.Context, env *tools.Env, nb, dir string) (docs []kernelview.ChildDoc, ok bool, err error) {
	if l.n.Add(1) > l.max.Load() {
		l.cut.Store(true)
		return nil, false, nil
	}
	docs, err = kernelview.ListChildren(ctx, env, nb, dir)
	return docs, err == nil, err
}

// scope is where a tree walk starts: a notebook and a storage path in it
// ("/" for its root), with the fs path it shows as.
type scope struct {
	Notebook string
	Storage  string
	Path     humanPath
	DocID    string // "" for a notebook's root
}

// scopeOf resolves a notebook or document path to where its children are
// listed.
func scopeOf(ctx context.Context, env *tools.Env, p humanPath) (scope, error) {
	t, err := resolveDoc(ctx, env, p)
	if err != nil {
		return scope{}, err
	}
	s := scope{Notebook: t.Notebook.ID, Storage: "/", Path: p, DocID: t.DocID}
	if t.DocID != "" {
		info, err := env.Kernel.GetBlockInfo(ctx, t.DocID)
		if err != nil {
			return scope{}, err
		}
		s.Storage = info.Path
	}
	return s, nil
}

// walk lists the documents under a scope down to maxDepth levels (0: the
// direct children with their child counts). Each top-level subtree is read
// on its own, subtreeLanes at a time; one that fails is reported in errs
// and shown with its count, the others are complete.
func walk(ctx context.Context, env *tools.Env, l *lister, s scope, maxDepth int) (nodes []node, errs []subtreeError, err error) {
	top, ok, err := l.list(ctx, env, s.Notebook, s.Storage)
	switch {
	case err != nil:
		return nil, nil, kernelview.NotebookErr(s.Notebook, err)
	case !ok:
		return nil, nil, nil
	}
	nodes = make([]node, len(top))
	fails := make([]error, len(top))
	var wg sync.WaitGroup
	sem := make(chan struct{}, subtreeLanes)
	for i, d := range top {
		nodes[i] = node{Name: d.Title, Path: s.Path.child(d.Title), ID: d.ID, Children: d.SubFileCount}
		if maxDepth < 1 || d.SubFileCount == 0 {
			if maxDepth >= 1 {
				nodes[i].Children = []node{}
			}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				fails[i] = ctx.Err()
				return
			}
			defer func() { <-sem }()
			defer failure.Recover(&fails[i])
			kids, err := below(ctx, env, l, s.Notebook, d, humanPathOf(nodes[i].Path), 1, maxDepth)
			switch {
			case err != nil:
				fails[i] = err
			case kids != nil:
				nodes[i].Children = kids
			}
		}()
	}
	wg.Wait()
	for i, f := range fails {
		if f == nil {
			continue
		}
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		var be *failure.Error
		if errors.As(f, &be) && be.Code == failure.ReadBudgetExceeded {
			return nil, nil, f // the read's budget is spent: nothing more can be read
		}
		errs = append(errs, subtreeError{Type: "subtree_unreadable", Name: top[i].Title, Path: nodes[i].Path, Message: f.Error()})
	}
	return nodes, errs, nil
}

// below lists a document's children, depth levels below the scope (nil
// when the lister's bound is reached: the caller keeps the count).
func below(ctx context.Context, env *tools.Env, l *lister, nb string, d kernelview.ChildDoc, at humanPath, depth, maxDepth int) ([]node, error) {
	kids, ok, err := l.list(ctx, env, nb, d.Path)
	if err != nil || !ok {
		return nil, err
	}
	out := make([]node, 0, len(kids))
	for _, k := range kids {
		n := node{Name: k.Title, Path: at.child(k.Title), ID: k.ID, Children: k.SubFileCount}
		if depth < maxDepth {
			n.Children = []node{}
			if k.SubFileCount > 0 {
				sub, err := below(ctx, env, l, nb, k, humanPathOf(n.Path), depth+1, maxDepth)
				switch {
				case err != nil:
					return nil, err
				case sub != nil:
					n.Children = sub
				default:
					n.Children = k.SubFileCount
				}
			}
		}
		out = append(out, n)
	}
	return out, nil
}

// humanPathOf is a path this package built (already normalised); only
// child is called on it.
func humanPathOf(raw string) humanPath { return humanPath{Raw: raw, Notebook: "-"} }

func tree(ctx context.Context, env *tools.Env, a treeArgs) (any, error) {
	p := a.Path
	out := map[string]any{"path": p.Raw, "maxDepth": a.MaxDepth}
	l := newLister(maxTreeLists)
	defer func() {
		if l.cut.Load() {
			out["partial"], out["truncated"] = true, true
			out["hint"] = "the tree was cut short to stay within one read's kernel calls: documents past it show their child count; ask for a deeper path or a smaller maxDepth"
		}
	}()
	switch {
	case p.Virtual != "":
		out["tree"], out["virtual"] = []node{}, true
		return out, nil
	case p.isRoot():
		nbs, err := env.Kernel.ListNotebooks(ctx)
		if err != nil {
			return nil, err
		}
		all := []node{{Name: "AGENTS.md", Path: memoryFile, Children: []node{}, Virtual: true},
			{Name: "USER_RULES.md", Path: rulesFile, Children: []node{}, Virtual: true, ReadOnly: true}}
		errs := []subtreeError{}
		for _, n := range nbs {
			if !tools.Visible(ctx, n.ID) {
				continue // hidden from agents
			}
			nn := node{Name: n.Name, Path: p.child(n.Name), ID: n.ID, Children: n.SubFileCount, Closed: n.Closed}
			if n.Closed || shadowed(n.Name) {
				// A closed notebook lists nothing; a shadowed one is not
				// reachable by fs paths.
				nn.Shadowed = shadowed(n.Name)
				all = append(all, nn)
				continue
			}
			kids, e, err := walk(ctx, env, l, scope{Notebook: n.ID, Storage: "/", Path: humanPathOf(nn.Path)}, a.MaxDepth)
			if err != nil {
				return nil, err
			}
			if kids != nil {
				nn.Children = kids
			}
			all = append(all, nn)
			errs = append(errs, e...)
		}
		out["tree"], out["errors"], out["partial"] = all, errs, len(errs) > 0
		return out, nil
	}
	s, err := scopeOf(ctx, env, p)
	if err != nil {
		return nil, err
	}
	nodes, errs, err := walk(ctx, env, l, s, a.MaxDepth)
	if err != nil {
		return nil, err
	}
	if nodes == nil {
		nodes = []node{}
	}
	if errs == nil {
		errs = []subtreeError{}
	}
	out["tree"], out["errors"], out["partial"] = nodes, errs, len(errs) > 0
	return out, nil
}

var treeAction = tools.Read[treeArgs]{
	Name: "tree", Summary: "the documents under a path as a nested tree, down to maxDepth levels (deeper levels show their child count); / starts with the notebooks and the virtual files",
	Example: map[string]any{"path": "/Research", "maxDepth": 2},
	Validate: func(a *treeArgs) (err error) {
		a.Path, err = parsePath("path", a.RawPath)
		return err
	},
	Scope: tools.Scope[treeArgs]{Resolve: func(ctx context.Context, env *tools.Env, a treeArgs) ([]tools.Touch, error) {
		return onPaths(ctx, env, tools.LevelRead, a.Path)
	}},
	Run: tree,
}
