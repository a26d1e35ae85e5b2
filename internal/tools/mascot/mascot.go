// Package mascot is the mascot tool: the coins the person's mascot earns
// (one for every successful call of another tool, counted by the
// authority's runner), its shop, and buying from it. The books are
// upstream Sisyphus's files in the workspace (see internal/mascotstore),
// so a balance earned under either carries over.
package mascot

import (
	"context"
	"errors"
	"fmt"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/mascotstore"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// Name is the tool's name; the runner earns nothing for its calls.
const Name = "mascot"

// Item is one article of the shop, as upstream lists it. Items are
// consumed when bought: the same one may be bought again.
type Item struct {
	ID    string `json:"id"`
	Label string `json:"label"`
	Cost  int64  `json:"cost"`
	Type  string `json:"type"`
	Emoji string `json:"emoji"`
}

// Inventory is upstream 0.6.8's shop (with its English labels).
func Inventory() []Item {
	return []Item{
		{ID: "cat-food", Label: "Cat Food", Cost: 5, Type: "food", Emoji: "🍖"},
		{ID: "milk", Label: "Milk", Cost: 3, Type: "drink", Emoji: "🥛"},
		{ID: "dried-fish", Label: "Dried Fish", Cost: 4, Type: "food", Emoji: "🐟"},
		{ID: "can-food", Label: "Canned Food", Cost: 6, Type: "food", Emoji: "🥫"},
		{ID: "catnip", Label: "Catnip", Cost: 5, Type: "snack", Emoji: "🌿"},
		{ID: "chicken-leg", Label: "Chicken Leg", Cost: 7, Type: "food", Emoji: "🍗"},
		{ID: "cheese", Label: "Cheese", Cost: 4, Type: "snack", Emoji: "🧀"},
	}
}

// Tool returns the mascot tool.
func Tool() *tools.Tool { return toolOf(Inventory) }

// toolOf is the tool over a shop; tests change the shop between a
// preflight and its commit.
func toolOf(shop func() []Item) *tools.Tool {
	return &tools.Tool{
		Name:        Name,
		Title:       "Mascot",
		Description: "The mascot's coins: every successful call of another tool earns one; spend them in its shop.",
		Actions: []*tools.Action{
			getBalance.Action(),
			tools.Read[tools.NoArgs]{
				Name: "shop", Summary: "list the shop's items (id, label, cost, type, emoji); a bought item is consumed",
				Scope: tools.Scope[tools.NoArgs]{None: true},
				Run: func(context.Context, *tools.Env, tools.NoArgs) (any, error) {
					return map[string]any{"action": "shop", "items": shop()}, nil
				},
			}.Action(),
			buyOf(shop).Action(),
		},
	}
}

// storeOf is the env's store, or one for this call only (a registry
// without the authority's, as in tests: a purchase is still one write).
func storeOf(env *tools.Env) *mascotstore.Store {
	if env.Mascot != nil {
		return env.Mascot
	}
	return mascotstore.New(KernelFiles{Kernel: env.Kernel}, mascotstore.Options{})
}

// readStats reads the balance; a file the store cannot read is a kernel
// error, one it cannot parse internal (nothing is written over it).
func readStats(ctx context.Context, env *tools.Env) (mascotstore.Stats, error) {
	st, err := storeOf(env).Stats(ctx)
	if errors.Is(err, mascotstore.ErrMalformed) {
		e := failure.Wrap(failure.Internal, err, "the mascot's balance file (puppyStats.json) is not in the shape upstream writes; nothing was read or changed")
		e.Action = "ask the person to repair or remove " + mascotstore.StatsPath
		return st, e
	}
	if err != nil {
		return st, tools.KernelError(err)
	}
	return st, nil
}

var getBalance = tools.Read[tools.NoArgs]{
	Name: "get_balance", Summary: "the coins held (balance) and earned in all (totalEarned)",
	Scope: tools.Scope[tools.NoArgs]{None: true},
	Run: func(ctx context.Context, env *tools.Env, _ tools.NoArgs) (any, error) {
		st, err := readStats(ctx, env)
		if err != nil {
			return nil, err
		}
		return map[string]any{"action": "get_balance", "balance": st.Balance, "totalEarned": st.TotalCalls}, nil
	},
}

type buyArgs struct {
	ItemID string `json:"item_id" arg:"item_id" help:"the item's id, as shop lists it" required:"" maxLen:"64"`
}

// shopState is what a purchase is guarded by: the item as the shop sells
// it and the whole shop. The balance is not hashed (every other call
// changes it): it is checked at preflight and again, under the balance's
// one writer, at commit.
type shopState struct {
	Item    *Item  `json:"item"`
	Shop    []Item `json:"shop"`
	Balance int64  `json:"-"`
}

// bought is a committed purchase as the readback finds it.
type bought struct {
	shopState
	Purchase mascotstore.Purchase `json:"purchase"`
}

func buyOf(shop func() []Item) tools.WriteWith[buyArgs, shopState, mascotstore.Purchase] {
	state := func(ctx context.Context, env *tools.Env, a buyArgs) (shopState, error) {
		st := shopState{Shop: shop()}
		for i := range st.Shop {
			if st.Shop[i].ID == a.ItemID {
				it := st.Shop[i]
				st.Item = &it
			}
		}
		stats, err := readStats(ctx, env)
		if err != nil {
			return st, err
		}
		st.Balance = stats.Balance
		return st, nil
	}
	return tools.WriteWith[buyArgs, shopState, mascotstore.Purchase]{Write: tools.Write[buyArgs, shopState]{
		Name: "buy", Summary: "buy one item with the mascot's coins (the balance must cover its cost at commit)",
		Policy:  strict.WritePolicy{Class: strict.Mutation, Precondition: strict.ExpectedStateHash},
		Example: map[string]any{"item_id": "milk", "validateOnly": true},
		Scope:   tools.Scope[buyArgs]{None: true},
		Targets: func(a buyArgs) []string { return []string{"mascot/" + a.ItemID} },
		State:   state,
		Check: func(a buyArgs, st shopState) error {
			if st.Item == nil {
				e := failure.New(failure.NotFound, "the shop has no item %q; nothing was bought", a.ItemID)
				e.Action = `list the items with {"action":"shop"}`
				return e.Attempted(false)
			}
			if st.Balance < st.Item.Cost {
				return insufficient(st.Item.Cost, st.Balance)
			}
			return nil
		},
		Notes: func(_ buyArgs, st shopState) map[string]any {
			return map[string]any{"balance": st.Balance}
		},
	},
		Execute: func(ctx context.Context, env *tools.Env, a buyArgs, st shopState) (tools.Payload, mascotstore.Purchase, error) {
			after, err := storeOf(env).Spend(ctx, st.Item.ID, st.Item.Cost)
			if e, ok := mascotstore.IsInsufficient(err); ok {
				return nil, mascotstore.Purchase{}, strict.Reject(insufficient(e.Need, e.Have))
			}
			if errors.Is(err, mascotstore.ErrNotWritten) {
				return nil, mascotstore.Purchase{}, tools.Refuse(err)
			}
			if err != nil {
				return nil, mascotstore.Purchase{}, tools.WriteFailure(err, false)
			}
			it := st.Item
			return tools.Payload{"success": true, "action": "buy", "item_id": it.ID, "item": it.Label, "type": it.Type, "emoji": it.Emoji,
				"cost": it.Cost, "balance": after.Balance, "totalEarned": after.TotalCalls}, *after.LastPurchase, nil
		},
		// The purchase is on file while the coins spent through this
		// server reach what it left; when they equal it, the last
		// purchase on file must be this one.
		Readback: func(ctx context.Context, env *tools.Env, a buyArgs, _ tools.Payload, p mascotstore.Purchase) (any, error) {
			st, err := state(ctx, env, a)
			if err != nil {
				return nil, err
			}
			stats, err := storeOf(env).Stats(ctx)
			if err != nil {
				return nil, err
			}
			switch {
			case stats.Spent < p.SpentAfter:
				return nil, fmt.Errorf("puppyStats.json counts %d coins spent, the purchase left %d", stats.Spent, p.SpentAfter)
			case stats.Spent == p.SpentAfter && (stats.LastPurchase == nil || *stats.LastPurchase != p):
				return nil, fmt.Errorf("puppyStats.json's last purchase is %+v, not %+v", stats.LastPurchase, p)
			}
			return bought{shopState: st, Purchase: p}, nil
		},
	}
}

func insufficient(need, have int64) *failure.Error {
	e := failure.New(failure.InsufficientBalance, "the balance is %d coins and the item costs %d; nothing was bought", have, need)
	e.Details = map[string]any{"need": need, "have": have}
	return e.Attempted(false)
}
