package catalog

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/embedded"
	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// forwardedCases are calls of every tool the embedded kernel's MCP
// endpoint exposes through extension, keyed by action.
func forwardedCases(t *testing.T, s *tooltest.Fixture) map[string]map[string]any {
	outlined := s.MkDoc(t, s.NB, "/Outlined", "# Heading\n\ntext\n")
	return map[string]map[string]any{
		"search":  {"action": "fulltext", "query": "paragraph"},
		"outline": {"action": "get", "id": outlined},
		"ref":     {"action": "backlinks", "id": outlined},
		// Allowlisted reads the embedded kernel lists as SiYuan does but
		// answers with an error (see unbacked): it does not carry out
		// history, image and inbox, and repo list fails as SiYuan's does
		// without a data repo key.
		"history":                       {"action": "list"},
		"image":                         {"action": "list", "id": outlined},
		"inbox":                         {"action": "list"},
		"repo":                          {"action": "list"},
		embedded.ExamplePluginWordCount: {"id": s.Doc},
		embedded.ExamplePluginStamp:     {"id": s.Blocks[0], "value": "gate"},
	}
}

// unbacked are the forwarded natives the embedded kernel answers with an
// error result: past the gate, the call reaches the kernel and comes back
// as its tool's error.
var unbacked = map[string]bool{"history": true, "image": true, "inbox": true, "repo": true}

// discovered runs extension list and returns the forwarded actions.
func discovered(t *testing.T, s *tooltest.Fixture) []*tools.Action {
	t.Helper()
	s.OK(t, "extension", map[string]any{"action": "list", "refresh": true})
	ext, _ := s.R.Tool("extension")
	return ext.Dynamic.Actions(tools.Unrestricted())
}

// TestEveryForwardedActionChecksEveryNotebook: SiYuan's tools see the whole
// workspace, so a forwarded read needs every notebook readable and a
// forwarded tool with effects rw on every one (saying why); a hidden
// notebook refuses every forward before anything is sent, by a refusal
// that names no notebook.
func TestEveryForwardedActionChecksEveryNotebook(t *testing.T) {
	s := tooltest.NewStrict(t, false, testTools)
	cases := forwardedCases(t, s)
	acts := discovered(t, s)
	if len(acts) != len(cases) {
		t.Fatalf("exposed %d forwarded actions, have %d cases", len(acts), len(cases))
	}
	for _, a := range acts {
		c, ok := cases[a.Name]
		if !ok {
			t.Errorf("extension.%s has no case here", a.Name)
			continue
		}
		for _, level := range []tools.Level{tools.LevelNone, tools.LevelRead, tools.LevelWrite, tools.LevelDelete} {
			s.Policy = policyAt(s.NB, level)
			s.Policy.Default = max(level, tools.LevelRead) // every other notebook alike
			s.Policy.Extension.NativeTools = true
			_, err := s.Call(t, "extension", map[string]any{"action": a.Name, "arguments": c})
			denied := err != nil && err.Code == failure.PermissionDenied
			need := tools.LevelRead
			if a.Policy.Class != strict.Read {
				need = tools.LevelWrite
			}
			switch {
			case level < need && !denied:
				t.Errorf("%s at %s: got %v, want permission_denied", a.Name, level, err)
			case level == tools.LevelNone:
				if len(err.Details) != 0 || strings.Contains(err.Message, s.NB) || !strings.Contains(err.Message, "hidden") {
					t.Errorf("%s: the refusal names the hidden notebook or does not say why: %+v", a.Name, err)
				}
			case level < need:
				if err.Details["notebook"] == nil || err.Details["permission"] != level.String() || err.Details["requiredPermission"] != "rw" ||
					!strings.Contains(err.Message, "rw on every notebook") {
					t.Errorf("%s at %s: refusal %+v", a.Name, level, err)
				}
			case err != nil && !(unbacked[a.Name] && err.Code == failure.ExtensionToolError):
				t.Errorf("%s at %s: %v", a.Name, level, err)
			}
			if denied && a.Policy.Class != strict.Read && (err.WriteAttempted == nil || *err.WriteAttempted) {
				t.Errorf("%s: a refused external call must say writeAttempted:false: %+v", a.Name, err)
			}
		}
	}
}

// TestForwardedClasses: the allowlist and readOnlyHint decide the class;
// the external one is dangerous, refuses validateOnly without sending, and
// runs once with writeSafetyGuaranteed:false.
func TestForwardedClasses(t *testing.T) {
	s := tooltest.NewStrict(t, false, testTools)
	want := map[string]strict.Class{"search": strict.Read, "outline": strict.Read,
		"history": strict.Read, "image": strict.Read, "inbox": strict.Read, "ref": strict.Read, "repo": strict.Read,
		embedded.ExamplePluginWordCount: strict.Read, embedded.ExamplePluginStamp: strict.External}
	for _, a := range discovered(t, s) {
		if a.Policy.Class != want[a.Name] || a.Dangerous != (want[a.Name] == strict.External) {
			t.Errorf("%s: class %s dangerous %v", a.Name, a.Policy.Class, a.Dangerous)
		}
	}
	stamp := map[string]any{"action": embedded.ExamplePluginStamp, "arguments": map[string]any{"id": s.Blocks[0], "value": "v1"}}
	raw, _ := json.Marshal(stamp)
	if p, pending := s.R.Pending("extension", tools.Input{Raw: raw}); !pending || p.Action != embedded.ExamplePluginStamp {
		t.Fatalf("the external call needs confirmation: %+v %v", p, pending)
	}
	read, _ := json.Marshal(map[string]any{"action": "search", "arguments": map[string]any{"action": "fulltext", "query": "x"}})
	if _, pending := s.R.Pending("extension", tools.Input{Raw: read}); pending {
		t.Fatal("an allowlisted read needs no confirmation")
	}
	e := s.WantErr(t, "extension", tooltest.CopyArgs(stamp, "validateOnly", true), failure.PreflightUnavailable)
	if e.WriteAttempted == nil || *e.WriteAttempted {
		t.Fatalf("preflight refusal %+v", e)
	}
	if got := attr(t, s, s.Blocks[0]); got != "" {
		t.Fatalf("a refused preflight stamped the block: %q", got)
	}
	s.Unconfirmed = true
	s.WantErr(t, "extension", stamp, failure.ConfirmationRequired)
	s.Unconfirmed = false
	res := s.OK(t, "extension", stamp)
	if res["writeSafetyGuaranteed"] != false || res["writeAttempted"] != true {
		t.Fatalf("external answer %v", res)
	}
	if got := attr(t, s, s.Blocks[0]); got != "v1" {
		t.Fatalf("stamp = %q", got)
	}
}

func attr(t *testing.T, s *tooltest.Fixture, id string) string {
	t.Helper()
	attrs, err := s.C.GetBlockAttrs(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return attrs[embedded.StampAttr]
}

// TestNativeToolsFollowTheConfiguration: without includeNativeTools only
// plugin tools are exposed; a blocked tool is never; a native sub-action
// outside the allowlist is refused before anything is sent.
func TestNativeToolsFollowTheConfiguration(t *testing.T) {
	s := tooltest.NewStrict(t, false, testTools)
	discovered(t, s)
	ext, _ := s.R.Tool("extension")
	names := func(p *tools.Policy) []string {
		var out []string
		for _, a := range ext.Dynamic.Actions(p) {
			out = append(out, a.Name)
		}
		return out
	}
	s.Policy = &tools.Policy{Default: tools.LevelRead, Strict: true, Version: "v"}
	if got := names(s.Policy); !slices.Equal(got, []string{embedded.ExamplePluginStamp, embedded.ExamplePluginWordCount}) {
		t.Fatalf("without native tools: %v", got)
	}
	s.WantErr(t, "extension", map[string]any{"action": "search", "arguments": map[string]any{"action": "fulltext", "query": "x"}}, failure.ActionDisabled)
	list := s.OK(t, "extension", map[string]any{"action": "list"})
	if list["detailsIncluded"] != false || list["tools"] != nil || list["exposedCount"] != float64(2) {
		t.Fatalf("compact list: %v", list)
	}
	s.Policy.Extension = tools.ExtensionSettings{NativeTools: true, Blocked: []string{embedded.ExamplePluginWordCount}}
	if got := names(s.Policy); !slices.Equal(got, []string{"history", "image", "inbox", "outline", embedded.ExamplePluginStamp, "ref", "repo", "search"}) {
		t.Fatalf("with native tools, word_count blocked: %v", got)
	}
	s.WantErr(t, "extension", map[string]any{"action": embedded.ExamplePluginWordCount, "arguments": map[string]any{"id": s.Doc}}, failure.ActionDisabled)
	for _, args := range []map[string]any{{"action": "asset", "query": "x"}, {"query": "x"}, {"action": 3}} {
		e := s.WantErr(t, "extension", map[string]any{"action": "search", "arguments": args}, failure.NativeActionNotAllowed)
		if got, _ := e.Details["allowedActions"].([]string); !slices.Equal(got, []string{"semantic", "fulltext"}) {
			t.Errorf("%v: %v", args, e.Details)
		}
	}
	s.WantErr(t, "extension", map[string]any{"action": "notebook", "arguments": map[string]any{"action": "list"}}, failure.UnknownAction)
	s.WantErr(t, "extension", map[string]any{"action": "search"}, failure.InvalidArguments)
}

// TestForwardedHelpExamplesAreValid: each forwarded action's help shows
// the tool's own schema and an example that passes the allowlist.
func TestForwardedHelpExamplesAreValid(t *testing.T) {
	s := tooltest.NewStrict(t, false, testTools)
	for _, a := range discovered(t, s) {
		h := s.OK(t, "extension", map[string]any{"action": "help", "topic": a.Name})
		ex := h["example"].(map[string]any)
		if h["inputSchema"] == nil || h["source"] == nil || ex["arguments"] == nil {
			t.Errorf("%s help: %v", a.Name, h)
		}
		if a.Policy.Class == strict.External {
			if h["dangerous"] != true {
				t.Errorf("%s help does not say it is dangerous: %v", a.Name, h)
			}
			continue
		}
		if _, err := s.Call(t, "extension", ex); err != nil && (err.Code == failure.InvalidArguments || err.Code == failure.NativeActionNotAllowed) {
			t.Errorf("%s: its example %v is refused: %s", a.Name, ex, err.Message)
		}
	}
}
