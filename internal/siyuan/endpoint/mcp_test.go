package endpoint

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestNativeMCPTools: the declaration is SiYuan's list: native tools, each
// with an object input schema, sorted by name as SiYuan's registry lists
// them, names unique.
func TestNativeMCPTools(t *testing.T) {
	var tools []struct {
		Name        string          `json:"name"`
		Source      string          `json:"source"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	if err := json.Unmarshal(NativeMCPTools(), &tools); err != nil {
		t.Fatal(err)
	}
	if len(tools) != 32 {
		t.Errorf("%d tools, want SiYuan 3.7.3's 32", len(tools))
	}
	var names []string
	for _, tl := range tools {
		var schema struct {
			Type string `json:"type"`
		}
		if tl.Source != "native" || json.Unmarshal(tl.InputSchema, &schema) != nil || schema.Type != "object" {
			t.Errorf("%s: source %q, schema %s", tl.Name, tl.Source, tl.InputSchema)
		}
		names = append(names, tl.Name)
	}
	if !slices.IsSorted(names) || len(slices.Compact(slices.Clone(names))) != len(names) {
		t.Errorf("names not sorted or repeated: %s", strings.Join(names, " "))
	}
}
