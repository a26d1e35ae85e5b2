package tag

import (
	"context"
	"fmt"
	"html"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

type listArgs struct {
	Keyword           string
	Sort              int
	IgnoreMaxListHint bool
	App               string
}

// defaultApp is the app upstream names itself with in getTag (SiYuan
// shows its too-many-tags hint to that app).
const defaultApp = "siyuan-mcp-sisyphus"

var list = tools.Read[listArgs]{
	Name: "list", Summary: "the tags as a tree with counts (getTag), or the labels matching a keyword, marked (searchTag); only tags used in notebooks you may see",
	Params: []tools.Param{
		{Name: "keyword", Type: tools.String, Description: "search labels containing every space-separated word (case-insensitive); omit for the whole tree"},
		{Name: "query", Type: tools.String, Description: "alias of keyword"},
		{Name: "sort", Type: tools.Integer, Description: "tree order: 0 name, 1 name descending, 4/5 natural, 7/8 count (SiYuan also keeps it as its tag sort setting)", Min: tools.IntP(0), Max: tools.IntP(15)},
		{Name: "ignoreMaxListHint", Type: tools.Boolean, Description: "do not show SiYuan's too-many-tags hint"},
		{Name: "app", Type: tools.String, Description: "the app SiYuan shows its hint to"},
	},
	Example: map[string]any{"keyword": "project"},
	Parse: func(a *tools.Args) (listArgs, error) {
		kw := a.String("keyword")
		if strings.TrimSpace(kw) == "" {
			kw = a.String("query")
		}
		app := a.String("app")
		if app == "" {
			app = defaultApp
		}
		return listArgs{Keyword: strings.TrimSpace(kw), Sort: a.Int("sort"), IgnoreMaxListHint: a.Bool("ignoreMaxListHint"), App: app}, nil
	},
	Scope: tools.Scope[listArgs]{Global: true},
	Run: func(ctx context.Context, env *tools.Env, a listArgs) (any, error) {
		visible, err := visibleLabels(ctx, env)
		if err != nil {
			return nil, err
		}
		if a.Keyword != "" {
			labels, err := env.Kernel.SearchTag(ctx, a.Keyword)
			if err != nil {
				return nil, err
			}
			if visible != nil {
				kept := labels[:0]
				for _, l := range labels {
					if visible[unmark(l)] > 0 {
						kept = append(kept, l)
					}
				}
				labels = kept
			}
			out := map[string]any{"k": a.Keyword, "tags": labels, "count": len(labels), "resolvedArgs": map[string]any{"keyword": a.Keyword}}
			if len(labels) == 0 {
				out["warning"] = "no tag matches; a tag written a moment ago may not be indexed yet: check the text uses #tag# and retry shortly"
			}
			return out, nil
		}
		tags, err := env.Kernel.GetTag(ctx, siyuan.GetTagRequest{Sort: a.Sort, IgnoreMaxListHint: a.IgnoreMaxListHint, App: a.App})
		if err != nil {
			return nil, err
		}
		if visible != nil {
			tags = pruneTags(tags, visible)
		}
		return map[string]any{"tags": tags, "count": countTags(tags)}, nil
	},
}

// visibleLabels counts each label's spans in the notebooks the call may
// see, or is nil when the call may see every notebook (nothing to filter).
func visibleLabels(ctx context.Context, env *tools.Env) (map[string]int, error) {
	p := tools.PolicyFrom(ctx)
	if p == nil || !p.Hides() {
		return nil, nil
	}
	rows, err := env.Kernel.QuerySQL(ctx, fmt.Sprintf("SELECT id, box, content FROM spans WHERE type LIKE '%%tag%%' LIMIT %d", 50*maxTagged))
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	seen := map[string]bool{} // a row the index holds twice counts once
	for _, r := range rows {
		id, _ := r["id"].(string)
		if seen[id] {
			continue
		}
		seen[id] = true
		box, _ := r["box"].(string)
		c, _ := r["content"].(string)
		if tools.Visible(ctx, box) {
			out[html.UnescapeString(c)]++
		}
	}
	return out, nil
}

// pruneTags keeps the tags used in visible notebooks (and the parents of
// nested ones), with their counts there.
func pruneTags(tags []siyuan.Tag, visible map[string]int) []siyuan.Tag {
	out := []siyuan.Tag{}
	for _, t := range tags {
		kids := pruneTags(t.Children, visible)
		n := visible[html.UnescapeString(t.Label)]
		if n == 0 && len(kids) == 0 {
			continue
		}
		t.Count = n
		t.Children = nil
		if len(kids) > 0 {
			t.Children = kids
		}
		out = append(out, t)
	}
	return out
}

func countTags(tags []siyuan.Tag) int {
	n := len(tags)
	for _, t := range tags {
		n += countTags(t.Children)
	}
	return n
}

// unmark is a searchTag label without its <mark>s, unescaped.
func unmark(l string) string {
	return html.UnescapeString(strings.NewReplacer("<mark>", "", "</mark>", "").Replace(l))
}
