package search

import (
	"context"
	"strconv"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// backlinkLimit bounds each list get_backlinks answers.
const backlinkLimit = 200

type backlinkArgs struct {
	ID        string `arg:"id" help:"the referenced block or document" id:"" required:""`
	Keyword   string `arg:"keyword" help:"only referencing blocks whose text holds this"`
	Scope     string `arg:"refTreeID" help:"only references from this document" id:""`
	ScopeRoot string `arg:"scopeRootId" help:"upstream's name for refTreeID (wins)" id:""`
	Mode      string `arg:"mode" help:"links, mentions or both" enum:"links,mentions,both" default:"both"`
}

func parseBacklinks(b *backlinkArgs) error {
	b.Keyword = strings.TrimSpace(b.Keyword)
	if b.ScopeRoot != "" {
		b.Scope = b.ScopeRoot
	}
	return nil
}

// containsFold is an SQL condition: col holds s, ASCII case ignored, as
// LIKE would match. Not LIKE ... ESCAPE: SiYuan answers no rows to any
// statement with an ESCAPE clause.
func containsFold(col, s string) string {
	return "instr(lower(" + col + "), lower(" + sqlQuote(s) + ")) > 0"
}

type backlinkHit struct {
	ID       string `json:"id"`
	RootID   string `json:"rootId"`
	Notebook string `json:"notebook"`
	HPath    string `json:"hpath"`
	Type     string `json:"type"`
	Content  string `json:"content"`
	Markdown string `json:"markdown"`
	Anchor   string `json:"anchor,omitempty"`
}

func hitsOf(ctx context.Context, rows []map[string]any, skip map[string]bool) []backlinkHit {
	out := []backlinkHit{}
	seen := map[string]bool{}
	for _, r := range rows {
		h := backlinkHit{ID: rowString(r, "id"), RootID: rowString(r, "root_id"), Notebook: rowString(r, "box"), HPath: rowString(r, "hpath"),
			Type: rowString(r, "type"), Content: rowString(r, "content"), Markdown: rowString(r, "markdown"), Anchor: rowString(r, "anchor")}
		if h.ID == "" || seen[h.ID] || skip[h.ID] || !tools.Visible(ctx, h.Notebook) {
			continue // a hidden notebook's blocks never show
		}
		seen[h.ID] = true
		out = append(out, h)
	}
	return out
}

// getBacklinks answers from the SQL index: SiYuan's getBacklinkDoc pages
// one referencing document at a time (and fails without refTreeID), so the
// index's refs table is what lists them all. Mentions are blocks whose text
// holds the target's text (a document's title) or name without
// referencing it.
func getBacklinks(ctx context.Context, env *tools.Env, a backlinkArgs) (any, error) {
	target, err := env.Kernel.QuerySQL(ctx, "SELECT id, content, name, type FROM blocks WHERE id = "+sqlQuote(a.ID)+" LIMIT 1")
	if err != nil {
		return nil, err
	}
	if len(target) == 0 {
		e := failure.New(failure.NotFound, "block %s is not in SiYuan's index (it does not exist, or was written in the last seconds)", a.ID)
		e.Action = "check the id; after a write, retry in a few seconds"
		return nil, e
	}
	scope := ""
	if a.Scope != "" {
		scope = " AND b.root_id = " + sqlQuote(a.Scope)
	}
	kw := ""
	if a.Keyword != "" {
		kw = " AND " + containsFold("b.content", a.Keyword)
	}
	ret := map[string]any{"id": a.ID, "mode": a.Mode, "backlinks": []backlinkHit{}, "backmentions": []backlinkHit{}}
	if a.Scope != "" {
		ret["refTreeID"] = a.Scope
	}
	linkRows, err := env.Kernel.QuerySQL(ctx, "SELECT r.block_id AS id, b.root_id, b.box, b.hpath, b.type, b.content, b.markdown, r.content AS anchor "+
		"FROM refs r JOIN blocks b ON b.id = r.block_id WHERE r.def_block_id = "+sqlQuote(a.ID)+scope+kw+" ORDER BY b.updated DESC LIMIT "+itoa(backlinkLimit+1))
	if err != nil {
		return nil, err
	}
	links := hitsOf(ctx, linkRows, nil)
	if a.Mode != "mentions" {
		ret["backlinks"] = links[:min(len(links), backlinkLimit)]
		ret["linkRefsCount"] = len(links)
	}
	if a.Mode != "links" {
		label := strings.TrimSpace(rowString(target[0], "content"))
		if label == "" {
			label = strings.TrimSpace(rowString(target[0], "name"))
		}
		if label != "" {
			rows, err := env.Kernel.QuerySQL(ctx, "SELECT b.id, b.root_id, b.box, b.hpath, b.type, b.content, b.markdown FROM blocks b WHERE b.id != "+
				sqlQuote(a.ID)+" AND b.type != 'd' AND instr(b.content, "+sqlQuote(label)+") > 0"+scope+kw+" ORDER BY b.updated DESC LIMIT "+itoa(backlinkLimit+1))
			if err != nil {
				return nil, err
			}
			linked := map[string]bool{}
			for _, h := range links {
				linked[h.ID] = true
			}
			mentions := hitsOf(ctx, rows, linked)
			ret["backmentions"] = mentions[:min(len(mentions), backlinkLimit)]
			ret["mentionsCount"] = len(mentions)
			ret["mentionLabel"] = label
		}
	}
	ret["hint"] = "from SiYuan's index (a few seconds behind writes); at most 200 of each; mentions are blocks holding the target's text without referencing it"
	return ret, nil
}

func itoa(n int) string { return strconv.Itoa(n) }

func backlinksAction() *tools.Action {
	return tools.Read[backlinkArgs]{
		Name: "get_backlinks", Summary: "blocks that reference a block or document (backlinks) and blocks that mention its text without a reference (backmentions)",
		Example:  map[string]any{"id": "20260812120000-abcdefg", "mode": "links"},
		Validate: parseBacklinks,
		Scope: tools.Scope[backlinkArgs]{Touches: func(a backlinkArgs) []tools.Touch {
			ts := []tools.Touch{tools.OnBlock(a.ID, tools.LevelRead)}
			if a.Scope != "" {
				ts = append(ts, tools.OnBlock(a.Scope, tools.LevelRead))
			}
			return ts
		}},
		Run: getBacklinks,
	}.Action()
}
