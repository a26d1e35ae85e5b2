package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sisyphus-go/sisyphus/internal/authority"
	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/mcp"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/toolcli"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/catalog"
)

// toolsGroup lists the tools apart from the other commands in help.
const toolsGroup = "tools"

// addToolCmds adds the tools as commands to root, with the help and list
// commands that know them.
func addToolCmds(root *cobra.Command, g *globalFlags) {
	root.AddGroup(&cobra.Group{ID: toolsGroup, Title: "Tools (sisyphus TOOL ACTION --flags; sisyphus help TOOL [ACTION]):"})
	root.AddCommand(newToolCmds(g)...)
	root.SetHelpCommand(newHelpCmd())
	root.AddCommand(newListCmd())
}

// newToolCmds are the tools as commands, `sisyphus TOOL ACTION --flags`,
// one per tool of the catalog, their flags read from the actions'
// declarations (package toolcli). A call goes where `sisyphus call` sends it,
// through the same front (openFront).
func newToolCmds(g *globalFlags) []*cobra.Command {
	var cmds []*cobra.Command
	for _, t := range catalog.All() {
		cmds = append(cmds, newToolCmd(g, t))
	}
	return cmds
}

// toolRun is one tool command's own flags, beside the action's.
type toolRun struct {
	kf      kernelFlags
	ff      frontFlags
	lf      localFlags
	asJSON  bool
	yes     bool
	noPager bool
}

func newToolCmd(g *globalFlags, t *tools.Tool) *cobra.Command {
	r := &toolRun{}
	cmd := &cobra.Command{
		Use:     t.Name + " ACTION [--flags]",
		Short:   toolcli.Short(t.Description),
		GroupID: toolsGroup,
		// The action's flags are its declared arguments, known only once
		// the action is: parsed by package toolcli, not by cobra.
		DisableFlagParsing: true,
		ValidArgsFunction: func(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return toolcli.Complete(t, args, toComplete), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, argv []string) error { return r.run(cmd, g, t, argv) },
	}
	r.kf.register(cmd)
	r.ff.register(cmd, "token")
	r.lf.register(cmd, true)
	cmd.Flags().BoolVar(&r.asJSON, "json", false, "print the answer as JSON (the structured content, as sisyphus call prints it)")
	cmd.Flags().BoolVar(&r.yes, "yes", false, "confirm a dangerous action without asking (needed when stdin is not a terminal)")
	cmd.Flags().BoolVar(&r.noPager, "no-pager", false, "never page the output (it is paged only on a terminal)")
	return cmd
}

// wantsHelp reports whether the action's arguments ask for its help:
// --help or -h as a flag, not as an argument's value.
func wantsHelp(params []tools.Param, args []string) bool {
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "--help" || args[i] == "-h":
			return true
		case toolcli.TakesValue(params, args[i]):
			i++
		}
	}
	return false
}

func (r *toolRun) run(cmd *cobra.Command, g *globalFlags, t *tools.Tool, argv []string) error {
	if len(argv) == 0 || argv[0] == "help" || argv[0] == "--help" || argv[0] == "-h" {
		return r.page(cmd, func(w io.Writer) error { return toolcli.ToolHelp(w, t) })
	}
	if strings.HasPrefix(argv[0], "-") {
		return fmt.Errorf("name the action first: %s %s ACTION [--flags] (%s help %s lists them)", toolcli.Program, t.Name, toolcli.Program, t.Name)
	}
	a, ok := t.Action(argv[0])
	if !ok {
		names := t.ActionNames()[1:]
		msg := fmt.Sprintf("tool %s has no action %q", t.Name, argv[0])
		ps := make([]tools.Param, len(names))
		for i, n := range names {
			ps[i] = tools.Param{Name: n}
		}
		if n := tools.NearestParam(argv[0], ps); n != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", n)
		}
		if t.Dynamic != nil {
			// Forwarded tools are discovered from the kernel at run time,
			// without declarations to make flags of.
			msg += fmt.Sprintf("; a forwarded tool runs with sisyphus call %s --json '{\"action\":\"%s\",...}'", t.Name, argv[0])
		}
		return fmt.Errorf("%s; actions: %s", msg, strings.Join(names, ", "))
	}
	own, actionArgs := r.split(cmd, a, argv[1:])
	if wantsHelp(a.Arguments(), actionArgs) {
		return r.page(cmd, func(w io.Writer) error { return toolcli.ActionHelp(w, t, a) })
	}
	fs := cmd.Flags()
	fs.AddFlagSet(cmd.InheritedFlags())
	if err := fs.Parse(own); err != nil {
		return err
	}
	values, err := toolcli.Parse(a.Arguments(), actionArgs)
	if err != nil {
		return fmt.Errorf("%s %s: %w (%s %s %s --help lists its flags)", t.Name, a.Name, err, toolcli.Program, t.Name, a.Name)
	}
	log := g.logger()
	svc, _, _, done, err := openFront(cmd, log, &r.kf, &r.ff, &r.lf)
	if err != nil {
		return err
	}
	defer done()
	c := &toolCall{cmd: cmd, svc: svc, r: r, tool: t.Name, action: a.Name}
	res, err := c.flow(a, values)
	var re resultError
	if errors.As(err, &re) {
		if r.asJSON {
			r.write(cmd.OutOrStdout(), re.out)
		} else {
			toolcli.Render(cmd.ErrOrStderr(), re.out)
		}
		return exitError{1}
	}
	if err != nil {
		return err
	}
	return r.show(cmd, res)
}

// split sorts a tool command's arguments: the command's own flags
// (connection, --json, --yes, --no-pager, --log-level), which cobra's flag
// set parses, and the action's, which package toolcli does.
func (r *toolRun) split(cmd *cobra.Command, a *tools.Action, args []string) (own, action []string) {
	params := a.Arguments()
	lookup := func(name string) *pflag.Flag {
		if name == "help" {
			return nil // the action's help: see wantsHelp
		}
		if f := cmd.Flags().Lookup(name); f != nil {
			return f
		}
		return cmd.InheritedFlags().Lookup(name)
	}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		name, _, inline := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
		f := (*pflag.Flag)(nil)
		if strings.HasPrefix(arg, "--") {
			f = lookup(name)
		}
		if f == nil {
			action = append(action, arg)
			// An argument's value is its own, even one that looks like
			// a flag (--data --yes writes "--yes").
			if toolcli.TakesValue(params, arg) && i+1 < len(args) {
				i++
				action = append(action, args[i])
			}
			continue
		}
		own = append(own, arg)
		if !inline && f.NoOptDefVal == "" && i+1 < len(args) {
			i++
			own = append(own, args[i])
		}
	}
	return own, action
}

// toolCall is one action run from the command line.
type toolCall struct {
	cmd          *cobra.Command
	svc          *authority.Service
	r            *toolRun
	tool, action string
}

// run sends one call. Its person answers any question the front asks: a
// dangerous action's (at its commit), a local file's (even at a
// preflight: the file leaves the machine or lands on it).
func (c *toolCall) run(args map[string]any) (*mcp.CallResult, json.RawMessage, error) {
	args["action"] = c.action
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, nil, err
	}
	call := authority.Call{Tool: c.tool, Args: raw, CancelOnDone: true,
		Confirmer: terminalConfirmer{yes: c.r.yes, out: c.cmd.ErrOrStderr(), stdin: os.Stdin}}
	res, err := c.svc.Runner.Run(c.cmd.Context(), call)
	if err != nil {
		return nil, nil, err
	}
	out, _ := json.Marshal(res.StructuredContent)
	return res, out, nil
}

// flow runs the action as its person's own command. A read runs as is. A
// strict write runs its preflight, shows what it found, and commits with
// the credentials it issued, in one go; a dangerous one asks its person
// first (the terminal, or --yes), at the commit, once the gate and the
// preflight let it run. --validate-only stops after the preflight. The
// configuration still decides what may run: a disabled action, a notebook
// the permission keeps out, are refused here as they are to an agent.
func (c *toolCall) flow(a *tools.Action, values map[string]any) (json.RawMessage, error) {
	validateOnly, _ := values["validateOnly"].(bool)
	strictWrite := a.Policy.Class != strict.Read && a.Policy.Class != strict.External
	if !strictWrite || validateOnly {
		res, out, err := c.run(values)
		if err != nil {
			return nil, err
		}
		if validateOnly && !res.IsError && !c.r.asJSON {
			// The next step is the agent's instructions; a person runs
			// the command again without --validate-only.
			fmt.Fprintln(c.cmd.ErrOrStderr(), "validate only: nothing was written (the same command without --validate-only writes)")
			var all map[string]any
			if json.Unmarshal(out, &all) == nil {
				delete(all, "nextCall")
				delete(all, "nextStep")
				out, _ = json.Marshal(all)
			}
		}
		// A read that becomes a write (av.render with createIfNotExist)
		// asks for its preflight: run it as a strict write.
		if a.IsWrite() && !validateOnly && res.IsError && errorCode(out) == failure.PreconditionRequired {
			return c.commit(values)
		}
		return c.result(res, out)
	}
	return c.commit(values)
}

// commit runs the preflight, shows it, and commits.
func (c *toolCall) commit(values map[string]any) (json.RawMessage, error) {
	pre := map[string]any{}
	for k, v := range values {
		pre[k] = v
	}
	pre["validateOnly"] = true
	res, out, err := c.run(pre)
	if err != nil {
		return nil, err
	}
	if res.IsError {
		if errorCode(out) == failure.StrictModeDisabled {
			// Strict writes are off in the authority: the call runs as is.
			res, out, err = c.run(values)
			if err != nil {
				return nil, err
			}
		}
		return c.result(res, out)
	}
	var p struct {
		RequestID        string         `json:"requestId"`
		TargetCount      int            `json:"targetCount"`
		PreconditionName string         `json:"preconditionField"`
		LeaseExpiresAt   int64          `json:"leaseExpiresAt"`
		NextCall         map[string]any `json:"nextCall"`
	}
	if json.Unmarshal(out, &p) != nil || p.RequestID == "" || p.NextCall == nil {
		// Not a preflight's answer (a read run as one): it is the result.
		return c.result(res, out)
	}
	errw := c.cmd.ErrOrStderr()
	fmt.Fprintf(errw, "preflight %s.%s: %d target(s)", c.tool, c.action, p.TargetCount)
	if p.PreconditionName != "" {
		var all map[string]any
		json.Unmarshal(out, &all)
		fmt.Fprintf(errw, ", state %s %v", p.PreconditionName, all[p.PreconditionName])
	}
	fmt.Fprintf(errw, ", request %s, lease until %s; nothing written yet\n", p.RequestID, time.UnixMilli(p.LeaseExpiresAt).Format("15:04:05"))
	if extra := preflightNotes(out); len(extra) > 0 {
		b, _ := json.Marshal(extra)
		toolcli.Render(errw, b)
	}
	call := map[string]any{"action": c.action}
	for k, v := range values {
		call[k] = v
	}
	what := toolcli.Example(c.tool, call)
	if r := []rune(what); len(r) > 400 {
		what = string(r[:399]) + "…"
	}
	fmt.Fprintf(errw, "committing: %s\n", what)
	commit := map[string]any{}
	for k, v := range values {
		commit[k] = v
	}
	if rm, ok := p.NextCall["remove"].([]any); ok {
		for _, k := range rm {
			delete(commit, fmt.Sprint(k))
		}
	}
	if add, ok := p.NextCall["add"].(map[string]any); ok {
		for k, v := range add {
			commit[k] = v
		}
	}
	res, out, err = c.run(commit)
	if err != nil {
		return nil, err
	}
	return c.result(res, out)
}

// preflightNotes are what a preflight answered beyond its protocol
// fields: what the action found and will change.
func preflightNotes(out json.RawMessage) map[string]any {
	var all map[string]any
	json.Unmarshal(out, &all)
	for _, k := range []string{"action", "requestId", "requestIdExpiresAt", "leaseExpiresAt", "nextCall", "nextStep", "validateOnly",
		"writeAttempted", "targetCount", "preconditionField", "hashPrefixLength", "expectedStateHash", "expectedStructureHash",
		"expectedManifestHash", "expectedSourceHash"} {
		delete(all, k)
	}
	return all
}

// errorCode is a tool error's code ("" for a result).
func errorCode(out json.RawMessage) failure.Code {
	var probe struct {
		Error struct {
			Code failure.Code `json:"code"`
		} `json:"error"`
	}
	json.Unmarshal(out, &probe)
	return probe.Error.Code
}

// resultError carries a tool error's answer to show; the exit status is 1.
type resultError struct{ out json.RawMessage }

func (resultError) Error() string { return "exit status 1" }

func (c *toolCall) result(res *mcp.CallResult, out json.RawMessage) (json.RawMessage, error) {
	if res.IsError {
		return nil, resultError{out}
	}
	return out, nil
}

// show prints an answer: JSON with --json, else for a person, paged on a
// terminal. A tool error goes to stderr (stdout with --json) and exits 1.
func (r *toolRun) show(cmd *cobra.Command, out json.RawMessage) error {
	return r.page(cmd, func(w io.Writer) error { return r.write(w, out) })
}

func (r *toolRun) write(w io.Writer, out json.RawMessage) error {
	if r.asJSON {
		var pretty bytes.Buffer
		if json.Indent(&pretty, out, "", "  ") != nil {
			pretty.Reset()
			pretty.Write(out)
		}
		fmt.Fprintln(w, pretty.String())
		return nil
	}
	toolcli.Render(w, out)
	return nil
}

// page writes through $PAGER (default less -FRX) when stdout is a
// terminal and --no-pager is not given; otherwise straight to stdout.
func (r *toolRun) page(cmd *cobra.Command, write func(io.Writer) error) error {
	out := cmd.OutOrStdout()
	f, isFile := out.(*os.File)
	if r.noPager || !isFile || !isTerminal(f) {
		return write(out)
	}
	pager := strings.Fields(envOr("PAGER", "less -FRX"))
	if len(pager) == 0 || pager[0] == "cat" {
		return write(out)
	}
	p := exec.Command(pager[0], pager[1:]...)
	p.Stdout, p.Stderr = f, os.Stderr
	in, err := p.StdinPipe()
	if err == nil {
		err = p.Start()
	}
	if err != nil {
		return write(out)
	}
	werr := write(in)
	in.Close()
	p.Wait()
	return werr
}

// newHelpCmd is `sisyphus help [TOOL [ACTION]]`: a tool's or an action's
// help as the tool gives it, any other command's as cobra writes it.
func newHelpCmd() *cobra.Command {
	r := &toolRun{}
	cmd := &cobra.Command{
		Use:   "help [TOOL [ACTION]]",
		Short: "Help about any command, tool or action",
		ValidArgsFunction: func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) == 0 {
				var out []string
				for _, sub := range c.Root().Commands() {
					if !sub.Hidden && strings.HasPrefix(sub.Name(), toComplete) {
						out = append(out, sub.Name())
					}
				}
				return out, cobra.ShellCompDirectiveNoFileComp
			}
			for _, t := range catalog.All() {
				if t.Name == args[0] && len(args) == 1 {
					return toolcli.Complete(t, nil, toComplete), cobra.ShellCompDirectiveNoFileComp
				}
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			root := c.Root()
			if len(args) == 0 {
				return root.Help()
			}
			for _, t := range catalog.All() {
				if t.Name != args[0] {
					continue
				}
				if len(args) == 1 {
					return r.page(c, func(w io.Writer) error { return toolcli.ToolHelp(w, t) })
				}
				a, ok := t.Action(args[1])
				if !ok {
					return fmt.Errorf("tool %s has no action %q; actions: %s", t.Name, args[1], strings.Join(t.ActionNames()[1:], ", "))
				}
				return r.page(c, func(w io.Writer) error { return toolcli.ActionHelp(w, t, a) })
			}
			sub, _, err := root.Find(args)
			if err != nil || sub == root {
				return fmt.Errorf("unknown command or tool %q (sisyphus help lists them)", args[0])
			}
			return sub.Help()
		},
	}
	cmd.Flags().BoolVar(&r.noPager, "no-pager", false, "never page the help (it is paged only on a terminal)")
	return cmd
}

// newListCmd is `sisyphus list [TOOL]`, upstream's spelling of the list
// help gives: the tools, or a tool's actions.
func newListCmd() *cobra.Command {
	r := &toolRun{}
	cmd := &cobra.Command{
		Use:   "list [TOOL]",
		Short: "List the tools, or a tool's actions",
		Args:  cobra.MaximumNArgs(1),
		ValidArgsFunction: func(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			var out []string
			for _, t := range catalog.All() {
				if len(args) == 0 && strings.HasPrefix(t.Name, toComplete) {
					out = append(out, t.Name)
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			all := catalog.All()
			if len(args) == 0 {
				return r.page(c, func(w io.Writer) error { toolcli.ToolsHelp(w, all); return nil })
			}
			for _, t := range all {
				if t.Name == args[0] {
					return r.page(c, func(w io.Writer) error { return toolcli.ToolHelp(w, t) })
				}
			}
			return fmt.Errorf("no tool %q (sisyphus list names them)", args[0])
		},
	}
	cmd.Flags().BoolVar(&r.noPager, "no-pager", false, "never page the list (it is paged only on a terminal)")
	return cmd
}
