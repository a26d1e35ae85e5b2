package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sisyphus-go/sisyphus/internal/mascotstore"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/testvars"
)

// testHostPage is a minimal MCP Apps host, as a web host would be: it puts
// a view (read by the test through resources/read from the binary) in a
// sandboxed iframe (scripts only: an opaque origin, no network by its
// CSP), answers ui/initialize with its host context, sends the launcher's
// tool input and result once the view says it is initialized, and relays
// the view's tools/call of its App's tools to the test, which calls the
// binary over HTTP MCP. It answers nothing else.
const testHostPage = `<!doctype html><html><head><meta charset="utf-8"><title>test host</title></head><body>
<script>
window.__log = [];
(async () => {
  const app = new URLSearchParams(location.search).get('app');
  const boot = await (await fetch('/boot?app=' + app)).json();
  const f = document.createElement('iframe');
  f.setAttribute('sandbox', 'allow-scripts');
  f.style.cssText = 'width:900px;height:1200px;border:1px solid #888';
  const csp = '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; script-src \'unsafe-inline\'; style-src \'unsafe-inline\'; img-src data:; connect-src \'none\'; frame-src \'none\'; base-uri \'none\'; form-action \'none\'">';
  f.srcdoc = boot.html.replace('<head>', '<head>' + csp);
  const send = (method, params) => f.contentWindow.postMessage({ jsonrpc: '2.0', method, params }, '*');
  window.addEventListener('message', async (ev) => {
    if (ev.source !== f.contentWindow) return;
    const m = ev.data;
    window.__log.push(m.method || 'reply');
    const reply = (result) => f.contentWindow.postMessage({ jsonrpc: '2.0', id: m.id, result }, '*');
    switch (m.method) {
      case 'ui/initialize':
        reply({ protocolVersion: m.params.protocolVersion, hostInfo: { name: 'sisyphus-test-host', version: '1' },
          hostCapabilities: { serverTools: {} }, hostContext: { theme: 'light', displayMode: 'inline', platform: 'web' } });
        return;
      case 'ui/notifications/initialized':
        send('ui/notifications/tool-input', { arguments: boot.input });
        send('ui/notifications/tool-result', boot.result);
        return;
      case 'tools/call': {
        if (!boot.appTools.includes(m.params.name)) {
          f.contentWindow.postMessage({ jsonrpc: '2.0', id: m.id, error: { code: -32602, message: 'not a tool of this App' } }, '*');
          return;
        }
        const r = await fetch('/call', { method: 'POST', body: JSON.stringify(m.params) });
        reply(await r.json());
        return;
      }
    }
  });
  document.body.appendChild(f);
})();
</script></body></html>`

// hostBoot is what the test host hands a view: its HTML, the launcher's
// arguments and result, and the tools the view may call.
type hostBoot struct {
	HTML     string              `json:"html"`
	Input    map[string]any      `json:"input"`
	Result   *sdk.CallToolResult `json:"result"`
	AppTools []string            `json:"appTools"`
}

// TestAppsInBrowser drives the three Apps in headless Chromium through the
// test host above, against the built binary: a flashcard review (reveal,
// Good; the card's schedule moves in the kernel), a timeline (a node
// created, then compared with the document changed behind it) and the
// mascot shop (an item bought, the coins spent on file; a refusal
// explained). Without
// Chromium it skips, or fails under SISYPHUS_REQUIRE_BROWSER=1 (CI).
func TestAppsInBrowser(t *testing.T) {
	exe := testvars.Browser(t)
	k := startKernel(t, t.TempDir())
	c := kernelClient(t, k.url, "tok")
	ctx := context.Background()
	if _, err := c.RepoTagSnapshots(ctx); errors.Is(err, siyuan.ErrRepoKeyMissing) {
		if _, err := c.InitRepoKey(ctx); err != nil {
			t.Fatal(err)
		}
	}
	s := startServeWith(t, "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", t.TempDir())
	ui := connectApps(t, s.url, "2026-07-28")

	nb := ui.strictDo("notebook", map[string]any{"action": "create", "name": "Browser apps"})["notebook"].(string)
	s.config(t, "permission", nb, "rwd")
	doc := ui.strictDo("document", map[string]any{"action": "create", "notebook": nb, "path": "/Cards",
		"markdown": "first paragraph\n\n## Which bird is a kiwi?\n\nA flightless bird of New Zealand."})["id"].(string)
	kids := ui.ok("block", map[string]any{"action": "get_children", "id": doc})["data"].([]any)
	first, head := kids[0].(map[string]any)["id"].(string), kids[1].(map[string]any)["id"].(string)
	deck, err := c.CreateRiffDeck(ctx, "browser-apps")
	if err != nil {
		t.Fatal(err)
	}
	ui.strictDo("flashcard", map[string]any{"action": "create_card", "deckID": deck.ID, "blockIDs": []string{head}})

	// The host's server: the boot of each App, and the relay.
	var mu sync.Mutex
	boots := map[string]hostBoot{}
	launch := func(app, view, launcher, actionTool string, input map[string]any) {
		t.Helper()
		res, err := ui.cs.CallTool(ctx, &sdk.CallToolParams{Name: launcher, Arguments: input})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %v", launcher, err, res)
		}
		rr, err := ui.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: view})
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		boots[app] = hostBoot{HTML: rr.Contents[0].Text, Input: input, Result: res, AppTools: []string{actionTool}}
		mu.Unlock()
	}
	host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/host":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, testHostPage)
		case "/boot":
			mu.Lock()
			b := boots[r.URL.Query().Get("app")]
			mu.Unlock()
			json.NewEncoder(w).Encode(b)
		case "/call":
			var p sdk.CallToolParams
			if err := json.NewDecoder(r.Body).Decode(&p); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			res, err := ui.cs.CallTool(r.Context(), &p)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			json.NewEncoder(w).Encode(res)
		default:
			http.NotFound(w, r)
		}
	}))
	defer host.Close()

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-dev-shm-usage", true),
		// The view's frame in the page's process, where a query from the
		// iframe's node reaches its document.
		chromedp.Flag("disable-features", "IsolateSandboxedIframes"), chromedp.Flag("disable-site-isolation-trials", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	bctx, cancelT := context.WithTimeout(bctx, 120*time.Second)
	defer cancelT()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// open loads the host with an App and returns the view's frame node.
	open := func(app string) *chromedp.Node {
		t.Helper()
		must(chromedp.Do(bctx, chromedp.Navigate(host.URL+"/host?app="+app), chromedp.WaitReady(chromedp.CSS("iframe"))))
		nodes, err := chromedp.Run(bctx, chromedp.Nodes(chromedp.CSS("iframe")))
		must(err)
		return nodes[0]
	}
	in := func(frame *chromedp.Node) chromedp.QueryOption { return chromedp.FromNode(frame) }
	text := func(frame *chromedp.Node, sel string) string {
		t.Helper()
		must(chromedp.Do(bctx, chromedp.WaitVisible(chromedp.CSS(sel), in(frame))))
		v, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS(sel), in(frame)))
		must(err)
		return v
	}
	click := func(frame *chromedp.Node, sel string) {
		t.Helper()
		must(chromedp.Do(bctx, chromedp.WaitVisible(chromedp.CSS(sel), in(frame)), chromedp.Click(chromedp.CSS(sel), in(frame))))
	}

	// The flashcard review: reveal, Good.
	launch("flashcard", "ui://siyuan-sisyphus/flashcard", "flashcard_review_session", "flashcard_review_app_action", map[string]any{"deckID": deck.ID})
	before := cardState(t, c, deck.ID, head)
	f := open("flashcard")
	if got := text(f, ".front"); got != "Which bird is a kiwi?" {
		t.Fatalf("the card's front: %q", got)
	}
	click(f, `button[data-do="reveal"]`)
	if got := text(f, `[data-role="answer"]`); got != "A flightless bird of New Zealand." {
		t.Fatalf("the answer: %q", got)
	}
	click(f, `button[data-rating="3"]`)
	if got := text(f, `[data-view="finished"]`); !strings.Contains(got, "1 of 1") {
		t.Fatalf("after rating: %q", got)
	}
	if n := text(f, `[data-role="notice"]`); !strings.Contains(n, "Saved: good") {
		t.Fatalf("the notice: %q", n)
	}
	after := cardState(t, c, deck.ID, head)
	if after.Reps != before.Reps+1 || after.Due == before.Due || after.LastReview == before.LastReview {
		t.Fatalf("the card in the kernel: %+v → %+v", before, after)
	}
	log, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`window.__log`))
	must(err)
	if len(log) < 3 || log[0] != "ui/initialize" || log[1] != "ui/notifications/initialized" {
		t.Fatalf("the handshake: %v", log)
	}

	// The timeline: a node, then a comparison with a change made behind it.
	launch("timeline", "ui://siyuan-sisyphus/timeline", "timeline_app", "timeline_app_action", map[string]any{"documentId": doc})
	f = open("timeline")
	text(f, `[data-view="no-nodes"]`)
	click(f, `input[name="name"]`)
	must(chromedp.Do(bctx, chromedp.SendKeys(chromedp.CSS(`input[name="name"]`), "Before kiwi edit", in(f))))
	if v, err := chromedp.Run(bctx, chromedp.Value(chromedp.CSS(`input[name="name"]`), in(f))); err != nil || v != "Before kiwi edit" {
		t.Fatalf("the name typed: %q %v", v, err)
	}
	click(f, `button[data-do="create"]`)
	if n := text(f, `[data-role="notice"]`); !strings.Contains(n, "created") {
		t.Fatalf("after create: %q", n)
	}
	tag := "sisyphustimeline_" + doc + "_Beforekiwiedit"
	t.Cleanup(func() { c.RemoveRepoTagSnapshot(context.Background(), tag) })
	if got := timelineTags(t, c, tag); len(got) != 1 {
		t.Fatalf("the node in the repository: %v", got)
	}
	if _, err := c.UpdateBlock(ctx, first, "markdown", "FIRST paragraph"); err != nil {
		t.Fatal(err)
	}
	must(c.FlushTransaction(ctx))
	click(f, `li.node[data-tag="`+tag+`"] button[data-do="compare"]`)
	mod := text(f, `[data-view="comparison"] li.change[data-status="modified"]`)
	if !strings.Contains(mod, "first paragraph") || !strings.Contains(mod, "FIRST paragraph") {
		t.Fatalf("the modified block: %q", mod)
	}
	// Rollbacks are off by default: the view offers none.
	if n, err := chromedp.Run(bctx, chromedp.Nodes(chromedp.CSSAll(`button.danger`), in(f), chromedp.AtLeast(0))); err != nil || len(n) != 0 {
		t.Fatalf("dangerous buttons shown while off: %d %v", len(n), err)
	}

	// Switched on, a block's rollback runs only on the person's second
	// click, and the kernel's block is back as it was in the node.
	s.config(t, "enable", "timeline.rollback_block")
	launch("timeline", "ui://siyuan-sisyphus/timeline", "timeline_app", "timeline_app_action", map[string]any{"documentId": doc, "tag": tag})
	f = open("timeline")
	undo := `[data-view="comparison"] li.change[data-status="modified"] button[data-do="rollback-block"]`
	click(f, undo)
	if n := text(f, `[data-role="notice"]`); !strings.Contains(n, "Click again") || kramdownOf(t, c, first) != "FIRST paragraph" {
		t.Fatalf("after one click: %q, block %q", n, kramdownOf(t, c, first))
	}
	click(f, undo)
	if n := text(f, `[data-role="notice"].ok`); !strings.Contains(n, "taken back") {
		t.Fatalf("after the confirmation: %q", n)
	}
	if got := kramdownOf(t, c, first); got != "first paragraph" {
		t.Fatalf("the block after its rollback: %q", got)
	}

	// The mascot shop: milk bought (preflight and commit through the
	// host), the coins spent in puppyStats.json and the balance shown
	// again; then a purchase the balance, fallen behind the view's back,
	// no longer covers, explained to the person.
	put := func(body string) {
		t.Helper()
		must(c.PutFile(ctx, siyuan.PutFileRequest{Path: mascotstore.StatsPath, Body: strings.NewReader(body)}))
	}
	stats := func() mascotstore.Stats {
		t.Helper()
		b, _ := readWorkspaceFile(t, c, mascotstore.StatsPath)
		st, err := mascotstore.ParseStats(b)
		must(err)
		return st
	}
	put(`{"totalCalls":30,"balance":10,"updatedAt":1}`)
	launch("shop", "ui://siyuan-sisyphus/shop", "mascot_shop_app", "mascot_shop_app_action", map[string]any{})
	f = open("shop")
	if got := text(f, `[data-role="balance"]`); got != "10" {
		t.Fatalf("the balance shown: %q", got)
	}
	if got := text(f, `li.item[data-item="milk"]`); !strings.Contains(got, "Milk") || !strings.Contains(got, "3 coins") {
		t.Fatalf("the milk on sale: %q", got)
	}
	click(f, `button[data-do="buy"][data-item="milk"]`)
	if n := text(f, `[data-role="notice"].ok`); !strings.Contains(n, "Bought 🥛 Milk for 3 coins") {
		t.Fatalf("after buying milk: %q", n)
	}
	if got := text(f, `[data-role="balance"]`); got != "7" {
		t.Fatalf("the balance shown after buying milk: %q", got)
	}
	if st := stats(); st.Balance != 7 || st.Spent != 3 || st.LastPurchase == nil || st.LastPurchase.ItemID != "milk" {
		t.Fatalf("puppyStats.json after buying milk: %+v", st)
	}
	put(`{"totalCalls":30,"balance":1,"updatedAt":1}`)
	click(f, `button[data-do="buy"][data-item="cheese"]`)
	n := text(f, `[data-role="notice"].error`)
	if !strings.Contains(n, "Not enough coins: Cheese costs 4 coins and the mascot has 1 coin. Nothing was bought.") {
		t.Fatalf("a purchase the balance does not cover: %q", n)
	}
	if got := text(f, `[data-role="balance"]`); got != "1" {
		t.Fatalf("the balance shown after the refusal: %q", got)
	}
	if st := stats(); st.Balance != 1 || st.LastPurchase != nil {
		t.Fatalf("puppyStats.json after the refusal: %+v", st)
	}
	// What the balance cannot cover is no longer offered.
	if n, err := chromedp.Run(bctx, chromedp.Nodes(chromedp.CSSAll(`button[data-do="buy"]:not([disabled])`), in(f), chromedp.AtLeast(0))); err != nil || len(n) != 0 {
		t.Fatalf("%d items offered for 1 coin: %v", len(n), err)
	}
}

// kramdownOf is a block's Markdown in the kernel, without its attributes.
func kramdownOf(t *testing.T, c *siyuan.Client, id string) string {
	t.Helper()
	k, err := c.GetBlockKramdown(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := strings.Cut(k.Kramdown, "\n")
	return strings.TrimSpace(line)
}
