// Package apps declares Sisyphus's MCP Apps (the io.modelcontextprotocol/ui
// extension): for each, its view (one self-contained HTML page served as a
// ui:// resource), the launcher the model calls to open it, and the
// app-only action tool its view calls, which maps each of its actions to
// one action of an ordinary tool. It also reads the apps' switches
// (mcpToolsConfig.mcpApps).
//
// The package holds declarations only: the authority registers them on
// its MCP server and runs every app action as a call of the tool action it
// maps to (gate, confirmation and Strict Safe Writes unchanged), and every
// launcher as the reads its App names (Open), whose answers the App shapes
// for its view (Present). Adding an App is one entry in [All] and one HTML
// file in assets/.
//
// A view never reaches the network: it holds its CSS and script inline,
// declares an empty CSP (no connect, resource, frame or base domains) and
// talks only to its host, by postMessage JSON-RPC (ui/initialize, then
// tools/call of its action tool).
package apps

import (
	"embed"
	"strings"
)

// App is one MCP App.
type App struct {
	// Key names the App in mcpToolsConfig.mcpApps (upstream's key).
	Key string
	// Title is the App's name for people (settings page, resource title).
	Title string
	// View is the ui:// URI of its HTML view.
	View string
	// ViewName and ViewDescription describe the view resource.
	ViewName, ViewDescription string
	// Launcher is the model-visible tool that opens the view; Launch
	// describes it to the model, in one or two short sentences.
	Launcher, Launch string
	// ActionTool is the app-only tool the view calls; Actions are the
	// actions it offers (each runs Target's action of the same name).
	ActionTool string
	Target     string
	Actions    []string
	// Args are the launcher's arguments: JSON Schema properties.
	Args map[string]any
	// Open names the reads of Target the launcher runs, in order, from
	// its arguments (each an arguments object with its action); an error
	// says what is wrong with them.
	Open func(args Args) ([]map[string]any, error)
	// Present makes, from the launcher's arguments and the reads'
	// answers, what the view renders (structuredContent, to which the
	// caller adds app and appActions) and one sentence for the model.
	Present func(args Args, answers []map[string]any) (view map[string]any, text string)
	// Ready is false for an App whose target tool this build does not
	// have yet: it is declared (its switches are kept) but not served.
	Ready bool
	// page is the view's HTML file under assets/.
	page string
}

// Args are a launcher's arguments as decoded from JSON.
type Args map[string]any

// str is a string argument ("" when absent or not a string).
func (a Args) str(name string) string {
	s, _ := a[name].(string)
	return s
}

// All are the Apps, in the order the settings page shows them.
func All() []App {
	return []App{
		{
			Key: "flashcardReview", Title: "Flashcard review",
			View: "ui://siyuan-sisyphus/flashcard", ViewName: "siyuan_flashcard_review",
			ViewDescription: "Review due SiYuan flashcards: reveal the answer, rate Again, Hard, Good or Easy.",
			Launcher:        "flashcard_review_session",
			Launch:          "Open a flashcard review session of the due cards of one deck (deckID) or of all decks, which the person reviews and rates in the App. Do not rate cards yourself meanwhile.",
			ActionTool:      "flashcard_review_app_action", Target: "flashcard", Actions: []string{"review_card"},
			Args: map[string]any{
				"deckID": map[string]any{"type": "string", "description": "the deck to review (flashcard get_decks); omit for every deck"},
				"limit":  map[string]any{"type": "integer", "minimum": 1, "maximum": 50, "description": "at most this many cards (default 20)"},
				// Upstream's form: the model picks the cards.
				"cards": map[string]any{"type": "array", "maxItems": maxChosen, "items": map[string]any{"type": "object"},
					"description": "instead: these cards, in order ([{deckID, cardID}] from flashcard list_cards); those not due are left out"},
				"candidateToken":  map[string]any{"type": "string", "description": "accepted with cards (upstream's form); not needed"},
				"selectionReason": map[string]any{"type": "string", "description": "accepted with cards (upstream's form)"},
			},
			Open: openFlashcards, Present: presentFlashcards,
			Ready: true, page: "flashcard.html",
		},
		{
			Key: "timeline", Title: "Timeline",
			View: "ui://siyuan-sisyphus/timeline", ViewName: "siyuan_timeline",
			ViewDescription: "A document's timeline: its nodes, creating one, comparing one with the document now, rolling back.",
			Launcher:        "timeline_app",
			Launch:          "Open the timeline App for a document (documentId; without it, the workspace's nodes); with tag, open that node's comparison. Rollbacks happen only in the App, confirmed by the person.",
			ActionTool:      "timeline_app_action", Target: "timeline",
			Actions: []string{"list_nodes", "create_node", "compare_node", "delete_node", "rollback_document", "rollback_block"},
			Args: map[string]any{
				"documentId": map[string]any{"type": "string", "description": "the document; omit for the workspace's nodes"},
				"tag":        map[string]any{"type": "string", "description": "a node's tag to open its comparison (needs documentId)"},
			},
			Open: openTimeline, Present: presentTimeline,
			Ready: true, page: "timeline.html",
		},
		{
			// Upstream's launcher takes no argument: the shop is the same
			// whoever opens it.
			Key: "mascotShop", Title: "Mascot shop",
			View: "ui://siyuan-sisyphus/shop", ViewName: "siyuan_mascot_shop",
			ViewDescription: "The mascot's balance and shop: buy food, drinks and treats.",
			Launcher:        "mascot_shop_app",
			Launch:          "Open the mascot shop App, where the person buys items. Do not buy on their behalf.",
			ActionTool:      "mascot_shop_app_action", Target: "mascot", Actions: []string{"get_balance", "shop", "buy"},
			Args: map[string]any{},
			Open: openShop, Present: presentShop,
			Ready: true, page: "shop.html",
		},
	}
}

// Lookup finds an App by key.
func Lookup(key string) (App, bool) {
	for _, a := range All() {
		if a.Key == key {
			return a, true
		}
	}
	return App{}, false
}

// Has reports whether the App offers action.
func (a App) Has(action string) bool {
	for _, x := range a.Actions {
		if x == action {
			return true
		}
	}
	return false
}

//go:embed assets
var assets embed.FS

// bridgeMark is where a view's page takes the bridge script every view
// shares (inlined: a view loads nothing).
const bridgeMark = "/*BRIDGE*/"

// baseMark is where a view's style takes the rules every view shares
// (base.css, inlined the same way).
const baseMark = "/*BASE*/"

// HTML is the App's view: its page with the shared style and bridge
// inlined. It
// panics when the page is missing, which only a build without its file
// can do (a test reads every Ready App's view).
func (a App) HTML() string {
	page, err := assets.ReadFile("assets/" + a.page)
	if err != nil {
		panic("apps: " + a.Key + ": " + err.Error())
	}
	bridge, err := assets.ReadFile("assets/bridge.js")
	if err != nil {
		panic("apps: bridge: " + err.Error())
	}
	base, err := assets.ReadFile("assets/base.css")
	if err != nil {
		panic("apps: base: " + err.Error())
	}
	html := strings.Replace(string(page), baseMark, string(base), 1)
	return strings.Replace(html, bridgeMark, string(bridge), 1)
}

// ViewMeta is the view's _meta: ui for its listing and its contents. The
// CSP lists no domain at all (a host then allows no outside connection,
// resource, frame or base), and the view asks for no permission.
func ViewMeta() map[string]any {
	return map[string]any{"ui": map[string]any{
		"csp": map[string]any{"connectDomains": []string{}, "resourceDomains": []string{}, "frameDomains": []string{}, "baseUriDomains": []string{}},
		// A bordered card: the view draws no frame of its own.
		"prefersBorder": true,
	}}
}
