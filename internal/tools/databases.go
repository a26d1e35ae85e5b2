package tools

import (
	"context"
	"fmt"
	"slices"
)

// A database (attribute view) belongs to no notebook of its own: it is in
// the notebooks whose documents show it with a database block. To a call
// it is in the notebooks it may see among those; one shown only where the
// call may not look is, to the call, a database that does not exist.

// VisibleBlocks are the blocks of ids the call may see, in their order
// (every one of them, and nothing looked up, without a hidden notebook).
func VisibleBlocks(ctx context.Context, env *Env, ids []string) ([]string, error) {
	seen, err := Seen(ctx, env, ids)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(slices.Clone(ids), func(b string) bool { return !seen[b] }), nil
}

// DatabaseBlocks are the database blocks showing the database avID that
// the call may see, in SiYuan's order.
func DatabaseBlocks(ctx context.Context, env *Env, avID string) ([]string, error) {
	blocks, err := env.Kernel.GetMirrorDatabaseBlocks(ctx, avID)
	if err != nil {
		return nil, fmt.Errorf("find the blocks showing database %s: %w", avID, err)
	}
	return VisibleBlocks(ctx, env, blocks)
}

// ShownDatabases answers whether the call may see a database: whether a
// database block it may see shows it. Each database is looked up once per
// ShownDatabases (one call's worth: what the call may see does not change
// during it). Without a hidden notebook every database is shown and
// nothing is looked up. It is not safe for concurrent use.
type ShownDatabases struct {
	env   *Env
	known map[string]bool
}

// NewShownDatabases starts the answers of one call.
func NewShownDatabases(env *Env) *ShownDatabases {
	return &ShownDatabases{env: env, known: map[string]bool{}}
}

// Shown reports whether the call may see the database avID.
func (s *ShownDatabases) Shown(ctx context.Context, avID string) (bool, error) {
	if !Hiding(ctx) {
		return true, nil
	}
	if v, ok := s.known[avID]; ok {
		return v, nil
	}
	blocks, err := DatabaseBlocks(ctx, s.env, avID)
	if err != nil {
		return false, err
	}
	s.known[avID] = len(blocks) > 0
	return len(blocks) > 0, nil
}
