package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/spf13/cobra"

	"github.com/sisyphus-go/sisyphus/internal/embedded"
	"github.com/sisyphus-go/sisyphus/internal/netguard"
)

func newKernelCmd(g *globalFlags) *cobra.Command {
	var (
		dir, listen, token string
		faults             []string
		memLimit           int64
		nf                 netFlags
	)
	cmd := &cobra.Command{
		Use:   "kernel",
		Short: "Serve the embedded SiYuan-compatible kernel API on a workspace directory",
		Long: `Serve the embedded SiYuan-compatible kernel: the SiYuan 3.7.3 HTTP API subset Sisyphus uses,
on a workspace laid out as SiYuan lays it out. A new directory gets a sample notebook and a
welcome document. Faults can be injected per endpoint for tests:

  --fault /api/block/updateBlock=drop-after-apply     apply, then close the connection without a reply
  --fault /api/block/updateBlock=fail-before-apply    answer HTTP 500, apply nothing
  --fault /api/block/getBlockKramdown=latency:3s      delay before answering`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				return errors.New("--dir is required: the workspace directory to serve")
			}
			var fs []embedded.Fault
			for _, spec := range faults {
				f, err := embedded.ParseFault(spec)
				if err != nil {
					return err
				}
				fs = append(fs, f)
			}
			setMemoryLimit(memLimit)
			log := g.logger()
			conns, err := nf.conns(cmd, log, 0)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			k, err := embedded.Open(ctx, embedded.Options{Dir: dir, Token: token, Faults: fs, Logger: log})
			if err != nil {
				return err
			}
			defer k.Close()
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return fmt.Errorf("listen on %s: %w", listen, err)
			}
			srv, errc := serveGuarded(netguard.New(nf.config("kernel", conns, log)), ln, k.Handler())
			for _, f := range fs {
				log.Warn("fault injection active", "fault", f.String())
			}
			fmt.Fprintf(cmd.OutOrStdout(), "embedded SiYuan kernel %s serving %s on http://%s (token %s)\n",
				embedded.Version, k.Dir(), ln.Addr(), k.Token())
			select {
			case err := <-errc:
				return fmt.Errorf("serve: %w", err)
			case <-ctx.Done():
			}
			shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			return srv.Shutdown(shutdownCtx)
		},
	}
	cmd.Flags().StringVar(&dir, "dir", envOr("SISYPHUS_EMBEDDED", ""), "workspace directory (created with a demo notebook when new)")
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:6806", "address to listen on")
	cmd.Flags().StringVar(&token, "token", envOr("SIYUAN_TOKEN", ""), "API token clients must send (default: the workspace's conf/conf.json api.token, generated on first start)")
	cmd.Flags().Int64Var(&memLimit, "memory-limit-mib", 128, "soft memory limit for the Go heap in MiB (0: none; GOMEMLIMIT, when set, wins)")
	nf.register(cmd, false)
	cmd.Flags().StringArrayVar(&faults, "fault", nil, "inject a fault: ENDPOINT=drop-after-apply|fail-before-apply|latency:DURATION (repeatable)")
	return cmd
}
