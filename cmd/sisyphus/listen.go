package main

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/sisyphus-go/sisyphus/internal/netguard"
)

// netFlags bound what clients can hold of a listener: its connections, the
// time their headers and bodies may take, and (for serve) one MCP request's
// size.
type netFlags struct {
	maxConns      int
	maxRequest    string
	headerTimeout time.Duration
	bodyTimeout   time.Duration
	bodyStall     time.Duration
	writeStall    time.Duration
}

func (n *netFlags) register(cmd *cobra.Command, requestSize bool) {
	maxConns := netguard.DefaultMaxConns
	if v, err := strconv.Atoi(os.Getenv("SISYPHUS_MAX_CONNECTIONS")); err == nil {
		maxConns = v
	}
	cmd.Flags().IntVar(&n.maxConns, "max-connections", maxConns, "most open client connections; when full, a new one replaces the oldest idle or stalled one (env SISYPHUS_MAX_CONNECTIONS)")
	if requestSize {
		cmd.Flags().StringVar(&n.maxRequest, "max-request-size", envOr("SISYPHUS_MAX_REQUEST_SIZE", ""),
			"largest body of one POST /mcp, refused with 413 as it arrives (default: --max-write-size plus 64KiB, 4MiB+64KiB by default)")
	}
	// The timing of a request is fixed for clients; these exist so that
	// the tests can see a slow client cut without waiting for it.
	cmd.Flags().DurationVar(&n.headerTimeout, "header-timeout", netguard.DefaultHeaderTimeout, "how long a request's headers may take")
	cmd.Flags().DurationVar(&n.bodyTimeout, "body-timeout", netguard.DefaultBodyTimeout, "how long a request's body may take (uploads: four times as long)")
	cmd.Flags().DurationVar(&n.bodyStall, "body-stall", netguard.DefaultBodyStall, "the longest pause in a request's body, and the grace before its minimum rate")
	cmd.Flags().DurationVar(&n.writeStall, "write-stall", netguard.DefaultWriteStall, "the longest a client may leave an answer untaken")
	for _, f := range []string{"header-timeout", "body-timeout", "body-stall", "write-stall"} {
		cmd.Flags().MarkHidden(f)
	}
}

// envelopeBytes is the room an MCP request needs around a write's
// arguments: the JSON-RPC envelope, the tool's name and _meta.
const envelopeBytes = 64 << 10

// requestCap is the largest body of one POST /mcp: --max-request-size, or
// by default a write at --max-write-size in its envelope, so that a write's
// own size limit answers first (with invalid_arguments and the limit)
// rather than a bare 413.
func (n *netFlags) requestCap(l limitFlags) (int64, error) {
	if n.maxRequest == "" {
		w, err := humanize.ParseBytes(l.maxWrite)
		if err != nil {
			return 0, fmt.Errorf("--max-write-size: %w", err)
		}
		return int64(w) + envelopeBytes, nil
	}
	v, err := humanize.ParseBytes(n.maxRequest)
	if err != nil || v < 64<<10 || v > 1<<30 {
		return 0, fmt.Errorf("--max-request-size must be a size between 64KiB and 1GiB, like 4MiB, got %q", n.maxRequest)
	}
	return int64(v), nil
}

// descriptorReserve is what a server keeps free of file descriptors beyond
// its client connections: the ledger, the workspace's files, connections
// to SiYuan and to the authority.
const descriptorReserve = 256

// config is the guard configuration of a listener named name taking at
// most conns connections.
func (n *netFlags) config(name string, conns int, log *slog.Logger) netguard.Config {
	return netguard.Config{MaxConns: conns, HeaderTimeout: n.headerTimeout, BodyTimeout: n.bodyTimeout,
		BodyStall: n.bodyStall, BodyGrace: n.bodyStall, WriteStall: n.writeStall, Name: name, Logger: log}
}

// conns checks the flags and returns how many connections the main
// listener takes, when others are what the process's other listeners may
// hold. When the process cannot open that many files, an explicit
// --max-connections is an error and the default is lowered, with a
// warning.
func (n *netFlags) conns(cmd *cobra.Command, log *slog.Logger, others int) (int, error) {
	if n.maxConns < 16 {
		return 0, fmt.Errorf("--max-connections must be at least 16, got %d", n.maxConns)
	}
	if n.headerTimeout <= 0 || n.bodyTimeout <= 0 || n.bodyStall <= 0 || n.writeStall <= 0 {
		return 0, fmt.Errorf("--header-timeout, --body-timeout, --body-stall and --write-stall must be positive")
	}
	need := n.maxConns + others + descriptorReserve
	limit := netguard.DescriptorLimit()
	if limit == 0 || uint64(need) <= limit {
		return n.maxConns, nil
	}
	if cmd.Flags().Changed("max-connections") || os.Getenv("SISYPHUS_MAX_CONNECTIONS") != "" {
		return 0, fmt.Errorf("--max-connections %d needs %d file descriptors, but this process may open %d (ulimit -n): lower --max-connections or raise the limit",
			n.maxConns, need, limit)
	}
	lowered := max(16, int(limit)-others-descriptorReserve)
	log.Warn("the process may open few files: it takes fewer client connections", "maxConnections", lowered, "descriptorLimit", limit)
	return lowered, nil
}

// kernelConns caps the connections of the embedded kernel's private port
// (in serve, stdio and call): only fronts on the same state dir use it.
const kernelConns = 256

// serveGuarded serves h on ln under g and returns the server (for Shutdown)
// and the channel its Serve result arrives on.
func serveGuarded(g *netguard.Guard, ln net.Listener, h http.Handler) (*http.Server, chan error) {
	hs := g.Server(h)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(g.Listener(ln)) }()
	return hs, errc
}
