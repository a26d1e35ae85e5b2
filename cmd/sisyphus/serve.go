package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/sisyphus-go/sisyphus/internal/authority"
)

func newServeCmd(g *globalFlags) *cobra.Command {
	var (
		kf                      kernelFlags
		listen, token, stateDir string
		strictOff               bool
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve SiYuan to agents over MCP (Streamable HTTP, both protocol eras)",
		Long: `Serve the Sisyphus tools over MCP Streamable HTTP at /mcp (and the same under
/plugin/private/siyuan-plugins-mcp-sisyphus/), for clients speaking 2026-07-28 or the legacy
revisions through 2025-11-25. Every request needs Authorization: Bearer <token>.

Use --embedded DIR to serve the embedded SiYuan-compatible kernel on a workspace directory
(created with a demo notebook when new) instead of a running SiYuan.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log := g.logger()
			ctx := cmd.Context()
			tok, tokFile, err := bearerToken(stateDir, token)
			if err != nil {
				return err
			}
			c, desc, closeKernel, err := kf.open(ctx, log)
			if err != nil {
				return err
			}
			defer closeKernel()
			coord, closeLedger, err := openCoordinator(stateDir, strictOff, log, 2*time.Second)
			if err != nil {
				return fmt.Errorf("open the write ledger in %s: %w (is another sisyphus serve using this state dir?)", stateDir, err)
			}
			defer closeLedger()
			reg, err := registry(c, coord)
			if err != nil {
				return err
			}
			srv := authority.NewMCPServer(reg, buildVersion(), log)
			defer srv.Close()
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return fmt.Errorf("listen on %s: %w", listen, err)
			}
			hs := &http.Server{Handler: authority.Handler(srv, authority.HTTPConfig{Token: tok, Logger: log}), ReadHeaderTimeout: 10 * time.Second}
			errc := make(chan error, 1)
			go func() { errc <- hs.Serve(ln) }()
			url := "http://" + ln.Addr().String() + "/mcp"
			printClientConfig(cmd.OutOrStdout(), url, tok, tokFile, kf)
			fmt.Fprintf(cmd.OutOrStdout(), "sisyphus ready: MCP at %s serving %s\n", url, desc)
			select {
			case err := <-errc:
				if !errors.Is(err, http.ErrServerClosed) {
					return fmt.Errorf("serve: %w", err)
				}
			case <-ctx.Done():
			}
			shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			return hs.Shutdown(shutdown)
		},
	}
	kf.register(cmd)
	cmd.Flags().StringVar(&listen, "listen", envOr("SISYPHUS_LISTEN", "127.0.0.1:36806"), "address to listen on")
	cmd.Flags().StringVar(&token, "token", envOr("SISYPHUS_TOKEN", ""), "bearer token clients must send (default: generated once and kept in the state dir)")
	cmd.Flags().StringVar(&stateDir, "state-dir", defaultStateDir(), "directory for the token and the write ledger")
	cmd.Flags().BoolVar(&strictOff, "strict-off", os.Getenv("SISYPHUS_STRICT") == "off", "turn Strict Safe Writes off: plain schemas and direct writes, still attempted once, answered with writeSafetyGuaranteed:false")
	return cmd
}

// printClientConfig shows ready-made MCP client configurations.
func printClientConfig(w io.Writer, url, tok, tokFile string, kf kernelFlags) {
	exe, _ := os.Executable()
	stdioArgs := []string{"stdio"}
	if kf.embedded != "" {
		stdioArgs = append(stdioArgs, "--embedded", kf.embedded)
	} else {
		stdioArgs = append(stdioArgs, "--siyuan-url", kf.url)
	}
	httpCfg := map[string]any{"mcpServers": map[string]any{"sisyphus": map[string]any{
		"type": "http", "url": url, "headers": map[string]string{"Authorization": "Bearer " + tok}}}}
	stdioCfg := map[string]any{"mcpServers": map[string]any{"sisyphus": map[string]any{
		"command": exe, "args": stdioArgs}}}
	h, _ := json.MarshalIndent(httpCfg, "", "  ")
	s, _ := json.MarshalIndent(stdioCfg, "", "  ")
	fmt.Fprintf(w, "MCP URL:   %s\n", url)
	if tokFile != "" {
		fmt.Fprintf(w, "Token:     %s (kept in %s)\n", tok, tokFile)
	} else {
		fmt.Fprintf(w, "Token:     %s\n", tok)
	}
	fmt.Fprintf(w, "\nHTTP client configuration:\n%s\n\nstdio client configuration:\n%s\n\n", h, s)
}
