package tag

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"slices"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

type listArgs struct {
	Keyword           string `arg:"keyword" help:"search labels containing every space-separated word (case-insensitive); omit for the whole tree"`
	Query             string `arg:"query" help:"alias of keyword"`
	Sort              int    `arg:"sort" help:"tree order: 0 name, 1 name descending, 4/5 natural, 7/8 count (SiYuan also keeps it as its tag sort setting)" min:"0" max:"15"`
	IgnoreMaxListHint bool   `arg:"ignoreMaxListHint" help:"do not show SiYuan's too-many-tags hint"`
	App               string `arg:"app" help:"the app SiYuan shows its hint to"`
}

// complete reads query as keyword when keyword is blank, and names the
// default app.
func (a *listArgs) complete() error {
	if strings.TrimSpace(a.Keyword) == "" {
		a.Keyword = a.Query
	}
	a.Keyword = strings.TrimSpace(a.Keyword)
	if a.App == "" {
		a.App = defaultApp
	}
	return nil
}

// defaultApp is the app upstream names itself with in getTag (SiYuan
// shows its too-many-tags hint to that app).
const defaultApp = "siyuan-mcp-sisyphus"

var list = tools.Read[listArgs]{
	Name: "list", Summary: "the tags as a tree with counts (getTag), or the labels matching a keyword, marked (searchTag); only tags used in notebooks you may see",
	Example:  map[string]any{"keyword": "project"},
	Validate: (*listArgs).complete,
	Scope:    tools.Scope[listArgs]{Global: true},
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
		if visible == nil {
			tags, err := env.Kernel.GetTag(ctx, siyuan.GetTagRequest{Sort: a.Sort, IgnoreMaxListHint: a.IgnoreMaxListHint, App: a.App})
			if err != nil {
				return nil, err
			}
			return map[string]any{"tags": tags, "count": countTags(tags)}, nil
		}
		// SiYuan cuts its tree once it lists more tags than its file tree
		// shows (and pushes a hint to its window), counting hidden tags:
		// the tree is asked whole and cut here over the visible tags.
		tags, err := env.Kernel.GetTag(ctx, siyuan.GetTagRequest{Sort: a.Sort, IgnoreMaxListHint: true, App: a.App})
		if err != nil {
			return nil, err
		}
		tags = pruneTags(tags, visible, a.Sort)
		if !a.IgnoreMaxListHint {
			limit, err := maxListCount(ctx, env)
			if err != nil {
				return nil, err
			}
			tags = cutTags(tags, limit)
		}
		return map[string]any{"tags": tags, "count": countTags(tags)}, nil
	},
}

// maxListedTags are the labels a count reads at most (one row each).
const maxListedTags = 100000

// visibleLabels counts each label's spans in the notebooks the call may
// see, or is nil when the call may see every notebook (nothing to filter).
// The index counts them, only in those notebooks, so that no hidden span
// takes a place under the statement's LIMIT; a span the index holds twice
// counts once.
func visibleLabels(ctx context.Context, env *tools.Env) (map[string]int, error) {
	p := tools.PolicyFrom(ctx)
	if p == nil || !p.Hides() {
		return nil, nil
	}
	out := map[string]int{}
	boxes, err := tools.VisibleNotebooks(ctx, env)
	if err != nil || len(boxes) == 0 {
		return out, err
	}
	rows, err := env.Kernel.QuerySQL(ctx, fmt.Sprintf("SELECT content, COUNT(DISTINCT id) AS n FROM spans WHERE type LIKE '%%tag%%' AND box IN (%s) GROUP BY content LIMIT %d",
		tools.SQLList(boxes), maxListedTags))
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		c, _ := r["content"].(string)
		out[html.UnescapeString(c)] += tools.SQLCount(r["n"])
	}
	return out, nil
}

// Tag sort modes ordering by count (siyuan.GetTagRequest).
const (
	sortCountAsc  = 7
	sortCountDesc = 8
)

// pruneTags keeps the tags used in visible notebooks (and the parents of
// nested ones), with their counts there. Ordered by count (sort 7, 8),
// each level is ordered again by those counts (SiYuan's order counts the
// hidden spans too; equal counts keep its order).
func pruneTags(tags []siyuan.Tag, visible map[string]int, sortMode int) []siyuan.Tag {
	out := []siyuan.Tag{}
	for _, t := range tags {
		kids := pruneTags(t.Children, visible, sortMode)
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
	switch sortMode {
	case sortCountAsc:
		slices.SortStableFunc(out, func(a, b siyuan.Tag) int { return cmp.Compare(a.Count, b.Count) })
	case sortCountDesc:
		slices.SortStableFunc(out, func(a, b siyuan.Tag) int { return cmp.Compare(b.Count, a.Count) })
	}
	return out
}

// cutTags cuts a tree as SiYuan's getTag does without ignoreMaxListHint:
// top-level tags in order, each with every tag under it, until more than
// limit tags are listed (the one that passes the limit is kept).
func cutTags(tags []siyuan.Tag, limit int) []siyuan.Tag {
	total := 0
	for i, t := range tags {
		total += countTags(t.Children) + 1
		if limit < total {
			return tags[:i+1]
		}
	}
	return tags
}

// maxListCount is SiYuan's fileTree.maxListCount (512 when unset or
// below 1).
func maxListCount(ctx context.Context, env *tools.Env) (int, error) {
	conf, err := env.Kernel.GetConf(ctx)
	if err != nil {
		return 0, err
	}
	var c struct {
		FileTree struct {
			MaxListCount *int `json:"maxListCount"`
		} `json:"fileTree"`
	}
	if err := json.Unmarshal(conf.Conf, &c); err != nil {
		return 0, fmt.Errorf("SiYuan's configuration: %w", err)
	}
	if c.FileTree.MaxListCount == nil || *c.FileTree.MaxListCount < 1 {
		return defaultMaxListCount, nil // as SiYuan reads it
	}
	return *c.FileTree.MaxListCount, nil
}

// defaultMaxListCount is SiYuan's default fileTree.maxListCount.
const defaultMaxListCount = 512

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
