package document

import (
	"context"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

type searchDocsArgs struct {
	Notebook string `arg:"notebook" help:"the notebook the search is for (its read permission is checked)" id:"" required:""`
	Query    string `arg:"query" help:"words of the title" required:""`
	Path     string `arg:"path" help:"a storage path of the notebook (/ or /20260812120000-abcdefg.sy): only documents at or under it"`
}

var searchDocs = tools.Read[searchDocsArgs]{
	Name: "search_docs", Summary: "find documents by title words (every word, case-insensitive; also name, alias and memo), in readable notebooks, exact titles first; path narrows the hits to a storage path of the notebook (SiYuan searches its index, which lags just-written documents by a moment)",
	Example: map[string]any{"notebook": "20260812115959-nbnbnbn", "query": "plan"},
	Validate: func(s *searchDocsArgs) error {
		if strings.TrimSpace(s.Query) == "" {
			return failure.Invalid("query must not be empty")
		}
		if s.Path != "" && s.Path != "/" && !strings.HasSuffix(s.Path, ".sy") {
			return failure.Invalid("argument \"path\" must be / or a storage path like /20260812120000-abcdefg.sy")
		}
		return nil
	},
	Scope: tools.Scope[searchDocsArgs]{Touches: func(a searchDocsArgs) []tools.Touch {
		return []tools.Touch{tools.OnNotebook(a.Notebook, tools.LevelRead)}
	}},
	Run: func(ctx context.Context, env *tools.Env, a searchDocsArgs) (any, error) {
		hits, err := env.Kernel.SearchDocs(ctx, a.Query)
		if err != nil {
			return nil, err
		}
		type doc struct {
			Notebook string `json:"notebook"`
			Path     string `json:"path"`
			HPath    string `json:"hPath"`
			ID       string `json:"id,omitempty"`
			Kind     string `json:"kind"`
		}
		docs := []doc{}
		seen := map[string]bool{}
		for _, h := range hits {
			// Readable notebooks only; a hidden one is never mentioned.
			if tools.LevelOf(ctx, h.Box) < tools.LevelRead || seen[h.Box+h.Path] {
				continue
			}
			if a.Path != "" && (h.Box != a.Notebook || !underPath(h.Path, a.Path)) {
				continue
			}
			seen[h.Box+h.Path] = true // the kernel's index may list a document twice
			d := doc{Notebook: h.Box, Path: h.Path, HPath: h.HPath, Kind: "document"}
			if h.Path == "/" {
				d.Kind = "notebook"
			} else {
				d.ID = strings.TrimSuffix(h.Path[strings.LastIndex(h.Path, "/")+1:], ".sy")
			}
			docs = append(docs, d)
		}
		out := map[string]any{"query": a.Query, "docs": docs, "count": len(docs)}
		if a.Path != "" {
			out["path"], out["pathApplied"] = a.Path, true
		}
		return out, nil
	},
}

// underPath reports whether storage path p is at or under root.
func underPath(p, root string) bool {
	if root == "/" {
		return true
	}
	return p == root || strings.HasPrefix(p, docDir(root)+"/")
}
