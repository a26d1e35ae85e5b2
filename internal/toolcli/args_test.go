package toolcli

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/catalog"
)

// action is a declared action of the catalog, for tests that read real
// declarations.
func action(t testing.TB, tool, name string) (*tools.Tool, *tools.Action) {
	t.Helper()
	for _, tl := range catalog.All() {
		if tl.Name == tool {
			if a, ok := tl.Action(name); ok {
				return tl, a
			}
		}
	}
	t.Fatalf("no action %s.%s", tool, name)
	return nil, nil
}

func TestFlagName(t *testing.T) {
	for in, want := range map[string]string{
		"id": "id", "notebookID": "notebook-id", "blockIDs": "block-ids", "replace_all": "replace-all",
		"parentId": "parent-id", "avID": "av-id", "pageSize": "page-size", "expectedStateHash": "expected-state-hash",
		"hPath": "h-path", "createIfNotExist": "create-if-not-exist",
	} {
		if got := FlagName(in); got != want {
			t.Errorf("FlagName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParse(t *testing.T) {
	min1 := 1
	max5 := 5
	params := []tools.Param{
		{Name: "id", Type: tools.String},
		{Name: "notebookID", Type: tools.String},
		{Name: "mode", Type: tools.String, Enum: []string{"markdown", "html"}},
		{Name: "pageSize", Type: tools.Integer, Min: &min1, Max: &max5},
		{Name: "number", Type: tools.Number},
		{Name: "recursive", Type: tools.Boolean},
		{Name: "ids", Type: tools.Strings},
		{Name: "attrs", Type: tools.Object},
		{Name: "blocks", Type: tools.Objects},
		{Name: "date", Type: tools.TextOrNumber},
	}
	tests := []struct {
		name string
		argv []string
		want string // the arguments as JSON
		err  string
	}{
		{"kebab", []string{"--notebook-id", "n1"}, `{"notebookID":"n1"}`, ""},
		{"camel", []string{"--notebookID=n1"}, `{"notebookID":"n1"}`, ""},
		{"snake", []string{"--notebook_id", "n1"}, `{"notebookID":"n1"}`, ""},
		{"other case", []string{"--notebookId", "n1"}, `{"notebookID":"n1"}`, ""},
		{"bool bare", []string{"--recursive"}, `{"recursive":true}`, ""},
		{"bool false", []string{"--recursive=false"}, `{"recursive":false}`, ""},
		{"bool no", []string{"--no-recursive"}, `{"recursive":false}`, ""},
		{"bool bad", []string{"--recursive=maybe"}, "", "must be true or false"},
		{"no- with value", []string{"--no-recursive=true"}, "", "takes no value"},
		{"int", []string{"--page-size", "3"}, `{"pageSize":3}`, ""},
		{"int not a number", []string{"--page-size", "three"}, "", "must be an integer"},
		{"int out of bounds", []string{"--page-size", "9"}, "", "between 1 and 5"},
		{"number", []string{"--number", "2.5"}, `{"number":2.5}`, ""},
		{"number NaN", []string{"--number", "NaN"}, "", "must be a number"},
		{"enum", []string{"--mode", "html"}, `{"mode":"html"}`, ""},
		{"enum refused", []string{"--mode", "pdf"}, "", "one of markdown, html"},
		{"array repeated", []string{"--ids", "a", "--ids", "b"}, `{"ids":["a","b"]}`, ""},
		{"array commas", []string{"--ids", "a, b,c"}, `{"ids":["a","b","c"]}`, ""},
		{"array json", []string{"--ids-json", `["a,b"]`}, `{"ids":["a,b"]}`, ""},
		{"array json not array", []string{"--ids-json", `"a"`}, "", "want a JSON array"},
		{"object json", []string{"--attrs-json", `{"name":"x"}`}, `{"attrs":{"name":"x"}}`, ""},
		{"object plain", []string{"--attrs", `{"name":"x"}`}, `{"attrs":{"name":"x"}}`, ""},
		{"object not json", []string{"--attrs", "name=x"}, "", "want a JSON object"},
		{"objects repeated", []string{"--blocks", `{"a":1}`, "--blocks-json", `[{"b":2}]`}, `{"blocks":[{"a":1},{"b":2}]}`, ""},
		{"text or number", []string{"--date", "1700000000000"}, `{"date":1700000000000}`, ""},
		{"text or number text", []string{"--date", "2026-01-02"}, `{"date":"2026-01-02"}`, ""},
		{"unknown with suggestion", []string{"--notebok-id", "x"}, "", "unknown flag --notebok-id (did you mean --notebook-id?)"},
		{"unknown synonym", []string{"--block-id", "x"}, "", "did you mean --id?"},
		{"unknown", []string{"--zzz", "x"}, "", "unknown flag --zzz"},
		{"twice", []string{"--id", "a", "--id", "b"}, "", "--id is given twice"},
		{"missing value", []string{"--id"}, "", "--id needs a value"},
		{"positional", []string{"abc"}, "", `unexpected argument "abc"`},
		{"value looks like a flag", []string{"--id", "--x"}, `{"id":"--x"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(params, tt.argv)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var want map[string]any
			json.Unmarshal([]byte(tt.want), &want)
			b, _ := json.Marshal(got)
			var gotJSON map[string]any
			json.Unmarshal(b, &gotJSON)
			if !reflect.DeepEqual(gotJSON, want) {
				t.Fatalf("got %s, want %s", b, tt.want)
			}
		})
	}
}

// TestParseDeclared reads real declarations: upstream's spellings the
// declarations accept (hidden arguments) are flags too, the advertised one
// winning a shared kebab spelling; the arguments the command line builds
// are accepted by the action's own binding.
func TestParseDeclared(t *testing.T) {
	tests := []struct {
		tool, action string
		argv         []string
		want         string
	}{
		{"block", "update", []string{"--id", "20260812120000-abcdefg", "--data", "x", "--data-type", "markdown"},
			`{"id":"20260812120000-abcdefg","data":"x","dataType":"markdown"}`},
		{"block", "move", []string{"--ids", "20260812120000-aaaaaaa,20260812120000-bbbbbbb", "--previous-id", "20260812120000-abcdefg"},
			`{"ids":["20260812120000-aaaaaaa","20260812120000-bbbbbbb"],"previousID":"20260812120000-abcdefg"}`},
		{"block", "update", []string{"--id", "20260812120000-abcdefg", "--data", "x", "--expected-hash", "ab12", "--request-id", "1234"},
			`{"id":"20260812120000-abcdefg","data":"x","expectedHash":"ab12","requestId":"1234"}`},
		{"document", "get_doc", []string{"--id", "20260812120000-abcdefg", "--no-include-block-ids", "--block-limit", "3"},
			`{"id":"20260812120000-abcdefg","includeBlockIds":false,"blockLimit":3}`},
	}
	for _, tt := range tests {
		_, a := action(t, tt.tool, tt.action)
		got, err := Parse(a.Arguments(), tt.argv)
		if err != nil {
			t.Errorf("%s.%s %v: %v", tt.tool, tt.action, tt.argv, err)
			continue
		}
		var want map[string]any
		json.Unmarshal([]byte(tt.want), &want)
		b, _ := json.Marshal(got)
		var gotJSON map[string]any
		json.Unmarshal(b, &gotJSON)
		if !reflect.DeepEqual(gotJSON, want) {
			t.Errorf("%s.%s: got %s, want %s", tt.tool, tt.action, b, tt.want)
			continue
		}
		got["action"] = a.Name
		raw, _ := json.Marshal(got)
		if _, err := a.ParseArgs(raw); err != nil {
			t.Errorf("%s.%s: the action refuses the arguments the flags made: %v", tt.tool, tt.action, err)
		}
	}
}

// TestEveryArgumentIsAFlag: every argument of every action has a flag
// that finds it, and no two advertised arguments of one action share one.
func TestEveryArgumentIsAFlag(t *testing.T) {
	for _, tl := range catalog.All() {
		for _, a := range tl.Actions {
			seen := map[string]string{}
			for _, p := range a.Arguments() {
				got, ok := Lookup(a.Arguments(), p.Name)
				if !ok || got.Name != p.Name {
					t.Errorf("%s.%s: --%s finds %q", tl.Name, a.Name, p.Name, got.Name)
				}
				if p.Hidden() {
					continue
				}
				f := FlagName(p.Name)
				if other, dup := seen[f]; dup {
					t.Errorf("%s.%s: %s and %s are both --%s", tl.Name, a.Name, other, p.Name, f)
				}
				seen[f] = p.Name
				if got, ok := Lookup(a.Arguments(), f); !ok || got.Name != p.Name {
					t.Errorf("%s.%s: --%s finds %q, want %s", tl.Name, a.Name, f, got.Name, p.Name)
				}
			}
		}
	}
}

func FuzzParse(f *testing.F) {
	_, a := action(f, "block", "update")
	params := a.Arguments()
	f.Add("--id\x0020260812120000-abcdefg\x00--data\x00x")
	f.Add("--no-validate-only\x00--items-json\x00[{}]")
	f.Add("--data=\x00--data-type\x00dom")
	f.Fuzz(func(t *testing.T, s string) {
		got, err := Parse(params, strings.Split(s, "\x00"))
		if err != nil {
			return
		}
		if _, err := json.Marshal(got); err != nil {
			t.Fatalf("arguments that do not encode: %v", err)
		}
	})
}

func TestTakesValue(t *testing.T) {
	params := []tools.Param{{Name: "data", Type: tools.String}, {Name: "recursive", Type: tools.Boolean}, {Name: "ids", Type: tools.Strings}}
	for arg, want := range map[string]bool{
		"--data": true, "--data=x": false, "--recursive": false, "--no-recursive": false, "--recursive-json": true,
		"--ids": true, "--ids-json": true, "--nope": false, "data": false, "-h": false,
	} {
		if got := TakesValue(params, arg); got != want {
			t.Errorf("TakesValue(%q) = %v, want %v", arg, got, want)
		}
	}
}
