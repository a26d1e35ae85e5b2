package flashcard

import (
	"context"
	"slices"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// The state of a card, as a review or removal is guarded by: its deck,
// block and schedule (reps, lapses, state, last review, due). A new card
// has no due time of its own (SiYuan shows the time of the read), so its
// due is left out.

// pageSize is how many cards one getRiffCards read takes (upstream's
// maximum); maxPages bounds a deck read.
const (
	pageSize = 512
	maxPages = 64
)

// card is one card of a deck.
type card struct {
	DeckID     string `json:"deckID"`
	CardID     string `json:"cardID"`
	BlockID    string `json:"blockID"`
	Notebook   string `json:"notebook"`
	Reps       int    `json:"reps"`
	Lapses     int    `json:"lapses"`
	State      int    `json:"state"`
	LastReview string `json:"lastReview"`
	Due        string `json:"due,omitempty"`
}

// deckCards reads every card of a deck, by block id. A card whose block is
// gone (SiYuan shows it without a card id) is left out.
func deckCards(ctx context.Context, env *tools.Env, deckID string) (map[string]card, error) {
	// The cards' blocks come from the SQL index, which lags writes.
	if err := env.Kernel.FlushTransaction(ctx); err != nil {
		return nil, err
	}
	out := map[string]card{}
	for page := 1; page <= maxPages; page++ {
		res, err := env.Kernel.GetRiffCards(ctx, deckID, page, pageSize)
		if err != nil {
			return nil, err
		}
		for _, b := range res.Blocks {
			st, err := siyuan.CardState(b)
			if err != nil {
				return nil, err
			}
			if b.RiffCardID == "" || st == nil {
				continue
			}
			c := card{DeckID: deckID, CardID: b.RiffCardID, BlockID: b.ID, Notebook: b.Box, Reps: st.Reps, Lapses: st.Lapses, State: st.State, LastReview: st.LastReview}
			if st.State != 0 {
				c.Due = st.Due
			}
			out[b.ID] = c
		}
		if page >= res.PageCount {
			return out, nil
		}
	}
	e := failure.Invalid("deck %s holds more than %d cards, more than a guarded write reads; nothing was changed", deckID, maxPages*pageSize)
	return nil, e.Attempted(false)
}

// cardState is one card, or Exists false.
type cardState struct {
	Exists bool  `json:"exists"`
	Card   *card `json:"card,omitempty"`
}

func readCard(ctx context.Context, env *tools.Env, deckID, cardID string) (cardState, error) {
	cards, err := deckCards(ctx, env, deckID)
	if err != nil {
		return cardState{}, err
	}
	for _, c := range cards {
		if c.CardID == cardID {
			if !tools.Visible(ctx, c.Notebook) {
				// A card of a hidden notebook is not there for the
				// call: it answers as a card the deck does not hold.
				break
			}
			return cardState{Exists: true, Card: &c}, nil
		}
	}
	return cardState{}, nil
}

// blocksState is the cards of some blocks in a deck, in block order ("" card
// id: none), with each block's custom-riff-decks attribute.
type blocksState struct {
	DeckID string       `json:"deckID"`
	Blocks []blockCards `json:"blocks"`
}

type blockCards struct {
	BlockID string `json:"blockID"`
	Exists  bool   `json:"exists"`
	Decks   string `json:"decks"` // custom-riff-decks
	Card    *card  `json:"card,omitempty"`
}

func readBlocks(ctx context.Context, env *tools.Env, deckID string, ids []string) (blocksState, error) {
	st := blocksState{DeckID: deckID, Blocks: []blockCards{}}
	cards, err := deckCards(ctx, env, deckID)
	if err != nil {
		return st, err
	}
	for _, id := range ids {
		b := blockCards{BlockID: id}
		ok, err := env.Kernel.CheckBlockExist(ctx, id)
		if err != nil {
			return st, err
		}
		if ok {
			attrs, err := env.Kernel.GetBlockAttrs(ctx, id)
			if err != nil {
				return st, err
			}
			b.Exists, b.Decks = true, attrs["custom-riff-decks"]
		}
		if c, ok := cards[id]; ok {
			b.Card = &c
		}
		st.Blocks = append(st.Blocks, b)
	}
	return st, nil
}

// hasDeck reports whether a block's custom-riff-decks names the deck.
func (b blockCards) hasDeck(deck string) bool {
	return slices.Contains(splitDecks(b.Decks), deck)
}

func splitDecks(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	return out
}
