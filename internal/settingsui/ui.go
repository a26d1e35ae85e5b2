// Package settingsui is the settings page a person opens in a browser,
// served by the write authority at /settings: every notebook's permission,
// every tool and action switch, strict mode, the live queues and the most
// recent write outcomes, with forms that change the configuration exactly
// as `sisyphus config` does.
//
// It owns the page's HTTP side only: sign-in with the person's admin token
// (never the agents' bearer token), in-memory sessions, CSRF tokens,
// security headers, and the templates and stylesheet embedded in the
// binary. What it shows, how a token is checked and how a change is made
// come from the authority (a [Backend] and [Options].Login), so the arrows
// point down: the authority imports this package, never the reverse.
//
// The admin token is pasted once into a form and sent in a POST body. It
// never appears in a URL, a cookie, a log line or a page: a signed-in
// browser holds a random session id of its own (HttpOnly, SameSite=Strict),
// kept in memory, so sessions die with the process. Every form that changes
// something carries a CSRF token bound to the session. The page has no
// script; every control is a plain form with a submit button. Wrong tokens
// are answered slowly and a few at a time (failureGate); a right one signs
// in at once, whatever else is being sent.
package settingsui

import (
	"crypto/subtle"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/settings"
)

//go:embed assets
var assets embed.FS

// CookieName is the session cookie's name.
const CookieName = "sisyphus_settings"

// Defaults of [Options].
const (
	DefaultIdleTimeout  = 12 * time.Hour
	DefaultMaxSessions  = 64
	DefaultFailureDelay = time.Second
	DefaultMaxFailing   = 4
	DefaultMaxWaiting   = 16
	// maxForm caps a form body: the largest holds a token and a few ids.
	maxForm = 16 << 10
)

// A Verdict is what a sign-in check makes of a pasted token.
type Verdict int

const (
	// Wrong is no token of this server.
	Wrong Verdict = iota
	// AgentToken is the agents' bearer token: it never signs in, and the
	// person is told which token to paste instead.
	AgentToken
	// Admitted is the person's admin token.
	Admitted
)

// Options configure a [UI].
type Options struct {
	Backend Backend
	// Login checks a pasted token (in constant time) and, for the admin
	// token, returns the principal changes are made as.
	Login  func(token string) (principal string, v Verdict)
	Logger *slog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// IdleTimeout ends a session not used for this long.
	IdleTimeout time.Duration
	// MaxSessions bounds the sessions kept; the one seen longest ago goes.
	MaxSessions int
	// FailureDelay is how long a wrong token's answer is held; MaxFailing
	// wrong tokens are held at once, and MaxWaiting more wait for one of
	// those slots; a wrong token beyond them is answered 429 at once. None
	// of it applies to the right token.
	FailureDelay           time.Duration
	MaxFailing, MaxWaiting int
}

// UI is the settings page. Make one with [New] and mount [UI.Handler].
type UI struct {
	backend  Backend
	login    func(string) (string, Verdict)
	log      *slog.Logger
	sessions *sessions
	gate     *failureGate
	tmpl     *template.Template
	css      []byte
	idle     string // the idle timeout in words, for the sign-in page
}

// New returns the page over a backend.
func New(o Options) (*UI, error) {
	if o.Backend == nil || o.Login == nil {
		return nil, errors.New("settingsui: a backend and a login check are required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.FailureDelay <= 0 {
		o.FailureDelay = DefaultFailureDelay
	}
	if o.MaxFailing <= 0 {
		o.MaxFailing = DefaultMaxFailing
	}
	if o.MaxWaiting <= 0 {
		o.MaxWaiting = DefaultMaxWaiting
	}
	tmpl, err := template.New("").Funcs(funcs).ParseFS(assets, "assets/*.html")
	if err != nil {
		return nil, fmt.Errorf("settingsui: templates: %w", err)
	}
	css, err := assets.ReadFile("assets/style.css")
	if err != nil {
		return nil, fmt.Errorf("settingsui: stylesheet: %w", err)
	}
	return &UI{backend: o.Backend, login: o.Login, log: o.Logger, tmpl: tmpl, css: css, idle: duration(o.IdleTimeout),
		sessions: newSessions(o.IdleTimeout, o.MaxSessions, o.Now), gate: newFailureGate(o.MaxFailing, o.MaxWaiting, o.FailureDelay)}, nil
}

// csp allows the page's own stylesheet and forms, nothing else: no script
// at all, no frames, no foreign form targets.
const csp = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// secure sets the headers of every answer of the page.
func secure(h http.Header) {
	h.Set("Content-Security-Policy", csp)
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
}

// Handler serves the page at base ("/settings", or under the plugin
// prefix) and the paths below it.
func (u *UI) Handler(base string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secure(w.Header())
		rest, ok := strings.CutPrefix(r.URL.Path, base)
		if !ok {
			u.message(w, http.StatusNotFound, base, "Not found", "There is no such page.")
			return
		}
		if r.Method == http.MethodPost && !sameSite(r) {
			u.message(w, http.StatusForbidden, base, "Refused", "This form was sent from another site; nothing was changed.")
			return
		}
		switch rest {
		case "", "/":
			if !allow(w, r, http.MethodGet, http.MethodHead) {
				return
			}
			u.page(w, r, base)
		case "/style.css":
			if !allow(w, r, http.MethodGet, http.MethodHead) {
				return
			}
			w.Header().Set("Content-Type", "text/css; charset=utf-8")
			w.Write(u.css)
		case "/login":
			if allow(w, r, http.MethodPost) {
				u.signIn(w, r, base)
			}
		case "/logout":
			if allow(w, r, http.MethodPost) {
				u.signOut(w, r, base)
			}
		case "/notebook", "/tool", "/app", "/strict", "/slim", "/feedback":
			if allow(w, r, http.MethodPost) {
				u.change(w, r, base, rest)
			}
		default:
			u.message(w, http.StatusNotFound, base, "Not found", "There is no such page.")
		}
	})
}

// sameSite refuses a form a browser says another site sent (the Origin
// check of the routes catches most; this also covers browsers that send
// Sec-Fetch-Site but no Origin).
func sameSite(r *http.Request) bool {
	s := r.Header.Get("Sec-Fetch-Site")
	return s == "" || s == "same-origin" || s == "none"
}

func allow(w http.ResponseWriter, r *http.Request, methods ...string) bool {
	for _, m := range methods {
		if r.Method == m {
			return true
		}
	}
	w.Header().Set("Allow", strings.Join(methods, ", "))
	http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	return false
}

// clientAddr is the address a sign-in came from, for the log.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// current returns the request's session.
func (u *UI) current(r *http.Request) (id string, s session, ok bool) {
	c, err := r.Cookie(CookieName)
	if err != nil {
		return "", session{}, false
	}
	s, ok = u.sessions.get(c.Value)
	return c.Value, s, ok
}

func cookie(r *http.Request, base, value string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: CookieName, Value: value, Path: base, MaxAge: maxAge, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil}
}

// view is what the templates are given.
type view struct {
	Base  string
	CSRF  string
	Title string
	// Text is the body of a message page, or the sign-in page's complaint.
	Text   string
	Notice string
	Idle   string
	Flash  *flashView
	Page   Page
}

type flashView struct {
	OK   bool
	Text string
}

func (u *UI) render(w http.ResponseWriter, status int, name string, v view) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	var b strings.Builder
	if err := u.tmpl.ExecuteTemplate(&b, name, v); err != nil {
		u.log.Error("settings page: template failed", "template", name, "err", err)
		http.Error(w, "the settings page could not be drawn", http.StatusInternalServerError)
		return
	}
	w.WriteHeader(status)
	w.Write([]byte(b.String()))
}

func (u *UI) message(w http.ResponseWriter, status int, base, title, text string) {
	u.render(w, status, "message", view{Base: base, Title: title, Text: text})
}

func (u *UI) loginPage(w http.ResponseWriter, status int, base, complaint, notice string) {
	u.render(w, status, "login", view{Base: base, Title: "Sign in", Text: complaint, Notice: notice, Idle: u.idle})
}

// page serves GET: the sign-in form without a session, else the settings.
func (u *UI) page(w http.ResponseWriter, r *http.Request, base string) {
	id, s, ok := u.current(r)
	if !ok {
		u.loginPage(w, http.StatusOK, base, "", "")
		return
	}
	p := u.backend.Page(r.Context())
	v := view{Base: base, CSRF: s.csrf, Title: "Settings", Page: p, Flash: describe(u.sessions.takeFlash(id), p)}
	status := http.StatusOK
	if p.Config == nil {
		status = http.StatusServiceUnavailable
	}
	u.render(w, status, "page", v)
}

// form parses a POST body of a form; false when it answered already.
func (u *UI) form(w http.ResponseWriter, r *http.Request, base string) bool {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
		u.message(w, http.StatusUnsupportedMediaType, base, "Refused", "Send this form from the settings page.")
		return false
	}
	if err := r.ParseForm(); err != nil {
		u.message(w, http.StatusBadRequest, base, "Refused", "The form could not be read.")
		return false
	}
	return true
}

// signIn serves POST /login: the pasted admin token starts a session at
// once; any other token is answered after the failure gate's delay (or 429
// when it is full). The token itself is never stored, echoed or logged.
func (u *UI) signIn(w http.ResponseWriter, r *http.Request, base string) {
	if !u.form(w, r, base) {
		return
	}
	addr := clientAddr(r)
	principal, verdict := u.login(strings.TrimSpace(r.PostForm.Get("token")))
	if verdict != Admitted {
		u.refuse(w, r, base, addr, verdict)
		return
	}
	if old, err := r.Cookie(CookieName); err == nil {
		u.sessions.delete(old.Value) // a new id on every sign-in: no fixation
	}
	id := u.sessions.create(principal)
	u.sessions.setFlash(id, &flash{note: "Signed in."})
	http.SetCookie(w, cookie(r, base, id, 0))
	u.log.Info("settings page: signed in", "remote", addr)
	http.Redirect(w, r, base, http.StatusSeeOther)
}

// refuse answers a token that does not sign in, once the failure gate has
// held it.
func (u *UI) refuse(w http.ResponseWriter, r *http.Request, base, addr string, verdict Verdict) {
	if !u.gate.hold(r.Context()) {
		if r.Context().Err() != nil {
			return // the client is gone
		}
		w.Header().Set("Retry-After", fmt.Sprint(int(math.Ceil(u.gate.delay.Seconds()))))
		u.loginPage(w, http.StatusTooManyRequests, base,
			"Too many wrong sign-ins are being answered right now. Wait a moment, then sign in with the admin token.", "")
		return
	}
	if verdict == AgentToken {
		u.log.Warn("settings page: refused the agents' bearer token", "remote", addr)
		u.loginPage(w, http.StatusUnauthorized, base,
			"That is the bearer token agents use; it does not open the settings page. "+adminHint, "")
		return
	}
	u.log.Warn("settings page: wrong token", "remote", addr)
	u.loginPage(w, http.StatusUnauthorized, base, "That is not this server's admin token. "+adminHint, "")
}

// adminHint says where the person finds the admin token.
const adminHint = "Sign in with the admin token: run sisyphus admin-token where sisyphus serve runs, and paste what it prints."

// checkCSRF requires a live session and the form's token bound to it.
func (u *UI) checkCSRF(w http.ResponseWriter, r *http.Request, base string) (id string, s session, ok bool) {
	id, s, ok = u.current(r)
	if !ok {
		u.loginPage(w, http.StatusUnauthorized, base, "", "Your session has ended. Paste the admin token again to sign in; nothing was changed.")
		return "", session{}, false
	}
	if !u.form(w, r, base) {
		return "", session{}, false
	}
	if subtle.ConstantTimeCompare([]byte(r.PostForm.Get("csrf")), []byte(s.csrf)) != 1 {
		u.message(w, http.StatusForbidden, base, "Refused",
			"This form did not come from your settings page (its security token is missing or stale); nothing was changed. Reload the page and try again.")
		return "", session{}, false
	}
	return id, s, true
}

// signOut serves POST /logout.
func (u *UI) signOut(w http.ResponseWriter, r *http.Request, base string) {
	id, _, ok := u.checkCSRF(w, r, base)
	if !ok {
		return
	}
	u.sessions.delete(id)
	http.SetCookie(w, cookie(r, base, "", -1))
	http.Redirect(w, r, base, http.StatusSeeOther)
}

// change serves the forms that change the configuration: each makes one
// settings.Change and hands it to the backend, then redirects to the page
// (post/redirect/get), which says what happened.
func (u *UI) change(w http.ResponseWriter, r *http.Request, base, what string) {
	id, s, ok := u.checkCSRF(w, r, base)
	if !ok {
		return
	}
	f := r.PostForm
	var ch settings.Change
	switch what {
	case "/notebook":
		ch = settings.Change{Notebook: f.Get("notebook"), Permission: f.Get("permission")}
	case "/tool":
		on, valid := onOff(f.Get("enabled"))
		if !valid {
			u.message(w, http.StatusBadRequest, base, "Refused", "The form could not be read.")
			return
		}
		ch = settings.Change{Tool: f.Get("tool"), Action: f.Get("action"), Enabled: &on}
	case "/app":
		on, valid := onOff(f.Get("enabled"))
		if !valid {
			u.message(w, http.StatusBadRequest, base, "Refused", "The form could not be read.")
			return
		}
		ch = settings.Change{App: f.Get("app"), AppAction: f.Get("action"), Enabled: &on}
	case "/strict":
		on, valid := onOff(f.Get("strict"))
		if !valid {
			u.message(w, http.StatusBadRequest, base, "Refused", "The form could not be read.")
			return
		}
		ch = settings.Change{Strict: &on}
	case "/slim":
		on, valid := onOff(f.Get("slim"))
		if !valid {
			u.message(w, http.StatusBadRequest, base, "Refused", "The form could not be read.")
			return
		}
		ch = settings.Change{Slim: &on}
	case "/feedback":
		endpoint := strings.TrimSpace(f.Get("endpoint"))
		ch = settings.Change{FeedbackURL: &endpoint}
	}
	fl := &flash{change: ch}
	if err := u.backend.Apply(r.Context(), s.principal, ch); err != nil {
		fl.err = plain(err)
		u.log.Info("settings page: change refused", "change", what, "err", err)
	} else {
		u.log.Info("settings page: changed", "change", what)
	}
	u.sessions.setFlash(id, fl)
	http.Redirect(w, r, base, http.StatusSeeOther)
}

func onOff(v string) (on, ok bool) {
	switch v {
	case "true", "on":
		return true, true
	case "false", "off":
		return false, true
	}
	return false, false
}

// plain is an error as a person reads it: the message of a Sisyphus error
// with its code, else the error's text.
func plain(err error) string {
	var fe *failure.Error
	if errors.As(err, &fe) {
		return fe.Message + " (" + string(fe.Code) + ")"
	}
	return err.Error()
}

// describe turns a session's message into the page's words, naming the
// notebook as the page shows it now.
func describe(f *flash, p Page) *flashView {
	if f == nil {
		return nil
	}
	ch := f.change
	var subject, state, extra string
	switch {
	case ch.Notebook != "":
		name := ch.Notebook
		if p.Config != nil {
			for _, n := range p.Config.Notebooks {
				if n.ID == ch.Notebook {
					name = n.Name
				}
			}
		}
		subject, state = "the permission of notebook “"+name+"”", ch.Permission
	case ch.Tool != "" && ch.Enabled != nil:
		subject, state = "tool "+ch.Tool, onWord(*ch.Enabled)
		if ch.Action != "" {
			subject = "action " + ch.Tool + "." + ch.Action
		}
	case ch.App != "" && ch.Enabled != nil:
		subject, state = "the App "+ch.App, onWord(*ch.Enabled)
		if ch.AppAction != "" {
			subject = "the App action " + ch.App + "." + ch.AppAction
		}
	case ch.Strict != nil:
		subject, state = "strict mode", onWord(*ch.Strict)
		if *ch.Strict && p.Config != nil && p.Config.Strict.ForcedOff {
			extra = " This server was started with --strict-off, so strict writes stay off here until it is restarted without it."
		}
	case ch.Slim != nil:
		subject, state = "the slim answers switch", onWord(*ch.Slim)
	case ch.FeedbackURL != nil:
		subject, state = "the feedback endpoint", *ch.FeedbackURL
		if state == "" {
			subject, state = "feedback", "off (nothing is sent)"
		}
	default:
		return &flashView{OK: true, Text: f.note}
	}
	if f.err != "" {
		return &flashView{Text: "Not saved: " + subject + " could not be set to " + state + ". " + f.err}
	}
	return &flashView{OK: true, Text: "Saved: " + subject + " is now " + state + "." + extra}
}

// duration says d in words ("12 hours").
func duration(d time.Duration) string {
	switch {
	case d%time.Hour == 0 && d == time.Hour:
		return "an hour"
	case d%time.Hour == 0:
		return fmt.Sprintf("%d hours", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%d minutes", d/time.Minute)
	}
	return d.String()
}

func onWord(on bool) string {
	if on {
		return "on"
	}
	return "off"
}
