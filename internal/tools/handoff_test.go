package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/strict"
)

// handoffArgs are the arguments of the handoff tests' write.
type handoffArgs struct {
	Key  string `arg:"key"`
	Text string `arg:"text"`
}

// store is a fake kernel of the handoff tests: what a write stored, by key.
type store map[string]string

// handoffTool is one additive write that stores its text upper-cased, as
// a kernel that respells what it is sent, and hands its readback the
// text it applied; drop makes the "kernel" acknowledge without storing.
func handoffTool(kernel store, drop *bool) *Tool {
	w := WriteWith[handoffArgs, struct{}, string]{
		Write: Write[handoffArgs, struct{}]{
			Name: "put", Policy: strict.WritePolicy{Class: strict.Additive}, Scope: Scope[handoffArgs]{None: true},
		},
		Execute: func(_ context.Context, _ *Env, a handoffArgs, _ struct{}) (Payload, string, error) {
			applied := strings.ToUpper(a.Text)
			if !*drop {
				kernel[a.Key] = applied
			}
			return Payload{"key": a.Key}, applied, nil
		},
		Readback: func(_ context.Context, _ *Env, a handoffArgs, _ Payload, applied string) (any, error) {
			if got := kernel[a.Key]; got != applied {
				return nil, fmt.Errorf("%s holds %q, want %q", a.Key, got, applied)
			}
			return kernel[a.Key], nil
		},
	}
	return &Tool{Name: "handoff", Actions: []*Action{w.Action()}}
}

// TestWriteWithHandsReadbackItsCall: each commit's readback checks what
// its own Execute applied, so a write the kernel acknowledged but did not
// store is readback_mismatch, never a commit verified against nothing.
func TestWriteWithHandsReadbackItsCall(t *testing.T) {
	l, err := strict.OpenLedger(filepath.Join(t.TempDir(), "ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	kernel, drop := store{}, false
	r, err := NewRegistry(&Env{Coordinator: strict.NewCoordinator(strict.CoordinatorConfig{Ledger: l})}, handoffTool(kernel, &drop))
	if err != nil {
		t.Fatal(err)
	}
	commit := func(key, text string) (map[string]any, error) {
		t.Helper()
		call := fmt.Sprintf(`{"action":"put","key":%q,"text":%q`, key, text)
		v, err := r.Call(t.Context(), "handoff", json.RawMessage(call+`,"validateOnly":true}`))
		if err != nil {
			t.Fatal(err)
		}
		id := v.(map[string]any)["requestId"].(string)
		v, err = r.Call(t.Context(), "handoff", json.RawMessage(call+`,"requestId":"`+id+`"}`))
		m, _ := v.(map[string]any)
		return m, err
	}
	for _, c := range []struct {
		name, key, text string
		drop            bool
		wantErr         failure.Code
	}{
		{"stored: verified", "a", "one", false, ""},
		{"another call hands its own text", "b", "two", false, ""},
		{"acknowledged, not stored", "c", "three", true, failure.ReadbackMismatch},
		{"not stored over an older value", "a", "four", true, failure.ReadbackMismatch},
	} {
		t.Run(c.name, func(t *testing.T) {
			drop = c.drop
			res, err := commit(c.key, c.text)
			var fe *failure.Error
			switch {
			case c.wantErr == "" && (err != nil || res["status"] != string(strict.StatusCommitted)):
				t.Fatalf("commit = %v, %v; want committed", res, err)
			case c.wantErr != "" && (!errors.As(err, &fe) || fe.Code != c.wantErr):
				t.Fatalf("commit = %v, %v; want %s", res, err, c.wantErr)
			}
			for k := range res {
				if strings.HasPrefix(k, "_") || res[k] == strings.ToUpper(c.text) {
					t.Fatalf("what Execute handed the readback reached the answer: %v", res)
				}
			}
		})
	}
}

// TestWriteWithReadbackNeedsItsHandoff: a readback handed nothing, or a
// value of another type, fails instead of checking a zero value.
func TestWriteWithReadbackNeedsItsHandoff(t *testing.T) {
	kernel, drop := store{"k": ""}, false
	rb := handoffTool(kernel, &drop).Actions[0].write.readback
	parsed := handoffArgs{"k", "x"}
	for _, handed := range []any{nil, 42} {
		if _, err := rb(t.Context(), &Env{}, parsed, Payload{}, handed); err == nil || !strings.Contains(err.Error(), "readback was handed") {
			t.Errorf("handed %v: %v, want a failed readback", handed, err)
		}
	}
	if _, err := rb(t.Context(), &Env{}, parsed, Payload{}, ""); err != nil {
		t.Errorf("handed what Execute hands: %v", err)
	}
}
