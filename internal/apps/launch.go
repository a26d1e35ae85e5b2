package apps

import (
	"errors"
	"fmt"
)

// What each launcher reads and hands its view. The reads run as the
// agent's own would (the gate leaves out what a hidden notebook holds);
// these functions only choose them and shape their answers.

// openFlashcards reads the due cards of one deck, or of every deck; in
// upstream's form (cards), of each deck a chosen card is in.
func openFlashcards(in Args) ([]map[string]any, error) {
	chosen, err := chosenCards(in)
	if err != nil {
		return nil, err
	}
	if chosen != nil {
		var reads []map[string]any
		seen := map[string]bool{}
		for _, c := range chosen {
			if !seen[c.deck] {
				seen[c.deck] = true
				reads = append(reads, map[string]any{"action": "list_cards", "scope": "deck", "deckID": c.deck, "filter": "due"})
			}
		}
		return reads, nil
	}
	read := map[string]any{"action": "list_cards", "scope": "all", "filter": "due"}
	if d := in.str("deckID"); d != "" {
		read["scope"], read["deckID"] = "deck", d
	}
	return []map[string]any{read}, nil
}

// maxChosen bounds upstream's cards, as upstream does.
const maxChosen = 20

// chosenCard is one card of upstream's form of the launcher.
type chosenCard struct{ deck, card string }

// chosenCards are upstream's form of the launcher (cards: [{deckID,
// cardID}], 1-20, picked by the model from list_cards), in order; nil
// without it. Upstream checks them against a list_cards snapshot its
// candidateToken names; here against what is due now (the read the
// session makes anyway), so the token is accepted and not needed.
func chosenCards(in Args) ([]chosenCard, error) {
	raw, ok := in["cards"]
	if !ok {
		return nil, nil
	}
	list, ok := raw.([]any)
	if !ok || len(list) == 0 || len(list) > maxChosen {
		return nil, fmt.Errorf("cards must be a list of 1-%d {deckID, cardID} from flashcard list_cards", maxChosen)
	}
	out := make([]chosenCard, 0, len(list))
	for i, c := range list {
		obj, _ := c.(map[string]any)
		deck, _ := obj["deckID"].(string)
		id, _ := obj["cardID"].(string)
		if deck == "" || id == "" {
			return nil, fmt.Errorf("cards[%d] must be {deckID, cardID} as flashcard list_cards answered them", i)
		}
		out = append(out, chosenCard{deck, id})
	}
	return out, nil
}

// presentFlashcards hands the view at most limit cards, in SiYuan's order,
// or, in upstream's form, the chosen cards that are due now, in the order
// chosen. The model gets their count: it never needs to see the cards it
// must not quiz the person on.
func presentFlashcards(in Args, answers []map[string]any) (map[string]any, string) {
	limit := 20
	if n, ok := in["limit"].(float64); ok && n >= 1 {
		limit = min(int(n), 50) // the schema's bound, whatever was sent
	}
	cards, _ := answers[0]["cards"].([]any)
	due := len(cards)
	if chosen, _ := chosenCards(in); chosen != nil {
		byID := map[chosenCard]any{}
		due = 0
		for _, a := range answers {
			list, _ := a["cards"].([]any)
			due += len(list)
			for _, c := range list {
				if m, ok := c.(map[string]any); ok {
					deck, _ := m["deckID"].(string)
					id, _ := m["cardID"].(string)
					byID[chosenCard{deck, id}] = c
				}
			}
		}
		cards = []any{}
		for _, c := range chosen {
			if card, ok := byID[c]; ok {
				cards = append(cards, card)
				delete(byID, c) // a card chosen twice is reviewed once
			}
		}
		view := map[string]any{"cards": cards, "count": len(cards), "due": due, "chosen": len(chosen)}
		return view, fmt.Sprintf("The review session is open in the App with %d of the %d cards chosen (the others are not due now); the person reviews and rates them there. Do not quiz them or rate cards yourself.", len(cards), len(chosen))
	}
	if len(cards) > limit {
		cards = cards[:limit]
	}
	view := map[string]any{"cards": cards, "count": len(cards), "due": due}
	if d := in.str("deckID"); d != "" {
		view["deckID"] = d
	}
	return view, fmt.Sprintf("The review session is open in the App with %d of %d due cards; the person reviews and rates them there. Do not quiz them or rate cards yourself.", len(cards), due)
}

// openTimeline reads a document's nodes (or the workspace's) and, with a
// tag, that node's comparison with the document now.
func openTimeline(in Args) ([]map[string]any, error) {
	doc, tag := in.str("documentId"), in.str("tag")
	if tag != "" && doc == "" {
		return nil, errors.New("tag needs documentId")
	}
	list := map[string]any{"action": "list_nodes", "scope": "global"}
	if doc != "" {
		list["scope"], list["documentId"] = "all", doc
	}
	reads := []map[string]any{list}
	if tag != "" {
		reads = append(reads, map[string]any{"action": "compare_node", "documentId": doc, "tag": tag, "pageSize": 100})
	}
	return reads, nil
}

// presentTimeline hands the view the nodes and the comparison.
func presentTimeline(in Args, answers []map[string]any) (map[string]any, string) {
	view := map[string]any{"nodes": answers[0]["nodes"], "total": answers[0]["total"]}
	if d := in.str("documentId"); d != "" {
		view["documentId"] = d
	}
	if len(answers) > 1 {
		view["comparison"] = answers[1]
	}
	return view, fmt.Sprintf("The timeline App is open with %v nodes. The person acts on them there; do not roll back yourself.", answers[0]["total"])
}

// openShop reads the mascot's balance and the shop's items.
func openShop(Args) ([]map[string]any, error) {
	return []map[string]any{{"action": "get_balance"}, {"action": "shop"}}, nil
}

// presentShop hands the view the balance and the items as the shop lists
// them (id, label, cost, type, emoji). Nothing is owned: a bought item is
// consumed, so the view offers every item again after a purchase.
func presentShop(_ Args, answers []map[string]any) (map[string]any, string) {
	items, _ := answers[1]["items"].([]any)
	if items == nil {
		items = []any{}
	}
	view := map[string]any{"balance": answers[0]["balance"], "totalEarned": answers[0]["totalEarned"], "items": items}
	return view, fmt.Sprintf("The mascot shop is open in the App (balance: %v coins); the person buys there. Do not buy on their behalf.", answers[0]["balance"])
}
