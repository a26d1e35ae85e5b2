package siyuan

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// Flashcards (riff), as SiYuan 3.7.3 keeps them: decks of cards, each card
// bound to one block (a block has at most one card per deck), scheduled by
// FSRS. The built-in deck (BuiltinDeckID) is made on the first card added
// to it and never listed by GetRiffDecks; the due-card reads of all decks,
// of a notebook and of a document read only the built-in deck. Adding a
// card also appends the deck's id to the block's custom-riff-decks
// attribute; removing it takes the id away.
//
// A due-card read without reviewedCards starts a new review session: it
// forgets the cards skipped and the reviews an undo could restore. A
// review of a card already reviewed in the session restores the card as
// it was first and reviews that again (SiYuan's undo).

// BuiltinDeckID is the id of SiYuan's built-in deck.
const BuiltinDeckID = "20230218211946-2kw8jgx"

// RiffDeck is a deck as the riff endpoints answer it: created and updated
// as "2006-01-02 15:04:05" in the kernel's time zone; Size its cards.
type RiffDeck struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Size    int    `json:"size"`
	Created string `json:"created"`
	Updated string `json:"updated"`
}

// DueCard is one card of a due-card read (see wire.DueCard).
type DueCard = wire.DueCard

// DueCards is a due-card read: the cards (nil for an unknown deck) and the
// counts of the session's cards not reviewed yet.
type DueCards struct {
	Cards                  []DueCard `json:"cards"`
	UnreviewedCount        int       `json:"unreviewedCount"`
	UnreviewedNewCardCount int       `json:"unreviewedNewCardCount"`
	UnreviewedOldCardCount int       `json:"unreviewedOldCardCount"`
}

// RiffCardState is a card's schedule as GetRiffCards shows it on its
// block: Due and LastReview as RFC 3339 times. A new card's Due is the
// time of the read (it has none of its own).
type RiffCardState struct {
	Due        string `json:"due"`
	Reps       int    `json:"reps"`
	Lapses     int    `json:"lapses"`
	State      int    `json:"state"`
	LastReview string `json:"lastReview"`
}

// RiffCardsPage is one page of a deck's cards: each a block with its
// card's id and schedule, sorted by due time. A card whose block is gone
// has an empty RiffCardID and Content "Search content block does not
// exist".
type RiffCardsPage struct {
	Blocks    []Block `json:"blocks"`
	Total     int     `json:"total"`
	PageCount int     `json:"pageCount"`
}

// CardState decodes a page block's card schedule (nil when it has none).
func CardState(b Block) (*RiffCardState, error) {
	if len(b.RiffCard) == 0 || string(b.RiffCard) == "null" {
		return nil, nil
	}
	var s RiffCardState
	if err := json.Unmarshal(b.RiffCard, &s); err != nil {
		return nil, fmt.Errorf("siyuan: riffCard of %s: %w", b.ID, err)
	}
	return &s, nil
}

type reviewedCard struct {
	CardID string `json:"cardID"`
}

func reviewedOf(ids []string) []reviewedCard {
	if ids == nil {
		return nil
	}
	out := make([]reviewedCard, len(ids))
	for i, id := range ids {
		out[i] = reviewedCard{id}
	}
	return out
}

// GetRiffDecks lists the decks, the built-in one left out, most recently
// updated first.
func (c *Client) GetRiffDecks(ctx context.Context) ([]RiffDeck, error) {
	var out []RiffDeck
	if err := c.call(ctx, endpoint.GetRiffDecks, kindOf(endpoint.GetRiffDecks), struct{}{}, &out, true); err != nil {
		return nil, err
	}
	if out == nil {
		out = []RiffDeck{}
	}
	return out, nil
}

// CreateRiffDeck makes an empty deck.
func (c *Client) CreateRiffDeck(ctx context.Context, name string) (RiffDeck, error) {
	var out RiffDeck
	err := c.invoke(ctx, endpoint.CreateRiffDeck, struct {
		Name string `json:"name"`
	}{name}, &out)
	return out, err
}

// RemoveRiffDeck removes a deck and its cards (the blocks keep their
// custom-riff-decks attribute).
func (c *Client) RemoveRiffDeck(ctx context.Context, deckID string) error {
	return c.invoke(ctx, endpoint.RemoveRiffDeck, struct {
		DeckID string `json:"deckID"`
	}{deckID}, nil)
}

type deckBlocks struct {
	DeckID   string   `json:"deckID"`
	BlockIDs []string `json:"blockIDs"`
}

// AddRiffCards makes a card of each block in the deck (a block that has
// one already keeps it) and answers the deck. SiYuan quirks: an unknown
// deck answers nil (and the blocks' attribute still gains its id); an id
// that names no block still gets a card.
func (c *Client) AddRiffCards(ctx context.Context, deckID string, blockIDs []string) (*RiffDeck, error) {
	var out *RiffDeck
	if err := c.call(ctx, endpoint.AddRiffCards, kindOf(endpoint.AddRiffCards), deckBlocks{deckID, nonNil(blockIDs)}, &out, true); err != nil {
		return nil, err
	}
	return out, nil
}

// RemoveRiffCards removes the blocks' cards from the deck ("" : from every
// deck, answering nil) and answers the deck.
func (c *Client) RemoveRiffCards(ctx context.Context, deckID string, blockIDs []string) (*RiffDeck, error) {
	var out *RiffDeck
	if err := c.call(ctx, endpoint.RemoveRiffCards, kindOf(endpoint.RemoveRiffCards), deckBlocks{deckID, nonNil(blockIDs)}, &out, true); err != nil {
		return nil, err
	}
	return out, nil
}

// GetRiffCards is one page (from 1) of a deck's cards, pageSize of them
// (0: the kernel's 20).
func (c *Client) GetRiffCards(ctx context.Context, deckID string, page, pageSize int) (RiffCardsPage, error) {
	req := map[string]any{"id": deckID, "page": page}
	if pageSize > 0 {
		req["pageSize"] = pageSize
	}
	var out RiffCardsPage
	if err := c.invoke(ctx, endpoint.GetRiffCards, req, &out); err != nil {
		return RiffCardsPage{}, err
	}
	if out.Blocks == nil {
		out.Blocks = []Block{}
	}
	return out, nil
}

// GetRiffDueCards lists a deck's due cards ("": the built-in deck's), at
// most 20 new and 200 others. reviewed are the cards reviewed in this
// session (nil starts a new session).
func (c *Client) GetRiffDueCards(ctx context.Context, deckID string, reviewed []string) (DueCards, error) {
	return c.dueCards(ctx, endpoint.GetRiffDueCards, map[string]any{"deckID": deckID}, reviewed)
}

// GetNotebookRiffDueCards lists the built-in deck's due cards of a
// notebook's blocks.
func (c *Client) GetNotebookRiffDueCards(ctx context.Context, notebook string, reviewed []string) (DueCards, error) {
	return c.dueCards(ctx, endpoint.GetNotebookRiffDueCards, map[string]any{"notebook": notebook}, reviewed)
}

// GetTreeRiffDueCards lists the built-in deck's due cards of a document's
// blocks.
func (c *Client) GetTreeRiffDueCards(ctx context.Context, rootID string, reviewed []string) (DueCards, error) {
	return c.dueCards(ctx, endpoint.GetTreeRiffDueCards, map[string]any{"rootID": rootID}, reviewed)
}

func (c *Client) dueCards(ctx context.Context, ep string, req map[string]any, reviewed []string) (DueCards, error) {
	if reviewed != nil {
		req["reviewedCards"] = reviewedOf(reviewed)
	}
	var out DueCards
	err := c.invoke(ctx, ep, req, &out)
	return out, err
}

// ReviewRiffCard rates a card (1 again, 2 hard, 3 good, 4 easy) and
// reschedules it. An unknown deck or card answers success and changes
// nothing.
func (c *Client) ReviewRiffCard(ctx context.Context, deckID, cardID string, rating int, reviewed []string) error {
	req := map[string]any{"deckID": deckID, "cardID": cardID, "rating": rating}
	if reviewed != nil {
		req["reviewedCards"] = reviewedOf(reviewed)
	}
	return c.invoke(ctx, endpoint.ReviewRiffCard, req, nil)
}

// SkipReviewRiffCard leaves a card out of the rest of the review session
// (in the kernel's memory only: the card's schedule does not change).
func (c *Client) SkipReviewRiffCard(ctx context.Context, deckID, cardID string) error {
	return c.invoke(ctx, endpoint.SkipReviewRiffCard, map[string]any{"deckID": deckID, "cardID": cardID}, nil)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
