package av

import (
	"context"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// setTemplates stores new-item templates on the fixture's database.
func (s *fix) setTemplates(t *testing.T, ts ...*siyuan.AVNewItemTemplate) {
	t.Helper()
	op := siyuan.SetAttrViewNewItemTemplatesOp(s.db.AV, siyuan.AVNewItemTemplatesConfig{Templates: ts})
	if _, err := s.C.Transactions(context.Background(), []siyuan.Transaction{{DoOperations: []siyuan.Operation{op}}}); err != nil {
		t.Fatal(err)
	}
}

func textTemplate(id, key, pk string) *siyuan.AVNewItemTemplate {
	return &siyuan.AVNewItemTemplate{ID: id, Name: "Task", TargetType: "detached", PrimaryKeyTemplate: pk,
		FieldValues: map[string]*siyuan.AVNewItemFieldValue{key: {Mode: "static", Value: &siyuan.AVValue{Type: "text", Text: &siyuan.AVValueContent{Content: "hi"}}}}}
}

// TestCreateFromTemplate: one detached item with the rendered primary key
// and the template's value, after previousID; a replay answers the same;
// a drift refuses; unknown ids refuse at preflight.
func TestCreateFromTemplate(t *testing.T) {
	s := newFix(t)
	tpl, doc := tooltest.NewID(), tooltest.NewID()
	s.setTemplates(t, textTemplate(tpl, s.text, ` Task {{ "x" | upper }} `),
		&siyuan.AVNewItemTemplate{ID: doc, Name: "Doc", TargetType: "document"})
	args := map[string]any{"action": "create_from_template", "avID": s.db.AV, "blockID": s.db.Block, "templateID": tpl, "previousID": s.rows[0]}
	pre := s.Preflight(t, "av", args, "expectedStateHash", 1)
	res := s.Commit(t, "av", args, pre)
	item, _ := res["itemID"].(string)
	st := s.state(t)
	r, ok := st.row(item)
	if !ok || !r.Detached || len(st.Rows) != 3 || r.Cells[st.primary().ID].Block.Content != "Task X" || r.Cells[s.text].Text.Content != "hi" {
		t.Fatalf("item %s: %+v", item, st.Rows)
	}
	if v := st.Views[0].ItemIDs; len(v) != 3 || v[1] != item {
		t.Fatalf("order %v", v)
	}
	if _, leak := res["_rows"]; leak {
		t.Fatalf("answer %v", res)
	}
	s.Replay(t, "av", args, pre, res)
	if n := len(s.state(t).Rows); n != 3 {
		t.Fatalf("%d rows after the replay", n)
	}
	pre = s.Preflight(t, "av", args, "expectedStateHash", 1)
	s.Drifted(t, "av", args, pre, func() {
		s.setTemplates(t, textTemplate(tpl, s.text, "Other"), &siyuan.AVNewItemTemplate{ID: doc, Name: "Doc", TargetType: "document"})
	})
	for _, c := range []struct {
		name string
		args map[string]any
		code failure.Code
	}{
		{"unknown template", tooltest.CopyArgs(args, "templateID", tooltest.NewID()), failure.NotFound},
		{"unknown previous row", tooltest.CopyArgs(args, "previousID", tooltest.NewID()), failure.NotFound},
		{"unknown view", tooltest.CopyArgs(args, "viewID", tooltest.NewID()), failure.NotFound},
		{"unknown group", tooltest.CopyArgs(args, "groupID", tooltest.NewID()), failure.NotFound},
		{"block not showing it", tooltest.CopyArgs(args, "blockID", s.Doc), failure.InvalidArguments},
		{"document target with an empty title", tooltest.CopyArgs(args, "templateID", doc), failure.InvalidArguments},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := tooltest.CopyArgs(c.args, "validateOnly", true)
			s.WantErr(t, "av", a, c.code)
		})
	}
}

// TestCreateFromTemplateAfterALostReply: the kernel applies the item and
// the reply is lost (outcome_unknown); the replay finds the reserved item
// and finishes with one item. A transaction that never reached the kernel
// stays in doubt: never sent again, and no item.
func TestCreateFromTemplateAfterALostReply(t *testing.T) {
	for _, c := range []struct {
		name    string
		applied bool
		want    failure.Code
	}{
		{"applied, reply lost", true, ""},
		{"never reached the kernel", false, failure.OutcomeUnknown},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newFix(t)
			tpl := tooltest.NewID()
			s.setTemplates(t, textTemplate(tpl, s.text, "Lost"))
			loseReplyOnce(s.Fixture, onPath("/api/transactions"), c.applied)
			args := map[string]any{"action": "create_from_template", "avID": s.db.AV, "blockID": s.db.Block, "templateID": tpl}
			pre := s.Preflight(t, "av", args, "expectedStateHash", 1)
			e := s.WantErr(t, "av", tooltest.CommitArgs(args, pre), failure.OutcomeUnknown)
			receipt, _ := e.Details["receipt"].(map[string]any)
			item, _ := receipt["itemID"].(string)
			if item == "" {
				t.Fatalf("outcome_unknown %+v", e)
			}
			s.CloseLedger()
			s.Reopen(t, false)
			want := 3
			if c.want != "" {
				s.WantErr(t, "av", tooltest.CommitArgs(args, pre), c.want)
				want = 2
			} else {
				res := s.OK(t, "av", tooltest.CommitArgs(args, pre))
				if res["status"] != "committed" || res["itemID"] != item {
					t.Fatalf("resume %v", res)
				}
				if r, ok := s.state(t).row(item); !ok || !strings.Contains(r.Cells[s.text].Text.Content, "hi") {
					t.Fatalf("item %s missing", item)
				}
			}
			if n := len(s.state(t).Rows); n != want {
				t.Fatalf("%d rows, want %d", n, want)
			}
		})
	}
}

// TestCreateFromTemplateDocument: a document target makes the document
// where SiYuan would (under the database's document for a relative save
// path, at the root of another notebook for an absolute one), with the
// rendered title and the template's icon, and binds the item to it; a
// replay makes neither again; a content template and a closed save
// notebook are refused at preflight.
func TestCreateFromTemplateDocument(t *testing.T) {
	s := newFix(t)
	ctx := context.Background()
	other, err := s.C.CreateNotebook(ctx, "Elsewhere")
	if err != nil {
		t.Fatal(err)
	}
	rel, abs, withContent, closed := tooltest.NewID(), tooltest.NewID(), tooltest.NewID(), tooltest.NewID()
	docTpl := func(id, pk string, loc *siyuan.AVNewItemSaveLocation) *siyuan.AVNewItemTemplate {
		return &siyuan.AVNewItemTemplate{ID: id, Name: "Doc", TargetType: "document", PrimaryKeyTemplate: pk, Icon: "1f4c5", SaveLocation: loc,
			FieldValues: map[string]*siyuan.AVNewItemFieldValue{s.text: {Mode: "static", Value: &siyuan.AVValue{Type: "text", Text: &siyuan.AVValueContent{Content: "hi"}}}}}
	}
	closedNB, err := s.C.CreateNotebook(ctx, "Closed")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.C.CloseNotebook(ctx, closedNB.ID); err != nil {
		t.Fatal(err)
	}
	content := docTpl(withContent, "C", nil)
	content.ContentTemplatePath = "/data/templates/meeting.md"
	s.setTemplates(t, docTpl(rel, `Meeting {{ "x" | upper }}`, &siyuan.AVNewItemSaveLocation{PathTemplate: "notes/"}),
		docTpl(abs, "Plan", &siyuan.AVNewItemSaveLocation{BoxID: other.ID, PathTemplate: "/inbox/"}),
		content, docTpl(closed, "Shut", &siyuan.AVNewItemSaveLocation{BoxID: closedNB.ID, PathTemplate: "/"}))
	hpath, err := s.C.GetHPathByID(ctx, s.Doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tpl, box, hpath string
	}{
		{rel, s.NB, hpath + "/notes/Meeting X"},
		{abs, other.ID, "/inbox/Plan"},
	} {
		args := map[string]any{"action": "create_from_template", "avID": s.db.AV, "blockID": s.db.Block, "templateID": c.tpl}
		pre := s.Preflight(t, "av", args, "expectedStateHash", 1)
		res := s.Commit(t, "av", args, pre)
		item, _ := res["itemID"].(string)
		doc, _ := res["documentID"].(string)
		info, err := s.C.GetBlockInfo(ctx, doc)
		if err != nil || info.RootID != doc || info.Box != c.box {
			t.Fatalf("document %s: %+v %v (answer %v)", doc, info, err, res)
		}
		if got, _ := s.C.GetHPathByID(ctx, doc); got != c.hpath {
			t.Fatalf("document at %q, want %q", got, c.hpath)
		}
		if attrs, _ := s.C.GetBlockAttrs(ctx, doc); attrs["icon"] != "1f4c5" {
			t.Fatalf("document attributes %v", attrs)
		}
		st := s.state(t)
		r, ok := st.row(item)
		if !ok || r.Detached || r.Block != doc || r.Cells[s.text].Text.Content != "hi" {
			t.Fatalf("item %s: %+v", item, r)
		}
		rows := len(st.Rows)
		s.Replay(t, "av", args, pre, res)
		if n := len(s.state(t).Rows); n != rows {
			t.Fatalf("%d rows after the replay, want %d", n, rows)
		}
	}
	for _, c := range []struct {
		name, tpl string
		code      failure.Code
	}{
		{"content template", withContent, failure.InvalidArguments},
		{"closed save notebook", closed, failure.InvalidArguments},
	} {
		t.Run(c.name, func(t *testing.T) {
			s.WantErr(t, "av", map[string]any{"action": "create_from_template", "avID": s.db.AV, "blockID": s.db.Block, "templateID": c.tpl, "validateOnly": true}, c.code)
		})
	}
}
