package settings

import (
	"context"
	"strings"
	"testing"
)

func TestFeedbackEndpoint(t *testing.T) {
	c := kernel(t)
	put(t, c, ToolsFile, `{"feedback":{"enabled":true,"actions":{"submit":true}},"custom":1}`)
	s := NewStore(c)
	ctx := context.Background()
	cfg, err := s.Load(ctx)
	if err != nil || cfg.FeedbackURL() != "" || cfg.Policy().FeedbackURL != "" {
		t.Fatalf("no endpoint: %v %q", err, cfg.FeedbackURL())
	}
	u := "https://example.org/hook?k=1"
	cfg, err = s.Apply(ctx, Change{FeedbackURL: &u})
	if err != nil || cfg.FeedbackURL() != u || cfg.Policy().FeedbackURL != u {
		t.Fatalf("set: %v %q", err, cfg.FeedbackURL())
	}
	stored := get(t, c, ToolsFile)
	if !strings.Contains(stored, `"endpoint": "https://example.org/hook?k=1"`) || !strings.Contains(stored, `"submit": true`) || !strings.Contains(stored, `"custom": 1`) {
		t.Errorf("stored: %s", stored)
	}
	off := ""
	if cfg, err = s.Apply(ctx, Change{FeedbackURL: &off}); err != nil || cfg.FeedbackURL() != "" || strings.Contains(get(t, c, ToolsFile), "endpoint") {
		t.Fatalf("off: %v %s", err, get(t, c, ToolsFile))
	}
	for _, bad := range []string{"ftp://x/y", "example.org/x", "https://user:pw@example.org/", "http://", "/relative"} {
		if _, err := s.Apply(ctx, Change{FeedbackURL: &bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	on := true
	if err := (Change{FeedbackURL: &u, Strict: &on}).Validate(); err == nil {
		t.Error("two changes at once accepted")
	}
}
