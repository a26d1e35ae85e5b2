package fs

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"golang.org/x/net/html"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/kernelview"
)

// The fs writes. Their state readers are the P-fs probe: a path resolves
// through the live file tree, each candidate document is checked to exist
// before its block tree is read (an unknown id reads as an empty tree, so an
// empty read never proves anything), and the SQL index is never consulted.

// blockInfo is one block of a document, in document order.
type blockInfo struct {
	ID      string            `json:"id"`
	Type    string            `json:"type"`
	SubType string            `json:"subType,omitempty"`
	Attrs   map[string]string `json:"attrs,omitempty"`
}

// childInfo is a direct child document, for the state of a removal (which
// takes the whole subtree with it).
type childInfo struct {
	ID           string `json:"id"`
	SubFileCount int    `json:"subFileCount"`
}

// docState is the P-fs state of one path.
type docState struct {
	Path     string      `json:"path"`
	Missing  bool        `json:"missing,omitempty"`
	Notebook string      `json:"notebook,omitempty"`
	HPath    string      `json:"hpath,omitempty"`
	RootID   string      `json:"rootID,omitempty"`
	Blocks   []blockInfo `json:"blocks,omitempty"`
	Markdown string      `json:"markdown,omitempty"`
	Children []childInfo `json:"children,omitempty"`
	// Parent is, for a free path, the document that would hold a new
	// document there ("" at a notebook's root or where it is missing).
	Parent string `json:"parent,omitempty"`
	// Virtual is a virtual root file's state: the digest of its text.
	Virtual  bool   `json:"virtual,omitempty"`
	TextHash string `json:"textHash,omitempty"`
	dom      string // the body's DOM, for readback checks; not hashed
	text     string // a virtual file's text; hashed as TextHash only
}

// complexTypes are blocks an overwrite would destroy without a Markdown
// equivalent: databases, super blocks, embeds, widgets, HTML and media.
var complexTypes = map[string]bool{
	"NodeAttributeView": true, "NodeSuperBlock": true, "NodeBlockQueryEmbed": true, "NodeWidget": true,
	"NodeHTMLBlock": true, "NodeVideo": true, "NodeAudio": true, "NodeIFrame": true, "NodeCustomBlock": true,
}

// keptAttr reports the block attributes a state keeps: what a user or a
// plugin set, not the kernel's bookkeeping.
func keptAttr(k string) bool {
	switch k {
	case "name", "alias", "memo", "bookmark", "style", "fold", "heading-fold":
		return true
	}
	return strings.HasPrefix(k, "custom-")
}

// docBlocks lists the blocks of a document's DOM in document order.
func docBlocks(dom string) []blockInfo {
	z := html.NewTokenizer(strings.NewReader(dom))
	var out []blockInfo
	for {
		switch z.Next() {
		case html.ErrorToken:
			return out
		case html.StartTagToken, html.SelfClosingTagToken:
			t := z.Token()
			var b blockInfo
			for _, a := range t.Attr {
				switch {
				case a.Key == "data-node-id":
					b.ID = a.Val
				case a.Key == "data-type":
					b.Type = a.Val
				case a.Key == "data-subtype":
					b.SubType = a.Val
				case keptAttr(a.Key) && a.Val != "":
					if b.Attrs == nil {
						b.Attrs = map[string]string{}
					}
					b.Attrs[a.Key] = a.Val
				}
			}
			if b.ID != "" {
				out = append(out, b)
			}
		}
	}
}

// readDocAt reads a document's block tree and editable Markdown, after
// checking that it exists. A failed read fails the state (fail closed).
func readDocAt(ctx context.Context, env *tools.Env, p humanPath, nb, id string) (docState, error) {
	st := docState{Path: p.Raw, Notebook: nb, HPath: p.HPath(), RootID: id}
	ok, err := env.Kernel.CheckBlockExist(ctx, id)
	if err != nil {
		return st, err
	}
	if !ok {
		return docState{Path: p.Raw, Missing: true}, nil
	}
	var (
		wg           sync.WaitGroup
		dom          siyuan.BlockDOM
		kids         []siyuan.ChildBlock
		domErr, kErr error
	)
	wg.Add(2)
	go func() { defer wg.Done(); defer failure.Recover(&domErr); dom, domErr = env.Kernel.GetBlockDOM(ctx, id) }()
	go func() { defer wg.Done(); defer failure.Recover(&kErr); kids, kErr = env.Kernel.GetChildBlocks(ctx, id) }()
	wg.Wait()
	if err := errors.Join(domErr, kErr); err != nil {
		return st, err
	}
	if strings.TrimSpace(dom.DOM) == "" {
		// A document always has a block: an empty read means it went away
		// in between, or the read failed quietly. Only the kernel says which.
		if ok, err := env.Kernel.CheckBlockExist(ctx, id); err != nil {
			return st, err
		} else if !ok {
			return docState{Path: p.Raw, Missing: true}, nil
		}
		return st, fmt.Errorf("document %s read back empty", id)
	}
	st.dom = dom.DOM
	st.Blocks = docBlocks(dom.DOM)
	md := make([]string, len(kids))
	for i, k := range kids {
		md[i] = k.Markdown
	}
	st.Markdown = strings.Join(md, "\n\n")
	return st, nil
}

// pathState is the P-fs state of a document path: missing, or the one
// live document there. withChildren adds its direct child documents.
func pathState(ctx context.Context, env *tools.Env, p humanPath, withChildren bool) (docState, error) {
	t, err := resolve(ctx, env, p)
	if err != nil {
		return docState{}, err
	}
	if t.Missing {
		return docState{Path: p.Raw, Missing: true}, nil
	}
	return docStateWith(ctx, env, p, t.Notebook.ID, t.DocID, withChildren)
}

func docStateWith(ctx context.Context, env *tools.Env, p humanPath, nb, id string, withChildren bool) (docState, error) {
	st, err := readDocAt(ctx, env, p, nb, id)
	if err != nil || st.Missing || !withChildren {
		return st, err
	}
	info, err := env.Kernel.GetBlockInfo(ctx, id)
	if err != nil {
		return st, err
	}
	kids, err := kernelview.ListChildren(ctx, env, nb, info.Path)
	if err != nil {
		return st, err
	}
	for _, k := range kids {
		st.Children = append(st.Children, childInfo{k.ID, k.SubFileCount})
	}
	return st, nil
}

// overwriteRefusal fails closed when replacing the body would lose what
// Markdown cannot carry.
func overwriteRefusal(p string, blocks []blockInfo) error {
	for _, b := range blocks {
		if complexTypes[b.Type] {
			return failure.Invalid("%s holds a %s block (%s) that an overwrite would destroy; nothing was written: edit it with the block tool", p, b.Type, b.ID)
		}
		for k := range b.Attrs {
			if k != "fold" && k != "heading-fold" {
				return failure.Invalid("%s holds block %s with the %s attribute, which an overwrite would drop; nothing was written: edit it with the block tool", p, b.ID, k)
			}
		}
	}
	return nil
}

var h1RE = regexp.MustCompile(`^#[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$`)

// stripTitle drops a leading "# <title>" that repeats the document title.
func stripTitle(md, title string) string {
	lines := strings.Split(strings.ReplaceAll(md, "\r\n", "\n"), "\n")
	i := 0
	for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	if i == len(lines) {
		return md
	}
	if m := h1RE.FindStringSubmatch(lines[i]); m == nil || strings.TrimSpace(m[1]) != title {
		return md
	}
	i++
	for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	return strings.Join(lines[i:], "\n")
}

// errNotYet is waitFor's answer when the readback never showed the change.
var errNotYet = errors.New("not observed")

// waitFor polls check through the readback waits; an error stops at once
// (a failed query proves nothing, in either direction), and errNotYet says
// it never reported done.
func waitFor(ctx context.Context, check func() (bool, error)) error {
	ok, err := tools.Poll(ctx, check)
	if err == nil && !ok {
		return errNotYet
	}
	return err
}
