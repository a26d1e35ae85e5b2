package settingsui

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestFeedbackEndpointForm: the feedback form sets the endpoint, the
// second button removes it, the page shows the one set, and a refused URL
// says why.
func TestFeedbackEndpointForm(t *testing.T) {
	for _, c := range []struct {
		name, endpoint, flash string
	}{
		{"set", " https://example.org/fb ", "Saved: the feedback endpoint is now https://example.org/fb."},
		{"remove", "", "Saved: feedback is now off (nothing is sent)."},
	} {
		t.Run(c.name, func(t *testing.T) {
			hs := newHarness(t, "/settings")
			cookie, csrf := hs.signIn()
			w := hs.do(req{method: "POST", path: "/settings/feedback", form: url.Values{"endpoint": {c.endpoint}, "csrf": {csrf}}, cookie: cookie})
			if w.Code != http.StatusSeeOther {
				t.Fatalf("HTTP %d", w.Code)
			}
			got := hs.be.applied()
			if len(got) != 1 || got[0].ch.FeedbackURL == nil || *got[0].ch.FeedbackURL != strings.TrimSpace(c.endpoint) || got[0].ch.Strict != nil {
				t.Fatalf("applied %+v", got)
			}
			page := hs.do(req{method: "GET", path: "/settings", cookie: cookie}).Body.String()
			if !strings.Contains(page, `role="status"><p>`+c.flash+`</p>`) {
				t.Fatalf("no confirmation %q in:\n%s", c.flash, page)
			}
		})
	}
	hs := newHarness(t, "/settings")
	cookie, csrf := hs.signIn()
	if page := hs.do(req{method: "GET", path: "/settings", cookie: cookie}).Body.String(); !strings.Contains(page, "None is set: agents' feedback is not sent anywhere.") ||
		strings.Contains(page, "Send feedback nowhere") {
		t.Fatalf("page without an endpoint:\n%s", page)
	}
	hs.be.mu.Lock()
	cfg := *hs.be.page.Config
	cfg.FeedbackEndpoint = "https://example.org/fb"
	hs.be.page.Config = &cfg
	hs.be.applyErr = errors.New("the feedback endpoint must be http or https")
	hs.be.mu.Unlock()
	page := hs.do(req{method: "GET", path: "/settings", cookie: cookie}).Body.String()
	if !strings.Contains(page, `value="https://example.org/fb"`) || !strings.Contains(page, "Send feedback nowhere") {
		t.Fatalf("page with an endpoint:\n%s", page)
	}
	hs.do(req{method: "POST", path: "/settings/feedback", form: url.Values{"endpoint": {"ftp://x"}, "csrf": {csrf}}, cookie: cookie})
	if page := hs.do(req{method: "GET", path: "/settings", cookie: cookie}).Body.String(); !strings.Contains(page, "Not saved: the feedback endpoint could not be set to ftp://x.") {
		t.Fatalf("refusal not shown:\n%.2000s", page)
	}
}
