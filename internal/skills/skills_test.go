package skills

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/testvars"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/catalog"
)

// update rewrites the generated skills under skills/; SISYPHUS_UPDATE=1
// does too.
var update = flag.Bool("update", false, "rewrite the generated skills under skills/")

// dir is where the generated skills are checked in.
var dir = filepath.Join("..", "..", "skills")

// TestGenerated: the skills rendered from the action table are the files
// checked in under skills/, byte for byte, and no others. A change of an
// action, an argument or a skill's source shows here (and in CI) until
// the files are regenerated with -update and the diff reviewed.
func TestGenerated(t *testing.T) {
	sk, err := Render(catalog.All())
	if err != nil {
		t.Fatal(err)
	}
	if *update || testvars.UpdateDocs.On(t) {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		for _, s := range sk {
			if err := os.MkdirAll(filepath.Join(dir, s.Name), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, s.Name, "SKILL.md"), s.Body, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	var want []string
	for _, s := range sk {
		want = append(want, s.Name)
		got, err := os.ReadFile(filepath.Join(dir, s.Name, "SKILL.md"))
		if err != nil || !bytes.Equal(got, s.Body) {
			t.Errorf("skills/%s/SKILL.md is out of date with the action table or its source: run go test ./internal/skills -update and review the diff", s.Name)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !slices.Contains(want, e.Name()) {
			t.Errorf("skills/%s is not generated any more: remove it (go test ./internal/skills -update)", e.Name())
		}
	}
}

// TestPages: the help pages render against the table.
func TestPages(t *testing.T) {
	ps, err := Pages(catalog.All())
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != len(pageList) {
		t.Fatalf("%d pages", len(ps))
	}
	for _, p := range ps {
		if !bytes.HasPrefix(p.Body, []byte("# ")) || bytes.Contains(p.Body, []byte("{{")) {
			t.Errorf("%s: %.80s", p.Name, p.Body)
		}
	}
}

// TestReferencesAreChecked: a call, action or argument the table does not
// have fails the rendering, naming it.
func TestReferencesAreChecked(t *testing.T) {
	all := catalog.All()
	var without []*tools.Tool
	for _, tl := range all {
		if tl.Name == "block" {
			renamed := *tl
			renamed.Actions = nil
			for _, a := range tl.Actions {
				if a.Name == "update" {
					b := *a
					b.Name = "update_block"
					a = &b
				}
				renamed.Actions = append(renamed.Actions, a)
			}
			tl = &renamed
		}
		without = append(without, tl)
	}
	if _, err := Render(without); err == nil || !strings.Contains(err.Error(), `no action "update"`) {
		t.Errorf("a renamed action rendered: %v", err)
	}
	cases := map[string]string{
		"unknown tool":     `{{act "nosuch" "list"}}`,
		"unknown argument": `{{call "block" "get_kramdown" ` + "`" + `{"block":"20260812120000-abcdefg"}` + "`" + `}}`,
		"bad value":        `{{call "block" "get_kramdown" ` + "`" + `{"id":"not an id"}` + "`" + `}}`,
		"not an object":    `{{call "block" "get_kramdown" ` + "`" + `[1]` + "`" + `}}`,
		"arg":              `{{arg "block" "update" "body"}}`,
		"describe":         `{{describe "block" "nosuch"}}`,
	}
	for name, text := range cases {
		if _, err := renderText(name, text, byName(all)); err == nil {
			t.Errorf("%s: rendered", name)
		}
	}
}

// TestOptionalTool: a skill whose tool is not registered is left out, and
// the index leaves out what points at it.
func TestOptionalTool(t *testing.T) {
	sk, err := Render(catalog.All())
	if err != nil {
		t.Fatal(err)
	}
	hasTimeline := slices.ContainsFunc(catalog.All(), func(tl *tools.Tool) bool { return tl.Name == "timeline" })
	got := slices.ContainsFunc(sk, func(s Skill) bool { return s.Name == "siyuan-timeline" })
	if got != hasTimeline {
		t.Errorf("timeline skill served: %v, tool registered: %v", got, hasTimeline)
	}
	for _, s := range sk {
		if !bytes.HasPrefix(s.Body, []byte("---\nname: "+s.Name+"\n")) || !strings.HasPrefix(s.Prompt(), "siyuan_") {
			t.Errorf("%s: frontmatter or prompt name wrong: %q", s.Name, s.Prompt())
		}
		if !hasTimeline && bytes.Contains(s.Body, []byte("siyuan-timeline")) {
			t.Errorf("%s names the timeline skill, which is not served", s.Name)
		}
	}
	if !strings.Contains(string(Index(sk)), sk[0].Digest()) {
		t.Error("the index does not carry the digests")
	}
}

// TestTimelineSkillWhenRegistered: with a timeline tool of the six actions
// in the table, its skill renders and the index points at it.
func TestTimelineSkillWhenRegistered(t *testing.T) {
	tl := &tools.Tool{Name: "timeline"}
	for _, n := range []string{"list_nodes", "create_node", "compare_node", "delete_node", "rollback_document", "rollback_block"} {
		tl.Actions = append(tl.Actions, &tools.Action{Name: n})
	}
	sk, err := Render(append(catalog.All(), tl))
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(sk, func(s Skill) bool { return s.Name == "siyuan-timeline" })
	if i < 0 || !bytes.Contains(sk[i].Body, []byte("`timeline rollback_block`")) {
		t.Fatalf("timeline skill: %v", i)
	}
	if !bytes.Contains(sk[0].Body, []byte("`siyuan-timeline`")) {
		t.Error("the index skill does not point at the timeline skill")
	}
	tl.Actions = tl.Actions[:5] // a renamed or removed action fails
	if _, err := Render(append(catalog.All(), tl)); err == nil {
		t.Error("a timeline without rollback_block rendered")
	}
}
