package toolcli

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/catalog"
)

// TestHelpOfEveryAction: every tool's and action's help is written, names
// its flags as the command line spells them, and its example, read back as
// flags, is the example the tool's own help gives.
func TestHelpOfEveryAction(t *testing.T) {
	for _, tl := range catalog.All() {
		var b bytes.Buffer
		if err := ToolHelp(&b, tl); err != nil {
			t.Fatalf("%s: %v", tl.Name, err)
		}
		for _, a := range tl.Actions {
			if !strings.Contains(b.String(), "  "+a.Name+" ") {
				t.Errorf("%s help lacks %s:\n%s", tl.Name, a.Name, b.String())
			}
			var ab bytes.Buffer
			if err := ActionHelp(&ab, tl, a); err != nil {
				t.Fatalf("%s.%s: %v", tl.Name, a.Name, err)
			}
			for _, f := range Flags(a) {
				if strings.HasPrefix(f, "--no-") || f == "--help" {
					continue
				}
				if !strings.Contains(ab.String(), "  "+f+" ") && !strings.Contains(ab.String(), "  "+f+"\t") && !strings.Contains(ab.String(), "  "+f+"  ") {
					t.Errorf("%s.%s help lacks %s:\n%s", tl.Name, a.Name, f, ab.String())
				}
			}
			v, err := tl.Help(a.Name)
			if err != nil {
				t.Fatal(err)
			}
			ex := asMap(asMap(v)["example"])
			got, err := Parse(a.Arguments(), exampleArgs(ex))
			if err != nil {
				t.Errorf("%s.%s: the example's flags %q do not parse: %v", tl.Name, a.Name, exampleArgs(ex), err)
				continue
			}
			want := map[string]any{}
			for k, v := range ex {
				if k != "action" && !isControl(k) {
					if p, ok := Lookup(a.Arguments(), k); ok && p.Type == tools.OneOrObjects {
						if _, isList := v.([]any); !isList {
							v = []any{v} // one object is a list of one
						}
					}
					want[k] = v
				}
			}
			wb, _ := json.Marshal(want)
			want = nil
			json.Unmarshal(wb, &want)
			gb, _ := json.Marshal(got)
			var gotJSON map[string]any
			json.Unmarshal(gb, &gotJSON)
			if !reflect.DeepEqual(gotJSON, want) && len(want) > 0 {
				t.Errorf("%s.%s: example read back as %s, want %s", tl.Name, a.Name, gb, wb)
			}
		}
	}
}

func TestShort(t *testing.T) {
	for in, want := range map[string]string{
		"Read and change SiYuan blocks: kramdown": "Read and change SiYuan blocks",
		"SiYuan's tags (#a# in text; a/b): list":  "SiYuan's tags (#a# in text; a/b)",
		"Bridge to SiYuan (3.7.0+).":              "Bridge to SiYuan (3.7.0+)",
	} {
		if got := Short(in); got != want {
			t.Errorf("Short(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestExampleQuotes(t *testing.T) {
	got := Example("block", map[string]any{"action": "update", "id": "20260812120000-abcdefg", "data": "it's new", "validateOnly": true})
	want := `sisyphus block update --data 'it'\''s new' --id 20260812120000-abcdefg`
	if got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
}
