package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sisyphus-go/sisyphus/internal/authority"
	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/settings"
)

func newConfigCmd(g *globalFlags) *cobra.Command {
	var (
		ff        frontFlags
		adminFile string
		asJSON    bool
		display   = func(w io.Writer, v authority.ConfigView) error {
			if asJSON {
				b, _ := json.MarshalIndent(v, "", "  ")
				_, err := fmt.Fprintln(w, string(b))
				return err
			}
			printConfig(w, v)
			return nil
		}
	)
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show or change who may do what: notebook permissions, tool switches, strict mode",
		Long: `Show or change Sisyphus's configuration: what agents may do in each notebook, which tools and
actions they see, and strict mode. It lives in the workspace where the upstream SiYuan plugin keeps
it (data/storage/petal/siyuan-plugins-mcp-sisyphus/notebookPermissions and mcpToolsConfig), so
moving from the plugin keeps your settings, and every process serving the workspace sees the same.

Changes go through the running write authority (sisyphus serve), found like sisyphus call finds
it; they apply to the next call, and agents' tool lists follow. Every subcommand authenticates with
the person's admin token, read from the state dir's admin-token file (or --admin-token-file), never
with the agents' bearer token: an agent holding that token cannot read or change any of this.

Permissions: none (hidden from agents), r (read), rw (read and write), rwd (read, write and delete).
A notebook without an entry is r.

Examples:
  sisyphus config show
  sisyphus config permission "Research" rw
  sisyphus config enable block.delete
  sisyphus config disable fs
  sisyphus config strict on
  sisyphus config slim off
  sisyphus config app timeline off
  sisyphus config app timeline.rollback_document off
  sisyphus config feedback https://example.org/sisyphus-feedback
  sisyphus config feedback off
  sisyphus config user-rules --file rules.md`,
	}
	cmd.PersistentFlags().BoolVar(&asJSON, "json", false, "print the configuration as JSON")

	client := func() (configClient, error) {
		c, err := adminClient(ff, adminFile, g.logger())
		return configClient{c}, err
	}
	change := func(cmd *cobra.Command, ch settings.Change) error {
		c, err := client()
		if err != nil {
			return err
		}
		before, err := c.Config(cmd.Context(), nil)
		if err != nil {
			return err
		}
		v, err := c.Config(cmd.Context(), &ch)
		if err != nil {
			return err
		}
		if err := display(cmd.OutOrStdout(), v); err != nil {
			return err
		}
		if !asJSON {
			// Last, where the eye lands: what this command changed.
			fmt.Fprintln(cmd.OutOrStdout(), "\n"+describeChange(before, v, ch))
		}
		return nil
	}
	show := &cobra.Command{
		Use: "show", Short: "Print every notebook's permission, every tool's switches and strict mode", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := client()
			if err != nil {
				return err
			}
			v, err := c.Config(cmd.Context(), nil)
			if err != nil {
				return err
			}
			return display(cmd.OutOrStdout(), v)
		},
	}
	perm := &cobra.Command{
		Use: "permission NOTEBOOK none|r|rw|rwd", Short: "Set what agents may do in a notebook (by id or exact name)", Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := client()
			if err != nil {
				return err
			}
			v, err := c.Config(cmd.Context(), nil)
			if err != nil {
				return err
			}
			id, err := notebookByIDOrName(v, args[0])
			if err != nil {
				return err
			}
			return change(cmd, settings.Change{Notebook: id, Permission: args[1]})
		},
	}
	switchCmd := func(use string, on bool) *cobra.Command {
		return &cobra.Command{
			Use: use + " TOOL[.ACTION]", Short: strings.ToUpper(use[:1]) + use[1:] + " a tool, or one of its actions", Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				tool, action, _ := strings.Cut(args[0], ".")
				return change(cmd, settings.Change{Tool: tool, Action: action, Enabled: &on})
			},
		}
	}
	strictCmd := &cobra.Command{
		Use: "strict on|off", Short: "Turn Strict Safe Writes on or off (serve --strict-off still forces it off)", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var on bool
			switch args[0] {
			case "on":
				on = true
			case "off":
			default:
				return fmt.Errorf("strict takes on or off, got %q", args[0])
			}
			return change(cmd, settings.Change{Strict: &on})
		},
	}
	slimCmd := &cobra.Command{
		Use: "slim on|off", Short: "Slim read answers: readInfo only when an answer leaves something out (on, the default), or on every main read (off)", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			on, ok := map[string]bool{"on": true, "off": false}[args[0]]
			if !ok {
				return fmt.Errorf("slim takes on or off, got %q", args[0])
			}
			return change(cmd, settings.Change{Slim: &on})
		},
	}
	appCmd := &cobra.Command{
		Use: "app APP[.ACTION] on|off", Short: "Switch an MCP App (flashcardReview, timeline, mascotShop), or one of its actions, on or off", Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			on, ok := map[string]bool{"on": true, "off": false}[args[1]]
			if !ok {
				return fmt.Errorf("app takes on or off, got %q", args[1])
			}
			app, action, _ := strings.Cut(args[0], ".")
			return change(cmd, settings.Change{App: app, AppAction: action, Enabled: &on})
		},
	}
	feedbackCmd := &cobra.Command{
		Use: "feedback URL|off", Short: "Set where feedback.submit posts agents' feedback (an http or https URL), or off to send none", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			u := args[0]
			if u == "off" {
				u = ""
			}
			return change(cmd, settings.Change{FeedbackURL: &u})
		},
	}
	var rulesFile string
	var rulesClear bool
	rules := &cobra.Command{
		Use: "user-rules [TEXT]", Short: "Set the rules agents read at /USER_RULES.md (read-only to them): TEXT, --file F (- for stdin) or --clear",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			given := 0
			for _, set := range []bool{len(args) == 1, rulesFile != "", rulesClear} {
				if set {
					given++
				}
			}
			if given != 1 {
				return fmt.Errorf("give exactly one of TEXT, --file or --clear")
			}
			text := ""
			switch {
			case len(args) == 1:
				text = args[0]
			case rulesFile != "":
				b, err := readRulesFile(cmd, rulesFile)
				if err != nil {
					return err
				}
				text = b
			}
			return change(cmd, settings.Change{UserRules: &text})
		},
	}
	rules.Flags().StringVar(&rulesFile, "file", "", "read the rules from this file (- for standard input)")
	rules.Flags().BoolVar(&rulesClear, "clear", false, "remove the rules")
	for _, sub := range []*cobra.Command{show, perm, switchCmd("enable", true), switchCmd("disable", false), strictCmd, slimCmd, appCmd, feedbackCmd, rules} {
		// Every subcommand finds the authority as sisyphus call does, and
		// sends the admin token.
		sub.Flags().StringVar(&ff.stateDir, "state-dir", defaultStateDir(), "state dir of the authority (its discovery record and admin token)")
		sub.Flags().StringVar(&ff.authority, "authority", envOr("SISYPHUS_AUTHORITY", ""), "URL of the write authority (default: discovered from the state dir)")
		sub.Flags().StringVar(&adminFile, "admin-token-file", "", "file holding the authority's admin token (default: admin-token in the state dir)")
		cmd.AddCommand(sub)
	}
	return cmd
}

// configClient is the admin client whose errors tell the person what to
// do, not only what went wrong.
type configClient struct{ *authority.AdminClient }

func (c configClient) Config(ctx context.Context, ch *settings.Change) (authority.ConfigView, error) {
	v, err := c.AdminClient.Config(ctx, ch)
	var fe *failure.Error
	if errors.As(err, &fe) && fe.CallerAction() != "" {
		return v, fmt.Errorf("%w\nWhat to do: %s", err, fe.CallerAction())
	}
	return v, err
}

// adminClient is the client of the authority's /config that ff finds,
// sending the admin token read from file (default: the state dir's).
func adminClient(ff frontFlags, file string, log *slog.Logger) (*authority.AdminClient, error) {
	if file == "" {
		file = authority.AdminTokenPath(ff.stateDir)
	}
	tok, err := authority.ReadAdminToken(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no admin token in %s: sisyphus serve creates it when it starts on a state dir; pass the authority's --state-dir, or --admin-token-file", file)
	}
	if err != nil {
		return nil, err
	}
	cfg := authority.DelegatorConfig{URL: ff.authority, StateDir: ff.stateDir, Logger: log, Version: buildVersion()}
	return authority.NewAdminClient(cfg, tok, file), nil
}

// notebookByIDOrName finds a notebook of the view by its id or its exact
// name (a name several notebooks share is refused).
func notebookByIDOrName(v authority.ConfigView, s string) (string, error) {
	var byName []string
	for _, n := range v.Notebooks {
		if n.ID == s {
			return n.ID, nil
		}
		if n.Name == s {
			byName = append(byName, n.ID)
		}
	}
	switch len(byName) {
	case 1:
		return byName[0], nil
	case 0:
		return "", fmt.Errorf("no notebook has the id or name %q (sisyphus config show lists them)", s)
	}
	return "", fmt.Errorf("%d notebooks are named %q (%s): give the id", len(byName), s, strings.Join(byName, ", "))
}

func printConfig(w io.Writer, v authority.ConfigView) {
	for _, p := range v.Problems {
		fmt.Fprintf(w, "PROBLEM  %s (every call touching a notebook, and every write, is refused until it is fixed)\n", p)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "NOTEBOOK\tID\tPERMISSION\t\n")
	for _, n := range v.Notebooks {
		note := ""
		if !n.Explicit {
			note = "(default)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", n.Name, n.ID, n.Permission, note)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nA notebook without an entry is %s. Levels: none (hidden), r, rw, rwd.\n\n", v.DefaultPermission)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "TOOL\tENABLED\tACTIONS OFF\tDANGEROUS (confirmed by a person)\n")
	for _, t := range v.Tools {
		var off, danger []string
		for _, a := range t.Actions {
			if !a.Enabled {
				off = append(off, a.Name)
			}
			if a.Dangerous {
				danger = append(danger, a.Name)
			}
		}
		fmt.Fprintf(tw, "%s\t%v\t%s\t%s\n", t.Name, t.Enabled, orDash(off), orDash(danger))
	}
	tw.Flush()
	state := "on"
	switch {
	case v.Strict.ForcedOff:
		state = "off (forced by serve --strict-off)"
	case !v.Strict.Config:
		state = "off"
	}
	fmt.Fprintf(w, "\nStrict Safe Writes: %s\n", state)
	slim := "on (readInfo only when an answer leaves something out)"
	if !v.SlimResponses {
		slim = "off (every main read carries readInfo)"
	}
	fmt.Fprintf(w, "Slim read answers: %s\n", slim)
	if len(v.Apps) > 0 {
		fmt.Fprintf(w, "\nMCP Apps (shown only to clients that render them):\n")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  APP\tENABLED\tACTIONS OFF\tNOTE\n")
		for _, a := range v.Apps {
			var off []string
			for _, x := range a.Actions {
				if !x.Enabled {
					off = append(off, x.Name)
				}
			}
			note := "-"
			if !a.Served {
				note = "not in this build (its " + a.Target + " tool is missing)"
			}
			fmt.Fprintf(tw, "  %s\t%v\t%s\t%s\n", a.Key, a.Enabled, orDash(off), note)
		}
		tw.Flush()
	}
	feedback := "none (feedback.submit sends nothing; set one with sisyphus config feedback URL)"
	if v.FeedbackEndpoint != "" {
		feedback = v.FeedbackEndpoint
	}
	fmt.Fprintf(w, "Feedback endpoint: %s\n", feedback)
	if strings.TrimSpace(v.UserRules) == "" {
		fmt.Fprintf(w, "User rules (/USER_RULES.md): none\n")
	} else {
		fmt.Fprintf(w, "User rules (/USER_RULES.md):\n")
		for _, line := range strings.Split(strings.TrimRight(v.UserRules, "\n"), "\n") {
			fmt.Fprintf(w, "  %s\n", line)
		}
	}
	fmt.Fprintf(w, "Agent memory (/AGENTS.md): %d bytes\n", v.AgentMemoryBytes)
	if ko := v.KernelOptions; len(ko.Options) > 0 {
		fmt.Fprintf(w, "\nKernel options (kernelOptions in %s, as the plugin keeps them; read when serve starts):\n", ko.File)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  OPTION\tVALUE\tFROM\tRANGE\tMEANING\n")
		for _, o := range ko.Options {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", o.Name, o.Value, o.Source, o.Range, o.Meaning)
		}
		tw.Flush()
		for _, n := range ko.Notes {
			fmt.Fprintf(w, "  corrected: %s\n", n)
		}
	}
	fmt.Fprintf(w, "Stored in %s and %s (version %s)\n", v.Files["permissions"], v.Files["tools"], v.Version)
}

func orDash(ss []string) string {
	if len(ss) == 0 {
		return "-"
	}
	return strings.Join(ss, ", ")
}

// readRulesFile reads the user rules from a file, or standard input for
// "-", at most the configuration's cap (and one byte, to tell it is over).
func readRulesFile(cmd *cobra.Command, p string) (string, error) {
	var r io.Reader
	if p == "-" {
		r = cmd.InOrStdin()
	} else {
		f, err := os.Open(p)
		if err != nil {
			return "", err
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, settings.MaxTextBytes+1))
	if err != nil {
		return "", err
	}
	if len(b) > settings.MaxTextBytes {
		return "", fmt.Errorf("%s holds more than the %d bytes the user rules may hold", p, settings.MaxTextBytes)
	}
	return string(b), nil
}

// describeChange says in one line what ch changed, from the views before
// and after it.
func describeChange(before, after authority.ConfigView, ch settings.Change) string {
	onOff := func(b bool) string {
		if b {
			return "enabled"
		}
		return "disabled"
	}
	same := func(changed bool) string {
		if changed {
			return ""
		}
		return ", unchanged"
	}
	switch {
	case ch.Notebook != "":
		var was, now, name string
		for _, n := range before.Notebooks {
			if n.ID == ch.Notebook {
				was, name = n.Permission, n.Name
			}
		}
		for _, n := range after.Notebooks {
			if n.ID == ch.Notebook {
				now = n.Permission
			}
		}
		return fmt.Sprintf("set notebook %s (%s) to %s (was %s%s)", name, ch.Notebook, now, was, same(was != now))
	case ch.Tool != "" && ch.Enabled != nil:
		name := ch.Tool
		if ch.Action != "" {
			name += "." + ch.Action
		}
		find := func(v authority.ConfigView) (bool, bool) {
			for _, t := range v.Tools {
				if t.Name != ch.Tool {
					continue
				}
				if ch.Action == "" {
					return t.Enabled, true
				}
				for _, a := range t.Actions {
					if a.Name == ch.Action {
						return a.Enabled, true
					}
				}
			}
			return false, false
		}
		was, _ := find(before)
		now, _ := find(after)
		return fmt.Sprintf("%s %s (was %s%s)", onOff(now), name, onOff(was), same(was != now))
	case ch.App != "":
		name := ch.App
		if ch.AppAction != "" {
			name += "." + ch.AppAction
		}
		find := func(v authority.ConfigView) bool {
			for _, a := range v.Apps {
				if a.Key != ch.App {
					continue
				}
				if ch.AppAction == "" {
					return a.Enabled
				}
				for _, x := range a.Actions {
					if x.Name == ch.AppAction {
						return x.Enabled
					}
				}
			}
			return false
		}
		was, now := find(before), find(after)
		return fmt.Sprintf("%s the App %s (was %s%s)", onOff(now), name, onOff(was), same(was != now))
	case ch.Strict != nil:
		return fmt.Sprintf("Strict Safe Writes %s in the configuration (was %s%s)", onOffWord(after.Strict.Config), onOffWord(before.Strict.Config), same(after.Strict.Config != before.Strict.Config))
	case ch.Slim != nil:
		return fmt.Sprintf("slim read answers %s (was %s%s)", onOffWord(after.SlimResponses), onOffWord(before.SlimResponses), same(after.SlimResponses != before.SlimResponses))
	case ch.FeedbackURL != nil:
		now, was := orNone(after.FeedbackEndpoint), orNone(before.FeedbackEndpoint)
		return fmt.Sprintf("set the feedback endpoint to %s (was %s%s)", now, was, same(now != was))
	case ch.UserRules != nil:
		return fmt.Sprintf("set the user rules to %d bytes (were %d%s)", len(after.UserRules), len(before.UserRules), same(after.UserRules != before.UserRules))
	}
	return "changed the configuration"
}

func onOffWord(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
