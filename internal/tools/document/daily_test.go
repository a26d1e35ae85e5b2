package document

import (
	"context"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

func TestCreateDailyNote(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	args := map[string]any{"action": "create_daily_note", "notebook": s.NB}
	pre := s.Preflight(t, "document", args, "", 1)
	res := s.Commit(t, "document", args, pre)
	id, _ := res["id"].(string)
	now := time.Now()
	if res["hPath"] != "/daily note/"+now.Format("2006/01")+"/"+now.Format("2006-01-02") || res["date"] != now.Format("20060102") || res["notebook"] != s.NB {
		t.Fatalf("create_daily_note: %v", res)
	}
	if rep := s.Replay(t, "document", args, pre, res); rep["id"] != id {
		t.Fatalf("replay: %v", rep)
	}
	// A second call the same day answers the same note.
	again := s.Commit(t, "document", args, s.Preflight(t, "document", args, "", 1))
	if again["id"] != id {
		t.Fatalf("second create_daily_note = %v, want %s", again["id"], id)
	}
	conf, err := s.C.GetNotebookConf(ctx, s.NB)
	if err != nil {
		t.Fatal(err)
	}
	c := conf.Conf
	c.DailyNoteSavePath = ""
	if _, err := s.C.SetNotebookConf(ctx, s.NB, c); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct {
		args map[string]any
		code failure.Code
	}{
		{args, failure.InvalidArguments}, // no daily-note path
		{map[string]any{"action": "create_daily_note", "notebook": "20200101010101-abcdefg"}, failure.NotFound},
		{map[string]any{"action": "create_daily_note", "notebook": "nope"}, failure.InvalidArguments},
	} {
		e := s.WantErr(t, "document", tooltest.CopyArgs(bad.args, "validateOnly", true), bad.code)
		if e.WriteAttempted == nil || *e.WriteAttempted || e.RequestID != "" {
			t.Fatalf("%v: refused preflight %+v", bad.args, e)
		}
	}
}

// TestCreateDailyNoteTemplates: creating a daily note renders the
// notebook's save path and template, which an agent may not have rendered
// (set through SiYuan by the person, or before a notebook was hidden):
// the environment never, the index not while a notebook is hidden, a
// template path never outside data/templates; nothing is created.
func TestCreateDailyNoteTemplates(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	hidden, err := s.C.CreateNotebook(ctx, "Hidden")
	if err != nil {
		t.Fatal(err)
	}
	hiding := &tools.Policy{Default: tools.LevelDelete, Notebooks: map[string]tools.Level{hidden.ID: tools.LevelNone}, AllActions: true, Strict: true}
	conf, err := s.C.GetNotebookConf(ctx, s.NB)
	if err != nil {
		t.Fatal(err)
	}
	setConf := func(savePath, tpl string) {
		c := conf.Conf
		c.DailyNoteSavePath, c.DailyNoteTemplatePath = savePath, tpl
		if _, err := s.C.SetNotebookConf(ctx, s.NB, c); err != nil {
			t.Fatal(err)
		}
	}
	put := func(p, body string) {
		if err := s.C.PutFile(ctx, siyuan.PutFileRequest{Path: p, Body: strings.NewReader(body)}); err != nil {
			t.Fatal(err)
		}
	}
	put("/data/templates/index.md", `.action{ querySQL "SELECT content FROM blocks LIMIT 3" }`)
	put("/data/templates/plain.md", "# .action{ now | date \"2006\" }")
	args := map[string]any{"action": "create_daily_note", "notebook": s.NB, "validateOnly": true}
	for _, c := range []struct {
		savePath, tpl string
		policy        *tools.Policy
		code          failure.Code
	}{
		{`/daily/{{ env "HOME" }}`, "", nil, failure.PermissionDenied},
		{`/daily/{{ querySQL "SELECT 1" }}`, "", nil, failure.PermissionDenied},
		{`/daily/{{ now | date "2006-01-02" }}`, "/index.md", hiding, failure.PermissionDenied},
		{`/daily/{{ now | date "2006-01-02" }}`, "/../../conf/conf.json.md", nil, failure.InvalidArguments},
		{`/daily/{{ now | date "2006-01-02" }}`, "/index.md", nil, ""},
		{`/daily/{{ now | date "2006-01-02" }}`, "/plain.md", hiding, ""},
		{`/daily/{{ now | date "2006-01-02" }}`, "/missing.md", hiding, ""},
	} {
		setConf(c.savePath, c.tpl)
		s.Policy = c.policy
		if c.code == "" {
			s.OK(t, "document", args)
			continue
		}
		e := s.WantErr(t, "document", args, c.code)
		if e.WriteAttempted == nil || *e.WriteAttempted {
			t.Fatalf("%+v: %+v", c, e)
		}
	}
}

func TestDuplicate(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	src := s.MkDoc(t, s.NB, "/Src", "# Head\n\nbody {: custom-a=\"1\"}\n\n- one\n- two")
	ref := s.Kids(t, src)[0]
	if _, err := s.C.AppendBlock(ctx, "markdown", "see (("+ref+" \"head\"))", src); err != nil {
		t.Fatal(err)
	}
	before := s.Text(t, src)
	args := map[string]any{"action": "duplicate", "id": src}
	pre := s.Preflight(t, "document", args, "expectedStateHash", 1)
	res := s.Commit(t, "document", args, pre)
	id, _ := res["id"].(string)
	if id == "" || id == src || res["sourceID"] != src || path.Dir(s.Where(t, id).Path) != "/" || !strings.Contains(res["hPath"].(string), "(Duplicated ") {
		t.Fatalf("duplicate: %v", res)
	}
	if s.Text(t, src) != before {
		t.Fatal("the source changed")
	}
	// The copy's reference follows the copy's own heading.
	if kids := s.Kids(t, id); !strings.Contains(s.Text(t, id), "(("+kids[0]+" ") {
		t.Fatalf("copy's internal reference: %s", s.Text(t, id))
	}
	countDocs := func() int {
		files, err := listVisible(ctx, &tools.Env{Kernel: s.C}, s.NB, "/", nil)
		if err != nil {
			t.Fatal(err)
		}
		return len(files)
	}
	n := countDocs()
	if rep := s.Replay(t, "document", args, pre, res); rep["id"] != id || countDocs() != n {
		t.Fatalf("replay duplicated again: %v (%d documents, had %d)", rep, countDocs(), n)
	}
	// The source changed after the preflight: state_changed, nothing copied.
	pre = s.Preflight(t, "document", args, "expectedStateHash", 1)
	s.Drifted(t, "document", args, pre, func() {
		if _, err := s.C.AppendBlock(ctx, "markdown", "late", src); err != nil {
			t.Fatal(err)
		}
	})
	if countDocs() != n {
		t.Fatal("a stale duplicate copied")
	}
	s.InvalidAt(t, "document", map[string]any{"action": "duplicate", "id": s.Blocks[0]}, false)
	s.WantErr(t, "document", map[string]any{"action": "duplicate", "id": "20200101010101-abcdefg", "validateOnly": true}, failure.NotFound)
}

func TestHeadingToDoc(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	src := s.MkDoc(t, s.NB, "/Src", "# H1\n\npara\n\n## H2\n\nunder\n\n# Other\n\ntail")
	kids := s.Kids(t, src)
	h1 := kids[0]
	h2 := s.Kids(t, s.MkDoc(t, s.NB, "/Spare", "## Spare\n\nx"))[0]
	h3 := s.Kids(t, s.MkDoc(t, s.NB, "/Spare3", "## Spare3\n\ny"))[0]
	args := map[string]any{"action": "heading_to_doc", "headingID": h1, "targetNotebook": s.NB}
	pre := s.Preflight(t, "document", args, "expectedStructureHash", 2)
	res := s.Commit(t, "document", args, pre)
	if res["id"] != h1 || res["path"] != "/"+h1+".sy" || s.Where(t, h1).Path != "/"+h1+".sy" {
		t.Fatalf("heading_to_doc: %v", res)
	}
	if got := s.Kids(t, h1); !slices.Equal(got, kids[1:4]) {
		t.Fatalf("new document holds %v, want %v", got, kids[1:4])
	}
	if got := s.Kids(t, src); !slices.Equal(got, kids[4:]) {
		t.Fatalf("source holds %v, want %v", got, kids[4:])
	}
	s.Replay(t, "document", args, pre, res)
	// Under a document, by its storage path.
	under := map[string]any{"action": "heading_to_doc", "headingID": kids[4], "targetNotebook": s.NB, "targetPath": s.Where(t, s.Doc).Path}
	pre = s.Preflight(t, "document", under, "expectedStructureHash", 2)
	s.Drifted(t, "document", under, pre, func() {
		if _, err := s.C.InsertBlock(ctx, siyuan.InsertBlockRequest{DataType: "markdown", Data: "late", PreviousID: kids[4]}); err != nil {
			t.Fatal(err)
		}
	})
	pre = s.Preflight(t, "document", under, "expectedStructureHash", 2)
	s.Commit(t, "document", under, pre)
	if p := s.Where(t, kids[4]).Path; p != strings.TrimSuffix(s.Where(t, s.Doc).Path, ".sy")+"/"+kids[4]+".sy" {
		t.Fatalf("under a document: %s", p)
	}
	// Write permission is needed in both notebooks.
	other, err := s.C.CreateNotebook(ctx, "Other")
	if err != nil {
		t.Fatal(err)
	}
	s.Policy = &tools.Policy{Notebooks: map[string]tools.Level{other.ID: tools.LevelRead}, Default: tools.LevelWrite, AllActions: true, Strict: true, Version: "t"}
	cross := map[string]any{"action": "heading_to_doc", "headingID": h2, "targetNotebook": other.ID, "validateOnly": true}
	if e := s.WantErr(t, "document", cross, failure.PermissionDenied); e.Details["notebook"] != other.ID {
		t.Fatalf("read-only target notebook: %+v", e)
	}
	s.Policy = &tools.Policy{Notebooks: map[string]tools.Level{s.NB: tools.LevelRead}, Default: tools.LevelWrite, AllActions: true, Strict: true, Version: "t2"}
	if e := s.WantErr(t, "document", cross, failure.PermissionDenied); e.Details["notebook"] != s.NB {
		t.Fatalf("read-only source notebook: %+v", e)
	}
	s.Policy = nil
	res = s.Commit(t, "document", cross, s.Preflight(t, "document", cross, "expectedStructureHash", 2))
	if s.Where(t, h2).Notebook != other.ID {
		t.Fatalf("across notebooks: %v", res)
	}
	// After a sibling document, by its storage path: at the root, next to it.
	next := map[string]any{"action": "heading_to_doc", "headingID": kids[2], "targetNotebook": s.NB, "previousPath": s.Where(t, s.Doc).Path}
	res = s.Commit(t, "document", next, s.Preflight(t, "document", next, "expectedStructureHash", 2))
	if res["path"] != "/"+kids[2]+".sy" || s.Where(t, kids[2]).Path != "/"+kids[2]+".sy" || res["previousPath"] != s.Where(t, s.Doc).Path {
		t.Fatalf("after a sibling: %v", res)
	}
	if order := s.childOrder(t, s.NB, "/"); slices.Index(order, kids[2]) != slices.Index(order, s.Doc)+1 {
		t.Fatalf("root order %v: %s is not right after %s", order, kids[2], s.Doc)
	}
	for _, bad := range []struct {
		args map[string]any
		code failure.Code
	}{
		{map[string]any{"action": "heading_to_doc", "headingID": s.Blocks[0], "targetNotebook": s.NB}, failure.InvalidArguments},
		{map[string]any{"action": "heading_to_doc", "headingID": s.Doc, "targetNotebook": s.NB}, failure.InvalidArguments},
		{map[string]any{"action": "heading_to_doc", "headingID": "20200101010101-abcdefg", "targetNotebook": s.NB}, failure.NotFound},
		{map[string]any{"action": "heading_to_doc", "headingID": h3, "targetNotebook": "20200101010101-abcdefg"}, failure.NotFound},
		{map[string]any{"action": "heading_to_doc", "headingID": h3, "targetNotebook": s.NB, "targetPath": "/20200101010101-abcdefg.sy"}, failure.NotFound},
		{map[string]any{"action": "heading_to_doc", "headingID": h3, "targetNotebook": s.NB, "previousPath": "/20200101010101-abcdefg.sy"}, failure.NotFound},
		{map[string]any{"action": "heading_to_doc", "headingID": h3, "targetNotebook": s.NB, "targetPath": "Doc"}, failure.InvalidArguments},
	} {
		e := s.WantErr(t, "document", tooltest.CopyArgs(bad.args, "validateOnly", true), bad.code)
		if e.WriteAttempted == nil || *e.WriteAttempted || e.RequestID != "" {
			t.Fatalf("%v: refused preflight %+v", bad.args, e)
		}
	}
}

func TestDocToHeading(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	target := s.MkDoc(t, s.NB, "/Target", "# T1\n\ntext\n\n# T2\n\nmore")
	tk := s.Kids(t, target)
	mover := s.MkDoc(t, s.NB, "/Mover", "## M\n\nbody")
	mk := s.Kids(t, mover)
	args := map[string]any{"action": "doc_to_heading", "srcID": mover, "targetID": tk[2], "after": true}
	pre := s.Preflight(t, "document", args, "expectedStructureHash", 2)
	res := s.Commit(t, "document", args, pre)
	if res["id"] != mover || res["srcTreePath"] != "/"+mover+".sy" {
		t.Fatalf("doc_to_heading: %v", res)
	}
	if got, want := s.Kids(t, target), append(slices.Clone(tk), mover, mk[0], mk[1]); !slices.Equal(got, want) {
		t.Fatalf("target holds %v, want %v", got, want)
	}
	s.Replay(t, "document", args, pre, res)

	other := s.MkDoc(t, s.NB, "/Other", "x")
	before := map[string]any{"action": "doc_to_heading", "srcID": other, "targetID": tk[1]}
	pre = s.Preflight(t, "document", before, "expectedStructureHash", 2)
	s.Drifted(t, "document", before, pre, func() {
		if _, err := s.C.AppendBlock(ctx, "markdown", "late", other); err != nil {
			t.Fatal(err)
		}
	})
	parent := s.MkDoc(t, s.NB, "/Parent", "p")
	s.MkDoc(t, s.NB, "/Parent/Kid", "k")
	for _, bad := range []struct {
		args map[string]any
		code failure.Code
	}{
		{map[string]any{"action": "doc_to_heading", "srcID": other, "targetID": target}, failure.InvalidArguments},
		{map[string]any{"action": "doc_to_heading", "srcID": tk[0], "targetID": tk[1]}, failure.InvalidArguments},
		{map[string]any{"action": "doc_to_heading", "srcID": parent, "targetID": tk[1]}, failure.InvalidArguments},
		{map[string]any{"action": "doc_to_heading", "srcID": s.NB, "targetID": tk[1]}, failure.InvalidArguments},
		{map[string]any{"action": "doc_to_heading", "srcID": target, "targetID": tk[1]}, failure.InvalidArguments},
		{map[string]any{"action": "doc_to_heading", "srcID": other, "targetID": "20200101010101-abcdefg"}, failure.NotFound},
		{map[string]any{"action": "doc_to_heading", "srcID": "20200101010101-abcdefg", "targetID": tk[1]}, failure.NotFound},
	} {
		e := s.WantErr(t, "document", tooltest.CopyArgs(bad.args, "validateOnly", true), bad.code)
		if e.WriteAttempted == nil || *e.WriteAttempted || e.RequestID != "" {
			t.Fatalf("%v: refused preflight %+v", bad.args, e)
		}
	}
	if !s.Exists(t, other) || s.Where(t, other).Path != "/"+other+".sy" {
		t.Fatal("a refused doc_to_heading moved the document")
	}
}
