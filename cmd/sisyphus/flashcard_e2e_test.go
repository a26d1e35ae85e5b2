package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/testvars"
)

// TestFlashcardToolThroughTheBinary walks every action of the flashcard
// tool through the binary against the embedded kernel: decks and cards
// listed with their front and back, cards made (one batch replayed),
// reviewed (preflight, commit, replay; a stale review refused; a skip),
// the gate on the cards' notebook (hidden cards never listed), and a
// removal that needs confirmation.
func TestFlashcardToolThroughTheBinary(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	s := startServeWith(t, "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", t.TempDir())
	a := connect(t, s.url, "2025-11-25")
	nb := a.strictDo("notebook", map[string]any{"action": "create", "name": "Cards"})["notebook"].(string)
	flashcardFlow(t, s, a, kernelClient(t, k.url, "tok"), nb)
}

// TestFlashcardToolLive runs the same walk against a real SiYuan when
// SISYPHUS_LIVE_SIYUAN_URL and SISYPHUS_LIVE_SIYUAN_TOKEN are set, in a
// notebook and a deck it creates and removes (its card in the built-in
// deck too).
func TestFlashcardToolLive(t *testing.T) {
	url, tok := testvars.Live(t)
	s := startServeWith(t, "--siyuan-url", url, "--siyuan-token", tok, "--state-dir", t.TempDir())
	a := connect(t, s.url, "2025-11-25")
	s.config(t, "enable", "notebook.remove")
	nb := a.strictDo("notebook", map[string]any{"action": "create", "name": fmt.Sprintf("sisyphus-live-cards-%d", time.Now().UnixNano())})["notebook"].(string)
	defer func() {
		s.config(t, "permission", nb, "rwd")
		a.strictDo("notebook", map[string]any{"action": "remove", "notebook": nb, "confirm": true})
	}()
	flashcardFlow(t, s, a, kernelClient(t, url, tok), nb)
}

// cardsOf lists a tool answer's cards by block id.
func cardsOf(res map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, c := range res["cards"].([]any) {
		m := c.(map[string]any)
		if b, ok := m["blockID"].(string); ok {
			out[b] = m
		}
	}
	return out
}

func flashcardFlow(t *testing.T, s *serveProc, a *agent, c *siyuan.Client, nb string) {
	ctx := context.Background()
	s.config(t, "permission", nb, "rwd")
	doc := a.strictDo("document", map[string]any{"action": "create", "notebook": nb, "path": "/Cards",
		"markdown": "The capital of France is ==Paris==.\n\na built-in card\n\n## What schedules SiYuan's cards?\n\nFSRS does."})["id"].(string)
	var blocks []string
	for _, k := range a.ok("block", map[string]any{"action": "get_children", "id": doc})["data"].([]any) {
		blocks = append(blocks, k.(map[string]any)["id"].(string))
	}
	if len(blocks) != 4 {
		t.Fatalf("blocks %v", blocks)
	}
	cloze, builtin, head := blocks[0], blocks[1], blocks[2]
	deck, err := c.CreateRiffDeck(ctx, fmt.Sprintf("sisyphus-e2e-%d", time.Now().UnixNano()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.RemoveRiffCards(context.Background(), "", blocks)
		c.RemoveRiffDeck(context.Background(), deck.ID)
	})

	// get_decks: the built-in deck first, then the new one.
	decks := fmt.Sprint(a.ok("flashcard", map[string]any{"action": "get_decks"})["decks"])
	if !strings.Contains(decks, siyuan.BuiltinDeckID) || !strings.Contains(decks, deck.ID) {
		t.Fatalf("get_decks: %s", decks)
	}

	// create_card: additive, preflight then commit, replayed.
	create := map[string]any{"action": "create_card", "deckID": deck.ID, "blockIDs": []string{head, cloze}}
	pre := a.ok("flashcard", with(create, "validateOnly", true))
	res := a.ok("flashcard", commitOf(create, pre))
	if res["status"] != "committed" || len(res["cards"].([]any)) != 2 {
		t.Fatalf("create_card: %v", res)
	}
	if rep := a.ok("flashcard", commitOf(create, pre)); rep["replayed"] != true {
		t.Fatalf("create_card replay: %v", rep)
	}
	a.strictDo("flashcard", map[string]any{"action": "create_card", "deckID": "", "blockIDs": []string{builtin}})

	// list_cards and get_cards, hydrated.
	listed := cardsOf(a.ok("flashcard", map[string]any{"action": "list_cards", "scope": "deck", "deckID": deck.ID, "filter": "new"}))
	if len(listed) != 2 || listed[cloze]["front"] != "The capital of France is ____." || listed[cloze]["back"] != "Paris" ||
		listed[head]["front"] != "What schedules SiYuan's cards?" || listed[head]["back"] != "FSRS does." {
		t.Fatalf("list_cards deck: %v", listed)
	}
	if tree := cardsOf(a.ok("flashcard", map[string]any{"action": "list_cards", "scope": "tree", "rootID": doc, "filter": "due"})); len(tree) != 1 || tree[builtin] == nil {
		t.Fatalf("list_cards tree (the built-in deck only): %v", tree)
	}
	page := a.ok("flashcard", map[string]any{"action": "get_cards", "deckID": deck.ID})
	if page["total"] != float64(2) || len(cardsOf(page)) != 2 {
		t.Fatalf("get_cards: %v", page)
	}
	card := listed[cloze]["cardID"].(string)

	// review_card: guarded by the card's state.
	review := map[string]any{"action": "review_card", "deckID": deck.ID, "cardID": card, "rating": 3}
	pre = a.ok("flashcard", with(review, "validateOnly", true))
	if pre["preconditionField"] != "expectedStateHash" {
		t.Fatalf("review preflight: %v", pre)
	}
	res = a.ok("flashcard", commitOf(review, pre))
	if res["status"] != "committed" || res["reps"] != float64(1) || res["due"] == "" {
		t.Fatalf("review commit: %v", res)
	}
	if rep := a.ok("flashcard", commitOf(review, pre)); rep["replayed"] != true || rep["resultHash"] != res["resultHash"] {
		t.Fatalf("review replay: %v", rep)
	}
	pre = a.ok("flashcard", with(review, "validateOnly", true))
	if err := c.ReviewRiffCard(ctx, deck.ID, card, 1, nil); err != nil {
		t.Fatal(err)
	}
	a.fails("flashcard", commitOf(review, pre), "state_changed")
	// A skip changes no schedule.
	other := listed[head]["cardID"].(string)
	skip := map[string]any{"action": "review_card", "deckID": deck.ID, "cardID": other, "skip": true}
	pre = a.ok("flashcard", with(skip, "validateOnly", true))
	if res := a.ok("flashcard", commitOf(skip, pre)); res["status"] != "no_change" {
		t.Fatalf("skip: %v", res)
	}

	// The gate: write on the card's notebook; hidden cards never listed.
	s.config(t, "permission", nb, "r")
	a.fails("flashcard", with(review, "validateOnly", true), "permission_denied")
	a.fails("flashcard", with(create, "validateOnly", true), "permission_denied")
	s.config(t, "permission", nb, "none")
	if got := cardsOf(a.ok("flashcard", map[string]any{"action": "list_cards", "scope": "deck", "deckID": deck.ID, "filter": "due"})); len(got) != 0 {
		t.Fatalf("list_cards shows a hidden notebook's cards: %v", got)
	}
	if got := cardsOf(a.ok("flashcard", map[string]any{"action": "get_cards", "deckID": deck.ID})); len(got) != 0 {
		t.Fatalf("get_cards shows a hidden notebook's cards: %v", got)
	}

	// remove_card: delete on the notebook, and a person's confirmation.
	rm := map[string]any{"action": "remove_card", "deckID": deck.ID, "blockIDs": []string{head, cloze}}
	s.config(t, "permission", nb, "rw")
	a.fails("flashcard", with(rm, "validateOnly", true), "permission_denied")
	s.config(t, "permission", nb, "rwd")
	pre = a.ok("flashcard", with(rm, "validateOnly", true))
	if m, isErr := a.call("flashcard", commitOf(rm, pre)); !isErr || errCodeOf(m) != "confirmation_required" {
		t.Fatalf("unconfirmed remove_card: %v", m)
	}
	res = a.ok("flashcard", with(commitOf(rm, pre), "confirm", true))
	if res["status"] != "committed" || len(res["removedCardIDs"].([]any)) != 2 {
		t.Fatalf("remove_card: %v", res)
	}
	if page := a.ok("flashcard", map[string]any{"action": "get_cards", "deckID": deck.ID}); page["total"] != float64(0) {
		t.Fatalf("cards left after remove_card: %v", page)
	}
	a.strictDo("flashcard", map[string]any{"action": "remove_card", "deckID": "", "blockIDs": []string{builtin}, "confirm": true})
	a.fails("flashcard", with(rm, "validateOnly", true), "not_found")
}
