package main

import (
	"github.com/spf13/cobra"

	"github.com/sisyphus-go/sisyphus/internal/authority"
)

func newStdioCmd(g *globalFlags) *cobra.Command {
	var kf kernelFlags
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
			reg, err := registry(c)
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
	return cmd
}
