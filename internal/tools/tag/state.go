package tag

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"html"
	"slices"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/kernelview"
)

// The tag state (the manifest a rename or remove is guarded by) is every
// block that carries the tag, found as the kernel finds them: its spans
// index, which holds one span per inline #label# (on the leaf block that
// holds it) and per label of a document's tags attribute (on the
// document). For each block it holds the block's labels and a digest of
// its content (Markdown, IAL without timestamps, tags), so a rename
// commits only if no tagged block changed since the preflight.

// maxTagged bounds the blocks one rename or remove may touch: the manifest
// must hold them all, and SQL answers are paged by LIMIT.
const maxTagged = 2000

// taggedBlock is one block that carries the tag.
type taggedBlock struct {
	ID       string   `json:"id"`
	Notebook string   `json:"notebook"`
	Root     string   `json:"rootID"`
	Labels   []string `json:"labels"` // every tag label of the block, sorted, each once
	Content  string   `json:"contentHash"`
}

// tagState is the manifest of a label.
type tagState struct {
	Label  string        `json:"label"`
	Nested bool          `json:"nested"` // label/… counts too (rename)
	Blocks []taggedBlock `json:"blocks"`
}

// carries reports whether a label is the tag, or (nested) one under it.
func carries(label, tag string, nested bool) bool {
	return label == tag || nested && strings.HasPrefix(label, tag+"/")
}

// sqlText is s inside an SQL string literal.
func sqlText(s string) string { return strings.ReplaceAll(s, "'", "''") }

// spanRow is one tag span.
type spanRow struct{ Block, Root, Box, Label string }

// tagSpans lists the tag spans whose label starts with prefix (the label
// and the labels nested under it, and longer ones the caller filters out),
// or those of the given blocks; the index is flushed first (it lags
// writes). instr, not LIKE: real SiYuan's /api/query/sql answers null to a
// statement with an ESCAPE clause, and LIKE ignores case where tags do not.
func tagSpans(ctx context.Context, env *tools.Env, prefix string, blocks []string) ([]spanRow, error) {
	if err := env.Kernel.FlushTransaction(ctx); err != nil {
		return nil, err
	}
	where := "instr(content, '" + sqlText(prefix) + "') = 1"
	if blocks != nil {
		quoted := make([]string, len(blocks))
		for i, b := range blocks {
			quoted[i] = "'" + sqlText(b) + "'"
		}
		where = "block_id IN (" + strings.Join(quoted, ", ") + ")"
	}
	rows, err := env.Kernel.QuerySQL(ctx, fmt.Sprintf("SELECT id, block_id, root_id, box, content FROM spans WHERE type LIKE '%%tag%%' AND %s LIMIT %d", where, 10*maxTagged+1))
	if err != nil {
		return nil, err
	}
	if len(rows) > 10*maxTagged {
		return nil, tooMany()
	}
	// Real SiYuan's index may hold a row twice for a moment after a
	// write: each span counts once.
	seen := map[string]bool{}
	out := make([]spanRow, 0, len(rows))
	for _, r := range rows {
		s := func(k string) string { v, _ := r[k].(string); return v }
		if seen[s("id")] {
			continue
		}
		seen[s("id")] = true
		out = append(out, spanRow{s("block_id"), s("root_id"), s("box"), html.UnescapeString(s("content"))})
	}
	return out, nil
}

func tooMany() *failure.Error {
	e := failure.Invalid("more than %d blocks carry this tag, more than one call may guard; nothing was changed", maxTagged)
	e.Action = "rename or remove the tag in SiYuan itself"
	return e.Attempted(false)
}

// readTagState reads the manifest of a label.
func readTagState(ctx context.Context, env *tools.Env, label string, nested bool) (tagState, error) {
	st := tagState{Label: label, Nested: nested, Blocks: []taggedBlock{}}
	spans, err := tagSpans(ctx, env, label, nil)
	if err != nil {
		return st, err
	}
	var ids []string
	for _, s := range spans {
		if carries(s.Label, label, nested) {
			ids = append(ids, s.Block)
		}
	}
	ids = kernelview.SortedUnique(ids)
	if len(ids) > maxTagged {
		return st, tooMany()
	}
	if len(ids) == 0 {
		return st, nil
	}
	// Every label of those blocks, not only the matching ones: the
	// readback checks the others stay.
	all, err := tagSpans(ctx, env, "", ids)
	if err != nil {
		return st, err
	}
	byID := map[string]*taggedBlock{}
	for _, id := range ids {
		byID[id] = &taggedBlock{ID: id, Labels: []string{}}
	}
	for _, s := range all {
		if b := byID[s.Block]; b != nil {
			b.Notebook, b.Root = s.Box, s.Root
			b.Labels = append(b.Labels, s.Label)
		}
	}
	contents, err := blockContents(ctx, env, ids)
	if err != nil {
		return st, err
	}
	for _, id := range ids {
		b := byID[id]
		b.Labels = labelSet(b.Labels)
		b.Content = contents[id]
		st.Blocks = append(st.Blocks, *b)
	}
	return st, nil
}

// labelSet is labels sorted, each once: a block carries a label or not
// (and real SiYuan's index may hold a span twice for a moment).
func labelSet(labels []string) []string {
	out := slices.Clone(labels)
	slices.Sort(out)
	return slices.Compact(out)
}

// blockContents digests each block's indexed content: Markdown, IAL
// without its timestamps, and tags.
func blockContents(ctx context.Context, env *tools.Env, ids []string) (map[string]string, error) {
	quoted := make([]string, len(ids))
	for i, id := range ids {
		quoted[i] = "'" + sqlText(id) + "'"
	}
	rows, err := env.Kernel.QuerySQL(ctx, fmt.Sprintf("SELECT id, markdown, ial, tag FROM blocks WHERE id IN (%s) LIMIT %d", strings.Join(quoted, ", "), 4*len(ids)+4)) // real SiYuan may hold a row twice
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(rows))
	for _, r := range rows {
		s := func(k string) string { v, _ := r[k].(string); return v }
		h := sha256.Sum256([]byte(s("markdown") + "\x00" + kernelview.NormalizeKramdown(s("ial")) + "\x00" + s("tag")))
		out[s("id")] = hex.EncodeToString(h[:])
	}
	return out, nil
}

// touches are the notebooks of the tagged blocks, each needing need.
func (st tagState) touches(need tools.Level) []tools.Touch {
	var out []tools.Touch
	seen := map[string]bool{}
	for _, b := range st.Blocks {
		if b.Notebook != "" && !seen[b.Notebook] {
			seen[b.Notebook] = true
			out = append(out, tools.OnNotebook(b.Notebook, need))
		}
	}
	return out
}
