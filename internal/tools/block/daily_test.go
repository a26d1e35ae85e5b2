package block

import (
	"context"
	"slices"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

func TestAddToDailyNote(t *testing.T) {
	s := tooltest.NewStrict(t, false, testTools)
	ctx := context.Background()
	for _, c := range []struct {
		position, data string
		blocks         int
	}{
		{"append", "appended **x**", 1},
		{"prepend", "first\n\nsecond", 2},
		{"append", "- a\n- b", 1},
	} {
		args := map[string]any{"action": "add_to_daily_note", "notebook": s.NB, "data": c.data, "dataType": "markdown", "position": c.position}
		pre := s.Preflight(t, "block", args, "", 1)
		res := s.Commit(t, "block", args, pre)
		ids, _ := res["ids"].([]any)
		note, _ := res["note"].(string)
		if len(ids) != c.blocks || note == "" {
			t.Fatalf("%s: %v", c.position, res)
		}
		kids := s.Kids(t, note)
		at := len(kids) - len(ids)
		if c.position == "prepend" {
			at = 0
		}
		for i, id := range ids {
			if kids[at+i] != id {
				t.Fatalf("%s: block %v not at %d of %v", c.position, id, at+i, kids)
			}
		}
		// Replay answers the receipt and adds nothing.
		if rep := s.Replay(t, "block", args, pre, res); rep["id"] != res["id"] || !slices.Equal(s.Kids(t, note), kids) {
			t.Fatalf("replay: %v", rep)
		}
		// The note is today's note of the notebook.
		id, err := s.C.CreateDailyNote(ctx, s.NB, "")
		if err != nil || id != note {
			t.Fatalf("today's note is %s (%v), blocks went to %s", id, err, note)
		}
	}
	for _, bad := range []struct {
		args map[string]any
		code failure.Code
	}{
		{map[string]any{"notebook": "20200101010101-abcdefg", "data": "x", "position": "append"}, failure.NotFound},
		{map[string]any{"notebook": s.NB, "data": "x", "position": "middle"}, failure.InvalidArguments},
		{map[string]any{"notebook": s.NB, "data": "x"}, failure.InvalidArguments},
		{map[string]any{"notebook": "x", "data": "x", "position": "append"}, failure.InvalidArguments},
	} {
		e := s.WantErr(t, "block", tooltest.CopyArgs(bad.args, "action", "add_to_daily_note", "validateOnly", true), bad.code)
		if e.WriteAttempted == nil || *e.WriteAttempted || e.RequestID != "" {
			t.Fatalf("%v: refused preflight %+v", bad.args, e)
		}
	}
}
