package tooltest

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// WantAnswer fails t unless a call's outcome is what an agent may get: a
// result that encodes as JSON, or a typed failure (never a panic, never an
// untyped error). args names the call in the failure.
func WantAnswer(t testing.TB, args string, v any, err error) {
	t.Helper()
	if err != nil {
		var te *failure.Error
		if !errors.As(err, &te) || te.Code == "" {
			t.Fatalf("untyped failure for %q: %v", args, err)
		}
		return
	}
	if _, err := json.Marshal(v); err != nil {
		t.Fatalf("result does not encode: %v", err)
	}
}

// FuzzActions fuzzes the arguments of tool's actions through r: every seed
// (a JSON object of arguments) is tried with each action, and every answer
// must pass WantAnswer.
func FuzzActions(f *testing.F, r *tools.Registry, tool string, actions, seeds []string) {
	for _, s := range seeds {
		for i := range actions {
			f.Add(uint8(i), s)
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, args string) {
		var m map[string]any
		if json.Unmarshal([]byte(args), &m) != nil || m == nil {
			return
		}
		m["action"] = actions[int(which)%len(actions)]
		raw, _ := json.Marshal(m)
		v, err := r.Call(context.Background(), tool, raw)
		WantAnswer(t, string(raw), v, err)
	})
}
