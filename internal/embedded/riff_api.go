package embedded

import (
	"context"
	"encoding/json"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/88250/lute/ast"
	fsrs "github.com/open-spaced-repetition/go-fsrs/v3"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// The riff endpoints of SiYuan 3.7.3 (kernel/api/riff.go). Where SiYuan's
// handler dereferences a deck that does not exist, it panics after its
// deferred reply was set up, and the client sees code 0 with data null:
// these handlers answer that.

func (k *Kernel) riffRoutes() map[string]route {
	return map[string]route{
		endpoint.CreateRiffDeck:          {json: k.createRiffDeck},
		endpoint.RemoveRiffDeck:          {json: k.removeRiffDeck},
		endpoint.GetRiffDecks:            {json: k.getRiffDecks, emptyOK: true, anyBody: true},
		endpoint.AddRiffCards:            {json: k.addRiffCards},
		endpoint.RemoveRiffCards:         {json: k.removeRiffCards},
		endpoint.GetRiffCards:            {json: k.getRiffCards},
		endpoint.GetRiffDueCards:         {json: k.getRiffDueCards},
		endpoint.GetNotebookRiffDueCards: {json: k.getNotebookRiffDueCards},
		endpoint.GetTreeRiffDueCards:     {json: k.getTreeRiffDueCards},
		endpoint.ReviewRiffCard:          {json: k.reviewRiffCard},
		endpoint.SkipReviewRiffCard:      {json: k.skipReviewRiffCard},
	}
}

func (k *Kernel) createRiffDeck(ctx context.Context, a args) (any, error) {
	name, err := a.str("name")
	if err != nil {
		return nil, nil // SiYuan panics on a missing name: code 0, data null
	}
	k.riff.mu.Lock()
	defer k.riff.mu.Unlock()
	if err := k.riffLocked(); err != nil {
		return nil, err
	}
	now := time.Now().UnixMilli()
	d := &riffDeck{ID: ast.NewNodeID(), Name: name, Created: now, Cards: []*riffCard{}}
	if err := k.saveDeckLocked(d); err != nil {
		return nil, err
	}
	k.riff.decks[d.ID] = d
	return deckData(d), nil
}

func (k *Kernel) removeRiffDeck(ctx context.Context, a args) (any, error) {
	id, err := a.str("deckID")
	if err != nil {
		return nil, nil
	}
	k.riff.mu.Lock()
	defer k.riff.mu.Unlock()
	if err := k.riffLocked(); err != nil {
		return nil, err
	}
	return nil, k.removeDeckFileLocked(id)
}

func (k *Kernel) getRiffDecks(ctx context.Context, a args) (any, error) {
	k.riff.mu.Lock()
	defer k.riff.mu.Unlock()
	if err := k.riffLocked(); err != nil {
		return nil, err
	}
	var decks []*riffDeck
	for _, d := range k.riff.sortedDecks() {
		if d.ID != riffBuiltinDeck {
			decks = append(decks, d)
		}
	}
	sort.SliceStable(decks, func(i, j int) bool { return decks[i].Updated > decks[j].Updated })
	out := []any{}
	for _, d := range decks {
		out = append(out, deckData(d))
	}
	return out, nil
}

// deckBlocksArgs reads deckID and blockIDs (SiYuan panics without them).
func deckBlocksArgs(a args) (string, []string, bool) {
	deck, err := a.str("deckID")
	if err != nil {
		return "", nil, false
	}
	ids, err := a.strList("blockIDs")
	return deck, ids, err == nil
}

// setDeckAttr rewrites a block's custom-riff-decks attribute.
func (k *Kernel) setDeckAttr(id string, edit func([]string) []string) error {
	tree, node, err := k.loadTreeOf(id)
	if err != nil {
		return nil // SiYuan skips blocks it cannot find
	}
	cur := strings.Split(node.IALAttr("custom-riff-decks"), ",")
	var out []string
	seen := map[string]bool{}
	for _, d := range edit(cur) {
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	val := strings.Trim(strings.Join(out, ","), ",")
	if val == "" {
		node.RemoveIALAttr("custom-riff-decks")
	} else {
		node.SetIALAttr("custom-riff-decks", val)
	}
	return k.writeTree(tree)
}

func (k *Kernel) addRiffCards(ctx context.Context, a args) (any, error) {
	deckID, blocks, ok := deckBlocksArgs(a)
	if !ok {
		return nil, nil
	}
	k.riff.mu.Lock()
	defer k.riff.mu.Unlock()
	if err := k.riffLocked(); err != nil {
		return nil, err
	}
	if k.riff.decks[deckID] == nil {
		// SiYuan makes the built-in deck whatever deck was named.
		if k.riff.decks[riffBuiltinDeck] == nil {
			d := &riffDeck{ID: riffBuiltinDeck, Name: "Built-in Deck", Created: time.Now().UnixMilli(), Cards: []*riffCard{}}
			if err := k.saveDeckLocked(d); err != nil {
				return nil, err
			}
			k.riff.decks[d.ID] = d
		}
	}
	// The attribute gains the deck's id even when the deck does not exist.
	for _, id := range blocks {
		if err := k.setDeckAttr(id, func(cur []string) []string { return append(cur, deckID) }); err != nil {
			return nil, err
		}
	}
	d := k.riff.decks[deckID]
	if d == nil {
		return nil, nil
	}
	for _, id := range blocks {
		// One card per block; an id that names no block gets one too.
		if d.cardOf(id) == nil {
			d.Cards = append(d.Cards, &riffCard{ID: ast.NewNodeID(), BlockID: id, C: fsrs.NewCard()})
		}
	}
	if err := k.saveDeckLocked(d); err != nil {
		return nil, err
	}
	return deckData(d), nil
}

func (k *Kernel) removeRiffCards(ctx context.Context, a args) (any, error) {
	deckID, blocks, ok := deckBlocksArgs(a)
	if !ok {
		return nil, nil
	}
	k.riff.mu.Lock()
	defer k.riff.mu.Unlock()
	if err := k.riffLocked(); err != nil {
		return nil, err
	}
	for _, id := range blocks {
		if err := k.setDeckAttr(id, func(cur []string) []string {
			var keep []string
			if deckID != "" {
				for _, d := range cur {
					if d != deckID && k.riff.decks[d] != nil {
						keep = append(keep, d)
					}
				}
			}
			return keep
		}); err != nil {
			return nil, err
		}
	}
	remove := func(d *riffDeck) error {
		if d == nil {
			return nil
		}
		drop := map[string]bool{}
		for _, id := range blocks {
			drop[id] = true
		}
		kept := d.Cards[:0]
		n := len(d.Cards)
		for _, c := range d.Cards {
			if !drop[c.BlockID] {
				kept = append(kept, c)
			}
		}
		d.Cards = kept
		if len(kept) == n {
			return nil
		}
		return k.saveDeckLocked(d)
	}
	if deckID == "" {
		for _, d := range k.riff.sortedDecks() {
			if err := remove(d); err != nil {
				return nil, err
			}
		}
		return nil, nil // the All deck answers no data
	}
	d := k.riff.decks[deckID]
	if err := remove(d); err != nil {
		return nil, err
	}
	return deckData(d), nil
}

func (k *Kernel) getRiffCards(ctx context.Context, a args) (any, error) {
	deckID, err := a.str("id")
	if err != nil {
		return nil, nil
	}
	page, err := a.optInt("page", math.MinInt)
	if err != nil || page == math.MinInt {
		return nil, nil
	}
	size, err := a.optInt("pageSize", 20)
	if err != nil {
		return nil, nil
	}
	k.riff.mu.Lock()
	var cards []riffCard
	if err := k.riffLocked(); err != nil {
		k.riff.mu.Unlock()
		return nil, err
	}
	for _, d := range k.riff.sortedDecks() {
		if deckID == "" || d.ID == deckID {
			for _, c := range d.Cards {
				cards = append(cards, *c)
			}
		}
	}
	k.riff.mu.Unlock()
	empty := map[string]any{"blocks": []any{}, "total": 0, "pageCount": 0}
	if deckID != "" && len(cards) == 0 {
		return empty, nil
	}
	sort.SliceStable(cards, func(i, j int) bool {
		d1, d2 := cards[i].C.Due, cards[j].C.Due
		if d1.IsZero() || d2.IsZero() {
			return cards[i].ID < cards[j].ID
		}
		return d1.Before(d2)
	})
	total := len(cards)
	pageCount := int(math.Ceil(float64(total) / float64(size)))
	start, end := min(max((page-1)*size, 0), total), min(max(page*size, 0), total)
	cards = cards[start:end]
	out := map[string]any{"blocks": []any{}, "total": total, "pageCount": pageCount}
	if len(cards) == 0 {
		return out, nil
	}
	rows, err := k.riffBlockRows(ctx, cards)
	if err != nil {
		return nil, err
	}
	blocks := make([]any, len(cards))
	for i, c := range cards {
		r := rows[c.BlockID]
		if r == nil {
			blocks[i] = &wire.Block{ID: c.BlockID, Content: "Search content block does not exist"}
			continue
		}
		b := searchBlockOf(r, func(s string, _ bool) string { return s })
		b.RiffCardID = c.ID
		due := c.C.Due
		if due.IsZero() {
			due = time.Now()
		}
		b.RiffCard, _ = json.Marshal(map[string]any{"due": due, "reps": c.C.Reps, "lapses": c.C.Lapses, "state": c.C.State, "lastReview": c.C.LastReview})
		blocks[i] = b
	}
	out["blocks"] = blocks
	return out, nil
}

// riffBlockRows reads the cards' blocks from the SQL index, as SiYuan's
// getCardsBlocks does (it lags writes like every SQL read).
func (k *Kernel) riffBlockRows(ctx context.Context, cards []riffCard) (map[string]map[string]any, error) {
	ids := make([]any, len(cards))
	marks := make([]string, len(cards))
	for i, c := range cards {
		ids[i], marks[i] = c.BlockID, "?"
	}
	rows, err := k.sql.db.QueryContext(ctx, "SELECT "+sqlBlockColumns+" FROM blocks WHERE id IN ("+strings.Join(marks, ", ")+")", ids...)
	if err != nil {
		return nil, errf("%s", err.Error())
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, errf("%s", err.Error())
	}
	out := map[string]map[string]any{}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, errf("%s", err.Error())
		}
		m := map[string]any{}
		for i, c := range cols {
			m[c] = vals[i]
		}
		id, _ := m["id"].(string)
		out[id] = m
	}
	return out, rows.Err()
}

// reviewedArg reads reviewedCards[].cardID.
func reviewedArg(a args) []string {
	l, _ := a["reviewedCards"].([]any)
	var out []string
	for _, x := range l {
		if m, ok := x.(map[string]any); ok {
			if id, ok := m["cardID"].(string); ok {
				out = append(out, id)
			}
		}
	}
	return out
}

func dueAnswer(cards []wire.DueCard, n, nNew, nOld int) map[string]any {
	var c any = cards
	if cards == nil {
		c = nil
	}
	return map[string]any{"cards": c, "unreviewedCount": n, "unreviewedNewCardCount": nNew, "unreviewedOldCardCount": nOld}
}

func (k *Kernel) getRiffDueCards(ctx context.Context, a args) (any, error) {
	deckID, err := a.str("deckID")
	if err != nil {
		return nil, nil
	}
	return k.dueOf(a, deckID, nil, deckID == "")
}

// dueOf answers a due-card read of one deck (builtinOnly: of the built-in
// deck, [] when it does not exist yet), of the given blocks when set.
func (k *Kernel) dueOf(a args, deckID string, blocks map[string]bool, all bool) (any, error) {
	k.riff.mu.Lock()
	defer k.riff.mu.Unlock()
	if err := k.riffLocked(); err != nil {
		return nil, err
	}
	if all {
		deckID = riffBuiltinDeck
	}
	d := k.riff.decks[deckID]
	if d == nil {
		if all {
			return dueAnswer([]wire.DueCard{}, 0, 0, 0), nil
		}
		return dueAnswer(nil, 0, 0, 0), nil
	}
	cards, n, nNew, nOld := k.dueCardsLocked(d, reviewedArg(a), blocks)
	now := time.Now()
	out := []wire.DueCard{}
	for _, c := range cards {
		out = append(out, newDueFlashcard(c, d.ID, now))
	}
	return dueAnswer(out, n, nNew, nOld), nil
}

func (k *Kernel) getNotebookRiffDueCards(ctx context.Context, a args) (any, error) {
	box, err := a.str("notebook")
	if err != nil {
		return nil, nil
	}
	blocks := map[string]bool{}
	k.mu.RLock()
	for id, loc := range k.blocks {
		if d := k.docs[loc.Root]; d != nil && d.tree.Box == box {
			blocks[id] = true
		}
	}
	k.mu.RUnlock()
	return k.dueBuiltinOf(a, blocks)
}

func (k *Kernel) getTreeRiffDueCards(ctx context.Context, a args) (any, error) {
	root, err := a.str("rootID")
	if err != nil {
		return nil, nil
	}
	blocks := map[string]bool{}
	k.mu.RLock()
	if top := k.docs[root]; top != nil {
		prefix := strings.TrimSuffix(top.tree.Path, ".sy")
		for id, loc := range k.blocks {
			d := k.docs[loc.Root]
			if d != nil && d.tree.Box == top.tree.Box && (loc.Root == root || strings.HasPrefix(d.tree.Path, prefix+"/")) {
				blocks[id] = true
			}
		}
	}
	k.mu.RUnlock()
	return k.dueBuiltinOf(a, blocks)
}

// dueBuiltinOf is a notebook's or document's due cards: the built-in
// deck's only (null cards while it does not exist).
func (k *Kernel) dueBuiltinOf(a args, blocks map[string]bool) (any, error) {
	k.riff.mu.Lock()
	if err := k.riffLocked(); err != nil {
		k.riff.mu.Unlock()
		return nil, err
	}
	missing := k.riff.decks[riffBuiltinDeck] == nil
	k.riff.mu.Unlock()
	if missing {
		return dueAnswer(nil, 0, 0, 0), nil
	}
	return k.dueOf(a, riffBuiltinDeck, blocks, false)
}

func (k *Kernel) reviewRiffCard(ctx context.Context, a args) (any, error) {
	deckID, err1 := a.str("deckID")
	cardID, err2 := a.str("cardID")
	rating, err3 := a.optInt("rating", math.MinInt)
	if err1 != nil || err2 != nil || err3 != nil || rating == math.MinInt {
		return nil, nil
	}
	reviewed := reviewedArg(a)
	k.riff.mu.Lock()
	defer k.riff.mu.Unlock()
	if err := k.riffLocked(); err != nil {
		return nil, err
	}
	d := k.riff.decks[deckID]
	if d == nil {
		return nil, nil
	}
	c := d.card(cardID)
	if c == nil {
		return nil, nil
	}
	r := &k.riff
	if first, ok := r.reviewed[cardID]; ok {
		// A second review in the session undoes the first, then reviews.
		c.C = first
		delete(r.skipped, cardID)
	} else {
		r.reviewed[cardID] = c.C
	}
	// A rating outside 1..4 schedules nothing: SiYuan takes the zero card.
	c.C = riffScheduler().Repeat(c.C, time.Now())[fsrs.Rating(rating)].Card
	if err := k.saveDeckLocked(d); err != nil {
		return nil, err
	}
	if _, n, _, _ := k.dueCardsLocked(d, reviewed, nil); n < 1 {
		r.reviewed, r.skipped = map[string]fsrs.Card{}, map[string]bool{}
	}
	return nil, nil
}

func (k *Kernel) skipReviewRiffCard(ctx context.Context, a args) (any, error) {
	deckID, err1 := a.str("deckID")
	cardID, err2 := a.str("cardID")
	if err1 != nil || err2 != nil {
		return nil, nil
	}
	k.riff.mu.Lock()
	defer k.riff.mu.Unlock()
	if err := k.riffLocked(); err != nil {
		return nil, err
	}
	if d := k.riff.decks[deckID]; d != nil && d.card(cardID) != nil {
		k.riff.skipped[cardID] = true
	}
	return nil, nil
}
