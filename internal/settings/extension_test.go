package settings

import (
	"slices"
	"testing"
)

// TestExtensionSettings: includeNativeTools is on unless set to false, and
// each field is read on its own, so a malformed one never widens another.
func TestExtensionSettings(t *testing.T) {
	for _, c := range []struct {
		tools   string
		native  bool
		blocked []string
	}{
		{`{}`, true, nil},
		{`{"extension":{"includeNativeTools":false}}`, false, nil},
		{`{"extension":{"includeNativeTools":true,"blockedTools":["sql","plugin__a__b"]}}`, true, []string{"sql", "plugin__a__b"}},
		{`{"extension":{"includeNativeTools":false,"blockedTools":"sql"}}`, false, nil},
		{`{"extension":{"includeNativeTools":"no"}}`, true, nil},
		{`{"extension":[1]}`, true, nil},
	} {
		m, why := object([]byte(c.tools))
		if why != "" {
			t.Fatal(why)
		}
		got := (&Config{tools: m}).Policy().Extension
		if got.NativeTools != c.native || !slices.Equal(got.Blocked, c.blocked) {
			t.Errorf("%s: %+v", c.tools, got)
		}
	}
}
