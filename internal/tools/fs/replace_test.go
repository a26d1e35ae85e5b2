package fs

import (
	"context"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

func TestFsReplace(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	nb, _ := s.fsNotebook(t, "R")
	md := "# Heading teh\n\nfirst teh paragraph\n\n- item teh\n- other\n\n{{{row\nsuper teh\n}}}\n\nlast line"
	doc, err := s.C.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: nb, Path: "/Page", Markdown: md})
	if err != nil {
		t.Fatal(err)
	}
	kids, _ := s.C.GetChildBlocks(ctx, doc)
	para := kids[1].ID
	if err := s.C.SetBlockAttrs(ctx, para, map[string]string{"custom-k": "v"}); err != nil {
		t.Fatal(err)
	}

	// Several matches without replace_all: refused, nothing changed.
	s.InvalidAt(t, "fs", map[string]any{"action": "replace", "path": "/R/Page", "old": "teh", "new": "the"}, false)
	// No match, and a match across two blocks: refused.
	s.InvalidAt(t, "fs", map[string]any{"action": "replace", "path": "/R/Page", "old": "absent", "new": "x"}, false)
	e := s.InvalidAt(t, "fs", map[string]any{"action": "replace", "path": "/R/Page", "old": "paragraph\n\nitem", "new": "x"}, false)
	if !strings.Contains(e.Message, "block boundary") {
		t.Fatalf("cross-block refusal: %v", e.Message)
	}

	args := map[string]any{"action": "replace", "path": "/R/Page", "edit": []any{
		map[string]any{"old": "teh", "new": "the", "replace_all": true},
		map[string]any{"old": "last line", "new": "final line"},
	}}
	pre := s.Preflight(t, "fs", args, "expectedManifestHash", 1)
	if sk, _ := pre["skippedComplexBlocks"].([]any); len(sk) != 1 || sk[0].(map[string]any)["type"] != "NodeSuperBlock" {
		t.Fatalf("preflight skipped blocks: %v", pre)
	}
	if ch, _ := pre["changesBlocks"].([]any); len(ch) != 4 {
		t.Fatalf("preflight changed blocks: %v", pre)
	}
	res := s.Commit(t, "fs", args, pre)
	if ch, _ := res["changedBlocks"].([]any); len(ch) != 4 || res["skippedComplexBlocks"] == nil {
		t.Fatalf("commit: %v", res)
	}
	for k := range res {
		if strings.HasPrefix(k, "_") {
			t.Fatalf("detail %s leaked", k)
		}
	}
	s.Replay(t, "fs", args, pre, res)
	body := s.body(t, doc)
	for _, want := range []string{"# Heading the", "first the paragraph", "item the", "super teh", "final line"} {
		if !strings.Contains(body, want) {
			t.Fatalf("body lacks %q:\n%s", want, body)
		}
	}
	if attrs, _ := s.C.GetBlockAttrs(ctx, para); attrs["custom-k"] != "v" {
		t.Fatalf("attribute lost: %v", attrs)
	}

	// A stale manifest: the block the edit targets changed.
	one := map[string]any{"action": "replace", "path": "/R/Page", "old": "first the", "new": "1st the"}
	pre = s.Preflight(t, "fs", one, "expectedManifestHash", 1)
	s.Drifted(t, "fs", one, pre, func() {
		if _, err := s.C.UpdateBlock(ctx, para, "markdown", "first the paragraph, edited\n{: custom-k=\"v\"}"); err != nil {
			t.Fatal(err)
		}
	})
	// A block the edit does not touch may change: the lease holds.
	pre = s.Preflight(t, "fs", one, "expectedManifestHash", 1)
	last := kids[len(kids)-1].ID
	if _, err := s.C.UpdateBlock(ctx, last, "markdown", "unrelated edit"); err != nil {
		t.Fatal(err)
	}
	s.Commit(t, "fs", one, pre)
	// A block that now also matches changes the manifest.
	pre = s.Preflight(t, "fs", map[string]any{"action": "replace", "path": "/R/Page", "old": "unrelated", "new": "related"}, "expectedManifestHash", 1)
	s.Drifted(t, "fs", map[string]any{"action": "replace", "path": "/R/Page", "old": "unrelated", "new": "related"}, pre, func() {
		if _, err := s.C.AppendBlock(ctx, "markdown", "another unrelated one", doc); err != nil {
			t.Fatal(err)
		}
	})

	s.WantErr(t, "fs", map[string]any{"action": "replace", "path": "/R/Nope", "old": "a", "new": "b", "validateOnly": true}, failure.NotFound)
	for _, bad := range []map[string]any{
		{"action": "replace", "path": "/R/Page"},
		{"action": "replace", "path": "/R/Page", "old": "a"},
		{"action": "replace", "path": "/R/Page", "edit": map[string]any{"old": "", "new": "b"}},
		{"action": "replace", "path": "/R/Page", "edit": []any{}},
		{"action": "replace", "path": "/R/Page", "edit": map[string]any{"old": "a", "new": "b", "bogus": 1}},
		{"action": "replace", "path": "/R/Page", "edit": map[string]any{"old": "a", "new": "b"}, "old": "a", "new": "b"},
		{"action": "replace", "path": "/R/Page", "old": "first", "new": "x\n{: id=\"y\"}"},
	} {
		s.WantErr(t, "fs", tooltest.CopyArgs(bad, "validateOnly", true), failure.InvalidArguments)
	}
	// An edit that would change the document's structure is refused.
	for _, edit := range [][2]string{{"1st", "one\n\ntwo"}, {"1st the", "- a list now"}, {"# Heading", "Heading"}} {
		e := s.WantErr(t, "fs", map[string]any{"action": "replace", "path": "/R/Page", "old": edit[0], "new": edit[1], "validateOnly": true}, failure.InvalidArguments)
		if !strings.Contains(e.Message, "would turn block") {
			t.Errorf("%q → %q: %s", edit[0], edit[1], e.Message)
		}
	}
}

func TestPlanDoc(t *testing.T) {
	st := replaceState{Path: "/n/d", order: []string{"a", "b"}, bodies: map[string]string{"a": "one two", "b": "two three"}}
	for _, tc := range []struct {
		name    string
		edits   []textEdit
		changed []string
		err     string
	}{
		{"one match", []textEdit{{Old: "one", New: "1"}}, []string{"a"}, ""},
		{"ambiguous", []textEdit{{Old: "two", New: "2"}}, nil, "occurs 2 times"},
		{"all", []textEdit{{Old: "two", New: "2", ReplaceAll: true}}, []string{"a", "b"}, ""},
		{"sequential", []textEdit{{Old: "one", New: "three"}, {Old: "three", New: "3", ReplaceAll: true}}, []string{"a", "b"}, ""},
		{"crossing", []textEdit{{Old: "two\n\ntwo", New: "x"}}, nil, "block boundary"},
		{"absent", []textEdit{{Old: "four", New: "x"}}, nil, "does not occur"},
		{"empties", []textEdit{{Old: "one two", New: " "}}, nil, "empty"},
		{"no change", []textEdit{{Old: "one", New: "one"}}, nil, ""},
	} {
		plan, err := planDoc(st, tc.edits)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.err == "" && strings.Join(plan.changed, ",") != strings.Join(tc.changed, ","):
			t.Errorf("%s: changed %v, want %v", tc.name, plan.changed, tc.changed)
		}
	}
}

// With strict mode off, replace and the memory writes run once, directly,
// and say that no guarantee applies.
func TestFsReplaceStrictOff(t *testing.T) {
	s := newStrictFixture(t, true)
	res := s.OK(t, "fs", map[string]any{"action": "replace", "path": "/Strict/Doc", "old": "paragraph 3", "new": "paragraph three"})
	if res["writeSafetyGuaranteed"] != false || !strings.Contains(s.body(t, s.Doc), "paragraph three") {
		t.Fatalf("direct replace: %v", res)
	}
	if res := s.OK(t, "fs", map[string]any{"action": "write", "path": "/AGENTS.md", "markdown": "direct"}); res["writeSafetyGuaranteed"] != false {
		t.Fatalf("direct memory write: %v", res)
	}
	if r := s.OK(t, "fs", map[string]any{"action": "read", "path": "/AGENTS.md"}); r["content"] != "direct" {
		t.Fatalf("memory after a direct write: %v", r)
	}
}

// Code and math blocks and tables are edited too (a table's kramdown is
// read by itself: the document's split respells it).
func TestFsReplaceCodeMathTable(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	nb, _ := s.fsNotebook(t, "C")
	doc, err := s.C.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: nb, Path: "/Code",
		Markdown: "```go\nfmt.Println(\"hi\")\n\nreturn\n```\n\n$$\na^2\n$$\n\n| k | v |\n| --- | --- |\n| cell | 2 |"})
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"action": "replace", "path": "/C/Code", "edit": []any{
		map[string]any{"old": "fmt.Println", "new": "log.Println"},
		map[string]any{"old": "a^2", "new": "a^3"},
		map[string]any{"old": "cell", "new": "row"},
	}}
	pre := s.Preflight(t, "fs", args, "expectedManifestHash", 1)
	res := s.Commit(t, "fs", args, pre)
	if len(res["changedBlocks"].([]any)) != 3 {
		t.Fatalf("commit: %v", res)
	}
	md, err := s.C.ExportMdContent(ctx, doc)
	if err != nil || !strings.Contains(md.Content, "log.Println(\"hi\")\n\nreturn") || !strings.Contains(md.Content, "a^3") || !strings.Contains(md.Content, "|row|2|") {
		t.Fatalf("after the edits: %v %q", err, md.Content)
	}
	// Breaking the fence would make two blocks: refused.
	s.InvalidAt(t, "fs", map[string]any{"action": "replace", "path": "/C/Code", "old": "return", "new": "```\n\nafter"}, false)
}
