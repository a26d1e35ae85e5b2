package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// TestAVTwoAgentsAtOnce: two agents, each with its own MCP session, add
// rows and set one shared cell of the same database at once, through the
// binary, with the kernel's database writes slowed to widen every window.
// No row is lost or doubled (a replayed add_rows adds nothing), and the
// shared cell's committed writes form one chain: each was preflighted on
// the state the previous one left (no two commits on the same state, so no
// update was lost), and the cell ends with the last one's value. A commit
// that lost the race is state_changed and preflighted again.
func TestAVTwoAgentsAtOnce(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir(), "--fault", "/api/av/batchSetAttributeViewBlockAttrs=latency:15ms", "--fault", "/api/av/addAttributeViewBlocks=latency:15ms")
	c := kernelClient(t, k.url, "tok")
	s := startServeWith(t, "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", t.TempDir())
	agents := []*agent{connect(t, s.url, "2025-11-25"), connect(t, s.url, "2026-07-28")}
	doc, _ := firstParagraph(agents[0])
	ctx := context.Background()
	block, av := freshNodeID(), freshNodeID()
	if _, err := c.Transactions(ctx, []siyuan.Transaction{{DoOperations: []siyuan.Operation{siyuan.InsertDatabaseBlockOp(block, av, "", doc)}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RenderAttributeViewOrCreate(ctx, siyuan.RenderAVRequest{ID: av, BlockID: block}); err != nil {
		t.Fatal(err)
	}
	a0 := agents[0]
	col := a0.strictDo("av", map[string]any{"action": "add_column", "avID": av, "keyName": "Status", "keyType": "text"})["columnID"].(string)
	shared := a0.strictDo("av", map[string]any{"action": "add_rows", "avID": av, "primaryKeyTexts": []string{"shared"}})["rowIDs"].([]any)[0].(string)

	const rounds = 12
	type commit struct{ previous, result, value string }
	var (
		mu        sync.Mutex
		commits   []commit
		conflicts int
		wg        sync.WaitGroup
	)
	for n, a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				add := map[string]any{"action": "add_rows", "avID": av, "primaryKeyTexts": []string{fmt.Sprintf("agent%d-%d", n, i)}}
				pre := a.ok("av", with(add, "validateOnly", true))
				if res := a.ok("av", commitOf(add, pre)); res["status"] != "committed" {
					t.Errorf("add_rows: %v", res)
				}
				if i%4 == 0 { // a retried request: answered from the ledger, nothing added
					if rep := a.ok("av", commitOf(add, pre)); rep["replayed"] != true {
						t.Errorf("add_rows replay: %v", rep)
					}
				}
				value := fmt.Sprintf("agent%d-%d", n, i)
				set := map[string]any{"action": "set_cells", "avID": av, "rowID": shared, "columnID": col, "value": value}
				for {
					pre := a.ok("av", with(set, "validateOnly", true))
					res, isErr := a.call("av", commitOf(set, pre))
					if isErr {
						if e, _ := res["error"].(map[string]any); e["code"] == "state_changed" {
							mu.Lock()
							conflicts++
							mu.Unlock()
							continue // another agent's write came first: preflight again
						}
						t.Errorf("set_cells: %v", res)
						return
					}
					mu.Lock()
					commits = append(commits, commit{res["previousHash"].(string), res["resultHash"].(string), value})
					mu.Unlock()
					break
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	stored, err := c.GetAttributeView(ctx, av)
	if err != nil || stored == nil {
		t.Fatal(err)
	}
	var texts []string
	var cell string
	for _, kv := range stored.KeyValues {
		for _, v := range kv.Values {
			switch {
			case kv.Key.Type == siyuan.AVKeyBlock && v.Block != nil:
				texts = append(texts, v.Block.Content)
			case kv.Key.ID == col && v.BlockID == shared && v.Text != nil:
				cell = v.Text.Content
			}
		}
	}
	slices.Sort(texts)
	var want []string
	for n := range agents {
		for i := range rounds {
			want = append(want, fmt.Sprintf("agent%d-%d", n, i))
		}
	}
	want = append(want, "shared")
	slices.Sort(want)
	if !slices.Equal(texts, want) || len(stored.Views[0].ItemIDs) != len(want) {
		t.Fatalf("rows: %v (%d in the view), want each of %v once", texts, len(stored.Views[0].ItemIDs), want)
	}

	// One chain: distinct previous states, each but the first left by
	// another commit, and the cell holds the last commit's value.
	if len(commits) != 2*rounds {
		t.Fatalf("%d set_cells committed, want %d", len(commits), 2*rounds)
	}
	byPrevious := map[string]commit{}
	results := map[string]bool{}
	for _, cm := range commits {
		if other, dup := byPrevious[cm.previous]; dup {
			t.Fatalf("two commits on the same state %s: %v and %v (a lost update)", cm.previous, other, cm)
		}
		byPrevious[cm.previous] = cm
		results[cm.result] = true
	}
	var first []commit
	for _, cm := range commits {
		if !results[cm.previous] {
			first = append(first, cm)
		}
	}
	if len(first) != 1 {
		t.Fatalf("the chain has %d starts, want 1: %v", len(first), first)
	}
	last := first[0]
	for range len(commits) - 1 {
		next, ok := byPrevious[last.result]
		if !ok {
			t.Fatalf("the chain breaks after %v", last)
		}
		last = next
	}
	if cell != last.value {
		t.Fatalf("the shared cell holds %q, the last committed write was %q", cell, last.value)
	}
	t.Logf("%d commits on the shared cell, %d lost a race and were preflighted again", len(commits), conflicts)
}
