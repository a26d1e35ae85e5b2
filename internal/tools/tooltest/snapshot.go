package tooltest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/testvars"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// Snapshot compares a tool's agent-visible surface with
// testdata/toolsnaps/<tool>.json in the calling package: its name, title,
// description and annotations, its input schema (every action enabled,
// strict mode on), and each action's class, precondition, destructive,
// dangerous and default-off flags and help example. A
// change to any of them fails until the snapshot is regenerated on purpose:
//
//	SISYPHUS_UPDATE_TOOLSNAPS=1 go test ./internal/tools/...
func Snapshot(t *testing.T, tool *tools.Tool) {
	t.Helper()
	r, err := tools.NewRegistry(&tools.Env{}, tool)
	if err != nil {
		t.Fatal(err)
	}
	type action struct {
		Name         string         `json:"name"`
		Summary      string         `json:"summary"`
		Class        string         `json:"class"`
		Precondition string         `json:"precondition,omitempty"`
		Destructive  bool           `json:"destructive,omitempty"`
		Dangerous    bool           `json:"dangerous,omitempty"`
		OffByDefault bool           `json:"offByDefault,omitempty"`
		Example      map[string]any `json:"example"`
	}
	all := tools.View{Policy: tools.Unrestricted(), Strict: true}
	var actions []action
	for _, a := range tool.Actions {
		help, err := r.Call(context.Background(), tool.Name, json.RawMessage(`{"action":"help","topic":"`+a.Name+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		ex, _ := help.(map[string]any)["example"].(map[string]any)
		actions = append(actions, action{a.Name, a.Summary, a.Policy.Class.String(), string(a.Policy.Precondition), a.Destructive, a.Dangerous, a.OffByDefault, ex})
	}
	got, err := json.MarshalIndent(map[string]any{
		"name": tool.Name, "title": tool.Title, "description": tool.Description,
		"annotations": tool.Annotations(all), "inputSchema": tool.InputSchema(all), "actions": actions,
	}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "toolsnaps", tool.Name+".json")
	if testvars.UpdateToolSnap.On(t) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no snapshot of tool %s (%v): run %s=1 go test ./internal/tools/... and review the new file", tool.Name, err, testvars.UpdateToolSnap.Name)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("tool %s changed its agent-visible surface (names, schema, annotations, classes or examples) against %s.\n"+
			"If the change is intended, regenerate with %s=1 go test ./internal/tools/... and review the diff.\n%s",
			tool.Name, path, testvars.UpdateToolSnap.Name, diff(want, got))
	}
}

// diff shows the first differing line of two snapshots.
func diff(want, got []byte) string {
	w, g := bytes.Split(want, []byte("\n")), bytes.Split(got, []byte("\n"))
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b []byte
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if !bytes.Equal(a, b) {
			return "line " + itoa(i+1) + ":\n  snapshot: " + string(a) + "\n  now:      " + string(b)
		}
	}
	return ""
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
