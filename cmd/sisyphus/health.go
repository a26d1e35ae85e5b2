package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"
)

func newHealthCmd(g *globalFlags) *cobra.Command {
	var ff frontFlags
	cmd := &cobra.Command{
		Use:   "health",
		Short: "Print the write authority's /health (queues, in flight, task records, read budgets, events)",
		Long: `Print the authority's authenticated /health as JSON: admission queue counts per lane, calls in
flight, cancelled reads still running, task-result records, read-budget counters and event counters.
It never shows task ids, request ids, tokens or note content. The authority is found with
--authority or from the discovery record in --state-dir.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Second)
			defer cancel()
			data, err := ff.delegator("", g.logger()).Health(ctx)
			if err != nil {
				return err
			}
			return printJSON(cmd, data)
		},
	}
	ff.register(cmd, "token")
	return cmd
}

func newTasksCmd(g *globalFlags) *cobra.Command {
	var ff frontFlags
	cmd := &cobra.Command{
		Use:   "tasks status|cancel|result TASK_ID",
		Short: "Ask the write authority about a task (io.siyuan.sisyphus/task-control)",
		Long: `Send a task-control request for a delegated call to the authority and print its answer:
found, state, cancelRequested, committing, accepted (cancel) and, for result, the original tool
result. Records are kept in memory for 10 minutes at most: found:false proves nothing; reconcile a
write with its original requestId.`,
		Args:      cobra.ExactArgs(2),
		ValidArgs: []string{"status", "cancel", "result"},
		RunE: func(cmd *cobra.Command, args []string) error {
			switch args[0] {
			case "status", "cancel", "result":
			default:
				return fmt.Errorf("unknown operation %q: want status, cancel or result", args[0])
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Second)
			defer cancel()
			rep, err := ff.delegator("", g.logger()).Control(ctx, args[1], args[0])
			if err != nil {
				return err
			}
			data, _ := json.Marshal(rep)
			return printJSON(cmd, data)
		},
	}
	ff.register(cmd, "token")
	return cmd
}

func printJSON(cmd *cobra.Command, data []byte) error {
	var out bytes.Buffer
	if err := json.Indent(&out, bytes.TrimSpace(data), "", "  "); err != nil {
		return fmt.Errorf("the authority answered something that is not JSON: %w", err)
	}
	fmt.Fprintln(cmd.OutOrStdout(), out.String())
	return nil
}
