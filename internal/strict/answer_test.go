package strict

import (
	"context"
	"testing"
)

// fields is an answer's JSON, for tests that read what the agent gets.
func fields(a Answer, err error) (map[string]any, error) { return a.Fields, err }

// TestAnswerSaysWhatItShows: the typed outcome of every kind of answer is
// the one its JSON shows the agent.
func TestAnswerSaysWhatItShows(t *testing.T) {
	ctx := context.Background()
	c, _ := newCoord(t, false)
	off, _ := newCoord(t, true)
	tg := &fakeTarget{"a"}
	op := guardedOp(tg, "b", nil)
	pre := op
	pre.ValidateOnly = true
	preflight, err := c.Do(ctx, pre)
	if err != nil {
		t.Fatal(err)
	}
	op.RequestID, op.Credential = preflight.Fields["requestId"].(string), preflight.Fields["expectedStateHash"].(string)
	commit, err := c.Do(ctx, op)
	if err != nil {
		t.Fatal(err)
	}
	replay, err := c.Do(ctx, op)
	if err != nil {
		t.Fatal(err)
	}
	direct, err := off.Do(ctx, guardedOp(tg, "c", nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		got      Answer
		status   Status
		replayed bool
	}{
		{"preflight", preflight, "", false},
		{"commit", commit, StatusCommitted, false},
		{"replay", replay, StatusCommitted, true},
		{"strict mode off", direct, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got.Status != tc.status || tc.got.Replayed != tc.replayed {
				t.Fatalf("answer %+v, want status %q replayed %v", tc.got, tc.status, tc.replayed)
			}
			if s, _ := tc.got.Fields["status"].(string); Status(s) != tc.status {
				t.Fatalf("the JSON shows status %q, the answer %q", s, tc.got.Status)
			}
			if r, _ := tc.got.Fields["replayed"].(bool); r != tc.replayed {
				t.Fatalf("the JSON shows replayed %v, the answer %v", r, tc.got.Replayed)
			}
		})
	}
}
