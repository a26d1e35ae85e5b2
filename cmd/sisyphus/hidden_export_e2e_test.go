package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/siyuan/contract"
	"github.com/sisyphus-go/sisyphus/internal/testvars"
)

// The attacks of an agent on a hidden notebook through exports: a visible
// document that refers into it (static and dynamic anchors, a block link,
// footnotes reached through other blocks), embeds that select its blocks
// or ask about them, each exported with export_md, extract_doc and grepped
// with fs.search; and export_resources of every folder of data/storage and
// of the notebook's own folder.

// hiddenWorld is what the person built before hiding a notebook: the
// contract's export scenario (contract.ExportRefCases), its document
// "Secret" in the notebook to hide.
type hiddenWorld struct {
	c                      *siyuan.Client
	visible, hidden        string // notebooks
	src, secret, title     string
	h1, hh, v1, v2, vp, s1 string
	ids                    *strings.Replacer
}

// settle is how long a real SiYuan needs after creating a notebook before
// a document created in it is indexed once (3.7.3 indexes the new notebook
// in the background, and a document created meanwhile twice, for good: an
// embed of one of its blocks then shows it twice).
func buildHiddenWorld(t *testing.T, c *siyuan.Client, tag string, settle time.Duration) *hiddenWorld {
	t.Helper()
	ctx := context.Background()
	w := &hiddenWorld{c: c}
	for _, nb := range []*string{&w.visible, &w.hidden} {
		n, err := c.CreateNotebook(ctx, "sisyphus-hidden-"+tag)
		if err != nil {
			t.Fatal(err)
		}
		*nb = n.ID
	}
	time.Sleep(settle)
	doc := func(nb, path, md string) string {
		id, err := c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: nb, Path: path, Markdown: md})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	tgt := doc(w.visible, "/exprefs-target", "visible target text\n\nsecond visible\n\n## Part\n\nunder part\n")
	w.secret = doc(w.hidden, "/exprefs-secret", "SECRET ONE paragraph\n\n## SECRET HEADING\n\nsecret under heading\n")
	// Indexed before the appends below (SiYuan 3.7.3 can index a
	// document appended to right after its creation twice, too).
	if err := c.FlushTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	tk, sk := kidsOf(t, c, tgt), kidsOf(t, c, w.secret)
	w.v1, w.v2, w.vp, w.h1, w.hh = tk[0], tk[1], tk[2], sk[0], sk[1]
	for _, a := range [][2]string{
		{w.secret, "secret refers ((" + w.v1 + " 'to visible')) and ((" + w.vp + " 'part'))"},
		{tgt, "target refers ((" + w.hh + " 'hidden via visible'))"},
	} {
		if _, err := c.AppendBlock(ctx, "markdown", a[1], a[0]); err != nil {
			t.Fatal(err)
		}
	}
	w.title = "exprefs-src-" + tag
	w.src = doc(w.visible, "/"+w.title, strings.Join([]string{
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
	if err := c.FlushTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	w.s1 = kidsOf(t, c, w.src)[0]
	if _, err := c.AppendBlock(ctx, "markdown", "self (("+w.s1+" 'here'))", w.src); err != nil {
		t.Fatal(err)
	}
	if err := c.FlushTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	w.ids = strings.NewReplacer("{h1}", w.h1, "{hh}", w.hh, "{v1}", w.v1, "{v2}", w.v2, "{vp}", w.vp, "{s1}", w.s1, "{title}", w.title)
	return w
}

// hiddenSecrets are texts only the hidden notebook holds (the dynamic
// anchor "SECRET ONE paragraph" and "SECRET HEADING" are stored in the
// visible document itself, as SiYuan keeps them for a removed block too).
var hiddenSecrets = []string{"## SECRET HEADING", "secret under heading", "secret refers", "> SECRET", "[^1]:", "[^3]:"}

// hiddenExportFlow: with the notebook hidden, every export of the visible
// document reads as SiYuan's export once the hidden document is removed;
// the person then removes it, and SiYuan's own export says the same.
func hiddenExportFlow(t *testing.T, s *serveProc, a *agent, w *hiddenWorld) {
	s.config(t, "permission", w.visible, "rw")
	s.config(t, "permission", w.hidden, "none")
	want := w.ids.Replace(contract.ExportRefCases[0].After)

	md := a.ok("file", map[string]any{"action": "export_md", "id": w.src})
	if md["content"] != want || md["hPath"] != "/"+w.title {
		t.Fatalf("export_md of a document referring into a hidden notebook:\n got %q\nwant %q", md["content"], want)
	}
	ex := a.ok("file", map[string]any{"action": "extract_doc", "id": w.src})
	if ex["markdown"] != want {
		t.Fatalf("extract_doc:\n got %q\nwant %q", ex["markdown"], want)
	}
	for _, secret := range hiddenSecrets {
		if strings.Contains(fmt.Sprint(md, ex), secret) {
			t.Fatalf("an export shows %q", secret)
		}
	}
	for _, q := range []string{"secret under heading", "secret refers", "SECRET HEADING"} {
		res := a.ok("fs", map[string]any{"action": "search", "path": "/", "query": q})
		for _, m := range res["data"].([]any) {
			text := m.(map[string]any)["text"].(string)
			if q != "SECRET HEADING" || text != "heading ref SECRET HEADING[^3]" {
				t.Fatalf("fs.search %q finds a hidden block's text: %v", q, m)
			}
		}
	}

	// Embeds an agent writes: one selecting hidden blocks, one asking
	// about them through a subquery (an oracle: it shows a visible block
	// only if a hidden one matches), a plain one of a hidden block. None
	// shows anything; the plain one of a visible block still does.
	probe := a.strictDo("document", map[string]any{"action": "create", "notebook": w.visible, "path": "/probe-" + w.title,
		"markdown": "before\n\n{{SELECT * FROM blocks WHERE content LIKE '%SECRET%'}}\n\n" +
			"{{SELECT * FROM blocks WHERE id='" + w.v1 + "' AND (SELECT count(*) FROM blocks WHERE box='" + w.hidden + "' AND content LIKE '%under%') > 0}}\n\n" +
			"{{SELECT * FROM blocks WHERE id='" + w.h1 + "'}}\n\n{{SELECT * FROM blocks WHERE id='" + w.v2 + "'}}\n\nafter"})["id"].(string)
	if err := w.c.FlushTransaction(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := a.ok("file", map[string]any{"action": "export_md", "id": probe})["content"]
	if want := "# probe-" + w.title + "\n\nbefore\n\n> second visible\n\nafter\n"; got != want {
		t.Fatalf("export_md of agent-written embeds:\n got %q\nwant %q", got, want)
	}

	// The person removes the hidden document: SiYuan's own export is
	// what the agent got while it was hidden.
	if err := w.c.RemoveDocByID(context.Background(), w.secret); err != nil {
		t.Fatal(err)
	}
	if err := w.c.FlushTransaction(context.Background()); err != nil {
		t.Fatal(err)
	}
	// SiYuan settles a removal in the background (its index and block
	// tree): its export is compared once it has.
	var own siyuan.MdContent
	var err error
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		own, err = w.c.ExportMdContent(context.Background(), w.src)
		if err == nil && own.Content == md["content"] || time.Now().After(deadline) {
			break
		}
	}
	if err != nil || own.Content != md["content"] {
		t.Fatalf("SiYuan's export once the hidden document is removed:\n%q\nthe agent's while it was hidden:\n%q (%v)", own.Content, md["content"], err)
	}
}

func TestHiddenExportThroughTheBinary(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	s := startServeWith(t, "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", t.TempDir())
	a := connect(t, s.url, "2025-11-25")
	w := buildHiddenWorld(t, kernelClient(t, k.url, "tok"), "e", 0)
	hiddenExportFlow(t, s, a, w)
}

// TestHiddenExportLive runs the same against a real SiYuan (default export
// settings) when SISYPHUS_LIVE_SIYUAN_URL and SISYPHUS_LIVE_SIYUAN_TOKEN
// are set, in two notebooks it creates and removes.
func TestHiddenExportLive(t *testing.T) {
	url, tok := testvars.Live(t)
	s := startServeWith(t, "--siyuan-url", url, "--siyuan-token", tok, "--state-dir", t.TempDir())
	a := connect(t, s.url, "2025-11-25")
	c := kernelClient(t, url, tok)
	w := buildHiddenWorld(t, c, fmt.Sprint(time.Now().UnixNano()), 3*time.Second)
	t.Cleanup(func() {
		for _, nb := range []string{w.visible, w.hidden} {
			c.RemoveNotebook(context.Background(), nb)
		}
	})
	hiddenExportFlow(t, s, a, w)
}

// TestHiddenExportResources: export_resources refuses every folder of
// data/storage (databases, flashcards, plugin storage, UI state) and the
// other folders no tool reads whole; a hidden notebook's folder, or a
// document in it, is answered exactly as a folder that does not exist; a
// symbolic link in the workspace is never followed out of it.
func TestHiddenExportResources(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	k := startKernel(t, ws)
	s := startServeWith(t, "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", t.TempDir())
	a := connect(t, s.url, "2025-11-25")
	c := kernelClient(t, k.url, "tok")
	w := buildHiddenWorld(t, c, "r", 0)
	s.config(t, "permission", w.hidden, "none")
	where, err := c.GetPathByID(context.Background(), w.secret)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"av/20260101000000-abcdefg.json", "riff/20260101000000-abcdefg.deck", "petal/some-plugin/token.json",
		"recent-doc.json", "outline.json", "local.json", "criteria.json", "ai/agent/sessions/index.json"} {
		if err := c.PutFile(context.Background(), siyuan.PutFileRequest{Path: "/data/storage/" + p, Body: strings.NewReader(`{"secret":"` + w.secret + `"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	denied := []string{"data/storage", "data/storage/av", "data/storage/av/20260101000000-abcdefg.json", "data/storage/riff",
		"data/storage/riff/20260101000000-abcdefg.deck", "data/storage/petal", "data/storage/petal/some-plugin",
		"data/storage/petal/siyuan-plugins-mcp-sisyphus", "data/storage/recent-doc.json", "data/storage/outline.json",
		"data/storage/local.json", "data/storage/criteria.json", "data/storage/ai", "DATA/STORAGE/riff", "data",
		"data/plugins", "data/widgets", "data/snippets", "data/public"}
	for _, p := range denied {
		a.fails("file", map[string]any{"action": "export_resources", "paths": []string{p}}, "permission_denied")
	}
	missing := "20200101000000-zzzzzzz"
	hid := a.fails("file", map[string]any{"action": "export_resources", "paths": []string{"data/" + w.hidden}}, "not_found")
	gone := a.fails("file", map[string]any{"action": "export_resources", "paths": []string{"data/" + missing}}, "not_found")
	he, ge := hid["error"].(map[string]any), gone["error"].(map[string]any)
	if strings.ReplaceAll(he["message"].(string), w.hidden, missing) != ge["message"] || he["action"] != ge["action"] {
		t.Fatalf("a hidden notebook's folder is told apart from a missing one:\n%v\n%v", he, ge)
	}
	a.fails("file", map[string]any{"action": "export_resources", "paths": []string{"data/" + w.hidden + where.Path}}, "not_found")
	a.fails("file", map[string]any{"action": "export_resources", "paths": []string{"data/" + strings.ToUpper(w.hidden)}}, "invalid_arguments")
	// A link the person made in the assets folder, to outside the
	// workspace.
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "id_rsa"), []byte("host key"), 0o600)
	if err := os.Symlink(outside, filepath.Join(ws, "data", "assets", "linked")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"assets/linked", "assets/linked/id_rsa"} {
		a.fails("file", map[string]any{"action": "export_resources", "paths": []string{p}}, "permission_denied")
	}
	// What the agent may read still exports.
	res := a.ok("file", map[string]any{"action": "export_resources", "paths": []string{"data/" + w.visible, "data/templates"}})
	if p, _ := res["path"].(string); !strings.HasPrefix(p, "temp/export/") {
		t.Fatalf("export_resources of a visible notebook: %v", res)
	}
}
