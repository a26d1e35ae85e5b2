package apps

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// TestViewsSelfContained: every served view is one HTML document that
// names no outside URL (no http(s), protocol-relative or ws link, no src or
// href attribute at all), carries the bridge inline, and speaks the Apps
// handshake; its CSP lists no domain.
func TestViewsSelfContained(t *testing.T) {
	url := regexp.MustCompile(`(?i)(https?:|wss?:|ftp:)//|(?:src|href|action)\s*=|@import|url\(|//[a-z0-9.-]+\.[a-z]{2,}/`)
	for _, a := range All() {
		if !a.Ready {
			continue
		}
		t.Run(a.Key, func(t *testing.T) {
			h := a.HTML()
			if !strings.HasPrefix(h, "<!doctype html>") || strings.Contains(h, bridgeMark) || strings.Contains(h, baseMark) || !strings.Contains(h, "html[data-theme=dark]") {
				t.Fatalf("not a whole document with its style and bridge inlined")
			}
			if m := url.FindString(h); m != "" {
				t.Errorf("the view names an outside resource: %q", m)
			}
			for _, want := range []string{"ui/initialize", "ui/notifications/initialized", "ui/notifications/tool-result", "'tools/call'", a.ActionTool} {
				if !strings.Contains(h, want) {
					t.Errorf("the view lacks %s", want)
				}
			}
			if strings.Contains(h, "fetch(") || strings.Contains(h, "XMLHttpRequest") || strings.Contains(h, "WebSocket") {
				t.Error("the view reaches the network itself")
			}
		})
	}
	csp, _ := json.Marshal(ViewMeta()["ui"].(map[string]any)["csp"])
	if string(csp) != `{"baseUriDomains":[],"connectDomains":[],"frameDomains":[],"resourceDomains":[]}` {
		t.Errorf("csp: %s", csp)
	}
}

// TestDeclarations: keys, tools and views are distinct, and every App's
// actions are its target's (upstream's names).
func TestDeclarations(t *testing.T) {
	seen := map[string]bool{}
	for _, a := range All() {
		for _, n := range []string{a.Key, a.Launcher, a.ActionTool, a.View} {
			if n == "" || seen[n] {
				t.Errorf("%s: empty or repeated name %q", a.Key, n)
			}
			seen[n] = true
		}
		if !strings.HasPrefix(a.View, "ui://siyuan-sisyphus/") || len(a.Actions) == 0 || a.page == "" {
			t.Errorf("%s: %+v", a.Key, a)
		}
		if a.Ready && (a.Open == nil || a.Present == nil || a.Args == nil) {
			t.Errorf("%s is served without its launcher's reads", a.Key)
		}
		if b, ok := Lookup(a.Key); !ok || b.Launcher != a.Launcher {
			t.Errorf("lookup %s", a.Key)
		}
	}
	if _, ok := Lookup("nope"); ok {
		t.Error("an unknown key was found")
	}
}

// TestLaunchers: what each launcher reads from its arguments, and what it
// hands the view and the model.
func TestLaunchers(t *testing.T) {
	fc, _ := Lookup("flashcardReview")
	tl, _ := Lookup("timeline")
	sh, _ := Lookup("mascotShop")
	for _, tc := range []struct {
		app   App
		args  string
		reads string
		err   bool
	}{
		{fc, `{}`, `[{"action":"list_cards","filter":"due","scope":"all"}]`, false},
		{fc, `{"deckID":"20260101000000-aaaaaaa"}`, `[{"action":"list_cards","deckID":"20260101000000-aaaaaaa","filter":"due","scope":"deck"}]`, false},
		{fc, `{"candidateToken":"t","cards":[{"deckID":"d","cardID":"c"},{"deckID":"e","cardID":"f"},{"deckID":"d","cardID":"g"}],"selectionReason":"why"}`,
			`[{"action":"list_cards","deckID":"d","filter":"due","scope":"deck"},{"action":"list_cards","deckID":"e","filter":"due","scope":"deck"}]`, false},
		{fc, `{"cards":[]}`, ``, true},
		{fc, `{"cards":[{"deckID":"d"}]}`, ``, true},
		{fc, `{"cards":"c"}`, ``, true},
		{tl, `{}`, `[{"action":"list_nodes","scope":"global"}]`, false},
		{tl, `{"documentId":"d","tag":"x"}`, `[{"action":"list_nodes","documentId":"d","scope":"all"},{"action":"compare_node","documentId":"d","pageSize":100,"tag":"x"}]`, false},
		{tl, `{"tag":"x"}`, ``, true},
		{sh, `{}`, `[{"action":"get_balance"},{"action":"shop"}]`, false},
	} {
		var in Args
		json.Unmarshal([]byte(tc.args), &in)
		reads, err := tc.app.Open(in)
		got, _ := json.Marshal(reads)
		if (err != nil) != tc.err || !tc.err && string(got) != tc.reads {
			t.Errorf("%s %s: %s, %v", tc.app.Key, tc.args, got, err)
		}
	}
	cards := []any{"a", "b", "c"}
	view, text := fc.Present(Args{"limit": float64(2)}, []map[string]any{{"cards": cards}})
	if len(view["cards"].([]any)) != 2 || view["due"] != 3 || !strings.Contains(text, "2 of 3 due cards") || strings.Contains(text, `"a"`) {
		t.Errorf("flashcards: %v, %q", view, text)
	}
	// Upstream's form: the chosen cards that are due, in the order chosen.
	card := func(deck, id string) map[string]any { return map[string]any{"deckID": deck, "cardID": id} }
	chosen := Args{"cards": []any{card("d", "c"), card("d", "x"), card("e", "a"), card("d", "c"), card("d", "a")}}
	view, text = fc.Present(chosen, []map[string]any{{"cards": []any{card("d", "a"), card("d", "c")}}, {"cards": []any{card("e", "a")}}})
	if got, _ := json.Marshal(view["cards"]); string(got) != `[{"cardID":"c","deckID":"d"},{"cardID":"a","deckID":"e"},{"cardID":"a","deckID":"d"}]` ||
		view["due"] != 3 || !strings.Contains(text, "3 of the 5 cards chosen") {
		t.Errorf("chosen flashcards: %v, %q", view, text)
	}
	view, _ = tl.Present(Args{"documentId": "d"}, []map[string]any{{"nodes": []any{}, "total": 0}, {"noChanges": true}})
	if view["documentId"] != "d" || view["comparison"].(map[string]any)["noChanges"] != true {
		t.Errorf("timeline: %v", view)
	}
	milk := map[string]any{"id": "milk", "label": "Milk", "cost": float64(3)}
	view, text = sh.Present(Args{}, []map[string]any{{"action": "get_balance", "balance": float64(12), "totalEarned": float64(40)}, {"action": "shop", "items": []any{milk}}})
	if view["balance"] != float64(12) || view["totalEarned"] != float64(40) || len(view["items"].([]any)) != 1 || !strings.Contains(text, "balance: 12 coins") || !strings.Contains(text, "Do not buy") {
		t.Errorf("shop: %v, %q", view, text)
	}
	// A shop answer without items is an empty list for the view, not null.
	if view, _ = sh.Present(Args{}, []map[string]any{{"balance": float64(0)}, {}}); view["items"] == nil || len(view["items"].([]any)) != 0 {
		t.Errorf("shop without items: %v", view)
	}
}
