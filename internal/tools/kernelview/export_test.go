package kernelview

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/siyuan/contract"
	"github.com/sisyphus-go/sisyphus/internal/siyuan/mdexport"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// refWorld is the contract's export scenario (contract.ExportRefCases)
// with the document "Secret" in a notebook of its own, which the tests
// hide: exported while hidden, the document must read as SiYuan exports it
// once Secret is removed.
type refWorld struct {
	f                                   *tooltest.Fixture
	env                                 *tools.Env
	hiddenNB                            string
	src, plain, title                   string
	ids                                 *strings.Replacer
	mu                                  sync.Mutex
	calls                               []string // kernel endpoints called, in order
	h1, hh, v1, v2, vp, s1, secret, tgt string
	static                              string // the paragraph "static ((h1 'static anchor'))"
}

func newRefWorld(t *testing.T) *refWorld {
	t.Helper()
	ctx := context.Background()
	w := &refWorld{f: tooltest.New(t, func() []*tools.Tool { return nil })}
	w.env = &tools.Env{Kernel: w.f.C}
	c := w.f.C
	hidden, err := c.CreateNotebook(ctx, "Hidden")
	if err != nil {
		t.Fatal(err)
	}
	w.hiddenNB = hidden.ID
	doc := func(nb, path, md string) string {
		id, err := c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: nb, Path: path, Markdown: md})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	kids := func(id string) []string {
		ks, err := c.GetChildBlocks(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, k := range ks {
			out = append(out, k.ID)
		}
		return out
	}
	appendMd := func(parent, md string) {
		if _, err := c.AppendBlock(ctx, "markdown", md, parent); err != nil {
			t.Fatal(err)
		}
	}
	w.tgt = doc(w.f.NB, "/exprefs-target", "visible target text\n\nsecond visible\n\n## Part\n\nunder part\n")
	w.secret = doc(w.hiddenNB, "/exprefs-secret", "SECRET ONE paragraph\n\n## SECRET HEADING\n\nsecret under heading\n")
	tk, sk := kids(w.tgt), kids(w.secret)
	w.v1, w.v2, w.vp, w.h1, w.hh = tk[0], tk[1], tk[2], sk[0], sk[1]
	appendMd(w.secret, "secret refers (("+w.v1+" 'to visible')) and (("+w.vp+" 'part'))")
	appendMd(w.tgt, "target refers (("+w.hh+" 'hidden via visible'))")
	w.title = "exprefs-src"
	w.src = doc(w.f.NB, "/"+w.title, strings.Join([]string{
		"# Local",
		"static ((" + w.h1 + " 'static anchor'))",
		"dynamic ((" + w.h1 + ` "SECRET ONE paragraph"))`,
		"visible ((" + w.v1 + " 'vis'))",
		"link [linktext](siyuan://blocks/" + w.h1 + ")",
		"heading ref ((" + w.hh + ` "SECRET HEADING"))`,
		"transitive ((" + w.v2 + " 'tgt'))",
		"{{SELECT * FROM blocks WHERE id='" + w.h1 + "'}}",
		"{{SELECT * FROM blocks WHERE id='" + w.v1 + "'}}",
		"{{select * from blocks where id='" + w.hh + "'}}",
		"line1\nline2 #tag#",
		"- [ ] task",
		"end",
	}, "\n\n")+"\n")
	w.s1, w.static = kids(w.src)[0], kids(w.src)[1]
	appendMd(w.src, "self (("+w.s1+" 'here'))")
	w.plain = doc(w.f.NB, "/exprefs-plain", "plain (("+w.v1+" 'vis')) text\n\n{{SELECT * FROM blocks WHERE id='"+w.v2+"'}}\n")
	if err := c.FlushTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	w.ids = strings.NewReplacer("{h1}", w.h1, "{hh}", w.hh, "{v1}", w.v1, "{v2}", w.v2, "{vp}", w.vp, "{s1}", w.s1, "{title}", w.title)
	w.f.SetHook(func(_ http.ResponseWriter, r *http.Request) bool {
		w.mu.Lock()
		w.calls = append(w.calls, strings.TrimPrefix(r.URL.Path, "/api/"))
		w.mu.Unlock()
		return false
	})
	return w
}

func (w *refWorld) takeCalls() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := w.calls
	w.calls = nil
	return c
}

func (w *refWorld) hiding() context.Context {
	return tools.WithPolicy(context.Background(), &tools.Policy{Default: tools.LevelRead, Notebooks: map[string]tools.Level{w.hiddenNB: tools.LevelNone}})
}

// TestExportHiddenReadsAsRemoved: with a notebook hidden, the export of a
// document referring into it, in every ref and embed mode, is SiYuan
// 3.7.3's export of that document once the blocks it refers to are removed
// (captured from a real kernel): anchors and footnote numbers stay, their
// definitions go, numbers reached only through hidden blocks are not
// given, embeds of hidden blocks show nothing.
func TestExportHiddenReadsAsRemoved(t *testing.T) {
	w := newRefWorld(t)
	ctx := w.hiding()
	for _, c := range contract.ExportRefCases {
		t.Run(c.Name, func(t *testing.T) {
			s := mdexport.DefaultSettings()
			o := mdexport.Options{RefMode: s.RefMode, EmbedMode: s.EmbedMode, AddTitle: s.AddTitle}
			for k, v := range c.Args {
				switch k {
				case "refMode":
					o.RefMode = v.(int)
				case "embedMode":
					o.EmbedMode = v.(int)
				case "addTitle":
					o.AddTitle = v.(bool)
				}
			}
			src := &policySource{env: w.env, policy: tools.PolicyFrom(ctx), docs: map[string][]byte{}, places: map[string]siyuan.DocPath{}}
			got, found, err := mdexport.Export(ctx, src, s, o, w.src)
			if err != nil || !found {
				t.Fatalf("export: %v (found %v)", err, found)
			}
			if want := w.ids.Replace(c.After); got != want {
				t.Fatalf("hidden export:\n got %q\nwant %q", got, want)
			}
			if !src.hidden || src.queried {
				t.Fatalf("the export met hidden blocks (%v) and ran no query (%v)", src.hidden, src.queried)
			}
			for _, secret := range []string{"## SECRET HEADING", "secret under heading", "secret refers", "[^3]:", "[^1]:", "> SECRET"} {
				if strings.Contains(got, secret) {
					t.Errorf("the hidden export shows %q", secret)
				}
			}
		})
	}
	// Through ExportMarkdown: the person's settings (here SiYuan's
	// defaults) and the document's human path.
	md, found, err := ExportMarkdown(ctx, w.env, w.src)
	if err != nil || !found || md.HPath != "/"+w.title || md.Content != w.ids.Replace(contract.ExportRefCases[0].After) {
		t.Fatalf("ExportMarkdown: %+v %v %v", md, found, err)
	}
	// A block of the document, too.
	md, found, err = ExportMarkdown(ctx, w.env, w.static)
	if err != nil || !found || md.HPath != "/"+w.title || md.Content != "# "+w.title+"\n\nstatic static anchor[^1]\n" {
		t.Fatalf("ExportMarkdown of a block: %+v %v %v", md, found, err)
	}
	if _, found, err := ExportMarkdown(ctx, w.env, "20200101000000-zzzzzzz"); found || err != nil {
		t.Fatalf("an unknown id: %v %v", found, err)
	}
}

// TestExportUnhiddenIsSiYuans: without a hidden notebook the export is
// SiYuan's, one kernel call; with one hidden but nothing hidden shown, it
// is SiYuan's too, after the reads that decide it.
func TestExportUnhiddenIsSiYuans(t *testing.T) {
	w := newRefWorld(t)
	want, err := w.f.C.ExportMdContent(context.Background(), w.src)
	if err != nil || want.Content != w.ids.Replace(contract.ExportRefCases[0].Before) {
		t.Fatalf("SiYuan's export:\n%q\n%v", want.Content, err)
	}
	w.takeCalls()
	for _, p := range []*tools.Policy{nil, tools.Unrestricted(), {Default: tools.LevelRead}} {
		ctx := context.Background()
		if p != nil {
			ctx = tools.WithPolicy(ctx, p)
		}
		md, found, err := ExportMarkdown(ctx, w.env, w.src)
		if err != nil || !found || md != want {
			t.Fatalf("policy %+v: %+v %v %v", p, md, found, err)
		}
		if calls := w.takeCalls(); len(calls) != 1 || calls[0] != "export/exportMdContent" {
			t.Fatalf("nothing hidden: kernel calls %v, want exportMdContent alone", calls)
		}
	}
	// Hidden notebook, a document that shows nothing of it: SiYuan's
	// answer, byte for byte.
	plain, err := w.f.C.ExportMdContent(context.Background(), w.plain)
	if err != nil {
		t.Fatal(err)
	}
	w.takeCalls()
	md, found, err := ExportMarkdown(w.hiding(), w.env, w.plain)
	if err != nil || !found || md != plain {
		t.Fatalf("a document showing nothing hidden: %+v, want %+v (%v)", md, plain, err)
	}
	if calls := w.takeCalls(); calls[len(calls)-1] != "export/exportMdContent" || strings.Count(strings.Join(calls, " "), "exportMdContent") != 1 {
		t.Fatalf("calls %v", calls)
	}
}

// TestExportHiddenEmbedQueries: while a notebook is hidden, an embed's
// query other than the plain one by id is never sent to the kernel (its
// answer could depend on hidden blocks even when it shows none): the
// embed shows nothing, and the export is rendered here.
func TestExportHiddenEmbedQueries(t *testing.T) {
	w := newRefWorld(t)
	ctx := context.Background()
	oracle := "{{SELECT * FROM blocks WHERE id='" + w.v1 + "' AND (SELECT count(*) FROM blocks WHERE content LIKE '%SECRET%') > 0}}"
	doc, err := w.f.C.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: w.f.NB, Path: "/oracle",
		Markdown: "before\n\n" + oracle + "\n\n{{SELECT * FROM blocks WHERE id='" + w.v2 + "'}}\n\n{{ select * from BLOCKS where ID = '" + w.h1 + "' ; }}\n\nafter\n"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.f.C.FlushTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	own, err := w.f.C.ExportMdContent(ctx, doc)
	if err != nil || !strings.Contains(own.Content, "> visible target text") || !strings.Contains(own.Content, "> SECRET ONE") {
		t.Fatalf("SiYuan runs the query: %q %v", own.Content, err)
	}
	w.takeCalls()
	md, _, err := ExportMarkdown(w.hiding(), w.env, doc)
	if err != nil {
		t.Fatal(err)
	}
	if want := "# oracle\n\nbefore\n\n> second visible\n\nafter\n"; md.Content != want {
		t.Fatalf("hidden export:\n got %q\nwant %q", md.Content, want)
	}
	for _, c := range w.takeCalls() {
		if c == "query/sql" || c == "export/exportMdContent" || c == "search/searchEmbedBlock" {
			t.Fatalf("the export sent %s while a notebook is hidden", c)
		}
	}
}

func TestPlainEmbed(t *testing.T) {
	for stmt, want := range map[string]string{
		"SELECT * FROM blocks WHERE id='20260101000000-abcdefg'":            "20260101000000-abcdefg",
		"  select *\nfrom   BLOCKS where ID = '20260101000000-abcdefg' ;  ": "20260101000000-abcdefg",
		"SELECT * FROM blocks WHERE id='20260101000000-abcdefg' OR 1=1":     "",
		"SELECT * FROM blocks WHERE id='20260101000000-abcdefg';SELECT 1":   "",
		"SELECT * FROM blocks WHERE id=\"20260101000000-abcdefg\"":          "",
		"SELECT * FROM blocks WHERE id='20260101000000-ABCDEFG'":            "",
		"SELECT * FROM spans WHERE id='20260101000000-abcdefg'":             "",
	} {
		got := ""
		if m := plainEmbed.FindStringSubmatch(stmt); m != nil {
			got = m[1]
		}
		if got != want {
			t.Errorf("%q: %q, want %q", stmt, got, want)
		}
	}
}
