package timeline

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/88250/lute/ast"
	"github.com/88250/lute/parse"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/mdexport"
)

// A comparison is block by block, over the document's top-level blocks
// (the children of the document): a change inside a list or a callout is
// its top-level block modified. Both sides go through the same rendering,
// so that an unchanged block compares equal: the node's side is the block
// DOM SiYuan renders of the snapshot's file; the current side is the
// document's file, rendered to block DOM by the same rules and parsed
// back. Each block is shown as kramdown (its Markdown with its IAL).

// docBlock is one top-level block of one side.
type docBlock struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Kramdown string `json:"markdown"`
	Order    int    `json:"order"`
	dom      string
	norm     string
}

// side is one side of a comparison: its top-level blocks, in order, and
// every block id it holds at any depth.
type side struct {
	Blocks []docBlock
	All    map[string]bool
}

// sideFromDOM reads a side from the block DOM of a whole document.
func sideFromDOM(dom string) (s side, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("render the document: %v", r)
		}
	}()
	l := mdexport.NewLute()
	// SiYuan renders a snapshot's document read-only; the parser reads a
	// block's text only from an editable element.
	dom = strings.ReplaceAll(dom, `contenteditable="false" spellcheck=`, `contenteditable="true" spellcheck=`)
	tree := l.BlockDOM2Tree(dom)
	if tree == nil || tree.Root == nil {
		return side{All: map[string]bool{}}, nil
	}
	return sideOf(tree.Root), nil
}

// sideFromSY reads a side from a document's .sy file, through the same
// block DOM as the node's side.
func sideFromSY(data []byte) (s side, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("render the document: %v", r)
		}
	}()
	tree, err := mdexport.ParseSY(data)
	if err != nil {
		return side{}, err
	}
	// SiYuan drops fold marks from a snapshot's rendering: they are view
	// state, not content.
	ast.Walk(tree.Root, func(n *ast.Node, entering bool) ast.WalkStatus {
		if entering {
			n.RemoveIALAttr("fold")
			n.RemoveIALAttr("heading-fold")
		}
		return ast.WalkContinue
	})
	l := mdexport.NewLute()
	body := &parse.Tree{Root: &ast.Node{Type: ast.NodeDocument}, Context: tree.Context}
	var kids []*ast.Node
	for n := tree.Root.FirstChild; n != nil; n = n.Next {
		kids = append(kids, n)
	}
	for _, n := range kids {
		body.Root.AppendChild(n)
	}
	return sideFromDOM(l.Tree2BlockDOM(body, l.RenderOptions, l.ParseOptions))
}

func sideOf(root *ast.Node) side {
	l := mdexport.NewLute()
	s := side{All: map[string]bool{}}
	ast.Walk(root, func(n *ast.Node, entering bool) ast.WalkStatus {
		if entering && n != root && n.IsBlock() && n.ID != "" {
			s.All[n.ID] = true
		}
		return ast.WalkContinue
	})
	for n := root.FirstChild; n != nil; n = n.Next {
		if !n.IsBlock() || n.Type == ast.NodeKramdownBlockIAL || n.ID == "" {
			continue
		}
		dom := l.RenderNodeBlockDOM(n)
		kd := strings.TrimSpace(l.BlockDOM2Md(dom))
		s.Blocks = append(s.Blocks, docBlock{ID: n.ID, Type: n.Type.String(), Kramdown: kd, Order: len(s.Blocks), dom: dom, norm: normalize(kd)})
	}
	return s
}

// volatileIAL are IAL attributes that change without the content
// changing: the update time, and fold state.
var volatileIAL = regexp.MustCompile(`\s(updated|fold|heading-fold)="[^"]*"`)

// normalize is a block's kramdown as compared: without volatile attributes
// and trailing space.
func normalize(kd string) string {
	lines := strings.Split(volatileIAL.ReplaceAllString(kd, ""), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// Change statuses.
const (
	statusAdded     = "added"
	statusRemoved   = "removed"
	statusModified  = "modified"
	statusUnchanged = "unchanged"
)

// change is one entry of a comparison.
type change struct {
	Key          string    `json:"changeKey"`
	Status       string    `json:"status"`
	Old          *docBlock `json:"old,omitempty"`
	Current      *docBlock `json:"current,omitempty"`
	Rollbackable bool      `json:"rollbackable"`
	Reason       string    `json:"reason,omitempty"`
	// Where a removed block goes back: after PreviousID, else before
	// NextID, else first in the document.
	PreviousID string `json:"-"`
	NextID     string `json:"-"`
}

// stats are a comparison's counts.
type stats struct {
	AddedLines         int `json:"addedLines"`
	RemovedLines       int `json:"removedLines"`
	ChangedBlocks      int `json:"changedBlocks"`
	RollbackableBlocks int `json:"rollbackableBlocks"`
	UnchangedBlocks    int `json:"unchangedBlocks"`
}

// changeKey names a change by what identifies it: its status, its block,
// and both sides' content. It is the same for the same change in a later
// comparison, and different once either side changed.
func changeKey(status, id, oldNorm, curNorm string) string {
	h := sha256.Sum256([]byte("timeline change\x00" + status + "\x00" + id + "\x00" + oldNorm + "\x00" + curNorm))
	return hex.EncodeToString(h[:12])
}

// diffSides compares the node's side with the current one. Entries follow
// the current order; a removed block comes after the block it followed.
func diffSides(old, cur side) []change {
	curAt := map[string]int{}
	for i, b := range cur.Blocks {
		curAt[b.ID] = i
	}
	oldAt := map[string]int{}
	for i, b := range old.Blocks {
		oldAt[b.ID] = i
	}
	// removedAfter[i] are the removed blocks that follow current block i
	// (-1: first in the document).
	removedAfter := map[int][]int{}
	for i, b := range old.Blocks {
		if _, ok := curAt[b.ID]; ok {
			continue
		}
		anchor := -1
		for j := i - 1; j >= 0; j-- {
			if k, ok := curAt[old.Blocks[j].ID]; ok {
				anchor = k
				break
			}
		}
		removedAfter[anchor] = append(removedAfter[anchor], i)
	}
	var out []change
	emitRemoved := func(anchor int) {
		for _, i := range removedAfter[anchor] {
			b := old.Blocks[i]
			c := change{Key: changeKey(statusRemoved, b.ID, b.norm, ""), Status: statusRemoved, Old: &b}
			for j := i - 1; j >= 0; j-- {
				if _, ok := curAt[old.Blocks[j].ID]; ok {
					c.PreviousID = old.Blocks[j].ID
					break
				}
			}
			if c.PreviousID == "" {
				for j := i + 1; j < len(old.Blocks); j++ {
					if _, ok := curAt[old.Blocks[j].ID]; ok {
						c.NextID = old.Blocks[j].ID
						break
					}
				}
			}
			switch {
			case cur.All[b.ID]:
				c.Reason = "the block still exists deeper in the document (it was moved into another block); restoring it would give two blocks one id"
			case c.PreviousID == "" && c.NextID == "" && len(cur.Blocks) > 0:
				c.Reason = "no block around it in the node is still in the document, so no safe position can be found; roll the document back instead"
			default:
				c.Rollbackable = true
			}
			out = append(out, c)
		}
	}
	emitRemoved(-1)
	for k, b := range cur.Blocks {
		if i, ok := oldAt[b.ID]; ok {
			o := old.Blocks[i]
			if o.norm == b.norm {
				out = append(out, change{Key: changeKey(statusUnchanged, b.ID, o.norm, b.norm), Status: statusUnchanged, Old: &o, Current: &b})
			} else {
				out = append(out, change{Key: changeKey(statusModified, b.ID, o.norm, b.norm), Status: statusModified, Old: &o, Current: &b, Rollbackable: true})
			}
		} else {
			c := change{Key: changeKey(statusAdded, b.ID, "", b.norm), Status: statusAdded, Current: &b, Rollbackable: true}
			if old.All[b.ID] {
				c.Rollbackable = false
				c.Reason = "the block was inside another block in the node (it was moved out); deleting it would lose it"
			}
			out = append(out, c)
		}
		emitRemoved(k)
	}
	return out
}

// statsOf counts a comparison's changes and changed lines.
func statsOf(changes []change) stats {
	var s stats
	for _, c := range changes {
		if c.Status == statusUnchanged {
			s.UnchangedBlocks++
			continue
		}
		s.ChangedBlocks++
		if c.Rollbackable {
			s.RollbackableBlocks++
		}
		var oldLines, curLines []string
		if c.Old != nil {
			oldLines = strings.Split(c.Old.norm, "\n")
		}
		if c.Current != nil {
			curLines = strings.Split(c.Current.norm, "\n")
		}
		a, r := lineDelta(oldLines, curLines)
		s.AddedLines += a
		s.RemovedLines += r
	}
	return s
}

// lineDelta counts the lines only the current side has (added) and only
// the old side has (removed), as multisets.
func lineDelta(old, cur []string) (added, removed int) {
	left := map[string]int{}
	for _, l := range old {
		left[l]++
	}
	for _, l := range cur {
		if left[l] > 0 {
			left[l]--
			continue
		}
		added++
	}
	for _, n := range left {
		removed += n
	}
	return added, removed
}

// changedOnly drops the unchanged entries.
func changedOnly(changes []change) []change {
	return slices.DeleteFunc(slices.Clone(changes), func(c change) bool { return c.Status == statusUnchanged })
}

// digestOf is a comparison's identity: its change keys, in order.
func digestOf(changes []change) string {
	h := sha256.New()
	for _, c := range changes {
		h.Write([]byte(c.Key + "\n"))
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}
