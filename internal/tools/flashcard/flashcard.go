// Package flashcard is the flashcard tool: SiYuan's decks and cards (riff)
// with upstream Sisyphus's action names and arguments: the due cards (of
// all, a deck, a notebook or a document), the decks, a deck's cards, and
// the writes: review a card (a rating, or skip it), make cards of blocks,
// remove them. Cards belong to blocks, so a card's notebook is its
// block's; reads show only cards of notebooks the call may see.
package flashcard

import (
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// Tool returns the flashcard tool.
func Tool() *tools.Tool {
	return &tools.Tool{
		Name:  "flashcard",
		Title: "Flashcards",
		Description: "SiYuan's flashcards: list due cards (of all, a deck, a notebook or a document; SiYuan reads only the built-in deck " +
			"for all, notebook and document) with their front and back, list decks and a deck's cards; review a card with a rating " +
			"1 again, 2 hard, 3 good, 4 easy (or skip it for this session), make cards of blocks, remove cards. Writes are strict: " +
			"call with validateOnly:true first, then repeat with the requestId (and expectedStateHash) it returns.",
		Actions: []*tools.Action{listCards.Action(), getDecks.Action(), getCards.Action(), reviewCard.Action(), createCard.Action(), removeCard.Action()},
	}
}
