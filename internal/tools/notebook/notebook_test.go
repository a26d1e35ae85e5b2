package notebook

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/embedded"
	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

func testTools() []*tools.Tool { return []*tools.Tool{Tool()} }

// sfix is a strict fixture with this package's helpers.
type sfix struct{ *tooltest.Fixture }

func newStrictFixture(t *testing.T, strictOff bool) *sfix {
	return &sfix{tooltest.NewStrict(t, strictOff, testTools)}
}

func (s *sfix) notebook(t *testing.T, id string) (siyuan.Notebook, bool) {
	t.Helper()
	nbs, err := s.C.ListNotebooks(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nbs {
		if n.ID == id {
			return n, true
		}
	}
	return siyuan.Notebook{}, false
}

func TestNotebookCreate(t *testing.T) {
	s := newStrictFixture(t, false)
	args := map[string]any{"action": "create", "name": "  Fresh\tbook ", "icon": "1f4d4"}
	pre := s.Preflight(t, "notebook", args, "", 0)
	s.WantErr(t, "notebook", args, failure.PreconditionRequired)
	res := s.Commit(t, "notebook", args, pre)
	id, _ := res["notebook"].(string)
	nb, ok := s.notebook(t, id)
	if !ok || nb.Name != "Freshbook" || nb.Icon != "1f4d4" {
		t.Fatalf("created notebook: %+v %v", nb, ok)
	}
	rep := s.Replay(t, "notebook", args, pre, res)
	if rep["notebook"] != id {
		t.Fatalf("replay answered another notebook: %v", rep)
	}
	nbs, _ := s.C.ListNotebooks(context.Background())
	n := 0
	for _, x := range nbs {
		if x.Name == "Freshbook" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d notebooks created", n)
	}
	s.InvalidAt(t, "notebook", map[string]any{"action": "create", "name": " / "}, false)
	// A lost reply leaves the outcome unknown, for good.
	s.K.Faults().Set(embedded.Fault{Endpoint: "/api/notebook/createNotebook", Kind: embedded.DropAfterApply})
	lost := map[string]any{"action": "create", "name": "Lost"}
	pre = s.OK(t, "notebook", tooltest.CopyArgs(lost, "validateOnly", true))
	s.WantErr(t, "notebook", tooltest.CommitArgs(lost, pre), failure.OutcomeUnknown)
	s.K.Faults().Clear()
	s.WantErr(t, "notebook", tooltest.CommitArgs(lost, pre), failure.OutcomeUnknown)
}

func TestNotebookRename(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	args := map[string]any{"action": "rename", "notebook": s.NB, "name": " Renamed "}
	pre := s.Preflight(t, "notebook", args, "expectedStateHash", 1)
	if nb, _ := s.notebook(t, s.NB); nb.Name != "Strict" {
		t.Fatal("preflight wrote")
	}
	res := s.Commit(t, "notebook", args, pre)
	if nb, _ := s.notebook(t, s.NB); nb.Name != "Renamed" || res["notebook"] != s.NB {
		t.Fatalf("rename: %+v %v", nb, res)
	}
	if err := s.C.RenameNotebook(ctx, s.NB, "Someone else"); err != nil {
		t.Fatal(err)
	}
	s.Replay(t, "notebook", args, pre, res)
	if nb, _ := s.notebook(t, s.NB); nb.Name != "Someone else" {
		t.Fatal("a replay renamed again")
	}
	// Drift after preflight: the conf changed.
	again := map[string]any{"action": "rename", "notebook": s.NB, "name": "Agent"}
	pre = s.Preflight(t, "notebook", again, "expectedStateHash", 1)
	s.Drifted(t, "notebook", again, pre, func() {
		if err := s.C.SetNotebookIcon(ctx, s.NB, "1f600"); err != nil {
			t.Fatal(err)
		}
	})
	if nb, _ := s.notebook(t, s.NB); nb.Name != "Someone else" {
		t.Fatal("a state_changed call renamed")
	}
	s.InvalidAt(t, "notebook", map[string]any{"action": "rename", "notebook": s.NB, "name": "  "}, false)
	s.InvalidAt(t, "notebook", map[string]any{"action": "rename", "notebook": "nope", "name": "x"}, false)
	s.WantErr(t, "notebook", tooltest.CopyArgs(map[string]any{"action": "rename", "notebook": "20200101010101-abcdefg", "name": "x"}, "validateOnly", true), failure.NotFound)
}

func TestNotebookRemove(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	other, err := s.C.CreateNotebook(ctx, "Doomed")
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"action": "remove", "notebook": other.ID}
	pre := s.Preflight(t, "notebook", args, "expectedStateHash", 1)
	// A document created after preflight changes the notebook's state.
	s.Drifted(t, "notebook", args, pre, func() {
		if _, err := s.C.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: other.ID, Path: "/Late", Markdown: "x"}); err != nil {
			t.Fatal(err)
		}
	})
	if _, ok := s.notebook(t, other.ID); !ok {
		t.Fatal("a state_changed remove removed")
	}
	pre = s.Preflight(t, "notebook", args, "expectedStateHash", 1)
	res := s.Commit(t, "notebook", args, pre)
	if _, ok := s.notebook(t, other.ID); ok || res["removed"] != true {
		t.Fatalf("remove: %v", res)
	}
	s.Replay(t, "notebook", args, pre, res)
	tool, _ := s.R.Tool("notebook")
	if a, _ := tool.Action("remove"); !a.Destructive {
		t.Fatal("notebook.remove must be destructive")
	}
}

func TestNotebookSetConf(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	args := map[string]any{"action": "set_conf", "notebook": s.NB,
		"conf": map[string]any{"docCreateSavePath": "/Inbox", "sortMode": 6, "dailyNoteTemplatePath": "/tpl/daily.md"}}
	pre := s.Preflight(t, "notebook", args, "expectedStateHash", 1)
	res := s.Commit(t, "notebook", args, pre)
	conf, err := s.C.GetNotebookConf(ctx, s.NB)
	if err != nil {
		t.Fatal(err)
	}
	if conf.Conf.DocCreateSavePath != "/Inbox" || conf.Conf.SortMode != 6 || conf.Conf.DailyNoteTemplatePath != "/tpl/daily.md" ||
		conf.Conf.Name != "Strict" || res["fields"] != float64(3) {
		t.Fatalf("set_conf: %+v %v", conf.Conf, res)
	}
	s.Replay(t, "notebook", args, pre, res)
	// Setting what is already set: no_change.
	pre = s.Preflight(t, "notebook", args, "expectedStateHash", 1)
	if res := s.OK(t, "notebook", tooltest.CommitArgs(args, pre)); res["status"] != "no_change" || res["previousHash"] != res["resultHash"] {
		t.Fatalf("no_change: %v", res)
	}
	other := map[string]any{"action": "set_conf", "notebook": s.NB, "conf": map[string]any{"refCreateSavePath": "/Refs"}}
	pre = s.Preflight(t, "notebook", other, "expectedStateHash", 1)
	s.Drifted(t, "notebook", other, pre, func() {
		c := conf.Conf
		c.DocCreateSavePath = "/Elsewhere"
		if _, err := s.C.SetNotebookConf(ctx, s.NB, c); err != nil {
			t.Fatal(err)
		}
	})
	for _, bad := range []map[string]any{
		{"closed": true}, {"encrypted": true}, {"boxCrypt": "x"}, {"nope": 1}, {"sortMode": 99}, {"sortMode": "6"},
		{"dailyNoteSavePath": "/"}, {"name": " "}, {},
		// The save paths are templates SiYuan renders: nothing unknown.
		{"refCreateSavePath": `/{{ readFile "x" }}`}, {"docCreateSavePath": "/{{ now "},
		// The template path stays in data/templates.
		{"dailyNoteTemplatePath": "../../../../home/me/diary.md"}, {"dailyNoteTemplatePath": "/a/../../conf/x.md"},
		{"dailyNoteTemplatePath": `..\conf\x.md`},
	} {
		s.InvalidAt(t, "notebook", map[string]any{"action": "set_conf", "notebook": s.NB, "conf": bad}, false)
	}
	// Rendered later, for the person too and whatever is hidden then: no
	// save path reads the environment, the network or the index.
	for _, bad := range []map[string]any{
		{"docCreateSavePath": `/{{ env "HOME" }}`}, {"refCreateSavePath": `/{{ getHostByName "x" }}`},
		{"dailyNoteSavePath": `/d/{{ querySQL "SELECT content FROM blocks LIMIT 1" }}`},
		{"dailyNoteSavePath": `/d/{{ (getBlock "20260101000000-abcdefg").Content }}`},
	} {
		e := s.WantErr(t, "notebook", map[string]any{"action": "set_conf", "notebook": s.NB, "conf": bad, "validateOnly": true}, failure.PermissionDenied)
		if e.WriteAttempted == nil || *e.WriteAttempted || !strings.HasPrefix(e.Message, "conf.") {
			t.Fatalf("%v: %+v", bad, e)
		}
	}
}

func TestNotebookSetOpenState(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	args := map[string]any{"action": "set_open_state", "notebook": s.NB, "opened": false}
	pre := s.Preflight(t, "notebook", args, "expectedStateHash", 1)
	res := s.Commit(t, "notebook", args, pre)
	if nb, _ := s.notebook(t, s.NB); !nb.Closed || res["opened"] != false {
		t.Fatalf("close: %+v %v", nb, res)
	}
	if err := s.C.OpenNotebook(ctx, s.NB); err != nil {
		t.Fatal(err)
	}
	s.Replay(t, "notebook", args, pre, res)
	if nb, _ := s.notebook(t, s.NB); nb.Closed {
		t.Fatal("a replay closed the notebook again")
	}
	// Closing under a drift: someone closed it already.
	pre = s.Preflight(t, "notebook", args, "expectedStateHash", 1)
	s.Drifted(t, "notebook", args, pre, func() {
		if err := s.C.CloseNotebook(ctx, s.NB); err != nil {
			t.Fatal(err)
		}
	})
	// Opening a closed notebook.
	open := map[string]any{"action": "set_open_state", "notebook": s.NB, "opened": true}
	pre = s.Preflight(t, "notebook", open, "expectedStateHash", 1)
	s.Commit(t, "notebook", open, pre)
	if nb, _ := s.notebook(t, s.NB); nb.Closed {
		t.Fatal("not opened")
	}
	// Opening an open notebook changes nothing.
	pre = s.Preflight(t, "notebook", open, "expectedStateHash", 1)
	if res := s.OK(t, "notebook", tooltest.CommitArgs(open, pre)); res["status"] != "no_change" {
		t.Fatalf("no_change: %v", res)
	}
	s.WantErr(t, "notebook", map[string]any{"action": "set_open_state", "notebook": s.NB, "validateOnly": true}, failure.InvalidArguments)
}

func TestConfMatches(t *testing.T) {
	if !confMatches("dailyNoteTemplatePath", " tpl / daily ", "/tpl/daily.md") || !confMatches("dailyNoteSavePath", "d/x", "/d/x") ||
		confMatches("sortMode", float64(6), float64(5)) {
		t.Fatal("confMatches")
	}
}

// TestConfSaveBoxWhileHidden: the person saves new documents of a visible
// notebook into a hidden one, under a path of that notebook's titles.
// While it is hidden, get_conf shows neither, a preflight's hash does not
// move when the person changes that path, and an agent's set_conf of
// another field keeps the person's save box and path as they are.
func TestConfSaveBoxWhileHidden(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	vault, err := s.C.CreateNotebook(ctx, "Vault")
	if err != nil {
		t.Fatal(err)
	}
	setBox := func(path string) {
		t.Helper()
		conf, err := s.C.GetNotebookConf(ctx, s.NB)
		if err != nil {
			t.Fatal(err)
		}
		c := conf.Conf
		c.RefCreateSaveBox, c.RefCreateSavePath = vault.ID, path
		c.DocCreateSaveBox, c.DocCreateSavePath = s.NB, "/Inbox"
		if _, err := s.C.SetNotebookConf(ctx, s.NB, c); err != nil {
			t.Fatal(err)
		}
	}
	setBox("/Salary talks/Refs")
	s.Policy = &tools.Policy{Default: tools.LevelDelete, Notebooks: map[string]tools.Level{vault.ID: tools.LevelNone}, AllActions: true, Strict: true, Version: "hidden"}
	got := s.OK(t, "notebook", map[string]any{"action": "get_conf", "notebook": s.NB})
	b, _ := json.Marshal(got)
	conf := got["conf"].(map[string]any)
	if strings.Contains(string(b), vault.ID) || strings.Contains(string(b), "Salary") ||
		conf["refCreateSaveBox"] != "" || conf["refCreateSavePath"] != "" || conf["docCreateSaveBox"] != s.NB || conf["docCreateSavePath"] != "/Inbox" {
		t.Fatalf("get_conf while the save box is hidden: %s", b)
	}
	args := map[string]any{"action": "set_conf", "notebook": s.NB, "conf": map[string]any{"sortMode": 6}}
	pre := s.Preflight(t, "notebook", args, "expectedStateHash", 1)
	setBox("/Bonus plans/Refs")
	if again := s.Preflight(t, "notebook", args, "expectedStateHash", 1); again["expectedStateHash"] != pre["expectedStateHash"] {
		t.Fatalf("the hash moved with the hidden save path: %v, then %v", pre["expectedStateHash"], again["expectedStateHash"])
	}
	s.Commit(t, "notebook", args, pre)
	after, err := s.C.GetNotebookConf(ctx, s.NB)
	if err != nil {
		t.Fatal(err)
	}
	if c := after.Conf; c.SortMode != 6 || c.RefCreateSaveBox != vault.ID || c.RefCreateSavePath != "/Bonus plans/Refs" || c.DocCreateSavePath != "/Inbox" {
		t.Fatalf("set_conf changed what the person set: %+v", c)
	}
	// A change the call can see still moves it.
	pre = s.Preflight(t, "notebook", map[string]any{"action": "set_conf", "notebook": s.NB, "conf": map[string]any{"sortMode": 4}}, "expectedStateHash", 1)
	s.Drifted(t, "notebook", map[string]any{"action": "set_conf", "notebook": s.NB, "conf": map[string]any{"sortMode": 4}}, pre, func() {
		c := after.Conf
		c.DocCreateSavePath = "/Elsewhere"
		if _, err := s.C.SetNotebookConf(ctx, s.NB, c); err != nil {
			t.Fatal(err)
		}
	})
}

// TestCreateSaysWhenNotWritable: a notebook created where the configured
// default does not let agents write says so, with the command that
// allows it; one they may write in says nothing.
func TestCreateSaysWhenNotWritable(t *testing.T) {
	s := newStrictFixture(t, false)
	s.Policy = &tools.Policy{Default: tools.LevelRead, AllActions: true, Strict: true, Version: "read-default"}
	args := map[string]any{"action": "create", "name": "Read only"}
	pre := s.OK(t, "notebook", tooltest.CopyArgs(args, "validateOnly", true))
	res := s.OK(t, "notebook", tooltest.CommitArgs(args, pre))
	id, _ := res["notebook"].(string)
	if res["permission"] != "r" || res["writable"] != false || !strings.Contains(fmt.Sprint(res["note"]), "sisyphus config permission "+id+" rw") {
		t.Fatalf("create at default r: %v", res)
	}
	s.Policy = &tools.Policy{Default: tools.LevelDelete, AllActions: true, Strict: true, Version: "rwd-default"}
	args = map[string]any{"action": "create", "name": "Writable"}
	pre = s.OK(t, "notebook", tooltest.CopyArgs(args, "validateOnly", true))
	if res := s.OK(t, "notebook", tooltest.CommitArgs(args, pre)); res["permission"] != "rwd" || res["writable"] != nil || res["note"] != nil {
		t.Fatalf("create at default rwd: %v", res)
	}
}
