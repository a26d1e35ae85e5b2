package mdexport

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/88250/lute/ast"
	"github.com/88250/lute/parse"
)

// memSource is documents as kramdown, some answered as missing (hidden),
// one failing to load.
type memSource struct {
	docs   map[string]string // document id → kramdown, block ids in IALs
	titles map[string]string
	hidden map[string]bool // documents answered as missing
	fail   string          // a block id whose load fails
	embeds map[string][]string
	asked  []string // ids loaded, in order
}

var errLoad = errors.New("the kernel went away")

func (m *memSource) Block(_ context.Context, id string) (*parse.Tree, *ast.Node, error) {
	m.asked = append(m.asked, id)
	if id == m.fail {
		return nil, nil, errLoad
	}
	for doc, md := range m.docs {
		tree := parse.Parse("", []byte(md), NewLute().ParseOptions)
		parse.NestedInlines2FlattedSpans(tree, false) // refs as SiYuan stores them
		tree.ID, tree.Root.ID = doc, doc
		tree.Root.SetIALAttr("id", doc)
		tree.Root.SetIALAttr("title", m.titles[doc])
		n := NodeByID(tree.Root, id)
		if id == doc {
			n = tree.Root
		}
		if n == nil {
			continue
		}
		if m.hidden[doc] {
			return nil, nil, nil
		}
		return tree, n, nil
	}
	return nil, nil, nil
}

func (m *memSource) RefText(_ context.Context, id string) (string, error) {
	return "block not found", nil
}

func (m *memSource) Embed(_ context.Context, stmt string, _ int) ([]string, error) {
	return m.embeds[stmt], nil
}

func (m *memSource) AttributeView(context.Context, *parse.Tree, *ast.Node) (*ast.Node, error) {
	return nil, nil
}

func (m *memSource) Annotation(context.Context, string, string) ([]byte, error) { return nil, nil }

const (
	docA = "20260101000000-aaaaaaa"
	docB = "20260101000000-bbbbbbb"
	pA1  = "20260101000001-aaaaaaa"
	pB1  = "20260101000001-bbbbbbb"
	pB2  = "20260101000002-bbbbbbb"
)

func world() *memSource {
	return &memSource{
		docs: map[string]string{
			docA: "see ((" + pB1 + " 'the secret')) and ((" + pB2 + " \"ZZSECRET dynamic\"))\n{: id=\"" + pA1 + "\"}\n\n" +
				"{{SELECT * FROM blocks WHERE id='" + pB1 + "'}}\n{: id=\"20260101000003-aaaaaaa\"}\n",
			docB: "ZZSECRET one\n{: id=\"" + pB1 + "\"}\n\nZZSECRET two refers ((" + pA1 + " 'back'))\n{: id=\"" + pB2 + "\"}\n",
		},
		titles: map[string]string{docA: "A", docB: "B"},
		hidden: map[string]bool{},
		embeds: map[string][]string{"SELECT * FROM blocks WHERE id='" + pB1 + "'": {pB1}},
	}
}

func TestExport(t *testing.T) {
	ctx := context.Background()
	s, o := DefaultSettings(), Options{RefMode: 4, EmbedMode: 1, AddTitle: true}
	for _, c := range []struct {
		name   string
		hidden bool
		want   string
	}{
		{"shown", false, "# A\n\nsee the secret[^1] and ZZSECRET dynamic[^2]\n\n> ZZSECRET one\n\n" +
			"[^1]: ZZSECRET one\n\n\n[^2]: ZZSECRET two refers [back](#" + pA1 + ")\n"},
		// Missing: the anchors stay (they are the document's own text),
		// numbered, without definitions; the embed shows nothing.
		{"missing", true, "# A\n\nsee the secret[^1] and ZZSECRET dynamic[^2]\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := world()
			m.hidden[docB] = c.hidden
			got, found, err := Export(ctx, m, s, o, docA)
			if err != nil || !found || got != c.want {
				t.Fatalf("Export = %q, %v, %v\nwant %q", got, found, err, c.want)
			}
		})
	}
	// A block that does not exist: not found, no error.
	if got, found, err := Export(ctx, world(), s, o, "20200101000000-zzzzzzz"); got != "" || found || err != nil {
		t.Fatalf("unknown id: %q %v %v", got, found, err)
	}
	// A load that fails fails the export: nothing is left out silently.
	m := world()
	m.fail = pB2
	if _, _, err := Export(ctx, m, s, o, docA); !errors.Is(err, errLoad) {
		t.Fatalf("a failed load: %v", err)
	}
}

// FuzzExportHidesMissing: whatever a document holds (kramdown, refs, links,
// embeds), the export never panics, and the text of a document the Source
// answers as missing never shows unless the exported document holds it
// itself.
func FuzzExportHidesMissing(f *testing.F) {
	for _, s := range []string{
		"((" + pB1 + " 'x'))", "((" + pB2 + "))", "[l](siyuan://blocks/" + pB1 + ")", "{{SELECT * FROM blocks WHERE id='" + pB1 + "'}}",
		"# h\n\n((" + docB + " 'doc'))", "- [ ] ((" + pB1 + " \"d\"))", "> ((" + pB2 + " 'q'))\n\n((" + pA1 + " 'self'))", "",
		"{{{col\na\n\nb\n}}}", "$$\nx\n$$", "| a |\n| - |\n| ((" + pB1 + " 't')) |",
	} {
		f.Add(s, 4, 1)
	}
	f.Fuzz(func(t *testing.T, md string, refMode, embedMode int) {
		if strings.Contains(md, "ZZSECRET") {
			return
		}
		m := world()
		m.docs[docA] = md + "\n{: id=\"" + pA1 + "\"}\n"
		m.embeds = map[string][]string{}
		for _, id := range []string{pB1, pB2, docB} {
			m.embeds["SELECT * FROM blocks WHERE id='"+id+"'"] = []string{id}
		}
		m.hidden[docB] = true
		o := Options{RefMode: refMode%3 + 2, EmbedMode: embedMode & 1, AddTitle: true}
		got, _, err := Export(context.Background(), m, DefaultSettings(), o, docA)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(got, "ZZSECRET") {
			t.Fatalf("a missing document's text shows:\n%s", got)
		}
	})
}

// FuzzParseSY: any bytes as a .sy file parse or fail, never panic.
func FuzzParseSY(f *testing.F) {
	f.Add([]byte(`{"ID":"20260101000000-aaaaaaa","Type":"NodeDocument","Properties":{"title":"T"},"Children":[{"ID":"20260101000001-aaaaaaa","Type":"NodeParagraph","Children":[{"Type":"NodeText","Data":"x"}]}]}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"Children":[{"Type":"NodeTextMark","TextMarkType":"block-ref"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if tree, err := ParseSY(data); err == nil && tree.Root.FirstChild == nil {
			t.Fatal("a parsed document has no block")
		}
	})
}
