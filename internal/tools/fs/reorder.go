package fs

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// sortCustom is SiYuan's custom (manual) sort mode.
const sortCustom = 6

type reorderChild struct {
	ID   string `json:"id"`
	Path string `json:"path"` // storage path
	Name string `json:"name"`
	Sort int    `json:"sort"`
}

// reorderState is the P-reorder structure: the parent, its notebook's
// configuration, and every visible direct child in custom order.
type reorderState struct {
	Parent   location       `json:"parent"`
	Conf     siyuan.BoxConf `json:"conf"`
	Children []reorderChild `json:"children"`
	parent   humanPath      // the parent's fs path
	byTitle  map[string][]int
}

func readReorder(ctx context.Context, env *tools.Env, p humanPath) (reorderState, error) {
	var st reorderState
	if p.isRoot() {
		return st, failure.Invalid("/ lists notebooks; reorder the documents of a notebook or a document")
	}
	loc, err := locate(ctx, env, p)
	if err != nil {
		return st, err
	}
	if loc.Missing {
		return st, noDoc(p)
	}
	var (
		wg             sync.WaitGroup
		conf           siyuan.NotebookConf
		list           siyuan.DocList
		confErr, lsErr error
	)
	custom, unlimited := sortCustom, 0
	wg.Add(2)
	go func() {
		defer wg.Done()
		defer failure.Recover(&confErr)
		conf, confErr = env.Kernel.GetNotebookConf(ctx, loc.Notebook)
	}()
	go func() {
		defer wg.Done()
		defer failure.Recover(&lsErr)
		list, lsErr = env.Kernel.ListDocsByPath(ctx, siyuan.ListDocsRequest{Notebook: loc.Notebook, Path: loc.Storage, Sort: &custom, MaxListCount: &unlimited})
	}()
	wg.Wait()
	if err := errors.Join(confErr, lsErr); err != nil {
		return st, err
	}
	st = reorderState{Parent: loc, Conf: conf.Conf, Children: make([]reorderChild, 0, len(list.Files)), parent: p, byTitle: map[string][]int{}}
	for i, f := range list.Files {
		st.Children = append(st.Children, reorderChild{f.ID, f.Path, f.Name, f.Sort})
		st.byTitle[f.Name] = append(st.byTitle[f.Name], i)
	}
	return st, nil
}

// order maps orderedPaths onto the children: it must be a complete
// permutation of the visible children.
func (st reorderState) order(ordered []string) ([]reorderChild, error) {
	if len(st.Children) == 0 {
		return nil, failure.Invalid("%s has no child documents to order", st.parent.Raw)
	}
	seen := map[int]bool{}
	out := make([]reorderChild, 0, len(ordered))
	for i, raw := range ordered {
		q, err := parseDocPath(fmt.Sprintf("orderedPaths[%d]", i), raw)
		if err != nil {
			return nil, err
		}
		if q.Parent().Raw != st.parent.Raw {
			return nil, failure.Invalid("orderedPaths[%d] %s is not a direct child of %s", i, raw, st.parent.Raw)
		}
		idx := st.byTitle[q.Title()]
		switch {
		case len(idx) == 0:
			return nil, failure.Invalid("orderedPaths[%d] %s is not a visible child of %s", i, raw, st.parent.Raw)
		case len(idx) > 1:
			ids := make([]string, len(idx))
			for j, k := range idx {
				ids[j] = st.Children[k].ID
			}
			return nil, ambiguous("document", q.Raw, ids)
		case seen[idx[0]]:
			return nil, failure.Invalid("orderedPaths[%d] %s is listed twice", i, raw)
		}
		seen[idx[0]] = true
		out = append(out, st.Children[idx[0]])
	}
	if len(out) != len(st.Children) {
		var missing []string
		for i, c := range st.Children {
			if !seen[i] {
				missing = append(missing, st.parent.child(c.Name))
			}
		}
		sort.Strings(missing)
		return nil, failure.Invalid("orderedPaths must list every visible child of %s exactly once; missing: %s", st.parent.Raw, strings.Join(missing, ", "))
	}
	return out, nil
}

// reorderArgs are fs.reorder's arguments.
type reorderArgs struct {
	RawPath      string   `arg:"path" help:"the parent: /<notebook> or a document path" required:""`
	OrderedPaths []string `arg:"orderedPaths" help:"every visible child's path, in the wanted order" required:""`
	Path         humanPath
}

var reorder = tools.Write[reorderArgs, reorderState]{
	Name: "reorder", Summary: "set the manual order of a notebook's or a document's child documents (a complete permutation); a notebook root switches to custom sort",
	Example: map[string]any{"path": "/Research", "orderedPaths": []string{"/Research/B", "/Research/A"}, "validateOnly": true},
	Policy:  strict.WritePolicy{Class: strict.Mutation, Precondition: strict.ExpectedStructureHash},
	Validate: func(a *reorderArgs) (err error) {
		a.Path, err = parsePath("path", a.RawPath)
		if err == nil && a.Path.Virtual != "" {
			err = failure.Invalid("%s is a virtual file and has no children to reorder", a.Path.Virtual)
		}
		return err
	},
	Scope: tools.Scope[reorderArgs]{Resolve: func(ctx context.Context, env *tools.Env, a reorderArgs) ([]tools.Touch, error) {
		return onPaths(ctx, env, tools.LevelWrite, a.Path)
	}},
	Targets: func(a reorderArgs) []string { return sortedTargets(append([]string{a.Path.Raw}, a.OrderedPaths...)...) },
	State: func(ctx context.Context, env *tools.Env, a reorderArgs) (reorderState, error) {
		return readReorder(ctx, env, a.Path)
	},
	Check: func(a reorderArgs, st reorderState) error {
		_, err := st.order(a.OrderedPaths)
		return err
	},
	Execute: func(ctx context.Context, env *tools.Env, a reorderArgs, st reorderState) (tools.Payload, error) {
		order, err := st.order(a.OrderedPaths)
		if err != nil {
			return nil, tools.Refuse(err)
		}
		paths := make([]string, len(order))
		for i, c := range order {
			paths[i] = c.Path
		}
		if err := env.Kernel.ChangeSort(ctx, st.Parent.Notebook, paths); err != nil {
			return nil, tools.WriteFailure(err, false)
		}
		out := tools.Payload{"path": st.parent.Raw, "notebook": st.Parent.Notebook, "reordered": len(order), "sortModeSet": false}
		if st.Parent.ID == "" && st.Conf.SortMode != sortCustom {
			conf := st.Conf
			conf.SortMode = sortCustom
			if _, err := env.Kernel.SetNotebookConf(ctx, st.Parent.Notebook, conf); err != nil {
				return nil, tools.WriteFailure(err, true)
			}
			out["sortModeSet"] = true
		} else if st.Parent.ID != "" && st.Conf.SortMode != sortCustom {
			out["notebookSortMode"] = st.Conf.SortMode
			out["hint"] = "the order is stored; the file tree shows it when the notebook sorts by custom order (mode 6)"
		}
		return out, nil
	},
	Readback: reorderReadback,
}

// reorderReadback requires the exact requested order under custom sort
// (and, for a notebook root, the notebook in custom sort mode).
func reorderReadback(ctx context.Context, env *tools.Env, a reorderArgs, payload tools.Payload) (any, error) {
	p := a.Path
	var want []string
	var st reorderState
	err := waitFor(ctx, func() (bool, error) {
		var err error
		if st, err = readReorder(ctx, env, p); err != nil {
			return false, err
		}
		if want == nil {
			order, err := st.order(a.OrderedPaths)
			if err != nil {
				return false, err
			}
			for _, c := range order {
				want = append(want, c.ID)
			}
		}
		if st.Parent.ID == "" && st.Conf.SortMode != sortCustom {
			return false, nil
		}
		if len(st.Children) != len(want) {
			return false, nil
		}
		for i, c := range st.Children {
			if c.ID != want[i] {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("the children of %s are not in the requested custom order: %w", p.Raw, err)
	}
	return st, nil
}
