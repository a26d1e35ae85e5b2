package authority

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/admission"
	"github.com/sisyphus-go/sisyphus/internal/localfs"
	"github.com/sisyphus-go/sisyphus/internal/mascotstore"
	"github.com/sisyphus-go/sisyphus/internal/mcp"
	"github.com/sisyphus-go/sisyphus/internal/settings"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/catalog"
	"github.com/sisyphus-go/sisyphus/internal/tools/mascot"
	"github.com/sisyphus-go/sisyphus/internal/transfer"
)

// Service is one process's tool service: every tool over a kernel client,
// admission in front of them, and the MCP server that runs each call
// through admission. The authority's service writes through its
// coordinator; a front's (stdio, sisyphus call, serve --authority) sends
// every non-read call to the authority.
type Service struct {
	Registry  *tools.Registry
	Admission *admission.Controller
	Runner    *Runner
	MCP       *mcp.Server
	// Delegator is a front's link to its authority (nil on the authority).
	Delegator *Delegator
	// MaxMessageBytes is the largest MCP message the service takes (HTTP
	// bodies and stdio lines).
	MaxMessageBytes int
	// Settings reads and writes the configuration the calls run under.
	Settings *settings.Store

	// Staging is the authority's upload staging store (nil on a front):
	// routes serve /transfer/* from it, upload_asset reads the bytes it
	// verified (Staging.Resolve).
	Staging *transfer.Store
	// Stager and Downloader are a front's (nil on the authority): they
	// stage the person's local files at the authority and save its exports
	// on the person's disk through this front's kernel client.
	Stager     *transfer.Stager
	Downloader *transfer.Downloader

	kernelOptions KernelOptionsView
	// stop ends the tool syncs the configuration's changes start (Close).
	stop   context.Context
	cancel context.CancelFunc

	// coord is the authority's coordinator (nil on a front), for the
	// settings page's view of the ledger and the alias pool.
	coord *strict.Coordinator
	// ui sends the nudges after committed writes (nil: none).
	ui *tools.UIRefresher
}

// ServiceConfig configures a Service. Exactly one of Coordinator (the
// authority) and Delegator (a front) is set.
type ServiceConfig struct {
	Kernel      *siyuan.Client
	Coordinator *strict.Coordinator
	Delegator   *Delegator
	Version     string
	Logger      *slog.Logger
	// Limits are the admission limits (zero: the defaults).
	Limits admission.Limits
	// MaxWriteBytes caps the arguments of one write (0: the default).
	MaxWriteBytes int
	// MaxTemplateBytes is the template body budget (0: the default).
	MaxTemplateBytes int
	// ConfirmTimeout bounds a confirmation (0: DefaultConfirmTimeout).
	ConfirmTimeout time.Duration
	// Staging configures the authority's staging store (zero: the
	// specification's limits).
	Staging transfer.Config
	// Progress, at a front, shows long downloads (a terminal's standard
	// error; nil: none).
	Progress io.Writer
	// Local, at a front, is the rule of which of its person's files an
	// agent's call may read, and where it may create files (nil: none).
	Local *localfs.Guard
	// UIRefresh, on the authority, asks SiYuan's open windows to show each
	// committed write (best effort, after the answer).
	UIRefresh bool
	// Transport names the front in the mascot's analytics: http, stdio or
	// cli ("": http).
	Transport string
	// KernelOptions are the kernel options in force, as config show and the
	// settings page show them (read once at start).
	KernelOptions KernelOptionsView
}

// maxMessage is the largest MCP message a service takes: a write at its cap
// in the worst JSON escaping, plus the envelope.
func (cfg ServiceConfig) maxMessage() int {
	w := cfg.MaxWriteBytes
	if w <= 0 {
		w = tools.DefaultMaxWriteBytes
	}
	w = max(w, (&tools.Env{MaxTemplateBytes: cfg.MaxTemplateBytes}).TemplateBytes())
	return 2*w + 64<<10
}

// NewService builds the service of an authority or a front: the one place
// the kernel, the write path, the tools, admission and the runner are put
// together.
func NewService(cfg ServiceConfig) (*Service, error) {
	if (cfg.Coordinator == nil) == (cfg.Delegator == nil) {
		return nil, errors.New("authority: a service needs either a coordinator (the authority) or a delegator (a front)")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// The authority, which every call asks, keeps the configuration for a
	// moment (its own changes apply at once); a front reads it per call, so
	// that its reads follow a change the authority made.
	store := settings.NewStore(cfg.Kernel)
	if cfg.Coordinator != nil {
		store = settings.NewCachedStore(cfg.Kernel, ConfigCacheTTL)
	}
	env := &tools.Env{Kernel: cfg.Kernel, Version: cfg.Version, Coordinator: cfg.Coordinator, MaxWriteBytes: cfg.MaxWriteBytes, MaxTemplateBytes: cfg.MaxTemplateBytes,
		Policies: store.Policy, ConfigChanged: store.Invalidate}
	env.Mascot = mascotstore.New(mascot.KernelFiles{Kernel: cfg.Kernel}, mascotstore.Options{Logger: log})
	if d := cfg.Delegator; d != nil {
		env.Delegate, env.DelegateStrict = d.Delegate, d.Strict()
	}
	if cfg.Coordinator != nil && cfg.UIRefresh {
		env.UI = tools.NewUIRefresher(cfg.Kernel, log)
	}
	var staging *transfer.Store
	var stg *transfer.Stager
	var dl *transfer.Downloader
	if cfg.Coordinator != nil {
		staging = transfer.NewStore(cfg.Staging)
		env.Sources = sources{staging}
	} else {
		stg = &transfer.Stager{Authority: cfg.Delegator, MaxFileBytes: cfg.Staging.MaxFileBytes}
		dl = &transfer.Downloader{Kernel: cfg.Kernel, Authority: cfg.Delegator}
		env.Stager, env.Downloader = stager{s: stg, guard: cfg.Local}, downloader{d: dl, progress: cfg.Progress}
		if cfg.Local != nil {
			env.Local = localDisk{cfg.Local}
		}
	}
	reg, err := catalog.NewRegistry(env)
	if err != nil {
		return nil, err
	}
	adm := admission.New(admission.Config{Limits: cfg.Limits, Permissions: ConfigPermissions(store.Policy)})
	rn := &Runner{Registry: reg, Admission: adm, Delegating: cfg.Delegator != nil, Logger: log, ConfirmTimeout: cfg.ConfirmTimeout,
		Mascot: env.Mascot, Transport: cfg.Transport}
	svc := &Service{Registry: reg, Admission: adm, Runner: rn, MCP: NewServer(rn, cfg.Version, log, cfg.maxMessage()), Delegator: cfg.Delegator,
		MaxMessageBytes: cfg.maxMessage(), Settings: store, coord: cfg.Coordinator, ui: env.UI, kernelOptions: cfg.KernelOptions}
	svc.Staging, svc.Stager, svc.Downloader = staging, stg, dl
	// A configuration a call's read brings into the cache reaches the
	// tool list, and list_changed goes out, at once rather than at the
	// next poll. Close ends the syncs it starts.
	svc.stop, svc.cancel = context.WithCancel(context.Background())
	store.OnChange(func() { svc.Runner.RefreshTools(svc.stop, svc.MCP) })
	return svc, nil
}

// ConfigCacheTTL is how long the authority keeps the configuration it read:
// an edit of the files by anything but this authority applies within it.
const ConfigCacheTTL = 2 * time.Second

// SyncTools shows the MCP clients the tools as the configuration is now.
func (s *Service) SyncTools(ctx context.Context) { s.Runner.SyncTools(ctx, s.MCP) }

// WatchConfig re-reads the configuration every interval until ctx ends, so
// that a change made elsewhere (another process, the upstream plugin, a
// person editing the files) reaches this server's tool list.
func (s *Service) WatchConfig(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.SyncTools(ctx)
		}
	}
}

// Close closes the MCP server (its sessions and streams).
func (s *Service) Close() {
	if s.cancel != nil {
		s.cancel()
	}
	s.MCP.Close()
	// The last writes' nudges, briefly: they are only a convenience.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	s.ui.Wait(ctx)
	// The mascot's last events and analytics lines, as briefly.
	if s.Runner.Mascot != nil {
		s.Runner.Mascot.Settle(ctx)
	}
}
