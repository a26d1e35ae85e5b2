package catalog

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// upstreamForms is testdata/upstream-0.6.8.json: what the plugin most
// agents were written for documents, for the actions it shares with this
// project.
type upstreamForms struct {
	Version string `json:"version"`
	// Arguments maps "tool.action" to every argument upstream's schema
	// declares for it, each with a value of upstream's type.
	Arguments map[string]map[string]any `json:"arguments"`
	// SkillExamples are the calls upstream's published skills show.
	SkillExamples []struct {
		Skill     string         `json:"skill"`
		Tool      string         `json:"tool"`
		Arguments map[string]any `json:"arguments"`
	} `json:"skillExamples"`
}

func loadUpstreamForms(t *testing.T) upstreamForms {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "upstream-0.6.8.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f upstreamForms
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

// placeholderID is a placeholder that stands for a SiYuan id: <id>,
// <doc-id>, <block-or-doc-id>, <resolved-parent-id>...
var placeholderID = regexp.MustCompile(`^<([a-z-]*-)?id>$`)

// fillIDs replaces every id placeholder in v with a well-formed SiYuan id,
// so that binding checks the argument names and shapes, not the ids.
func fillIDs(v any) any {
	switch v := v.(type) {
	case string:
		if placeholderID.MatchString(v) {
			return "20260812120000-abcdefg"
		}
		if v == "<resolved-template-path>" {
			return "daily.md" // what list_templates answers
		}
		return strings.ReplaceAll(v, "<id>", "20260812120000-abcdefg") // inside a storage path
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = fillIDs(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = fillIDs(e)
		}
		return out
	}
	return v
}

// refusesForm reports whether err is a refusal of an argument's name or
// shape: the refusals an agent written for upstream must never meet.
// Other refusals (a missing argument, a rule between arguments) are the
// call's, not the form's.
func refusesForm(err error, names ...string) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	if strings.Contains(msg, "does not take") || strings.Contains(msg, "no action") {
		return true
	}
	for _, n := range names {
		if strings.Contains(msg, fmt.Sprintf("argument %q must", n)) || strings.Contains(msg, fmt.Sprintf("argument %q is", n)) {
			return true
		}
	}
	return false
}

func toolsByName() map[string]*tools.Tool {
	m := map[string]*tools.Tool{}
	for _, tl := range All() {
		m[tl.Name] = tl
	}
	return m
}

// TestUpstreamArguments binds, one at a time, every argument upstream
// 0.6.8's schema declares for an action this project shares, with a value
// of upstream's type: none may be refused for its name or its shape (an
// agent written for upstream would fail here). Undeclared names stay
// refused (TestUpstreamTyposStillRefused).
func TestUpstreamArguments(t *testing.T) {
	f := loadUpstreamForms(t)
	byName := toolsByName()
	keys := make([]string, 0, len(f.Arguments))
	for k := range f.Arguments {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		toolName, actionName, _ := strings.Cut(key, ".")
		tl := byName[toolName]
		if tl == nil {
			t.Errorf("%s: no tool %s", key, toolName)
			continue
		}
		a, ok := tl.Action(actionName)
		if !ok {
			t.Errorf("%s: no action %s", key, actionName)
			continue
		}
		for name, v := range f.Arguments[key] {
			raw, err := json.Marshal(map[string]any{name: fillIDs(v)})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.ParseArgs(raw); refusesForm(err, name) {
				t.Errorf("%s refuses upstream's %s: %v", key, raw, err)
			}
		}
	}
}

// TestUpstreamSkillExamples binds every call upstream's published MCP
// skills show, whole: action names and argument names and shapes as an
// agent following those skills sends them.
func TestUpstreamSkillExamples(t *testing.T) {
	f := loadUpstreamForms(t)
	if len(f.SkillExamples) == 0 {
		t.Fatal("no skill examples")
	}
	byName := toolsByName()
	for _, ex := range f.SkillExamples {
		args := fillIDs(ex.Arguments).(map[string]any)
		tl := byName[ex.Tool]
		if tl == nil {
			t.Errorf("%s: no tool %s", ex.Skill, ex.Tool)
			continue
		}
		name, _ := args["action"].(string)
		a, ok := tl.Action(name)
		if !ok {
			t.Errorf("%s: %s has no action %s", ex.Skill, ex.Tool, name)
			continue
		}
		raw, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for k := range args {
			names = append(names, k)
		}
		if _, err := a.ParseArgs(raw); refusesForm(err, names...) {
			t.Errorf("%s: %s %s refused: %v", ex.Skill, ex.Tool, raw, err)
		}
	}
}

// TestUpstreamTyposStillRefused: accepting upstream's names must not make
// the binding lenient. A misspelt argument is refused with the name the
// action declares.
func TestUpstreamTyposStillRefused(t *testing.T) {
	byName := toolsByName()
	cases := []struct{ tool, action, args, meant string }{
		{"block", "replace", `{"id":"20260812120000-abcdefg","edits":{"old":"a","new":"b"}}`, "edit"},
		{"av", "set_cells", `{"avID":"20260812120000-abcdefg","cell":[]}`, "cells"},
		{"document", "move", `{"fromPath":["/a.sy"],"toNotebook":"20260812120000-abcdefg","toPath":"/"}`, "fromPaths"},
		{"file", "create_template", `{"path":"a.md","markdwn":"x"}`, "markdown"},
		{"search", "search_assets", `{"kk":"x"}`, "k"},
	}
	for _, c := range cases {
		a, ok := byName[c.tool].Action(c.action)
		if !ok {
			t.Fatalf("%s.%s missing", c.tool, c.action)
		}
		_, err := a.ParseArgs(json.RawMessage(c.args))
		if err == nil || !strings.Contains(err.Error(), "does not take") || !strings.Contains(err.Error(), c.meant) {
			t.Errorf("%s.%s %s: %v, want a refusal naming %s", c.tool, c.action, c.args, err, c.meant)
		}
	}
}
