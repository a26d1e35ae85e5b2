package authority

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/sisyphus-go/sisyphus/internal/apps"
	"io"
	"mime"
	"net/http"
	"sort"

	"github.com/sisyphus-go/sisyphus/internal/admission"
	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/settings"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// ConfigView is the configuration as a person reads it: `sisyphus config
// show`, the settings page and GET /config.
type ConfigView struct {
	Notebooks         []NotebookView `json:"notebooks"`
	DefaultPermission string         `json:"defaultPermission"`
	Tools             []ToolView     `json:"tools"`
	Strict            StrictView     `json:"strict"`
	// SlimResponses is debug.slimResponses: reads carry readInfo only
	// when their answer is not whole (true, the default) or always.
	SlimResponses bool              `json:"slimResponses"`
	Problems      []string          `json:"problems,omitempty"`
	Migrated      []string          `json:"migrated,omitempty"`
	Files         map[string]string `json:"files"`
	Version       string            `json:"version"`
	// FeedbackEndpoint is where feedback.submit posts ("": none set).
	FeedbackEndpoint string `json:"feedbackEndpoint,omitempty"`
	// UserRules is the person's rules for agents (fs /USER_RULES.md);
	// AgentMemoryBytes the size of the agents' memory (/AGENTS.md).
	UserRules        string `json:"userRules"`
	AgentMemoryBytes int    `json:"agentMemoryBytes"`
	// KernelOptions are the upstream plugin's kernel options in force.
	KernelOptions KernelOptionsView `json:"kernelOptions"`
	// Apps are the MCP Apps (mcpApps) and their switches.
	Apps []AppView `json:"apps"`
}

// AppView is one MCP App as a person switches it: whether it is on, each
// of its actions (switched in the App; the tool action's own switch
// applies too), and whether this build serves it.
type AppView struct {
	Key     string          `json:"key"`
	Title   string          `json:"title"`
	Enabled bool            `json:"enabled"`
	Served  bool            `json:"served"`
	Target  string          `json:"tool"`
	Actions []AppActionView `json:"actions"`
}

// AppActionView is one App action's own switch (the App's, when off, turns
// every action off whatever theirs say).
type AppActionView struct {
	Name      string `json:"name"`
	Enabled   bool   `json:"enabled"`
	Dangerous bool   `json:"dangerous"`
}

// KernelOptionsView is the kernel options in force: each with its value and
// where it came from, the file they are read from, and what was corrected
// in it.
type KernelOptionsView struct {
	File    string             `json:"file"`
	Options []KernelOptionView `json:"options"`
	Notes   []string           `json:"notes,omitempty"`
}

// KernelOptionView is one kernel option.
type KernelOptionView struct {
	Name    string `json:"name"`
	Value   string `json:"value"`
	Source  string `json:"source"` // default, configuration or a flag's name
	Range   string `json:"range,omitempty"`
	Meaning string `json:"meaning"`
}

// NotebookView is one notebook and what agents may do in it.
type NotebookView struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	Closed     bool   `json:"closed"`
	Permission string `json:"permission"`
	// Explicit: the configuration has an entry (else the default applies).
	Explicit bool `json:"explicit"`
}

// ToolView is one tool's switches.
type ToolView struct {
	Name    string       `json:"name"`
	Enabled bool         `json:"enabled"`
	Actions []ActionView `json:"actions"`
}

// ActionView is one action's switch.
type ActionView struct {
	Name         string `json:"name"`
	Class        string `json:"class"`
	Enabled      bool   `json:"enabled"`
	Dangerous    bool   `json:"dangerous,omitempty"`
	OffByDefault bool   `json:"offByDefault,omitempty"`
}

// StrictView is strict mode: the configuration's, whether the server was
// started with it forced off (--strict-off), and what applies.
type StrictView struct {
	Config    bool `json:"config"`
	ForcedOff bool `json:"forcedOff"`
	Effective bool `json:"effective"`
}

// Configurator reads and changes a process's configuration: the authority
// applies changes itself; a front forwards them to its authority.
type Configurator interface {
	View(ctx context.Context) (ConfigView, error)
	Apply(ctx context.Context, principal string, ch settings.Change) (ConfigView, error)
}

// Configurator is the service's /config: the authority's own, nil on a
// front (which serves none; see Apply).
func (s *Service) Configurator() Configurator {
	if s.Delegator != nil {
		return nil
	}
	return s
}

// View is the service's configuration now.
func (s *Service) View(ctx context.Context) (ConfigView, error) {
	cfg, err := s.Settings.Load(ctx)
	if err != nil {
		return ConfigView{}, err
	}
	nbs, err := s.Registry.Env().Kernel.ListNotebooks(ctx)
	if err != nil {
		return ConfigView{}, err
	}
	p := cfg.Policy()
	levels := cfg.Levels()
	v := ConfigView{DefaultPermission: p.Default.String(), Problems: cfg.Problems(), Migrated: cfg.Migrated(), Version: cfg.Version(),
		Files:     map[string]string{"permissions": settings.PermissionsFile, "tools": settings.ToolsFile},
		UserRules: cfg.UserRules(), AgentMemoryBytes: len(cfg.AgentMemory())}
	for _, n := range nbs {
		_, explicit := levels[n.ID]
		v.Notebooks = append(v.Notebooks, NotebookView{n.ID, n.Name, n.Closed, p.Level(n.ID).String(), explicit})
	}
	sort.SliceStable(v.Notebooks, func(i, j int) bool { return v.Notebooks[i].Name < v.Notebooks[j].Name })
	for _, t := range s.Registry.Tools() {
		tv := ToolView{Name: t.Name, Enabled: p.ToolOn(t)}
		for _, a := range t.Actions {
			tv.Actions = append(tv.Actions, ActionView{a.Name, a.Policy.Class.String(), p.ActionOn(t, a), a.Dangerous, a.OffByDefault})
		}
		v.Tools = append(v.Tools, tv)
	}
	forced := !s.Registry.Env().StrictOn(context.Background())
	v.Strict = StrictView{Config: cfg.Strict(), ForcedOff: forced, Effective: cfg.Strict() && !forced}
	v.SlimResponses = cfg.SlimResponses()
	v.FeedbackEndpoint = cfg.FeedbackURL()
	v.KernelOptions = s.kernelOptions
	served := map[string]bool{}
	for _, a := range s.Runner.appsOn() {
		served[a.Key] = true
	}
	for _, a := range apps.All() {
		av := AppView{Key: a.Key, Title: a.Title, Enabled: p.Apps.On(a.Key), Served: served[a.Key], Target: a.Target}
		t, _ := s.Registry.Tool(a.Target)
		for _, name := range a.Actions {
			dangerous := false
			if t != nil {
				if act, ok := t.Action(name); ok {
					dangerous = act.Dangerous
				}
			}
			av.Actions = append(av.Actions, AppActionView{Name: name, Enabled: p.Apps.ActionSwitch(a.Key, name), Dangerous: dangerous})
		}
		v.Apps = append(v.Apps, av)
	}
	return v, nil
}

// Apply makes one change of the configuration as a mutation of the
// authority: through its write lane (after the writes before it, never
// beside one), checked against the tools it knows, verified by a readback;
// the tool list then follows. A front makes none: it holds only the
// agents' bearer token, and forwarding a change with it would make that
// token an administrator's; the person's `sisyphus config` talks to the
// authority itself.
func (s *Service) Apply(ctx context.Context, principal string, ch settings.Change) (ConfigView, error) {
	if s.Delegator != nil {
		return ConfigView{}, failure.New(failure.NotAuthority, "a front makes no configuration change; run sisyphus config, which sends it to the write authority with the admin token")
	}
	if err := ch.Validate(); err != nil {
		return ConfigView{}, failure.Invalid("%s", err.Error())
	}
	if ch.Tool != "" {
		t, ok := s.Registry.Tool(ch.Tool)
		if !ok {
			return ConfigView{}, failure.New(failure.UnknownTool, "no tool is named %q", ch.Tool)
		}
		if _, ok := t.Action(ch.Action); ch.Action != "" && !ok {
			return ConfigView{}, unknownAction(t, ch.Action)
		}
	}
	if ch.Notebook != "" {
		nbs, err := s.Registry.Env().Kernel.ListNotebooks(ctx)
		if err != nil {
			return ConfigView{}, tools.KernelError(err)
		}
		found := false
		for _, n := range nbs {
			found = found || n.ID == ch.Notebook
		}
		if !found {
			return ConfigView{}, failure.Missing("notebook", ch.Notebook)
		}
	}
	call, err := s.Admission.Admit(ctx, admission.Request{Lane: admission.LaneWrite, Principal: principal, Tool: "config", Action: "set",
		Caller: principal + "/config"})
	if err != nil {
		return ConfigView{}, admissionError(err, true)
	}
	var outcome admission.Outcome
	defer func() { call.Finish(outcome) }()
	if err := call.Start(call.Context()); err != nil && (errors.Is(err, admission.ErrCancelled) || errors.Is(err, admission.ErrDraining)) {
		outcome.IsError = true
		return ConfigView{}, admissionError(err, true)
	}
	if _, err := s.Settings.Apply(call.Context(), ch); err != nil {
		outcome.IsError = true
		return ConfigView{}, failure.Wrap(failure.ConfigUnavailable, err, "the change was not made: %s", err.Error()).Attempted(true)
	}
	s.SyncTools(ctx)
	return s.View(ctx)
}

func unknownAction(t *tools.Tool, name string) *failure.Error {
	return failure.New(failure.UnknownAction, "tool %s has no action %q", t.Name, name).With("validActions", t.ActionNames()[1:])
}

// config serves GET /config (the view, hidden notebooks included) and POST
// /config (one change, answered with the view after it), to the admin
// token only. A front has no /config: it would have to forward the change
// with a credential of its own.
func (rt *routes) config(w http.ResponseWriter, r *http.Request) {
	if rt.cfg.Config == nil {
		errorReply(w, http.StatusNotFound, failure.NotAuthority,
			"this server is a front and serves no configuration: run sisyphus config, which talks to the write authority")
		return
	}
	if !rt.admin(r) {
		if _, agent := rt.auth(r); agent {
			errorReply(w, http.StatusForbidden, failure.Forbidden,
				"/config takes the admin token, the person's credential (sisyphus admin-token prints it); the bearer token is for agents")
			return
		}
		w.Header().Set("WWW-Authenticate", "Bearer")
		errorReply(w, http.StatusUnauthorized, failure.Unauthorized, "/config needs the admin token (sisyphus admin-token prints it)")
		return
	}
	principal := PrincipalAdmin
	switch r.Method {
	case http.MethodGet:
		v, err := rt.cfg.Config.View(r.Context())
		if err != nil {
			configError(w, err)
			return
		}
		jsonReply(w, http.StatusOK, v)
	case http.MethodPost:
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
			errorReply(w, http.StatusUnsupportedMediaType, failure.InvalidRequest, "Content-Type must be application/json")
			return
		}
		var ch settings.Change
		// Room for the user rules at their cap, JSON-escaped.
		data, err := io.ReadAll(io.LimitReader(r.Body, 8*settings.MaxTextBytes))
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err != nil || dec.Decode(&ch) != nil {
			errorReply(w, http.StatusBadRequest, failure.InvalidRequest,
				`the body must be one change: {"notebook","permission"}, {"tool","action"?,"enabled"} or {"strict"}`)
			return
		}
		v, err := rt.cfg.Config.Apply(r.Context(), principal, ch)
		if err != nil {
			configError(w, err)
			return
		}
		jsonReply(w, http.StatusOK, v)
	default:
		w.Header().Set("Allow", "GET, POST")
		errorReply(w, http.StatusMethodNotAllowed, failure.MethodNotAllowed, "GET /config, or POST one change")
	}
}

// configError answers a failed view or change with its code.
func configError(w http.ResponseWriter, err error) {
	var fe *failure.Error
	if !errors.As(err, &fe) {
		fe = tools.KernelError(err)
	}
	status := http.StatusBadRequest
	switch fe.Code {
	case failure.KernelUnreachable, failure.KernelAuth, failure.KernelError, failure.ConfigUnavailable, failure.Internal,
		failure.CoordinatorUnavailable, failure.QueueFull, failure.ShuttingDown:
		status = http.StatusServiceUnavailable
	case failure.NotFound, failure.UnknownTool, failure.UnknownAction:
		status = http.StatusNotFound
	case failure.CoordinatorChanged:
		status = http.StatusConflict
	}
	jsonReply(w, status, fe.Result())
}
