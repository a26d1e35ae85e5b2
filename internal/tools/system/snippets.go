package system

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// list_snippets: SiYuan's CSS and JavaScript snippets, without their
// bodies unless one exact snippet's is asked for; a body is redacted and
// cut.

type snippetArgs struct {
	Type, Enabled, Keyword, SnippetID string
	IncludeContent                    bool
	MaxChars, Page, PageSize          int
}

var listSnippets = tools.Read[snippetArgs]{
	Name:    "list_snippets",
	Summary: "CSS and JavaScript snippets: names, kinds, switches, sizes and hashes; one snippet's body (redacted, cut) with snippetID and includeContent",
	Params: append([]tools.Param{
		{Name: "type", Type: tools.String, Description: "snippet kind", Enum: []string{"all", "js", "css"}, Default: "all"},
		{Name: "enabled", Type: tools.String, Description: "switch filter", Enum: []string{"all", "enabled", "disabled"}, Default: "all"},
		{Name: "keyword", Type: tools.String, Description: "text in the name or the body (case-insensitive)"},
		{Name: "snippetID", Type: tools.String, Description: "one exact snippet"},
		{Name: "includeContent", Type: tools.Boolean, Description: "show the body (redacted, cut at maxChars); needs snippetID", Default: false},
		{Name: "maxChars", Type: tools.Integer, Description: "characters of the body shown", Default: defaultChars, Min: tools.IntP(1), Max: tools.IntP(maxOutputChars)},
	}, pageParams(50)...),
	Example: map[string]any{"type": "css"},
	Scope:   tools.Scope[snippetArgs]{None: true},
	Parse: func(a *tools.Args) (snippetArgs, error) {
		s := snippetArgs{a.String("type"), a.String("enabled"), strings.TrimSpace(a.String("keyword")), strings.TrimSpace(a.String("snippetID")),
			a.Bool("includeContent"), a.Int("maxChars"), a.Int("page"), a.Int("pageSize")}
		switch {
		case len(s.Keyword) > 200:
			return s, failure.Invalid("keyword is longer than 200 characters")
		case len(s.SnippetID) > 128:
			return s, failure.Invalid("snippetID is longer than 128 characters")
		case s.IncludeContent && s.SnippetID == "":
			return s, failure.Invalid("includeContent needs snippetID: bodies are shown one snippet at a time")
		}
		return s, nil
	},
	Run: func(ctx context.Context, env *tools.Env, a snippetArgs) (any, error) {
		enabled := map[string]int{"disabled": 0, "enabled": 1, "all": 2}[a.Enabled]
		all, err := env.Kernel.Snippets(ctx, a.Type, enabled, a.Keyword)
		if err != nil {
			return nil, err
		}
		var items []map[string]any
		for _, s := range all {
			if a.SnippetID != "" && s.ID != a.SnippetID {
				continue
			}
			sum := sha256.Sum256([]byte(s.Content))
			item := map[string]any{"id": s.ID, "name": s.Name, "type": s.Type, "enabled": s.Enabled, "disabledInPublish": s.DisabledInPublish,
				"contentLength": len([]rune(s.Content)), "contentHash": "sha256:" + hex.EncodeToString(sum[:])}
			if a.IncludeContent {
				body, redacted := RedactText(s.Content)
				shown, cut := truncateChars(body, a.MaxChars)
				item["content"], item["redacted"], item["truncated"] = shown, redacted, cut
			}
			items = append(items, item)
		}
		if a.SnippetID != "" && len(items) == 0 {
			return nil, failure.Missing("snippet", a.SnippetID)
		}
		shown, pg := page(items, a.Page, a.PageSize)
		if shown == nil {
			shown = []map[string]any{}
		}
		out := map[string]any{"readonly": true, "items": shown,
			"hints": []string{"Bodies are left out; one snippet's body is shown with snippetID and includeContent:true, always redacted and cut."}}
		for k, v := range pg {
			out[k] = v
		}
		return out, nil
	},
}
