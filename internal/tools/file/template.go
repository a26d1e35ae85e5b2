package file

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tplfile"
)

// Templates live in the workspace's data/templates folder. They belong to
// no notebook: reading them needs no notebook permission, while saving a
// document as one needs read permission in the document's notebook.

// templatePath normalises a template path to its data-relative form,
// "templates/<rel>.md": "daily.md", "/templates/daily.md" and
// "data/templates/daily.md" name the same template.
func templatePath(field, p string) (string, error) {
	s := strings.TrimSpace(strings.ReplaceAll(p, "\\", "/"))
	if _, rest, ok := strings.Cut(s, "/data/templates/"); ok {
		s = rest // an absolute path, as list_templates shows it
	}
	s = strings.TrimPrefix(strings.TrimLeft(s, "/"), "data/")
	s = strings.TrimPrefix(s, "templates/")
	if s == "" {
		return "", failure.Invalid("argument %q must name a template, like daily.md or work/weekly.md", field)
	}
	if !strings.HasSuffix(strings.ToLower(s), ".md") {
		return "", failure.Invalid("argument %q must name a Markdown template ending in .md; got %q", field, p)
	}
	if err := cleanRel(field, p, s); err != nil {
		return "", err
	}
	return "templates/" + s, nil
}

// templateState is a template file as guarded writes see it.
type templateState struct {
	Path   string `json:"path"`
	Exists bool   `json:"exists"`
	SHA256 string `json:"sha256,omitempty"`
	Size   int64  `json:"size,omitempty"`
}

func readTemplateState(ctx context.Context, env *tools.Env, rel string) (templateState, error) {
	st := templateState{Path: rel}
	sum, size, err := digestFile(ctx, env.Kernel, workspace(rel))
	switch {
	case missingFile(err):
		return st, nil
	case err != nil:
		return st, err
	}
	st.Exists, st.SHA256, st.Size = true, sum, size
	return st, nil
}

func digestOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// templateBudget is the budget of a template write's arguments: the body
// budget in the worst JSON escaping, plus putFile's multipart envelope.
func templateBudget(env *tools.Env) int { return 2*env.TemplateBytes() + tools.MultipartOverhead }

func checkBody(env *tools.Env, content string) error {
	if n := len(content); n > env.TemplateBytes() {
		e := failure.Invalid("the template body is %d bytes; one template may have at most %d (the server's --max-template-size, up to 32 MiB)", n, env.TemplateBytes()).
			With("limit", env.TemplateBytes()).With("size", n)
		return e.Attempted(false)
	}
	return nil
}

// readTemplateArgs and deleteTemplateArgs name one template by path
// (Given), checked into Path; a read returns a window of it (upstream
// 0.6.8's offset and limit).
type (
	readTemplateArgs struct {
		Given  string `arg:"path" help:"the template, relative to data/templates (daily.md)" required:""`
		Offset int    `arg:"offset" help:"the first character to return, counted from 0 in Unicode code points (upstream 0.6.8 counts UTF-16 units: an emoji is one character here, two there)" default:"0" min:"0"`
		Limit  int    `arg:"limit" help:"at most this many characters (Unicode code points); truncated and nextOffset say whether more follows" default:"8000" min:"1" max:"20000"`
		Path   string
	}
	deleteTemplateArgs struct {
		Given string `arg:"path" help:"the template, relative to data/templates" required:""`
		Path  string
	}
)

var listTemplates = tools.Read[listArgs]{
	Name: "list_templates", Summary: "the templates in data/templates, optionally those whose name contains a keyword, one page at a time",
	Example: map[string]any{"keyword": "daily"},
	Validate: func(a *listArgs) (err error) {
		a.Keyword, err = alias("keyword", a.Keyword, "query", a.Query)
		return err
	},
	Scope: tools.Scope[listArgs]{Global: true},
	Run: func(ctx context.Context, env *tools.Env, a listArgs) (any, error) {
		hits, err := env.Kernel.SearchTemplate(ctx, a.Keyword)
		if err != nil {
			return nil, err
		}
		p := tools.Paginate(hits, a.Page, a.PageSize)
		page, _ := p.Data.([]siyuan.TemplateSearchResult)
		return map[string]any{"templates": page, "count": len(page), "total": p.Total, "page": p.Page, "pageSize": p.PageSize,
			"pageCount": p.PageCount, "hasNextPage": p.HasNextPage}, nil
	},
}

// listArgs filter the templates by name (keyword, or upstream 0.6.8's
// query) and page them with upstream's page size.
type listArgs struct {
	Keyword  string `arg:"keyword" help:"filter by name (query is an alias: give either, or both the same)"`
	Query    string `arg:"query" help:"alias of keyword (upstream's name); refused when both are given and differ"`
	Page     int    `arg:"page" help:"1-based page (a page past the last answers the last)" default:"1" min:"1"`
	PageSize int    `arg:"pageSize" help:"templates per page" default:"20" min:"1" max:"128"`
}

// alias is the value of an argument that may also be given under another
// name: either, or both when they agree. An empty string is not given.
func alias(name, v, other, w string) (string, error) {
	if v != "" && w != "" && v != w {
		return "", failure.Invalid("%s and %s are the same argument under two names; pass one of them (got %q and %q)", name, other, v, w)
	}
	if v == "" {
		return w, nil
	}
	return v, nil
}

var readTemplate = tools.Read[readTemplateArgs]{
	Name: "read_template", Summary: "a template's source",
	Example: map[string]any{"path": "daily.md"},
	Validate: func(a *readTemplateArgs) (err error) {
		a.Path, err = templatePath("path", a.Given)
		return err
	},
	Scope: tools.Scope[readTemplateArgs]{Global: true},
	Run: func(ctx context.Context, env *tools.Env, a readTemplateArgs) (any, error) {
		body, _, err := env.Kernel.GetFile(ctx, workspace(a.Path))
		if missingFile(err) {
			return nil, failure.Missing("template", a.Path)
		}
		if err != nil {
			return nil, err
		}
		defer body.Close()
		data, err := io.ReadAll(io.LimitReader(body, int64(env.TemplateBytes())+1))
		if err != nil {
			return nil, err
		}
		if len(data) > env.TemplateBytes() {
			return nil, failure.Invalid("the template is larger than the template budget (%d bytes); nothing was read", env.TemplateBytes())
		}
		src := string(data)
		text, total := window(src, a.Offset, a.Limit)
		ret := map[string]any{"path": a.Path, "content": text, "sha256": digestOf(src), "size": len(data),
			"offset": a.Offset, "limit": a.Limit, "totalChars": total, "truncated": a.Offset+utf8.RuneCountInString(text) < total}
		if ret["truncated"] == true {
			ret["nextOffset"] = a.Offset + utf8.RuneCountInString(text)
		}
		return ret, nil
	},
}

// window is the text of s from its offset-th code point, at most limit
// code points long, cut only between whole UTF-8 sequences, and the count
// of s's code points (a byte that starts no valid sequence counts as one).
func window(s string, offset, limit int) (text string, total int) {
	from, to := len(s), len(s)
	for i := range s {
		switch total {
		case offset:
			from = i
		case offset + limit:
			to = i
		}
		total++
	}
	return s[from:to], total
}

// writeTemplateArgs are update_template's, and with overwrite
// create_template's. The source comes as content or as markdown (upstream
// 0.6.8's name), checked into Content.
type writeTemplateArgs struct {
	Given    string  `arg:"path" help:"the template, relative to data/templates (daily.md, work/weekly.md)" required:""`
	Text     *string `arg:"content" help:"the template's source (SiYuan template syntax: .action{...}); markdown is an alias: give one of them"`
	Markdown *string `arg:"markdown" help:"alias of content (upstream's name); refused when both are given and differ"`
	Path     string  // Given, checked
	Content  string  // Text or Markdown
}

func (a *writeTemplateArgs) parse() (err error) {
	switch {
	case a.Text == nil && a.Markdown == nil:
		return failure.Invalid("missing argument \"content\" (the template's source; markdown is an alias)")
	case a.Text != nil && a.Markdown != nil && *a.Text != *a.Markdown:
		return failure.Invalid("content and markdown are the same argument under two names; pass one of them")
	case a.Text != nil:
		a.Content = *a.Text
	default:
		a.Content = *a.Markdown
	}
	a.Path, err = templatePath("path", a.Given)
	return err
}

type createTemplateArgs struct {
	writeTemplateArgs
	Overwrite bool `arg:"overwrite" help:"replace an existing template (a guarded write: the preflight returns expectedStateHash)" default:"false"`
}

var guarded = strict.WritePolicy{Class: strict.Mutation, Precondition: strict.ExpectedStateHash}

// templateWriteState is a template write's state: the body is within the
// budget, and the template as it is.
func templateWriteState(ctx context.Context, env *tools.Env, a writeTemplateArgs) (templateState, error) {
	if err := checkBody(env, a.Content); err != nil {
		return templateState{}, err
	}
	return readTemplateState(ctx, env, a.Path)
}

// putTemplate writes a template's body with putFile (multipart).
func putTemplate(ctx context.Context, env *tools.Env, a writeTemplateArgs, _ templateState) (tools.Payload, error) {
	if err := env.Kernel.PutFile(ctx, siyuan.PutFileRequest{Path: workspace(a.Path), Body: bytes.NewReader([]byte(a.Content))}); err != nil {
		return nil, tools.WriteFailure(err, false)
	}
	return tools.Payload{"path": a.Path, "sha256": digestOf(a.Content), "size": len(a.Content)}, nil
}

// templateReadback verifies the stored body is exactly what was written.
func templateReadback(ctx context.Context, env *tools.Env, a writeTemplateArgs, _ tools.Payload) (any, error) {
	st, err := readTemplateState(ctx, env, a.Path)
	if err != nil {
		return nil, err
	}
	if !st.Exists || st.SHA256 != digestOf(a.Content) {
		return nil, fmt.Errorf("the template %s reads back %+v, not what was written", a.Path, st)
	}
	return st, nil
}

var createTemplate = tools.Write[createTemplateArgs, templateState]{
	Name: "create_template", Summary: "create a template in data/templates (refused if it exists, unless overwrite:true, which replaces it as a guarded write)",
	Policy: guarded,
	PolicyFor: func(a createTemplateArgs) strict.WritePolicy {
		if a.Overwrite {
			return guarded
		}
		return strict.WritePolicy{Class: strict.Additive}
	},
	Example:  map[string]any{"path": "daily.md", "content": "# .action{now | date \"2006-01-02\"}\n\n- ", "validateOnly": true},
	Validate: func(a *createTemplateArgs) error { return a.parse() },
	Scope:    tools.Scope[createTemplateArgs]{Global: true},
	Budget:   templateBudget,
	Targets:  func(a createTemplateArgs) []string { return []string{a.Path} },
	State: func(ctx context.Context, env *tools.Env, a createTemplateArgs) (templateState, error) {
		return templateWriteState(ctx, env, a.writeTemplateArgs)
	},
	Check: func(a createTemplateArgs, st templateState) error {
		if st.Exists && !a.Overwrite {
			return failure.Invalid("the template %s exists; nothing was written: pass overwrite:true to replace it, or use update_template", a.Path)
		}
		return nil
	},
	Execute: func(ctx context.Context, env *tools.Env, a createTemplateArgs, st templateState) (tools.Payload, error) {
		return putTemplate(ctx, env, a.writeTemplateArgs, st)
	},
	Readback: func(ctx context.Context, env *tools.Env, a createTemplateArgs, p tools.Payload) (any, error) {
		return templateReadback(ctx, env, a.writeTemplateArgs, p)
	},
}

var updateTemplate = tools.Write[writeTemplateArgs, templateState]{
	Name: "update_template", Summary: "replace an existing template's source (guarded: the template must not have changed since the preflight)",
	Policy:   guarded,
	Example:  map[string]any{"path": "daily.md", "content": "# .action{now | date \"2006-01-02\"}\n\n## Notes\n", "validateOnly": true},
	Validate: (*writeTemplateArgs).parse,
	Scope:    tools.Scope[writeTemplateArgs]{Global: true},
	Budget:   templateBudget,
	Targets:  func(a writeTemplateArgs) []string { return []string{a.Path} },
	State:    templateWriteState,
	Check: func(a writeTemplateArgs, st templateState) error {
		if !st.Exists {
			return failure.Missing("template", a.Path)
		}
		return nil
	},
	Execute:  putTemplate,
	Readback: templateReadback,
}

var deleteTemplate = tools.Write[deleteTemplateArgs, templateState]{
	Name: "delete_template", Summary: "delete a template (a person must confirm; off by default)",
	Policy: guarded, Destructive: true, Dangerous: true, OffByDefault: true,
	Example: map[string]any{"path": "old.md", "validateOnly": true},
	Validate: func(a *deleteTemplateArgs) (err error) {
		a.Path, err = templatePath("path", a.Given)
		return err
	},
	Scope:   tools.Scope[deleteTemplateArgs]{Global: true},
	Targets: func(a deleteTemplateArgs) []string { return []string{a.Path} },
	State: func(ctx context.Context, env *tools.Env, a deleteTemplateArgs) (templateState, error) {
		st, err := readTemplateState(ctx, env, a.Path)
		if err != nil || !st.Exists {
			return st, err
		}
		// A file SiYuan does not list (README.md, dot files) cannot be
		// removed as a template: refused here, before the ledger records
		// the request as executing.
		_, err = tplfile.Locate(ctx, env, a.Path)
		return st, err
	},
	Check: func(a deleteTemplateArgs, st templateState) error {
		if !st.Exists {
			return failure.Missing("template", a.Path)
		}
		return nil
	},
	Execute: func(ctx context.Context, env *tools.Env, a deleteTemplateArgs, _ templateState) (tools.Payload, error) {
		abs, err := tplfile.Locate(ctx, env, a.Path)
		if err != nil {
			// Nothing was removed: the ledger records a rejection, not an
			// outcome to wonder about.
			return nil, tools.Refuse(err)
		}
		if err := env.Kernel.RemoveTemplate(ctx, abs); err != nil {
			return nil, tools.WriteFailure(err, false)
		}
		return tools.Payload{"path": a.Path, "deleted": true}, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a deleteTemplateArgs, _ tools.Payload) (any, error) {
		st, err := readTemplateState(ctx, env, a.Path)
		if err != nil {
			return nil, err
		}
		if st.Exists {
			return nil, fmt.Errorf("the template %s is still there", a.Path)
		}
		return st, nil
	},
}
