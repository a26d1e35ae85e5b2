// Command sisyphus serves a SiYuan workspace to AI agents over MCP and makes
// every write it owns safe. This file wires the subcommands; each lives in a
// file of its own.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/spf13/cobra"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newRootCmd().ExecuteContext(ctx); err != nil {
		var ee exitError
		if errors.As(err, &ee) {
			os.Exit(ee.code)
		}
		fmt.Fprintln(os.Stderr, "sisyphus:", err)
		os.Exit(1)
	}
}

// exitError ends the process with its code and no message: the command has
// already said what happened (sisyphus call printing a tool error).
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// globalFlags are shared by every subcommand.
type globalFlags struct {
	logLevel string
	// profile names the profile whose SiYuan URL, token and state dir fill
	// the flags not given (resolve.go).
	profile string
}

func newRootCmd() *cobra.Command {
	g := &globalFlags{}
	root := &cobra.Command{
		Use:           "sisyphus",
		Short:         "Safe MCP access to SiYuan notes for AI agents",
		Long:          "Sisyphus serves a SiYuan workspace to AI agents over MCP and makes every write it owns safe:\npreflight lease, full SHA-256 comparison, a persistent idempotency ledger, one write lane,\nsingle-attempt dispatch and readback.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentPreRunE = g.persistentResolve
	root.PersistentFlags().StringVar(&g.profile, "profile", os.Getenv("SISYPHUS_PROFILE"), "use this profile's SiYuan URL, token and state dir (sisyphus profile; flags given win; env SISYPHUS_PROFILE)")
	root.PersistentFlags().StringVar(&g.logLevel, "log-level", envOr("SISYPHUS_LOG_LEVEL", "info"), "log level: debug, info, warn, error")
	addToolCmds(root, g)
	root.AddCommand(newServeCmd(g), newStdioCmd(g), newCallCmd(g), newHealthCmd(g), newTasksCmd(g), newKernelCmd(g), newVersionCmd(), newDoctorCmd(g), newConfigCmd(g), newAdminTokenCmd(), newSkillCmd())
	root.AddCommand(newProfileCmd(), newInstancesCmd(g))
	return root
}

// logger writes structured logs to stderr; stdout stays for command output.
func (g *globalFlags) logger() *slog.Logger {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(g.logLevel)); err != nil {
		lvl = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl}))
}

// setMemoryLimit sets a soft limit on the Go heap so the garbage collector
// works harder before the process grows past it, instead of doubling the
// heap between collections. GOMEMLIMIT, when set, wins.
func setMemoryLimit(mib int64) {
	if os.Getenv("GOMEMLIMIT") != "" || mib <= 0 {
		return
	}
	debug.SetMemoryLimit(mib << 20)
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
