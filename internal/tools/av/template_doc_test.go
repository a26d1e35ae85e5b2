package av

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// meetingTpl is a content template as SiYuan saves a document as a
// template: blocks, then the document's own attributes.
const meetingTpl = "## Agenda of .action{.title}\n\n- first point\n\n{: id=\"20200101000000-abcdefg\" title=\"Meeting\" type=\"doc\" icon=\"1f4c5\" custom-kind=\"meeting\" name=\"mtg\"}\n"

func (s *fix) putTemplate(t *testing.T, rel, src string) {
	t.Helper()
	if err := s.C.PutFile(context.Background(), siyuan.PutFileRequest{Path: "/data/templates/" + rel, Body: strings.NewReader(src)}); err != nil {
		t.Fatal(err)
	}
}

func contentTemplate(id, key, pk, path, icon string) *siyuan.AVNewItemTemplate {
	return &siyuan.AVNewItemTemplate{ID: id, Name: "Meeting", TargetType: "document", PrimaryKeyTemplate: pk, Icon: icon,
		SaveLocation: &siyuan.AVNewItemSaveLocation{PathTemplate: "meetings/"}, ContentTemplatePath: path,
		FieldValues: map[string]*siyuan.AVNewItemFieldValue{key: {Mode: "static", Value: &siyuan.AVValue{Type: "text", Text: &siyuan.AVValueContent{Content: "hi"}}}}}
}

// filled requires doc to hold exactly the meeting template's blocks, the
// first under its title, and returns the document's attributes.
func (s *fix) filled(t *testing.T, doc, title string) map[string]string {
	t.Helper()
	ctx := context.Background()
	kids, err := s.C.GetChildBlocks(ctx, doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(kids) != 2 || kids[0].Type != "h" || kids[1].Type != "l" {
		t.Fatalf("document %s holds %+v, want the template's heading and list", doc, kids)
	}
	if md := s.Text(t, kids[0].ID); !strings.Contains(md, "Agenda of "+title) {
		t.Fatalf("first block %q, want the rendered heading", md)
	}
	attrs, err := s.C.GetBlockAttrs(ctx, doc)
	if err != nil {
		t.Fatal(err)
	}
	return attrs
}

// TestCreateFromTemplateContent: a document template with a content
// template fills the new document as SiYuan does (the rendered blocks in
// place of its empty paragraph, the template's own attributes, the item
// template's icon over the template's); a replay makes nothing again; a
// template file changed between preflight and commit is state_changed.
func TestCreateFromTemplateContent(t *testing.T) {
	s := newFix(t)
	s.putTemplate(t, "meeting.md", meetingTpl)
	tpl := tooltest.NewID()
	s.setTemplates(t, contentTemplate(tpl, s.text, "Standup", "meeting.md", "1f4dd"))
	args := map[string]any{"action": "create_from_template", "avID": s.db.AV, "blockID": s.db.Block, "templateID": tpl}
	pre := s.Preflight(t, "av", args, "expectedStateHash", 1)
	res := s.Commit(t, "av", args, pre)
	doc, _ := res["documentID"].(string)
	attrs := s.filled(t, doc, "Standup")
	if attrs["custom-kind"] != "meeting" || attrs["name"] != "mtg" || attrs["icon"] != "1f4dd" || attrs["title"] != "Standup" {
		t.Fatalf("document attributes %v", attrs)
	}
	for k := range res {
		if strings.HasPrefix(k, "_") {
			t.Fatalf("answer %v", res)
		}
	}
	rows := len(s.state(t).Rows)
	s.Replay(t, "av", args, pre, res)
	if n := len(s.state(t).Rows); n != rows {
		t.Fatalf("%d rows after the replay, want %d", n, rows)
	}
	s.filled(t, doc, "Standup")

	// Without its own icon the item keeps the template's.
	plain := tooltest.NewID()
	s.setTemplates(t, contentTemplate(tpl, s.text, "Standup", "meeting.md", "1f4dd"), contentTemplate(plain, s.text, "Retro", "meeting.md", ""))
	args["templateID"] = plain
	res = s.Commit(t, "av", args, s.Preflight(t, "av", args, "expectedStateHash", 1))
	doc, _ = res["documentID"].(string)
	if attrs := s.filled(t, doc, "Retro"); attrs["icon"] != "1f4c5" {
		t.Fatalf("document attributes %v", attrs)
	}

	pre = s.Preflight(t, "av", args, "expectedStateHash", 1)
	s.Drifted(t, "av", args, pre, func() { s.putTemplate(t, "meeting.md", meetingTpl+"\n") })
}

// TestCreateFromTemplateContentRefused: what SiYuan refuses (an absolute
// or climbing path, a missing file) and what may not be rendered here (a
// template reading a hidden notebook, attributes made by template
// actions) is refused at preflight; nothing is made.
func TestCreateFromTemplateContentRefused(t *testing.T) {
	s := newFix(t)
	s.putTemplate(t, "meeting.md", meetingTpl)
	s.putTemplate(t, "dynamic.md", "body\n\n{: id=\"20200101000000-abcdefg\" type=\"doc\" custom-day=\".action{now | date \\\"2006\\\"}\"}\n")
	s.putTemplate(t, "sql.md", ".action{ range (querySQL \"SELECT content FROM blocks LIMIT 1\") }.action{ .content }.action{ end }\n")
	ids := map[string]string{}
	var tpls []*siyuan.AVNewItemTemplate
	for _, p := range []string{"/data/templates/meeting.md", "../meeting.md", "missing.md", "dynamic.md", "sql.md"} {
		ids[p] = tooltest.NewID()
		tpls = append(tpls, contentTemplate(ids[p], s.text, "X", p, ""))
	}
	s.setTemplates(t, tpls...)
	hidden, err := s.C.CreateNotebook(context.Background(), "Hidden")
	if err != nil {
		t.Fatal(err)
	}
	s.Policy = &tools.Policy{Default: tools.LevelWrite, Notebooks: map[string]tools.Level{hidden.ID: tools.LevelNone}, AllActions: true, Strict: true}
	for p, code := range map[string]failure.Code{"/data/templates/meeting.md": failure.InvalidArguments, "../meeting.md": failure.InvalidArguments,
		"missing.md": failure.NotFound, "dynamic.md": failure.InvalidArguments, "sql.md": failure.PermissionDenied} {
		t.Run(p, func(t *testing.T) {
			s.WantErr(t, "av", map[string]any{"action": "create_from_template", "avID": s.db.AV, "blockID": s.db.Block, "templateID": ids[p], "validateOnly": true}, code)
		})
	}
	if n := len(s.state(t).Rows); n != 2 {
		t.Fatalf("%d rows, want 2", n)
	}
}

// TestCreateFromTemplateContentLostReply: the reply of the transaction
// that fills the document is lost after SiYuan applied it; the commit is
// outcome_unknown, and its replay after a restart finds the reserved
// first block and finishes (attributes, icon, item) without filling the
// document twice.
func TestCreateFromTemplateContentLostReply(t *testing.T) {
	s := newFix(t)
	s.putTemplate(t, "meeting.md", meetingTpl)
	tpl := tooltest.NewID()
	s.setTemplates(t, contentTemplate(tpl, s.text, "Lost", "meeting.md", ""))
	loseReplyOnce(s.Fixture, func(r *http.Request) bool {
		if r.URL.Path != "/api/transactions" {
			return false
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		return strings.Contains(string(body), "appendInsert")
	}, true)
	args := map[string]any{"action": "create_from_template", "avID": s.db.AV, "blockID": s.db.Block, "templateID": tpl}
	pre := s.Preflight(t, "av", args, "expectedStateHash", 1)
	e := s.WantErr(t, "av", tooltest.CommitArgs(args, pre), failure.OutcomeUnknown)
	receipt, _ := e.Details["receipt"].(map[string]any)
	doc, _ := receipt["documentID"].(string)
	if doc == "" {
		t.Fatalf("outcome_unknown %+v", e)
	}
	s.CloseLedger()
	s.Reopen(t, false)
	res := s.OK(t, "av", tooltest.CommitArgs(args, pre))
	if res["status"] != "committed" || res["documentID"] != doc {
		t.Fatalf("resume %v", res)
	}
	if attrs := s.filled(t, doc, "Lost"); attrs["custom-kind"] != "meeting" {
		t.Fatalf("document attributes %v", attrs)
	}
	if n := len(s.state(t).Rows); n != 3 {
		t.Fatalf("%d rows, want 3", n)
	}
}
