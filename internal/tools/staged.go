package tools

import (
	"context"

	"github.com/sisyphus-go/sisyphus/internal/strict"
)

// Stages declares a write that creates something in several kernel writes
// (a database: its block, its file, its columns): a staged creation (see
// strict.Plan). It replaces Execute. Every id the creation uses is chosen
// by Reserve before the first dispatch and kept in the ledger with the
// request, each step is recorded there once the kernel shows it, and a
// replay after a crash resumes from the last confirmed step instead of
// creating a second object.
type Stages[A, S any] struct {
	// Reserve chooses the ids (and anchors read from the state) the
	// creation uses; it must not call the kernel.
	Reserve func(a A, st S) (map[string]string, error)
	// Steps are the kernel writes, in order.
	Steps func(a A) []Step[A]
	// Receipt is the small receipt from the ids and the confirmed steps:
	// ids, counts, stage names, never content.
	Receipt func(a A, ids map[string]string, done []string) Payload
}

// Step is one kernel write of a staged creation.
type Step[A any] struct {
	Name string
	// Redo: sending the step again after an unconfirmed send cannot make
	// a second object (it creates a reserved id only if it is missing).
	Redo bool
	// Do writes once and returns the ids the kernel chose.
	Do func(ctx context.Context, env *Env, a A, ids map[string]string) (map[string]string, error)
	// Present reads whether the kernel shows the step applied (polling
	// briefly for a kernel that applies later).
	Present func(ctx context.Context, env *Env, a A, ids map[string]string) (bool, error)
}

// plan builds the coordinator's plan of one call; wait is the call's gate,
// awaited before every dispatch.
func (s *Stages[A, S]) plan(env *Env, a A, wait func() error) *strict.Plan {
	p := &strict.Plan{
		Reserve: func(state any) (map[string]string, error) {
			st, _ := state.(S)
			return s.Reserve(a, st)
		},
		Receipt: func(ids map[string]string, done []string) map[string]any { return s.Receipt(a, ids, done) },
		Gate:    wait,
	}
	for _, step := range s.Steps(a) {
		p.Stages = append(p.Stages, strict.Stage{Name: step.Name, Redo: step.Redo,
			Do: func(ctx context.Context, ids map[string]string) (map[string]string, error) {
				if err := wait(); err != nil {
					return nil, err
				}
				learned, err := step.Do(ctx, env, a, ids)
				return learned, agentSafe(err)
			},
			Present: func(ctx context.Context, ids map[string]string) (bool, error) {
				ok, err := step.Present(ctx, env, a, ids)
				return ok, agentSafe(err)
			},
		})
	}
	return p
}
