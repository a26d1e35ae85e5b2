package embedded

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	fsrs "github.com/open-spaced-repetition/go-fsrs/v3"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// Flashcards as SiYuan 3.7.3 keeps them (kernel/model/flashcard.go and
// the riff library): decks of cards, one card per block and deck,
// scheduled by FSRS with SiYuan's default parameters (the same go-fsrs the
// kernel uses). A deck is data/storage/riff/<id>.deck.json here (SiYuan
// writes msgpack; the format is the embedded kernel's own). The review
// session (cards skipped, reviews an undo restores) lives in memory, as in
// SiYuan.

// riffBuiltinDeck is SiYuan's built-in deck id.
const riffBuiltinDeck = "20230218211946-2kw8jgx"

// riffNewLimit and riffReviewLimit are SiYuan's default session limits.
const (
	riffNewLimit    = 20
	riffReviewLimit = 200
)

// riffStore is the kernel's decks and review session, loaded on first use.
type riffStore struct {
	mu     sync.Mutex
	loaded bool
	decks  map[string]*riffDeck
	// reviewed are the session's reviewed cards as they were before their
	// first review; skipped the cards skipped.
	reviewed map[string]fsrs.Card
	skipped  map[string]bool
}

type riffDeck struct {
	ID      string      `json:"id"`
	Name    string      `json:"name"`
	Created int64       `json:"created"` // Unix ms
	Updated int64       `json:"updated"`
	Cards   []*riffCard `json:"cards"`
}

type riffCard struct {
	ID      string    `json:"id"`
	BlockID string    `json:"blockID"`
	C       fsrs.Card `json:"card"`
}

func (d *riffDeck) card(id string) *riffCard {
	for _, c := range d.Cards {
		if c.ID == id {
			return c
		}
	}
	return nil
}

func (d *riffDeck) cardOf(block string) *riffCard {
	for _, c := range d.Cards {
		if c.BlockID == block {
			return c
		}
	}
	return nil
}

// scheduler is SiYuan's: go-fsrs with its default parameters.
func riffScheduler() *fsrs.FSRS { return fsrs.NewFSRS(fsrs.DefaultParam()) }

func (k *Kernel) riffDir() string { return filepath.Join(k.dataDir, "storage", "riff") }

// riffLocked loads the decks on first use; callers hold k.riff.mu.
func (k *Kernel) riffLocked() error {
	r := &k.riff
	if r.loaded {
		return nil
	}
	r.decks = map[string]*riffDeck{}
	r.reviewed, r.skipped = map[string]fsrs.Card{}, map[string]bool{}
	ents, err := os.ReadDir(k.riffDir())
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("riff: %w", err)
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".deck.json") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(k.riffDir(), e.Name()))
		if err != nil {
			return fmt.Errorf("riff: %w", err)
		}
		var d riffDeck
		if err := json.Unmarshal(data, &d); err != nil {
			return fmt.Errorf("riff: %s: %w", e.Name(), err)
		}
		r.decks[d.ID] = &d
	}
	r.loaded = true
	return nil
}

// saveDeckLocked writes a deck, stamping its update time as riff's Save.
func (k *Kernel) saveDeckLocked(d *riffDeck) error {
	d.Updated = time.Now().UnixMilli()
	data, err := json.Marshal(d)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(k.riffDir(), 0o755); err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(k.riffDir(), d.ID+".deck.json"), data, 0o644)
}

func (k *Kernel) removeDeckFileLocked(id string) error {
	err := os.Remove(filepath.Join(k.riffDir(), id+".deck.json"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	delete(k.riff.decks, id)
	return nil
}

// deckData is the answer shape of a deck (api/riff.go deckData).
func deckData(d *riffDeck) map[string]any {
	if d == nil {
		return nil
	}
	format := func(ms int64) string { return time.UnixMilli(ms).Format("2006-01-02 15:04:05") }
	return map[string]any{"id": d.ID, "name": d.Name, "size": len(d.Cards), "created": format(d.Created), "updated": format(d.Updated)}
}

func newDueFlashcard(c *riffCard, deckID string, now time.Time) wire.DueCard {
	next := map[string]string{}
	for rating, info := range riffScheduler().Repeat(c.C, now) {
		next[strconv.Itoa(int(rating))] = humanizeDiff(info.Card.Due, now)
	}
	return wire.DueCard{DeckID: deckID, CardID: c.ID, BlockID: c.BlockID, Lapses: int(c.C.Lapses), Reps: int(c.C.Reps),
		State: int(c.C.State), LastReview: c.C.LastReview.UnixMilli(), NextDues: next}
}

// dueCardsLocked is SiYuan's getDeckDueCards: the deck's due cards whose
// blocks exist (of blocks only, when given), skipped ones left out, at
// most riffNewLimit new and riffReviewLimit others counting the session's
// reviews; a read without reviewed cards starts a new session.
func (k *Kernel) dueCardsLocked(d *riffDeck, reviewed []string, blocks map[string]bool) (ret []*riffCard, unreviewed, unreviewedNew, unreviewedOld int) {
	r := &k.riff
	now := time.Now()
	var dues []*riffCard
	for _, c := range d.Cards {
		if now.Before(c.C.Due) || blocks != nil && !blocks[c.BlockID] {
			continue
		}
		if _, ok := k.lookup(c.BlockID); !ok {
			continue
		}
		dues = append(dues, c)
	}
	if len(reviewed) == 0 {
		r.reviewed, r.skipped = map[string]fsrs.Card{}, map[string]bool{}
	}
	newCount, reviewCount := 0, 0
	for _, c := range r.reviewed {
		if c.State == fsrs.New {
			newCount++
		} else {
			reviewCount++
		}
	}
	isReviewed := map[string]bool{}
	for _, id := range reviewed {
		isReviewed[id] = true
	}
	ret = []*riffCard{}
	for _, c := range dues {
		if r.skipped[c.ID] {
			continue
		}
		if !isReviewed[c.ID] {
			unreviewed++
			if c.C.State == fsrs.New {
				if newCount < riffNewLimit {
					unreviewedNew++
				}
			} else if reviewCount < riffReviewLimit {
				unreviewedOld++
			}
		}
		if c.C.State == fsrs.New {
			if newCount >= riffNewLimit {
				continue
			}
			newCount++
		} else {
			if reviewCount >= riffReviewLimit {
				continue
			}
			reviewCount++
		}
		ret = append(ret, c)
	}
	return ret, unreviewed, unreviewedNew, unreviewedOld
}

// sortedDecks are the decks in id order (SiYuan iterates a map; a stable
// order keeps answers reproducible).
func (r *riffStore) sortedDecks() []*riffDeck {
	out := make([]*riffDeck, 0, len(r.decks))
	for _, d := range r.decks {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// humanizeDiff is SiYuan's HumanizeDiffTime in English: the calendar
// difference as "1 day  2 hours" (its labels leave two spaces between
// parts), seconds dropped.
func humanizeDiff(a, b time.Time) string {
	if a.After(b) {
		a, b = b, a
	}
	y1, m1, d1 := a.Date()
	y2, m2, d2 := b.Date()
	h1, n1, s1 := a.Clock()
	h2, n2, s2 := b.Clock()
	year, month, day, hour, minute, sec := y2-y1, int(m2-m1), d2-d1, h2-h1, n2-n1, s2-s1
	if sec < 0 {
		minute--
	}
	if minute < 0 {
		minute += 60
		hour--
	}
	if hour < 0 {
		hour += 24
		day--
	}
	if day < 0 {
		t := time.Date(y1, m1, 32, 0, 0, 0, 0, time.UTC)
		day += 32 - t.Day()
		month--
	}
	if month < 0 {
		month += 12
		year--
	}
	var b2 strings.Builder
	part := func(n int, one, many string) {
		switch {
		case n == 1:
			b2.WriteString("1 " + one + "  ")
		case n > 1:
			fmt.Fprintf(&b2, "%d %s  ", n, many)
		}
	}
	part(year, "year", "years")
	part(month, "month", "months")
	part(day, "day", "days")
	part(hour, "hour", "hours")
	part(minute, "minute", "minutes")
	return strings.TrimSpace(b2.String())
}
