package settings

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/apps"
)

// TestParseApps: on by default; enabled and actions switch; what cannot
// be read stays at its default.
func TestParseApps(t *testing.T) {
	tl, _ := apps.Lookup("timeline")
	for _, tc := range []struct {
		raw       string
		on        bool
		enabled   []string
		rollbackB bool
	}{
		{``, true, tl.Actions, true},
		{`[]`, true, tl.Actions, true},
		{`{"timeline":{"enabled":false}}`, false, []string{}, false},
		{`{"timeline":{"enabled":"no","actions":{"rollback_block":false}}}`, true, []string{"list_nodes", "create_node", "compare_node", "delete_node", "rollback_document"}, false},
		{`{"timeline":{"actions":{"rollback_block":true,"create_node":1}}}`, true, tl.Actions, true},
		{`{"timeline":7,"flashcardReview":{"enabled":false}}`, true, tl.Actions, true},
	} {
		s := parseApps(json.RawMessage(tc.raw))
		got := s.Enabled(tl)
		if s.On("timeline") != tc.on || strings.Join(got, ",") != strings.Join(tc.enabled, ",") || s.ActionOn("timeline", "rollback_block") != tc.rollbackB {
			t.Errorf("%s: on %t, enabled %v, rollback_block %t", tc.raw, s.On("timeline"), got, s.ActionOn("timeline", "rollback_block"))
		}
	}
	if parseApps(json.RawMessage(`{"flashcardReview":{"enabled":false}}`)).On("flashcardReview") {
		t.Error("flashcardReview switched off is on")
	}
}

// FuzzParseApps: whatever mcpApps holds is read without a panic, and
// an App it does not name stays on.
func FuzzParseApps(f *testing.F) {
	f.Add([]byte(`{"timeline":{"enabled":false,"actions":{"rollback_block":false}}}`))
	f.Add([]byte(`{"timeline":{"actions":[]}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		s := parseApps(raw)
		if !strings.Contains(string(raw), "flashcardReview") && !strings.Contains(string(raw), `\u`) && !s.On("flashcardReview") {
			t.Errorf("%s switched flashcardReview off", raw)
		}
		for _, a := range apps.All() {
			s.Enabled(a)
		}
	})
}
