package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/sisyphus-go/sisyphus/internal/authority"
	"github.com/sisyphus-go/sisyphus/internal/embedded"
	"github.com/sisyphus-go/sisyphus/internal/localfs"
	"github.com/sisyphus-go/sisyphus/internal/netguard"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// kernelFlags select the SiYuan kernel a command serves: a SiYuan URL, or the
// embedded kernel on a workspace directory.
type kernelFlags struct {
	url, token, embedded string
	// embeddedURL and embeddedToken reach the embedded kernel this process
	// started (set by open).
	embeddedURL, embeddedToken string
	// guard bounds the connections of the embedded kernel's port (zero:
	// kernelConns and the default timeouts).
	guard netguard.Config
	// flags is the command's flag set, where the resolver noted whether
	// the kernel was named at all (resolve.go).
	flags *pflag.FlagSet
	// followed is the kernel of the state dir's authority, which a front
	// given no kernel reads through (follow).
	followed *authority.KernelAccess
}

func (f *kernelFlags) register(cmd *cobra.Command) {
	f.flags = cmd.Flags()
	cmd.Flags().StringVar(&f.url, "siyuan-url", envOr("SIYUAN_URL", "http://127.0.0.1:6806"), "the SiYuan kernel")
	cmd.Flags().StringVar(&f.token, "siyuan-token", envOr("SIYUAN_TOKEN", ""), "SiYuan API token (Settings → About)")
	cmd.Flags().StringVar(&f.embedded, "embedded", envOr("SISYPHUS_EMBEDDED", ""), "use the embedded kernel on this workspace directory instead of a SiYuan URL")
}

// open returns a client for the selected kernel; with --embedded it starts
// the embedded kernel, served in process to this client and on a private
// loopback port to others. close releases it.
func (f *kernelFlags) open(ctx context.Context, log *slog.Logger) (c *siyuan.Client, desc string, close func(), err error) {
	if f.embedded == "" {
		c, err = siyuan.New(siyuan.Config{BaseURL: f.url, Token: f.token, Logger: log})
		return c, "SiYuan at " + f.url, func() {}, err
	}
	k, err := embedded.Open(ctx, embedded.Options{Dir: f.embedded, Logger: log})
	if err != nil {
		return nil, "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		k.Close()
		return nil, "", nil, fmt.Errorf("listen for the embedded kernel: %w", err)
	}
	gcfg := f.guard
	if gcfg.MaxConns == 0 {
		gcfg.MaxConns, gcfg.Name, gcfg.Logger = kernelConns, "kernel", log
	}
	srv, _ := serveGuarded(netguard.New(gcfg), ln, k.Handler())
	close = func() {
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
		k.Close()
	}
	f.embeddedURL, f.embeddedToken = "http://"+ln.Addr().String(), k.Token()
	// This process reaches its kernel in process; the port is for fronts
	// on the same state dir (and anyone given the kernel access file).
	c, err = siyuan.New(siyuan.Config{BaseURL: f.embeddedURL, Token: k.Token(), Logger: log, HTTPClient: &http.Client{Transport: k.Transport()}})
	if err != nil {
		close()
		return nil, "", nil, err
	}
	return c, "embedded kernel on " + k.Dir(), close, nil
}

// openFront is open for a front (stdio, call, serve --authority): with
// --embedded DIR while the authority of stateDir runs the embedded kernel
// on DIR (and so holds its lock), reads go through that kernel.
func (f *kernelFlags) openFront(ctx context.Context, log *slog.Logger, stateDir string) (*siyuan.Client, string, func(), error) {
	if acc := f.follow(stateDir); acc != nil {
		c, err := siyuan.New(siyuan.Config{BaseURL: acc.URL, Token: acc.Token, Logger: log})
		if err != nil {
			return nil, "", nil, err
		}
		return c, fmt.Sprintf("%s, the kernel of the authority (pid %d)", describeIdentity(acc.Identity), acc.PID), func() {}, nil
	}
	if f.embedded != "" {
		if acc, err := authority.ReadKernelAccess(stateDir); err == nil && acc.Identity == f.identity() {
			c, err := siyuan.New(siyuan.Config{BaseURL: acc.URL, Token: acc.Token, Logger: log})
			if err != nil {
				return nil, "", nil, err
			}
			return c, fmt.Sprintf("embedded kernel on %s, run by the authority (pid %d)", f.embedded, acc.PID), func() {}, nil
		}
	}
	return f.open(ctx, log)
}

// openCoordinator opens the ledger in the state dir and returns the write
// coordinator over it. Only one process can hold the ledger: that process
// is the write authority for the state dir.
func openCoordinator(stateDir string, strictOff bool, log *slog.Logger, timeout time.Duration) (*strict.Coordinator, func(), error) {
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("create state dir: %w", err)
	}
	l, err := strict.OpenLedger(filepath.Join(stateDir, "ledger.db"), strict.WithLedgerLogger(log), strict.WithOpenTimeout(timeout))
	if err != nil {
		return nil, nil, err
	}
	c := strict.NewCoordinator(strict.CoordinatorConfig{Ledger: l, StrictOff: strictOff, Logger: log})
	// Executed records leave after seven days, unexecuted ones after ten minutes.
	ctx, stop := context.WithCancel(context.Background())
	pruned := make(chan struct{})
	go func() { defer close(pruned); l.PruneEvery(ctx, time.Hour) }()
	return c, func() { stop(); <-pruned; l.Close() }, nil
}

// defaultStateDir is $XDG_STATE_HOME/sisyphus, or ~/.local/state/sisyphus.
func defaultStateDir() string {
	if d := os.Getenv("SISYPHUS_STATE_DIR"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "sisyphus")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "state", "sisyphus")
	}
	return filepath.Join(os.TempDir(), "sisyphus-state")
}

// bearerToken returns the given token, else the one kept in the state dir,
// else a new one written there with mode 0600.
func bearerToken(stateDir, given string) (tok, file string, err error) {
	file = filepath.Join(stateDir, "token")
	if given != "" {
		return given, "", nil
	}
	if data, err := os.ReadFile(file); err == nil {
		if t := strings.TrimSpace(string(data)); t != "" {
			return t, file, nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", "", fmt.Errorf("read token: %w", err)
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return "", "", fmt.Errorf("create state dir: %w", err)
	}
	b := make([]byte, 24)
	rand.Read(b)
	tok = hex.EncodeToString(b)
	if err := os.WriteFile(file, []byte(tok+"\n"), 0o600); err != nil {
		return "", "", fmt.Errorf("write token: %w", err)
	}
	return tok, file, nil
}

// given reports whether the person named a kernel (flag, profile or
// environment): a front given none follows its authority.
func (f *kernelFlags) given() bool {
	if f.flags == nil {
		return true
	}
	for _, name := range []string{"siyuan-url", "embedded"} {
		if src := flagSource(f.flags, name); src != "default" {
			return true
		}
	}
	return false
}

// follow returns the kernel the authority of stateDir serves when the
// person named none, or named the embedded workspace that authority runs
// (its lock is the authority's): the front then reads the same workspace
// the authority writes. nil: open the named (or default) kernel.
func (f *kernelFlags) follow(stateDir string) *authority.KernelAccess {
	if f.followed != nil {
		return f.followed
	}
	acc, err := authority.ReadKernelAccess(stateDir)
	if err != nil {
		return nil
	}
	if (f.embedded != "" && acc.Identity == f.identity()) || (!f.given() && acc.Identity != "") {
		f.followed = &acc
		return f.followed
	}
	return nil
}

// workspaceDir is the embedded workspace directory the front serves ("" for
// a SiYuan URL).
func (f *kernelFlags) workspaceDir() string {
	if f.embedded != "" {
		return f.embedded
	}
	if f.followed != nil {
		if dir, ok := strings.CutPrefix(f.followed.Identity, "embedded:"); ok {
			return dir
		}
	}
	return ""
}

// describeIdentity says in words which kernel a workspace identity names.
func describeIdentity(id string) string {
	if dir, ok := strings.CutPrefix(id, "embedded:"); ok {
		return "embedded kernel on " + dir
	}
	return "SiYuan at " + strings.TrimPrefix(id, "url:")
}

// identity is the workspace identity of the selected kernel: fronts
// delegate writes only to an authority coordinating the same one.
func (f *kernelFlags) identity() string {
	if f.followed != nil {
		return f.followed.Identity
	}
	if f.embedded != "" {
		return authority.EmbeddedIdentity(f.embedded)
	}
	return authority.KernelIdentity(f.url)
}

// limitFlags bound what one call may take: a read's deadline, one write's
// size.
type limitFlags struct {
	readTimeout time.Duration
	maxWrite    string
	maxTemplate string
}

func (l *limitFlags) register(cmd *cobra.Command) {
	readTimeout := 30 * time.Second
	if v := os.Getenv("SISYPHUS_READ_TIMEOUT"); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			readTimeout = d
		}
	}
	cmd.Flags().DurationVar(&l.readTimeout, "read-timeout", readTimeout, "deadline of one read; past it the read is stopped and its slot given back (env SISYPHUS_READ_TIMEOUT)")
	cmd.Flags().StringVar(&l.maxWrite, "max-write-size", envOr("SISYPHUS_MAX_WRITE_SIZE", "4MiB"), "largest arguments of one write (e.g. 4MiB, 16MiB); larger writes are refused at preflight")
	cmd.Flags().StringVar(&l.maxTemplate, "max-template-size", envOr("SISYPHUS_MAX_TEMPLATE_SIZE", "16MiB"), "largest template body (at most 32MiB); larger ones are refused at preflight")
}

// apply sets the limits on a service's configuration.
func (l *limitFlags) apply(cfg *authority.ServiceConfig) error {
	if l.readTimeout <= 0 {
		return fmt.Errorf("--read-timeout must be positive, got %s", l.readTimeout)
	}
	n, err := humanize.ParseBytes(l.maxWrite)
	if err != nil || n < 1<<10 || n > 1<<30 {
		return fmt.Errorf("--max-write-size must be a size between 1KiB and 1GiB, like 4MiB, got %q", l.maxWrite)
	}
	t, err := humanize.ParseBytes(l.maxTemplate)
	if err != nil || t < 1<<10 || t > tools.MaxTemplateBytes {
		return fmt.Errorf("--max-template-size must be a size between 1KiB and 32MiB, like 16MiB, got %q", l.maxTemplate)
	}
	cfg.Limits.ReadTimeout = l.readTimeout
	cfg.MaxWriteBytes, cfg.MaxTemplateBytes = int(n), int(t)
	return nil
}

// frontFlags select the authority a front, stdio or call delegates to.
type frontFlags struct {
	stateDir, authority, token string
	limits                     limitFlags
	kopts                      kernelOptionFlags
	// cmd is the command whose flags say which limits were given; origins
	// the allowed browser origins service found (serve --authority).
	cmd     *cobra.Command
	origins []string
}

func (f *frontFlags) register(cmd *cobra.Command, tokenFlag string) {
	cmd.Flags().StringVar(&f.stateDir, "state-dir", defaultStateDir(), "state dir of the authority (its discovery record and token)")
	cmd.Flags().StringVar(&f.authority, "authority", envOr("SISYPHUS_AUTHORITY", ""), "URL of the write authority (default: discovered from the state dir)")
	if tokenFlag == "token" {
		cmd.Flags().StringVar(&f.token, "token", envOr("SISYPHUS_TOKEN", ""), "bearer token of the authority (default: the state dir's token file)")
	} else {
		cmd.Flags().StringVar(&f.token, tokenFlag, envOr("SISYPHUS_AUTHORITY_TOKEN", ""), "bearer token of the authority (default: this server's token)")
		return // serve registers its limits itself
	}
	f.limits.register(cmd)
	f.kopts.register(cmd, false)
	f.cmd = cmd
}

// delegator returns the client that reaches the authority.
func (f *frontFlags) delegator(kernel string, log *slog.Logger) *authority.Delegator {
	return authority.NewDelegator(authority.DelegatorConfig{URL: f.authority, StateDir: f.stateDir, Token: f.token,
		Kernel: kernel, Logger: log, Version: buildVersion()})
}

// service builds a front's service over kernel client c: reads here, every
// other call delegated to the authority; local files only as local allows.
func (f *frontFlags) service(c *siyuan.Client, kernel string, local *localfs.Guard, log *slog.Logger) (*authority.Service, error) {
	cfg := authority.ServiceConfig{Kernel: c, Delegator: f.delegator(kernel, log), Version: buildVersion(), Logger: log, Local: local, Transport: "http"}
	if f.cmd != nil {
		// serve's front registers no command here; stdio's and the
		// command line's do.
		cfg.Transport = "cli"
		if f.cmd.Name() == "stdio" {
			cfg.Transport = "stdio"
		}
	}
	if err := f.limits.apply(&cfg); err != nil {
		return nil, err
	}
	if f.cmd != nil {
		// A front's reads keep the same budgets, deadline and retries as
		// the authority's: the workspace's kernel options, or the flags.
		_, origins, err := applyKernelOptions(f.cmd, c, log, &f.kopts, &f.limits, &cfg)
		if err != nil {
			return nil, err
		}
		f.origins = origins
	}
	if isTerminal(os.Stderr) {
		cfg.Progress = os.Stderr // long downloads show their progress there
	}
	return authority.NewService(cfg)
}

// openFront opens what a front runs on: its kernel client and, over it,
// the front's service with the local-file rule. done closes both; desc
// describes the kernel.
func openFront(cmd *cobra.Command, log *slog.Logger, kf *kernelFlags, ff *frontFlags, lf *localFlags) (svc *authority.Service, local *localfs.Guard, desc string, done func(), err error) {
	c, desc, closeKernel, err := kf.openFront(cmd.Context(), log, ff.stateDir)
	if err != nil {
		return nil, nil, "", nil, err
	}
	if local, err = lf.guard(cmd, c, ff.stateDir, kf.workspaceDir()); err == nil {
		svc, err = ff.service(c, kf.identity(), local, log)
	}
	if err != nil {
		closeKernel()
		return nil, nil, "", nil, err
	}
	return svc, local, desc, func() { svc.Close(); closeKernel() }, nil
}

// localFlags are the folders a front's person allows agents: files an
// upload may read, places an export may be saved.
type localFlags struct {
	dirs []string
	// cwd: with neither the flag nor the environment variable, the working
	// directory is allowed (sisyphus call, typed by the person in the
	// folder they work in).
	cwd bool
}

const allowDirsEnv = "SISYPHUS_ALLOW_DIRS"

func (l *localFlags) register(cmd *cobra.Command, cwd bool) {
	var def []string
	if v := os.Getenv(allowDirsEnv); v != "" {
		def = filepath.SplitList(v)
	}
	dflt := "none"
	if cwd {
		dflt = "the working directory, unless it is the root or a place no agent may reach"
	}
	l.cwd = cwd
	cmd.Flags().StringArrayVar(&l.dirs, "allow-dir", def, fmt.Sprintf(
		"a folder whose files agents may upload and where their exports may be saved, never in the workspace, the state dir or a hidden folder "+
			"(repeatable; env %s, separated by %q; default: %s)", allowDirsEnv, string(os.PathListSeparator), dflt))
}

// given reports whether the person named the folders (flag or env).
func (l *localFlags) given(cmd *cobra.Command) bool {
	return cmd.Flags().Changed("allow-dir") || os.Getenv(allowDirsEnv) != ""
}

// guard is the front's folder rule: the allowed folders, never the state
// dir nor the workspace (the embedded one's directory, and whatever the
// kernel names as its workspace).
func (l *localFlags) guard(cmd *cobra.Command, c *siyuan.Client, stateDir, embedded string) (*localfs.Guard, error) {
	rules := localfs.Rules{Allowed: l.dirs, Forbidden: []localfs.Place{{Path: stateDir, What: "Sisyphus's state dir"}},
		Workspace: func(ctx context.Context) (string, error) {
			w, err := c.GetWorkspaceInfo(ctx)
			return w.WorkspaceDir, err
		}}
	if embedded != "" {
		rules.Forbidden = append(rules.Forbidden, localfs.Place{Path: embedded, What: "the SiYuan workspace"})
	}
	if !l.given(cmd) && l.cwd {
		// Not the file system's root, where services and schedulers start
		// their processes: that would allow every file.
		if wd, err := os.Getwd(); err == nil && filepath.Dir(wd) != wd {
			rules.Allowed = []string{wd}
			if g, err := localfs.New(rules); err == nil {
				return g, nil
			}
		}
		// The working directory is a place no agent may reach (the
		// workspace, a hidden folder) or the root: nothing is allowed.
		rules.Allowed = nil
	}
	g, err := localfs.New(rules)
	if err != nil {
		return nil, fmt.Errorf("--allow-dir: %w", err)
	}
	return g, nil
}

// isTerminal reports whether f is a terminal (not merely a character
// device: /dev/null is one).
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
