package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sisyphus-go/sisyphus/internal/mascotstore"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/testvars"
)

const mimeApp = "text/html;profile=mcp-app"

// appTools are the MCP Apps' tools this build serves.
// upstreamAppTools are the upstream Sisyphus's App tools as a client that
// declares the extension gets them (every App action on), measured with
// scripts/tools-list-size on upstream commit 88b0f38.
var upstreamAppTools = map[string]int{"flashcard_review_session": 2718, "flashcard_review_app_action": 1444, "timeline_app": 1556,
	"timeline_app_action": 2553, "mascot_shop_app": 752, "mascot_shop_app_action": 873}

var appTools = []string{"flashcard_review_session", "flashcard_review_app_action", "timeline_app", "timeline_app_action", "mascot_shop_app", "mascot_shop_app_action"}

// connectApps connects a client that renders MCP Apps: it declares the
// io.modelcontextprotocol/ui extension with the HTML profile.
func connectApps(t *testing.T, url, era string) *agent {
	caps := &sdk.ClientCapabilities{}
	caps.AddExtension("io.modelcontextprotocol/ui", map[string]any{"mimeTypes": []string{mimeApp}})
	return connectWith(t, url, era, "apps-host", &sdk.ClientOptions{Capabilities: caps})
}

// listed are a client's tools and resources by name and URI.
func listed(t *testing.T, a *agent) (map[string]*sdk.Tool, map[string]*sdk.Resource) {
	t.Helper()
	ctx := context.Background()
	tl, err := a.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	rl, err := a.cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools, res := map[string]*sdk.Tool{}, map[string]*sdk.Resource{}
	for _, x := range tl.Tools {
		tools[x.Name] = x
	}
	for _, x := range rl.Resources {
		res[x.URI] = x
	}
	return tools, res
}

// appWrite runs a strict write as a view does: the preflight, then the
// commit with what the preflight's nextCall adds; it returns the commit's
// arguments and answer.
func appWrite(a *agent, tool string, args map[string]any) (commit, res map[string]any, isErr bool) {
	a.t.Helper()
	pre := a.ok(tool, with(args, "validateOnly", true))
	next, _ := pre["nextCall"].(map[string]any)
	add, _ := next["add"].(map[string]any)
	if add["requestId"] == nil {
		a.t.Fatalf("%s %v: the preflight's nextCall adds no requestId: %v", tool, args, pre)
	}
	commit = with(args)
	for k, v := range add {
		commit[k] = v
	}
	res, isErr = a.call(tool, commit)
	return commit, res, isErr
}

// cardState reads a card's schedule from the kernel.
func cardState(t *testing.T, c *siyuan.Client, deck, block string) siyuan.RiffCardState {
	t.Helper()
	page, err := c.GetRiffCards(context.Background(), deck, 1, 50)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range page.Blocks {
		if b.ID == block {
			st, err := siyuan.CardState(b)
			if err != nil || st == nil {
				t.Fatalf("card of %s: %v", block, err)
			}
			return *st
		}
	}
	t.Fatalf("no card of %s in deck %s", block, deck)
	return siyuan.RiffCardState{}
}

// TestAppsThroughTheBinary: the MCP Apps through the binary in both eras.
// A client that declares the extension gets the launchers (model-visible,
// with their view) and the app-only action tools, and the ui:// views
// with their CSP; one that does not gets none of them, cannot call them
// nor read a view. Each App action runs as its tool action does: a review
// is a strict write (preflight, commit, replay, stale), the gate refuses
// a notebook it may not write or see, a dangerous action asks
// confirmation, and the App's switches and the tool's own refuse it.
func TestAppsThroughTheBinary(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	c := kernelClient(t, k.url, "tok")
	ctx := context.Background()
	if _, err := c.RepoTagSnapshots(ctx); errors.Is(err, siyuan.ErrRepoKeyMissing) {
		if _, err := c.InitRepoKey(ctx); err != nil {
			t.Fatal(err)
		}
	}
	s := startServeWith(t, "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", t.TempDir())
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(era, func(t *testing.T) { appsFlow(t, s, c, era, false) })
	}
}

// TestAppsLive runs the same walk against a real SiYuan 3.7.3 when
// SISYPHUS_LIVE_SIYUAN_URL and SISYPHUS_LIVE_SIYUAN_TOKEN are set, in a
// notebook, a deck and a timeline tag it makes and removes (SiYuan keeps
// the snapshot). The shop's walk writes the person's mascot files: they
// are saved first and put back.
func TestAppsLive(t *testing.T) {
	url, tok := testvars.Live(t)
	k := kernelClient(t, url, tok)
	keepMascotBooks(t, k)
	s := startServeWith(t, "--siyuan-url", url, "--siyuan-token", tok, "--state-dir", t.TempDir())
	appsFlow(t, s, k, "2025-11-25", true)
}

// appsFlow walks the Apps in one era; live, it removes the notebook it made.
func appsFlow(t *testing.T, s *serveProc, c *siyuan.Client, era string, live bool) {
	ctx := context.Background()
	plain, ui := connect(t, s.url, era), connectApps(t, s.url, era)

	// A client that does not render Apps sees none of them.
	tools, res := listed(t, plain)
	for _, n := range appTools {
		if tools[n] != nil {
			t.Fatalf("%s listed to a client without the extension", n)
		}
	}
	for u := range res {
		if strings.HasPrefix(u, "ui://") {
			t.Fatalf("view %s listed to a client without the extension", u)
		}
	}
	if _, err := plain.cs.CallTool(ctx, &sdk.CallToolParams{Name: "timeline_app", Arguments: map[string]any{}}); err == nil {
		t.Fatal("a client without the extension called a launcher")
	}
	if _, err := plain.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "ui://siyuan-sisyphus/timeline"}); err == nil {
		t.Fatal("a client without the extension read a view")
	}
	if _, err := plain.cs.CallTool(ctx, &sdk.CallToolParams{Name: "mascot_shop_app_action", Arguments: map[string]any{"action": "get_balance"}}); err == nil {
		t.Fatal("a client without the extension called an App action")
	}

	// One that does sees them, with their _meta.
	tools, res = listed(t, ui)
	for _, n := range appTools {
		if tools[n] == nil {
			t.Fatalf("%s not listed to a client with the extension", n)
		}
	}
	for name, want := range map[string]string{
		"flashcard_review_session":    `{"resourceUri":"ui://siyuan-sisyphus/flashcard","visibility":["model"]}`,
		"flashcard_review_app_action": `{"resourceUri":"ui://siyuan-sisyphus/flashcard","visibility":["app"]}`,
		"timeline_app":                `{"resourceUri":"ui://siyuan-sisyphus/timeline","visibility":["model"]}`,
		"mascot_shop_app":             `{"resourceUri":"ui://siyuan-sisyphus/shop","visibility":["model"]}`,
		"mascot_shop_app_action":      `{"resourceUri":"ui://siyuan-sisyphus/shop","visibility":["app"]}`,
	} {
		if got, _ := json.Marshal(tools[name].Meta["ui"]); string(got) != want {
			t.Errorf("%s _meta.ui: %s", name, got)
		}
	}
	for _, u := range []string{"ui://siyuan-sisyphus/flashcard", "ui://siyuan-sisyphus/timeline", "ui://siyuan-sisyphus/shop"} {
		r := res[u]
		if r == nil || r.MIMEType != mimeApp {
			t.Fatalf("view %s: %+v", u, r)
		}
		if csp, _ := json.Marshal(r.Meta["ui"].(map[string]any)["csp"]); string(csp) != `{"baseUriDomains":[],"connectDomains":[],"frameDomains":[],"resourceDomains":[]}` {
			t.Errorf("%s csp: %s", u, csp)
		}
		rr, err := ui.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: u})
		if err != nil {
			t.Fatal(err)
		}
		if ct := rr.Contents[0]; ct.MIMEType != mimeApp || !strings.HasPrefix(ct.Text, "<!doctype html>") || ct.Meta["ui"] == nil {
			t.Errorf("read %s: %s %q", u, ct.MIMEType, ct.Text[:min(40, len(ct.Text))])
		}
	}

	// A card to review.
	name := fmt.Sprintf("apps-%d", time.Now().UnixNano())
	nb := ui.strictDo("notebook", map[string]any{"action": "create", "name": name})["notebook"].(string)
	s.config(t, "permission", nb, "rwd")
	if live {
		// Last of the cleanups: after the deck and the tag are gone.
		t.Cleanup(func() {
			s.config(t, "permission", nb, "rwd")
			s.config(t, "enable", "notebook.remove")
			defer s.config(t, "disable", "notebook.remove")
			ui.strictDo("notebook", map[string]any{"action": "remove", "notebook": nb, "confirm": true})
		})
	}
	doc := ui.strictDo("document", map[string]any{"action": "create", "notebook": nb, "path": "/Cards",
		"markdown": "## What schedules SiYuan's cards?\n\nFSRS does."})["id"].(string)
	head := ui.ok("block", map[string]any{"action": "get_children", "id": doc})["data"].([]any)[0].(map[string]any)["id"].(string)
	deck, err := c.CreateRiffDeck(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.RemoveRiffDeck(context.Background(), deck.ID) })
	ui.strictDo("flashcard", map[string]any{"action": "create_card", "deckID": deck.ID, "blockIDs": []string{head}})

	// The launcher hands the view the deck's due cards; the model a count.
	sess := ui.ok("flashcard_review_session", map[string]any{"deckID": deck.ID})
	cards, _ := sess["cards"].([]any)
	if len(cards) != 1 || fmt.Sprint(sess["appActions"]) != "[review_card]" {
		t.Fatalf("review session: %v", sess)
	}
	card := cards[0].(map[string]any)
	if card["front"] != "What schedules SiYuan's cards?" || card["back"] != "FSRS does." {
		t.Fatalf("card: %v", card)
	}
	cardID := card["cardID"].(string)
	// Upstream's form: the model picks the cards from list_cards.
	picked := ui.ok("flashcard_review_session", map[string]any{"candidateToken": "2f1c0a52-8f0e-4e43-9a55-3f6f9c1c2b11",
		"cards": []map[string]any{{"deckID": deck.ID, "cardID": cardID}}, "selectionReason": "the only due card"})
	if p, _ := picked["cards"].([]any); len(p) != 1 || p[0].(map[string]any)["cardID"] != cardID {
		t.Fatalf("review session of the chosen cards: %v", picked)
	}

	// A rating: preflight, commit (the kernel's card moves), replay.
	before := cardState(t, c, deck.ID, head)
	review := map[string]any{"action": "review_card", "deckID": deck.ID, "cardID": cardID, "rating": 3}
	commit, done, isErr := appWrite(ui, "flashcard_review_app_action", review)
	got, _ := ui.call("flashcard_review_app_action", commit) // the replay
	after := cardState(t, c, deck.ID, head)
	if isErr || done["status"] != "committed" || got["replayed"] != true || after.Reps != before.Reps+1 || after.Due == before.Due {
		t.Fatalf("review: %v, replay %v; card %+v → %+v", done, got, before, after)
	}
	// A stale one: the card moved after the preflight.
	pre := ui.ok("flashcard_review_app_action", with(review, "validateOnly", true))
	if err := c.ReviewRiffCard(ctx, deck.ID, cardID, 1, nil); err != nil {
		t.Fatal(err)
	}
	ui.fails("flashcard_review_app_action", commitOf(review, pre), "state_changed")

	// The gate, as for the tool's own call.
	s.config(t, "permission", nb, "r")
	ui.fails("flashcard_review_app_action", with(review, "validateOnly", true), "permission_denied")
	s.config(t, "permission", nb, "none")
	if m := ui.ok("flashcard_review_session", map[string]any{"deckID": deck.ID}); len(m["cards"].([]any)) != 0 {
		t.Fatalf("a hidden notebook's card in a session: %v", m)
	}
	if m, isErr := ui.call("flashcard_review_session", map[string]any{"deck": deck.ID}); !isErr || errCodeOf(m) != "invalid_arguments" {
		t.Fatalf("a launcher's unknown argument: %v", m)
	}
	if m, isErr := ui.call("timeline_app", map[string]any{"documentId": doc}); !isErr || !slices.Contains([]string{"not_found", "permission_denied"}, errCodeOf(m)) {
		t.Fatalf("timeline of a hidden document: %v", m)
	}
	s.config(t, "permission", nb, "rwd")

	// The timeline: a node made through the App, listed by the launcher.
	tl := ui.ok("timeline_app", map[string]any{"documentId": doc})
	if fmt.Sprint(tl["appActions"]) != "[list_nodes create_node compare_node]" || tl["documentId"] != doc {
		t.Fatalf("timeline_app (destructive actions off by default): %v", tl)
	}
	create := map[string]any{"action": "create_node", "name": "App node " + era, "scope": "document", "documentId": doc}
	if _, done, isErr = appWrite(ui, "timeline_app_action", create); isErr || done["status"] != "committed" {
		t.Fatalf("create_node through the App: %v", done)
	}
	nodes := ui.ok("timeline_app_action", map[string]any{"action": "list_nodes", "scope": "document", "documentId": doc})["nodes"].([]any)
	tag := ""
	for _, n := range nodes {
		if m := n.(map[string]any); m["name"] == "App node "+era {
			tag = m["tag"].(string)
		}
	}
	if tag == "" || len(timelineTags(t, c, tag)) != 1 {
		t.Fatalf("the node is not in the repository: %v", nodes)
	}
	t.Cleanup(func() { c.RemoveRepoTagSnapshot(context.Background(), tag) })
	if cmp := ui.ok("timeline_app", map[string]any{"documentId": doc, "tag": tag})["comparison"].(map[string]any); cmp["noChanges"] != true {
		t.Fatalf("timeline_app with tag: %v", cmp)
	}

	// A dangerous action: off in the tool (the gate says so), then on
	// and asking the person (this client shows no forms: confirm).
	del := map[string]any{"action": "delete_node", "tag": tag, "documentId": doc}
	ui.fails("timeline_app_action", with(del, "validateOnly", true), "action_disabled")
	s.config(t, "enable", "timeline.delete_node")
	defer s.config(t, "disable", "timeline.delete_node")
	pre = ui.ok("timeline_app_action", with(del, "validateOnly", true))
	if m, isErr := ui.call("timeline_app_action", commitOf(del, pre)); !isErr || errCodeOf(m) != "confirmation_required" {
		t.Fatalf("unconfirmed delete_node: %v", m)
	}

	// The App's switches: one action, then the whole App.
	s.config(t, "app", "timeline.delete_node", "off")
	defer s.config(t, "app", "timeline.delete_node", "on")
	if m, isErr := ui.call("timeline_app_action", with(del, "validateOnly", true)); !isErr || errCodeOf(m) != "action_disabled" || !strings.Contains(fmt.Sprint(m), "mcpApps.timeline.actions.delete_node") {
		t.Fatalf("a switched-off App action: %v", m)
	}
	// A legacy session hears the switch as list changes (its GET stream).
	var toolsChanged, resChanged chan struct{}
	if era == "2025-11-25" {
		toolsChanged, resChanged = make(chan struct{}, 16), make(chan struct{}, 16)
		caps := &sdk.ClientCapabilities{}
		caps.AddExtension("io.modelcontextprotocol/ui", map[string]any{"mimeTypes": []string{mimeApp}})
		w := connectWith(t, s.url, era, "apps-watcher", &sdk.ClientOptions{Capabilities: caps,
			ToolListChangedHandler:     func(context.Context, *sdk.ToolListChangedRequest) { toolsChanged <- struct{}{} },
			ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) { resChanged <- struct{}{} }})
		listed(t, w) // the session is open and its stream listening
	}
	s.config(t, "app", "timeline", "off")
	defer s.config(t, "app", "timeline", "on")
	if toolsChanged != nil {
		for what, ch := range map[string]chan struct{}{"tools": toolsChanged, "resources": resChanged} {
			select {
			case <-ch:
			case <-time.After(10 * time.Second):
				t.Fatalf("no %s list_changed after the App was switched off", what)
			}
		}
	}
	if out := s.config(t, "show"); !regexp.MustCompile(`(?m)^\s+timeline\s+false\s+delete_node\s`).MatchString(out) {
		t.Errorf("config show does not say the App is off:\n%s", out)
	}
	tools, res = listed(t, ui)
	if tools["timeline_app"] != nil || tools["timeline_app_action"] != nil || res["ui://siyuan-sisyphus/timeline"] != nil || tools["flashcard_review_session"] == nil {
		t.Fatalf("a switched-off App is still offered: %v", res)
	}
	if m, isErr := ui.call("timeline_app", map[string]any{"documentId": doc}); !isErr || errCodeOf(m) != "action_disabled" {
		t.Fatalf("a switched-off App's launcher: %v", m)
	}
	s.config(t, "app", "timeline", "on")
	if tools, _ = listed(t, ui); tools["timeline_app"] == nil {
		t.Fatal("the App switched back on is not offered")
	}

	shopFlow(t, s, c, ui)
}

// shopFlow walks the mascot shop App: the launcher hands the view the
// balance and the shop; a purchase is a strict write of mascot's buy
// (preflight, commit, replay), its coins spent in the workspace's
// puppyStats.json; a short balance is refused at the preflight and again
// at the commit, nothing spent; the App's switches and the tool's refuse
// buying. It writes puppyStats.json: live, the caller keeps the person's.
func shopFlow(t *testing.T, s *serveProc, c *siyuan.Client, ui *agent) {
	ctx := context.Background()
	put := func(body string) {
		t.Helper()
		if err := c.PutFile(ctx, siyuan.PutFileRequest{Path: mascotstore.StatsPath, Body: strings.NewReader(body)}); err != nil {
			t.Fatal(err)
		}
	}
	stats := func() mascotstore.Stats {
		t.Helper()
		b, _ := readWorkspaceFile(t, c, mascotstore.StatsPath)
		st, err := mascotstore.ParseStats(b)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	balance := func() float64 {
		t.Helper()
		return ui.ok("mascot_shop_app_action", map[string]any{"action": "get_balance"})["balance"].(float64)
	}

	put(`{"totalCalls":50,"balance":10,"updatedAt":1}`)
	open := ui.ok("mascot_shop_app", map[string]any{})
	items, _ := open["items"].([]any)
	if open["app"] != "mascotShop" || open["balance"] != float64(10) || open["totalEarned"] != float64(50) || len(items) != 7 ||
		fmt.Sprint(open["appActions"]) != "[get_balance shop buy]" {
		t.Fatalf("mascot_shop_app: %v", open)
	}
	if m, isErr := ui.call("mascot_shop_app", map[string]any{"item_id": "milk"}); !isErr || errCodeOf(m) != "invalid_arguments" {
		t.Fatalf("the shop launcher took an argument: %v", m)
	}

	// A purchase, as the view makes it; its replay spends nothing more.
	buy := map[string]any{"action": "buy", "item_id": "cheese"}
	commit, done, isErr := appWrite(ui, "mascot_shop_app_action", buy)
	if isErr || done["status"] != "committed" || done["item_id"] != "cheese" || done["cost"] != float64(4) || done["balance"] != float64(6) {
		t.Fatalf("buy through the App: %v", done)
	}
	if st := stats(); st.Balance != 6 || st.Spent != 4 || st.LastPurchase == nil || st.LastPurchase.ItemID != "cheese" || st.TotalCalls != 50 {
		t.Fatalf("puppyStats.json after the purchase: %+v", st)
	}
	if rep, _ := ui.call("mascot_shop_app_action", commit); rep["replayed"] != true || balance() != 6 {
		t.Fatalf("the replay: %v", rep)
	}
	// Nothing is owned: the same item again.
	if _, done, isErr = appWrite(ui, "mascot_shop_app_action", buy); isErr || done["balance"] != float64(2) {
		t.Fatalf("cheese bought again: %v", done)
	}

	// Refusals: short at the preflight; short at the commit (the balance
	// fell after the preflight); an item the shop does not sell.
	e := ui.fails("mascot_shop_app_action", map[string]any{"action": "buy", "item_id": "chicken-leg", "validateOnly": true}, "insufficient_balance")
	if d, _ := e["error"].(map[string]any); d["need"] != float64(7) || d["have"] != float64(2) {
		t.Fatalf("insufficient at the preflight: %v", e)
	}
	put(`{"totalCalls":50,"balance":10,"updatedAt":1}`)
	milk := map[string]any{"action": "buy", "item_id": "milk"}
	pre := ui.ok("mascot_shop_app_action", with(milk, "validateOnly", true))
	put(`{"totalCalls":50,"balance":1,"updatedAt":1}`)
	ui.fails("mascot_shop_app_action", commitOf(milk, pre), "insufficient_balance")
	if st := stats(); st.Balance != 1 || st.Spent != 0 || st.LastPurchase != nil {
		t.Fatalf("a refused commit spent: %+v", st)
	}
	ui.fails("mascot_shop_app_action", map[string]any{"action": "buy", "item_id": "caviar", "validateOnly": true}, "not_found")

	// The switches: the App's buy, the tool's buy, the whole App.
	put(`{"totalCalls":50,"balance":10,"updatedAt":1}`)
	s.config(t, "app", "mascotShop.buy", "off")
	if m, isErr := ui.call("mascot_shop_app_action", with(milk, "validateOnly", true)); !isErr || errCodeOf(m) != "action_disabled" || !strings.Contains(fmt.Sprint(m), "mcpApps.mascotShop.actions.buy") {
		t.Fatalf("the App's buy switched off: %v", m)
	}
	if open = ui.ok("mascot_shop_app", map[string]any{}); fmt.Sprint(open["appActions"]) != "[get_balance shop]" {
		t.Fatalf("the view is offered buy while it is off: %v", open)
	}
	s.config(t, "app", "mascotShop.buy", "on")
	s.config(t, "disable", "mascot.buy")
	ui.fails("mascot_shop_app_action", with(milk, "validateOnly", true), "action_disabled")
	if open = ui.ok("mascot_shop_app", map[string]any{}); fmt.Sprint(open["appActions"]) != "[get_balance shop]" {
		t.Fatalf("the view is offered buy while the tool's is off: %v", open)
	}
	s.config(t, "enable", "mascot.buy")
	if out := s.config(t, "show"); !regexp.MustCompile(`(?m)^\s+mascotShop\s+true\s+-\s+-$`).MatchString(out) {
		t.Errorf("config show does not list the shop as served and on:\n%s", out)
	}
	s.config(t, "app", "mascotShop", "off")
	tools, res := listed(t, ui)
	if tools["mascot_shop_app"] != nil || tools["mascot_shop_app_action"] != nil || res["ui://siyuan-sisyphus/shop"] != nil {
		t.Fatal("the shop switched off is still offered")
	}
	if m, isErr := ui.call("mascot_shop_app", map[string]any{}); !isErr || errCodeOf(m) != "action_disabled" {
		t.Fatalf("the shop switched off opened: %v", m)
	}
	s.config(t, "app", "mascotShop", "on")
	if st := stats(); st.Balance != 10 || st.Spent != 0 {
		t.Fatalf("something was bought while buying was off: %+v", st)
	}
}

// TestAppsToolsListSize measures the tools/list answer of a legacy session
// that does not render Apps and of one that does (default configuration):
// the first carries no App tool; the second adds the three Apps' six
// tools, kept short (their descriptions are a sentence or two, the action
// tools' schema an enum of its actions). The figures are in BENCHMARKS.md.
func TestAppsToolsListSize(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	s := startServeWith(t, "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", t.TempDir())
	list := func(caps map[string]any) ([]byte, map[string]int) {
		m := &rawMCP{t: t, url: s.url, hc: &http.Client{}}
		m.rpc("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": caps, "clientInfo": map[string]any{"name": "size", "version": "1"}})
		m.post(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
		m.next++
		raw := m.post(map[string]any{"jsonrpc": "2.0", "id": m.next, "method": "tools/list"})
		var env struct {
			Result struct {
				Tools []json.RawMessage `json:"tools"`
			} `json:"result"`
		}
		if err := json.Unmarshal(raw, &env); err != nil {
			t.Fatalf("%v: %.200s", err, raw)
		}
		per := map[string]int{}
		for _, tl := range env.Result.Tools {
			var head struct {
				Name string `json:"name"`
			}
			json.Unmarshal(tl, &head)
			per[head.Name] = len(tl)
		}
		return raw, per
	}
	plain, plainPer := list(map[string]any{})
	apps, appsPer := list(map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/ui": map[string]any{"mimeTypes": []string{mimeApp}}}})
	added := 0
	for _, n := range appTools {
		if plainPer[n] != 0 || appsPer[n] == 0 {
			t.Fatalf("%s: %d bytes without the extension, %d with", n, plainPer[n], appsPer[n])
		}
		added += appsPer[n]
		t.Logf("  %-28s %5d bytes", n, appsPer[n])
	}
	t.Logf("tools/list: %d bytes without the extension, %d with (+%d; the %d App tools %d)", len(plain), len(apps), len(apps)-len(plain), len(appTools), added)
	for n, up := range upstreamAppTools {
		if appsPer[n] > up {
			t.Errorf("%s is %d bytes in tools/list, upstream's %d", n, appsPer[n], up)
		}
	}
	if len(apps)-len(plain) > 4000 {
		t.Errorf("the App tools add %d bytes to tools/list, more than 4,000", len(apps)-len(plain))
	}
}
