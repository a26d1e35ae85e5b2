package search

import (
	"context"
	"fmt"
	"html"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/canon"
	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/kernelview"
)

// replaceKinds are the kinds SiYuan's findReplace takes in replaceTypes.
var replaceKinds = []string{"text", "docTitle", "codeBlock", "mathBlock", "htmlBlock", "code", "em", "strong", "kbd", "mark", "s",
	"sub", "sup", "u", "tag", "inlineMath", "inlineMemo", "blockRef", "fileAnnotationRef", "imgText", "imgTitle", "imgSrc",
	"aText", "aTitle", "aHref"}

// maxReplaceIDs bounds one find_replace: every id is read at preflight
// and again at commit.
const maxReplaceIDs = 200

type frArgs struct {
	K     string         `arg:"k" help:"the text to find (a regex with method 3)" required:""`
	R     string         `arg:"r" help:"the replacement; \"\" deletes the matches. In text it is parsed as inline Markdown, and $1-style groups expand" required:""`
	Given []string       `arg:"ids" help:"the blocks to replace in (each with everything inside it), at most 200; a document id changes only its title and tags (replaceTypes docTitle)" id:"" required:""`
	Paths []string       `arg:"paths" help:"accepted for upstream: their notebooks need write, but SiYuan ignores paths when ids are given"`
	Types map[string]any `arg:"types" help:"accepted for upstream; SiYuan ignores it when ids are given"`
	methodArgs
	OrderBy    *int           `arg:"orderBy" help:"accepted for upstream; ignored with ids" min:"0" max:"7"`
	SortBy     blockSort      `arg:"sortBy" help:"accepted for upstream; ignored with ids"`
	GroupBy    *int           `arg:"groupBy" help:"0 only: SiYuan refuses to replace in grouped results" min:"0" max:"1"`
	GivenKinds map[string]any `arg:"replaceTypes" help:"the kinds replaced, e.g. {\"text\":true,\"strong\":true} (default {\"text\":true}; SiYuan itself replaces nothing without them): text, docTitle, codeBlock, mathBlock, htmlBlock, code, em, strong, kbd, mark, s, sub, sup, u, tag, inlineMath, inlineMemo, blockRef, fileAnnotationRef, imgText, imgTitle, imgSrc, aText, aTitle, aHref"`
	// IDs are the blocks (sorted, each once), Regex whether k is one,
	// Kinds the kinds replaced, Ignored the arguments the kernel ignores
	// when ids are given.
	IDs     []string
	Regex   bool
	Kinds   map[string]bool
	Ignored []string
}

func parseFindReplace(f *frArgs) error {
	f.IDs = kernelview.SortedUnique(f.Given)
	if f.K == "" {
		return failure.Invalid("argument \"k\" (the text to find) must not be empty")
	}
	if f.K == f.R {
		return failure.Invalid("k and r are the same: SiYuan replaces nothing")
	}
	if len(f.IDs) == 0 {
		return failure.Invalid("ids must name at least one block or document (SiYuan would take none as every block the keyword finds in the workspace)")
	}
	if len(f.IDs) > maxReplaceIDs {
		return failure.Invalid("ids: at most %d per call, got %d", maxReplaceIDs, len(f.IDs))
	}
	switch m, _ := f.resolve(); m {
	case 2:
		return failure.Invalid("method 2 (SQL): SiYuan's find and replace does not take SQL; use 0 (keyword) or 3 (regex)")
	case 3:
		f.Regex = true
		if _, err := regexp.Compile(f.K); err != nil {
			return failure.Invalid("k is not a regular expression (Go/RE2 syntax, as SiYuan's): %v", err)
		}
	}
	if f.GroupBy != nil && *f.GroupBy != 0 {
		return failure.Invalid("groupBy 1: SiYuan does not replace in results grouped by document")
	}
	f.Kinds = map[string]bool{"text": true}
	if obj := f.GivenKinds; obj != nil {
		kinds, err := boolMap("replaceTypes", obj)
		if err != nil {
			return err
		}
		f.Kinds = map[string]bool{}
		for k, on := range kinds {
			if !slices.Contains(replaceKinds, k) {
				return failure.Invalid("replaceTypes: %q is no kind SiYuan replaces in (%s)", k, strings.Join(replaceKinds, ", "))
			}
			if on {
				f.Kinds[k] = true
			}
		}
		if len(f.Kinds) == 0 {
			return failure.Invalid("replaceTypes enables no kind: SiYuan would replace nothing")
		}
	}
	for _, g := range []struct {
		name  string
		given bool
	}{{"paths", f.Paths != nil}, {"types", f.Types != nil}, {"orderBy", f.OrderBy != nil}, {"sortBy", f.SortBy != ""}, {"groupBy", f.GroupBy != nil}} {
		if g.given {
			f.Ignored = append(f.Ignored, g.name)
		}
	}
	return nil
}

// frEntry is one block the replace would change, with the digest of its
// content (kramdown and attributes, timestamps left out).
type frEntry struct {
	ID     string `json:"id"`
	Kind   string `json:"kind"` // "block" or "docTitle"
	Digest string `json:"digest"`
}

// frState is the manifest find_replace is guarded by.
type frState struct {
	Touched   []frEntry `json:"touched"`
	Untouched []string  `json:"untouched"`
	Missing   []string  `json:"missing"`
}

func (s frState) ids() []string {
	out := make([]string, len(s.Touched))
	for i, e := range s.Touched {
		out[i] = e.ID
	}
	return out
}

// readReplaceState reads every id and decides, as SiYuan's findReplace
// walks them, which the replace would change.
func readReplaceState(ctx context.Context, env *tools.Env, a frArgs) (frState, error) {
	sts, err := kernelview.ReadBlockContents(ctx, env, a.IDs)
	if err != nil {
		return frState{}, err
	}
	m := newMatcher(a)
	st := frState{Touched: []frEntry{}, Untouched: []string{}, Missing: []string{}}
	for _, b := range sts {
		if b.Missing {
			st.Missing = append(st.Missing, b.ID)
			continue
		}
		kind, hit := m.state(b)
		if !hit {
			st.Untouched = append(st.Untouched, b.ID)
			continue
		}
		d, err := canon.Digest(b)
		if err != nil {
			return frState{}, err
		}
		st.Touched = append(st.Touched, frEntry{ID: b.ID, Kind: kind, Digest: d})
	}
	sort.Slice(st.Touched, func(i, j int) bool { return st.Touched[i].ID < st.Touched[j].ID })
	return st, nil
}

func findReplaceCheck(a frArgs, st frState) error {
	if len(st.Untouched) == 0 && len(st.Touched) == 0 {
		return failure.New(failure.NotFound, "none of ids exists; nothing was replaced").With("missing", st.Missing).Attempted(false)
	}
	if len(st.Touched) == 0 {
		e := failure.New(failure.NotFound, "no block of ids holds %q in the kinds replaceTypes enables (%s); nothing was replaced", a.K, kindList(a.Kinds))
		e.Action = "check the text (text matches in any case, spans and code case-sensitively), or enable the kind that holds it in replaceTypes (a document id changes only its title: docTitle)"
		return e.With("untouched", st.Untouched).Attempted(false)
	}
	return nil
}

func kindList(kinds map[string]bool) string {
	var out []string
	for k, on := range kinds {
		if on {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// frReplaced is what find_replace hands its readback: the blocks sent to
// the kernel and, by id, the digest of each before.
type frReplaced struct {
	ids     []string
	digests map[string]string
}

func findReplaceExecute(ctx context.Context, env *tools.Env, a frArgs, st frState) (tools.Payload, frReplaced, error) {
	method := 0
	if a.Regex {
		method = 3
	}
	ids := st.ids()
	// Only the blocks the manifest holds go to the kernel, so that it
	// changes nothing the preflight did not show.
	if err := env.Kernel.FindReplace(ctx, siyuan.FindReplaceRequest{K: a.K, R: a.R, IDs: ids, Method: method, ReplaceTypes: a.Kinds}); err != nil {
		return nil, frReplaced{}, tools.WriteFailure(err, false)
	}
	digests := map[string]string{}
	for _, e := range st.Touched {
		digests[e.ID] = e.Digest
	}
	return tools.Payload{"replaced": ids, "count": len(ids)}, frReplaced{ids, digests}, nil
}

// findReplaceReadback requires every touched block to have changed; in
// plain keyword mode also that the keyword is gone from the kinds replaced
// (unless the replacement holds it) and the replacement is there.
func findReplaceReadback(ctx context.Context, env *tools.Env, a frArgs, _ tools.Payload, r frReplaced) (any, error) {
	ids, digests := r.ids, r.digests
	// A renamed title may read old until SiYuan's queue is flushed.
	if err := env.Kernel.FlushTransaction(ctx); err != nil {
		return nil, err
	}
	sts, err := kernelview.ReadBlockContents(ctx, env, ids)
	if err != nil {
		return nil, err
	}
	m := newMatcher(a)
	keepsKeyword := strings.Contains(strings.ToLower(a.R), strings.ToLower(a.K))
	for _, b := range sts {
		if b.Missing {
			return nil, fmt.Errorf("block %s is gone after the replace", b.ID)
		}
		if d, err := canon.Digest(b); err == nil && d == digests[b.ID] {
			return nil, fmt.Errorf("block %s did not change", b.ID)
		}
		if a.Regex {
			continue
		}
		if _, hit := m.state(b); hit && !keepsKeyword {
			return nil, fmt.Errorf("block %s still holds %q", b.ID, a.K)
		}
		if a.R != "" && !holds(b, a.R) {
			return nil, fmt.Errorf("block %s does not hold the replacement %q", b.ID, a.R)
		}
	}
	return readReplaceState(ctx, env, a)
}

// holds says whether a block's content (or a document's title) carries
// text, as written or HTML-escaped (code spans keep it escaped), "/" in a
// title being SiYuan's full-width slash.
func holds(b kernelview.BlockState, text string) bool {
	if b.Attrs["type"] == "doc" {
		return strings.Contains(b.Attrs["title"], strings.ReplaceAll(text, "/", "／")) || strings.Contains(b.Attrs["tags"], strings.Trim(text, "#"))
	}
	return strings.Contains(b.Kramdown, text) || strings.Contains(b.Kramdown, html.EscapeString(text))
}

func findReplaceAction() *tools.Action {
	return tools.WriteWith[frArgs, frState, frReplaced]{Write: tools.Write[frArgs, frState]{
		Name: "find_replace", Summary: "replace text in given blocks and documents (a person must confirm; guarded by the manifest of the blocks it would change, each read back changed)",
		Policy:      strict.WritePolicy{Class: strict.Mutation, Precondition: strict.ExpectedManifestHash},
		Destructive: true, Dangerous: true,
		Example:  map[string]any{"k": "Q3 plan", "r": "Q4 plan", "ids": []string{"20260812120000-abcdefg"}, "validateOnly": true},
		Validate: parseFindReplace,
		Scope: tools.Scope[frArgs]{Touches: func(a frArgs) []tools.Touch {
			ts := tools.OnBlocks(a.IDs, tools.LevelWrite)
			for _, p := range a.Paths {
				nb, _, _ := cutNotebook(p)
				ts = append(ts, tools.OnNotebook(nb, tools.LevelWrite))
			}
			return ts
		}},
		Targets: func(a frArgs) []string { return a.IDs },
		State:   readReplaceState,
		Check:   findReplaceCheck,
		Notes: func(a frArgs, st frState) map[string]any {
			n := map[string]any{"willReplace": st.ids(), "untouched": st.Untouched, "missing": st.Missing, "replaceTypes": a.Kinds}
			if len(a.Ignored) > 0 {
				n["ignoredArguments"] = a.Ignored
				n["hint"] = "SiYuan ignores paths, types, orderBy, sortBy and groupBy when ids are given: only the blocks in willReplace change"
			}
			return n
		},
	},
		Execute:  findReplaceExecute,
		Readback: findReplaceReadback,
	}.Action()
}
