package settingsui

import (
	"context"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/admission"
	"github.com/sisyphus-go/sisyphus/internal/settings"
)

// Backend is what the page needs of the server behind it: the authority
// gathers the page and makes changes exactly as `sisyphus config` does.
type Backend interface {
	// Page gathers what the page shows now. It does not fail as a whole:
	// a part that could not be read says why in the Page.
	Page(ctx context.Context) Page
	// Apply makes one change of the configuration for principal. Its error
	// is shown to the person as it is, so it must hold no secret.
	Apply(ctx context.Context, principal string, ch settings.Change) error
}

// Page is everything the settings page shows.
type Page struct {
	Role    string
	Version string
	// Config is nil when the configuration could not be read; ConfigError
	// then says why (the kernel is unreachable, ...).
	Config      *Config
	ConfigError string
	Queues      admission.Stats
	// Outcomes are the most recent write outcomes, newest first;
	// OutcomesError says why they could not be read.
	Outcomes      []Outcome
	OutcomesError string
}

// Config is the configuration as a person reads it.
type Config struct {
	Notebooks         []Notebook
	DefaultPermission string
	Tools             []Tool
	Strict            Strict
	// SlimResponses is debug.slimResponses (readInfo only on reads whose
	// answer is not whole).
	SlimResponses bool
	// Problems say why a configuration file cannot be used: while there
	// are any, every call is refused (the gate fails closed).
	Problems []string
	// Migrated are notebooks whose stored value is a legacy one.
	Migrated []string
	// PermissionsFile and ToolsFile are where the configuration lives.
	PermissionsFile, ToolsFile string
	// FeedbackEndpoint is where feedback.submit posts ("": none).
	FeedbackEndpoint string
	// UserRules are the person's rules agents read at /USER_RULES.md;
	// AgentMemoryBytes the size of their memory at /AGENTS.md.
	UserRules        string
	AgentMemoryBytes int
	// KernelOptions are the upstream plugin's kernel options in force, read
	// from KernelOptionsFile; KernelOptionNotes say what was corrected.
	KernelOptions     []KernelOption
	KernelOptionsFile string
	KernelOptionNotes []string
	// Apps are the MCP Apps and their switches (mcpApps).
	Apps []App
}

// App is one MCP App's switch and its actions'.
type App struct {
	Key, Title string
	Enabled    bool
	// Served is false for an App this build does not serve yet (its
	// switches are kept for when it does).
	Served  bool
	Tool    string // the tool its actions run
	Actions []AppAction
}

// AppAction is one App action's switch.
type AppAction struct {
	Name      string
	Enabled   bool
	Dangerous bool
}

// KernelOption is one kernel option: its value, where it came from
// (default, configuration, or the flag that overrides it), its range and
// what it bounds.
type KernelOption struct {
	Name, Value, Source, Range, Meaning string
}

// Notebook is one notebook and what agents may do in it.
type Notebook struct {
	ID, Name   string
	Closed     bool
	Permission string
	// Explicit is false when no entry exists and the default applies.
	Explicit bool
}

// Tool is one tool's switch and its actions'.
type Tool struct {
	Name    string
	Enabled bool
	Actions []Action
}

// Off is how many of the tool's actions are off.
func (t Tool) Off() int {
	n := 0
	for _, a := range t.Actions {
		if !a.Enabled {
			n++
		}
	}
	return n
}

// Action is one action's switch.
type Action struct {
	Name, Class  string
	Enabled      bool
	Dangerous    bool
	OffByDefault bool
}

// Strict is strict mode: the configuration's value, whether the server was
// started with --strict-off (which forces it off), and what applies.
type Strict struct {
	Config, ForcedOff, Effective bool
}

// Outcome is one write in the ledger: identifiers, codes and hash aliases
// only, never content or targets.
type Outcome struct {
	RequestID    string
	Tool, Action string
	// Status is the ledger's code: committed, no_change, executing,
	// failed_before_dispatch.
	Status string
	// At is when the record last changed (finished, else started).
	At time.Time
	// PreviousHash and ResultHash are short aliases ("" when none).
	PreviousHash, ResultHash string
}
