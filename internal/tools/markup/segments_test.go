package markup

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// blockKinds are top-level blocks in the kramdown a SiYuan kernel answers
// for a document (every block with its IAL; @ stands for a fresh id): the
// first nine split as text, the rest hold raw blocks.
var blockKinds = []string{
	"plain **bold** *em* `code` ==mark== ~~del~~ #tag#\u200b and ((20260101000000-zzzzzzz 'a ref'))\n{: id=\"@\" updated=\"20260101000000\"}",
	"# Heading **b**\n{: id=\"@\" updated=\"20260101000000\"}",
	"- {: id=\"@\" updated=\"20260101000000\"}one\n  {: id=\"@\" updated=\"20260101000000\"}\n- {: id=\"@\"}two\n  {: id=\"@\"}\n  - {: id=\"@\"}nested **x**\n    {: id=\"@\"}\n  {: id=\"@\"}\n{: id=\"@\" updated=\"20260101000000\"}",
	"1. {: id=\"@\"}first\n   {: id=\"@\"}\n\n2. {: id=\"@\"}loose second\n   {: id=\"@\"}\n{: id=\"@\"}",
	"> quoted *text*\n> {: id=\"@\"}\n>\n> - {: id=\"@\"}quoted item\n>   {: id=\"@\"}\n> {: id=\"@\"}\n{: id=\"@\"}",
	"| a | b |\n| - | - |\n| 1 | **2** |\n{: id=\"@\" colgroup=\"|\"}",
	"---\n{: id=\"@\"}",
	"- {: id=\"@\"}[ ] task\n  {: id=\"@\"}\n{: id=\"@\"}",
	"a line  \nbreak and <u>under</u>\n{: id=\"@\" custom-x=\"1\" alias=\"al\"}",
	"```go\nfmt.Println(1)\n\n{: id=\"@\"}\n\nreturn\n```\n{: id=\"@\"}",
	"$$\na^2\n$$\n{: id=\"@\"}",
	"{{{row\ninside\n{: id=\"@\"}\n\nsecond\n{: id=\"@\"}\n}}}\n{: id=\"@\"}",
	"<div>html</div>\n{: id=\"@\"}",
	"{{SELECT * FROM blocks LIMIT 1}}\n{: id=\"@\"}",
}

// docOf joins blocks as a document's kramdown, with fresh ids and the
// document's own IAL at the end.
func docOf(t testing.TB, blocks ...string) string {
	t.Helper()
	n := 0
	kd := strings.Join(blocks, "\n\n") + "\n\n{: id=\"@\" title=\"T\" type=\"doc\"}"
	for strings.Contains(kd, `"@"`) {
		n++
		kd = strings.Replace(kd, `"@"`, fmt.Sprintf(`"20260101000000-%07d"`, n), 1)
	}
	return kd
}

var idRE = regexp.MustCompile(`id="([^"]+)"`)

func allIDs(kd string) map[string]bool {
	want := map[string]bool{}
	for _, m := range idRE.FindAllStringSubmatch(kd, -1) {
		want[m[1]] = true
	}
	return want
}

// TestSplitSegmentsAgrees: whenever a document can be split as text, the
// split is the whole parse's, block for block; documents with raw blocks
// (code, math, HTML, superblocks, embeds) are parsed whole.
func TestSplitSegmentsAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	segmented := 0
	for i := range 300 {
		var md []string
		kinds := blockKinds[:9] // mostly documents that split as text
		if r.IntN(5) == 0 {
			kinds = blockKinds
		}
		for range 1 + r.IntN(8) {
			md = append(md, kinds[r.IntN(len(kinds))])
		}
		kd := withoutDocIAL(docOf(t, md...))
		want := allIDs(kd)
		got, ok := splitSegments(kd, want)
		if !ok {
			continue
		}
		segmented++
		if whole := splitWhole(kd, want); !maps.Equal(got, whole) {
			t.Fatalf("document %d split as text differs from the whole parse:\n%s\n got %q\nwant %q", i, kd, got, whole)
		}
	}
	if segmented < 30 {
		t.Fatalf("only %d of 300 documents were split as text", segmented)
	}
}

func TestSplitSegmentsRefuses(t *testing.T) {
	for _, kind := range blockKinds[9:] {
		kd := withoutDocIAL(docOf(t, blockKinds[0], kind, blockKinds[1]))
		if _, ok := splitSegments(kd, allIDs(kd)); ok {
			t.Errorf("split as text a document holding %q:\n%s", kind, kd)
		}
	}
	for _, kd := range []string{
		"para\n{: id=\"20260101000000-aaaaaaa\"}\n\ntrailing text",                               // not closed by an IAL
		"*\n{: id=\"20260101000000-aaaaaaa\"}\n\n{: id=\"20260101000000-aaaaaaa\"}",              // an id twice, an IAL without a block
		"   <!--\n\n{: id=\"20260101000000-aaaaaaa\"}\n\n-->\n{: id=\"20260101000000-bbbbbbb\"}", // indented raw HTML
	} {
		if _, ok := splitSegments(kd, allIDs(kd)); ok {
			t.Errorf("split as text %q", kd)
		}
	}
}

// BenchmarkBlockKramdowns: eleven paragraphs of a 1,000-paragraph document,
// split as text (only their segments parsed) and parsed whole.
func BenchmarkBlockKramdowns(b *testing.B) {
	var sb strings.Builder
	want := map[string]bool{}
	for i := range 1000 {
		id := fmt.Sprintf("20260101000000-%07d", i)
		fmt.Fprintf(&sb, "Paragraph %d of the benchmark document, with **some** text in it.\n{: id=\"%s\" updated=\"20260101000000\"}\n\n", i, id)
		if i >= 500 && i < 511 {
			want[id] = true
		}
	}
	sb.WriteString("{: id=\"20260101000000-ddddddd\" title=\"Bench\" type=\"doc\" updated=\"20260101000000\"}")
	kd := withoutDocIAL(sb.String())
	b.Run("segments", func(b *testing.B) {
		for range b.N {
			if out, ok := splitSegments(kd, want); !ok || len(out) != 11 {
				b.Fatal(ok, len(out))
			}
		}
	})
	b.Run("whole", func(b *testing.B) {
		for range b.N {
			if out := splitWhole(kd, want); len(out) != 11 {
				b.Fatal(len(out))
			}
		}
	})
}

// FuzzSplitSegments: on any input, the text split never panics and, when
// it answers, answers what the whole parse does.
func FuzzSplitSegments(f *testing.F) {
	for _, kind := range blockKinds {
		f.Add(docOf(f, kind, blockKinds[0]))
	}
	f.Add("para\n{: id=\"20260101000000-aaaaaaa\"}\n\n- x\n  {: id=\"20260101000000-bbbbbbb\"}\n{: id=\"20260101000000-ccccccc\"}")
	f.Fuzz(func(t *testing.T, kd string) {
		want := allIDs(kd)
		var got map[string]string
		var ok bool
		func() {
			defer func() {
				if r := recover(); r != nil {
					ok = false // the engine's panic: BlockKramdowns recovers it
				}
			}()
			got, ok = splitSegments(kd, want)
		}()
		if !ok {
			return
		}
		var whole map[string]string
		func() {
			defer func() { recover() }()
			whole = splitWhole(kd, want)
		}()
		if whole != nil && !maps.Equal(got, whole) {
			t.Fatalf("%q split as text %q, parsed whole %q", kd, got, whole)
		}
	})
}
