package block

import (
	"context"
	"fmt"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools/markup"
)

// userAttrs are the attributes an update must carry over: everything the
// user or a plugin set, not the kernel's bookkeeping.
func userAttrs(attrs map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range attrs {
		switch k {
		case "id", "updated", "created", "type", "title", "fold", "heading-fold":
			continue
		}
		if v != "" {
			out[k] = v
		}
	}
	return out
}

// topLevelBlocks, ialLine: see markup (fs.replace shares them).
func topLevelBlocks(md string) (int, error)  { return markup.TopLevelBlocks(md) }
func ialLine(attrs map[string]string) string { return markup.IALLine(attrs) }

// appliedText is the visible text of the DOM an update transaction applied
// to id; ok is false when the kernel reported no update of id (a
// document's body is deleted and inserted, not updated).
func appliedText(txs []siyuan.Transaction, id string) (text string, ok bool) {
	for _, tx := range txs {
		for _, op := range tx.DoOperations {
			if d, isStr := op.Data.(string); isStr && op.ID == id && op.Action == "update" {
				text, ok = markup.BlockDOMText(d, id), true // the last update of id wins
			}
		}
	}
	return text, ok
}

// shapeOf parses markdown data once and tells how many top-level blocks it
// holds (0 for DOM, or for markdown that does not parse: the kernel decides
// those) and whether it is a single block without an IAL of its own, so
// that an update can carry the block's attributes in its IAL. Linear in the
// data's size, it runs while the arguments are parsed, before anything is
// recorded as executing.
func shapeOf(dataType, data string) (single bool, blocks int) {
	if dataType != "markdown" {
		return false, 0
	}
	n, err := topLevelBlocks(data)
	if err != nil {
		return false, 0
	}
	return n == 1 && !strings.Contains(data, "{:"), n
}

// updateKeeping replaces a block's content and keeps its user attributes,
// which SiYuan's updateBlock drops. When the markdown is a single block
// (single, from shapeOf), the attributes travel in its IAL: one kernel
// write. Otherwise (DOM data, several blocks) they are restored with a
// second write. It returns the kernel writes made and the transactions the kernel
// applied.
func updateKeeping(ctx context.Context, c *siyuan.Client, id, dataType, data string, single bool, before map[string]string) (writes int, txs []siyuan.Transaction, err error) {
	keep := userAttrs(before)
	if len(keep) > 0 && single {
		txs, err := c.UpdateBlock(ctx, id, dataType, strings.TrimRight(data, "\n")+"\n"+ialLine(keep))
		return 1, txs, err
	}
	txs, err = c.UpdateBlock(ctx, id, dataType, data)
	if err != nil {
		return 1, nil, err
	}
	if len(keep) == 0 {
		return 1, txs, nil
	}
	if err := c.SetBlockAttrs(ctx, id, keep); err != nil {
		// The content is already replaced: this failure is not a clean rejection.
		return 2, nil, fmt.Errorf("restore attributes after update: %w", err)
	}
	return 2, txs, nil
}
