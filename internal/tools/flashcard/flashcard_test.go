package flashcard

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

func toolset() []*tools.Tool { return []*tools.Tool{Tool()} }

const someID = "20260812120000-abcdefg"

func TestParse(t *testing.T) {
	s := tooltest.NewStrict(t, false, toolset)
	for _, c := range []struct {
		args map[string]any
		ok   bool
	}{
		{map[string]any{"action": "list_cards", "scope": "all", "filter": "due"}, true},
		{map[string]any{"action": "list_cards", "scope": "all", "filter": "due", "deckID": someID}, false},
		{map[string]any{"action": "list_cards", "scope": "deck", "filter": "new"}, false},
		{map[string]any{"action": "list_cards", "scope": "deck", "filter": "new", "deckID": "x"}, false},
		{map[string]any{"action": "list_cards", "scope": "tree", "filter": "old", "rootID": someID, "notebook": someID}, false},
		{map[string]any{"action": "list_cards", "scope": "all", "filter": "soon"}, false},
		{map[string]any{"action": "list_cards", "scope": "all", "filter": "due", "reviewedCards": []any{map[string]any{"cardID": "bad"}}}, false},
		{map[string]any{"action": "get_cards", "deckID": "", "pageSize": 513}, false},
		{map[string]any{"action": "get_cards", "deckID": "nope"}, false},
		{map[string]any{"action": "review_card", "deckID": someID, "cardID": someID, "validateOnly": true}, false},
		{map[string]any{"action": "review_card", "deckID": someID, "cardID": someID, "rating": 5, "validateOnly": true}, false},
		{map[string]any{"action": "review_card", "deckID": someID, "cardID": someID, "rating": 0, "validateOnly": true}, false},
		{map[string]any{"action": "review_card", "deckID": someID, "cardID": someID, "rating": 2, "skip": true, "validateOnly": true}, false},
		{map[string]any{"action": "review_card", "deckID": "", "cardID": someID, "rating": 2, "validateOnly": true}, false},
		{map[string]any{"action": "create_card", "deckID": "", "blockIDs": []string{}, "validateOnly": true}, false},
		{map[string]any{"action": "create_card", "deckID": "", "blockIDs": []string{someID, someID}, "validateOnly": true}, false},
		{map[string]any{"action": "remove_card", "deckID": "x", "blockIDs": []string{someID}, "validateOnly": true}, false},
	} {
		_, e := s.Call(t, "flashcard", c.args)
		invalid := e != nil && e.Code == failure.InvalidArguments
		if invalid == c.ok {
			t.Errorf("%v: %v", c.args, e)
		}
	}
}

func TestHydrate(t *testing.T) {
	for _, c := range []struct {
		b                 blockText
		front, back, kind string
	}{
		{blockText{typ: "p", markdown: "The capital of France is ==Paris==."}, "The capital of France is ____.", "Paris", "cloze"},
		{blockText{typ: "h", markdown: "## What is FSRS?", children: []string{"A scheduler.", "Free."}}, "What is FSRS?", "A scheduler.\n\nFree.", "heading"},
		{blockText{typ: "l", markdown: "- a", children: []string{"a"}}, "- a", "a", "list"},
		{blockText{typ: "p", markdown: "plain"}, "plain", "", "plain"},
	} {
		m := map[string]any{}
		c.b.hydrate(m)
		back, _ := m["back"].(string)
		if m["front"] != c.front || back != c.back || m["review"].(map[string]any)["kind"] != c.kind {
			t.Errorf("hydrate %+v = %v", c.b, m)
		}
	}
	m := map[string]any{}
	blockText{}.hydrate(m)
	if len(m) != 0 {
		t.Errorf("an empty block hydrates %v", m)
	}
	if got := splitDecks(",a,,b,"); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("splitDecks = %q", got)
	}
}

// fixture is a strict fixture with a deck, the document's first two
// blocks carded in it and the third in the built-in deck.
type fixture struct {
	*tooltest.Fixture
	deck string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	s := tooltest.NewStrict(t, false, toolset)
	ctx := context.Background()
	d, err := s.C.CreateRiffDeck(ctx, "Deck")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.C.AddRiffCards(ctx, d.ID, s.Blocks[:2]); err != nil {
		t.Fatal(err)
	}
	if _, err := s.C.AddRiffCards(ctx, siyuan.BuiltinDeckID, s.Blocks[2:3]); err != nil {
		t.Fatal(err)
	}
	return fixture{s, d.ID}
}

func (f fixture) cardOf(t *testing.T, deck, block string) card {
	t.Helper()
	cards, err := deckCards(context.Background(), &tools.Env{Kernel: f.C}, deck)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := cards[block]
	if !ok {
		t.Fatalf("no card of %s in %s: %v", block, deck, cards)
	}
	return c
}

func ids(t *testing.T, res map[string]any, key string) []string {
	t.Helper()
	var out []string
	for _, c := range res["cards"].([]any) {
		out = append(out, c.(map[string]any)[key].(string))
	}
	slices.Sort(out)
	return out
}

func TestReads(t *testing.T) {
	f := newFixture(t)
	decks := f.OK(t, "flashcard", map[string]any{"action": "get_decks"})["decks"].([]any)
	if len(decks) != 2 || decks[0].(map[string]any)["id"] != siyuan.BuiltinDeckID || decks[1].(map[string]any)["id"] != f.deck {
		t.Fatalf("get_decks = %v", decks)
	}
	res := f.OK(t, "flashcard", map[string]any{"action": "list_cards", "scope": "deck", "deckID": f.deck, "filter": "due"})
	if got, want := ids(t, res, "blockID"), slices.Sorted(slices.Values(f.Blocks[:2])); !slices.Equal(got, want) {
		t.Fatalf("list_cards deck = %v", res)
	}
	c0 := res["cards"].([]any)[0].(map[string]any)
	if c0["front"] == nil || c0["notebook"] != f.NB || c0["nextDues"].(map[string]any)["3"] != "10 minutes" {
		t.Errorf("a listed card: %v", c0)
	}
	for _, scope := range []map[string]any{{"scope": "all"}, {"scope": "notebook", "notebook": f.NB}, {"scope": "tree", "rootID": f.Doc}} {
		res := f.OK(t, "flashcard", tooltest.CopyArgs(scope, "action", "list_cards", "filter", "new"))
		if got := ids(t, res, "blockID"); !slices.Equal(got, []string{f.Blocks[2]}) {
			t.Errorf("list_cards %v = %v: the built-in deck's card only", scope, got)
		}
	}
	if res := f.OK(t, "flashcard", map[string]any{"action": "list_cards", "scope": "all", "filter": "old"}); len(res["cards"].([]any)) != 0 {
		t.Errorf("old cards before any review: %v", res)
	}
	page := f.OK(t, "flashcard", map[string]any{"action": "get_cards", "deckID": "", "pageSize": 2})
	if page["total"] != float64(3) || page["pageCount"] != float64(2) || len(page["cards"].([]any)) != 2 {
		t.Errorf("get_cards = %v", page)
	}
	// Hidden notebooks' cards are not shown.
	f.Policy = &tools.Policy{Notebooks: map[string]tools.Level{f.NB: tools.LevelNone}, Default: tools.LevelRead, AllActions: true, Strict: true, Version: "hide"}
	for _, args := range []map[string]any{
		{"action": "get_cards", "deckID": ""},
		{"action": "list_cards", "scope": "deck", "deckID": f.deck, "filter": "due"},
		{"action": "list_cards", "scope": "all", "filter": "due"},
	} {
		res := f.OK(t, "flashcard", args)
		if b, _ := json.Marshal(res["cards"]); string(b) != "[]" {
			t.Errorf("%v shows a hidden notebook's cards: %s", args, b)
		}
	}
	f.WantMissing(t, "flashcard", map[string]any{"action": "list_cards", "scope": "notebook", "notebook": f.NB, "filter": "due"}, map[string]string{f.NB: tooltest.NewID()})
}

func TestReviewCard(t *testing.T) {
	f := newFixture(t)
	c := f.cardOf(t, f.deck, f.Blocks[0])
	args := map[string]any{"action": "review_card", "deckID": f.deck, "cardID": c.CardID, "rating": 3}
	pre := f.Preflight(t, "flashcard", args, "expectedStateHash", 1)
	res := f.Commit(t, "flashcard", args, pre)
	after := f.cardOf(t, f.deck, f.Blocks[0])
	if after.Reps != 1 || after.State != 1 || after.Due == "" || res["ratingName"] != "good" || res["due"] != after.Due {
		t.Errorf("after review: %+v, %v", after, res)
	}
	f.Replay(t, "flashcard", args, pre, res)
	// A review between preflight and commit: the commit is refused.
	pre = f.Preflight(t, "flashcard", args, "expectedStateHash", 1)
	f.Drifted(t, "flashcard", args, pre, func() {
		if err := f.C.ReviewRiffCard(context.Background(), f.deck, c.CardID, 1, nil); err != nil {
			t.Fatal(err)
		}
	})
	// A skip changes no schedule: its receipt is no_change.
	other := f.cardOf(t, f.deck, f.Blocks[1])
	skip := map[string]any{"action": "review_card", "deckID": f.deck, "cardID": other.CardID, "skip": true}
	pre = f.Preflight(t, "flashcard", skip, "expectedStateHash", 1)
	res = f.OK(t, "flashcard", tooltest.CommitArgs(skip, pre))
	if res["status"] != "no_change" || res["skip"] != true {
		t.Errorf("skip: %v", res)
	}
	if now := f.cardOf(t, f.deck, f.Blocks[1]); now != other {
		t.Errorf("a skip changed the card: %+v → %+v", other, now)
	}
	f.WantErr(t, "flashcard", map[string]any{"action": "review_card", "deckID": f.deck, "cardID": someID, "rating": 3, "validateOnly": true}, failure.NotFound)
}

func TestCreateAndRemoveCard(t *testing.T) {
	f := newFixture(t)
	create := map[string]any{"action": "create_card", "deckID": f.deck, "blockIDs": []string{f.Blocks[3], f.Blocks[4]}}
	pre := f.Preflight(t, "flashcard", create, "", 2)
	res := f.Commit(t, "flashcard", create, pre)
	if len(res["cards"].([]any)) != 2 || res["effectiveDeckID"] != f.deck {
		t.Errorf("create_card: %v", res)
	}
	f.cardOf(t, f.deck, f.Blocks[3])
	f.Replay(t, "flashcard", create, pre, res)
	f.InvalidAt(t, "flashcard", map[string]any{"action": "create_card", "deckID": "", "blockIDs": []string{f.Doc}}, false)
	f.WantErr(t, "flashcard", map[string]any{"action": "create_card", "deckID": someID, "blockIDs": []string{f.Blocks[0]}, "validateOnly": true}, failure.NotFound)

	rm := map[string]any{"action": "remove_card", "deckID": f.deck, "blockIDs": []string{f.Blocks[3]}, "confirm": true}
	pre = f.Preflight(t, "flashcard", rm, "expectedStateHash", 1)
	res = f.Commit(t, "flashcard", rm, pre)
	if ids, _ := res["removedCardIDs"].([]any); len(ids) != 1 {
		t.Errorf("remove_card: %v", res)
	}
	attrs, err := f.C.GetBlockAttrs(context.Background(), f.Blocks[3])
	if err != nil || attrs["custom-riff-decks"] != "" {
		t.Errorf("attribute after removal: %v %v", attrs, err)
	}
	f.Replay(t, "flashcard", rm, pre, res)
	// The card reviewed after the preflight: the removal is refused.
	rm["blockIDs"] = []string{f.Blocks[4]}
	pre = f.Preflight(t, "flashcard", rm, "expectedStateHash", 1)
	c := f.cardOf(t, f.deck, f.Blocks[4])
	f.Drifted(t, "flashcard", rm, pre, func() {
		if err := f.C.ReviewRiffCard(context.Background(), f.deck, c.CardID, 4, nil); err != nil {
			t.Fatal(err)
		}
	})
	f.WantErr(t, "flashcard", map[string]any{"action": "remove_card", "deckID": f.deck, "blockIDs": []string{f.Blocks[3]}, "validateOnly": true}, failure.NotFound)
}
