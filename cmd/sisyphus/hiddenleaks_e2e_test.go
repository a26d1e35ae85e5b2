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

// Places where a hidden notebook's content could still leak through the
// built binary, probed as an agent would: plugin storage, configuration
// fields naming a hidden notebook, counts that hidden rows fill, database
// ids in attributes, grouped database views.

// TestPluginStorageRefusedWhileHidden: a plugin keeps a cache of the
// person's documents, the hidden notebook's titles among them, in its
// storage. While the notebook is hidden an agent can neither list nor read
// that storage, whichever plugin it names, and the refusal names nothing.
func TestPluginStorageRefusedWhileHidden(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	k := startKernel(t, t.TempDir())
	s := startServeWith(t, "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", t.TempDir())
	a := connect(t, s.url, "2025-11-25")
	c := kernelClient(t, k.url, "tok")
	vault, err := c.CreateNotebook(ctx, "Secret Vault")
	if err != nil {
		t.Fatal(err)
	}
	const plugin = "search-cache"
	for p, body := range map[string]string{
		"/data/plugins/" + plugin + "/plugin.json":      `{"name":"` + plugin + `","author":"E2E","version":"1.0.0","frontends":["all"]}`,
		"/data/storage/petal/" + plugin + "/index.json": `{"docs":[{"box":"` + vault.ID + `","title":"Salary talks"}]}`,
	} {
		if err := c.PutFile(ctx, siyuan.PutFileRequest{Path: p, Body: strings.NewReader(body)}); err != nil {
			t.Fatal(err)
		}
	}
	list := map[string]any{"action": "list_plugin_storage", "pluginName": plugin, "recursive": true}
	read := map[string]any{"action": "read_plugin_storage", "pluginName": plugin, "path": "index.json"}
	if r := a.ok("system", read); !strings.Contains(r["content"].(string), "Salary talks") {
		t.Fatalf("with nothing hidden the storage reads: %v", r)
	}
	a.ok("system", list)

	s.config(t, "permission", vault.ID, "none")
	var first map[string]any
	for _, args := range []map[string]any{list, read,
		{"action": "list_plugin_storage", "pluginName": "no-such-plugin"},
		{"action": "read_plugin_storage", "pluginName": plugin, "path": "missing.json"},
		{"action": "read_plugin_storage", "pluginName": "siyuan-plugins-mcp-sisyphus", "path": "mcpToolsConfig.json"},
	} {
		m := a.fails("system", args, "permission_denied")
		noneOf(t, "a refused storage read", m, []string{"Salary talks", vault.ID, "Secret Vault"})
		e := m["error"].(map[string]any)
		if first == nil {
			first = e
		} else if e["message"] != first["message"] || e["action"] != first["action"] {
			t.Fatalf("the refusal depends on what was asked:\n%v\n%v", first, e)
		}
	}
}

// TestHiddenDatabaseIDsInAttributes: a paragraph and a document of a
// visible notebook are rows of two databases, one shown in the visible
// notebook and one shown only in the hidden "Secret Vault". Every read of
// their attributes an agent has (get_attrs, get_kramdown,
// batch_kramdown, dom, get_doc in html, docs_info and lookup's docInfo)
// names the visible database and never the hidden one's id nor its name.
func TestHiddenDatabaseIDsInAttributes(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	s := startServeWith(t, "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", t.TempDir())
	hiddenDatabaseIDsFlow(t, s, kernelClient(t, k.url, "tok"), "")
}

// TestHiddenDatabaseIDsInAttributesLive runs the same against a real
// SiYuan when SISYPHUS_LIVE_SIYUAN_URL and SISYPHUS_LIVE_SIYUAN_TOKEN are
// set, in two notebooks it creates and removes.
func TestHiddenDatabaseIDsInAttributesLive(t *testing.T) {
	url, tok := testvars.Live(t)
	s := startServeWith(t, "--siyuan-url", url, "--siyuan-token", tok, "--state-dir", t.TempDir())
	hiddenDatabaseIDsFlow(t, s, kernelClient(t, url, tok), fmt.Sprint(" ", time.Now().UnixNano()))
}

func hiddenDatabaseIDsFlow(t *testing.T, s *serveProc, c *siyuan.Client, tag string) {
	ctx := context.Background()
	a := connect(t, s.url, "2025-11-25")
	open, err := c.CreateNotebook(ctx, "Open"+tag)
	if err != nil {
		t.Fatal(err)
	}
	vault, err := c.CreateNotebook(ctx, "Secret Vault"+tag)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, nb := range []string{open.ID, vault.ID} {
			c.RemoveNotebook(context.Background(), nb)
		}
	})
	doc, err := c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: open.ID, Path: "/Plan", Markdown: "plan one\n\nplan two\n"})
	if err != nil {
		t.Fatal(err)
	}
	vdoc, err := c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: vault.ID, Path: "/Salary", Markdown: "salary\n"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.FlushTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	para := kidsOf(t, c, doc)[0]
	mkdb := func(parent, name string) string {
		block, av := freshNodeID(), freshNodeID()
		if _, err := c.Transactions(ctx, []siyuan.Transaction{{DoOperations: []siyuan.Operation{
			siyuan.InsertDatabaseBlockOp(block, av, "", parent), siyuan.SetAttrViewNameOp(av, name)}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.RenderAttributeViewOrCreate(ctx, siyuan.RenderAVRequest{ID: av, BlockID: block}); err != nil {
			t.Fatal(err)
		}
		if err := c.AddAttributeViewBlocks(ctx, siyuan.AddAVBlocksRequest{AvID: av, BlockID: block,
			Srcs: []siyuan.AVSrc{{ItemID: freshNodeID(), ID: para}, {ItemID: freshNodeID(), ID: doc}}}); err != nil {
			t.Fatal(err)
		}
		return av
	}
	shown, hidden := mkdb(doc, "Open tasks"), mkdb(vdoc, "Payroll ledger")
	if err := c.FlushTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	reads := []struct {
		tool string
		args map[string]any
	}{
		{"block", map[string]any{"action": "get_attrs", "id": para}},
		{"block", map[string]any{"action": "get_kramdown", "id": para}},
		{"block", map[string]any{"action": "batch_kramdown", "ids": []string{para, doc}}},
		{"block", map[string]any{"action": "dom", "id": para}},
		{"block", map[string]any{"action": "get_attrs", "id": doc}},
		{"block", map[string]any{"action": "docs_info", "ids": []string{doc}, "av": true}},
		{"block", map[string]any{"action": "docs_info", "ids": []string{doc}}},
		{"document", map[string]any{"action": "get_doc", "id": doc, "mode": "html"}},
		{"document", map[string]any{"action": "lookup", "id": doc, "include": []string{"docInfo"}}},
	}
	// With nothing hidden every read names both databases (so each read
	// below is one that shows custom-avs at all).
	for _, r := range reads {
		got := a.ok(r.tool, r.args)
		b, _ := json.Marshal(got)
		if !strings.Contains(string(b), hidden) || !strings.Contains(string(b), shown) {
			t.Fatalf("%s %v with nothing hidden does not name both databases: %.400s", r.tool, r.args, b)
		}
	}
	s.config(t, "permission", vault.ID, "none")
	for _, r := range reads {
		got := a.ok(r.tool, r.args)
		noneOf(t, fmt.Sprintf("%s %v", r.tool, r.args["action"]), got, []string{hidden, "Payroll ledger", vault.ID})
		if b, _ := json.Marshal(got); !strings.Contains(string(b), shown) {
			t.Fatalf("%s %v no longer names the visible database: %.400s", r.tool, r.args, b)
		}
	}
}

// TestConfNamesNoHiddenNotebook: the person saves the documents that new
// references create into the hidden "Secret Vault", under a path of its
// titles, both in SiYuan's configuration and in a visible notebook's. An
// agent reading either sees neither the vault's id nor that path; its
// set_conf of another field keeps them; the person's change of the path
// does not move the agent's preflight hash.
func TestConfNamesNoHiddenNotebook(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	k := startKernel(t, dir)
	s := startServeWith(t, "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", t.TempDir())
	a := connect(t, s.url, "2025-11-25")
	c := kernelClient(t, k.url, "tok")
	open, err := c.CreateNotebook(ctx, "Open")
	if err != nil {
		t.Fatal(err)
	}
	vault, err := c.CreateNotebook(ctx, "Secret Vault")
	if err != nil {
		t.Fatal(err)
	}
	conf := `{"api":{"token":"tok"},"fileTree":{"refCreateSaveBox":"` + vault.ID + `","refCreateSavePath":"/Salary talks/Refs",` +
		`"docCreateSaveBox":"` + open.ID + `","docCreateSavePath":"/Inbox","shorthandSaveBox":"` + vault.ID + `","shorthandSavePath":"/Quick notes"}}`
	if err := os.WriteFile(filepath.Join(dir, "conf", "conf.json"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	setBox := func(path string) {
		t.Helper()
		nc, err := c.GetNotebookConf(ctx, open.ID)
		if err != nil {
			t.Fatal(err)
		}
		bc := nc.Conf
		bc.RefCreateSaveBox, bc.RefCreateSavePath = vault.ID, path
		if _, err := c.SetNotebookConf(ctx, open.ID, bc); err != nil {
			t.Fatal(err)
		}
	}
	setBox("/Salary talks/Refs")
	s.config(t, "enable", "system.conf")
	s.config(t, "permission", open.ID, "rw")
	s.config(t, "permission", vault.ID, "none")
	secrets := []string{vault.ID, "Salary talks", "Quick notes"}
	nbConf := a.ok("notebook", map[string]any{"action": "get_conf", "notebook": open.ID})
	noneOf(t, "notebook get_conf", nbConf, secrets)
	sysConf := a.ok("system", map[string]any{"action": "conf", "mode": "get", "keyPath": "conf.fileTree", "maxDepth": 3, "maxItems": 100})
	noneOf(t, "system conf", sysConf, secrets)
	if b, _ := json.Marshal(sysConf); !strings.Contains(string(b), "/Inbox") || !strings.Contains(string(b), open.ID) {
		t.Fatalf("system conf no longer shows the visible save box: %s", b)
	}

	args := map[string]any{"action": "set_conf", "notebook": open.ID, "conf": map[string]any{"sortMode": 6}}
	pre := a.ok("notebook", with(args, "validateOnly", true))
	setBox("/Bonus plans/Refs")
	if again := a.ok("notebook", with(args, "validateOnly", true)); again["expectedStateHash"] != pre["expectedStateHash"] {
		t.Fatalf("the person's change of the hidden save path moved the hash: %v, then %v", pre["expectedStateHash"], again["expectedStateHash"])
	}
	if res := a.ok("notebook", commitOf(args, pre)); res["status"] != "committed" {
		t.Fatalf("set_conf: %v", res)
	}
	after, err := c.GetNotebookConf(ctx, open.ID)
	if err != nil {
		t.Fatal(err)
	}
	if after.Conf.SortMode != 6 || after.Conf.RefCreateSaveBox != vault.ID || after.Conf.RefCreateSavePath != "/Bonus plans/Refs" {
		t.Fatalf("set_conf changed the person's save box: %+v", after.Conf)
	}
}

// groupedWorld is a database shown in a visible notebook, grouped by its
// select column, whose rows are a visible paragraph (Red), two paragraphs
// of another notebook (one Blue, alone in its group, one Red) and a
// detached row (no option).
type groupedWorld struct {
	visible, hidden, av, block string
	red, blue, hiddenRed, bare string // the rows' item IDs
}

func buildGroupedWorld(t *testing.T, c *siyuan.Client, tag string) *groupedWorld {
	t.Helper()
	ctx := context.Background()
	w := &groupedWorld{av: freshNodeID(), block: freshNodeID(), red: freshNodeID(), blue: freshNodeID(), hiddenRed: freshNodeID(), bare: freshNodeID()}
	for _, nb := range []*string{&w.visible, &w.hidden} {
		n, err := c.CreateNotebook(ctx, "sisyphus-grouped-"+tag)
		if err != nil {
			t.Fatal(err)
		}
		*nb = n.ID
	}
	vdoc, err := c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: w.visible, Path: "/grouped", Markdown: "visible alpha\n"})
	if err != nil {
		t.Fatal(err)
	}
	hdoc, err := c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: w.hidden, Path: "/secret", Markdown: "secret blue\n\nsecret red\n"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.FlushTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	vb, hb := kidsOf(t, c, vdoc), kidsOf(t, c, hdoc)
	if _, err := c.Transactions(ctx, []siyuan.Transaction{{DoOperations: []siyuan.Operation{siyuan.InsertDatabaseBlockOp(w.block, w.av, "", vdoc)}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RenderAttributeViewOrCreate(ctx, siyuan.RenderAVRequest{ID: w.av, BlockID: w.block}); err != nil {
		t.Fatal(err)
	}
	if err := c.AddAttributeViewBlocks(ctx, siyuan.AddAVBlocksRequest{AvID: w.av, BlockID: w.block, Srcs: []siyuan.AVSrc{
		{ItemID: w.red, ID: vb[0]}, {ItemID: w.blue, ID: hb[0]}, {ItemID: w.hiddenRed, ID: hb[1]}, {ItemID: w.bare, Detached: true, Content: "detached gamma"}}}); err != nil {
		t.Fatal(err)
	}
	stored, err := c.GetAttributeView(ctx, w.av)
	if err != nil || stored == nil {
		t.Fatalf("the database: %v", err)
	}
	sel := ""
	for _, kv := range stored.KeyValues {
		if kv != nil && kv.Key != nil && kv.Key.Type == siyuan.AVKeySelect {
			sel = kv.Key.ID
		}
	}
	for item, option := range map[string]string{w.red: "Red", w.blue: "Blue", w.hiddenRed: "Red"} {
		if _, err := c.SetAttributeViewBlockAttr(ctx, w.av, sel, item, &siyuan.AVValue{Type: siyuan.AVKeySelect, MSelect: []*siyuan.AVValueSelect{{Content: option, Color: "1"}}}); err != nil {
			t.Fatal(err)
		}
	}
	group := siyuan.Operation{Action: "setAttrViewGroup", AvID: w.av, BlockID: w.block, Data: map[string]any{"field": sel}}
	if _, err := c.Transactions(ctx, []siyuan.Transaction{{DoOperations: []siyuan.Operation{group}}}); err != nil {
		t.Fatal(err)
	}
	if err := c.FlushTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	return w
}

// groupRows are a compact render's groups: name → row IDs.
func groupRows(t *testing.T, res map[string]any) map[string][]string {
	t.Helper()
	gs, ok := res["groups"].([]any)
	if !ok {
		t.Fatalf("a grouped view rendered without groups: %v", res)
	}
	out := map[string][]string{}
	for _, g := range gs {
		m := g.(map[string]any)
		rows := []string{}
		for _, r := range m["rows"].([]any) {
			rows = append(rows, r.(map[string]any)["id"].(string))
		}
		if m["rowCount"] != float64(len(rows)) {
			t.Fatalf("group %v counts %v rows and shows %d", m["name"], m["rowCount"], len(rows))
		}
		out[m["name"].(string)] = rows
	}
	return out
}

// TestGroupedViewWhileHiddenLive: in a real SiYuan a grouped view's rows
// are in its groups. Rendered by an agent, each group shows its rows; while
// the other notebook is hidden the groups show only the visible rows, a
// group of hidden rows alone is left out, and nothing of the hidden rows
// shows (verbose included).
func TestGroupedViewWhileHiddenLive(t *testing.T) {
	url, tok := testvars.Live(t)
	c := kernelClient(t, url, tok)
	w := buildGroupedWorld(t, c, fmt.Sprint(time.Now().UnixNano()))
	t.Cleanup(func() {
		for _, nb := range []string{w.visible, w.hidden} {
			c.RemoveNotebook(context.Background(), nb)
		}
	})
	s := startServeWith(t, "--siyuan-url", url, "--siyuan-token", tok, "--state-dir", t.TempDir())
	a := connect(t, s.url, "2025-11-25")
	render := map[string]any{"action": "render", "avID": w.av, "blockID": w.block, "pageSize": 10}
	whole := groupRows(t, a.ok("av", render))
	if len(whole["Blue"]) != 1 || len(whole["Red"]) != 2 {
		t.Fatalf("with nothing hidden: %v", whole)
	}
	s.config(t, "permission", w.hidden, "none")
	res := a.ok("av", render)
	veiled := groupRows(t, res)
	if _, ok := veiled["Blue"]; ok || fmt.Sprint(veiled["Red"]) != fmt.Sprint([]string{w.red}) || len(veiled) != len(whole)-1 {
		t.Fatalf("while hidden: %v (whole: %v)", veiled, whole)
	}
	if res["rowCount"] != float64(2) || res["withheld"].(map[string]any)["rows"] != float64(2) {
		t.Fatalf("counts while hidden: %v", res)
	}
	verbose := a.ok("av", with(render, "verbose", true))
	for name, got := range map[string]map[string]any{"compact": res, "verbose": verbose} {
		noneOf(t, name, got, []string{"secret blue", "secret red", w.blue, w.hiddenRed, w.hidden})
	}
}
