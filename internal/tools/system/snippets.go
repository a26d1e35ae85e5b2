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
	Type           string `arg:"type" help:"snippet kind" enum:"all,js,css" default:"all"`
	Enabled        string `arg:"enabled" help:"switch filter" enum:"all,enabled,disabled" default:"all"`
	Keyword        string `arg:"keyword" help:"text in the name or the body (case-insensitive)"`
	SnippetID      string `arg:"snippetID" help:"one exact snippet"`
	IncludeContent bool   `arg:"includeContent" help:"show the body (redacted, cut at maxChars); needs snippetID" default:"false"`
	MaxChars       int    `arg:"maxChars" help:"characters of the body shown" default:"12000" min:"1" max:"32000"` // defaultChars, maxOutputChars
	paging
}

var listSnippets = tools.Read[snippetArgs]{
	Name:    "list_snippets",
	Summary: "CSS and JavaScript snippets: names, kinds, switches, sizes and hashes; one snippet's body (redacted, cut) with snippetID and includeContent",
	Example: map[string]any{"type": "css"},
	Scope:   tools.Scope[snippetArgs]{None: true},
	Validate: func(s *snippetArgs) error {
		s.Keyword, s.SnippetID = strings.TrimSpace(s.Keyword), strings.TrimSpace(s.SnippetID)
		switch {
		case len(s.Keyword) > 200:
			return failure.Invalid("keyword is longer than 200 characters")
		case len(s.SnippetID) > 128:
			return failure.Invalid("snippetID is longer than 128 characters")
		case s.IncludeContent && s.SnippetID == "":
			return failure.Invalid("includeContent needs snippetID: bodies are shown one snippet at a time")
		}
		return nil
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
