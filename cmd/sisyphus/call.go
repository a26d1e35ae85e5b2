package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sisyphus-go/sisyphus/internal/authority"
	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

func newCallCmd(g *globalFlags) *cobra.Command {
	var (
		kf   kernelFlags
		ff   frontFlags
		lf   localFlags
		args string
		yes  bool
	)
	cmd := &cobra.Command{
		Use:   "call TOOL --json ARGS",
		Short: "Make one tool call from the shell and print its result as JSON",
		Long: `Make one tool call and print its result (the structured content) as JSON on stdout. The exit
status is 1 when the result is a tool error.

Reads run here, on this process's kernel client. Every other call (strict preflights and commits,
external actions) goes to the write authority (sisyphus serve), found with --authority or from the
discovery record in --state-dir, under a new taskId; without a reachable authority it answers
write_coordinator_unavailable and nothing is written. If the authority's reply is lost, its result is
asked for by taskId (never by sending the call again); if that fails too the answer is outcome_unknown
with the taskId, for sisyphus tasks result later.

Ctrl-C relays a cancellation to the authority and waits for its answer (a write whose commit has
started still finishes); a second Ctrl-C stops waiting.

A dangerous action (delete, remove, move, set_permission, ...) runs only once you confirm it: on a
terminal call asks; otherwise pass --yes. So does a call that reads a file of this machine
(upload_asset with localFilePath) or saves one here (export_resources with outputPath, extract_doc),
and only inside the allowed folders: the working directory by default, or those of --allow-dir;
never in the SiYuan workspace, the state dir or a hidden folder.

Example:
  sisyphus call block --json '{"action":"update","id":"…","data":"new text","validateOnly":true}'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, pos []string) error {
			log := g.logger()
			ctx := cmd.Context()
			if !json.Valid([]byte(args)) {
				return fmt.Errorf("--json is not valid JSON")
			}
			sigs := make(chan os.Signal, 2)
			signal.Notify(sigs, os.Interrupt)
			defer signal.Stop(sigs)
			go func() {
				if _, ok := <-sigs; !ok {
					return
				}
				fmt.Fprintln(cmd.ErrOrStderr(), "sisyphus: cancelling (relayed to the authority for a delegated call); waiting for the answer — Ctrl-C again to stop waiting")
				if _, ok := <-sigs; ok {
					fmt.Fprintln(cmd.ErrOrStderr(), "sisyphus: stopped waiting; the outcome is unknown here (query the task with sisyphus tasks)")
					os.Exit(130)
				}
			}()
			svc, _, _, done, err := openFront(cmd, log, &kf, &ff, &lf)
			if err != nil {
				return err
			}
			defer done()
			res, err := svc.Runner.Run(ctx, authority.Call{Tool: pos[0], Args: json.RawMessage(args), CancelOnDone: true,
				Confirmer: terminalConfirmer{yes: yes, out: cmd.ErrOrStderr()}})
			if err != nil {
				return err
			}
			out, _ := json.Marshal(res.StructuredContent)
			var pretty bytes.Buffer
			if json.Indent(&pretty, out, "", "  ") != nil {
				pretty.Reset()
				pretty.Write(out)
			}
			fmt.Fprintln(cmd.OutOrStdout(), pretty.String())
			if id, ok := res.Meta[authority.MetaTaskID].(string); ok {
				log.Debug("delegated call", "taskId", id)
			}
			if res.IsError {
				return exitError{1}
			}
			return nil
		},
	}
	kf.register(cmd)
	ff.register(cmd, "token")
	lf.register(cmd, true)
	cmd.Flags().StringVar(&args, "json", "{}", "the tool's arguments as a JSON object")
	cmd.Flags().BoolVar(&yes, "yes", false, "confirm without asking a dangerous action, or a file read or saved on this machine (needed without a terminal)")
	return cmd
}

// terminalConfirmer asks the person who runs sisyphus call: --yes answers
// for them; otherwise the question goes to the terminal, and without one
// the call is refused with the hint to pass --yes.
type terminalConfirmer struct {
	yes bool
	out io.Writer
	// stdin, when set, is where the answer is read (sisyphus TOOL ACTION):
	// only when it is a terminal, so a script piping into the command is
	// refused instead of being asked on a terminal it does not watch.
	stdin *os.File
}

func (terminalConfirmer) CanForm() bool { return true }

func (c terminalConfirmer) Form(ctx context.Context, message string, _ map[string]any) (tools.FormAnswer, error) {
	if c.yes {
		return tools.FormAnswer{Action: tools.FormAccept, Content: map[string]any{tools.FieldConfirm: true}}, nil
	}
	refuse := func() (tools.FormAnswer, error) {
		e := failure.New(failure.ConfirmationRequired, "this dangerous call needs your confirmation and there is no terminal to ask on; nothing was run")
		e.Action = "run it again with --yes to confirm it"
		return tools.FormAnswer{}, e.Attempted(false)
	}
	var tty io.Reader
	if c.stdin != nil {
		if !isTerminal(c.stdin) {
			return refuse()
		}
		tty = c.stdin
		// The person typed the command: the question is theirs, not an
		// agent's.
		message = strings.Replace(message, "An agent asks to run", "You are about to run", 1)
	} else {
		f, err := os.Open("/dev/tty")
		if err != nil {
			return refuse()
		}
		defer f.Close()
		tty = f
	}
	fmt.Fprintf(c.out, "%s [y/N] ", message)
	answers := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(tty).ReadString('\n')
		answers <- strings.ToLower(strings.TrimSpace(line))
	}()
	select {
	case <-ctx.Done():
		return tools.FormAnswer{}, ctx.Err()
	case a := <-answers:
		if a == "y" || a == "yes" {
			return tools.FormAnswer{Action: tools.FormAccept, Content: map[string]any{tools.FieldConfirm: true}}, nil
		}
		return tools.FormAnswer{Action: tools.FormDecline}, nil
	}
}
