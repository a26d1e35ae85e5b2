package main

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// TestAVTwoAgentsDropAfterApply: two agents add rows and set one shared
// cell of the same database at once, through the binary, while the kernel
// applies every such write and then drops the connection. Every commit is
// outcome_unknown and so is every repeat of it (never sent again); each
// row landed exactly once (no duplicate, none lost), and the shared cell
// holds one of the values sent.
func TestAVTwoAgentsDropAfterApply(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir(), "--fault", "/api/av/batchSetAttributeViewBlockAttrs=drop-after-apply",
		"--fault", "/api/av/addAttributeViewBlocks=drop-after-apply")
	c := kernelClient(t, k.url, "tok")
	s := startServeWith(t, "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", t.TempDir())
	agents := []*agent{connect(t, s.url, "2025-11-25"), connect(t, s.url, "2026-07-28")}
	doc, _ := firstParagraph(agents[0])
	ctx := context.Background()
	block, av, shared := freshNodeID(), freshNodeID(), freshNodeID()
	if _, err := c.Transactions(ctx, []siyuan.Transaction{{DoOperations: []siyuan.Operation{siyuan.InsertDatabaseBlockOp(block, av, "", doc)}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RenderAttributeViewOrCreate(ctx, siyuan.RenderAVRequest{ID: av, BlockID: block}); err != nil {
		t.Fatal(err)
	}
	col := agents[0].strictDo("av", map[string]any{"action": "add_column", "avID": av, "keyName": "Status", "keyType": "text"})["columnID"].(string)
	// The shared row by the transaction form (its endpoint has no fault).
	if _, err := c.Transactions(ctx, []siyuan.Transaction{{DoOperations: []siyuan.Operation{
		siyuan.InsertAttrViewBlockOp(av, block, []siyuan.AVSrc{{ItemID: shared, Detached: true, Content: "shared"}}, "")}}}); err != nil {
		t.Fatal(err)
	}

	const rounds = 6
	var (
		mu   sync.Mutex
		sent = map[string]bool{}
		wg   sync.WaitGroup
	)
	for n, a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				text := fmt.Sprintf("agent%d-%d", n, i)
				add := map[string]any{"action": "add_rows", "avID": av, "primaryKeyTexts": []string{text}}
				pre := a.ok("av", with(add, "validateOnly", true))
				for try := range 2 {
					m, isErr := a.call("av", commitOf(add, pre))
					e, _ := m["error"].(map[string]any)
					if !isErr || e["code"] != "outcome_unknown" || try == 0 && m["writeAttempted"] != true {
						t.Errorf("add_rows %s try %d: %v", text, try, m)
					}
				}
				set := map[string]any{"action": "set_cells", "avID": av, "rowID": shared, "columnID": col, "value": text}
				for {
					pre := a.ok("av", with(set, "validateOnly", true))
					m, _ := a.call("av", commitOf(set, pre))
					e, _ := m["error"].(map[string]any)
					if e["code"] == "state_changed" {
						continue // the other agent's write landed in between
					}
					if e["code"] != "outcome_unknown" {
						t.Errorf("set_cells %s: %v", text, m)
					}
					mu.Lock()
					sent[text] = true
					mu.Unlock()
					if again, _ := a.call("av", commitOf(set, pre)); again["error"].(map[string]any)["code"] != "outcome_unknown" {
						t.Errorf("set_cells %s again: %v", text, again)
					}
					break
				}
			}
		}()
	}
	wg.Wait()

	v, err := c.GetAttributeView(ctx, av)
	if err != nil || v == nil {
		t.Fatal(err)
	}
	texts := map[string]int{}
	status := ""
	for _, kv := range v.KeyValues {
		for _, val := range kv.Values {
			switch {
			case kv.Key.Type == siyuan.AVKeyBlock && val.Block != nil:
				texts[val.Block.Content]++
			case kv.Key.ID == col && val.BlockID == shared && val.Text != nil:
				status = val.Text.Content
			}
		}
	}
	for n := range agents {
		for i := range rounds {
			if got := texts[fmt.Sprintf("agent%d-%d", n, i)]; got != 1 {
				t.Errorf("row agent%d-%d landed %d times", n, i, got)
			}
		}
	}
	if len(texts) != 2*rounds+1 {
		t.Errorf("rows %v", texts)
	}
	if !sent[status] {
		t.Errorf("the shared cell holds %q, which no agent sent", status)
	}
}
