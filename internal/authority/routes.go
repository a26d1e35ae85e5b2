package authority

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/admission"
	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/mcp"
	"github.com/sisyphus-go/sisyphus/internal/netguard"
	"github.com/sisyphus-go/sisyphus/internal/settingsui"
	"github.com/sisyphus-go/sisyphus/internal/transfer"
)

// PluginPrefix is the route prefix of the upstream plugin; clients written
// against it reach the same endpoints.
const PluginPrefix = "/plugin/private/siyuan-plugins-mcp-sisyphus"

// RoutesConfig configures the HTTP routes of an authority or a front.
type RoutesConfig struct {
	// Token is the agents' bearer token: /mcp, /tasks, /health and
	// /transfer/* take it, and nothing else.
	Token string
	// AdminToken is the person's credential: GET and POST /config and the
	// settings page's sign-in take it, and nothing else. "" refuses every
	// administrative request. It must differ from Token; when the two are
	// equal it is refused too.
	AdminToken string
	// Authenticate, when set, replaces the single-token check: it returns
	// the request's authentication context (its principal). Task control
	// answers a task only to the context that started it.
	Authenticate func(*http.Request) (principal string, ok bool)
	// Admission answers /tasks and feeds /health.
	Admission *admission.Controller
	// Instance is the authority's instance id: sent on every response in
	// the Sisyphus-Instance header, and a request naming another instance
	// in Sisyphus-Expect-Instance is refused with 409
	// write_coordinator_changed. Empty for a front.
	Instance string
	// Kernel is the workspace identity this process serves; a request whose
	// Sisyphus-Expect-Kernel names another is refused with 409.
	Kernel string
	// Role is "authority" or "front" (shown by /health).
	Role    string
	Version string
	Strict  bool
	// Extra adds fields to /health (a front's delegation counters).
	Extra func() map[string]any
	// AllowedOrigins and AllowedHosts are passed to the MCP endpoint.
	AllowedOrigins, AllowedHosts []string
	// MaxBodyBytes caps a POST body to /mcp (0: the MCP layer's default).
	MaxBodyBytes int64
	// Config serves /config (nil on a front: the route answers 404
	// not_authority).
	Config Configurator
	// Settings serves the settings page at /settings (nil: no such route,
	// as on a front). See Service.SettingsPage.
	Settings settingsui.Backend
	// Staging serves /transfer/upload and /transfer/lookup, and the staging
	// counts of /health (nil on a front: the routes answer 404
	// not_authority). See Service.Staging.
	Staging *transfer.Store
	// UploadBodyTimeout is how long the body of /transfer/upload may take
	// under the connection guard (0: the guard's body timeout).
	UploadBodyTimeout time.Duration
	// Connections, when set, feeds the connection counts of /health.
	Connections func() netguard.Stats
	Logger      *slog.Logger
}

// Principals of the two credentials. Task control answers a task only to
// the principal that started it; the admin token starts none.
const (
	PrincipalBearer = "bearer"
	PrincipalAdmin  = "admin"
)

// Routes serves /mcp, /tasks, /health, /config, /settings,
// /transfer/upload and /transfer/lookup, also under PluginPrefix. The
// agents' routes (/mcp, /tasks, /health, /transfer/*) take the bearer
// token (principal "bearer": one token is one authentication context, and
// task control answers only the context that started a task). The
// administrative ones, GET and POST /config and the settings page's
// sign-in (whose session then stands for it), take the person's admin
// token. Each refuses the other's token with 403 forbidden, and anything
// else with 401: an agent holding the bearer token cannot read or change
// the configuration, and the admin token pasted into an agent's
// configuration does not work there.
func Routes(srv *mcp.Server, cfg RoutesConfig) http.Handler {
	auth := func(r *http.Request) (string, bool) {
		tok, ok := bearerOf(r)
		if !ok || !sameToken(tok, cfg.Token) {
			return "", false
		}
		return PrincipalBearer, true
	}
	if cfg.Authenticate != nil {
		auth = cfg.Authenticate
	}
	start := time.Now()
	rt := &routes{cfg: cfg, auth: auth, srv: srv, start: start,
		guard: mcp.HTTPOptions{AllowedOrigins: cfg.AllowedOrigins, AllowedHosts: cfg.AllowedHosts}}
	mcpH := rt.agentsOnly(srv.HTTPHandler(mcp.HTTPOptions{Authenticate: auth, AllowedOrigins: cfg.AllowedOrigins, AllowedHosts: cfg.AllowedHosts,
		MaxBodyBytes: cfg.MaxBodyBytes}))
	mux := http.NewServeMux()
	prefixes := []string{"", PluginPrefix}
	for _, prefix := range prefixes {
		mux.Handle(prefix+"/mcp", mcpH)
		mux.Handle(prefix+"/tasks", rt.agentsOnly(http.HandlerFunc(rt.tasks)))
		mux.Handle(prefix+"/health", rt.agentsOnly(http.HandlerFunc(rt.health)))
		mux.HandleFunc(prefix+"/config", rt.config)
	}
	rt.stagingRoutes(mux, prefixes)
	if cfg.Settings != nil {
		settingsRoutes(mux, prefixes, cfg, rt)
	}
	return rt.identity(mux)
}

type routes struct {
	guard mcp.HTTPOptions // the Origin and Host checks of every route
	cfg   RoutesConfig
	auth  func(*http.Request) (string, bool)
	srv   *mcp.Server
	start time.Time
}

// bearerOf is the token of r's Authorization header.
func bearerOf(r *http.Request) (string, bool) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return strings.TrimSpace(tok), ok
}

// sameToken compares a presented token with a configured one in constant
// time; an empty configured token matches nothing.
func sameToken(presented, configured string) bool {
	return configured != "" && subtle.ConstantTimeCompare([]byte(presented), []byte(configured)) == 1
}

// isAdmin reports whether tok is the admin token. An admin token equal to
// the bearer token would let every agent in, so it then matches nothing.
func (rt *routes) isAdmin(tok string) bool {
	return !sameToken(rt.cfg.AdminToken, rt.cfg.Token) && sameToken(tok, rt.cfg.AdminToken)
}

// admin reports whether r carries the admin token.
func (rt *routes) admin(r *http.Request) bool {
	tok, ok := bearerOf(r)
	return ok && rt.isAdmin(tok)
}

// agentsOnly refuses the admin token on an agent's route: it is the
// person's credential, and a token that works only on the person's routes
// cannot be handed to an agent by mistake and work for it.
func (rt *routes) agentsOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rt.admin(r) {
			errorReply(w, http.StatusForbidden, failure.Forbidden,
				"the admin token is the person's credential for /config and the settings page; this route takes the bearer token agents use")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func jsonReply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func errorReply(w http.ResponseWriter, status int, code failure.Code, msg string) {
	jsonReply(w, status, map[string]any{"error": map[string]string{"code": string(code), "message": msg}})
}

// identity stamps the instance id on every response and refuses requests
// meant for another instance or workspace, before anything runs.
func (rt *routes) identity(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(HeaderServer, rt.cfg.Role+"/"+rt.cfg.Version)
		// Every route refuses what /mcp refuses: a foreign browser origin,
		// and on loopback a Host that is not loopback (DNS rebinding).
		switch status, reason := rt.guard.CheckOriginAndHost(settingsForm(r)); status {
		case http.StatusForbidden:
			errorReply(w, status, failure.Forbidden, reason)
			return
		case http.StatusMisdirectedRequest:
			errorReply(w, status, failure.Misdirected, reason)
			return
		}
		if _, ok := rt.auth(r); !ok && !rt.admin(r) {
			next.ServeHTTP(w, r) // each route answers 401 itself
			return
		}
		if rt.cfg.Instance != "" {
			w.Header().Set(HeaderInstance, rt.cfg.Instance)
			if want := r.Header.Get(HeaderExpectInstance); want != "" && want != rt.cfg.Instance {
				errorReply(w, http.StatusConflict, failure.CoordinatorChanged, "this authority is not the instance the caller pinned; nothing was run")
				return
			}
		}
		if want := r.Header.Get(HeaderExpectKernel); want != "" && rt.cfg.Kernel != "" && want != identityTag(rt.cfg.Kernel) {
			errorReply(w, http.StatusConflict, failure.KernelMismatch, "this authority coordinates another workspace; nothing was run")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// settingsForm is r as the Origin check sees it. A form the settings page
// posts to itself arrives with Origin "null": the page's Referrer-Policy is
// no-referrer, and under it browsers send "null" as the origin of a form's
// POST. The browser's own Sec-Fetch-Site (no page can set it) still says
// whether the form came from this origin; such a form is checked as one
// without an Origin (the Host check still applies), and the page's CSRF
// token and SameSite=Strict cookie still guard it. A "null" from anywhere
// else, or to any other route, is refused as before.
func settingsForm(r *http.Request) *http.Request {
	if r.Header.Get("Origin") != "null" || r.Header.Get("Sec-Fetch-Site") != "same-origin" {
		return r
	}
	p := strings.TrimPrefix(r.URL.Path, PluginPrefix)
	if p != "/settings" && !strings.HasPrefix(p, "/settings/") {
		return r
	}
	c := *r
	c.Header = r.Header.Clone()
	c.Header.Del("Origin")
	return &c
}

func unauthorized(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", "Bearer")
	errorReply(w, http.StatusUnauthorized, failure.Unauthorized, "a valid bearer token is required")
}

// tasks serves POST /tasks {"taskId","operation"}.
func (rt *routes) tasks(w http.ResponseWriter, r *http.Request) {
	principal, ok := rt.auth(r)
	if !ok {
		unauthorized(w)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		errorReply(w, http.StatusMethodNotAllowed, failure.MethodNotAllowed, "POST a JSON body {taskId, operation}")
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		errorReply(w, http.StatusUnsupportedMediaType, failure.InvalidRequest, "Content-Type must be application/json")
		return
	}
	var body struct {
		TaskID    string `json:"taskId"`
		Operation string `json:"operation"`
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	if err != nil || json.Unmarshal(data, &body) != nil || body.TaskID == "" {
		errorReply(w, http.StatusBadRequest, failure.InvalidRequest, "the body must be {\"taskId\": UUID, \"operation\": \"status\"|\"cancel\"|\"result\"}")
		return
	}
	rep, err := rt.cfg.Admission.Control(r.Context(), principal, body.TaskID, body.Operation)
	switch {
	case errors.Is(err, admission.ErrForbidden):
		errorReply(w, http.StatusForbidden, failure.Forbidden, "the task belongs to another authentication context")
	case errors.Is(err, admission.ErrBadOperation):
		errorReply(w, http.StatusBadRequest, failure.InvalidRequest, "operation must be status, cancel or result")
	case err != nil:
		errorReply(w, http.StatusInternalServerError, failure.Internal, "task control failed")
	default:
		jsonReply(w, http.StatusOK, rep)
	}
}

// Health is the body of /health: aggregate counts only, never task ids,
// request ids, tokens or content.
type Health struct {
	Status        string `json:"status"` // "ok" or "draining"
	Role          string `json:"role"`
	Version       string `json:"version"`
	Strict        bool   `json:"strict"`
	UptimeSeconds int64  `json:"uptimeSeconds"`
	admission.Stats
	// Staging is the authority's upload staging (absent on a front).
	Staging *transfer.Stats `json:"staging,omitempty"`
	// Connections are the listener's open, evicted and refused connections.
	Connections *netguard.Stats `json:"connections,omitempty"`
	MCP         struct {
		Sessions      int `json:"sessions"`
		Streams       int `json:"streams"`
		Subscriptions int `json:"subscriptions"`
	} `json:"mcp"`
}

func (rt *routes) health(w http.ResponseWriter, r *http.Request) {
	if _, ok := rt.auth(r); !ok {
		unauthorized(w)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET")
		errorReply(w, http.StatusMethodNotAllowed, failure.MethodNotAllowed, "GET /health")
		return
	}
	h := Health{Status: "ok", Role: rt.cfg.Role, Version: rt.cfg.Version, Strict: rt.cfg.Strict,
		UptimeSeconds: int64(time.Since(rt.start).Seconds()), Stats: rt.cfg.Admission.Stats()}
	if rt.cfg.Staging != nil {
		st := rt.cfg.Staging.Stats()
		h.Staging = &st
	}
	if rt.cfg.Connections != nil {
		cs := rt.cfg.Connections()
		h.Connections = &cs
	}
	ms := rt.srv.Stats()
	h.MCP.Sessions, h.MCP.Streams, h.MCP.Subscriptions = ms.Sessions, ms.Streams, ms.Subscriptions
	if h.Draining {
		h.Status = "draining"
	}
	if rt.cfg.Extra == nil {
		jsonReply(w, http.StatusOK, h)
		return
	}
	// Merge the extra fields at the top level.
	b, _ := json.Marshal(h)
	var m map[string]any
	json.Unmarshal(b, &m)
	for k, v := range rt.cfg.Extra() {
		m[k] = v
	}
	jsonReply(w, http.StatusOK, m)
}
