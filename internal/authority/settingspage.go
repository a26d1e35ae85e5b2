package authority

import (
	"context"
	"errors"
	"net/http"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/settings"
	"github.com/sisyphus-go/sisyphus/internal/settingsui"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// RecentOutcomes is how many ledger outcomes the settings page shows.
const RecentOutcomes = 20

// SettingsPage is what the settings page shows of this service and how it
// changes the configuration: through Apply, the same mutation as `sisyphus
// config`. Only the authority has one (a front has no ledger, and its
// changes would only be forwarded): nil on a front.
func (s *Service) SettingsPage() settingsui.Backend {
	if s.Delegator != nil {
		return nil
	}
	return settingsBackend{s}
}

type settingsBackend struct{ s *Service }

func (b settingsBackend) Apply(ctx context.Context, principal string, ch settings.Change) error {
	_, err := b.s.Apply(ctx, principal, ch)
	return err
}

func (b settingsBackend) Page(ctx context.Context) settingsui.Page {
	s := b.s
	p := settingsui.Page{Role: "authority", Version: s.Registry.Env().Version, Queues: s.Admission.Stats()}
	// A person looking at the page sees the files as stored now, not what
	// the gate cached (a file edited by hand, or by the plugin, a moment
	// ago); the gate then reads them fresh too.
	s.Settings.Invalidate()
	if v, err := s.View(ctx); err != nil {
		p.ConfigError = plainError(err)
	} else {
		p.Config = pageConfig(v)
	}
	p.Outcomes, p.OutcomesError = b.outcomes(ctx)
	return p
}

// outcomes are the ledger's latest, as ids, codes and aliases only: never
// targets (an fs target is a path made of titles) nor receipts.
func (b settingsBackend) outcomes(ctx context.Context) ([]settingsui.Outcome, string) {
	c := b.s.coord
	if c == nil || c.Ledger() == nil {
		return nil, ""
	}
	recs, err := c.Ledger().Recent(ctx, RecentOutcomes)
	if err != nil {
		return nil, err.Error()
	}
	alias := func(d string) string {
		if d == "" {
			return ""
		}
		return c.Aliases().Alias(d)
	}
	out := make([]settingsui.Outcome, 0, len(recs))
	for _, r := range recs {
		at := r.FinishedAt
		if at.IsZero() {
			at = r.StartedAt
		}
		out = append(out, settingsui.Outcome{RequestID: r.RequestID, Tool: r.Tool, Action: r.Action, Status: string(r.Status), At: at,
			PreviousHash: alias(r.PreviousHash), ResultHash: alias(r.ResultHash)})
	}
	return out, ""
}

// plainError is an error of the configuration as a person reads it.
func plainError(err error) string {
	var fe *failure.Error
	if !errors.As(err, &fe) {
		fe = tools.KernelError(err)
	}
	return fe.Message + " (" + string(fe.Code) + ")"
}

func pageConfig(v ConfigView) *settingsui.Config {
	c := &settingsui.Config{DefaultPermission: v.DefaultPermission, Problems: v.Problems, Migrated: v.Migrated,
		PermissionsFile: v.Files["permissions"], ToolsFile: v.Files["tools"], FeedbackEndpoint: v.FeedbackEndpoint,
		UserRules: v.UserRules, AgentMemoryBytes: v.AgentMemoryBytes, SlimResponses: v.SlimResponses,
		Strict: settingsui.Strict{Config: v.Strict.Config, ForcedOff: v.Strict.ForcedOff, Effective: v.Strict.Effective}}
	for _, a := range v.Apps {
		pa := settingsui.App{Key: a.Key, Title: a.Title, Enabled: a.Enabled, Served: a.Served, Tool: a.Target}
		for _, x := range a.Actions {
			pa.Actions = append(pa.Actions, settingsui.AppAction{Name: x.Name, Enabled: x.Enabled, Dangerous: x.Dangerous})
		}
		c.Apps = append(c.Apps, pa)
	}
	for _, n := range v.Notebooks {
		c.Notebooks = append(c.Notebooks, settingsui.Notebook{ID: n.ID, Name: n.Name, Closed: n.Closed, Permission: n.Permission, Explicit: n.Explicit})
	}
	for _, t := range v.Tools {
		tv := settingsui.Tool{Name: t.Name, Enabled: t.Enabled}
		for _, a := range t.Actions {
			tv.Actions = append(tv.Actions, settingsui.Action{Name: a.Name, Class: a.Class, Enabled: a.Enabled, Dangerous: a.Dangerous, OffByDefault: a.OffByDefault})
		}
		c.Tools = append(c.Tools, tv)
	}
	c.KernelOptionsFile, c.KernelOptionNotes = v.KernelOptions.File, v.KernelOptions.Notes
	for _, o := range v.KernelOptions.Options {
		c.KernelOptions = append(c.KernelOptions, settingsui.KernelOption{Name: o.Name, Value: o.Value, Source: o.Source, Range: o.Range, Meaning: o.Meaning})
	}
	return c
}

// settingsRoutes mounts the settings page at prefix+"/settings" for each
// prefix, signing in with the admin token; the agents' bearer token is
// told apart only to say which token to paste instead.
func settingsRoutes(mux *http.ServeMux, prefixes []string, cfg RoutesConfig, rt *routes) {
	login := func(tok string) (string, settingsui.Verdict) {
		if tok == "" {
			return "", settingsui.Wrong
		}
		if rt.isAdmin(tok) {
			return PrincipalAdmin, settingsui.Admitted
		}
		r, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, "/settings/login", nil)
		r.Header.Set("Authorization", "Bearer "+tok)
		if _, agent := rt.auth(r); agent {
			return "", settingsui.AgentToken
		}
		return "", settingsui.Wrong
	}
	ui, err := settingsui.New(settingsui.Options{Backend: cfg.Settings, Login: login, Logger: cfg.Logger})
	for _, prefix := range prefixes {
		base := prefix + "/settings"
		var h http.Handler
		if err != nil {
			// The templates are embedded: only a broken build gets here.
			h = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				http.Error(w, "the settings page is unavailable: "+err.Error(), http.StatusInternalServerError)
			})
		} else {
			h = ui.Handler(base)
		}
		mux.Handle(base, h)
		mux.Handle(base+"/", h)
	}
}
