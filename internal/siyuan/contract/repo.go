package contract

// The data repository: the refusals before a key is set, snapshots
// (taken of the whole data directory; none when nothing changed), tags
// (listed once per tag, moved by naming another snapshot, removed), the
// diff of two snapshots by path and modification second, a file of a
// snapshot read, and a document rolled back (re-indexed at once, with a
// snapshot of the data first).
//
// On a real kernel these checks need the workspace to have a repository
// key already (they skip otherwise: making one would change the
// workspace's settings); they leave their snapshots in its repository
// (SiYuan has no endpoint that removes one; its own purge does) and
// remove their tags. Only the suite's notebook's files are compared:
// other clients may change the workspace between two snapshots.

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
)

var repoChecks = []check{
	{"RepoArgumentRefusals", checkRepoArgumentRefusals},
	{"RepoSnapshotAndTags", checkRepoSnapshotAndTags},
	{"RepoDiffAndOpenFile", checkRepoDiffAndOpenFile},
	{"RepoRollbackDocument", checkRepoRollbackDocument},
}

var (
	repoIDRe   = regexp.MustCompile(`^[0-9a-f]{40}$`)
	repoTimeRe = regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$`)
	repoSizeRe = regexp.MustCompile(`^\d+(\.\d{1,2})? (B|kB|MB|GB)$`)
)

const repoKeyMissingMsg = "Please initialize the data repo key first in [Settings - Account & Sync - Data repo key]"

// repoCall posts raw arguments and answers the kernel's refusal (nil
// when it accepted them).
func (s *suite) repoCall(t *testing.T, ep string, req any) *siyuan.APIError {
	t.Helper()
	var out any
	err := s.c.Do(t.Context(), ep, req, &out, siyuan.Write)
	if err == nil {
		return nil
	}
	var nd *siyuan.NullDataError
	if errors.As(err, &nd) {
		return nil
	}
	return apiError(t, ep, err)
}

func wantRefusal(t *testing.T, what string, got *siyuan.APIError, msg string) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: accepted, want refusal %q", what, msg)
	}
	if got.Code != -1 || got.Msg != msg {
		t.Fatalf("%s: refusal (code %d) %q, want (code -1) %q", what, got.Code, got.Msg, msg)
	}
}

// repoKey makes sure the kernel has a repository key. Without one, it
// first checks every endpoint's missing-key refusal, then (only on the
// embedded kernel) makes a key: a real workspace is skipped.
func (s *suite) repoKey(t *testing.T) {
	t.Helper()
	_, err := s.c.RepoSnapshots(t.Context(), 1)
	if err == nil {
		return
	}
	if !errors.Is(err, siyuan.ErrRepoKeyMissing) {
		t.Fatalf("RepoSnapshots: %v", err)
	}
	const snap = "Failed to create data snapshot: " + repoKeyMissingMsg
	wantRefusal(t, "createSnapshot no key", s.repoCall(t, endpoint.CreateSnapshot, map[string]any{"memo": ""}), snap)
	wantRefusal(t, "tagSnapshot no key", s.repoCall(t, endpoint.TagSnapshot, map[string]any{"id": "x", "name": "t"}), snap)
	wantRefusal(t, "getRepoTagSnapshots no key", s.repoCall(t, endpoint.GetRepoTagSnapshots, map[string]any{}), repoKeyMissingMsg)
	wantRefusal(t, "removeRepoTagSnapshot no key", s.repoCall(t, endpoint.RemoveRepoTagSnapshot, map[string]any{"tag": "t"}), repoKeyMissingMsg)
	wantRefusal(t, "diffRepoSnapshots no key", s.repoCall(t, endpoint.DiffRepoSnapshots, map[string]any{"left": "a", "right": "b"}), repoKeyMissingMsg)
	wantRefusal(t, "openRepoSnapshotFile no key", s.repoCall(t, endpoint.OpenRepoSnapshotFile, map[string]any{"id": "a"}), repoKeyMissingMsg)
	wantRefusal(t, "rollbackRepoSnapshotFile no key", s.repoCall(t, endpoint.RollbackRepoSnapshotFile, map[string]any{"id": "a"}), repoKeyMissingMsg)
	if s.k.Live {
		t.Skip("the workspace has no data repository key: set one in SiYuan to run the repository checks")
	}
	key, err := s.c.InitRepoKey(t.Context())
	must(t, "InitRepoKey", err)
	if len(key) < 16 {
		t.Fatalf("InitRepoKey answered key %q", key)
	}
	// The first snapshot follows (SiYuan makes it shortly after).
	s.eventually(t, "the first snapshot after InitRepoKey", func() bool {
		p, err := s.c.RepoSnapshots(t.Context(), 1)
		return err == nil && slices.ContainsFunc(p.Snapshots, func(x siyuan.RepoSnapshot) bool { return x.Memo == "[Init] Init local data repo" })
	})
}

func checkRepoArgumentRefusals(t *testing.T, s *suite) {
	for _, tc := range []struct {
		ep  string
		req map[string]any
		msg string
	}{
		{endpoint.CreateSnapshot, map[string]any{}, "Field [memo] is required"},
		{endpoint.CreateSnapshot, map[string]any{"memo": 5}, "Field [memo] should be of type [String]"},
		{endpoint.TagSnapshot, map[string]any{}, "Field [id] is required"},
		{endpoint.TagSnapshot, map[string]any{"id": "", "name": "t"}, "Field [id] must not be empty"},
		{endpoint.TagSnapshot, map[string]any{"id": "x"}, "Field [name] is required"},
		{endpoint.TagSnapshot, map[string]any{"id": "x", "name": 5}, "Field [name] should be of type [String]"},
		{endpoint.GetRepoSnapshots, map[string]any{}, "Field [page] is required"},
		{endpoint.GetRepoSnapshots, map[string]any{"page": "1"}, "Field [page] should be of type [Number]"},
		{endpoint.RemoveRepoTagSnapshot, map[string]any{}, "Field [tag] is required"},
		{endpoint.RemoveRepoTagSnapshot, map[string]any{"tag": ""}, "Field [tag] must not be empty"},
		{endpoint.DiffRepoSnapshots, map[string]any{"left": "a"}, "Field [right] is required"},
		{endpoint.DiffRepoSnapshots, map[string]any{"left": "", "right": "x"}, "Field [left] must not be empty"},
		{endpoint.OpenRepoSnapshotFile, map[string]any{}, "Field [id] is required"},
		{endpoint.RollbackRepoSnapshotFile, map[string]any{"id": " "}, "Field [id] must not be empty"},
	} {
		wantRefusal(t, tc.ep, s.repoCall(t, tc.ep, tc.req), tc.msg)
	}
}

// repoSnapshot makes a snapshot under a memo of the suite's and answers
// it, found by its memo (another client's snapshot may be newer).
func (s *suite) repoSnapshot(t *testing.T, what string) siyuan.RepoSnapshot {
	t.Helper()
	memo := "sisyphus-contract-" + s.tag + " " + what + " " + randLower(6)
	must(t, "CreateSnapshot", s.c.CreateSnapshot(t.Context(), memo))
	p, err := s.c.RepoSnapshots(t.Context(), 1)
	must(t, "RepoSnapshots", err)
	for _, x := range p.Snapshots {
		if x.Memo == memo {
			return x
		}
	}
	t.Fatalf("snapshot %q not on the first page: %+v", memo, p.Snapshots)
	return siyuan.RepoSnapshot{}
}

// repoTag tags a snapshot with a name of the suite's, removed when the
// check ends.
func (s *suite) repoTag(t *testing.T, id, what string) string {
	t.Helper()
	name := "sisyphus-contract-" + s.tag + "-" + what
	must(t, "TagSnapshot", s.c.TagSnapshot(t.Context(), id, name))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.c.RemoveRepoTagSnapshot(ctx, name); err != nil {
			t.Errorf("cleanup: RemoveRepoTagSnapshot: %v", err)
		}
	})
	return name
}

// nextSecond waits for the clock's next second: the repository tells a
// file's versions apart by modification second.
func nextSecond() {
	now := time.Now()
	time.Sleep(now.Truncate(time.Second).Add(time.Second + 10*time.Millisecond).Sub(now))
}

func checkRepoSnapshotShape(t *testing.T, what string, x siyuan.RepoSnapshot) {
	t.Helper()
	if !repoIDRe.MatchString(x.ID) || !repoTimeRe.MatchString(x.HCreated) || !repoSizeRe.MatchString(x.HSize) ||
		x.Count < 1 || x.Size < 1 || x.Created < 1 || string(x.Files) != "null" || len(x.TypesCount) == 0 || x.SystemOS == "" {
		t.Fatalf("%s: snapshot shape %+v", what, x)
	}
}

func checkRepoSnapshotAndTags(t *testing.T, s *suite) {
	s.repoKey(t)
	s.newDoc(t, "repo-snap", "snapshot me")
	s.flush(t)
	a := s.repoSnapshot(t, "a")
	checkRepoSnapshotShape(t, "snapshot a", a)
	if a.Tag != "" || a.HTagUpdated != "" {
		t.Fatalf("a listed snapshot has tag %q / %q, want none", a.Tag, a.HTagUpdated)
	}
	if !slices.ContainsFunc(a.TypesCount, func(c siyuan.RepoTypeCount) bool { return c.Type == ".sy" && c.Count > 0 }) {
		t.Fatalf("snapshot a counts no .sy file: %+v", a.TypesCount)
	}
	// Nothing changed: no new snapshot, the newest keeps its memo.
	if !s.k.Live {
		memo := "sisyphus-contract-" + s.tag + " unchanged"
		must(t, "CreateSnapshot unchanged", s.c.CreateSnapshot(t.Context(), memo))
		p, err := s.c.RepoSnapshots(t.Context(), 1)
		must(t, "RepoSnapshots", err)
		if p.Snapshots[0].ID != a.ID || p.Snapshots[0].Memo != a.Memo {
			t.Fatalf("a snapshot of unchanged data made %+v, want the newest to stay %s", p.Snapshots[0], a.ID)
		}
	}
	p, err := s.c.RepoSnapshots(t.Context(), 1)
	must(t, "RepoSnapshots", err)
	if p.TotalCount < 1 || p.PageCount != (p.TotalCount+31)/32 {
		t.Fatalf("page counts: total %d, pages %d", p.TotalCount, p.PageCount)
	}
	past, err := s.c.RepoSnapshots(t.Context(), p.PageCount+1)
	must(t, "RepoSnapshots past the last page", err)
	if len(past.Snapshots) != 0 || past.TotalCount != p.TotalCount {
		t.Fatalf("the page past the last: %+v", past)
	}

	nextSecond()
	s.newDoc(t, "repo-snap-2", "and me")
	s.flush(t)
	b := s.repoSnapshot(t, "b")
	if b.ID == a.ID {
		t.Fatal("a snapshot of changed data kept the old id")
	}

	// Tags: listed once per tag, with the snapshot; naming another
	// snapshot moves a tag.
	one := s.repoTag(t, a.ID, "one")
	two := s.repoTag(t, a.ID, "two")
	tags := func() map[string]siyuan.RepoSnapshot {
		l, err := s.c.RepoTagSnapshots(t.Context())
		must(t, "RepoTagSnapshots", err)
		m := map[string]siyuan.RepoSnapshot{}
		for _, x := range l {
			m[x.Tag] = x
		}
		return m
	}
	got := tags()
	if got[one].ID != a.ID || got[two].ID != a.ID || !repoTimeRe.MatchString(got[one].HTagUpdated) || got[one].Memo != a.Memo {
		t.Fatalf("tags after tagging a twice: %+v", got)
	}
	checkRepoSnapshotShape(t, "tagged a", got[one])
	must(t, "TagSnapshot move", s.c.TagSnapshot(t.Context(), b.ID, two))
	if got = tags(); got[one].ID != a.ID || got[two].ID != b.ID {
		t.Fatalf("tags after moving %s to b: %+v", two, got)
	}
	p, err = s.c.RepoSnapshots(t.Context(), 1)
	must(t, "RepoSnapshots", err)
	for _, x := range p.Snapshots {
		if x.Tag != "" {
			t.Fatalf("getRepoSnapshots lists a tag: %+v", x)
		}
	}
	must(t, "RemoveRepoTagSnapshot", s.c.RemoveRepoTagSnapshot(t.Context(), one))
	if _, ok := tags()[one]; ok {
		t.Fatalf("tag %s still listed after its removal", one)
	}
	must(t, "RemoveRepoTagSnapshot of no tag", s.c.RemoveRepoTagSnapshot(t.Context(), one))
	must(t, "RemoveRepoTagSnapshot of a path", s.c.RemoveRepoTagSnapshot(t.Context(), "a/b"))

	// Refusals.
	const fail = "Failed to create data snapshot: "
	symbols := fail + "Do not include symbols \\ / : * ? &quot; &#039; &lt; &gt; |"
	for name, msg := range map[string]string{"a/b": symbols, "x:y": symbols, "   ": fail + "Input can not be empty", "": fail + "Input can not be empty"} {
		wantRefusal(t, "tag "+name, s.repoCall(t, endpoint.TagSnapshot, map[string]any{"id": a.ID, "name": name}), msg)
	}
	wantRefusal(t, "memo of spaces", s.repoCall(t, endpoint.CreateSnapshot, map[string]any{"memo": "  "}), fail+"Input can not be empty")
	unknown := strings.Repeat("0", 40)
	api := s.repoCall(t, endpoint.TagSnapshot, map[string]any{"id": unknown, "name": "sisyphus-contract-" + s.tag + "-x"})
	if api == nil || !strings.HasPrefix(api.Msg, fail+"open ") || !strings.HasSuffix(api.Msg, "/indexes/"+unknown+": no such file or directory") {
		t.Fatalf("tag of an unknown snapshot: %+v", api)
	}
	if _, err := s.c.RepoSnapshots(t.Context(), 0); !errors.Is(err, siyuan.ErrInvalidArgument) {
		t.Fatalf("RepoSnapshots(0): %v, want refused locally", err)
	}
	var out any
	err = s.c.Do(t.Context(), endpoint.GetRepoSnapshots, map[string]any{"page": 0}, &out, siyuan.Read)
	if !errors.As(err, new(*siyuan.NullDataError)) {
		t.Fatalf("getRepoSnapshots page 0: %v %v, want {code 0, data null}", out, err)
	}
}

// suiteFiles are the files of a diff list in the suite's notebook, by
// path.
func (s *suite) suiteFiles(l []siyuan.RepoDiffFile) map[string]siyuan.RepoDiffFile {
	m := map[string]siyuan.RepoDiffFile{}
	for _, f := range l {
		if strings.HasPrefix(f.Path, "/"+s.box+"/") {
			m[f.Path] = f
		}
	}
	return m
}

func checkRepoDiffFile(t *testing.T, what string, f siyuan.RepoDiffFile, title string) {
	t.Helper()
	if !repoIDRe.MatchString(f.FileID) || f.IndexID != "" || f.HPath != "" || f.Title != title || !repoSizeRe.MatchString(f.HSize) || f.Updated < 1 {
		t.Fatalf("%s: diff file %+v, want title %q", what, f, title)
	}
}

func checkRepoDiffAndOpenFile(t *testing.T, s *suite) {
	s.repoKey(t)
	edited, paras := s.docWithParas(t, "repo-edited", "before edit", "kept")
	removed := s.newDoc(t, "repo-removed", "to be removed")
	s.flush(t)
	left := s.repoSnapshot(t, "left")
	nextSecond()
	_, err := s.c.UpdateBlock(t.Context(), paras[0], "markdown", "after edit")
	must(t, "UpdateBlock", err)
	added := s.newDoc(t, "repo-added", "new here")
	must(t, "RemoveDocByID", s.c.RemoveDocByID(t.Context(), removed))
	s.flush(t)
	right := s.repoSnapshot(t, "right")

	d, err := s.c.DiffRepoSnapshots(t.Context(), left.ID, right.ID)
	must(t, "DiffRepoSnapshots", err)
	if d.Left.ID != left.ID || d.Left.Created != left.Created || d.Right.ID != right.ID || d.Right.Created != right.Created {
		t.Fatalf("diff sides %+v %+v", d.Left, d.Right)
	}
	docPath := func(id string) string { return "/" + s.box + "/" + id + ".sy" }
	adds, removes := s.suiteFiles(d.AddsLeft), s.suiteFiles(d.RemovesRight)
	upl, upr := s.suiteFiles(d.UpdatesLeft), s.suiteFiles(d.UpdatesRight)
	checkRepoDiffFile(t, "added", adds[docPath(added)], "repo-added")
	checkRepoDiffFile(t, "removed", removes[docPath(removed)], "repo-removed")
	checkRepoDiffFile(t, "updated, left", upl[docPath(edited)], "repo-edited")
	checkRepoDiffFile(t, "updated, right", upr[docPath(edited)], "repo-edited")
	if _, ok := adds[docPath(edited)]; ok || len(upl) != len(upr) {
		t.Fatalf("diff lists: adds %v, updates %v / %v", adds, upl, upr)
	}
	old, cur := upl[docPath(edited)], upr[docPath(edited)]
	if old.FileID == cur.FileID || old.Updated >= cur.Updated {
		t.Fatalf("the two versions of the edited document: %+v %+v", old, cur)
	}
	// The other way round, the lists swap.
	back, err := s.c.DiffRepoSnapshots(t.Context(), right.ID, left.ID)
	must(t, "DiffRepoSnapshots reversed", err)
	if _, ok := s.suiteFiles(back.AddsLeft)[docPath(removed)]; !ok {
		t.Fatalf("reversed diff does not add the removed document: %+v", back.AddsLeft)
	}
	if _, ok := s.suiteFiles(back.RemovesRight)[docPath(added)]; !ok {
		t.Fatalf("reversed diff does not remove the added document: %+v", back.RemovesRight)
	}
	if s.suiteFiles(back.UpdatesLeft)[docPath(edited)].FileID != cur.FileID {
		t.Fatalf("reversed diff's left update is not the current version: %+v", back.UpdatesLeft)
	}
	same, err := s.c.DiffRepoSnapshots(t.Context(), left.ID, left.ID)
	must(t, "DiffRepoSnapshots same", err)
	if len(same.AddsLeft)+len(same.RemovesRight)+len(same.UpdatesLeft)+len(same.UpdatesRight) != 0 {
		t.Fatalf("a snapshot differs from itself: %+v", same)
	}
	unknown := strings.Repeat("0", 40)
	api := s.repoCall(t, endpoint.DiffRepoSnapshots, map[string]any{"left": left.ID, "right": unknown})
	if api == nil || !strings.HasPrefix(api.Msg, "open ") || !strings.HasSuffix(api.Msg, "/indexes/"+unknown+": no such file or directory") {
		t.Fatalf("diff with an unknown snapshot: %+v", api)
	}

	// A document of the snapshot: its blocks as read-only DOM.
	f, err := s.c.RepoSnapshotFile(t.Context(), old.FileID)
	must(t, "RepoSnapshotFile", err)
	if f.Title != "repo-edited" || f.DisplayInText || f.Updated != old.Updated ||
		!strings.Contains(f.Content, `data-node-id="`+paras[0]+`"`) || !strings.Contains(f.Content, ">before edit<") ||
		strings.Contains(f.Content, "after edit") || !strings.Contains(f.Content, `contenteditable="false"`) ||
		strings.Contains(f.Content, `contenteditable="true"`) || !strings.Contains(f.Content, `data-node-index="1"`) ||
		strings.Contains(f.Content, `data-node-id="`+edited+`"`) {
		t.Fatalf("snapshot document: %+v", f)
	}
	// A JSON file: its text.
	for p, x := range upl {
		if strings.HasSuffix(p, ".json") {
			jf, err := s.c.RepoSnapshotFile(t.Context(), x.FileID)
			must(t, "RepoSnapshotFile json", err)
			if !jf.DisplayInText || jf.Title != p || !strings.HasPrefix(jf.Content, "{") {
				t.Fatalf("snapshot JSON file: %+v", jf)
			}
		}
	}
	api = s.repoCall(t, endpoint.OpenRepoSnapshotFile, map[string]any{"id": unknown})
	if api == nil || !strings.HasPrefix(api.Msg, "open ") || !strings.HasSuffix(api.Msg, "/objects/00/"+unknown[2:]+": no such file or directory") {
		t.Fatalf("open of an unknown file: %+v", api)
	}
}

func checkRepoRollbackDocument(t *testing.T, s *suite) {
	s.repoKey(t)
	doc, paras := s.docWithParas(t, "repo-rollback", "original text", "second")
	gone := s.newDoc(t, "repo-rollback-gone", "restore me")
	s.flush(t)
	before := s.repoSnapshot(t, "before")
	nextSecond()
	_, err := s.c.UpdateBlock(t.Context(), paras[0], "markdown", "changed text")
	must(t, "UpdateBlock", err)
	must(t, "RemoveDocByID", s.c.RemoveDocByID(t.Context(), gone))
	s.flush(t)
	after := s.repoSnapshot(t, "after")
	d, err := s.c.DiffRepoSnapshots(t.Context(), before.ID, after.ID)
	must(t, "DiffRepoSnapshots", err)
	old := s.suiteFiles(d.UpdatesLeft)["/"+s.box+"/"+doc+".sy"]
	removed := s.suiteFiles(d.RemovesRight)["/"+s.box+"/"+gone+".sy"]
	if old.FileID == "" || removed.FileID == "" {
		t.Fatalf("diff lacks the edited or the removed document: %+v", d)
	}

	// The edit is taken back: the block tree at once, SQL after a flush.
	nextSecond()
	_, err = s.c.UpdateBlock(t.Context(), paras[1], "markdown", "second, changed after the snapshot")
	must(t, "UpdateBlock", err)
	must(t, "RollbackRepoSnapshotFile", s.c.RollbackRepoSnapshotFile(t.Context(), old.FileID))
	k := s.kramdown(t, doc)
	if !strings.Contains(k, "original text\n{: ") || strings.Contains(k, "changed") || !strings.Contains(k, `id="`+paras[0]+`"`) {
		t.Fatalf("kramdown after the rollback:\n%s", k)
	}
	s.eventually(t, "SQL shows the rolled-back paragraph", func() bool {
		s.flush(t)
		rows, err := s.c.QuerySQL(t.Context(), "SELECT content FROM blocks WHERE id = '"+paras[0]+"'")
		return err == nil && len(rows) == 1 && rows[0]["content"] == "original text"
	})
	// The data as it was before the rollback was snapshotted first.
	p, err := s.c.RepoSnapshots(t.Context(), 1)
	must(t, "RepoSnapshots", err)
	if !slices.ContainsFunc(p.Snapshots, func(x siyuan.RepoSnapshot) bool {
		return x.Memo == "Backup before checkout" && x.Created > after.Created
	}) {
		t.Fatalf("no backup snapshot after the rollback: %+v", p.Snapshots)
	}

	// A removed document comes back where it was.
	must(t, "RollbackRepoSnapshotFile removed", s.c.RollbackRepoSnapshotFile(t.Context(), removed.FileID))
	if k := s.kramdown(t, gone); !strings.Contains(k, "restore me") || !strings.Contains(k, `title="repo-rollback-gone"`) {
		t.Fatalf("kramdown of the restored document:\n%s", k)
	}
	path, err := s.c.GetPathByID(t.Context(), gone)
	must(t, "GetPathByID", err)
	if path.Notebook != s.box || path.Path != "/"+gone+".sy" {
		t.Fatalf("restored document's path %+v", path)
	}

	unknown := strings.Repeat("0", 40)
	api := s.repoCall(t, endpoint.RollbackRepoSnapshotFile, map[string]any{"id": unknown})
	if api == nil || !strings.HasSuffix(api.Msg, "/objects/00/"+unknown[2:]+": no such file or directory") {
		t.Fatalf("rollback of an unknown file: %+v", api)
	}
}
