package tools

import (
	"context"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/strict"
)

func TestRegistryRefusesIncompleteActions(t *testing.T) {
	read := func(context.Context, *Env, any) (any, error) { return nil, nil }
	for _, tt := range []struct {
		name string
		act  *Action
		want string
	}{
		{"unclassified", &Action{Name: "y", run: read, none: true}, "not classified"},
		{"read without run", &Action{Name: "y", Policy: strict.WritePolicy{Class: strict.Read}, none: true}, "needs Run"},
		{"write without execute", &Action{Name: "y", Policy: strict.WritePolicy{Class: strict.Additive}, none: true}, "needs Execute"},
		{"guarded write without state", Write[NoArgs, struct{}]{Name: "y", Policy: strict.WritePolicy{Class: strict.Mutation, Precondition: strict.ExpectedStateHash},
			Scope:    Scope[NoArgs]{None: true},
			Execute:  func(context.Context, *Env, NoArgs, struct{}) (Payload, error) { return nil, nil },
			Readback: func(context.Context, *Env, NoArgs, Payload) (any, error) { return nil, nil }}.Action(), "needs State"},
		{"strict write without readback", Write[NoArgs, struct{}]{Name: "y", Policy: strict.WritePolicy{Class: strict.Additive}, Scope: Scope[NoArgs]{None: true},
			Execute: func(context.Context, *Env, NoArgs, struct{}) (Payload, error) { return nil, nil }}.Action(), "needs Readback"},
		{"write with both Executes", WriteWith[NoArgs, struct{}, int]{Write: Write[NoArgs, struct{}]{Name: "y", Policy: strict.WritePolicy{Class: strict.Additive}, Scope: Scope[NoArgs]{None: true},
			Readback: func(context.Context, *Env, NoArgs, Payload) (any, error) { return nil, nil }},
			Execute: func(context.Context, *Env, NoArgs, struct{}) (Payload, int, error) { return nil, 0, nil }}.Action(), "not the embedded Write's"},
		{"staged write with a handoff", WriteWith[NoArgs, struct{}, int]{Write: Write[NoArgs, struct{}]{Name: "y", Policy: strict.WritePolicy{Class: strict.Additive}, Scope: Scope[NoArgs]{None: true},
			Stages: &Stages[NoArgs, struct{}]{}},
			Readback: func(context.Context, *Env, NoArgs, Payload, int) (any, error) { return nil, nil }}.Action(), "hands nothing"},
		{"read without scope", Read[NoArgs]{Name: "y", Run: func(context.Context, *Env, NoArgs) (any, error) { return nil, nil }}.Action(), "Scope needs exactly one"},
		{"two scopes", Read[NoArgs]{Name: "y", Scope: Scope[NoArgs]{None: true, Global: true},
			Run: func(context.Context, *Env, NoArgs) (any, error) { return nil, nil }}.Action(), "Scope needs exactly one"},
	} {
		_, err := NewRegistry(&Env{}, &Tool{Name: "x", Actions: []*Action{tt.act}})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want %q", tt.name, err, tt.want)
		}
	}
	dup := Read[NoArgs]{Name: "y", Scope: Scope[NoArgs]{None: true}, Run: func(context.Context, *Env, NoArgs) (any, error) { return nil, nil }}
	if _, err := NewRegistry(&Env{}, &Tool{Name: "x", Actions: []*Action{dup.Action(), dup.Action()}}); err == nil {
		t.Error("an action declared twice must be refused")
	}
}
