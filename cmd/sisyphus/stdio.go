package main

import (
	"github.com/spf13/cobra"
)

func newStdioCmd(g *globalFlags) *cobra.Command {
	var (
		kf kernelFlags
		ff frontFlags
		lf localFlags
	)
	cmd := &cobra.Command{
		Use:   "stdio",
		Short: "Serve SiYuan to a desktop agent over MCP on stdin/stdout",
		Long: `Serve the Sisyphus tools over MCP on stdin/stdout (newline-delimited JSON-RPC), for desktop
clients that spawn their servers. Both protocol eras are served in one process. Logs go to stderr.

stdio is a front: it runs reads on its own kernel client and sends every other call to the write
authority (sisyphus serve), found with --authority or from the discovery record in --state-dir. It
never owns the write ledger and never writes on its own: with no authority reachable a write answers
write_coordinator_unavailable, and once another authority instance replaces the one it pinned, every
write answers write_coordinator_changed until stdio restarts.

An agent's upload_asset reads a file of this machine, and export_resources and extract_doc save
files here, only inside the folders you allow with --allow-dir (none by default: a client spawns
stdio from any working directory), never in the SiYuan workspace, the state dir or a hidden folder;
you confirm each such call, with the file or the destination named.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log := g.logger()
			ctx := cmd.Context()
			svc, local, desc, done, err := openFront(cmd, log, &kf, &ff, &lf)
			if err != nil {
				return err
			}
			defer done()
			url, _ := svc.Delegator.Pinned()
			if url == "" {
				url = "none yet (discovered on the first write)"
			}
			log.Info("sisyphus stdio ready", "kernel", desc, "authority", url, "allowedFolders", local.Allowed())
			go svc.WatchConfig(ctx, configPoll)
			return svc.MCP.ServeStdio(ctx, cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	kf.register(cmd)
	ff.register(cmd, "token")
	lf.register(cmd, false)
	return cmd
}
