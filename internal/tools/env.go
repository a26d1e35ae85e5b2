package tools

import (
	"context"
	"encoding/json"

	"github.com/sisyphus-go/sisyphus/internal/mascotstore"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
)

// Env is what actions run against.
type Env struct {
	Kernel *siyuan.Client
	// Version of this server, for system.version and bootstrap.
	Version string
	// Coordinator runs every non-read action in this process.
	Coordinator *strict.Coordinator
	// Delegate, used when Coordinator is nil, sends a non-read call (its
	// arguments exactly as received, control fields included) to the
	// authority that owns the coordinator, and returns its answer; a failure
	// is a *failure.Error. With neither, writes answer
	// write_coordinator_unavailable.
	Delegate func(ctx context.Context, tool string, args json.RawMessage) (any, error)
	// DelegateStrict tells, for a delegating front, whether the authority
	// runs strict mode (it decides which control fields the schemas show).
	DelegateStrict bool
	// Policies loads the configuration a call runs under (notebook
	// permissions, tool switches, strict mode) when the call's context
	// carries none; nil runs everything (Unrestricted).
	Policies func(ctx context.Context) (*Policy, error)
	// ConfigChanged, when set, is told that an action changed the
	// configuration (notebook.set_permission), so that a cached one is read
	// again.
	ConfigChanged func()
	// MaxWriteBytes caps the arguments of one write (their JSON as sent);
	// a larger write is refused before anything runs, preflight included.
	// 0 means DefaultMaxWriteBytes. An action may declare its own budget
	// (templates).
	MaxWriteBytes int
	// MaxTemplateBytes is the template body budget (0: 16 MiB; at most
	// 32 MiB).
	MaxTemplateBytes int

	// Sources are the authority's upload sources (nil on a front).
	Sources Sources
	// Stager and Downloader are a front's: they move the person's files
	// to the authority and the authority's exports to the person.
	Stager     Stager
	Downloader Downloader
	// Local is a front's rule of which of the person's files a call may
	// read or create (nil: none; see LocalDisk).
	Local LocalFiles

	// Mascot keeps the mascot's balance, display events and analytics
	// (nil: the mascot tool reads the files but cannot buy).
	Mascot *mascotstore.Store

	// UI, on the authority, asks SiYuan's open windows to show each
	// committed write (nil: it does not).
	UI *UIRefresher

	// tools lists the registry's tools, for system.bootstrap.
	tools func() []*Tool
}

// The template body budget: 16 MiB by default, at most 32 MiB, plus what
// putFile's multipart envelope adds.
const (
	DefaultTemplateBytes = 16 << 20
	MaxTemplateBytes     = 32 << 20
	MultipartOverhead    = 64 << 10
)

// TemplateBytes is the template body budget.
func (e *Env) TemplateBytes() int {
	if e.MaxTemplateBytes > 0 {
		return min(e.MaxTemplateBytes, MaxTemplateBytes)
	}
	return DefaultTemplateBytes
}

// DefaultMaxWriteBytes is the default cap of one write's arguments: 4 MiB,
// which the embedded kernel applies in about a second and which holds the
// one write lane no longer.
const DefaultMaxWriteBytes = 4 << 20

func (e *Env) maxWriteBytes() int {
	if e.MaxWriteBytes > 0 {
		return e.MaxWriteBytes
	}
	return DefaultMaxWriteBytes
}

// StrictOn reports whether the call's writes go through preflight and
// commit: strict mode is on in this process (or its authority) and in the
// configuration the call runs under.
func (e *Env) StrictOn(ctx context.Context) bool { return e.strictOn(PolicyFrom(ctx)) }

func (e *Env) strictOn(p *Policy) bool {
	if p != nil && !p.Strict {
		return false
	}
	switch {
	case e.Coordinator != nil:
		return e.Coordinator.Strict()
	case e.Delegate != nil:
		return e.DelegateStrict
	}
	return true
}

// LocalDisk is Local, or, when there is none, a rule that refuses every
// path.
func (e *Env) LocalDisk() LocalFiles {
	if e.Local == nil {
		return noLocal{}
	}
	return e.Local
}

// front reports whether this process is a front: it sends every non-read
// call to the authority.
func (e *Env) front() bool { return e.Coordinator == nil && e.Delegate != nil }

// Tools lists the tools of the registry the env is bound to.
func (e *Env) Tools() []*Tool {
	if e.tools == nil {
		return nil
	}
	return e.tools()
}
