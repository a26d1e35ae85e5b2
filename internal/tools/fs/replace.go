package fs

import (
	"context"
	"fmt"
	"strings"

	"golang.org/x/net/html"

	"github.com/sisyphus-go/sisyphus/internal/canon"
	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/kernelview"
	"github.com/sisyphus-go/sisyphus/internal/tools/markup"
)

// fs.replace: exact text edits across a document, each applied inside one
// block. Edits run in order, each on the text the ones before it left. An
// edit matches inside the kramdown body of the document's paragraphs and
// headings, code and math blocks and tables (wherever they nest, except inside complex blocks, which are
// skipped and reported); a match that would span two blocks is refused, as
// is an edit with no match, and one with several matches without
// replace_all. Only the blocks whose text changes are written, each once.

// textEdit is one exact edit (block.replace takes the same).
type textEdit = markup.TextEdit

// replaceArgs are fs.replace's arguments.
type replaceArgs struct {
	RawPath string           `arg:"path" help:"the document's path /<notebook>/<title>, or /AGENTS.md" required:""`
	Edit    []map[string]any `arg:"edit" help:"{\"old\":..., \"new\":..., \"replace_all\":false} or a list of them, applied in order; old is exact kramdown text inside one block" oneOrMore:""`
	Old     *string          `arg:"old" help:"shorthand for one edit: the exact text to replace"`
	New     *string          `arg:"new" help:"shorthand for one edit: the replacement (may be empty)"`
	All     bool             `arg:"replace_all" help:"shorthand for one edit: replace every occurrence"`
	// Path and Edits are what the arguments ask, checked.
	Path  humanPath
	Edits []textEdit
}

// maxEdits bounds one call's edits.
const maxEdits = 64

// editable are the block types whose kramdown body an edit changes: the
// leaf blocks of text (paragraphs, headings, code, math and tables).
var editable = map[string]bool{"NodeParagraph": true, "NodeHeading": true, "NodeCodeBlock": true, "NodeMathBlock": true, "NodeTable": true}

func (r *replaceArgs) parse() error {
	p, err := parseDocPath("path", r.RawPath)
	if err != nil {
		return err
	}
	if p.Virtual == rulesFile {
		return readOnly(p.Virtual)
	}
	r.Path = p
	raw := r.Edit
	switch {
	case raw != nil && (r.Old != nil || r.New != nil):
		return failure.Invalid("give either edit or old/new, not both")
	case raw == nil && r.Old != nil:
		if r.New == nil {
			return failure.Invalid("old needs new (the replacement; may be empty)")
		}
		raw = []map[string]any{{"old": *r.Old, "new": *r.New, "replace_all": r.All}}
	case raw == nil:
		return failure.Invalid("missing argument \"edit\": {\"old\":...,\"new\":...} or a list of them (or old and new)")
	}
	if len(raw) > maxEdits {
		return failure.Invalid("at most %d edits per call, got %d", maxEdits, len(raw))
	}
	for i, m := range raw {
		e, err := markup.ParseEdit(i, m)
		if err != nil {
			return err
		}
		if p.Virtual == "" && (strings.Contains(e.New, "{:") || strings.Contains(e.Old, "{:")) {
			return failure.Invalid("edit #%d touches a block attribute list ({: ...}); set attributes with block.set_attrs", i+1)
		}
		r.Edits = append(r.Edits, e)
	}
	return nil
}

// skippedBlock is a complex block the edits did not look into.
type skippedBlock struct {
	ID   string `json:"id"`
	Type string `json:"type"`
}

// replaceState is fs.replace's manifest: the document's block list and
// the state (kramdown and attributes) of every block the edits would
// change; for /AGENTS.md the digest of its text. The candidate bodies are
// kept for planning, unhashed: a block the edits do not touch may change
// without invalidating the lease, one they would touch may not, and a
// block that now matches changes the set of targets.
type replaceState struct {
	Path     string                  `json:"path"`
	Virtual  bool                    `json:"virtual,omitempty"`
	TextHash string                  `json:"textHash,omitempty"`
	Missing  bool                    `json:"missing,omitempty"`
	RootID   string                  `json:"rootID,omitempty"`
	Blocks   []skippedBlock          `json:"blocks,omitempty"`
	Targets  []kernelview.BlockState `json:"targets,omitempty"`

	text      string
	order     []string          // candidate block ids, document order
	bodies    map[string]string // candidate id → kramdown body
	types     map[string]string // candidate id → block type
	skipped   []skippedBlock
	editables int
}

// docLayout lists a document DOM's blocks in document order and, apart,
// the editable blocks not inside a complex one, and the complex blocks.
func docLayout(dom string) (all, editableIDs []skippedBlock, complexBlocks []skippedBlock, err error) {
	root, err := html.Parse(strings.NewReader(dom))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("document DOM: %w", err)
	}
	var visit func(n *html.Node, inComplex bool)
	visit = func(n *html.Node, inComplex bool) {
		if n.Type == html.ElementNode {
			id, typ := markup.BlockOf(n)
			if id != "" && typ != "" && typ != "NodeDocument" {
				b := skippedBlock{id, typ}
				all = append(all, b)
				switch {
				case inComplex:
				case complexTypes[typ]:
					complexBlocks = append(complexBlocks, b)
					inComplex = true
				case editable[typ]:
					editableIDs = append(editableIDs, b)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			visit(c, inComplex)
		}
	}
	visit(root, false)
	return all, editableIDs, complexBlocks, nil
}

// readReplace reads the manifest of an fs.replace.
func readReplace(ctx context.Context, env *tools.Env, a replaceArgs) (replaceState, error) {
	p := a.Path
	if p.Virtual != "" {
		v, err := virtualState(ctx, env, p.Virtual)
		if err != nil {
			return replaceState{}, err
		}
		return replaceState{Path: p.Raw, Virtual: true, TextHash: v.TextHash, text: v.text}, nil
	}
	t, err := resolve(ctx, env, p)
	if err != nil {
		return replaceState{}, err
	}
	if t.Missing {
		return replaceState{Path: p.Raw, Missing: true}, nil
	}
	dom, err := env.Kernel.GetBlockDOM(ctx, t.DocID)
	if err != nil {
		return replaceState{}, err
	}
	if strings.TrimSpace(dom.DOM) == "" {
		if ok, err := env.Kernel.CheckBlockExist(ctx, t.DocID); err != nil {
			return replaceState{}, err
		} else if !ok {
			return replaceState{Path: p.Raw, Missing: true}, nil
		}
		return replaceState{}, fmt.Errorf("document %s read back empty", t.DocID)
	}
	all, eds, cx, err := docLayout(dom.DOM)
	if err != nil {
		return replaceState{}, err
	}
	st := replaceState{Path: p.Raw, RootID: t.DocID, Blocks: all, skipped: cx, editables: len(eds), bodies: map[string]string{}, types: map[string]string{}}
	ids := make([]string, len(eds))
	for i, b := range eds {
		ids[i] = b.ID
		st.types[b.ID] = b.Type
	}
	if len(ids) > 0 {
		kds, err := candidateKramdowns(ctx, env, t.DocID, ids)
		if err != nil {
			return replaceState{}, err
		}
		for _, id := range ids {
			body, _ := markup.SplitIAL(kernelview.NormalizeKramdown(kds[id]))
			st.bodies[id] = body
			st.order = append(st.order, id)
		}
	}
	// The blocks the edits change are read from the kernel one by one (the
	// manifest); where one's own kramdown differs from the document's split
	// (which the contract checks say it does not), the kernel's wins and
	// the edits are planned again.
	for range 3 {
		plan, err := planDoc(st, a.Edits)
		if err != nil || len(plan.changed) == 0 {
			st.Targets = nil
			return st, nil // Check refuses it with the reason
		}
		targets, err := kernelview.ReadBlockContents(ctx, env, plan.changed)
		if err != nil {
			return replaceState{}, err
		}
		st.Targets = targets
		stable := true
		for _, tg := range targets {
			if tg.Missing {
				return replaceState{}, fmt.Errorf("block %s of document %s went away while it was read", tg.ID, t.DocID)
			}
			if body, _ := markup.SplitIAL(tg.Kramdown); body != st.bodies[tg.ID] {
				st.bodies[tg.ID], stable = body, false
			}
		}
		if stable {
			return st, nil
		}
	}
	return replaceState{}, fmt.Errorf("document %s kept changing while it was read", t.DocID)
}

// candidateKramdowns reads the kramdown of a document's editable blocks:
// the document's kramdown once, split per block (SiYuan's batch read loads
// the document again for every block: seconds for a long one), and any
// block the split misses read by itself.
func candidateKramdowns(ctx context.Context, env *tools.Env, doc string, ids []string) (map[string]string, error) {
	whole, err := env.Kernel.GetBlockKramdown(ctx, doc)
	if err != nil {
		return nil, err
	}
	kds, err := markup.BlockKramdowns(whole.Kramdown, ids)
	if err != nil {
		kds = map[string]string{}
	}
	var missing []string
	for _, id := range ids {
		if _, ok := kds[id]; !ok {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		more, err := env.Kernel.GetBlockKramdowns(ctx, missing)
		if err != nil {
			return nil, err
		}
		for _, id := range missing {
			kd, ok := more[id]
			if !ok {
				return nil, fmt.Errorf("block %s of document %s did not read", id, doc)
			}
			kds[id] = kd
		}
	}
	return kds, nil
}

// editCount is what one edit did.
type editCount struct {
	Index      int  `json:"index"`
	Replaced   int  `json:"replaced"`
	ReplaceAll bool `json:"replace_all"`
}

// docPlan is the planned change: each changed block's new body.
type docPlan struct {
	changed []string // ids, document order
	bodies  map[string]string
	counts  []editCount
}

// applyEdit applies one edit to a text: how many matches it had, and the
// text after (unchanged when it had none).
func applyEdit(text string, e textEdit) (string, int) {
	n := strings.Count(text, e.Old)
	switch {
	case n == 0:
		return text, 0
	case e.ReplaceAll:
		return strings.ReplaceAll(text, e.Old, e.New), n
	}
	return strings.Replace(text, e.Old, e.New, 1), n
}

// planDoc applies the edits to the candidate bodies.
func planDoc(st replaceState, edits []textEdit) (docPlan, error) {
	plan := docPlan{bodies: map[string]string{}}
	cur := make(map[string]string, len(st.bodies))
	for id, b := range st.bodies {
		cur[id] = b
	}
	for i, e := range edits {
		total, in := 0, []string(nil)
		for _, id := range st.order {
			if n := strings.Count(cur[id], e.Old); n > 0 {
				total += n
				in = append(in, id)
			}
		}
		switch {
		case total == 0:
			return plan, noMatch(st, cur, i, e)
		case total > 1 && !e.ReplaceAll:
			return plan, failure.Invalid("edit #%d: old occurs %d times (in blocks %s); nothing was changed: pass replace_all:true, or make old longer so that it occurs once",
				i+1, total, strings.Join(in, ", ")).With("blocks", in)
		}
		for _, id := range in {
			next, _ := applyEdit(cur[id], e)
			if strings.TrimSpace(next) == "" {
				return plan, failure.Invalid("edit #%d would leave block %s empty; nothing was changed: delete it with block.delete", i+1, id)
			}
			cur[id] = next
		}
		plan.counts = append(plan.counts, editCount{i + 1, total, e.ReplaceAll})
	}
	for _, id := range st.order {
		if cur[id] != st.bodies[id] {
			plan.changed = append(plan.changed, id)
			plan.bodies[id] = cur[id]
		}
	}
	return plan, nil
}

// noMatch explains an edit without a match: across a block boundary, or
// nowhere in the editable blocks.
func noMatch(st replaceState, cur map[string]string, i int, e textEdit) error {
	texts := make([]string, len(st.order))
	for j, id := range st.order {
		texts[j] = cur[id]
	}
	for _, sep := range []string{"\n\n", "\n", " ", ""} {
		if strings.Contains(strings.Join(texts, sep), e.Old) {
			return failure.Invalid("edit #%d: old spans a block boundary, and an edit changes the text inside one block; nothing was changed: "+
				"split it into one edit per block", i+1)
		}
	}
	msg := fmt.Sprintf("edit #%d: old does not occur in the editable blocks (paragraphs, headings, code, math and tables) of %s; nothing was changed", i+1, st.Path)
	if len(st.skipped) > 0 {
		msg += fmt.Sprintf(" (%d complex blocks were not searched: edit them with the block tool)", len(st.skipped))
	}
	return failure.Invalid("%s", msg)
}

// planVirtual applies the edits to the memory's text.
func planVirtual(st replaceState, edits []textEdit) (string, []editCount, error) {
	text := st.text
	var counts []editCount
	for i, e := range edits {
		next, n := applyEdit(text, e)
		switch {
		case n == 0:
			return "", nil, failure.Invalid("edit #%d: old does not occur in %s; nothing was changed", i+1, st.Path)
		case n > 1 && !e.ReplaceAll:
			return "", nil, failure.Invalid("edit #%d: old occurs %d times in %s; nothing was changed: pass replace_all:true, or make old longer", i+1, n, st.Path)
		}
		text = next
		counts = append(counts, editCount{i + 1, n, e.ReplaceAll})
	}
	if err := checkText(text); err != nil {
		return "", nil, err
	}
	return text, counts, nil
}

func checkReplace(a replaceArgs, st replaceState) error {
	switch {
	case st.Virtual:
		_, _, err := planVirtual(st, a.Edits)
		return err
	case st.Missing:
		return noDoc(a.Path)
	case st.editables == 0:
		return failure.Invalid("%s has no editable blocks (paragraphs, headings, code, math or tables outside complex blocks); nothing was changed", a.Path.Raw)
	}
	plan, err := planDoc(st, a.Edits)
	if err == nil && len(plan.changed) == 0 {
		err = failure.Invalid("the edits leave %s as it is (each new equals what it replaces); nothing was changed", a.Path.Raw)
	}
	if err != nil {
		return err
	}
	// Each edited block stays one block of its kind: an edit changes text,
	// never the document's structure (Execute, after this passed, skips
	// the parse).
	for _, id := range plan.changed {
		types, perr := markup.BlockTypes(plan.bodies[id])
		if perr != nil || len(types) != 1 || types[0] != st.types[id] {
			return failure.Invalid("the edits would turn block %s (%s) into %s; nothing was changed: an edit changes text inside one block "+
				"(no blank lines or new block syntax; use block.update to restructure)", id, strings.TrimPrefix(st.types[id], "Node"), describeTypes(types))
		}
	}
	return nil
}

// describeTypes names parsed blocks for a refusal.
func describeTypes(types []string) string {
	if len(types) == 0 {
		return "nothing"
	}
	out := make([]string, len(types))
	for i, t := range types {
		out[i] = strings.TrimPrefix(t, "Node")
	}
	return strings.Join(out, " + ")
}

// replaceDigests are what a replace hands its readback: digests only.
type replaceDigests struct {
	// text is the memory's expected text (a virtual path's edit).
	text string
	// expect and applied are, by block id, the expected body and the text
	// the kernel applied (absent when it said nothing).
	expect, applied map[string]string
	// blocks is the document's block list before.
	blocks string
}

func execReplace(ctx context.Context, env *tools.Env, a replaceArgs, st replaceState) (tools.Payload, replaceDigests, error) {
	var check replaceDigests
	if st.Virtual {
		text, counts, err := planVirtual(st, a.Edits)
		if err != nil {
			return nil, check, tools.Refuse(err)
		}
		out, err := setMemory(ctx, env, text)
		if err != nil {
			return nil, check, err
		}
		out["replacements"], check.text = counts, canon.DigestBytes([]byte(text))
		return out, check, nil
	}
	plan, err := planDoc(st, a.Edits)
	if err != nil {
		return nil, check, tools.Refuse(err)
	}
	attrs := map[string]map[string]string{}
	for _, t := range st.Targets {
		attrs[t.ID] = t.Attrs
	}
	check.expect, check.applied = map[string]string{}, map[string]string{}
	for i, id := range plan.changed {
		data := plan.bodies[id]
		if keep := keptIAL(attrs[id]); len(keep) > 0 {
			data += "\n" + markup.IALLine(keep)
		}
		txs, err := env.Kernel.UpdateBlock(ctx, id, "markdown", data)
		if err != nil {
			return nil, check, tools.WriteFailure(err, i > 0)
		}
		check.expect[id] = canon.DigestBytes([]byte(plan.bodies[id]))
		if t, ok := appliedUpdate(txs, id); ok && t != "" {
			check.applied[id] = canon.DigestBytes([]byte(t))
		}
	}
	check.blocks = canon.DigestBytes([]byte(blockList(st.Blocks)))
	out := tools.Payload{"path": a.Path.Raw, "id": st.RootID, "changedBlocks": plan.changed, "replacements": plan.counts}
	if len(st.skipped) > 0 {
		out["skippedComplexBlocks"] = st.skipped
	}
	return out, check, nil
}

// keptIAL are the attributes an update writes back in the block's IAL: all
// but the ones SiYuan manages.
func keptIAL(attrs map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range attrs {
		if k != "id" && k != "updated" && v != "" {
			out[k] = v
		}
	}
	return out
}

// appliedUpdate is the visible text of the DOM the kernel's update of id
// applied.
func appliedUpdate(txs []siyuan.Transaction, id string) (text string, ok bool) {
	for _, tx := range txs {
		for _, op := range tx.DoOperations {
			if d, isStr := op.Data.(string); isStr && op.ID == id && op.Action == "update" {
				text, ok = markup.BlockDOMText(d, id), true // the last update of id wins
			}
		}
	}
	return text, ok
}

// replaceReadback checks that each edited block (or the memory) shows
// its edit, and that the document kept its blocks.
func replaceReadback(ctx context.Context, env *tools.Env, a replaceArgs, _ tools.Payload, check replaceDigests) (any, error) {
	if a.Path.Virtual != "" {
		want := check.text
		st, err := virtualState(ctx, env, a.Path.Virtual)
		if err != nil {
			return nil, err
		}
		if st.TextHash != want {
			return nil, fmt.Errorf("%s does not read back the edited text", a.Path.Raw)
		}
		return readReplace(ctx, env, a)
	}
	expect, applied := check.expect, check.applied
	ids := make([]string, 0, len(expect))
	for id := range expect {
		ids = append(ids, id)
	}
	ids = kernelview.SortedUnique(ids)
	read := func(ctx context.Context) ([]kernelview.BlockState, error) {
		return kernelview.ReadBlockStates(ctx, env, ids)
	}
	if _, err := tools.Await(ctx, read, func(sts []kernelview.BlockState) error {
		for _, s := range sts {
			if s.Missing {
				return fmt.Errorf("block %s is gone after the replace", s.ID)
			}
			body, _ := markup.SplitIAL(s.Kramdown)
			// The edited kramdown reads back exactly, or (when the kernel
			// respells markdown) the block shows exactly the text the
			// kernel applied for this edit.
			if canon.DigestBytes([]byte(body)) != expect[s.ID] &&
				(applied[s.ID] == "" || canon.DigestBytes([]byte(markup.DOMText(s.DOM))) != applied[s.ID]) {
				return fmt.Errorf("block %s does not show the edit", s.ID)
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	st, err := readReplace(ctx, env, a)
	if err != nil {
		return nil, err
	}
	// Exactly the planned blocks changed: the document keeps its blocks.
	want := check.blocks
	if got := canon.DigestBytes([]byte(blockList(st.Blocks))); want != "" && got != want {
		return nil, fmt.Errorf("document %s has other blocks after the replace than before", st.RootID)
	}
	return st, nil
}

// blockList is a document's block list as one string, for comparison.
func blockList(bs []skippedBlock) string {
	parts := make([]string, len(bs))
	for i, b := range bs {
		parts[i] = b.ID + ":" + b.Type
	}
	return strings.Join(parts, ",")
}

var replace = tools.WriteWith[replaceArgs, replaceState, replaceDigests]{Write: tools.Write[replaceArgs, replaceState]{
	Name: "replace", Summary: "exact text edits across a document, each inside one paragraph, heading, code or math block or table (complex blocks are skipped and listed); " +
		"several matches need replace_all; on " + memoryFile + " the edits apply to the memory's text",
	Example:  map[string]any{"path": "/Research/Reading list", "edit": map[string]any{"old": "Dune", "new": "Dune Messiah"}, "validateOnly": true},
	Policy:   strict.WritePolicy{Class: strict.Mutation, Precondition: strict.ExpectedManifestHash},
	Validate: (*replaceArgs).parse,
	Scope: tools.Scope[replaceArgs]{Resolve: func(ctx context.Context, env *tools.Env, a replaceArgs) ([]tools.Touch, error) {
		return onPaths(ctx, env, tools.LevelWrite, a.Path)
	}},
	Targets: func(a replaceArgs) []string { return []string{a.Path.Raw} },
	State:   readReplace,
	Check:   checkReplace,
	Notes: func(a replaceArgs, st replaceState) map[string]any {
		out := map[string]any{}
		if len(st.skipped) > 0 {
			out["skippedComplexBlocks"] = st.skipped
		}
		if len(st.Targets) > 0 {
			ids := make([]string, len(st.Targets))
			for i, t := range st.Targets {
				ids[i] = t.ID
			}
			out["changesBlocks"] = ids
		}
		return out
	},
},
	Execute:  execReplace,
	Readback: replaceReadback,
}
