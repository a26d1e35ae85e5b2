package contract

import (
	"path"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// Daily notes (createDailyNote, append/prependDailyNoteBlock) and document
// structure changes (duplicateDoc, heading2Doc, doc2Heading), as SiYuan
// 3.7.3 answers them. The daily-note checks run in a notebook of their own,
// whose daily-note settings they change.
var dailyChecks = []check{
	{"daily_note_created_once", checkDailyNoteOnce},
	{"daily_note_found_gains_attr", checkDailyNoteFound},
	{"daily_note_template", checkDailyNoteTemplate},
	{"daily_note_errors", checkDailyNoteErrors},
	{"daily_note_append_prepend", checkDailyNoteInsert},
	{"duplicate_doc", checkDuplicateDoc},
	{"duplicate_doc_errors", checkDuplicateDocErrors},
	{"heading_to_doc", checkHeadingToDoc},
	{"heading_to_doc_odd_inputs", checkHeadingToDocOdd},
	{"heading_doc_across_notebooks", checkHeadingDocAcrossNotebooks},
	{"doc_to_heading", checkDocToHeading},
	{"doc_to_heading_refusals", checkDocToHeadingRefusals},
}

// today is the kernel's date, as its daily-note template renders it (the
// suite runs beside the kernel, in its time zone).
func today() time.Time { return time.Now() }

func (s *suite) setDailyConf(t *testing.T, nb, savePath, tpl string) {
	t.Helper()
	conf, err := s.c.GetNotebookConf(t.Context(), nb)
	must(t, "GetNotebookConf", err)
	c := conf.Conf
	c.DailyNoteSavePath, c.DailyNoteTemplatePath = savePath, tpl
	_, err = s.c.SetNotebookConf(t.Context(), nb, c)
	must(t, "SetNotebookConf", err)
}

func checkDailyNoteOnce(t *testing.T, s *suite) {
	nb, _ := s.auxNotebook(t, "daily1")
	id, err := s.c.CreateDailyNote(t.Context(), nb, "")
	must(t, "CreateDailyNote", err)
	again, err := s.c.CreateDailyNote(t.Context(), nb, "")
	must(t, "CreateDailyNote again", err)
	if again != id {
		t.Fatalf("second CreateDailyNote = %s, want the same note %s", again, id)
	}
	now := today()
	hp, err := s.c.GetHPathByID(t.Context(), id)
	must(t, "GetHPathByID", err)
	// A new notebook's dailyNoteSavePath is
	// /daily note/{{now | date "2006/01"}}/{{now | date "2006-01-02"}}.
	if want := "/daily note/" + now.Format("2006/01") + "/" + now.Format("2006-01-02"); hp != want {
		t.Fatalf("daily note hpath = %q, want %q", hp, want)
	}
	date := now.Format("20060102")
	if a := s.attrs(t, id); a["custom-dailynote-"+date] != date || a["title"] != now.Format("2006-01-02") {
		t.Fatalf("daily note attrs = %v", a)
	}
	if kids := s.children(t, id); len(kids) != 1 || kids[0].Type != "p" || kids[0].Markdown != "" {
		t.Fatalf("new daily note children = %+v, want one empty paragraph", kids)
	}
	// The intermediate documents /daily note and /daily note/YYYY/MM exist.
	ids, err := s.c.GetIDsByHPath(t.Context(), nb, "/daily note/"+now.Format("2006/01"))
	must(t, "GetIDsByHPath", err)
	if len(ids) != 1 {
		t.Fatalf("month document: %v", ids)
	}
}

func checkDailyNoteFound(t *testing.T, s *suite) {
	nb, _ := s.auxNotebook(t, "daily2")
	s.setDailyConf(t, nb, `/j/{{now | date "2006-01-02"}}`, "")
	now := today()
	doc, err := s.c.CreateDocWithMd(t.Context(), siyuan.CreateDocRequest{Notebook: nb, Path: "/j/" + now.Format("2006-01-02"), Markdown: "already here"})
	must(t, "CreateDocWithMd", err)
	id, err := s.c.CreateDailyNote(t.Context(), nb, "")
	must(t, "CreateDailyNote", err)
	if id != doc {
		t.Fatalf("CreateDailyNote = %s, want the document at the path, %s", id, doc)
	}
	// The attribute is written into the tree; getBlockAttrs may serve the
	// cached attributes without it for a while on SiYuan.
	date := now.Format("20060102")
	if k := s.kramdown(t, doc); !strings.Contains(k, `custom-dailynote-`+date+`="`+date+`"`) {
		t.Fatalf("found note kramdown = %q, want the daily-note attribute", k)
	}
	if kids := s.children(t, doc); len(kids) != 1 || kids[0].Markdown != "already here" {
		t.Fatalf("found note children = %+v, want its body untouched", kids)
	}
}

func checkDailyNoteTemplate(t *testing.T, s *suite) {
	nb, _ := s.auxNotebook(t, "daily3")
	name := s.templateName("daily")
	s.putTemplate(t, name+".md", "## Log\n\n- item\n")
	s.setDailyConf(t, nb, `/t/{{now | date "2006-01-02"}}`, name+".md")
	id, err := s.c.CreateDailyNote(t.Context(), nb, "")
	must(t, "CreateDailyNote", err)
	kids := s.children(t, id)
	if len(kids) != 2 || kids[0].Type != "h" || kids[0].Markdown != "## Log" || kids[1].Type != "l" {
		t.Fatalf("templated daily note children = %+v, want the template's heading and list", kids)
	}
	date := today().Format("20060102")
	if k := s.kramdown(t, id); !strings.Contains(k, `custom-dailynote-`+date+`="`+date+`"`) {
		t.Fatalf("templated note kramdown = %q", k)
	}
	// A trailing IAL in the template stays on its last block: the note's
	// own attributes are not taken from it.
	s.putTemplate(t, name+"-ial.md", "body line\n\n{: custom-t=\"1\" icon=\"1f4d4\"}\n")
	s.setDailyConf(t, nb, `/v/{{now | date "2006-01-02"}}`, name+"-ial.md")
	idIAL, err := s.c.CreateDailyNote(t.Context(), nb, "")
	must(t, "CreateDailyNote with a trailing IAL", err)
	kids = s.children(t, idIAL)
	if len(kids) != 1 || kids[0].Markdown != "body line" || s.attrs(t, kids[0].ID)["custom-t"] != "1" || s.attrs(t, idIAL)["custom-t"] != "" {
		t.Fatalf("template with a trailing IAL: %+v, note attrs %v", kids, s.attrs(t, idIAL))
	}
	// A template that does not exist is skipped: an empty note.
	s.setDailyConf(t, nb, `/u/{{now | date "2006-01-02"}}`, name+"-missing.md")
	id2, err := s.c.CreateDailyNote(t.Context(), nb, "")
	must(t, "CreateDailyNote without its template", err)
	if kids := s.children(t, id2); len(kids) != 1 || kids[0].Markdown != "" {
		t.Fatalf("daily note of a missing template = %+v", kids)
	}
}

func checkDailyNoteErrors(t *testing.T, s *suite) {
	nb, _ := s.auxNotebook(t, "daily4")
	_, err := s.c.CreateDailyNote(t.Context(), freshID(), "")
	if api := apiError(t, "CreateDailyNote of a missing notebook", err); api.Code != 1 || api.Msg != "notebook not found" {
		t.Fatalf("missing notebook: %+v", api)
	}
	_, err = s.c.CreateDailyNote(t.Context(), "not-an-id", "")
	if api := apiError(t, "CreateDailyNote of a malformed id", err); api.Code != 1 || api.Msg != "notebook not found" {
		t.Fatalf("malformed id: %+v", api)
	}
	s.setDailyConf(t, nb, "", "")
	_, err = s.c.CreateDailyNote(t.Context(), nb, "")
	if api := apiError(t, "CreateDailyNote without a path", err); api.Code != -1 || api.Msg != "Please specify the daily note save path in the Notebook Settings" {
		t.Fatalf("no save path: %+v", api)
	}
	s.setDailyConf(t, nb, `/j/{{ nosuchfunc }}`, "")
	_, err = s.c.CreateDailyNote(t.Context(), nb, "")
	if api := apiError(t, "CreateDailyNote with a bad template", err); api.Code != -1 || !strings.HasPrefix(api.Msg, "Parse template failed: ") {
		t.Fatalf("bad path template: %+v", api)
	}
	_, err = s.c.AppendDailyNoteBlock(t.Context(), "not-an-id", "markdown", "x")
	if api := apiError(t, "AppendDailyNoteBlock of a malformed id", err); api.Code != -1 || api.Msg != "invalid ID argument" {
		t.Fatalf("append, malformed id: %+v", api)
	}
	_, err = s.c.PrependDailyNoteBlock(t.Context(), freshID(), "markdown", "x")
	if api := apiError(t, "PrependDailyNoteBlock of a missing notebook", err); api.Code != -1 || api.Msg != "create daily note failed: notebook not found" {
		t.Fatalf("prepend, missing notebook: %+v", api)
	}
}

func checkDailyNoteInsert(t *testing.T, s *suite) {
	nb, _ := s.auxNotebook(t, "daily5")
	txs, err := s.c.AppendDailyNoteBlock(t.Context(), nb, "markdown", "appended **x**")
	must(t, "AppendDailyNoteBlock", err)
	app := oneInsert(t, txs)
	note, err := s.c.CreateDailyNote(t.Context(), nb, "")
	must(t, "CreateDailyNote", err)
	kids := s.children(t, note)
	if app.ParentID != note || len(kids) != 2 || app.ID != kids[1].ID || app.PreviousID != kids[0].ID {
		t.Fatalf("append op %+v into note %s with children %+v", app, note, kids)
	}
	txs, err = s.c.PrependDailyNoteBlock(t.Context(), nb, "markdown", "prepended")
	must(t, "PrependDailyNoteBlock", err)
	pre := oneInsert(t, txs)
	if pre.ParentID != note || pre.PreviousID != "" || !nodeIDRe.MatchString(pre.ID) {
		t.Fatalf("prepend op %+v", pre)
	}
	// The note's empty paragraph stays between the two.
	kids = s.children(t, note)
	var got []string
	for _, k := range kids {
		got = append(got, k.Markdown)
	}
	requireOrder(t, "daily note", got, []string{"prepended", "", "appended **x**"})
	if kids[0].ID != pre.ID {
		t.Fatalf("first child %s, want the prepended %s", kids[0].ID, pre.ID)
	}
}

var dupTitleRe = regexp.MustCompile(`^(.*) \(Duplicated (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\)$`)

func checkDuplicateDoc(t *testing.T, s *suite) {
	title := "dup-" + randWord(6)
	parentTitle := "dup-parent-" + randWord(6)
	other := s.newDoc(t, "dup-other-"+randWord(6), "outside")
	otherKid := s.childIDs(t, other)[0]
	parent := s.newDoc(t, parentTitle, "")
	s.newDocAt(t, "/"+parentTitle+"/sibling", "")
	src := s.newDocAt(t, "/"+parentTitle+"/"+title, "# Head\n\ntarget para\n{: custom-a=\"1\"}")
	kids := s.children(t, src)
	target := kids[1].ID
	_, err := s.c.AppendBlock(t.Context(), "markdown", `see ((`+target+` "in"))  and ((`+otherKid+` "out"))`, src)
	must(t, "AppendBlock refs", err)
	must(t, "SetBlockAttrs", s.c.SetBlockAttrs(t.Context(), src, map[string]string{"custom-doc": "v"}))
	s.newDocAt(t, "/"+parentTitle+"/"+title+"/kid", "kid")
	// The kernel's IAL attribute order is not stable: compare sorted.
	sorted := func(k string) string {
		names := map[string]string{}
		for _, id := range anyIDRe.FindAllString(k, -1) {
			names[id] = id
		}
		return normKramdown(k, names)
	}
	before := sorted(s.kramdown(t, src))

	dup, err := s.c.DuplicateDoc(t.Context(), src)
	must(t, "DuplicateDoc", err)
	if !nodeIDRe.MatchString(dup.ID) || dup.ID == src || dup.Notebook != s.box || dup.Path != "/"+parent+"/"+dup.ID+".sy" {
		t.Fatalf("DuplicateDoc = %+v", dup)
	}
	m := dupTitleRe.FindStringSubmatch(dup.HPath)
	// The answer's human path joins the suffix with two spaces.
	if m == nil || m[1] != "/"+parentTitle+"/"+title+" " {
		t.Fatalf("DuplicateDoc hPath = %q, want %q + two spaces + (Duplicated <time>)", dup.HPath, "/"+parentTitle+"/"+title)
	}
	stamp, _ := time.ParseInLocation("2006-01-02 15:04:05", m[2], time.Local)
	if stamp.Format("20060102150405") != dup.ID[:14] {
		t.Fatalf("duplicate's time %s is not its id's %s", m[2], dup.ID[:14])
	}
	hp, err := s.c.GetHPathByID(t.Context(), dup.ID)
	must(t, "GetHPathByID", err)
	wantTitle := title + " (Duplicated " + m[2] + ")"
	if hp != "/"+parentTitle+"/"+wantTitle {
		t.Fatalf("duplicate's hpath = %q, want %q", hp, "/"+parentTitle+"/"+wantTitle)
	}
	a := s.attrs(t, dup.ID)
	if a["title"] != wantTitle || a["custom-doc"] != "v" {
		t.Fatalf("duplicate attrs = %v", a)
	}
	got := s.children(t, dup.ID)
	if len(got) != len(kids)+1 {
		t.Fatalf("duplicate has %d children, want %d", len(got), len(kids)+1)
	}
	srcIDs := map[string]bool{src: true}
	for _, k := range s.children(t, src) {
		srcIDs[k.ID] = true
	}
	for _, k := range got {
		if srcIDs[k.ID] {
			t.Fatalf("duplicate reuses block id %s", k.ID)
		}
	}
	// A reference to a block of the document follows the copy; one to
	// another document's block stays.
	dk := s.kramdown(t, dup.ID)
	if !strings.Contains(dk, "(("+got[1].ID+` "in"))`) || !strings.Contains(dk, "(("+otherKid+` "out"))`) || !strings.Contains(dk, `custom-a="1"`) {
		t.Fatalf("duplicate kramdown = %q", dk)
	}
	// The source is unchanged, its sub-document is not copied, and the copy
	// is listed right after the source.
	if after := sorted(s.kramdown(t, src)); after != before {
		t.Fatalf("source changed by duplication:\n%s\n----\n%s", before, after)
	}
	sub, err := s.c.ListDocsByPath(t.Context(), siyuan.ListDocsRequest{Notebook: s.box, Path: dup.Path})
	must(t, "ListDocsByPath", err)
	if len(sub.Files) != 0 {
		t.Fatalf("duplicate has sub-documents %+v", sub.Files)
	}
	var order []string
	for _, f := range s.listUnder(t, parent) {
		order = append(order, f.ID)
	}
	i := indexOf(order, src)
	if i < 0 || i+1 >= len(order) || order[i+1] != dup.ID {
		t.Fatalf("order %v: the copy %s is not right after %s", order, dup.ID, src)
	}
}

func indexOf(ids []string, id string) int {
	for i, x := range ids {
		if x == id {
			return i
		}
	}
	return -1
}

func checkDuplicateDocErrors(t *testing.T, s *suite) {
	for _, id := range []string{freshID(), "not-an-id"} {
		_, err := s.c.DuplicateDoc(t.Context(), id)
		if api := apiError(t, "DuplicateDoc "+id, err); api.Code != -1 || api.Msg != "tree not found" {
			t.Fatalf("DuplicateDoc(%s): %+v", id, api)
		}
	}
	// A block id stands for its document: the whole document is copied.
	doc, paras := s.docWithParas(t, "dup-block-"+randWord(6), "one", "two")
	dup, err := s.c.DuplicateDoc(t.Context(), paras[1])
	must(t, "DuplicateDoc of a block", err)
	if got := s.children(t, dup.ID); len(got) != 2 || got[0].Markdown != "one" || got[1].Markdown != "two" {
		t.Fatalf("copy of %s made from its block: %+v", doc, got)
	}
}

// headingDoc makes a document of two top-level sections, the first with a
// sub-heading, and returns its id and its blocks' ids by their text.
func (s *suite) headingDoc(t *testing.T, title string) (string, map[string]string) {
	t.Helper()
	doc := s.newDoc(t, title, "# H1\n\npara one\n{: custom-a=\"1\"}\n\n## H2\n\nunder h2\n\n# Other\n\ntail")
	ids := map[string]string{}
	for _, k := range s.children(t, doc) {
		ids[k.Content] = k.ID
	}
	if len(ids) != 6 {
		t.Fatalf("heading doc: %v", ids)
	}
	return doc, ids
}

func checkHeadingToDoc(t *testing.T, s *suite) {
	title := "h2d-" + randWord(6)
	doc, ids := s.headingDoc(t, title)
	h1 := ids["H1"]
	must(t, "Heading2Doc to the root", s.c.Heading2Doc(t.Context(), siyuan.Heading2DocRequest{HeadingID: h1, TargetNotebook: s.box, TargetPath: "/"}))
	p, err := s.c.GetPathByID(t.Context(), h1)
	must(t, "GetPathByID", err)
	if p.Path != "/"+h1+".sy" || p.Notebook != s.box {
		t.Fatalf("new document at %+v", p)
	}
	hp, err := s.c.GetHPathByID(t.Context(), h1)
	must(t, "GetHPathByID", err)
	if hp != "/H1" {
		t.Fatalf("new document hpath %q", hp)
	}
	// The section moves with its ids; the sub-heading keeps its level (the
	// top heading of the new document becomes h2).
	var got []string
	for _, k := range s.children(t, h1) {
		got = append(got, k.ID+" "+k.Markdown)
	}
	requireOrder(t, "new document", got, []string{ids["para one"] + " para one", ids["H2"] + " ## H2", ids["under h2"] + " under h2"})
	if k := s.kramdown(t, h1); !strings.Contains(k, `custom-a="1"`) || !strings.Contains(k, `title="H1"`) || !strings.Contains(k, `type="doc"`) {
		t.Fatalf("new document kramdown %q", k)
	}
	requireOrder(t, "source", s.childIDs(t, doc), []string{ids["Other"], ids["tail"]})

	// Under a document: targetPath is the parent's storage path.
	other := ids["Other"]
	must(t, "Heading2Doc under a document", s.c.Heading2Doc(t.Context(), siyuan.Heading2DocRequest{HeadingID: other, TargetNotebook: s.box, TargetPath: "/" + doc + ".sy"}))
	p, err = s.c.GetPathByID(t.Context(), other)
	must(t, "GetPathByID", err)
	if p.Path != "/"+doc+"/"+other+".sy" {
		t.Fatalf("sub-document at %q", p.Path)
	}
	hp, err = s.c.GetHPathByID(t.Context(), other)
	must(t, "GetHPathByID", err)
	if hp != "/"+title+"/Other" {
		t.Fatalf("sub-document hpath %q", hp)
	}
	// After a sibling: previousPath names it; the new document is its sibling.
	h2 := ids["H2"]
	must(t, "Heading2Doc after a sibling", s.c.Heading2Doc(t.Context(), siyuan.Heading2DocRequest{HeadingID: h2, TargetNotebook: s.box, PreviousPath: "/" + doc + "/" + other + ".sy"}))
	p, err = s.c.GetPathByID(t.Context(), h2)
	must(t, "GetPathByID", err)
	if p.Path != "/"+doc+"/"+h2+".sy" {
		t.Fatalf("sibling document at %q", p.Path)
	}
	requireOrder(t, "H2's section left in H1", s.childIDs(t, h1), []string{ids["para one"]})
	requireOrder(t, "the sibling's blocks", s.childIDs(t, h2), []string{ids["under h2"]})
	// The emptied source keeps one new empty paragraph.
	if kids := s.children(t, doc); len(kids) != 1 || kids[0].Type != "p" || kids[0].Markdown != "" {
		t.Fatalf("emptied source children %+v", kids)
	}
	s.removeDocs(t, other, h2, h1, doc)
}

// removeDocs removes documents a check made, children first.
func (s *suite) removeDocs(t *testing.T, ids ...string) {
	t.Helper()
	for _, id := range ids {
		must(t, "RemoveDocByID "+id, s.c.RemoveDocByID(t.Context(), id))
	}
}

func checkHeadingToDocOdd(t *testing.T, s *suite) {
	err := s.c.Heading2Doc(t.Context(), siyuan.Heading2DocRequest{HeadingID: freshID(), TargetNotebook: s.box, TargetPath: "/"})
	if api := apiError(t, "Heading2Doc of a missing heading", err); api.Code != -1 || api.Msg != "block not found" {
		t.Fatalf("missing heading: %+v", api)
	}
	doc, ids := s.headingDoc(t, "h2d-odd-"+randWord(6))
	err = s.c.Heading2Doc(t.Context(), siyuan.Heading2DocRequest{HeadingID: ids["H1"], TargetNotebook: s.box, TargetPath: "/" + freshID() + ".sy"})
	if api := apiError(t, "Heading2Doc under a missing document", err); api.Code != -1 || api.Msg != "block not found" {
		t.Fatalf("missing parent: %+v", api)
	}
	// SiYuan converts any block: a paragraph becomes a document titled by
	// its text, taking every block after it.
	para := ids["under h2"]
	must(t, "Heading2Doc of a paragraph", s.c.Heading2Doc(t.Context(), siyuan.Heading2DocRequest{HeadingID: para, TargetNotebook: s.box, TargetPath: "/"}))
	hp, err := s.c.GetHPathByID(t.Context(), para)
	must(t, "GetHPathByID", err)
	if hp != "/under h2" {
		t.Fatalf("paragraph document hpath %q", hp)
	}
	requireOrder(t, "paragraph document", s.childIDs(t, para), []string{ids["Other"], ids["tail"]})
	requireOrder(t, "source", s.childIDs(t, doc), []string{ids["H1"], ids["para one"], ids["H2"]})
	s.removeDocs(t, para, doc)
}

func checkDocToHeading(t *testing.T, s *suite) {
	target := s.newDoc(t, "d2h-target-"+randWord(6), "# T1\n\ntext\n\n# T2\n\nmore")
	tk := map[string]string{}
	for _, k := range s.children(t, target) {
		tk[k.Content] = k.ID
	}
	mover := s.newDoc(t, "Mover", "## M\n\nbody")
	mkids := s.childIDs(t, mover)
	must(t, "SetBlockAttrs", s.c.SetBlockAttrs(t.Context(), mover, map[string]string{"tags": "a,b", "custom-m": "1"}))
	res, err := s.c.Doc2Heading(t.Context(), mover, tk["T1"], false)
	must(t, "Doc2Heading before a heading", err)
	if res.SrcTreeBox != s.box || res.SrcTreePath != "/"+mover+".sy" {
		t.Fatalf("Doc2Heading = %+v", res)
	}
	kids := s.children(t, target)
	var got []string
	for _, k := range kids {
		got = append(got, k.Markdown)
	}
	// The document becomes a heading of the target's level with its id;
	// its tags become a paragraph; a sub-heading keeps its level here.
	requireOrder(t, "target", got, []string{"# Mover", "#a# #b#", "## M", "body", "# T1", "text", "# T2", "more"})
	if kids[0].ID != mover || kids[2].ID != mkids[0] || kids[3].ID != mkids[1] {
		t.Fatalf("moved ids: %+v", kids)
	}
	k := s.kramdown(t, target)
	if !strings.Contains(k, `custom-m="1"`) {
		t.Fatalf("heading lost the document's attributes: %q", k)
	}
	p, err := s.c.GetPathByID(t.Context(), mover)
	must(t, "GetPathByID", err)
	if p.Path != "/"+target+".sy" {
		t.Fatalf("the heading %s lives at %q", mover, p.Path)
	}

	// After a heading: after its section, one level below a paragraph.
	m2 := s.newDoc(t, "M2", "m2 body")
	m2kid := s.childIDs(t, m2)[0]
	_, err = s.c.Doc2Heading(t.Context(), m2, tk["T2"], true)
	must(t, "Doc2Heading after a heading", err)
	got = nil
	for _, k := range s.children(t, target) {
		got = append(got, k.ID)
	}
	requireOrder(t, "target after", got[6:], []string{tk["T2"], tk["more"], m2, m2kid})
	m3 := s.newDoc(t, "M3", "m3 body")
	_, err = s.c.Doc2Heading(t.Context(), m3, tk["text"], false)
	must(t, "Doc2Heading before a paragraph", err)
	kids = s.children(t, target)
	i := indexOf(childIDsOf(kids), m3)
	if i < 0 || kids[i].Markdown != "## M3" || kids[i+2].ID != tk["text"] {
		t.Fatalf("before a paragraph: %+v", kids)
	}
	s.removeDocs(t, target)
}

func childIDsOf(kids []siyuan.ChildBlock) []string {
	var ids []string
	for _, k := range kids {
		ids = append(ids, k.ID)
	}
	return ids
}

func checkDocToHeadingRefusals(t *testing.T, s *suite) {
	target, paras := s.docWithParas(t, "d2h-r-"+randWord(6), "one")
	_, err := s.c.Doc2Heading(t.Context(), freshID(), paras[0], false)
	if api := apiError(t, "Doc2Heading of a missing document", err); api.Code != -1 || api.Msg != "block not found" {
		t.Fatalf("missing source: %+v", api)
	}
	_, err = s.c.Doc2Heading(t.Context(), s.box, paras[0], false)
	if api := apiError(t, "Doc2Heading of the notebook document", err); api.Code != -1 || api.Msg != "The top-level notebook document cannot be removed or moved" {
		t.Fatalf("notebook document: %+v", api)
	}
	parentTitle := "d2h-parent-" + randWord(6)
	parent := s.newDoc(t, parentTitle, "p")
	kid := s.newDocAt(t, "/"+parentTitle+"/kid", "k")
	_, err = s.c.Doc2Heading(t.Context(), parent, paras[0], false)
	if api := apiError(t, "Doc2Heading with sub-documents", err); api.Code != -1 || api.Msg != "Cannot be converted to heading when including sub-documents" {
		t.Fatalf("sub-documents: %+v", api)
	}
	// A target that does not exist: success, nothing done.
	src := s.newDoc(t, "d2h-src-"+randWord(6), "kept")
	res, err := s.c.Doc2Heading(t.Context(), src, freshID(), false)
	must(t, "Doc2Heading to a missing target", err)
	if res.SrcTreeBox != "" || res.SrcTreePath != "" || !s.exists(t, src) {
		t.Fatalf("missing target: %+v, source exists %v", res, s.exists(t, src))
	}
	if p, err := s.c.GetPathByID(t.Context(), src); err != nil || path.Base(p.Path) != src+".sy" {
		t.Fatalf("source after a missing target: %+v %v", p, err)
	}
	// A document as the target (after:true) loses the source's content:
	// the source is removed and the target unchanged.
	before := s.childIDs(t, target)
	res, err = s.c.Doc2Heading(t.Context(), src, target, true)
	must(t, "Doc2Heading onto a document", err)
	if res.SrcTreePath != "/"+src+".sy" {
		t.Fatalf("onto a document: %+v", res)
	}
	s.eventually(t, "source removed", func() bool { return !s.exists(t, src) })
	requireOrder(t, "target of a document target", s.childIDs(t, target), before)
	s.removeDocs(t, kid, parent, target)
}

func checkHeadingDocAcrossNotebooks(t *testing.T, s *suite) {
	aux, _ := s.auxNotebook(t, "h2d")
	doc := s.newDoc(t, "cross-"+randWord(6), "# CH\n\ncross body")
	kids := s.childIDs(t, doc)
	must(t, "Heading2Doc to another notebook", s.c.Heading2Doc(t.Context(), siyuan.Heading2DocRequest{HeadingID: kids[0], TargetNotebook: aux, TargetPath: "/"}))
	p, err := s.c.GetPathByID(t.Context(), kids[0])
	must(t, "GetPathByID", err)
	if p.Notebook != aux || p.Path != "/"+kids[0]+".sy" {
		t.Fatalf("across notebooks: %+v", p)
	}
	requireOrder(t, "moved section", s.childIDs(t, kids[0]), kids[1:])
	// And back, as a heading before the source's new empty paragraph.
	para := s.childIDs(t, doc)
	if len(para) != 1 {
		t.Fatalf("emptied source: %v", para)
	}
	res, err := s.c.Doc2Heading(t.Context(), kids[0], para[0], false)
	must(t, "Doc2Heading from another notebook", err)
	if res.SrcTreeBox != aux || res.SrcTreePath != "/"+kids[0]+".sy" {
		t.Fatalf("Doc2Heading across notebooks = %+v", res)
	}
	requireOrder(t, "back in the source", s.childIDs(t, doc), []string{kids[0], kids[1], para[0]})
	p, err = s.c.GetPathByID(t.Context(), kids[0])
	must(t, "GetPathByID", err)
	if p.Notebook != s.box {
		t.Fatalf("heading back in %+v", p)
	}
	s.removeDocs(t, doc)
}
