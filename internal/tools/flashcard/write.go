package flashcard

import (
	"context"
	"fmt"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

var guarded = strict.WritePolicy{Class: strict.Mutation, Precondition: strict.ExpectedStateHash}

// reviewArgs' deckID is checked by Validate, whose refusal says where a
// card's deck is found.
type reviewArgs struct {
	DeckID string `arg:"deckID" help:"the card's deck (get_cards and list_cards name it) (a SiYuan id like 20260812120000-abcdefg)" required:""`
	CardID string `arg:"cardID" help:"the card" id:"" required:""`
	Rated  *int   `arg:"rating" help:"1 again, 2 hard, 3 good, 4 easy; required unless skip" min:"1" max:"4"`
	Skip   bool   `arg:"skip" help:"skip the card for this session instead of rating it"`
	reviewedArg
	Rating int // the rating given (0 when skipped)
}

// deckOrEvery checks a deck id where "" names every deck (or the
// built-in one).
func deckOrEvery(id string) error {
	if id == "" {
		return nil
	}
	return tools.CheckID("deckID", id)
}

// ratings are FSRS's: 1 again, 2 hard, 3 good, 4 easy.
var ratingNames = map[int]string{1: "again", 2: "hard", 3: "good", 4: "easy"}

var reviewCard = tools.WriteWith[reviewArgs, cardState, card]{Write: tools.Write[reviewArgs, cardState]{
	Name: "review_card", Summary: "review a card with a rating (1 again, 2 hard, 3 good, 4 easy), which reschedules it, or skip it for this review session (SiYuan keeps skips in memory only: the card's schedule does not change, and the receipt says no_change)",
	Policy:  guarded,
	Example: map[string]any{"deckID": siyuan.BuiltinDeckID, "cardID": "20260812120000-abcdefg", "rating": 3, "validateOnly": true},
	Validate: func(r *reviewArgs) error {
		if err := tools.CheckID("deckID", r.DeckID); err != nil {
			return failure.Invalid("review_card needs the card's deck: find it with get_cards or list_cards (%s)", err.Error())
		}
		switch {
		case r.Skip && r.Rated != nil:
			return failure.Invalid("give rating or skip:true, not both")
		case !r.Skip && r.Rated == nil:
			return failure.Invalid("rating is required unless skip is true: 1 again, 2 hard, 3 good, 4 easy")
		case r.Rated != nil:
			r.Rating = *r.Rated
		}
		return r.reviewedArg.parse()
	},
	Scope: tools.Scope[reviewArgs]{Resolve: func(ctx context.Context, env *tools.Env, r reviewArgs) ([]tools.Touch, error) {
		st, err := readCard(ctx, env, r.DeckID, r.CardID)
		if err != nil || !st.Exists {
			return nil, err // a missing card is the state's not_found
		}
		return []tools.Touch{tools.OnBlock(st.Card.BlockID, tools.LevelWrite)}, nil
	}},
	Targets: func(r reviewArgs) []string { return []string{r.CardID} },
	State: func(ctx context.Context, env *tools.Env, r reviewArgs) (cardState, error) {
		return readCard(ctx, env, r.DeckID, r.CardID)
	},
	Check: func(r reviewArgs, st cardState) error {
		if !st.Exists {
			return failure.New(failure.NotFound, "card %s is not in deck %s", r.CardID, r.DeckID).Attempted(false)
		}
		return nil
	},
},
	// The card as it was before hands the readback what a review moves on.
	Execute: func(ctx context.Context, env *tools.Env, r reviewArgs, st cardState) (tools.Payload, card, error) {
		before := *st.Card
		p := tools.Payload{"deckID": r.DeckID, "cardID": r.CardID, "blockID": st.Card.BlockID}
		if r.Skip {
			if err := env.Kernel.SkipReviewRiffCard(ctx, r.DeckID, r.CardID); err != nil {
				return nil, before, tools.WriteFailure(err, false)
			}
			p["skip"] = true
			return p, before, nil
		}
		if err := env.Kernel.ReviewRiffCard(ctx, r.DeckID, r.CardID, r.Rating, r.Reviewed); err != nil {
			return nil, before, tools.WriteFailure(err, false)
		}
		p["rating"], p["ratingName"] = r.Rating, ratingNames[r.Rating]
		return p, before, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, r reviewArgs, p tools.Payload, before card) (any, error) {
		st, err := tools.Await(ctx, func(ctx context.Context) (cardState, error) {
			return readCard(ctx, env, r.DeckID, r.CardID)
		}, func(st cardState) error {
			switch {
			case !st.Exists:
				return fmt.Errorf("card %s left deck %s", r.CardID, r.DeckID)
			case st.Card.BlockID != before.BlockID:
				return fmt.Errorf("card %s is now of block %s", r.CardID, st.Card.BlockID)
			case r.Skip && *st.Card != before:
				return fmt.Errorf("a skip changed the card's schedule: %+v", *st.Card)
			case !r.Skip:
				return reviewed(before, *st.Card)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if !r.Skip {
			p["due"], p["state"], p["reps"] = st.Card.Due, st.Card.State, st.Card.Reps
		}
		return st, nil
	},
}

// reviewed checks a card was reviewed: its last review moved forward and
// it has a due time of its own. (A second review in one session first
// restores the card as it was, so reps need not grow.)
func reviewed(before, after card) error {
	last, err := time.Parse(time.RFC3339Nano, after.LastReview)
	if err != nil {
		return fmt.Errorf("card %s: last review %q: %w", after.CardID, after.LastReview, err)
	}
	if prev, err := time.Parse(time.RFC3339Nano, before.LastReview); err == nil && !last.After(prev) {
		return fmt.Errorf("card %s was not reviewed: its last review is still %s", after.CardID, after.LastReview)
	}
	if after.Reps < 1 || after.Due == "" {
		return fmt.Errorf("card %s reads back unscheduled: %+v", after.CardID, after)
	}
	return nil
}

// blocksArgs are remove_card's, and with mode create_card's: a deck and
// blocks.
type blocksArgs struct {
	DeckID   string   `arg:"deckID" help:"the deck; \"\" for the built-in deck" required:""`
	BlockIDs []string `arg:"blockIDs" help:"the blocks" id:"" required:""`
	Deck     string   // the deck written
}

// createArgs are create_card's.
type createArgs struct {
	blocksArgs
	Mode string `arg:"mode" help:"accepted for upstream's sake: SiYuan does the same in both" enum:"full,attach" default:"full"`
}

func parseBlocks(b *blocksArgs) error {
	if err := deckOrEvery(b.DeckID); err != nil {
		return err
	}
	b.Deck = b.DeckID
	if b.Deck == "" {
		b.Deck = siyuan.BuiltinDeckID
	}
	if len(b.BlockIDs) == 0 {
		return failure.Invalid("blockIDs must name at least one block")
	}
	seen := map[string]bool{}
	for _, id := range b.BlockIDs {
		if seen[id] {
			return failure.Invalid("blockIDs names %s twice", id)
		}
		seen[id] = true
	}
	return nil
}

// deckExists reports whether a deck exists (the built-in deck always may
// take cards: SiYuan makes it on the first).
func deckExists(ctx context.Context, env *tools.Env, id string) (bool, error) {
	if id == siyuan.BuiltinDeckID {
		return true, nil
	}
	decks, err := env.Kernel.GetRiffDecks(ctx)
	if err != nil {
		return false, err
	}
	for _, d := range decks {
		if d.ID == id {
			return true, nil
		}
	}
	return false, nil
}

// createState is what create_card checks: the deck and the blocks.
type createState struct {
	DeckExists bool        `json:"deckExists"`
	Blocks     blocksState `json:"blocks"`
	Docs       []string    `json:"docs"`
}

var createCard = tools.Write[createArgs, createState]{
	Name: "create_card", Summary: "make a card of each block in a deck (a block keeps the card it has there); SiYuan also records the deck in the block's custom-riff-decks attribute",
	Policy:   strict.WritePolicy{Class: strict.Additive},
	Example:  map[string]any{"deckID": "", "blockIDs": []string{"20260812120000-abcdefg"}, "validateOnly": true},
	Validate: func(c *createArgs) error { return parseBlocks(&c.blocksArgs) },
	Scope:    tools.Scope[createArgs]{Touches: func(b createArgs) []tools.Touch { return tools.OnBlocks(b.BlockIDs, tools.LevelWrite) }},
	Targets:  func(b createArgs) []string { return b.BlockIDs },
	State: func(ctx context.Context, env *tools.Env, b createArgs) (createState, error) {
		ok, err := deckExists(ctx, env, b.Deck)
		if err != nil || !ok {
			return createState{}, err
		}
		bs, err := readBlocks(ctx, env, b.Deck, b.BlockIDs)
		if err != nil {
			return createState{}, err
		}
		st := createState{DeckExists: true, Blocks: bs, Docs: []string{}}
		for _, blk := range bs.Blocks {
			if !blk.Exists {
				continue
			}
			info, err := env.Kernel.GetBlockAttrs(ctx, blk.BlockID)
			if err != nil {
				return st, err
			}
			if info["type"] == "doc" {
				st.Docs = append(st.Docs, blk.BlockID)
			}
		}
		return st, nil
	},
	Check: func(b createArgs, st createState) error {
		if !st.DeckExists {
			return failure.Missing("deck", b.Deck).Attempted(false)
		}
		for _, blk := range st.Blocks.Blocks {
			if !blk.Exists {
				return failure.Missing("block", blk.BlockID).Attempted(false)
			}
		}
		if len(st.Docs) > 0 {
			return failure.Invalid("%s is a document, which cannot be a card: give a block of it (a paragraph, a heading)", st.Docs[0]).Attempted(false)
		}
		return nil
	},
	Execute: func(ctx context.Context, env *tools.Env, b createArgs, _ createState) (tools.Payload, error) {
		d, err := env.Kernel.AddRiffCards(ctx, b.Deck, b.BlockIDs)
		if err != nil {
			return nil, tools.WriteFailure(err, false)
		}
		p := tools.Payload{"deckID": b.DeckID, "effectiveDeckID": b.Deck, "blockIDs": b.BlockIDs, "mode": b.Mode}
		if d != nil {
			p["deckSize"] = d.Size
		}
		return p, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, b createArgs, p tools.Payload) (any, error) {
		st, err := tools.Await(ctx, func(ctx context.Context) (blocksState, error) {
			return readBlocks(ctx, env, b.Deck, b.BlockIDs)
		}, func(st blocksState) error {
			for _, blk := range st.Blocks {
				if blk.Card == nil || !blk.hasDeck(b.Deck) {
					return fmt.Errorf("block %s reads back without a card in deck %s (attribute %q)", blk.BlockID, b.Deck, blk.Decks)
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		cards := make([]map[string]string, 0, len(st.Blocks))
		for _, blk := range st.Blocks {
			cards = append(cards, map[string]string{"blockID": blk.BlockID, "cardID": blk.Card.CardID})
		}
		p["cards"] = cards
		return st, nil
	},
}

var removeCard = tools.Write[blocksArgs, blocksState]{
	Name: "remove_card", Summary: "remove the blocks' cards from a deck, with their review history (a person must confirm)",
	Policy: guarded, Destructive: true, Dangerous: true,
	Example:  map[string]any{"deckID": "", "blockIDs": []string{"20260812120000-abcdefg"}, "validateOnly": true},
	Validate: parseBlocks,
	// A card's review history goes with it, beyond undo: as upstream asks
	// for a dangerous action, the blocks' notebooks must allow delete.
	Scope:   tools.Scope[blocksArgs]{Touches: func(b blocksArgs) []tools.Touch { return tools.OnBlocks(b.BlockIDs, tools.LevelDelete) }},
	Targets: func(b blocksArgs) []string { return b.BlockIDs },
	State: func(ctx context.Context, env *tools.Env, b blocksArgs) (blocksState, error) {
		ok, err := deckExists(ctx, env, b.Deck)
		if err != nil {
			return blocksState{}, err
		}
		if !ok {
			return blocksState{DeckID: b.Deck}, nil
		}
		return readBlocks(ctx, env, b.Deck, b.BlockIDs)
	},
	Check: func(b blocksArgs, st blocksState) error {
		for _, blk := range st.Blocks {
			if blk.Card != nil {
				return nil
			}
		}
		return failure.New(failure.NotFound, "no block of blockIDs has a card in deck %s; nothing to remove", b.Deck).Attempted(false)
	},
	Execute: func(ctx context.Context, env *tools.Env, b blocksArgs, st blocksState) (tools.Payload, error) {
		if _, err := env.Kernel.RemoveRiffCards(ctx, b.Deck, b.BlockIDs); err != nil {
			return nil, tools.WriteFailure(err, false)
		}
		var removed []string
		for _, blk := range st.Blocks {
			if blk.Card != nil {
				removed = append(removed, blk.Card.CardID)
			}
		}
		return tools.Payload{"deckID": b.DeckID, "effectiveDeckID": b.Deck, "blockIDs": b.BlockIDs, "removedCardIDs": removed}, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, b blocksArgs, _ tools.Payload) (any, error) {
		return tools.Await(ctx, func(ctx context.Context) (blocksState, error) {
			return readBlocks(ctx, env, b.Deck, b.BlockIDs)
		}, func(st blocksState) error {
			for _, blk := range st.Blocks {
				if blk.Card != nil || blk.hasDeck(b.Deck) {
					return fmt.Errorf("block %s still has a card in deck %s (attribute %q)", blk.BlockID, b.Deck, blk.Decks)
				}
			}
			return nil
		})
	},
}
