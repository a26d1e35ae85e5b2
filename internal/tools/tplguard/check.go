package tplguard

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"text/template/parse"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// Delims are an engine's action delimiters.
type Delims [2]string

var (
	// File is SiYuan's template files, database template columns and
	// daily-note templates: .action{ }.
	File = Delims{".action{", "}"}
	// Sprig is sprig text (file.render engine=sprig) and the notebooks'
	// save paths: {{ }}.
	Sprig = Delims{"{{", "}}"}
)

var (
	// sqlWrites are the statements that change the index or the database
	// file: SiYuan's querySQL runs whatever single statement it is given.
	sqlWrites = regexp.MustCompile(`(?i)\b(insert|update|delete|replace|drop|alter|create|attach|detach|pragma|vacuum|reindex)\b`)
	// sqlSelect is how a statement whose text is completed at render time
	// (queryBlocks' ? arguments, printf) must begin: the values filled in
	// cannot turn it into a write.
	sqlSelect = regexp.MustCompile(`(?i)^\s*select\b`)
)

// Check refuses a template an agent may not have SiYuan render under the
// call's policy; what is refusing says it, with writeAttempted false:
//
//   - one that does not parse as the kernel parses it (text/template with
//     the engine's delimiters);
//   - one calling a function SiYuan's map does not have (invalid_arguments:
//     nothing unknown is guessed safe);
//   - one calling a Host function (permission_denied, always);
//   - one calling an Index function while a notebook is hidden
//     (permission_denied);
//   - one whose SQL could write: a querySQL, queryBlocks or querySpans
//     statement must be a string literal (or a printf/print whose first
//     operand is one) free of writing statements, and a statement the
//     render completes must be a SELECT (invalid_arguments).
//
// The template is parsed, never matched as text, so a delimiter inside a
// string literal, a helper called in a defined template, a pipeline or a
// variable cannot hide a call.
func Check(ctx context.Context, src string, d Delims) error {
	p := tools.PolicyFrom(ctx)
	return check(src, d, p == nil || !p.Hides())
}

// CheckPure is Check for a template SiYuan renders later, whatever is
// hidden then, and for the person too (a notebook's save paths): only
// Pure functions pass, the index readers never.
func CheckPure(src string, d Delims) error { return check(src, d, false) }

func check(src string, d Delims, indexAllowed bool) error {
	trees, err := parseAll(src, d)
	if err != nil {
		return failure.Invalid("the template does not parse (%v); nothing was rendered", err).Attempted(false)
	}
	var calls []call
	used := map[string]Class{}
	for _, name := range sortedKeys(trees) {
		walkTemplate(trees[name].Root, func(id *parse.IdentifierNode, cmd *parse.CommandNode, i int, piped bool) {
			used[id.Ident] = Funcs[id.Ident]
			if SQLRunners[id.Ident] {
				calls = append(calls, call{id.Ident, cmd, i, piped})
			}
		})
	}
	byClass := map[Class][]string{}
	for _, name := range sortedKeys(used) {
		byClass[used[name]] = append(byClass[used[name]], name)
	}
	if unknown := byClass[0]; len(unknown) > 0 {
		e := failure.Invalid("the template calls %s, which SiYuan's templates do not have; nothing was rendered", strings.Join(unknown, ", "))
		e.Action = "use the functions of SiYuan's templates (sprig's, SiYuan's own); a value is .name or $name"
		return e.Attempted(false)
	}
	if host := byClass[Host]; len(host) > 0 {
		e := failure.New(failure.PermissionDenied, "the template calls %s, which read the kernel's environment or network; no template may; nothing was rendered", strings.Join(host, ", "))
		e.Action = "render a template without them"
		return e.Attempted(false)
	}
	if index := byClass[Index]; len(index) > 0 && !indexAllowed {
		e := failure.New(failure.PermissionDenied, "the template reads SiYuan's index (%s), which cannot be limited by notebook while one is hidden from agents, or here ever; nothing was rendered", strings.Join(index, ", "))
		e.Action = "use a template without querySQL, queryBlocks, querySpans, getBlock, getHPathByID and statBlock"
		return e.Attempted(false)
	}
	for _, c := range calls {
		if err := c.check(); err != nil {
			return err
		}
	}
	return nil
}

// parseAll parses src as text/template does, with every function name
// left for the walk to judge; trees holds the template and those it
// defines.
func parseAll(src string, d Delims) (trees map[string]*parse.Tree, err error) {
	defer func() {
		// parse reports errors by value; anything else it panics with is
		// a template it cannot read, refused the same way.
		if r := recover(); r != nil {
			trees, err = nil, fmt.Errorf("%v", r)
		}
	}()
	trees = map[string]*parse.Tree{}
	t := parse.New("") // SiYuan parses with template.New("")
	t.Mode = parse.SkipFuncCheck
	if _, err := t.Parse(src, d[0], d[1], trees); err != nil {
		return nil, err
	}
	return trees, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// call is one use of an SQL runner: cmd.Args[at] names it (cmd nil when
// it is called in a chain, name.Field); piped, the command takes the
// previous command's value as its last argument.
type call struct {
	name  string
	cmd   *parse.CommandNode
	at    int
	piped bool
}

func (c call) check() error {
	name := c.name
	refuse := func(format string, a ...any) error {
		e := failure.Invalid("the template's %s %s: a render may only read (SiYuan's %s runs any statement); nothing was rendered", name, fmt.Sprintf(format, a...), name)
		e.Action = "pass the statement as a string literal (SELECT ...), with values as queryBlocks ? arguments"
		return e.Attempted(false)
	}
	if c.cmd == nil || c.at != 0 || len(c.cmd.Args) < 2 {
		return refuse("takes its statement from a pipeline or a value")
	}
	stmt, texts, filled, ok := literalStatement(c.cmd.Args[1])
	if !ok {
		return refuse("builds its statement at render time")
	}
	// queryBlocks and querySpans put their arguments (a piped value too)
	// in place of the statement's ?.
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

// visit is told of every function identifier: the command holding it and
// its position there (nil, -1 in a chain), and whether the command is
// piped into.
type visit func(id *parse.IdentifierNode, cmd *parse.CommandNode, i int, piped bool)

// walkTemplate visits every function identifier under n.
func walkTemplate(n parse.Node, found visit) {
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
		// now.Year calls now, then reads a field of its value.
		if id, ok := n.Node.(*parse.IdentifierNode); ok {
			found(id, nil, -1, false)
			return
		}
		walkTemplate(n.Node, found)
	case *parse.IdentifierNode:
		found(n, nil, -1, false)
	}
}

func walkCommand(cmd *parse.CommandNode, piped bool, found visit) {
	for i, a := range cmd.Args {
		if id, ok := a.(*parse.IdentifierNode); ok {
			found(id, cmd, i, piped)
			continue
		}
		walkTemplate(a, found)
	}
}

func walkBranch(b *parse.BranchNode, found visit) {
	walkTemplate(b.Pipe, found)
	walkTemplate(b.List, found)
	walkTemplate(b.ElseList, found)
}
