package search

import (
	"context"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

type refSearchArgs struct {
	ID, RootID, K    string
	BeforeLen        int
	Square, Database bool
	ReqID            string
}

func parseRefSearch(a *tools.Args) (refSearchArgs, error) {
	r := refSearchArgs{ID: a.String("id"), RootID: a.String("rootID"), K: a.String("k"), BeforeLen: a.Int("beforeLen"),
		Square: a.Bool("isSquareBrackets"), Database: a.Bool("isDatabase"), ReqID: a.String("reqId")}
	if err := tools.CheckID("id", r.ID); err != nil {
		return r, err
	}
	if r.RootID != "" {
		if err := tools.CheckID("rootID", r.RootID); err != nil {
			return r, err
		}
	}
	return r, nil
}

type refCandidate struct {
	ID       string `json:"id"`
	RootID   string `json:"rootID"`
	Notebook string `json:"notebook"`
	HPath    string `json:"hpath"`
	Type     string `json:"type"`
	Content  string `json:"content"`
	RefText  string `json:"refText"`
	RefCount int    `json:"refCount"`
}

// searchRefs answers SiYuan's block ref candidate search: what a ref typed
// in block id could point at.
func searchRefs(ctx context.Context, env *tools.Env, a refSearchArgs) (any, error) {
	req := siyuan.RefSearchRequest{ID: a.ID, RootID: a.RootID, K: a.K, BeforeLen: a.BeforeLen, IsSquareBrackets: a.Square, IsDatabase: a.Database}
	if a.ReqID != "" {
		req.ReqID = a.ReqID
	}
	res, err := env.Kernel.SearchRefBlock(ctx, req)
	if err != nil {
		return nil, err
	}
	out := []refCandidate{}
	seen := map[string]bool{}
	for _, b := range res.Blocks {
		if seen[b.ID] || !tools.Visible(ctx, b.Box) {
			continue // hidden notebooks never show; a doubled index row shows once
		}
		seen[b.ID] = true
		out = append(out, refCandidate{ID: b.ID, RootID: b.RootID, Notebook: b.Box, HPath: b.HPath, Type: b.Type, Content: b.Content,
			RefText: b.RefText, RefCount: b.RefCount})
	}
	ids := make([]string, len(out))
	for i, c := range out {
		ids[i] = c.ID
	}
	counts, err := tools.VisibleRefCounts(ctx, env, ids)
	if err != nil {
		return nil, err
	}
	if counts != nil {
		// SiYuan's count takes in references from hidden notebooks.
		for i := range out {
			out[i].RefCount = counts[out[i].ID]
		}
	}
	ret := map[string]any{"blocks": out, "data": out, "total": len(out), "newDoc": res.NewDoc, "k": res.K,
		"hint": "ref candidates, as SiYuan's (( search lists them: without k the blocks referenced most recently; with k the blocks whose text, name, alias or memo hold it (at most 64), never the block itself or its document. To find the blocks that reference a block, use get_backlinks"}
	if a.ReqID != "" {
		ret["reqId"] = res.ReqID
	}
	return ret, nil
}

func refSearchAction() *tools.Action {
	return tools.Read[refSearchArgs]{
		Name: "search_refs", Summary: "block ref candidates for a keyword, as SiYuan's (( search lists them (blocks referencing a block: get_backlinks)",
		Example: map[string]any{"id": "20260812120000-abcdefg", "k": "release plan"},
		Params: []tools.Param{
			tools.IDParam("id", "the block the ref would be written in", true),
			tools.IDParam("rootID", "its document (left out of the candidates)", false),
			{Name: "k", Type: tools.String, Description: "keyword; empty lists the blocks referenced most recently"},
			{Name: "beforeLen", Type: tools.Integer, Description: "characters kept before the first highlight", Default: 512, Min: tools.IntP(0)},
			{Name: "isSquareBrackets", Type: tools.Boolean, Description: "the [[ form of the search (documents only when SiYuan is set so)"},
			{Name: "isDatabase", Type: tools.Boolean, Description: "searching for a database row's block (newDoc is then always true)"},
			{Name: "reqId", Type: tools.String, Description: "echoed back"},
		},
		Parse: parseRefSearch,
		Scope: tools.Scope[refSearchArgs]{Touches: func(a refSearchArgs) []tools.Touch {
			ts := []tools.Touch{tools.OnBlock(a.ID, tools.LevelRead)}
			if a.RootID != "" {
				ts = append(ts, tools.OnBlock(a.RootID, tools.LevelRead))
			}
			return ts
		}},
		Run: searchRefs,
	}.Action()
}
