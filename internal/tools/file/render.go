package file

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"text/template/parse"
	"unicode"
	"unicode/utf8"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/kernelview"
)

// locateTemplate finds the absolute path on the kernel's machine of the
// template rel ("templates/x.md"), which render and removeTemplate take:
// SiYuan lists every template with it. README.md and dot files are not
// listed, so they cannot be rendered or removed here.
func locateTemplate(ctx context.Context, env *tools.Env, rel string) (string, error) {
	want := strings.TrimPrefix(rel, "templates/")
	all, err := env.Kernel.SearchTemplate(ctx, "")
	if err != nil {
		return "", err
	}
	for _, t := range all {
		if t.RelativePath == want {
			return t.Path, nil
		}
	}
	e := failure.New(failure.NotFound, "SiYuan does not list the template %s (README.md and files starting with a dot are not templates); nothing was done", rel)
	e.Action = "list_templates shows the templates SiYuan knows"
	return "", e.Attempted(false)
}

// templateName checks a name for save_doc_as_template as SiYuan would keep
// it: the kernel silently replaces \ / : * ? " ' < > | with "_", so a name
// holding them would land at another path than the one the preflight
// guarded.
func templateName(name string) error {
	switch {
	case name == "" || strings.TrimSpace(name) != name:
		return failure.Invalid("name must be a template name without leading or trailing spaces, like weekly-review; got %q", name)
	case !utf8.ValidString(name) || strings.ContainsFunc(name, unicode.IsControl):
		return failure.Invalid("name holds control characters or invalid UTF-8")
	case strings.ContainsAny(name, `\/:*?"'<>|`):
		return failure.Invalid("name %q holds a character SiYuan replaces in file names (\\ / : * ? \" ' < > |); choose a name without them", name)
	case strings.HasPrefix(name, "."):
		return failure.Invalid("name %q starts with a dot: SiYuan would not list it as a template", name)
	case len(name) > 180:
		return failure.Invalid("name is %d bytes; a template name may have at most 180", len(name))
	}
	return nil
}

type saveArgs struct {
	ID, Name  string
	Overwrite bool
}

// saveState guards a save: the destination template and the block saved.
type saveState struct {
	Template templateState         `json:"template"`
	Block    kernelview.BlockState `json:"block"`
}

var saveDocAsTemplate = tools.Write[saveArgs, saveState]{
	Name: "save_doc_as_template",
	Summary: "save a document (or a block with its children) as the template data/templates/<name>.md; refused if it exists unless overwrite:true; " +
		"guarded by the document's and the destination's state",
	Policy:  guarded,
	Example: map[string]any{"id": "20260812120000-docdocd", "name": "weekly-review", "validateOnly": true},
	Params: []tools.Param{
		tools.IDParam("id", "the document or block to save", true),
		{Name: "name", Type: tools.String, Description: "the template's name, without .md", Required: true},
		{Name: "overwrite", Type: tools.Boolean, Description: "replace a template of that name", Default: false},
	},
	Parse: func(a *tools.Args) (saveArgs, error) {
		s := saveArgs{a.String("id"), a.String("name"), a.Bool("overwrite")}
		if err := tools.CheckID("id", s.ID); err != nil {
			return s, err
		}
		return s, templateName(s.Name)
	},
	Scope:   tools.Scope[saveArgs]{Touches: func(a saveArgs) []tools.Touch { return []tools.Touch{tools.OnBlock(a.ID, tools.LevelRead)} }},
	Targets: func(a saveArgs) []string { return []string{a.ID, destOf(a)} },
	State: func(ctx context.Context, env *tools.Env, a saveArgs) (saveState, error) {
		return readSaveState(ctx, env, a)
	},
	Check: func(a saveArgs, st saveState) error {
		if st.Block.Missing {
			return failure.Missing("block", a.ID)
		}
		if st.Template.Exists && !a.Overwrite {
			return failure.Invalid("the template %s exists; nothing was written: pass overwrite:true to replace it", destOf(a))
		}
		return nil
	},
	Execute: func(ctx context.Context, env *tools.Env, a saveArgs, _ saveState) (tools.Payload, error) {
		err := env.Kernel.DocSaveAsTemplate(ctx, a.ID, a.Name, a.Overwrite)
		if errors.Is(err, siyuan.ErrTemplateExists) {
			// The kernel refused before writing: the template appeared
			// after the commit read the state.
			return nil, tools.Refuse(failure.Invalid("the template %s appeared meanwhile; nothing was written", destOf(a)))
		}
		if err != nil {
			return nil, tools.WriteFailure(err, false)
		}
		return tools.Payload{"id": a.ID, "path": destOf(a)}, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a saveArgs, p tools.Payload) (any, error) {
		st, err := readSaveState(ctx, env, a)
		if err != nil {
			return nil, err
		}
		if !st.Template.Exists || st.Template.Size == 0 {
			return nil, fmt.Errorf("the template %s is not there after the save", destOf(a))
		}
		p["sha256"], p["size"] = st.Template.SHA256, st.Template.Size
		return st, nil
	},
}

func destOf(a saveArgs) string { return "templates/" + a.Name + ".md" }

func readSaveState(ctx context.Context, env *tools.Env, a saveArgs) (saveState, error) {
	var st saveState
	b, err := kernelview.ReadBlockState(ctx, env, a.ID)
	if err != nil {
		return st, err
	}
	t, err := readTemplateState(ctx, env, destOf(a))
	if err != nil {
		return st, err
	}
	st.Block, st.Template = b, t
	return st, nil
}

type renderArgs struct {
	Engine   string // "template" or "sprig"
	ID, Path string
	Preview  bool
	Template string
}

var render = tools.Read[renderArgs]{
	// A render may copy a database (preview:false) and runs the template's
	// SQL: it waits for the gate's decision.
	SideEffects: true,
	Name:        "render",
	Summary: "render a template: engine=template renders a template file (path) for a block (id) as block DOM, ready to insert; " +
		"engine=sprig renders a Go template string ({{ }}) as text. Templates whose SQL helpers write are refused",
	Example: map[string]any{"engine": "template", "id": "20260812120000-docdocd", "path": "daily.md"},
	Params: []tools.Param{
		{Name: "engine", Type: tools.String, Description: "template or sprig", Enum: []string{"template", "sprig"}, Default: "template"},
		tools.IDParam("id", "engine=template: the block or document the template is rendered for (.id, .title)", false),
		{Name: "path", Type: tools.String, Description: "engine=template: the template, relative to data/templates (daily.md)"},
		{Name: "preview", Type: tools.Boolean, Description: "engine=template: render databases as tables instead of copying them (false lets SiYuan copy a database the template embeds)", Default: true},
		{Name: "template", Type: tools.String, Description: "engine=sprig: the template text"},
	},
	Parse: parseRender,
	Scope: tools.Scope[renderArgs]{Touches: func(a renderArgs) []tools.Touch {
		if a.Engine == "template" {
			return []tools.Touch{tools.OnBlock(a.ID, tools.LevelRead)}
		}
		return nil
	}},
	Run: func(ctx context.Context, env *tools.Env, a renderArgs) (any, error) {
		if a.Engine == "sprig" {
			if err := checkTemplateSQL(ctx, a.Template, sprigDelims); err != nil {
				return nil, err
			}
			out, err := env.Kernel.RenderSprig(ctx, a.Template)
			if err != nil {
				return nil, err
			}
			return map[string]any{"engine": "sprig", "content": out}, nil
		}
		src, err := readSource(ctx, env, a.Path)
		if err != nil {
			return nil, err
		}
		if err := checkTemplateSQL(ctx, src, templateDelims); err != nil {
			return nil, err
		}
		if err := checkRefs(ctx, env, sourceRef, src); err != nil {
			return nil, err
		}
		abs, err := locateTemplate(ctx, env, a.Path)
		if err != nil {
			return nil, err
		}
		dom, err := env.Kernel.RenderTemplate(ctx, a.ID, abs, a.Preview)
		if treeMissing(err) {
			return nil, failure.Missing("block", a.ID)
		}
		if err != nil {
			return nil, err
		}
		// A reference the template built while rendering is checked too.
		if err := checkRefs(ctx, env, domRef, dom); err != nil {
			return nil, err
		}
		return map[string]any{"engine": "template", "id": a.ID, "path": a.Path, "dataType": "dom", "content": dom}, nil
	},
}

func parseRender(a *tools.Args) (renderArgs, error) {
	r := renderArgs{Engine: a.String("engine"), ID: a.String("id"), Template: a.String("template"), Preview: a.Bool("preview")}
	if r.Engine == "" {
		r.Engine = "template"
	}
	switch r.Engine {
	case "sprig":
		if r.Template == "" {
			return r, failure.Invalid("engine=sprig needs template, the text to render")
		}
		if a.String("path") != "" || r.ID != "" {
			return r, failure.Invalid("engine=sprig renders template text only; id and path are for engine=template")
		}
		return r, nil
	case "template":
		if r.Template != "" {
			return r, failure.Invalid("engine=template renders a template file (path); pass template text with engine=sprig")
		}
		if err := tools.CheckID("id", r.ID); err != nil {
			return r, err
		}
		p, err := templatePath("path", a.String("path"))
		r.Path = p
		return r, err
	}
	return r, failure.Invalid("engine must be template or sprig; got %q", r.Engine)
}

// Block references in a template's source (((id …))) and in the DOM it
// renders to (a block-ref span's data-id).
var (
	sourceRef = regexp.MustCompile(`\(\(\s*([0-9]{14}-[0-9a-z]{7})\b`)
	domRef    = regexp.MustCompile(`<span\b[^>]*\bdata-type="[^"]*\bblock-ref\b[^"]*"[^>]*\bdata-id="([0-9]{14}-[0-9a-z]{7})"|<span\b[^>]*\bdata-id="([0-9]{14}-[0-9a-z]{7})"[^>]*\bdata-type="[^"]*\bblock-ref\b`)
)

// checkRefs refuses a template that references a block the call cannot
// see: SiYuan fills a reference's empty anchor with its target's text as
// it renders. The refusal is the one for a block that does not exist,
// whether it is missing or hidden.
func checkRefs(ctx context.Context, env *tools.Env, re *regexp.Regexp, text string) error {
	if !tools.Hiding(ctx) {
		return nil
	}
	var ids []string
	for _, m := range re.FindAllStringSubmatch(text, -1) {
		for _, id := range m[1:] {
			if id != "" && !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	if len(ids) == 0 {
		return nil
	}
	seen, err := tools.Seen(ctx, env, ids)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if !seen[id] {
			return failure.Missing("block", id)
		}
	}
	return nil
}

// readSource reads a template file's source, within the template budget.
func readSource(ctx context.Context, env *tools.Env, rel string) (string, error) {
	body, _, err := env.Kernel.GetFile(ctx, workspace(rel))
	if missingFile(err) {
		return "", failure.Missing("template", rel)
	}
	if err != nil {
		return "", err
	}
	defer body.Close()
	data, err := io.ReadAll(io.LimitReader(body, int64(env.TemplateBytes())+1))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", rel, err)
	}
	if len(data) > env.TemplateBytes() {
		return "", failure.Invalid("the template %s is larger than the template budget (%d bytes); nothing was rendered", rel, env.TemplateBytes())
	}
	return string(data), nil
}

// The delimiters of each engine: SiYuan's templates use .action{ }, sprig
// text {{ }}.
var (
	templateDelims = [2]string{".action{", "}"}
	sprigDelims    = [2]string{"{{", "}}"}
	// sqlHelpers read SiYuan's index across every notebook.
	sqlHelpers  = regexp.MustCompile(`\b(querySQL|queryBlocks|querySpans|getBlock|getHPathByID|statBlock)\b`)
	helperNames = map[string]bool{"querySQL": true, "queryBlocks": true, "querySpans": true, "getBlock": true, "getHPathByID": true, "statBlock": true}
	// sqlWrites are the statements that change the index or the database
	// file: SiYuan's querySQL runs whatever single statement it is given.
	sqlWrites = regexp.MustCompile(`(?i)\b(insert|update|delete|replace|drop|alter|create|attach|detach|pragma|vacuum|reindex)\b`)
	// sqlSelect is how a statement whose text is completed at render time
	// (queryBlocks' ? arguments, printf) must begin: the values filled in
	// cannot turn it into a write.
	sqlSelect = regexp.MustCompile(`(?i)^\s*select\b`)
)

// checkTemplateSQL refuses a template whose SQL helpers could write (a
// render is a read here, and SiYuan's querySQL is not read-only), or that
// would read the index while a notebook is hidden from agents (like
// search.query_sql, the helpers cannot be filtered by notebook).
//
// The template is parsed as the kernel parses it (text/template with the
// engine's delimiters), so a delimiter inside a string literal or a
// statement built at render time cannot hide a write: a querySQL or
// queryBlocks statement must be a string literal (or a printf/print whose
// first operand is one), free of writing statements; a statement the
// render completes must be a SELECT.
func checkTemplateSQL(ctx context.Context, src string, delims [2]string) error {
	if !sqlHelpers.MatchString(src) {
		return nil
	}
	trees := map[string]*parse.Tree{}
	t := parse.New("template")
	t.Mode = parse.SkipFuncCheck
	if _, err := t.Parse(src, delims[0], delims[1], trees); err != nil {
		return failure.Invalid("the template uses SiYuan's SQL helpers and does not parse (%v); nothing was rendered", err).Attempted(false)
	}
	var calls []sqlCall
	reads := false
	for _, tr := range trees {
		walkTemplate(tr.Root, func(cmd *parse.CommandNode, i int, piped bool) {
			id := cmd.Args[i].(*parse.IdentifierNode)
			reads = true
			if id.Ident == "querySQL" || id.Ident == "queryBlocks" {
				calls = append(calls, sqlCall{cmd, i, piped})
			}
		})
	}
	if !reads {
		return nil
	}
	if p := tools.PolicyFrom(ctx); p != nil && p.Hides() {
		e := failure.New(failure.PermissionDenied, "the template reads SiYuan's index (querySQL, queryBlocks, querySpans, getBlock, getHPathByID, statBlock), which cannot be filtered by notebook while one is hidden from agents; nothing was rendered")
		e.Action = "render a template without the SQL helpers"
		return e
	}
	for _, c := range calls {
		if err := c.check(); err != nil {
			return err
		}
	}
	return nil
}

// sqlCall is one use of querySQL or queryBlocks: cmd.Args[at] names it;
// piped, the command takes the previous command's value as its last
// argument.
type sqlCall struct {
	cmd   *parse.CommandNode
	at    int
	piped bool
}

func (c sqlCall) check() error {
	name := c.cmd.Args[c.at].(*parse.IdentifierNode).Ident
	refuse := func(format string, a ...any) error {
		e := failure.Invalid("the template's %s %s: a render may only read (SiYuan's querySQL runs any statement); nothing was rendered", name, fmt.Sprintf(format, a...))
		e.Action = "pass the statement as a string literal (SELECT ...), with values as queryBlocks ? arguments"
		return e.Attempted(false)
	}
	if c.at != 0 || len(c.cmd.Args) < 2 {
		return refuse("takes its statement from a pipeline or a value")
	}
	stmt, texts, filled, ok := literalStatement(c.cmd.Args[1])
	if !ok {
		return refuse("builds its statement at render time")
	}
	// queryBlocks puts its arguments (a piped value too) in place of the
	// statement's ?.
	filled = filled || len(c.cmd.Args) > 2 || c.piped
	for _, a := range c.cmd.Args[2:] {
		if s, isLit := a.(*parse.StringNode); isLit {
			texts = append(texts, s.Text)
		}
	}
	for _, t := range texts {
		if w := sqlWrites.FindString(t); w != "" {
			return refuse("holds %q", w)
		}
	}
	if filled && !sqlSelect.MatchString(stmt) {
		return refuse("completes at render time a statement that is not a SELECT")
	}
	return nil
}

// literalStatement reads a statement argument: a string literal, or
// printf/print with a literal first operand. stmt is that literal, texts
// every literal involved, filled whether the render adds to it.
func literalStatement(n parse.Node) (stmt string, texts []string, filled, ok bool) {
	switch n := n.(type) {
	case *parse.StringNode:
		return n.Text, []string{n.Text}, false, true
	case *parse.PipeNode:
		if len(n.Decl) > 0 || len(n.Cmds) != 1 || len(n.Cmds[0].Args) < 2 {
			return "", nil, false, false
		}
		args := n.Cmds[0].Args
		fn, isID := args[0].(*parse.IdentifierNode)
		lit, isLit := args[1].(*parse.StringNode)
		if !isID || !isLit || fn.Ident != "printf" && fn.Ident != "print" {
			return "", nil, false, false
		}
		texts = []string{lit.Text}
		for _, a := range args[2:] {
			if s, isLit := a.(*parse.StringNode); isLit {
				texts = append(texts, s.Text)
			}
		}
		return lit.Text, texts, len(args) > 2 || strings.Contains(lit.Text, "%"), true
	}
	return "", nil, false, false
}

// walkTemplate calls found for every identifier naming an SQL helper, with
// the command holding it, its position there, and whether the command is
// piped into.
func walkTemplate(n parse.Node, found func(cmd *parse.CommandNode, i int, piped bool)) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			walkTemplate(c, found)
		}
	case *parse.ActionNode:
		walkTemplate(n.Pipe, found)
	case *parse.IfNode:
		walkBranch(&n.BranchNode, found)
	case *parse.RangeNode:
		walkBranch(&n.BranchNode, found)
	case *parse.WithNode:
		walkBranch(&n.BranchNode, found)
	case *parse.TemplateNode:
		walkTemplate(n.Pipe, found)
	case *parse.PipeNode:
		if n == nil {
			return
		}
		for j, c := range n.Cmds {
			walkCommand(c, j > 0, found)
		}
	case *parse.CommandNode:
		walkCommand(n, false, found)
	case *parse.ChainNode:
		walkTemplate(n.Node, found)
	}
}

func walkCommand(cmd *parse.CommandNode, piped bool, found func(cmd *parse.CommandNode, i int, piped bool)) {
	for i, a := range cmd.Args {
		if id, ok := a.(*parse.IdentifierNode); ok && helperNames[id.Ident] {
			found(cmd, i, piped)
			continue
		}
		walkTemplate(a, found)
	}
}

func walkBranch(b *parse.BranchNode, found func(cmd *parse.CommandNode, i int, piped bool)) {
	walkTemplate(b.Pipe, found)
	walkTemplate(b.List, found)
	walkTemplate(b.ElseList, found)
}
