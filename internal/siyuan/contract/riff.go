package contract

// Flashcards (riff): decks made and listed, cards added (the block's
// custom-riff-decks attribute follows), paged, due (per deck, the built-in
// deck for all, a notebook and a document), reviewed (a second review in a
// session undoes the first), skipped (for the session only) and removed.
// The suite's decks are its own and removed at the end; cards it puts in
// the built-in deck are removed from it.

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

var riffChecks = []check{
	{"RiffDecks", checkRiffDecks},
	{"RiffAddCards", checkRiffAddCards},
	{"RiffDueCards", checkRiffDueCards},
	{"RiffBuiltinDue", checkRiffBuiltinDue},
	{"RiffReview", checkRiffReview},
	{"RiffSkip", checkRiffSkip},
	{"RiffRemoveCards", checkRiffRemoveCards},
}

var deckTimeRe = regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$`)

// deck makes a deck of the suite's, removed when the check ends.
func (s *suite) deck(t *testing.T, what string) siyuan.RiffDeck {
	t.Helper()
	d, err := s.c.CreateRiffDeck(t.Context(), "sisyphus-contract-"+s.tag+"-"+what)
	must(t, "CreateRiffDeck", err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.c.RemoveRiffDeck(ctx, d.ID); err != nil {
			t.Errorf("cleanup: RemoveRiffDeck: %v", err)
		}
	})
	return d
}

// builtinCards adds blocks to the built-in deck and takes them out again
// when the check ends.
func (s *suite) builtinCards(t *testing.T, ids ...string) {
	t.Helper()
	_, err := s.c.AddRiffCards(t.Context(), siyuan.BuiltinDeckID, ids)
	must(t, "AddRiffCards builtin", err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := s.c.RemoveRiffCards(ctx, siyuan.BuiltinDeckID, ids); err != nil {
			t.Errorf("cleanup: RemoveRiffCards builtin: %v", err)
		}
	})
}

func (s *suite) listedDeck(t *testing.T, id string) (siyuan.RiffDeck, bool) {
	t.Helper()
	decks, err := s.c.GetRiffDecks(t.Context())
	must(t, "GetRiffDecks", err)
	for _, d := range decks {
		if d.ID == siyuan.BuiltinDeckID {
			t.Errorf("GetRiffDecks lists the built-in deck: %+v", d)
		}
		if d.ID == id {
			return d, true
		}
	}
	return siyuan.RiffDeck{}, false
}

// deckCards reads every card of a deck (one page of 512).
func (s *suite) deckCards(t *testing.T, deck string) map[string]siyuan.Block {
	t.Helper()
	page, err := s.c.GetRiffCards(t.Context(), deck, 1, 512)
	must(t, "GetRiffCards", err)
	out := map[string]siyuan.Block{}
	for _, b := range page.Blocks {
		out[b.ID] = b
	}
	if page.Total != len(page.Blocks) {
		t.Fatalf("GetRiffCards total %d, %d blocks", page.Total, len(page.Blocks))
	}
	return out
}

func cardState(t *testing.T, b siyuan.Block) siyuan.RiffCardState {
	t.Helper()
	st, err := siyuan.CardState(b)
	if err != nil || st == nil {
		t.Fatalf("card of %s: %v %v", b.ID, st, err)
	}
	return *st
}

func dueIDs(d siyuan.DueCards) []string {
	var out []string
	for _, c := range d.Cards {
		out = append(out, c.CardID)
	}
	slices.Sort(out)
	return out
}

func checkRiffDecks(t *testing.T, s *suite) {
	d := s.deck(t, "decks")
	if d.Size != 0 || !nodeIDRe.MatchString(d.ID) || !strings.HasSuffix(d.Name, "-decks") || !deckTimeRe.MatchString(d.Created) || !deckTimeRe.MatchString(d.Updated) {
		t.Errorf("CreateRiffDeck = %+v", d)
	}
	got, ok := s.listedDeck(t, d.ID)
	if !ok || got.Name != d.Name || got.Size != 0 {
		t.Errorf("GetRiffDecks has %+v (%v), want %+v", got, ok, d)
	}
	must(t, "RemoveRiffDeck", s.c.RemoveRiffDeck(t.Context(), d.ID))
	if _, ok := s.listedDeck(t, d.ID); ok {
		t.Error("a removed deck is still listed")
	}
}

func checkRiffAddCards(t *testing.T, s *suite) {
	d := s.deck(t, "add")
	_, ids := s.docWithParas(t, "riff-add", "front one", "front two")
	s.flush(t)
	got, err := s.c.AddRiffCards(t.Context(), d.ID, ids)
	must(t, "AddRiffCards", err)
	if got == nil || got.ID != d.ID || got.Size != 2 {
		t.Fatalf("AddRiffCards = %+v, want the deck with 2 cards", got)
	}
	if a := s.attrs(t, ids[0])["custom-riff-decks"]; a != d.ID {
		t.Errorf("custom-riff-decks = %q, want %s", a, d.ID)
	}
	// A block has one card per deck.
	got, err = s.c.AddRiffCards(t.Context(), d.ID, ids[:1])
	must(t, "AddRiffCards again", err)
	if got == nil || got.Size != 2 {
		t.Errorf("AddRiffCards again = %+v, want 2 cards still", got)
	}
	cards := s.deckCards(t, d.ID)
	for _, id := range ids {
		b, ok := cards[id]
		if !ok || !nodeIDRe.MatchString(b.RiffCardID) || b.Box != s.box || b.Type != "NodeParagraph" {
			t.Fatalf("GetRiffCards block %s = %+v (%v)", id, b, ok)
		}
		st := cardState(t, b)
		if st.State != 0 || st.Reps != 0 || st.Lapses != 0 || st.LastReview != "0001-01-01T00:00:00Z" {
			t.Errorf("a new card = %+v", st)
		}
		if due, err := time.Parse(time.RFC3339Nano, st.Due); err != nil || time.Since(due) > time.Minute || time.Until(due) > time.Minute {
			t.Errorf("a new card's due %q, want about now (%v)", st.Due, err)
		}
	}
	// An id that names no block still gets a card, shown as missing.
	gone := freshID()
	got, err = s.c.AddRiffCards(t.Context(), d.ID, []string{gone})
	must(t, "AddRiffCards missing block", err)
	if got == nil || got.Size != 3 {
		t.Errorf("AddRiffCards of a missing block = %+v, want 3 cards", got)
	}
	if b := s.deckCards(t, d.ID)[gone]; b.RiffCardID != "" || b.Content != "Search content block does not exist" {
		t.Errorf("the missing block's card = %+v", b)
	}
	// A deck that does not exist answers null, and the block's attribute
	// still gains its id.
	unknown := freshID()
	got, err = s.c.AddRiffCards(t.Context(), unknown, ids[1:])
	must(t, "AddRiffCards unknown deck", err)
	if got != nil {
		t.Errorf("AddRiffCards unknown deck = %+v, want null", got)
	}
	if a := s.attrs(t, ids[1])["custom-riff-decks"]; a != d.ID+","+unknown {
		t.Errorf("custom-riff-decks after an unknown deck = %q", a)
	}
	if page, err := s.c.GetRiffCards(t.Context(), unknown, 1, 0); err != nil || page.Total != 0 || len(page.Blocks) != 0 {
		t.Errorf("GetRiffCards unknown deck = %+v, %v", page, err)
	}
}

func checkRiffDueCards(t *testing.T, s *suite) {
	d := s.deck(t, "due")
	_, ids := s.docWithParas(t, "riff-due", "due one", "due two")
	s.flush(t)
	_, err := s.c.AddRiffCards(t.Context(), d.ID, append(slices.Clone(ids), freshID()))
	must(t, "AddRiffCards", err)
	due, err := s.c.GetRiffDueCards(t.Context(), d.ID, nil)
	must(t, "GetRiffDueCards", err)
	// The card of a missing block is not due.
	if len(due.Cards) != 2 || due.UnreviewedCount != 2 || due.UnreviewedNewCardCount != 2 || due.UnreviewedOldCardCount != 0 {
		t.Fatalf("GetRiffDueCards = %+v", due)
	}
	wantNext := map[string]string{"1": "1 minute", "2": "5 minutes", "3": "10 minutes", "4": "16 days"}
	for _, c := range due.Cards {
		if c.DeckID != d.ID || !slices.Contains(ids, c.BlockID) || c.State != 0 || c.Reps != 0 || c.LastReview != -62135596800000 {
			t.Errorf("due card %+v", c)
		}
		if len(c.NextDues) != 4 || c.NextDues["1"] != wantNext["1"] || c.NextDues["3"] != wantNext["3"] || c.NextDues["4"] != wantNext["4"] || c.NextDues["2"] != wantNext["2"] {
			t.Errorf("nextDues %v, want %v", c.NextDues, wantNext)
		}
	}
	// An unknown deck has null cards; "" is the built-in deck alone.
	if u, err := s.c.GetRiffDueCards(t.Context(), freshID(), nil); err != nil || u.Cards != nil || u.UnreviewedCount != 0 {
		t.Errorf("GetRiffDueCards unknown deck = %+v, %v", u, err)
	}
	all, err := s.c.GetRiffDueCards(t.Context(), "", nil)
	must(t, "GetRiffDueCards all", err)
	for _, c := range all.Cards {
		if c.DeckID != siyuan.BuiltinDeckID {
			t.Errorf("GetRiffDueCards(\"\") lists another deck's card: %+v", c)
		}
	}
	if all.Cards == nil {
		t.Error("GetRiffDueCards(\"\") cards = null, want a list")
	}
}

func checkRiffBuiltinDue(t *testing.T, s *suite) {
	d := s.deck(t, "builtin")
	doc, ids := s.docWithParas(t, "riff-builtin", "in builtin", "in a deck")
	s.flush(t)
	s.builtinCards(t, ids[0])
	_, err := s.c.AddRiffCards(t.Context(), d.ID, ids[1:])
	must(t, "AddRiffCards", err)
	for name, read := range map[string]func() (siyuan.DueCards, error){
		"notebook": func() (siyuan.DueCards, error) { return s.c.GetNotebookRiffDueCards(t.Context(), s.box, nil) },
		"tree":     func() (siyuan.DueCards, error) { return s.c.GetTreeRiffDueCards(t.Context(), doc, nil) },
		"all":      func() (siyuan.DueCards, error) { return s.c.GetRiffDueCards(t.Context(), "", nil) },
	} {
		due, err := read()
		must(t, name, err)
		var blocks []string
		for _, c := range due.Cards {
			blocks = append(blocks, c.BlockID)
			if c.DeckID != siyuan.BuiltinDeckID {
				t.Errorf("%s due card of deck %s: only the built-in deck is read", name, c.DeckID)
			}
		}
		if !slices.Contains(blocks, ids[0]) || slices.Contains(blocks, ids[1]) {
			t.Errorf("%s due blocks %v, want %s and not %s", name, blocks, ids[0], ids[1])
		}
	}
}

func checkRiffReview(t *testing.T, s *suite) {
	d := s.deck(t, "review")
	_, ids := s.docWithParas(t, "riff-review", "review one", "review two")
	s.flush(t)
	_, err := s.c.AddRiffCards(t.Context(), d.ID, ids)
	must(t, "AddRiffCards", err)
	due, err := s.c.GetRiffDueCards(t.Context(), d.ID, nil) // a new session
	must(t, "GetRiffDueCards", err)
	if len(due.Cards) != 2 {
		t.Fatalf("due %+v", due)
	}
	card, block := due.Cards[0].CardID, due.Cards[0].BlockID
	before := time.Now()
	must(t, "ReviewRiffCard", s.c.ReviewRiffCard(t.Context(), d.ID, card, 3, []string{card}))
	st := cardState(t, s.deckCards(t, d.ID)[block])
	last, err1 := time.Parse(time.RFC3339Nano, st.LastReview)
	next, err2 := time.Parse(time.RFC3339Nano, st.Due)
	if err1 != nil || err2 != nil || st.Reps != 1 || st.State != 1 || last.Before(before.Add(-time.Second)) ||
		next.Sub(last) < 9*time.Minute || next.Sub(last) > 11*time.Minute {
		t.Fatalf("after Good on a new card: %+v, want reps 1, learning, due 10 minutes after the review", st)
	}
	again, err := s.c.GetRiffDueCards(t.Context(), d.ID, []string{card})
	must(t, "GetRiffDueCards after review", err)
	if slices.Contains(dueIDs(again), card) || again.UnreviewedCount != 1 {
		t.Errorf("the reviewed card is still due: %+v", again)
	}
	// Reviewed again in the session: the first review is undone, then
	// Easy applies to the card as it was (reps stay 1).
	must(t, "ReviewRiffCard again", s.c.ReviewRiffCard(t.Context(), d.ID, card, 4, []string{card}))
	st = cardState(t, s.deckCards(t, d.ID)[block])
	next, _ = time.Parse(time.RFC3339Nano, st.Due)
	if st.Reps != 1 || st.State != 2 || time.Until(next) < 10*24*time.Hour {
		t.Errorf("after a second review in the session: %+v, want the first undone (reps 1) and Easy (review, days away)", st)
	}
	// An unknown card or deck: success, nothing changes.
	must(t, "ReviewRiffCard unknown card", s.c.ReviewRiffCard(t.Context(), d.ID, freshID(), 3, nil))
	must(t, "ReviewRiffCard unknown deck", s.c.ReviewRiffCard(t.Context(), freshID(), card, 3, nil))
	if st2 := cardState(t, s.deckCards(t, d.ID)[block]); st2.Reps != st.Reps || st2.Due != st.Due {
		t.Errorf("an unknown review changed the card: %+v → %+v", st, st2)
	}
}

func checkRiffSkip(t *testing.T, s *suite) {
	d := s.deck(t, "skip")
	_, ids := s.docWithParas(t, "riff-skip", "skip one", "skip two")
	s.flush(t)
	_, err := s.c.AddRiffCards(t.Context(), d.ID, ids)
	must(t, "AddRiffCards", err)
	due, err := s.c.GetRiffDueCards(t.Context(), d.ID, nil)
	must(t, "GetRiffDueCards", err)
	if len(due.Cards) != 2 {
		t.Fatalf("due %+v", due)
	}
	skip, other := due.Cards[0], due.Cards[1]
	before := cardState(t, s.deckCards(t, d.ID)[skip.BlockID])
	must(t, "SkipReviewRiffCard", s.c.SkipReviewRiffCard(t.Context(), d.ID, skip.CardID))
	in, err := s.c.GetRiffDueCards(t.Context(), d.ID, []string{other.CardID})
	must(t, "GetRiffDueCards in session", err)
	if ids := dueIDs(in); slices.Contains(ids, skip.CardID) || !slices.Contains(ids, other.CardID) {
		t.Errorf("in the session, due %v: want the skipped card left out", ids)
	}
	if after := cardState(t, s.deckCards(t, d.ID)[skip.BlockID]); after.Reps != before.Reps || after.State != before.State || after.LastReview != before.LastReview {
		t.Errorf("a skip changed the card: %+v → %+v", before, after)
	}
	fresh, err := s.c.GetRiffDueCards(t.Context(), d.ID, nil)
	must(t, "GetRiffDueCards new session", err)
	if !slices.Contains(dueIDs(fresh), skip.CardID) {
		t.Errorf("a new session still leaves the skipped card out: %v", dueIDs(fresh))
	}
	must(t, "SkipReviewRiffCard unknown", s.c.SkipReviewRiffCard(t.Context(), d.ID, freshID()))
}

func checkRiffRemoveCards(t *testing.T, s *suite) {
	d := s.deck(t, "remove")
	d2 := s.deck(t, "remove2")
	_, ids := s.docWithParas(t, "riff-remove", "remove one", "remove two")
	s.flush(t)
	for _, dk := range []string{d.ID, d2.ID} {
		_, err := s.c.AddRiffCards(t.Context(), dk, ids)
		must(t, "AddRiffCards", err)
	}
	got, err := s.c.RemoveRiffCards(t.Context(), d.ID, ids[:1])
	must(t, "RemoveRiffCards", err)
	if got == nil || got.ID != d.ID || got.Size != 1 {
		t.Errorf("RemoveRiffCards = %+v, want the deck with 1 card", got)
	}
	if a := s.attrs(t, ids[0])["custom-riff-decks"]; a != d2.ID {
		t.Errorf("custom-riff-decks after removal = %q, want %s", a, d2.ID)
	}
	if _, ok := s.deckCards(t, d.ID)[ids[0]]; ok {
		t.Error("the removed card is still in the deck")
	}
	if _, ok := s.deckCards(t, d2.ID)[ids[0]]; !ok {
		t.Error("removal from one deck took the card of another")
	}
	// From every deck ("" ): no deck in the answer, the attribute goes.
	got, err = s.c.RemoveRiffCards(t.Context(), "", ids[1:])
	must(t, "RemoveRiffCards all", err)
	if got != nil {
		t.Errorf("RemoveRiffCards(\"\") = %+v, want null", got)
	}
	if a, ok := s.attrs(t, ids[1])["custom-riff-decks"]; ok {
		t.Errorf("custom-riff-decks after removal from every deck = %q", a)
	}
	for _, dk := range []string{d.ID, d2.ID} {
		if _, ok := s.deckCards(t, dk)[ids[1]]; ok {
			t.Errorf("deck %s still has the card", dk)
		}
	}
}
