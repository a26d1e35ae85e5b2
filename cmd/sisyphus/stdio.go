package main

import (
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/sisyphus-go/sisyphus/internal/authority"
)

func newStdioCmd(g *globalFlags) *cobra.Command {
	var (
		kf        kernelFlags
		stateDir  string
		strictOff bool
	)
	cmd := &cobra.Command{
		Use:   "stdio",
		Short: "Serve SiYuan to a desktop agent over MCP on stdin/stdout",
		Long: `Serve the Sisyphus tools over MCP on stdin/stdout (newline-delimited JSON-RPC), for desktop
clients that spawn their servers. Both protocol eras are served in one process. Logs go to stderr.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log := g.logger()
			ctx := cmd.Context()
			c, desc, closeKernel, err := kf.open(ctx, log)
			if err != nil {
				return err
			}
			defer closeKernel()
			// Writes need the state dir's ledger; while another process
			// (sisyphus serve) holds it, this one serves reads and answers
			// writes with write_coordinator_unavailable.
			coord, closeLedger, err := openCoordinator(stateDir, strictOff, log, 200*time.Millisecond)
			if err != nil {
				log.Warn("no write coordinator: writes will be refused", "state-dir", stateDir, "err", err)
				coord, closeLedger = nil, func() {}
			}
			defer closeLedger()
			reg, err := registry(c, coord)
			if err != nil {
				return err
			}
			srv := authority.NewMCPServer(reg, buildVersion(), log)
			defer srv.Close()
			log.Info("sisyphus stdio ready", "kernel", desc)
			return srv.ServeStdio(ctx, cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	kf.register(cmd)
	cmd.Flags().StringVar(&stateDir, "state-dir", defaultStateDir(), "directory of the write ledger")
	cmd.Flags().BoolVar(&strictOff, "strict-off", os.Getenv("SISYPHUS_STRICT") == "off", "turn Strict Safe Writes off (writes still attempted once, without the guarantee)")
	return cmd
}
