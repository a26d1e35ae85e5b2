package search

import (
	"context"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

type refSearchArgs struct {
	ID        string `arg:"id" help:"the block the ref would be written in" id:"" required:""`
	RootID    string `arg:"rootID" help:"its document (left out of the candidates)" id:""`
	K         string `arg:"k" help:"keyword; empty lists the blocks referenced most recently"`
	BeforeLen int    `arg:"beforeLen" help:"characters kept before the first highlight" default:"512" min:"0"`
	Square    bool   `arg:"isSquareBrackets" help:"the [[ form of the search (documents only when SiYuan is set so)"`
	Database  bool   `arg:"isDatabase" help:"searching for a database row's block (newDoc is then always true)"`
	ReqID     string `arg:"reqId" help:"echoed back"`
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
