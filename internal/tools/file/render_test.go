package file

import (
	"context"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// indexed is how many blocks SiYuan's SQL index holds (flushed first).
func (s *sfix) indexed(t *testing.T) float64 {
	t.Helper()
	ctx := context.Background()
	if err := s.C.FlushTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	rows, err := s.C.QuerySQL(ctx, "SELECT count(*) AS n FROM blocks")
	if err != nil || len(rows) != 1 {
		t.Fatalf("count blocks: %v %v", rows, err)
	}
	n, _ := rows[0]["n"].(float64)
	return n
}

func TestRenderTemplate(t *testing.T) {
	s := newFixture(t)
	s.put(t, "/data/templates/title.md", "# .action{.title}\n\nid .action{.id}\n")
	r := s.OK(t, "file", map[string]any{"action": "render", "id": s.Doc, "path": "title.md"})
	dom, _ := r["content"].(string)
	if r["engine"] != "template" || r["dataType"] != "dom" || r["path"] != "templates/title.md" || r["id"] != s.Doc ||
		!strings.Contains(dom, ">Doc<") || !strings.Contains(dom, "id "+s.Doc) || !strings.Contains(dom, `data-type="NodeHeading"`) {
		t.Fatalf("render: %v", r)
	}
	// engine defaults to template; the path takes every spelling.
	for _, p := range []string{"/templates/title.md", "data/templates/title.md"} {
		r := s.OK(t, "file", map[string]any{"action": "render", "engine": "template", "id": s.Doc, "path": p})
		if !strings.Contains(r["content"].(string), ">Doc<") {
			t.Fatalf("render %s: %v", p, r)
		}
	}
	// Rendering reads: the document is unchanged.
	if kids := s.Kids(t, s.Doc); len(kids) != 12 {
		t.Fatalf("the document has %d blocks after a render", len(kids))
	}
	// Rendered for a block, .title is the block's name.
	s.put(t, "/data/templates/name.md", "[.action{.title}] .action{.id}\n")
	r = s.OK(t, "file", map[string]any{"action": "render", "id": s.Blocks[2], "path": "name.md"})
	if c := r["content"].(string); !strings.Contains(c, "[] "+s.Blocks[2]) {
		t.Fatalf("render for a block: %v", r)
	}

	// Sprig text.
	for tpl, want := range map[string]string{
		"{{ add 1 2 }}":               "3",
		`{{ "abc" | upper }}`:         "ABC",
		`{{ list 1 2 3 | join "," }}`: "1,2,3",
		"plain":                       "plain",
	} {
		r := s.OK(t, "file", map[string]any{"action": "render", "engine": "sprig", "template": tpl})
		if r["engine"] != "sprig" || r["content"] != want {
			t.Errorf("sprig %q: %v", tpl, r)
		}
	}

	// Missing and unlisted templates, unknown blocks.
	s.WantErr(t, "file", map[string]any{"action": "render", "id": s.Doc, "path": "nope.md"}, failure.NotFound)
	s.put(t, "/data/templates/README.md", "# .action{.title}")
	s.WantErr(t, "file", map[string]any{"action": "render", "id": s.Doc, "path": "README.md"}, failure.NotFound)
	s.WantErr(t, "file", map[string]any{"action": "render", "id": "20200101010101-abcdefg", "path": "title.md"}, failure.NotFound)
}

func TestRenderArguments(t *testing.T) {
	s := newFixture(t)
	s.put(t, "/data/templates/t.md", "x")
	for name, args := range map[string]map[string]any{
		"unknown engine":           {"engine": "jinja", "template": "x"},
		"sprig without text":       {"engine": "sprig"},
		"sprig with an id":         {"engine": "sprig", "template": "x", "id": s.Doc},
		"sprig with a path":        {"engine": "sprig", "template": "x", "path": "t.md"},
		"template with text":       {"engine": "template", "id": s.Doc, "path": "t.md", "template": "x"},
		"template without id":      {"engine": "template", "path": "t.md"},
		"template without path":    {"engine": "template", "id": s.Doc},
		"template with a bad id":   {"id": "doc", "path": "t.md"},
		"template not markdown":    {"id": s.Doc, "path": "t.txt"},
		"template climbing out":    {"id": s.Doc, "path": "../conf/conf.md"},
		"default engine with text": {"template": "{{ add 1 2 }}"},
	} {
		t.Run(name, func(t *testing.T) {
			s.WantErr(t, "file", map[string]any{"action": "render", "engine": args["engine"], "id": args["id"], "path": args["path"], "template": args["template"]}, failure.InvalidArguments)
		})
	}
}

// TestRenderRefusesWritingSQL: SiYuan's querySQL runs any statement, so a
// render whose SQL could write is refused before the kernel sees it; the
// index keeps every block. Several of these used to pass the check (a
// statement assembled at render time, a delimiter inside a string
// literal) and emptied the index.
func TestRenderRefusesWritingSQL(t *testing.T) {
	s := newFixture(t)
	before := s.indexed(t)
	if before < 13 {
		t.Fatalf("index holds %v blocks", before)
	}
	for name, src := range map[string]string{
		"literal delete":             `querySQL "DELETE FROM blocks"`,
		"lower case":                 `querySQL "delete from blocks where 1"`,
		"update":                     `querySQL "UPDATE blocks SET content = ''"`,
		"drop":                       `querySQL "DROP TABLE blocks"`,
		"pragma":                     `querySQL "PRAGMA writable_schema = 1"`,
		"queryBlocks":                `queryBlocks "DELETE FROM blocks"`,
		"assembled by print":         `querySQL (print "DEL" "ETE FROM blocks")`,
		"assembled by printf":        `querySQL (printf "%sETE FROM blocks" "DEL")`,
		"assembled in a variable":    `$q := print "DEL" "ETE FROM blocks" }}{{ querySQL $q`,
		"piped in":                   `print "DEL" "ETE FROM blocks" | querySQL`,
		"filled by queryBlocks":      `queryBlocks "?ETE FROM blocks" "DEL"`,
		"filled through a pipe":      `"DELETE" | queryBlocks "? FROM blocks"`,
		"queryBlocks verb from data": `queryBlocks "? FROM blocks" .title`,
		"delimiter inside a string":  `querySQL "/*}}*/DELETE FROM blocks"`,
		"in a defined template":      `define "x" }}{{ querySQL "DELETE FROM blocks" }}{{ end }}{{ template "x"`,
		"inside if":                  `if true }}{{ querySQL (print "DEL" "ETE FROM blocks") }}{{ end`,
		"inside range":               `range (list 1) }}{{ querySQL (print "DEL" "ETE FROM blocks") }}{{ end`,
		"inside with":                `with 1 }}{{ querySQL (print "DEL" "ETE FROM blocks") }}{{ else }}{{ end`,
		"printf with a verb filled":  `querySQL (printf "%s FROM blocks" "DELETE")`,
		"printf not a select":        `querySQL (printf "%s FROM blocks" .x)`,
	} {
		t.Run(name, func(t *testing.T) {
			sprig := "{{ " + src + " }}"
			e := s.WantErr(t, "file", map[string]any{"action": "render", "engine": "sprig", "template": sprig}, failure.InvalidArguments)
			wantAttemptedFalse(t, e)
			// The same in a template file, with SiYuan's delimiters.
			file := strings.NewReplacer("{{", ".action{", "}}", "}").Replace(".action{ " + src + " }")
			s.put(t, "/data/templates/sql.md", file)
			s.WantErr(t, "file", map[string]any{"action": "render", "id": s.Doc, "path": "sql.md"}, failure.InvalidArguments)
		})
	}
	if after := s.indexed(t); after != before {
		t.Fatalf("the index held %v blocks and holds %v after refused renders", before, after)
	}

	// Reads still render.
	for src, want := range map[string]string{
		`{{ len (querySQL "SELECT id FROM blocks WHERE id = '` + s.Doc + `'") }}`:                        "1",
		`{{ (index (queryBlocks "SELECT * FROM blocks WHERE content = '?'" "paragraph 4") 0).Content }}`: "paragraph 4",
		`{{ $c := "paragraph 5" }}{{ len (queryBlocks "SELECT * FROM blocks WHERE content = '?'" $c) }}`: "1",
		`{{ "paragraph 3" | queryBlocks "SELECT * FROM blocks WHERE content = '?'" | len }}`:             "1",
		`{{ len (querySQL (printf "SELECT id FROM blocks WHERE content = '%s'" "paragraph 6")) }}`:       "1",
		`{{ (getBlock "` + s.Blocks[0] + `").Content }}`:                                                 "paragraph 0",
		`{{ getHPathByID "` + s.Doc + `" }}`:                                                             "/Doc",
	} {
		r := s.OK(t, "file", map[string]any{"action": "render", "engine": "sprig", "template": src})
		if r["content"] != want {
			t.Errorf("%s: %v, want %q", src, r["content"], want)
		}
	}
	s.put(t, "/data/templates/read.md", `.action{ (getBlock .id).Content } of .action{ getHPathByID .id }`+"\n")
	r := s.OK(t, "file", map[string]any{"action": "render", "id": s.Blocks[1], "path": "read.md"})
	if !strings.Contains(r["content"].(string), "paragraph 1 of /Doc") {
		t.Fatalf("a template reading the index: %v", r)
	}
	// A template with the helpers that does not parse is refused as such.
	e := s.WantErr(t, "file", map[string]any{"action": "render", "engine": "sprig", "template": `{{ querySQL "SELECT 1" `}, failure.InvalidArguments)
	if !strings.Contains(e.Message, "does not parse") {
		t.Fatalf("unparsable: %+v", e)
	}
	if after := s.indexed(t); after != before {
		t.Fatalf("reads changed the index: %v, %v", before, after)
	}
}

// TestRenderWithHiddenNotebook: the SQL helpers cannot be filtered by
// notebook, so while one is hidden a template that uses them is refused;
// one without them renders.
func TestRenderWithHiddenNotebook(t *testing.T) {
	s := newFixture(t)
	hidden, err := s.C.CreateNotebook(context.Background(), "Hidden")
	if err != nil {
		t.Fatal(err)
	}
	s.Policy = &tools.Policy{Default: tools.LevelDelete, Notebooks: map[string]tools.Level{hidden.ID: tools.LevelNone}, AllActions: true, Strict: true}
	for _, src := range []string{
		`{{ querySQL "SELECT * FROM blocks" }}`,
		`{{ queryBlocks "SELECT * FROM blocks" }}`,
		`{{ getBlock "` + s.Blocks[0] + `" }}`,
		`{{ getHPathByID "` + s.Doc + `" }}`,
		`{{ querySpans "SELECT * FROM spans" }}`,
		`{{ statBlock "` + s.Doc + `" }}`,
		// Hidden behind a delimiter in a string, as the old check missed.
		`{{ print "}}" | querySQL }}`,
	} {
		s.WantErr(t, "file", map[string]any{"action": "render", "engine": "sprig", "template": src}, failure.PermissionDenied)
	}
	s.put(t, "/data/templates/q.md", `.action{ len (querySQL "SELECT * FROM blocks") }`)
	s.WantErr(t, "file", map[string]any{"action": "render", "id": s.Doc, "path": "q.md"}, failure.PermissionDenied)
	// Without the helpers: fine.
	if r := s.OK(t, "file", map[string]any{"action": "render", "engine": "sprig", "template": "{{ add 1 2 }}"}); r["content"] != "3" {
		t.Fatalf("sprig: %v", r)
	}
	s.put(t, "/data/templates/plain.md", "# .action{.title}")
	s.OK(t, "file", map[string]any{"action": "render", "id": s.Doc, "path": "plain.md"})
	// A field or variable spelled like a helper calls nothing.
	s.OK(t, "file", map[string]any{"action": "render", "engine": "sprig", "template": `{{ $querySQL := 1 }}{{ $querySQL }}`})
	// Rendering for a block of the hidden notebook is refused by the
	// gate, as for a block that does not exist.
	doc := s.MkDoc(t, hidden.ID, "/Secret", "secret")
	s.WantMissing(t, "file", map[string]any{"action": "render", "id": doc, "path": "plain.md"}, map[string]string{doc: tooltest.NewID()})
	// A template referencing a hidden block (whose empty anchor SiYuan
	// would fill with the block's text) renders as one referencing a
	// block that does not exist: not_found, whether in its source or
	// built as it renders.
	gone := tooltest.NewID()
	for name, src := range map[string]string{
		"ref.md":   "see ((" + doc + "))",
		"built.md": `see .action{ print "((" "` + doc + `" "))" }`,
		"gone.md":  "see ((" + gone + "))",
	} {
		s.put(t, "/data/templates/"+name, src)
	}
	e := s.WantErr(t, "file", map[string]any{"action": "render", "id": s.Doc, "path": "ref.md"}, failure.NotFound)
	if g := s.WantErr(t, "file", map[string]any{"action": "render", "id": s.Doc, "path": "gone.md"}, failure.NotFound); strings.ReplaceAll(g.Message, gone, doc) != e.Message {
		t.Fatalf("a hidden reference answers %q, a missing one %q", e.Message, g.Message)
	}
	if res, e := s.Call(t, "file", map[string]any{"action": "render", "id": s.Doc, "path": "built.md"}); e == nil || e.Code != failure.NotFound {
		t.Fatalf("a reference built while rendering: %v %v", res, e)
	}
}

// TestRenderHelperClasses: every class of SiYuan's template functions, in
// both engines: the environment and network never, an unknown function
// never (fail closed), the index readers not while a notebook is hidden,
// everything else always.
func TestRenderHelperClasses(t *testing.T) {
	s := newFixture(t)
	hidden, err := s.C.CreateNotebook(context.Background(), "Hidden")
	if err != nil {
		t.Fatal(err)
	}
	open := &tools.Policy{Default: tools.LevelDelete, AllActions: true, Strict: true}
	hiding := &tools.Policy{Default: tools.LevelDelete, Notebooks: map[string]tools.Level{hidden.ID: tools.LevelNone}, AllActions: true, Strict: true}
	for _, c := range []struct {
		src              string
		whenOpen, hidden failure.Code
	}{
		{`{{ env "HOME" }}`, failure.PermissionDenied, failure.PermissionDenied},
		{`{{ expandenv "$HOME" }}`, failure.PermissionDenied, failure.PermissionDenied},
		{`{{ getHostByName "localhost" }}`, failure.PermissionDenied, failure.PermissionDenied},
		{`{{ readFile "/etc/passwd" }}`, failure.InvalidArguments, failure.InvalidArguments},
		{`{{ querySpans "SELECT * FROM spans" }}`, "", failure.PermissionDenied},
		{`{{ (statBlock "` + s.Doc + `").RuneCount }}`, "", failure.PermissionDenied},
		{`{{ getHPathByID "` + s.Doc + `" }}`, "", failure.PermissionDenied},
		{`{{ now | date "2006" }} {{ Weekday now }} {{ pow 2 3 }} {{ "x" | sha256sum | trunc 4 }}`, "", ""},
	} {
		for _, engine := range []string{"sprig", "template"} {
			args := map[string]any{"action": "render", "engine": "sprig", "template": c.src}
			if engine == "template" {
				s.put(t, "/data/templates/classes.md", strings.NewReplacer("{{", ".action{", "}}", "}").Replace(c.src))
				args = map[string]any{"action": "render", "id": s.Doc, "path": "classes.md"}
			}
			for _, p := range []struct {
				policy *tools.Policy
				want   failure.Code
			}{{open, c.whenOpen}, {hiding, c.hidden}} {
				s.Policy = p.policy
				if p.want == "" {
					s.OK(t, "file", args)
					continue
				}
				s.WantErr(t, "file", args, p.want)
			}
		}
	}
}
