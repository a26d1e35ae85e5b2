package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/testvars"
)

// The attacks of an agent through SiYuan's templates, every class of its
// function map: the environment and the network, functions SiYuan does
// not have, the index readers while a notebook is hidden, SQL that
// writes; in file.render (both engines), a database's template column,
// the notebooks' save paths, and the daily-note template a daily-note
// write renders (its path too: SiYuan reads any .md file it leads to).

// templateFlow runs the attacks; nb is a notebook the agent may write,
// hidden one the person hides, kernel the person's client.
func templateFlow(t *testing.T, s *serveProc, a *agent, c *siyuan.Client, nb, hidden string) {
	ctx := context.Background()
	s.config(t, "permission", nb, "rw")
	s.config(t, "permission", hidden, "none")
	doc := a.strictDo("document", map[string]any{"action": "create", "notebook": nb, "path": "/templated", "markdown": "a paragraph"})["id"].(string)
	secret, err := c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: hidden, Path: "/vault", Markdown: "the vault code is 4711"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.FlushTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	tplName := fmt.Sprintf("sisyphus-e2e-%d.md", time.Now().UnixNano())
	t.Cleanup(func() { c.RemoveFile(context.Background(), "/data/templates/"+tplName) })
	render := func(src string) (sprig, file map[string]any) {
		sprig = map[string]any{"action": "render", "engine": "sprig", "template": src}
		if err := c.PutFile(ctx, siyuan.PutFileRequest{Path: "/data/templates/" + tplName,
			Body: strings.NewReader(strings.NewReplacer("{{", ".action{", "}}", "}").Replace(src))}); err != nil {
			t.Fatal(err)
		}
		return sprig, map[string]any{"action": "render", "id": doc, "path": tplName}
	}
	for _, c := range []struct {
		src, code string
	}{
		{`{{ env "SIYUAN_ACCESS_AUTH_CODE" }}`, "permission_denied"},
		{`{{ expandenv "$HOME" }}`, "permission_denied"},
		{`{{ getHostByName "localhost" }}`, "permission_denied"},
		{`{{ "HOME" | env }}`, "permission_denied"},
		{`{{ readFile "/etc/passwd" }}`, "invalid_arguments"},
		{`{{ querySQL "SELECT content FROM blocks WHERE content LIKE '%vault%'" }}`, "permission_denied"},
		{`{{ (getBlock "` + secret + `").Content }}`, "permission_denied"},
		{`{{ getHPathByID "` + secret + `" }}`, "permission_denied"},
		{`{{ (statBlock "` + secret + `").RuneCount }}`, "permission_denied"},
		{`{{ querySpans "SELECT * FROM spans" }}`, "permission_denied"},
		{`{{ queryBlocks "SELECT * FROM blocks WHERE content LIKE '%?%'" "vault" }}`, "permission_denied"},
		{`{{ print "}}" | querySQL }}`, "permission_denied"},
		{`{{ define "x" }}{{ querySQL "SELECT 1" }}{{ end }}plain`, "permission_denied"},
	} {
		sprig, file := render(c.src)
		for _, args := range []map[string]any{sprig, file} {
			m := a.fails("file", args, c.code)
			if strings.Contains(fmt.Sprint(m), "4711") {
				t.Fatalf("%s: a refusal shows the hidden text: %v", c.src, m)
			}
		}
	}
	// Pure functions render in both engines.
	sprig, file := render(`{{ now | date "2006" }}-{{ "x" | upper }}-{{ pow 2 3 }}`)
	if got := a.ok("file", sprig)["content"]; got != time.Now().Format("2006")+"-X-8" {
		t.Fatalf("pure sprig: %v", got)
	}
	a.ok("file", file)

	// A save path is rendered later, for the person too: pure only. The
	// daily-note template stays in data/templates.
	for conf, code := range map[string]string{
		`{"dailyNoteSavePath": "/daily/{{ querySQL \"SELECT content FROM blocks LIMIT 1\" }}"}`: "permission_denied",
		`{"docCreateSavePath": "/{{ env \"HOME\" }}"}`:                                          "permission_denied",
		`{"dailyNoteTemplatePath": "../../../../../../etc/x.md"}`:                               "invalid_arguments",
	} {
		a.fails("notebook", map[string]any{"action": "set_conf", "notebook": nb, "conf": jsonObj(t, conf), "validateOnly": true}, code)
	}
	// Set by the person (or before the fix): a daily-note write refuses to
	// have SiYuan render a template outside data/templates, or one reading
	// the index while a notebook is hidden; no note is made.
	host := filepath.Join(t.TempDir(), "host-notes.md")
	if err := os.WriteFile(host, []byte("HOST FILE 0815"), 0o600); err != nil {
		t.Fatal(err)
	}
	setDaily := func(savePath, tpl string) {
		conf, err := c.GetNotebookConf(ctx, nb)
		if err != nil {
			t.Fatal(err)
		}
		cf := conf.Conf
		cf.DailyNoteSavePath, cf.DailyNoteTemplatePath = savePath, tpl
		if _, err := c.SetNotebookConf(ctx, nb, cf); err != nil {
			t.Fatal(err)
		}
	}
	daily := "/daily-" + fmt.Sprint(time.Now().UnixNano()) + `/{{ now | date "2006-01-02" }}`
	setDaily(daily, strings.Repeat("/..", 12)+host)
	a.fails("document", map[string]any{"action": "create_daily_note", "notebook": nb, "validateOnly": true}, "invalid_arguments")
	a.fails("block", map[string]any{"action": "add_to_daily_note", "notebook": nb, "position": "append", "data": "x", "validateOnly": true}, "invalid_arguments")
	if err := c.PutFile(ctx, siyuan.PutFileRequest{Path: "/data/templates/" + tplName,
		Body: strings.NewReader(`.action{ querySQL "SELECT content FROM blocks WHERE content LIKE '%vault%'" }`)}); err != nil {
		t.Fatal(err)
	}
	setDaily(daily, "/"+tplName)
	a.fails("document", map[string]any{"action": "create_daily_note", "notebook": nb, "validateOnly": true}, "permission_denied")
	kids, err := c.ListDocsByPath(ctx, siyuan.ListDocsRequest{Notebook: nb, Path: "/"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(fmt.Sprint(kids), "daily-") {
		t.Fatalf("a refused daily-note write made a note: %v", kids)
	}
}

func jsonObj(t *testing.T, s string) map[string]any {
	t.Helper()
	m := map[string]any{}
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestHiddenTemplatesThroughTheBinary(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	s := startServeWith(t, "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", t.TempDir())
	a := connect(t, s.url, "2025-11-25")
	c := kernelClient(t, k.url, "tok")
	var nbs [2]string
	for i := range nbs {
		n, err := c.CreateNotebook(context.Background(), fmt.Sprintf("tpl-%d", i))
		if err != nil {
			t.Fatal(err)
		}
		nbs[i] = n.ID
	}
	templateFlow(t, s, a, c, nbs[0], nbs[1])
}

// TestHiddenTemplatesLive runs the same against a real SiYuan when
// SISYPHUS_LIVE_SIYUAN_URL and SISYPHUS_LIVE_SIYUAN_TOKEN are set, in two
// notebooks it creates and removes.
func TestHiddenTemplatesLive(t *testing.T) {
	url, tok := testvars.Live(t)
	s := startServeWith(t, "--siyuan-url", url, "--siyuan-token", tok, "--state-dir", t.TempDir())
	a := connect(t, s.url, "2025-11-25")
	c := kernelClient(t, url, tok)
	var nbs [2]string
	for i := range nbs {
		n, err := c.CreateNotebook(context.Background(), fmt.Sprintf("sisyphus-live-tpl-%d-%d", i, time.Now().UnixNano()))
		if err != nil {
			t.Fatal(err)
		}
		nbs[i] = n.ID
		t.Cleanup(func() { c.RemoveNotebook(context.Background(), n.ID) })
	}
	templateFlow(t, s, a, c, nbs[0], nbs[1])
}
