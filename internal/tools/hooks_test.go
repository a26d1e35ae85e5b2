package tools

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/strict"
)

type hookArgs struct {
	Local  string `arg:"local"`
	Source string `arg:"source"`
	Data   string `arg:"data"`
}

// hookTool is one additive write using every hook a front or a preflight
// can run.
func hookTool(delivered *map[string]any) *Tool {
	w := Write[hookArgs, map[string]string]{
		Name: "put", Policy: strict.WritePolicy{Class: strict.Additive}, Scope: Scope[hookArgs]{None: true},
		Budget: func(*Env) int { return 64 << 10 },
		State: func(_ context.Context, _ *Env, a hookArgs) (map[string]string, error) {
			return map[string]string{"source": a.Source + a.Local}, nil
		},
		Notes: func(a hookArgs, st map[string]string) map[string]any {
			return map[string]any{"uploadSource": st["source"], "requestId": "must not replace the protocol's"}
		},
		Execute: func(context.Context, *Env, hookArgs, map[string]string) (Payload, error) {
			return Payload{"ok": true}, nil
		},
		Readback: func(context.Context, *Env, hookArgs, Payload) (any, error) {
			return map[string]string{"done": "yes"}, nil
		},
		Front: func(_ context.Context, _ *Env, fields map[string]json.RawMessage) error {
			var local string
			json.Unmarshal(fields["local"], &local)
			if local == "" {
				return nil
			}
			fields["source"] = json.RawMessage(`"staged:` + local + `"`)
			delete(fields, "local")
			return nil
		},
		Deliver: func(_ context.Context, _ *Env, a hookArgs, res map[string]any) (any, error) {
			res["delivered"] = true
			*delivered = res
			return res, nil
		},
	}
	return &Tool{Name: "hook", Actions: []*Action{w.Action()}}
}

// TestFrontAndDeliverHooks: a front rewrites the arguments before they go to
// the authority and completes the answer after.
func TestFrontAndDeliverHooks(t *testing.T) {
	var sent map[string]any
	var delivered map[string]any
	env := &Env{Delegate: func(_ context.Context, tool string, args json.RawMessage) (any, error) {
		json.Unmarshal(args, &sent)
		return map[string]any{"fromAuthority": true}, nil
	}, DelegateStrict: true}
	r, err := NewRegistry(env, hookTool(&delivered))
	if err != nil {
		t.Fatal(err)
	}
	v, err := r.Call(context.Background(), "hook", json.RawMessage(`{"action":"put","local":"/tmp/x","requestId":"abcd"}`))
	if err != nil {
		t.Fatal(err)
	}
	if sent["source"] != "staged:/tmp/x" || sent["local"] != nil || sent["requestId"] != "abcd" {
		t.Fatalf("the front did not rewrite the arguments: %v", sent)
	}
	if res := v.(map[string]any); res["delivered"] != true || res["fromAuthority"] != true || delivered == nil {
		t.Fatalf("the answer was not delivered: %v", v)
	}
}

// TestPreflightNotesAndBudget: notes join a preflight's answer without
// replacing its fields; an action's budget replaces the write cap.
func TestPreflightNotesAndBudget(t *testing.T) {
	l, err := strict.OpenLedger(filepath.Join(t.TempDir(), "ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var delivered map[string]any
	r, err := NewRegistry(&Env{Coordinator: strict.NewCoordinator(strict.CoordinatorConfig{Ledger: l}), MaxWriteBytes: 1 << 10}, hookTool(&delivered))
	if err != nil {
		t.Fatal(err)
	}
	v, err := r.Call(context.Background(), "hook", json.RawMessage(`{"action":"put","source":"staged:s1","validateOnly":true}`))
	if err != nil {
		t.Fatal(err)
	}
	pre := v.(map[string]any)
	if pre["uploadSource"] != "staged:s1" || pre["requestId"] == "must not replace the protocol's" {
		t.Fatalf("preflight answer: %v", pre)
	}
	// 2 KiB is over the server's 1 KiB cap and under the action's 64 KiB.
	big := strings.Repeat("x", 2<<10)
	if _, err := r.Call(context.Background(), "hook", json.RawMessage(`{"action":"put","source":"s","data":"`+big+`","validateOnly":true}`)); err != nil {
		t.Fatalf("the action's budget must apply: %v", err)
	}
	huge := strings.Repeat("x", 65<<10)
	_, err = r.Call(context.Background(), "hook", json.RawMessage(`{"action":"put","source":"s","data":"`+huge+`","validateOnly":true}`))
	if fe, ok := err.(*failure.Error); !ok || fe.Code != failure.InvalidArguments || !strings.Contains(fe.Message, "at most 65536") {
		t.Fatalf("over the action's budget: %v", err)
	}
}
