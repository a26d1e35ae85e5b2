package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/sisyphus-go/sisyphus/internal/authority"
	"github.com/sisyphus-go/sisyphus/internal/netguard"
	"github.com/sisyphus-go/sisyphus/internal/transfer"
)

type serveFlags struct {
	kf                      kernelFlags
	limits                  limitFlags
	kopts                   kernelOptionFlags
	local                   localFlags
	net                     netFlags
	listen, token, stateDir string
	strictOff               bool
	authority, authToken    string
	drainTimeout            time.Duration
	noUIRefresh             bool
	stagingTTL              time.Duration
}

func newServeCmd(g *globalFlags) *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the write authority (or, with --authority, a front) and serve MCP over HTTP",
		Long: `Serve the Sisyphus tools over MCP Streamable HTTP at /mcp, for clients speaking 2026-07-28 or
the legacy revisions through 2025-11-25, plus POST /tasks (task control), GET /health,
/transfer/upload and /transfer/lookup; the same routes are served under
/plugin/private/siyuan-plugins-mcp-sisyphus/.

Two credentials, never interchangeable:
  - the bearer token (--token, else generated once into the state dir's token file) is the agents':
    /mcp, /tasks, /health and /transfer/* need Authorization: Bearer <token>; serve prints it in the
    client configurations;
  - the admin token (the state dir's admin-token file, created on first start; sisyphus admin-token
    prints it) is the person's: GET and POST /config (sisyphus config) and the settings page at
    /settings take it and nothing else. It is never printed by serve, never given by flag or
    environment, and never belongs in an agent's configuration.
Each refuses the other's routes (HTTP 403).

By default serve is the write authority of its state dir: it takes the state dir's exclusive lock
(a second serve on the same dir exits at once), owns the write ledger, the lease pool and the write
lane, and writes a discovery record (authority.json) that stdio, sisyphus call and fronts use to
find it. On SIGTERM or Ctrl-C it stops admitting calls, lets committing writes finish (at most
--drain-timeout), then exits.

With --authority URL it is a front instead: it serves /mcp itself, runs reads on its own kernel
client and delegates every other call to that authority; it never writes on its own. A front
holds only a bearer token: it serves no /config and no settings page (404); sisyphus config talks
to the authority. Its agents read and save files of this machine only inside the folders of
--allow-dir (none by default). The authority itself opens no path a call names: an upload reaches
it staged (POST /transfer/upload).

Use --embedded DIR to serve the embedded SiYuan-compatible kernel on a workspace directory
(created with a demo notebook when new) instead of a running SiYuan.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.authority != "" {
				return serveFront(cmd, g, &f)
			}
			return serveAuthority(cmd, g, &f)
		},
	}
	f.kf.register(cmd)
	f.limits.register(cmd)
	f.kopts.register(cmd, true)
	f.local.register(cmd, false)
	f.net.register(cmd, true)
	cmd.Flags().StringVar(&f.listen, "listen", envOr("SISYPHUS_LISTEN", "127.0.0.1:36806"), "address to listen on")
	cmd.Flags().StringVar(&f.token, "token", envOr("SISYPHUS_TOKEN", ""), "bearer token agents must send (default: generated once and kept in the state dir); never the admin token")
	cmd.Flags().StringVar(&f.stateDir, "state-dir", defaultStateDir(), "directory for the bearer and admin tokens, the write ledger and the discovery record")
	cmd.Flags().BoolVar(&f.strictOff, "strict-off", os.Getenv("SISYPHUS_STRICT") == "off", "turn Strict Safe Writes off: plain schemas and direct writes, still attempted once, answered with writeSafetyGuaranteed:false")
	cmd.Flags().StringVar(&f.authority, "authority", envOr("SISYPHUS_AUTHORITY", ""), "run as a front of the write authority at this URL")
	cmd.Flags().StringVar(&f.authToken, "authority-token", envOr("SISYPHUS_AUTHORITY_TOKEN", ""), "with --authority: the authority's bearer token (default: this server's token)")
	cmd.Flags().BoolVar(&f.noUIRefresh, "no-ui-refresh", os.Getenv("SISYPHUS_UI_REFRESH") == "off", "do not ask SiYuan to reload open editors and the document tree after a committed write")
	cmd.Flags().DurationVar(&f.drainTimeout, "drain-timeout", 30*time.Second, "on shutdown, how long committing writes may take to finish")
	// Staged uploads are kept 10 minutes; a shorter time frees memory
	// sooner (and lets the tests see expiry).
	cmd.Flags().DurationVar(&f.stagingTTL, "staging-ttl", transfer.DefaultTTL, "how long a staged upload is kept (1s to 10m)")
	cmd.Flags().MarkHidden("staging-ttl")
	return cmd
}

// serveAuthority runs the write authority of the state dir.
func serveAuthority(cmd *cobra.Command, g *globalFlags, f *serveFlags) error {
	if cmd.Flags().Changed("allow-dir") {
		return fmt.Errorf("--allow-dir is a front's (stdio, call, serve --authority): the authority opens no path a call names")
	}
	log := g.logger()
	ctx := cmd.Context()
	release, err := authority.LockStateDir(f.stateDir)
	if err != nil {
		return err
	}
	defer release()
	tok, tokFile, err := bearerToken(f.stateDir, f.token)
	if err != nil {
		return err
	}
	admin, err := adminToken(log, f.stateDir, tok)
	if err != nil {
		return err
	}
	conns, reqCap, err := f.netLimits(cmd, log)
	if err != nil {
		return err
	}
	starting(cmd, f.kf)
	c, desc, closeKernel, err := f.kf.open(ctx, log)
	if err != nil {
		return err
	}
	defer closeKernel()
	fmt.Fprintf(cmd.ErrOrStderr(), "sisyphus: starting: opening the write ledger in %s …\n", f.stateDir)
	coord, closeLedger, err := openCoordinator(f.stateDir, f.strictOff, log, 200*time.Millisecond)
	if err != nil {
		return fmt.Errorf("open the write ledger in %s: %w", f.stateDir, err)
	}
	defer closeLedger()
	cfg := authority.ServiceConfig{Kernel: c, Coordinator: coord, Version: buildVersion(), Logger: log, UIRefresh: !f.noUIRefresh}
	if err := f.limits.apply(&cfg); err != nil {
		return err
	}
	_, origins, err := applyKernelOptions(cmd, c, log, &f.kopts, &f.limits, &cfg)
	if err != nil {
		return err
	}
	if f.stagingTTL < time.Second || f.stagingTTL > transfer.DefaultTTL {
		return fmt.Errorf("--staging-ttl must be between 1s and 10m, got %s", f.stagingTTL)
	}
	cfg.Staging.TTL = f.stagingTTL
	svc, err := authority.NewService(cfg)
	if err != nil {
		return err
	}
	defer svc.Close()
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", f.listen, err)
	}
	instance := authority.NewInstanceID()
	kernel := f.kf.identity()
	posts := &postTracker{}
	guard := netguard.New(f.net.config("authority", conns, log))
	hs, errc := serveGuarded(guard, ln, posts.wrap(authority.Routes(svc.MCP, authority.RoutesConfig{Token: tok, AdminToken: admin, Admission: svc.Admission,
		MaxBodyBytes: reqCap, Instance: instance, Kernel: kernel, Role: "authority", AllowedOrigins: origins, Version: buildVersion(), Strict: !f.strictOff,
		Logger: log, Config: svc.Configurator(), Settings: svc.SettingsPage(), Staging: svc.Staging,
		Connections: guard.Stats, UploadBodyTimeout: 4 * f.net.bodyTimeout})))
	go svc.WatchConfig(ctx, configPoll)
	base := "http://" + dialAddr(ln.Addr())
	rec := authority.Record{URL: base, InstanceID: instance, PID: os.Getpid(), StartedAt: time.Now().UTC().Truncate(time.Second),
		Version: buildVersion(), Kernel: kernel, Strict: !f.strictOff, MaxRequestBytes: reqCap}
	if err := authority.WriteRecord(f.stateDir, rec); err != nil {
		hs.Close()
		return err
	}
	defer authority.RemoveRecord(f.stateDir, instance)
	// Fronts on this state dir find the token this authority uses, however
	// it was given.
	if err := authority.WriteAuthorityToken(f.stateDir, authority.AuthorityToken{InstanceID: instance, Token: tok, PID: os.Getpid()}); err != nil {
		hs.Close()
		return err
	}
	defer authority.RemoveAuthorityToken(f.stateDir, instance)
	// Fronts on this state dir given no kernel (or the same --embedded
	// workspace, whose lock is ours) read through the kernel this authority
	// serves: the file says where it is and holds its token (0600).
	acc := authority.KernelAccess{Identity: kernel, URL: f.kf.url, Token: f.kf.token, InstanceID: instance, PID: os.Getpid()}
	if f.kf.embedded != "" {
		acc.URL, acc.Token = f.kf.embeddedURL, f.kf.embeddedToken
	}
	if err := authority.WriteKernelAccess(f.stateDir, acc); err != nil {
		hs.Close()
		return err
	}
	defer authority.RemoveKernelAccess(f.stateDir, instance)
	url := base + "/mcp"
	printClientConfig(cmd.OutOrStdout(), url, tok, tokFile, f.stateDir, f.kf)
	show := adminTokenCommand(f.stateDir)
	fmt.Fprintf(cmd.OutOrStdout(), "Admin token: kept in %s, the person's, never an agent's (%s prints it)\n", authority.AdminTokenPath(f.stateDir), show)
	fmt.Fprintf(cmd.OutOrStdout(), "Settings page: %s/settings (sign in with the admin token: %s)\n", base, show)
	fmt.Fprintf(cmd.OutOrStdout(), "sisyphus ready: MCP at %s serving %s\n", url, desc)
	return waitAndDrain(ctx, log, errc, hs, svc, posts, f.drainTimeout, func() { authority.RemoveRecord(f.stateDir, instance) })
}

// starting says on stderr what serve is about to do before its slow steps
// (opening a large embedded workspace indexes it), so a person never
// watches a silent terminal.
func starting(cmd *cobra.Command, kf kernelFlags) {
	if kf.embedded != "" {
		fmt.Fprintf(cmd.ErrOrStderr(), "sisyphus: starting the embedded kernel on %s (a new directory gets a demo notebook; a large one takes a while to index) …\n", kf.embedded)
		return
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "sisyphus: starting: connecting to SiYuan at %s …\n", kf.url)
}

// serveFront runs an HTTP front of the authority at f.authority.
func serveFront(cmd *cobra.Command, g *globalFlags, f *serveFlags) error {
	log := g.logger()
	ctx := cmd.Context()
	tok, tokFile, err := bearerToken(f.stateDir, f.token)
	if err != nil {
		return err
	}
	authTok := f.authToken
	if authTok == "" {
		authTok = tok
	}
	conns, reqCap, err := f.netLimits(cmd, log)
	if err != nil {
		return err
	}
	c, desc, closeKernel, err := f.kf.openFront(ctx, log, f.stateDir)
	if err != nil {
		return err
	}
	defer closeKernel()
	ff := frontFlags{stateDir: f.stateDir, authority: f.authority, token: authTok, limits: f.limits, kopts: f.kopts, cmd: cmd}
	local, err := f.local.guard(cmd, c, f.stateDir, f.kf.workspaceDir())
	if err != nil {
		return err
	}
	svc, err := ff.service(c, f.kf.identity(), local, log)
	if err != nil {
		return err
	}
	defer svc.Close()
	d := svc.Delegator
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", f.listen, err)
	}
	posts := &postTracker{}
	go svc.WatchConfig(ctx, configPoll)
	guard := netguard.New(f.net.config("front", conns, log))
	hs, errc := serveGuarded(guard, ln, posts.wrap(authority.Routes(svc.MCP, authority.RoutesConfig{Token: tok, Admission: svc.Admission, MaxBodyBytes: reqCap, Role: "front", Config: svc.Configurator(),
		AllowedOrigins: ff.origins,
		Version:        buildVersion(), Strict: d.Strict(), Logger: log, Connections: guard.Stats,
		Extra: func() map[string]any { return map[string]any{"delegation": d.Stats()} }})))
	url := "http://" + dialAddr(ln.Addr()) + "/mcp"
	printClientConfig(cmd.OutOrStdout(), url, tok, tokFile, f.stateDir, f.kf)
	fmt.Fprintf(cmd.OutOrStdout(), "sisyphus ready: MCP at %s serving %s; writes go to the authority at %s\n", url, desc, f.authority)
	return waitAndDrain(ctx, log, errc, hs, svc, posts, f.drainTimeout, nil)
}

// configPoll is how often a server re-reads the configuration for its tool
// list (a change through this authority applies at once; one made
// elsewhere within this).
const configPoll = 2 * time.Second

// waitAndDrain serves until ctx ends, then stops admitting, lets calls in
// flight settle (committing writes finish; others stop at their
// checkpoints or commit barrier) for at most timeout, and shuts down.
func waitAndDrain(ctx context.Context, log *slog.Logger, errc chan error, hs *http.Server, svc *authority.Service, posts *postTracker, timeout time.Duration, unpublish func()) error {
	select {
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("serve: %w", err)
		}
		return nil
	case <-ctx.Done():
	}
	// A second signal stops waiting for the drain.
	again := make(chan os.Signal, 1)
	signal.Notify(again, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(again)
	go func() {
		if _, ok := <-again; ok {
			log.Warn("second signal: exiting without waiting for the drain")
			os.Exit(1)
		}
	}()
	if unpublish != nil {
		unpublish() // new fronts no longer find this authority
	}
	log.Info("draining: no new calls are admitted; committing writes finish", "timeout", timeout)
	dctx, cancel := context.WithTimeout(context.Background(), timeout)
	derr := svc.Admission.Drain(dctx)
	if derr == nil {
		// A settled call still has to write its answer: closing the MCP
		// server first would cancel it unanswered.
		derr = posts.wait(dctx)
	}
	cancel()
	if derr != nil {
		log.Warn("drain timed out; exiting with calls in flight", "err", derr)
	} else {
		log.Info("drained")
	}
	svc.Close()
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdown); err != nil {
		hs.Close()
	}
	return nil
}

// dialAddr is addr as a client dials it: an unspecified listen address is
// reached on loopback.
func dialAddr(addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return addr.String()
	}
	if tcp.IP.To4() == nil {
		return net.JoinHostPort("::1", fmt.Sprint(tcp.Port))
	}
	return net.JoinHostPort("127.0.0.1", fmt.Sprint(tcp.Port))
}

// printClientConfig shows ready-made MCP client configurations.
func printClientConfig(w io.Writer, url, tok, tokFile, stateDir string, kf kernelFlags) {
	exe, found := stdioBinary()
	stdioArgs := []string{"stdio"}
	if kf.embedded != "" {
		dir, err := filepath.Abs(kf.embedded)
		if err != nil {
			dir = kf.embedded
		}
		stdioArgs = append(stdioArgs, "--embedded", dir)
	} else {
		stdioArgs = append(stdioArgs, "--siyuan-url", kf.url)
	}
	if stateDir != defaultStateDir() {
		if abs, err := filepath.Abs(stateDir); err == nil {
			stateDir = abs
		}
		stdioArgs = append(stdioArgs, "--state-dir", stateDir)
	}
	httpCfg := map[string]any{"mcpServers": map[string]any{"sisyphus": map[string]any{
		"type": "http", "url": url, "headers": map[string]string{"Authorization": "Bearer " + tok}}}}
	command, cmdArgs := exe, stdioArgs
	if !found {
		// A `go run` build vanishes on exit: have the client run the
		// source itself (absolute paths: clients spawn from anywhere).
		if gorun, args, ok := goRunForm(stdioArgs); ok {
			command, cmdArgs, found = gorun, args, true
		}
	}
	stdioCfg := map[string]any{"mcpServers": map[string]any{"sisyphus": map[string]any{
		"command": command, "args": cmdArgs}}}
	h, _ := json.MarshalIndent(httpCfg, "", "  ")
	st, _ := json.MarshalIndent(stdioCfg, "", "  ")
	fmt.Fprintf(w, "MCP URL:   %s\n", url)
	if tokFile != "" {
		fmt.Fprintf(w, "Token:     %s (the agents' bearer token, kept in %s)\n", tok, tokFile)
	} else {
		fmt.Fprintf(w, "Token:     %s (the agents' bearer token)\n", tok)
	}
	fmt.Fprintf(w, "\nHTTP client configuration:\n%s\n\nstdio client configuration (stdio reads itself and sends writes to this server):\n%s\n", h, st)
	fmt.Fprintln(w, "(stdio reads and saves no file of yours for an agent: add \"--allow-dir\", \"/abs/path/to/folder\" to args to let it upload from that folder and save exports there)")
	if !found {
		fmt.Fprintln(w, "(this is a temporary `go run` build: build the binary for stdio clients with go build -o sisyphus ./cmd/sisyphus in the source folder, then put its absolute path in \"command\")")
	} else if command != exe {
		fmt.Fprintln(w, "(this stdio configuration compiles Sisyphus from its source folder at each start; build it once with go build -o sisyphus ./cmd/sisyphus for a faster start, then serve prints that binary's path)")
	}
	fmt.Fprintln(w)
}

// stdioBinary names the binary a stdio client should spawn: this one,
// unless it is a temporary `go run` build that vanishes on exit; then a
// built sisyphus in the working directory, on PATH or in the Go bin
// directory. found is false when none exists.
func stdioBinary() (path string, found bool) {
	exe, err := os.Executable()
	if err == nil && !strings.Contains(exe, string(filepath.Separator)+"go-build") {
		return exe, true
	}
	var candidates []string
	if abs, err := filepath.Abs("sisyphus"); err == nil {
		candidates = append(candidates, abs)
	}
	if p, err := exec.LookPath("sisyphus"); err == nil {
		candidates = append(candidates, p)
	}
	if gobin := os.Getenv("GOBIN"); gobin != "" {
		candidates = append(candidates, filepath.Join(gobin, "sisyphus"))
	}
	if gopath := os.Getenv("GOPATH"); gopath != "" {
		candidates = append(candidates, filepath.Join(filepath.SplitList(gopath)[0], "bin", "sisyphus"))
	} else if home, err := os.UserHomeDir(); err == nil {
		candidates = append(candidates, filepath.Join(home, "go", "bin", "sisyphus"))
	}
	for _, c := range candidates {
		if st, err := os.Stat(c); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			if abs, err := filepath.Abs(c); err == nil {
				return abs, true
			}
		}
	}
	return "/path/to/sisyphus", false
}

// goRunForm is the stdio command run from source: go -C MODULE run
// ./cmd/sisyphus ARGS, with the go tool's and the module's absolute paths,
// when the working directory is inside this module's source.
func goRunForm(args []string) (command string, full []string, ok bool) {
	gotool, err := exec.LookPath("go")
	if err != nil {
		return "", nil, false
	}
	if gotool, err = filepath.Abs(gotool); err != nil {
		return "", nil, false
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", nil, false
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil {
			if !strings.Contains(string(data), "module github.com/sisyphus-go/sisyphus\n") {
				return "", nil, false
			}
			if _, err := os.Stat(filepath.Join(dir, "cmd", "sisyphus")); err != nil {
				return "", nil, false
			}
			return gotool, append([]string{"-C", dir, "run", "./cmd/sisyphus"}, args...), true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", nil, false
		}
		dir = parent
	}
}

// postTracker counts requests other than GET (the long-lived notification
// streams) so a drain can wait until every answer is written.
type postTracker struct {
	mu     sync.Mutex
	active int
	idle   chan struct{}
}

func (p *postTracker) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			h.ServeHTTP(w, r)
			return
		}
		p.mu.Lock()
		p.active++
		p.mu.Unlock()
		defer func() {
			p.mu.Lock()
			p.active--
			if p.active == 0 && p.idle != nil {
				close(p.idle)
				p.idle = nil
			}
			p.mu.Unlock()
		}()
		h.ServeHTTP(w, r)
	})
}

// wait returns when no counted request is active, or when ctx ends.
func (p *postTracker) wait(ctx context.Context) error {
	for {
		p.mu.Lock()
		if p.active == 0 {
			p.mu.Unlock()
			return nil
		}
		if p.idle == nil {
			p.idle = make(chan struct{})
		}
		idle := p.idle
		p.mu.Unlock()
		select {
		case <-idle:
		case <-ctx.Done():
			return fmt.Errorf("requests still being answered: %w", ctx.Err())
		}
	}
}

// netLimits decides the connection cap of serve's listener (leaving room
// for the embedded kernel's own, whose guard it sets) and the request cap
// of /mcp.
func (f *serveFlags) netLimits(cmd *cobra.Command, log *slog.Logger) (conns int, reqCap int64, err error) {
	others := 0
	if f.kf.embedded != "" {
		others = kernelConns
		f.kf.guard = f.net.config("kernel", kernelConns, log)
	}
	if conns, err = f.net.conns(cmd, log, others); err != nil {
		return 0, 0, err
	}
	reqCap, err = f.net.requestCap(f.limits)
	return conns, reqCap, err
}
