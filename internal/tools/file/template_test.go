package file

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

const daily = "# .action{now | date \"2006-01-02\"}\n\n- first\n"

func TestCreateTemplate(t *testing.T) {
	s := newFixture(t)
	args := map[string]any{"action": "create_template", "path": "daily.md", "content": daily}

	pre := s.Preflight(t, "file", args, "", 1)
	if s.exists(t, "/data/templates/daily.md") {
		t.Fatal("a preflight wrote")
	}
	res := s.Commit(t, "file", args, pre)
	if res["path"] != "templates/daily.md" || res["sha256"] != sum([]byte(daily)) || res["size"] != float64(len(daily)) {
		t.Fatalf("create: %v", res)
	}
	if got, _ := s.read(t, "/data/templates/daily.md"); string(got) != daily {
		t.Fatalf("stored %q", got)
	}
	s.Replay(t, "file", args, pre, res)

	// It exists now: refused at preflight, with the way out named.
	e := s.InvalidAt(t, "file", tooltest.CopyArgs(args, "content", "other"), false)
	if !strings.Contains(e.Message, "overwrite") || e.RequestID != "" {
		t.Fatalf("existing template: %+v", e)
	}
	// Every spelling of the path is the same template.
	for _, p := range []string{"/templates/daily.md", "data/templates/daily.md", "/data/templates/daily.md"} {
		s.InvalidAt(t, "file", tooltest.CopyArgs(args, "path", p), false)
	}

	// overwrite:true is a guarded write: it needs the preflight's hash.
	over := tooltest.CopyArgs(args, "content", "# replaced\n", "overwrite", true)
	pre = s.Preflight(t, "file", over, "expectedStateHash", 1)
	s.WantErr(t, "file", tooltest.CopyArgs(over, "requestId", pre["requestId"]), failure.PreconditionRequired)
	s.Drifted(t, "file", over, pre, func() { s.put(t, "/data/templates/daily.md", "# edited in SiYuan\n") })
	if got, _ := s.read(t, "/data/templates/daily.md"); string(got) != "# edited in SiYuan\n" {
		t.Fatalf("a state_changed overwrite wrote: %q", got)
	}
	_, res = s.strictOK(t, over, "expectedStateHash", 1)
	if got, _ := s.read(t, "/data/templates/daily.md"); string(got) != "# replaced\n" || res["sha256"] != sum(got) {
		t.Fatalf("overwritten %q: %v", got, res)
	}
	// overwrite:true of a template that does not exist creates it.
	_, res = s.strictOK(t, tooltest.CopyArgs(over, "path", "work/weekly.md"), "expectedStateHash", 1)
	if got, _ := s.read(t, "/data/templates/work/weekly.md"); string(got) != "# replaced\n" {
		t.Fatalf("created with overwrite %q: %v", got, res)
	}

	// A template that appears between preflight and commit is not replaced.
	race := map[string]any{"action": "create_template", "path": "race.md", "content": "mine"}
	pre = s.Preflight(t, "file", race, "", 1)
	s.put(t, "/data/templates/race.md", "theirs")
	e = s.WantErr(t, "file", tooltest.CommitArgs(race, pre), failure.InvalidArguments)
	wantAttemptedFalse(t, e)
	if got, _ := s.read(t, "/data/templates/race.md"); string(got) != "theirs" {
		t.Fatalf("a racing create replaced the template: %q", got)
	}
}

func TestTemplatePathsRefused(t *testing.T) {
	s := newFixture(t)
	for _, p := range []string{"../x.md", "x.txt", "", "/templates/", "a/../../x.md", "./x.md", "a//b.md"} {
		for _, args := range []map[string]any{
			{"action": "create_template", "path": p, "content": "x"},
			{"action": "update_template", "path": p, "content": "x"},
			{"action": "delete_template", "path": p},
		} {
			s.InvalidAt(t, "file", args, false)
		}
		s.WantErr(t, "file", map[string]any{"action": "read_template", "path": p}, failure.InvalidArguments)
		s.WantErr(t, "file", map[string]any{"action": "render", "id": s.Doc, "path": p}, failure.InvalidArguments)
	}
	if ents, _ := s.C.ReadDir(context.Background(), "/data/templates"); len(ents) != 0 {
		t.Fatalf("refused writes wrote: %v", ents)
	}
}

func TestReadAndListTemplates(t *testing.T) {
	s := newFixture(t)
	files := map[string]string{
		"daily.md":              daily,
		"weekly.md":             "# week\n",
		"work/daily-standup.md": "## standup\n",
		"README.md":             "not a template",
		".hidden.md":            "not listed",
	}
	for p, c := range files {
		s.put(t, "/data/templates/"+p, c)
	}
	for _, p := range []string{"daily.md", "/templates/daily.md", "data/templates/daily.md", "/data/templates/daily.md", " daily.md "} {
		got := s.OK(t, "file", map[string]any{"action": "read_template", "path": p})
		if got["path"] != "templates/daily.md" || got["content"] != daily || got["sha256"] != sum([]byte(daily)) || got["size"] != float64(len(daily)) {
			t.Fatalf("read %q: %v", p, got)
		}
	}
	got := s.OK(t, "file", map[string]any{"action": "read_template", "path": "work/daily-standup.md"})
	if got["content"] != "## standup\n" {
		t.Fatalf("read in a group: %v", got)
	}
	s.WantErr(t, "file", map[string]any{"action": "read_template", "path": "nope.md"}, failure.NotFound)

	rels := func(m map[string]any) []string {
		var out []string
		for _, x := range m["templates"].([]any) {
			out = append(out, x.(map[string]any)["relativePath"].(string))
		}
		slices.Sort(out)
		return out
	}
	for _, c := range []struct {
		keyword string
		want    []string
	}{
		{"", []string{"daily.md", "weekly.md", "work/daily-standup.md"}},
		{"daily", []string{"daily.md", "work/daily-standup.md"}},
		{"WEEK", []string{"weekly.md"}},
		{"work standup", []string{"work/daily-standup.md"}},
		{"nothing-like-it", nil},
	} {
		ls := s.OK(t, "file", map[string]any{"action": "list_templates", "keyword": c.keyword})
		if got := rels(ls); !slices.Equal(got, c.want) || ls["count"] != float64(len(c.want)) {
			t.Errorf("keyword %q: %v (%v)", c.keyword, got, ls)
		}
	}
	// The absolute path a listing shows reads the same template.
	ls := s.OK(t, "file", map[string]any{"action": "list_templates", "keyword": "weekly"})
	abs := ls["templates"].([]any)[0].(map[string]any)["path"].(string)
	if got := s.OK(t, "file", map[string]any{"action": "read_template", "path": abs}); got["path"] != "templates/weekly.md" {
		t.Fatalf("read %s: %v", abs, got)
	}
}

func TestUpdateTemplate(t *testing.T) {
	s := newFixture(t)
	args := map[string]any{"action": "update_template", "path": "daily.md", "content": "# new\n"}
	e := s.WantErr(t, "file", tooltest.CopyArgs(args, "validateOnly", true), failure.NotFound)
	wantAttemptedFalse(t, e)
	if s.exists(t, "/data/templates/daily.md") {
		t.Fatal("an update of a missing template created it")
	}

	s.put(t, "/data/templates/daily.md", daily)
	pre := s.Preflight(t, "file", args, "expectedStateHash", 1)
	s.Drifted(t, "file", args, pre, func() { s.put(t, "/data/templates/daily.md", "# someone else\n") })
	if got, _ := s.read(t, "/data/templates/daily.md"); string(got) != "# someone else\n" {
		t.Fatalf("a state_changed update wrote: %q", got)
	}
	pre, res := s.strictOK(t, args, "expectedStateHash", 1)
	if got, _ := s.read(t, "/data/templates/daily.md"); string(got) != "# new\n" || res["sha256"] != sum(got) {
		t.Fatalf("updated %q: %v", got, res)
	}
	s.put(t, "/data/templates/daily.md", "# changed after the commit\n")
	s.Replay(t, "file", args, pre, res)
	if got, _ := s.read(t, "/data/templates/daily.md"); string(got) != "# changed after the commit\n" {
		t.Fatal("a replay wrote again")
	}
	// The same id with other content conflicts.
	s.WantErr(t, "file", tooltest.CommitArgs(tooltest.CopyArgs(args, "content", "other"), pre), failure.IdempotencyConflict)

	// Writing what is there already is no change.
	same := tooltest.CopyArgs(args, "content", "# changed after the commit\n")
	pre = s.Preflight(t, "file", same, "expectedStateHash", 1)
	res = s.OK(t, "file", tooltest.CommitArgs(same, pre))
	if res["status"] != "no_change" || res["previousHash"] != res["resultHash"] {
		t.Fatalf("same content: %v", res)
	}

	// A template removed between preflight and commit: state_changed, and
	// it is not recreated.
	pre = s.Preflight(t, "file", args, "expectedStateHash", 1)
	s.Drifted(t, "file", args, pre, func() {
		if err := s.C.RemoveFile(context.Background(), "/data/templates/daily.md"); err != nil {
			t.Fatal(err)
		}
	})
	if s.exists(t, "/data/templates/daily.md") {
		t.Fatal("an update recreated a removed template")
	}
}

func TestDeleteTemplate(t *testing.T) {
	s := newFixture(t)
	s.put(t, "/data/templates/old.md", "old")
	s.put(t, "/data/templates/work/old.md", "grouped")
	args := map[string]any{"action": "delete_template", "path": "old.md"}

	// Off by default: a configuration without the switch refuses it.
	s.Policy = &tools.Policy{Default: tools.LevelDelete, Strict: true}
	e := s.WantErr(t, "file", tooltest.CopyArgs(args, "validateOnly", true), failure.ActionDisabled)
	wantAttemptedFalse(t, e)
	s.Policy = &tools.Policy{Default: tools.LevelDelete, Strict: true,
		Tools: map[string]tools.Switch{"file": {Actions: map[string]bool{"delete_template": true}}}}

	// Dangerous: the preflight runs, the commit waits for the person.
	s.Unconfirmed = true
	pre := s.Preflight(t, "file", args, "expectedStateHash", 1)
	e = s.WantErr(t, "file", tooltest.CommitArgs(args, pre), failure.ConfirmationRequired)
	wantAttemptedFalse(t, e)
	if !s.exists(t, "/data/templates/old.md") {
		t.Fatal("an unconfirmed delete ran")
	}
	s.Unconfirmed = false

	// Changed since the preflight: state_changed.
	s.Drifted(t, "file", args, pre, func() { s.put(t, "/data/templates/old.md", "edited") })
	if got, _ := s.read(t, "/data/templates/old.md"); string(got) != "edited" {
		t.Fatal("a state_changed delete ran")
	}
	pre, res := s.strictOK(t, args, "expectedStateHash", 1)
	if res["deleted"] != true || res["path"] != "templates/old.md" || s.exists(t, "/data/templates/old.md") {
		t.Fatalf("delete: %v", res)
	}
	if got, _ := s.read(t, "/data/templates/work/old.md"); string(got) != "grouped" {
		t.Fatal("the delete removed another template")
	}
	s.Replay(t, "file", args, pre, res)

	// In a group folder.
	group := map[string]any{"action": "delete_template", "path": "/templates/work/old.md"}
	s.strictOK(t, group, "expectedStateHash", 1)
	if s.exists(t, "/data/templates/work/old.md") {
		t.Fatal("the grouped template is still there")
	}

	// Missing: not_found at preflight.
	e = s.WantErr(t, "file", tooltest.CopyArgs(args, "validateOnly", true), failure.NotFound)
	wantAttemptedFalse(t, e)

	// A file SiYuan does not list as a template is refused at preflight,
	// before the ledger records anything (it used to pass the preflight and
	// leave its request executing, so a retry answered outcome_unknown).
	s.put(t, "/data/templates/README.md", "readme")
	readme := map[string]any{"action": "delete_template", "path": "README.md"}
	e = s.WantErr(t, "file", tooltest.CopyArgs(readme, "validateOnly", true), failure.NotFound)
	wantAttemptedFalse(t, e)
	if e.RequestID != "" || !s.exists(t, "/data/templates/README.md") {
		t.Fatalf("README.md: %+v", e)
	}
}

// TestTemplateBudget: a body above the template budget is refused at
// preflight, nothing written; one within it is written whole.
func TestTemplateBudget(t *testing.T) {
	s := newFixture(t)
	s.CloseLedger()
	s.MaxTemplateBytes = 64
	s.Reopen(t, false)
	big := strings.Repeat("x", 65)
	for _, args := range []map[string]any{
		{"action": "create_template", "path": "big.md", "content": big},
		{"action": "create_template", "path": "big.md", "content": big, "overwrite": true},
	} {
		e := s.InvalidAt(t, "file", args, false)
		if e.Details["limit"] != 64 || e.Details["size"] != 65 || e.RequestID != "" {
			t.Fatalf("over budget: %+v", e)
		}
	}
	if s.exists(t, "/data/templates/big.md") {
		t.Fatal("an over-budget create wrote")
	}
	fits := strings.Repeat("y", 64)
	s.strictOK(t, map[string]any{"action": "create_template", "path": "fits.md", "content": fits}, "", 1)
	if got, _ := s.read(t, "/data/templates/fits.md"); string(got) != fits {
		t.Fatalf("stored %d bytes", len(got))
	}
	s.InvalidAt(t, "file", map[string]any{"action": "update_template", "path": "fits.md", "content": big}, false)
	if got, _ := s.read(t, "/data/templates/fits.md"); string(got) != fits {
		t.Fatal("an over-budget update wrote")
	}
	// Arguments far above the budget are refused before anything reads.
	e := s.InvalidAt(t, "file", map[string]any{"action": "update_template", "path": "fits.md", "content": strings.Repeat("z", 2*64+tools.MultipartOverhead)}, false)
	if e.Details["limit"] != 2*64+tools.MultipartOverhead {
		t.Fatalf("argument budget: %+v", e)
	}
	// A template written past Sisyphus is not read or rendered whole.
	s.put(t, "/data/templates/huge.md", big)
	s.WantErr(t, "file", map[string]any{"action": "read_template", "path": "huge.md"}, failure.InvalidArguments)
	s.WantErr(t, "file", map[string]any{"action": "render", "id": s.Doc, "path": "huge.md"}, failure.InvalidArguments)
}

func TestSaveDocAsTemplate(t *testing.T) {
	s := newFixture(t)
	ctx := context.Background()
	args := map[string]any{"action": "save_doc_as_template", "id": s.Doc, "name": "weekly-review"}
	pre := s.Preflight(t, "file", args, "expectedStateHash", 2)
	if s.exists(t, "/data/templates/weekly-review.md") {
		t.Fatal("a preflight wrote")
	}
	res := s.Commit(t, "file", args, pre)
	got, ok := s.read(t, "/data/templates/weekly-review.md")
	if !ok || res["path"] != "templates/weekly-review.md" || res["id"] != s.Doc || res["sha256"] != sum(got) || res["size"] != float64(len(got)) {
		t.Fatalf("save: %v (%d bytes)", res, len(got))
	}
	for i := range 12 {
		if !strings.Contains(string(got), fmt.Sprintf("paragraph %d\n", i)) {
			t.Fatalf("the template lacks paragraph %d of the document: %s", i, got)
		}
	}
	s.Replay(t, "file", args, pre, res)
	// It is a template now: listed, and it renders.
	ls := s.OK(t, "file", map[string]any{"action": "list_templates", "keyword": "weekly"})
	if ls["count"] != float64(1) {
		t.Fatalf("list: %v", ls)
	}
	r := s.OK(t, "file", map[string]any{"action": "render", "id": s.Doc, "path": "weekly-review.md"})
	if !strings.Contains(r["content"].(string), "paragraph 7") {
		t.Fatalf("render: %v", r)
	}

	// The name is taken: refused at preflight unless overwrite.
	e := s.InvalidAt(t, "file", args, false)
	if !strings.Contains(e.Message, "overwrite") {
		t.Fatalf("taken name: %+v", e)
	}
	over := tooltest.CopyArgs(args, "overwrite", true)
	if _, err := s.C.UpdateBlock(ctx, s.Blocks[0], "markdown", "rewritten first paragraph"); err != nil {
		t.Fatal(err)
	}
	s.strictOK(t, over, "expectedStateHash", 2)
	if got, _ := s.read(t, "/data/templates/weekly-review.md"); !strings.Contains(string(got), "rewritten first paragraph") {
		t.Fatalf("overwritten: %s", got)
	}
	// The document changes after the preflight: state_changed, template kept.
	pre = s.Preflight(t, "file", over, "expectedStateHash", 2)
	before, _ := s.read(t, "/data/templates/weekly-review.md")
	s.Drifted(t, "file", over, pre, func() {
		if _, err := s.C.UpdateBlock(ctx, s.Blocks[1], "markdown", "edited in SiYuan"); err != nil {
			t.Fatal(err)
		}
	})
	// So does the destination.
	pre = s.Preflight(t, "file", over, "expectedStateHash", 2)
	s.Drifted(t, "file", over, pre, func() { s.put(t, "/data/templates/weekly-review.md", "hand edited") })
	if after, _ := s.read(t, "/data/templates/weekly-review.md"); string(after) != "hand edited" || string(before) == "hand edited" {
		t.Fatal("a state_changed save wrote")
	}

	// One block.
	s.strictOK(t, map[string]any{"action": "save_doc_as_template", "id": s.Blocks[3], "name": "one block"}, "expectedStateHash", 2)
	if got, _ := s.read(t, "/data/templates/one block.md"); !strings.Contains(string(got), "paragraph 3") || strings.Contains(string(got), "paragraph 4") {
		t.Fatalf("a block's template: %s", got)
	}

	// Names SiYuan would rewrite, or not list.
	for _, n := range []string{"a/b", `a\b`, "a:b", "a*b", "a?b", `a"b`, "a<b", "a>b", "a|b", "a'b", ".dot", " pad", "", "../up"} {
		s.InvalidAt(t, "file", tooltest.CopyArgs(args, "name", n), false)
	}
	// No such document.
	e = s.WantErr(t, "file", tooltest.CopyArgs(args, "id", "20200101010101-abcdefg", "name", "ghost", "validateOnly", true), failure.NotFound)
	wantAttemptedFalse(t, e)
	s.InvalidAt(t, "file", tooltest.CopyArgs(args, "id", "not-an-id"), false)
	if s.exists(t, "/data/templates/ghost.md") || s.exists(t, "/data/templates/a_b.md") {
		t.Fatal("a refused save wrote")
	}
}
