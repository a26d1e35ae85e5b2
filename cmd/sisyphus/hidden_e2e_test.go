package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// A notebook at permission none through the built binary, as an agent
// would probe it: every answer about what it holds is the answer about
// something that does not exist; databases, decks and counts leave it
// out; a forwarded plugin tool with effects needs rw on every notebook.

// idRE is a SiYuan id.
var idRE = regexp.MustCompile(`[0-9]{14}-[0-9a-z]{7}`)

// asMissing calls a tool with args, and again with every SiYuan id in
// args replaced by a fresh one that names nothing and every key of names
// by its value (an id named as itself stays); it answers both results as JSON, the second with the
// replacements undone, without what no two calls share (request ids and
// the times and credentials of leases).
func asMissing(a *agent, tool string, args map[string]any, names ...string) (hidden, missing string) {
	a.t.Helper()
	subst := map[string]string{}
	for i := 0; i+1 < len(names); i += 2 {
		subst[names[i]] = names[i+1]
	}
	raw, _ := json.Marshal(args)
	for _, id := range idRE.FindAllString(string(raw), -1) {
		if _, ok := subst[id]; !ok {
			subst[id] = fresh()
		}
	}
	var pairs, back []string
	for k, v := range subst {
		pairs, back = append(pairs, k, v), append(back, v, k)
	}
	var swapped map[string]any
	json.Unmarshal([]byte(strings.NewReplacer(pairs...).Replace(string(raw))), &swapped)
	answer := func(args map[string]any) string {
		m, _ := a.call(tool, args)
		for _, k := range []string{"requestId", "requestIdExpiresAt", "leaseExpiresAt", "expectedStateHash", "expectedManifestHash"} {
			delete(m, k)
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	return answer(args), strings.NewReplacer(back...).Replace(answer(swapped))
}

// fresh is a well-formed SiYuan id no block has.
func fresh() string {
	const alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
	n := time.Now().UnixNano()
	b := make([]byte, 7)
	for i := range b {
		b[i] = alphabet[n%36]
		n /= 36
	}
	return "19990101000000-" + string(b)
}

// TestHiddenLooksMissingThroughTheBinary: the person keeps a notebook
// "Secret Vault" at none beside an open one. An agent asking about a block
// of it (a read, a preflight, a commit, a replay), its name (fs ls), a tag
// only it uses (tag.rename) or its cards (get_cards' total) gets the
// answer for things that do not exist; a database in the open notebook
// leaves out its row bound to the vault and counts it as withheld.
func TestHiddenLooksMissingThroughTheBinary(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	k := startKernel(t, t.TempDir())
	kernel := []string{"--siyuan-url", k.url, "--siyuan-token", "tok"}
	state := t.TempDir()
	s := startServeWith(t, append(kernel, "--state-dir", state)...)
	a := connect(t, s.url, "2026-07-28")
	c := kernelClient(t, k.url, "tok")
	open, err := c.CreateNotebook(ctx, "Open")
	if err != nil {
		t.Fatal(err)
	}
	vault, err := c.CreateNotebook(ctx, "Secret Vault")
	if err != nil {
		t.Fatal(err)
	}
	kids := func(doc string) []string {
		t.Helper()
		ks, err := c.GetChildBlocks(ctx, doc)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, b := range ks {
			out = append(out, b.ID)
		}
		return out
	}
	odoc, err := c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: open.ID, Path: "/Plan", Markdown: "plan one\n\nplan two\n\nplan three\n"})
	if err != nil {
		t.Fatal(err)
	}
	vdoc, err := c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: vault.ID, Path: "/Salary", Markdown: "salary secret #vaultonly#\n\nanother secret\n\nthird secret\n"})
	if err != nil {
		t.Fatal(err)
	}
	ob, vb := kids(odoc), kids(vdoc)
	if _, err := c.AddRiffCards(ctx, siyuan.BuiltinDeckID, []string{ob[0], vb[0], vb[1]}); err != nil {
		t.Fatal(err)
	}
	if err := c.FlushTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	s.config(t, "permission", open.ID, "rwd")
	s.config(t, "permission", vault.ID, "rwd")
	s.config(t, "enable", "block.delete")

	// Preflighted while visible: an update of a vault block, and of an
	// open block the person removes before the commit.
	upd := func(id string) map[string]any { return map[string]any{"action": "update", "id": id, "data": "changed"} }
	preV, preO := a.ok("block", with(upd(vb[1]), "validateOnly", true)), a.ok("block", with(upd(ob[1]), "validateOnly", true))
	// Committed while visible, replayed after: the same pair.
	resV := a.strictDo("block", upd(vb[2]))
	resO := a.strictDo("block", upd(ob[2]))
	if _, err := c.DeleteBlock(ctx, ob[1]); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteBlock(ctx, ob[2]); err != nil {
		t.Fatal(err)
	}
	s.config(t, "permission", vault.ID, "none")

	// A block id in the hidden notebook: a read and a write preflight.
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"block", map[string]any{"action": "get_kramdown", "id": vb[0]}},
		{"document", map[string]any{"action": "get_doc", "id": vdoc}},
		{"block", with(upd(vb[0]), "validateOnly", true)},
		{"block", map[string]any{"action": "append", "parentID": odoc, "data": "see ((" + vb[0] + "))", "validateOnly": true}},
		{"fs", map[string]any{"action": "ls", "path": "/Secret Vault"}},
		{"fs", map[string]any{"action": "read", "path": "/Secret Vault/Salary"}},
		{"notebook", map[string]any{"action": "get_permissions", "notebook": vault.ID}},
	} {
		hidden, missing := asMissing(a, c.tool, c.args, "Secret Vault", "No Such Vault", odoc, odoc) // the open document stays
		if hidden != missing || !strings.Contains(hidden, `"not_found"`) {
			t.Errorf("%s %v in the hidden notebook answers\n  %s\nabout things that do not exist\n  %s", c.tool, c.args["action"], hidden, missing)
		}
	}
	// Through a stdio front, which reads itself and hands writes to the
	// authority: the same answers.
	st := stdioAgent(t, append(kernel, "--state-dir", state, "--token", "sekret")...)
	for _, args := range []map[string]any{
		{"action": "get_kramdown", "id": vb[0]},
		with(upd(vb[0]), "validateOnly", true),
	} {
		if hidden, missing := asMissing(st, "block", args); hidden != missing || !strings.Contains(hidden, `"not_found"`) {
			t.Errorf("block %v through stdio answers\n  %s\nfor a block that does not exist\n  %s", args["action"], hidden, missing)
		}
	}
	// The commit of a block hidden since its preflight, and of one removed.
	hidden, _ := a.call("block", commitOf(upd(vb[1]), preV))
	gone, _ := a.call("block", commitOf(upd(ob[1]), preO))
	h, _ := json.Marshal(hidden)
	g, _ := json.Marshal(gone)
	if strings.ReplaceAll(string(g), ob[1], vb[1]) != string(h) || errCodeOf(hidden) != "not_found" {
		t.Errorf("a commit after hiding answers %s, after removing %s", h, g)
	}
	// Replays: the ledger's receipt, in both cases.
	for _, r := range []map[string]any{resV, resO} {
		id := vb[2]
		if r["requestId"] == resO["requestId"] {
			id = ob[2]
		}
		rep := a.ok("block", with(upd(id), "requestId", r["requestId"], "expectedStateHash", "0000"))
		if rep["replayed"] != true || rep["status"] != r["status"] {
			t.Errorf("a replay after the block went: %v", rep)
		}
	}

	// A tag only the hidden notebook uses: renaming it is refused, as
	// renaming a tag nothing carries is, while a notebook is hidden.
	hidden2, missing := asMissing(a, "tag", map[string]any{"action": "rename", "oldLabel": "vaultonly", "newLabel": "x", "validateOnly": true}, "vaultonly", "nosuchtag")
	if hidden2 != missing || strings.Contains(hidden2, vault.ID) || strings.Contains(hidden2, "Secret Vault") {
		t.Errorf("tag.rename of the hidden notebook's tag answers\n  %s\nof a tag nothing carries\n  %s", hidden2, missing)
	}

	// Cards: the total and pages count the open notebook's card alone,
	// exactly as when the hidden notebook holds no card.
	getCards := map[string]any{"action": "get_cards", "deckID": "", "pageSize": 1}
	cards := a.ok("flashcard", getCards)
	if cards["total"] != float64(1) || cards["pageCount"] != float64(1) || len(cards["cards"].([]any)) != 1 || strings.Contains(fmt.Sprint(cards), "secret") {
		t.Errorf("get_cards with a hidden notebook: %v", cards)
	}
	if _, err := c.RemoveRiffCards(ctx, siyuan.BuiltinDeckID, []string{vb[0], vb[1]}); err != nil {
		t.Fatal(err)
	}
	undue := func(m map[string]any) string { // a new card is due at the time of the read
		for _, c := range m["cards"].([]any) {
			delete(c.(map[string]any)["card"].(map[string]any), "due")
		}
		return fmt.Sprint(m)
	}
	if without := a.ok("flashcard", getCards); undue(without) != undue(cards) {
		t.Errorf("get_cards with the hidden notebook's cards answers\n  %v\nwithout them\n  %v", cards, without)
	}

	// A database in the open notebook with a row bound to the vault.
	db := a.strictDo("av", map[string]any{"action": "create", "parentID": odoc, "name": "Mixed", "primaryKeyTexts": []string{"open row"}})
	av := db["avID"].(string)
	if err := c.AddAttributeViewBlocks(ctx, siyuan.AddAVBlocksRequest{AvID: av, BlockID: db["blockID"].(string),
		Srcs: []siyuan.AVSrc{{ItemID: fresh(), ID: vb[0]}}}); err != nil {
		t.Fatal(err)
	}
	r := a.ok("av", map[string]any{"action": "render", "avID": av})
	if r["rowCount"] != float64(1) || strings.Contains(fmt.Sprint(r), "secret") || r["withheld"].(map[string]any)["rows"] != float64(1) {
		t.Errorf("render of a database with a hidden row: %v", r)
	}
}

// TestForwardedEffectsNeedRWEverywhere: a forwarded plugin tool with
// effects can write in any notebook, so it needs rw on every notebook (the
// refusal says so, naming a visible one); a read needs r; while a notebook
// is hidden every forward is refused without naming it.
func TestForwardedEffectsNeedRWEverywhere(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	k := startKernel(t, t.TempDir())
	kernel := []string{"--siyuan-url", k.url, "--siyuan-token", "tok"}
	s := startServeWith(t, append(kernel, "--state-dir", t.TempDir())...)
	a := connect(t, s.url, "2025-11-25")
	c := kernelClient(t, k.url, "tok")
	work, err := c.CreateNotebook(ctx, "Work")
	if err != nil {
		t.Fatal(err)
	}
	other, err := c.CreateNotebook(ctx, "Reference")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: work.ID, Path: "/Plan", Markdown: "stamp me\n"})
	if err != nil {
		t.Fatal(err)
	}
	s.config(t, "permission", work.ID, "rw")
	a.ok("extension", map[string]any{"action": "list", "refresh": true})
	stamp := map[string]any{"action": stampTool, "arguments": map[string]any{"id": doc, "value": "x"}, "confirm": true}

	// Reference is r (the default): the effect is refused, the read runs.
	e := a.fails("extension", stamp, "permission_denied")
	body := e["error"].(map[string]any)
	if body["notebook"] != other.ID || body["permission"] != "r" || body["requiredPermission"] != "rw" ||
		!strings.Contains(body["message"].(string), "rw on every notebook") || e["writeAttempted"] != false {
		t.Fatalf("stamp with a read-only notebook: %v", e)
	}
	if attrs, _ := c.GetBlockAttrs(ctx, doc); attrs["custom-sisyphus-stamp"] != "" {
		t.Fatalf("a refused stamp ran: %v", attrs)
	}
	a.ok("extension", map[string]any{"action": wordCount, "arguments": map[string]any{"id": doc}})

	s.config(t, "permission", other.ID, "rw")
	a.ok("extension", stamp)

	// Hidden: every forward refused, naming no notebook.
	s.config(t, "permission", other.ID, "none")
	for _, args := range []map[string]any{stamp, {"action": wordCount, "arguments": map[string]any{"id": doc}}} {
		m := a.fails("extension", args, "permission_denied")
		if b := fmt.Sprint(m); strings.Contains(b, other.ID) || strings.Contains(b, "Reference") || !strings.Contains(b, "hidden") {
			t.Errorf("%v while a notebook is hidden: %v", args["action"], m)
		}
	}
}
