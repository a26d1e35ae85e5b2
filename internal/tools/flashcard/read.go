package flashcard

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// builtinName is the built-in deck's name as SiYuan gives it.
const builtinName = "Built-in Deck"

type listArgs struct {
	Scope    string `arg:"scope" help:"which cards: all, a deck's (deckID), a notebook's (notebook), a document's (rootID)" enum:"all,deck,notebook,tree" required:""`
	Filter   string `arg:"filter" help:"due: every due card; new: never reviewed; old: reviewed before" enum:"due,new,old" required:""`
	DeckID   string `arg:"deckID" help:"the deck, for scope deck" id:""`
	Notebook string `arg:"notebook" help:"the notebook, for scope notebook" id:""`
	RootID   string `arg:"rootID" help:"the document, for scope tree" id:""`
	reviewedArg
}

// reviewedArg is reviewedCards: the cards reviewed in this session.
type reviewedArg struct {
	ReviewedCards []map[string]any `arg:"reviewedCards" help:"the cards reviewed in this review session, as [{cardID}]; without it a due-card read starts a new session (SiYuan forgets skipped cards)"`
	// Reviewed are their ids (nil when reviewedCards is absent).
	Reviewed []string
}

// parse reads reviewedCards[].cardID.
func (r *reviewedArg) parse() (err error) {
	r.Reviewed, err = reviewedOf(r.ReviewedCards)
	return err
}

// reviewedOf reads reviewedCards[].cardID (nil when absent).
func reviewedOf(cards []map[string]any) ([]string, error) {
	if cards == nil {
		return nil, nil
	}
	out := []string{}
	for i, o := range cards {
		id, _ := o["cardID"].(string)
		if tools.CheckID("reviewedCards", id) != nil {
			return nil, failure.Invalid("reviewedCards[%d].cardID must be a card id like 20260812120000-abcdefg", i)
		}
		out = append(out, id)
	}
	return out, nil
}

var listCards = tools.Read[listArgs]{
	Name: "list_cards", Summary: "the due cards of all (the built-in deck), a deck, a notebook or a document (SiYuan reads the built-in deck for notebook and tree too), filtered to due (all), new or old, with front and back",
	Example: map[string]any{"scope": "all", "filter": "due"},
	Validate: func(l *listArgs) error {
		if err := l.reviewedArg.parse(); err != nil {
			return err
		}
		want := map[string]*string{"deck": &l.DeckID, "notebook": &l.Notebook, "tree": &l.RootID}
		names := map[string]string{"deck": "deckID", "notebook": "notebook", "tree": "rootID"}
		for scope, v := range want {
			switch {
			case scope == l.Scope && *v == "":
				return failure.Invalid("%s is required when scope=%q", names[scope], scope)
			case scope != l.Scope && *v != "":
				return failure.Invalid("scope=%q does not take %s", l.Scope, names[scope])
			}
		}
		return nil
	},
	Scope: tools.Scope[listArgs]{Resolve: func(_ context.Context, _ *tools.Env, l listArgs) ([]tools.Touch, error) {
		switch l.Scope {
		case "notebook":
			return []tools.Touch{tools.OnNotebook(l.Notebook, tools.LevelRead)}, nil
		case "tree":
			return []tools.Touch{tools.OnBlock(l.RootID, tools.LevelRead)}, nil
		}
		return nil, nil // all and deck cross notebooks: the cards are filtered
	}},
	Run: func(ctx context.Context, env *tools.Env, l listArgs) (any, error) {
		var due siyuan.DueCards
		var err error
		switch l.Scope {
		case "all":
			due, err = env.Kernel.GetRiffDueCards(ctx, "", l.Reviewed)
		case "deck":
			due, err = env.Kernel.GetRiffDueCards(ctx, l.DeckID, l.Reviewed)
		case "notebook":
			due, err = env.Kernel.GetNotebookRiffDueCards(ctx, l.Notebook, l.Reviewed)
		case "tree":
			due, err = env.Kernel.GetTreeRiffDueCards(ctx, l.RootID, l.Reviewed)
		}
		if err != nil {
			return nil, err
		}
		ids := make([]string, len(due.Cards))
		for i, c := range due.Cards {
			ids[i] = c.BlockID
		}
		blocks, err := readBlocksText(ctx, env, ids)
		if err != nil {
			return nil, err
		}
		cards := []map[string]any{}
		var seenNew, seenOld int
		for _, c := range due.Cards {
			b, ok := blocks[c.BlockID]
			if !ok || !tools.Visible(ctx, b.box) {
				continue // a hidden notebook's card, or a block SiYuan lost
			}
			if c.State == 0 {
				seenNew++
			} else {
				seenOld++
			}
			if !(l.Filter == "due" || l.Filter == "new" && c.State == 0 || l.Filter == "old" && c.State != 0) {
				continue
			}
			m := map[string]any{"deckID": c.DeckID, "cardID": c.CardID, "blockID": c.BlockID, "notebook": b.box,
				"lapses": c.Lapses, "reps": c.Reps, "state": c.State, "lastReview": c.LastReview, "nextDues": c.NextDues}
			b.hydrate(m)
			cards = append(cards, m)
		}
		out := map[string]any{"scope": l.Scope, "filter": l.Filter, "cards": cards, "count": len(cards),
			"unreviewedCount": due.UnreviewedCount, "unreviewedNewCardCount": due.UnreviewedNewCardCount, "unreviewedOldCardCount": due.UnreviewedOldCardCount}
		if tools.Hiding(ctx) {
			// SiYuan's counts take in the cards of hidden notebooks: while
			// one is hidden they are the due cards listed here, whatever
			// was left out (never a count of what is hidden).
			out["unreviewedCount"], out["unreviewedNewCardCount"], out["unreviewedOldCardCount"] = seenNew+seenOld, seenNew, seenOld
			out["countsOf"] = "the due cards of the notebooks you may see, in this round"
		}
		for k, v := range map[string]string{"deckID": l.DeckID, "notebook": l.Notebook, "rootID": l.RootID} {
			if v != "" {
				out[k] = v
			}
		}
		if l.Reviewed != nil {
			out["reviewedCards"] = l.Reviewed
		}
		return out, nil
	},
}

var getDecks = tools.Read[tools.NoArgs]{
	Name: "get_decks", Summary: "the decks, the built-in deck first (SiYuan itself never lists it)",
	Scope: tools.Scope[tools.NoArgs]{Global: true},
	Run: func(ctx context.Context, env *tools.Env, _ tools.NoArgs) (any, error) {
		decks, err := env.Kernel.GetRiffDecks(ctx)
		if err != nil {
			return nil, err
		}
		out := []map[string]any{{"id": siyuan.BuiltinDeckID, "deckID": siyuan.BuiltinDeckID, "name": builtinName, "builtin": true}}
		for _, d := range decks {
			if d.ID == siyuan.BuiltinDeckID {
				continue
			}
			size := d.Size
			if tools.Hiding(ctx) {
				// SiYuan's size counts the cards of hidden notebooks too.
				cards, err := visibleCards(ctx, env, d.ID)
				if err != nil {
					return nil, err
				}
				size = len(cards)
			}
			out = append(out, map[string]any{"id": d.ID, "deckID": d.ID, "name": d.Name, "size": size, "created": d.Created, "updated": d.Updated})
		}
		return map[string]any{"decks": out, "count": len(out)}, nil
	},
}

// visibleCards are a deck's cards, every page of them, without those of
// hidden notebooks (a card of a block that is gone stays, marked by its
// empty card id, as SiYuan lists it).
func visibleCards(ctx context.Context, env *tools.Env, deckID string) ([]siyuan.Block, error) {
	out := []siyuan.Block{}
	for page := 1; page <= maxPages; page++ {
		res, err := env.Kernel.GetRiffCards(ctx, deckID, page, pageSize)
		if err != nil {
			return nil, err
		}
		for _, b := range res.Blocks {
			if b.RiffCardID == "" || tools.Visible(ctx, b.Box) {
				out = append(out, b)
			}
		}
		if page >= res.PageCount {
			return out, nil
		}
	}
	e := failure.Invalid("deck %s holds more than %d cards, more than one read counts while a notebook is hidden", deckID, maxPages*pageSize)
	e.Action = "review the deck in SiYuan itself"
	return nil, e
}

type cardsArgs struct {
	DeckID   string `arg:"deckID" help:"the deck; \"\" for every deck" required:""`
	Page     int    `arg:"page" help:"page, from 1" default:"1" min:"1"`
	PageSize int    `arg:"pageSize" help:"cards per page" default:"32" min:"1" max:"512"`
}

var getCards = tools.Read[cardsArgs]{
	Name: "get_cards", Summary: "a deck's cards (\"\" : every deck's), sorted by due time, a page at a time, with front and back",
	Example:  map[string]any{"deckID": siyuan.BuiltinDeckID, "page": 1},
	Validate: func(c *cardsArgs) error { return deckOrEvery(c.DeckID) },
	Scope:    tools.Scope[cardsArgs]{Global: true},
	Run: func(ctx context.Context, env *tools.Env, c cardsArgs) (any, error) {
		// The page's blocks come from the SQL index, which lags writes.
		if err := env.Kernel.FlushTransaction(ctx); err != nil {
			return nil, err
		}
		var res siyuan.RiffCardsPage
		var err error
		if tools.Hiding(ctx) {
			// SiYuan pages and counts the cards of hidden notebooks too:
			// while one is hidden the deck is read whole, without them,
			// and paged here, so that no total or page tells of them.
			all, err := visibleCards(ctx, env, c.DeckID)
			if err != nil {
				return nil, err
			}
			res.Blocks = tools.PageSlice(all, c.Page, c.PageSize)
			res.Total, res.PageCount = len(all), (len(all)+c.PageSize-1)/c.PageSize
		} else if res, err = env.Kernel.GetRiffCards(ctx, c.DeckID, c.Page, c.PageSize); err != nil {
			return nil, err
		}
		ids := make([]string, 0, len(res.Blocks))
		for _, b := range res.Blocks {
			ids = append(ids, b.ID)
		}
		texts, err := readBlocksText(ctx, env, ids)
		if err != nil {
			return nil, err
		}
		cards := []map[string]any{}
		for _, b := range res.Blocks {
			if b.RiffCardID == "" {
				// SiYuan keeps the card of a block that is gone.
				cards = append(cards, map[string]any{"blockID": b.ID, "missing": true})
				continue
			}
			if !tools.Visible(ctx, b.Box) {
				continue
			}
			st, err := siyuan.CardState(b)
			if err != nil {
				return nil, err
			}
			m := map[string]any{"cardID": b.RiffCardID, "blockID": b.ID, "notebook": b.Box, "rootID": b.RootID, "hPath": b.HPath, "card": st}
			if t, ok := texts[b.ID]; ok {
				t.hydrate(m)
			}
			cards = append(cards, m)
		}
		return map[string]any{"deckID": c.DeckID, "page": c.Page, "pageSize": c.PageSize, "cards": cards, "total": res.Total, "pageCount": res.PageCount}, nil
	},
}

// blockText is what a card shows: its block's text and its children's.
type blockText struct {
	box, typ, markdown, content string
	children                    []string
}

var (
	clozeRE   = regexp.MustCompile(`==([^=\n][\s\S]*?)==`)
	headingRE = regexp.MustCompile(`^#{1,6}[ \t]+`)
)

// hydrate adds front, back and review material, as upstream does: a
// cloze (==x==) hides its answers; else the block is the prompt and its
// children (a heading's section, a list's items) the answer.
func (b blockText) hydrate(m map[string]any) {
	prompt := strings.TrimSpace(headingRE.ReplaceAllString(b.markdown, ""))
	var answers []string
	prompt = clozeRE.ReplaceAllStringFunc(prompt, func(s string) string {
		if a := strings.TrimSpace(clozeRE.FindStringSubmatch(s)[1]); a != "" {
			answers = append(answers, a)
		}
		return "____"
	})
	kind, answer := "plain", strings.Join(b.children, "\n\n")
	switch {
	case len(answers) > 0:
		kind, answer = "cloze", strings.Join(answers, "；")
	case b.typ == "h":
		kind = "heading"
	case b.typ == "l" || b.typ == "i":
		kind = "list"
	case b.typ == "s":
		kind = "super-block"
	}
	if prompt == "" && answer == "" {
		return
	}
	if prompt != "" {
		m["front"] = prompt
	}
	if answer != "" {
		m["back"] = answer
	}
	m["review"] = map[string]any{"kind": kind, "prompt": prompt, "referenceAnswer": answer, "gradable": prompt != "" && answer != ""}
}

// readBlocksText reads the blocks of cards and their children's text from
// the SQL index, flushed first (it lags writes).
func readBlocksText(ctx context.Context, env *tools.Env, ids []string) (map[string]*blockText, error) {
	out := map[string]*blockText{}
	if len(ids) == 0 {
		return out, nil
	}
	if err := env.Kernel.FlushTransaction(ctx); err != nil {
		return nil, err
	}
	in := quoteIDs(ids)
	rows, err := env.Kernel.QuerySQL(ctx, fmt.Sprintf("SELECT id, box, type, markdown, content FROM blocks WHERE id IN (%s) LIMIT %d", in, 4*len(ids)+4))
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		s := func(k string) string { v, _ := r[k].(string); return v }
		out[s("id")] = &blockText{box: s("box"), typ: s("type"), markdown: s("markdown"), content: s("content")}
	}
	kids, err := env.Kernel.QuerySQL(ctx, fmt.Sprintf("SELECT id, parent_id, content FROM blocks WHERE parent_id IN (%s) ORDER BY id LIMIT %d", in, 64*len(ids)))
	if err != nil {
		return nil, err
	}
	// Real SiYuan's index may hold a block twice for a moment after a
	// write: each child counts once.
	seen := map[string]bool{}
	for _, r := range kids {
		id, _ := r["id"].(string)
		p, _ := r["parent_id"].(string)
		c, _ := r["content"].(string)
		if b := out[p]; b != nil && !seen[id] && strings.TrimSpace(c) != "" {
			seen[id] = true
			b.children = append(b.children, strings.TrimSpace(c))
		}
	}
	return out, nil
}

func quoteIDs(ids []string) string {
	q := make([]string, 0, len(ids))
	for _, id := range ids {
		if tools.CheckID("", id) == nil { // ids only: nothing to escape
			q = append(q, "'"+id+"'")
		}
	}
	if len(q) == 0 {
		return "''"
	}
	return strings.Join(q, ", ")
}
