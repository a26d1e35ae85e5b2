package block

import (
	"context"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

func TestTransferReferences(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	from, to := s.Blocks[0], s.Blocks[1]
	users := s.MkDoc(t, s.NB, "/Users", "a (("+from+" 'dyn'))\n\nb (("+from+" \"stat\"))\n\nc (("+to+" 'already'))")
	refs := s.Kids(t, users)
	args := map[string]any{"action": "transfer_references", "fromID": from, "toID": to}

	pre := s.Preflight(t, "block", args, "expectedManifestHash", 2)
	if strings.Contains(s.Text(t, refs[0]), "(("+to) {
		t.Fatal("preflight wrote")
	}
	res := s.Commit(t, "block", args, pre)
	if res["transferred"] != float64(2) {
		t.Fatalf("commit: %v", res)
	}
	for i, want := range []string{"a ((" + to + " 'paragraph 1'))", "b ((" + to + " \"stat\"))"} {
		if kd := s.Text(t, refs[i]); !strings.HasPrefix(kd, want) {
			t.Fatalf("ref block %d: %s, want %s", i, kd, want)
		}
	}
	s.Replay(t, "block", args, pre, res)
	// Nothing references fromID any more: a new preflight refuses.
	s.WantErr(t, "block", tooltest.CopyArgs(args, "validateOnly", true), failure.InvalidArguments)

	// Named ref blocks; a stale lease answers state_changed.
	one := map[string]any{"action": "transfer_references", "fromID": to, "toID": from, "refIDs": []string{refs[2]}}
	pre = s.Preflight(t, "block", one, "expectedManifestHash", 3)
	s.Drifted(t, "block", one, pre, func() {
		if _, err := s.C.UpdateBlock(ctx, refs[2], "markdown", "c (("+to+" 'changed'))"); err != nil {
			t.Fatal(err)
		}
	})
	// A named block without a reference to fromID is refused at preflight.
	s.InvalidAt(t, "block", map[string]any{"action": "transfer_references", "fromID": from, "toID": to, "refIDs": []string{refs[2]}}, false)
	s.InvalidAt(t, "block", map[string]any{"action": "transfer_references", "fromID": from, "toID": from}, false)
}

// TestTransferReferencesNeedsWriteOnRefNotebooks: the notebook of every
// block whose references move must be writable, found by the index when
// refIDs is omitted.
func TestTransferReferencesNeedsWriteOnRefNotebooks(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	other, err := s.C.CreateNotebook(ctx, "Readers")
	if err != nil {
		t.Fatal(err)
	}
	from, to := s.Blocks[0], s.Blocks[1]
	s.MkDoc(t, other.ID, "/Ref", "x (("+from+" 'x'))")
	s.Policy = &tools.Policy{Notebooks: map[string]tools.Level{s.NB: tools.LevelWrite, other.ID: tools.LevelRead}, Default: tools.LevelRead, AllActions: true, Strict: true, Version: "t"}
	e := s.WantErr(t, "block", map[string]any{"action": "transfer_references", "fromID": from, "toID": to, "validateOnly": true}, failure.PermissionDenied)
	if e.Details["notebook"] != other.ID {
		t.Fatalf("refusal %+v", e)
	}
}
