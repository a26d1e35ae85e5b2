package settingsui

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// FuzzSignIn: whatever a client posts to the sign-in form, only the admin
// token (with surrounding space) starts a session, nothing panics, and no
// answer or log line holds the admin token.
func FuzzSignIn(f *testing.F) {
	for _, body := range []string{
		"token=" + token, "token=" + agentToken, "token=%20" + token + "%0A", "token=" + token + "&token=x", "token=x&token=" + token,
		"token=%zz", "", "token=", strings.Repeat("a", maxForm+1), "csrf=1",
	} {
		f.Add(body, "application/x-www-form-urlencoded")
	}
	f.Add("token="+token, "text/plain")
	f.Add("token="+token, "application/x-www-form-urlencoded; charset=utf-8")
	logs := &bytes.Buffer{}
	ui, err := New(Options{Backend: &fakeBackend{page: demoPage()}, Logger: slog.New(slog.NewTextHandler(logs, nil)),
		Login: func(tok string) (string, Verdict) {
			switch tok {
			case token:
				return "admin", Admitted
			case agentToken:
				return "", AgentToken
			}
			return "", Wrong
		},
		FailureDelay: time.Microsecond})
	if err != nil {
		f.Fatal(err)
	}
	h := ui.Handler("/settings")
	f.Fuzz(func(t *testing.T, body, ctype string) {
		logs.Reset()
		r := httptest.NewRequest("POST", "/settings/login", strings.NewReader(body))
		r.Header.Set("Content-Type", ctype)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		var first string
		if vals, err := url.ParseQuery(body); err == nil && len(body) <= maxForm {
			first = strings.TrimSpace(vals.Get("token"))
		}
		admitted := w.Code == http.StatusSeeOther
		if admitted && (first != token || !strings.HasPrefix(ctype, "application/x-www-form-urlencoded")) {
			t.Fatalf("signed in with %q (%s)", body, ctype)
		}
		if admitted != (len(w.Result().Cookies()) == 1) {
			t.Fatalf("HTTP %d with cookies %v", w.Code, w.Result().Cookies())
		}
		if strings.Contains(w.Body.String(), token) || strings.Contains(logs.String(), token) {
			t.Fatalf("the admin token leaked for %q", body)
		}
	})
}
