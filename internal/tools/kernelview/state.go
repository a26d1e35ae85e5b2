package kernelview

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"golang.org/x/net/html"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/markup"
)

// BlockState is the live state of one block as Strict Safe Writes hashes it:
// kramdown, attributes and DOM, normalised so that attribute order, the
// created/updated timestamps and the reference counts SiYuan marks (over
// every notebook) do not count while every content change (inline marks,
// a block ref's subtype, text) does.
type BlockState struct {
	ID       string            `json:"id"`
	Missing  bool              `json:"missing,omitempty"`
	Kramdown string            `json:"kramdown,omitempty"`
	Attrs    map[string]string `json:"attrs,omitempty"`
	DOM      string            `json:"dom,omitempty"`
}

// ReadBlockState reads one block's state, its three parts concurrently.
// A block that does not exist is {missing:true}; a failed read fails the
// whole state (fail closed: no write is decided on a partial read).
func ReadBlockState(ctx context.Context, env *tools.Env, id string) (BlockState, error) {
	return readState(ctx, env, id, true)
}

// ReadBlockContent is ReadBlockState without the DOM: the block's tree as
// kramdown (lossless, IAL included) and its attributes, two kernel reads
// where the state takes three. It is what an update is guarded by; the
// DOM, which SiYuan renders from the same tree (and which follows other
// blocks' titles through dynamic references), is read where a readback
// compares the text the kernel applied.
func ReadBlockContent(ctx context.Context, env *tools.Env, id string) (BlockState, error) {
	return readState(ctx, env, id, false)
}

func readState(ctx context.Context, env *tools.Env, id string, withDOM bool) (BlockState, error) {
	var (
		wg                sync.WaitGroup
		kd, dom           string
		attrs             map[string]string
		kdErr, dErr, aErr error
	)
	// The kramdown is read in this goroutine, beside the others: a handoff
	// fewer, each of which may wake an idle core.
	wg.Add(1)
	if withDOM {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer failure.Recover(&dErr)
			d, err := env.Kernel.GetBlockDOM(ctx, id)
			dom, dErr = d.DOM, err
		}()
	}
	go func() {
		defer wg.Done()
		defer failure.Recover(&aErr)
		attrs, aErr = env.Kernel.GetBlockAttrs(ctx, id)
	}()
	k, kdErr := env.Kernel.GetBlockKramdown(ctx, id)
	kd = k.Kramdown
	wg.Wait()
	for _, err := range []error{kdErr, dErr, aErr} {
		if err != nil {
			return BlockState{}, err
		}
	}
	// Every block has an id attribute; the kernel answers an unknown id
	// with empty reads, so only then is existence asked for explicitly.
	if attrs["id"] == "" {
		ok, err := env.Kernel.CheckBlockExist(ctx, id)
		if err != nil {
			return BlockState{}, err
		}
		if !ok {
			return BlockState{ID: id, Missing: true}, nil
		}
		return BlockState{}, fmt.Errorf("block %s exists but its attributes read empty", id)
	}
	st := BlockState{ID: id, Kramdown: NormalizeKramdown(kd), Attrs: NormalizeAttrs(attrs)}
	if withDOM {
		st.DOM = NormalizeDOM(dom)
	}
	return st, nil
}

// ReadBlockStates reads several blocks (deduplicated, in sorted id order).
// More than one block is read with the kernel's batch reads, three calls
// whatever their number (SiYuan answers them as its single reads do, up to
// the order of IAL attributes, which the state sorts): one call per part
// and block would cost a document parse each, and SiYuan serves
// concurrent reads of one document slowly. The kramdown of the blocks of
// one document is cut from that document's kramdown (see docKramdowns):
// SiYuan's batch kramdown read loads the document once per block. A block
// the batch does not answer is read alone, which tells a missing block
// from a failed read.
func ReadBlockStates(ctx context.Context, env *tools.Env, ids []string) ([]BlockState, error) {
	return readStates(ctx, env, ids, true)
}

// ReadBlockContents is ReadBlockStates without the DOM (see
// ReadBlockContent).
func ReadBlockContents(ctx context.Context, env *tools.Env, ids []string) ([]BlockState, error) {
	return readStates(ctx, env, ids, false)
}

func readStates(ctx context.Context, env *tools.Env, ids []string, withDOM bool) ([]BlockState, error) {
	ids = SortedUnique(ids)
	one := func(id string) (BlockState, error) { return readState(ctx, env, id, withDOM) }
	if len(ids) < 2 {
		return ReadEach(ids, one)
	}
	var (
		wg                sync.WaitGroup
		kds, doms         map[string]string
		attrs             map[string]map[string]string
		kdErr, dErr, aErr error
	)
	wg.Add(1)
	if withDOM {
		wg.Add(1)
		go func() { defer wg.Done(); defer failure.Recover(&dErr); doms, dErr = env.Kernel.GetBlockDOMs(ctx, ids) }()
	}
	go func() {
		defer wg.Done()
		defer failure.Recover(&aErr)
		attrs, aErr = env.Kernel.BatchGetBlockAttrs(ctx, ids)
	}()
	kds, kdErr = docKramdowns(ctx, env, ids) // in this goroutine, as in readState
	wg.Wait()
	if err := errors.Join(kdErr, dErr, aErr); err != nil {
		return nil, err
	}
	out := make([]BlockState, len(ids))
	var alone []int
	for i, id := range ids {
		a := attrs[id]
		if a["id"] == "" || kds[id] == "" || withDOM && doms[id] == "" {
			alone = append(alone, i)
			continue
		}
		out[i] = BlockState{ID: id, Kramdown: NormalizeKramdown(kds[id]), Attrs: NormalizeAttrs(a)}
		if withDOM {
			out[i].DOM = NormalizeDOM(doms[id])
		}
	}
	if len(alone) > 0 {
		rest := make([]string, len(alone))
		for j, i := range alone {
			rest[j] = ids[i]
		}
		sts, err := ReadEach(rest, one)
		if err != nil {
			return nil, err
		}
		for j, i := range alone {
			out[i] = sts[j]
		}
	}
	return out, nil
}

// documentOf is the document holding block id, from the block tree
// (without loading the document); false when the kernel cannot place it.
func documentOf(ctx context.Context, env *tools.Env, id string) (string, bool) {
	loc, err := env.Kernel.GetPathByID(ctx, id)
	if err != nil {
		return "", false
	}
	root := siyuan.DocIDOfPath(loc.Path)
	return root, tools.CheckID("id", root) == nil
}

// documentHint names the document to read for block id: the one the SQL
// index places it in (no document loaded: SiYuan answers getPathByID by
// loading the whole document), else, for a block the index does not hold
// yet, the block tree's. The index lags writes, so the hint only picks
// which document to read: a block is taken from it only if that
// document's current kramdown holds it.
func documentHint(ctx context.Context, env *tools.Env, id string) (string, bool) {
	if tools.CheckID("id", id) != nil {
		return "", false
	}
	rows, err := env.Kernel.QuerySQL(ctx, "SELECT root_id FROM blocks WHERE id = '"+id+"' LIMIT 1")
	if err == nil && len(rows) == 1 {
		if root, _ := rows[0]["root_id"].(string); tools.CheckID("id", root) == nil {
			return root, true
		}
	}
	return documentOf(ctx, env, id)
}

// docKramdowns is GetBlockKramdowns for blocks mostly of one document: the
// document of the first block (documentHint) is read once, as kramdown, and each leaf
// block of it (paragraph, heading, code or math block) is cut out and
// rendered as SiYuan renders one block (markup.BlockKramdowns; the contract
// suite checks the two agree). What that does not answer (other
// documents' blocks, containers, tables, unknown ids) is asked of
// getBlockKramdowns. Either way the answer is the kernel's current
// content: a change to a block changes the document's kramdown.
func docKramdowns(ctx context.Context, env *tools.Env, ids []string) (map[string]string, error) {
	root, ok := documentHint(ctx, env, ids[0])
	if !ok {
		return env.Kernel.GetBlockKramdowns(ctx, ids) // unknown or unplaced: the kernel says
	}
	doc, err := env.Kernel.GetBlockKramdown(ctx, root)
	if err != nil {
		return nil, err
	}
	out, err := markup.BlockKramdowns(doc.Kramdown, ids)
	if err != nil {
		out = map[string]string{}
	}
	var rest []string
	for _, id := range ids {
		if out[id] == "" {
			rest = append(rest, id)
		}
	}
	if len(rest) > 0 {
		more, err := env.Kernel.GetBlockKramdowns(ctx, rest)
		if err != nil {
			return nil, err
		}
		for id, kd := range more {
			out[id] = kd
		}
	}
	return out, nil
}

// ReadEach reads each of ids (deduplicated, in sorted order), four at a
// time against the kernel; any failed read fails the whole (fail closed).
func ReadEach[T any](ids []string, read func(id string) (T, error)) ([]T, error) {
	ids = SortedUnique(ids)
	if len(ids) == 1 { // nothing to overlap
		v, err := read(ids[0])
		if err != nil {
			return nil, err
		}
		return []T{v}, nil
	}
	out := make([]T, len(ids))
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4) // bounded fan-out against the kernel
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			defer failure.Recover(&errs[i])
			out[i], errs[i] = read(id)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// SortedUnique returns ids deduplicated, in sorted order.
func SortedUnique(ids []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// volatileAttr names attributes that change without the content
// changing: the timestamps, and the count of references to the block
// (refcount), which SiYuan counts over every notebook, so that a
// reference added in a notebook hidden from agents would move a hash.
func volatileAttr(name string) bool {
	return name == "updated" || name == "created" || name == "refcount"
}

var (
	ialRE     = regexp.MustCompile(`\{:((?:\s+[A-Za-z][\w-]*="(?:[^"\\]|\\.)*")*)\s*\}`)
	ialAttrRE = regexp.MustCompile(`([A-Za-z][\w-]*)="((?:[^"\\]|\\.)*)"`)
)

// NormalizeKramdown rewrites every IAL with its attributes sorted and the
// timestamps removed.
func NormalizeKramdown(s string) string {
	return ialRE.ReplaceAllStringFunc(s, func(ial string) string {
		var parts []string
		for _, m := range ialAttrRE.FindAllStringSubmatch(ial, -1) {
			if !volatileAttr(m[1]) {
				parts = append(parts, m[1]+`="`+m[2]+`"`)
			}
		}
		sort.Strings(parts)
		if len(parts) == 0 {
			return "{:}"
		}
		return "{: " + strings.Join(parts, " ") + "}"
	})
}

// NormalizeAttrs drops the volatile attributes.
func NormalizeAttrs(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		if !volatileAttr(k) {
			out[k] = v
		}
	}
	return out
}

// NormalizeDOM re-renders every tag with sorted attributes, timestamps
// and reference counts dropped (the count's attribute-bar div too); text,
// tag structure and every other attribute value are kept.
func NormalizeDOM(s string) string {
	z := html.NewTokenizer(strings.NewReader(markup.WithoutRefCounts(s)))
	var b strings.Builder
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return b.String()
		case html.StartTagToken, html.SelfClosingTagToken:
			t := z.Token()
			attrs := t.Attr[:0]
			for _, a := range t.Attr {
				if !volatileAttr(a.Key) {
					attrs = append(attrs, a)
				}
			}
			sort.Slice(attrs, func(i, j int) bool { return attrs[i].Key < attrs[j].Key })
			t.Attr = attrs
			b.WriteString(t.String())
		default:
			b.Write(z.Raw())
		}
	}
}
