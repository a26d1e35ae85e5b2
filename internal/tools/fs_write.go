package tools

import (
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/html"

	"github.com/sisyphus-go/sisyphus/internal/canon"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
)

// The fs writes. Their state readers are the P-fs probe: a path resolves
// through the live file tree, each candidate document is checked to exist
// before its block tree is read (an unknown id reads as an empty tree, so an
// empty read never proves anything), and the SQL index is never consulted.

// fsBlock is one block of a document, in document order.
type fsBlock struct {
	ID      string            `json:"id"`
	Type    string            `json:"type"`
	SubType string            `json:"subType,omitempty"`
	Attrs   map[string]string `json:"attrs,omitempty"`
}

// fsChild is a direct child document, for the state of a removal (which
// takes the whole subtree with it).
type fsChild struct {
	ID           string `json:"id"`
	SubFileCount int    `json:"subFileCount"`
}

// fsDocState is the P-fs state of one path.
type fsDocState struct {
	Path     string    `json:"path"`
	Missing  bool      `json:"missing,omitempty"`
	Notebook string    `json:"notebook,omitempty"`
	HPath    string    `json:"hpath,omitempty"`
	RootID   string    `json:"rootID,omitempty"`
	Blocks   []fsBlock `json:"blocks,omitempty"`
	Markdown string    `json:"markdown,omitempty"`
	Children []fsChild `json:"children,omitempty"`
	dom      string    // the body's DOM, for readback checks; not hashed
}

// fsComplexTypes are blocks an overwrite would destroy without a Markdown
// equivalent: databases, super blocks, embeds, widgets, HTML and media.
var fsComplexTypes = map[string]bool{
	"NodeAttributeView": true, "NodeSuperBlock": true, "NodeBlockQueryEmbed": true, "NodeWidget": true,
	"NodeHTMLBlock": true, "NodeVideo": true, "NodeAudio": true, "NodeIFrame": true, "NodeCustomBlock": true,
}

// fsBlockAttr reports the block attributes a state keeps: what a user or a
// plugin set, not the kernel's bookkeeping.
func fsBlockAttr(k string) bool {
	switch k {
	case "name", "alias", "memo", "bookmark", "style", "fold", "heading-fold":
		return true
	}
	return strings.HasPrefix(k, "custom-")
}

// fsDocBlocks lists the blocks of a document's DOM in document order.
func fsDocBlocks(dom string) []fsBlock {
	z := html.NewTokenizer(strings.NewReader(dom))
	var out []fsBlock
	for {
		switch z.Next() {
		case html.ErrorToken:
			return out
		case html.StartTagToken, html.SelfClosingTagToken:
			t := z.Token()
			var b fsBlock
			for _, a := range t.Attr {
				switch {
				case a.Key == "data-node-id":
					b.ID = a.Val
				case a.Key == "data-type":
					b.Type = a.Val
				case a.Key == "data-subtype":
					b.SubType = a.Val
				case fsBlockAttr(a.Key) && a.Val != "":
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

// fsReadDoc reads a document's block tree and editable Markdown, after
// checking that it exists. A failed read fails the state (fail closed).
func fsReadDoc(ctx context.Context, env *Env, p fsPath, nb, id string) (fsDocState, error) {
	st := fsDocState{Path: p.Raw, Notebook: nb, HPath: p.HPath(), RootID: id}
	ok, err := env.Kernel.CheckBlockExist(ctx, id)
	if err != nil {
		return st, err
	}
	if !ok {
		return fsDocState{Path: p.Raw, Missing: true}, nil
	}
	var (
		wg           sync.WaitGroup
		dom          siyuan.BlockDOM
		kids         []siyuan.ChildBlock
		domErr, kErr error
	)
	wg.Add(2)
	go func() { defer wg.Done(); dom, domErr = env.Kernel.GetBlockDOM(ctx, id) }()
	go func() { defer wg.Done(); kids, kErr = env.Kernel.GetChildBlocks(ctx, id) }()
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
			return fsDocState{Path: p.Raw, Missing: true}, nil
		}
		return st, fmt.Errorf("document %s read back empty", id)
	}
	st.dom = dom.DOM
	st.Blocks = fsDocBlocks(dom.DOM)
	md := make([]string, len(kids))
	for i, k := range kids {
		md[i] = k.Markdown
	}
	st.Markdown = strings.Join(md, "\n\n")
	return st, nil
}

// fsPathState is the P-fs state of a document path: missing, or the one
// live document there. withChildren adds its direct child documents.
func fsPathState(ctx context.Context, env *Env, p fsPath, withChildren bool) (fsDocState, error) {
	t, err := fsResolve(ctx, env, p)
	if err != nil {
		return fsDocState{}, err
	}
	if t.Missing {
		return fsDocState{Path: p.Raw, Missing: true}, nil
	}
	return fsDocStateWith(ctx, env, p, t.Notebook.ID, t.DocID, withChildren)
}

func fsDocStateWith(ctx context.Context, env *Env, p fsPath, nb, id string, withChildren bool) (fsDocState, error) {
	st, err := fsReadDoc(ctx, env, p, nb, id)
	if err != nil || st.Missing || !withChildren {
		return st, err
	}
	info, err := env.Kernel.GetBlockInfo(ctx, id)
	if err != nil {
		return st, err
	}
	kids, err := listChildren(ctx, env, nb, info.Path)
	if err != nil {
		return st, err
	}
	for _, k := range kids {
		st.Children = append(st.Children, fsChild{k.ID, k.SubFileCount})
	}
	return st, nil
}

// fsOverwriteRefusal fails closed when replacing the body would lose what
// Markdown cannot carry.
func fsOverwriteRefusal(p string, blocks []fsBlock) error {
	for _, b := range blocks {
		if fsComplexTypes[b.Type] {
			return badArg("%s holds a %s block (%s) that an overwrite would destroy; nothing was written: edit it with the block tool", p, b.Type, b.ID)
		}
		for k := range b.Attrs {
			if k != "fold" && k != "heading-fold" {
				return badArg("%s holds block %s with the %s attribute, which an overwrite would drop; nothing was written: edit it with the block tool", p, b.ID, k)
			}
		}
	}
	return nil
}

var fsH1RE = regexp.MustCompile(`^#[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$`)

// fsStripTitle drops a leading "# <title>" that repeats the document title.
func fsStripTitle(md, title string) string {
	lines := strings.Split(strings.ReplaceAll(md, "\r\n", "\n"), "\n")
	i := 0
	for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	if i == len(lines) {
		return md
	}
	if m := fsH1RE.FindStringSubmatch(lines[i]); m == nil || strings.TrimSpace(m[1]) != title {
		return md
	}
	i++
	for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	return strings.Join(lines[i:], "\n")
}

// fsPollWaits are the readback delays: the kernel may apply or index a write
// a little after it answers.
var fsPollWaits = []time.Duration{0, 50, 100, 200, 400, 800}

var errFsNotYet = errors.New("not observed")

// fsPoll retries check until it reports done; an error stops at once (a
// failed query proves nothing, in either direction).
func fsPoll(ctx context.Context, check func() (bool, error)) error {
	for _, w := range fsPollWaits {
		if err := sleepCtx(ctx, w*time.Millisecond); err != nil {
			return err
		}
		done, err := check()
		if err != nil {
			return err
		}
		if done {
			return nil
		}
	}
	return errFsNotYet
}

func fsTargets(names ...string) func(a *Args) []string {
	return func(a *Args) []string {
		var out []string
		for _, n := range names {
			if v := a.String(n); v != "" {
				out = append(out, v)
			}
			out = append(out, a.Strings(n)...)
		}
		return sortedUnique(out)
	}
}

// fsGuard wraps a state reader. A preflight refuses an invalid call with
// its own code (invalid_arguments, not_found, ambiguous_path). At commit the
// same call passed that preflight, so a refusal now means the target changed
// in between: it becomes a state whose digest differs from the lease's, and
// the caller gets state_changed. Kernel failures stay errors (fail closed).
func fsGuard(read func(ctx context.Context, env *Env, a *Args) (any, error)) func(ctx context.Context, env *Env, a *Args) (any, error) {
	return func(ctx context.Context, env *Env, a *Args) (any, error) {
		st, err := read(ctx, env, a)
		var e *Error
		if err != nil && !a.Bool(fieldValidateOnly) && errors.As(err, &e) {
			switch e.Code {
			case CodeInvalidArguments, CodeNotFound, CodeAmbiguousPath:
				return map[string]any{"refused": e.Code, "reason": e.Message}, nil
			}
		}
		return st, err
	}
}

// fsReadFail is a read made before any write failed: nothing was applied.
func fsReadFail(err error) error { return fsRefuse(kernelError(err)) }

// ---- write ----------------------------------------------------------------

func fsWriteAction() *Action {
	guarded := strict.Policy{Class: strict.Mutation, Precondition: strict.ExpectedStateHash}
	return &Action{
		Name: "write", Destructive: true,
		Summary: "create a document at a path from Markdown (additive: requestId only; refused if the path exists); " +
			"overwrite:true replaces the body of the document there, or creates it where the path is free (guarded by expectedStateHash; refused for documents " +
			"holding databases, super blocks, embeds, widgets, HTML, media or blocks with name/alias/memo/bookmark/style/custom-* attributes)",
		Policy: guarded,
		PolicyFor: func(a *Args) strict.Policy {
			if a.Bool("overwrite") {
				return guarded
			}
			return strict.Policy{Class: strict.Additive}
		},
		Params: []Param{
			{Name: "path", Type: String, Required: true, Description: "the document's path /<notebook>/<title>/<child title>; missing parents are created empty"},
			{Name: "content", Type: String, Required: true, Description: "the body as Markdown; a leading \"# <title>\" repeating the title is dropped"},
			{Name: "overwrite", Type: Boolean, Default: false, Description: "replace the body of the document at path (a guarded mutation: preflight returns expectedStateHash)"},
		},
		Write: &Write{Targets: fsTargets("path"), State: fsGuard(fsWriteState), Execute: fsWriteExec, Readback: fsWriteReadback},
	}
}

func fsOverwriteBody(a *Args, p fsPath) (string, error) {
	body := fsStripTitle(a.String("content"), p.Title())
	if strings.TrimSpace(body) == "" {
		return "", badArg("overwrite needs a non-empty body; to remove the document use rm")
	}
	return body, nil
}

// fsWriteState is the guarded state of an overwrite: the path's document
// (or its absence), refused early when the overwrite could not proceed.
func fsWriteState(ctx context.Context, env *Env, a *Args) (any, error) {
	p, err := fsDocPath("path", a.String("path"))
	if err != nil {
		return nil, err
	}
	if _, err := fsOverwriteBody(a, p); err != nil {
		return nil, err
	}
	st, err := fsPathState(ctx, env, p, false)
	if err != nil {
		return nil, err
	}
	if !st.Missing {
		if err := fsOverwriteRefusal(p.Raw, st.Blocks); err != nil {
			return nil, err
		}
	}
	return st, nil
}

func fsWriteExec(ctx context.Context, env *Env, a *Args) (map[string]any, error) {
	p, err := fsDocPath("path", a.String("path"))
	if err != nil {
		return nil, fsRefuse(err)
	}
	nb, err := fsNotebook(ctx, env, p.Notebook)
	if err != nil {
		return nil, fsReadFail(err)
	}
	ids, err := fsLiveDocs(ctx, env, nb.ID, p.HPath())
	if err != nil {
		return nil, fsReadFail(err)
	}
	overwrite := a.Bool("overwrite")
	switch {
	case len(ids) > 1:
		return nil, fsRefuse(fsAmbiguous("document", p.Raw, ids))
	case len(ids) == 1 && !overwrite:
		return nil, fsRefuse(badArg("a document already exists at %s (%s); nothing was written: pass overwrite:true to replace its body", p.Raw, ids[0]))
	case len(ids) == 1:
		return fsOverwriteDoc(ctx, env, a, p, nb.ID, ids[0])
	}
	if overwrite {
		if _, err := fsOverwriteBody(a, p); err != nil {
			return nil, fsRefuse(err)
		}
	}
	parentID := ""
	if len(p.Titles) > 1 {
		pids, err := fsLiveDocs(ctx, env, nb.ID, p.Parent().HPath())
		if err != nil {
			return nil, fsReadFail(err)
		}
		if len(pids) > 1 {
			return nil, fsRefuse(fsAmbiguous("document", p.Parent().Raw, pids))
		}
		if len(pids) == 1 {
			parentID = pids[0]
		}
	}
	id, err := env.Kernel.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: nb.ID, Path: p.HPath(),
		Markdown: fsStripTitle(a.String("content"), p.Title()), ParentID: parentID})
	if err != nil {
		return nil, writeErr(err, false)
	}
	return map[string]any{"path": p.Raw, "id": id, "notebook": nb.ID, "created": true}, nil
}

func fsOverwriteDoc(ctx context.Context, env *Env, a *Args, p fsPath, nb, id string) (map[string]any, error) {
	body, err := fsOverwriteBody(a, p)
	if err != nil {
		return nil, fsRefuse(err)
	}
	dom, err := env.Kernel.GetBlockDOM(ctx, id)
	if err != nil {
		return nil, fsReadFail(err)
	}
	if err := fsOverwriteRefusal(p.Raw, fsDocBlocks(dom.DOM)); err != nil {
		return nil, fsRefuse(err)
	}
	// updateBlock on a document id replaces its whole body in one write.
	txs, err := env.Kernel.UpdateBlock(ctx, id, "markdown", body)
	if err != nil {
		return nil, writeErr(err, false)
	}
	var applied []string
	for _, tx := range txs {
		for _, op := range tx.DoOperations {
			if d, ok := op.Data.(string); ok && op.ParentID == id && strings.HasSuffix(op.Action, "nsert") {
				applied = append(applied, domText(d))
			}
		}
	}
	out := map[string]any{"path": p.Raw, "id": id, "notebook": nb, "overwritten": true}
	if len(applied) > 0 {
		// A digest of the text the kernel applied, for the readback.
		out["_appliedTextHash"] = canon.DigestBytes([]byte(strings.Join(applied, " ")))
	}
	return out, nil
}

func fsWriteReadback(ctx context.Context, env *Env, a *Args, payload map[string]any) (any, error) {
	p, err := fsDocPath("path", a.String("path"))
	if err != nil {
		return nil, err
	}
	id, _ := payload["id"].(string)
	if id == "" {
		return nil, errors.New("the kernel reported no document id")
	}
	want, _ := payload["_appliedTextHash"].(string)
	nb, _ := payload["notebook"].(string)
	if nb == "" {
		n, err := fsNotebook(ctx, env, p.Notebook)
		if err != nil {
			return nil, err
		}
		nb = n.ID
	}
	// The document exists (live check first), then the path resolves to it.
	if err := fsPoll(ctx, func() (bool, error) {
		ok, err := env.Kernel.CheckBlockExist(ctx, id)
		if err != nil || !ok {
			return false, err
		}
		ids, err := fsLiveDocs(ctx, env, nb, p.HPath())
		return contains(ids, id), err
	}); err != nil {
		return nil, fmt.Errorf("document %s at %s: %w", id, p.Raw, err)
	}
	st, err := fsReadDoc(ctx, env, p, nb, id)
	if err != nil {
		return nil, err
	}
	if st.Missing {
		return nil, fmt.Errorf("document %s is gone", id)
	}
	if want != "" {
		if got := canon.DigestBytes([]byte(domText(st.dom))); got != want {
			return nil, fmt.Errorf("document %s does not show the requested body", id)
		}
	}
	return st, nil
}

// ---- rm -------------------------------------------------------------------

func fsRmAction() *Action {
	return &Action{
		Name: "rm", Summary: "remove the document at a path, with its child documents (SiYuan keeps a copy in its history)",
		Policy: strict.Policy{Class: strict.Mutation, Precondition: strict.ExpectedStateHash}, Destructive: true,
		Params: []Param{{Name: "path", Type: String, Required: true, Description: "the document's path /<notebook>/<title>"}},
		Write: &Write{
			Targets: fsTargets("path"),
			State: fsGuard(func(ctx context.Context, env *Env, a *Args) (any, error) {
				p, err := fsDocPath("path", a.String("path"))
				if err != nil {
					return nil, err
				}
				st, err := fsPathState(ctx, env, p, true)
				if err == nil && st.Missing {
					return nil, fsNoDoc(p)
				}
				return st, err
			}),
			Execute: func(ctx context.Context, env *Env, a *Args) (map[string]any, error) {
				p, err := fsDocPath("path", a.String("path"))
				if err != nil {
					return nil, fsRefuse(err)
				}
				t, err := fsResolveDoc(ctx, env, p)
				if err != nil {
					return nil, fsReadFail(err)
				}
				if err := env.Kernel.RemoveDocByID(ctx, t.DocID); err != nil {
					return nil, writeErr(err, false)
				}
				return map[string]any{"path": p.Raw, "id": t.DocID, "removed": true}, nil
			},
			Readback: fsRmReadback,
		},
	}
}

// fsRmReadback proves the removal by the live existence of the removed id,
// checked before any tree is read: a stale path or SQL index cannot make a
// done removal look undone, and a failed existence query is an error (the
// outcome stays unknown), never proof of deletion.
func fsRmReadback(ctx context.Context, env *Env, a *Args, payload map[string]any) (any, error) {
	p, err := fsDocPath("path", a.String("path"))
	if err != nil {
		return nil, err
	}
	id, _ := payload["id"].(string)
	if err := fsPoll(ctx, func() (bool, error) {
		ok, err := env.Kernel.CheckBlockExist(ctx, id)
		return !ok, err
	}); err != nil {
		if errors.Is(err, errFsNotYet) {
			return nil, fmt.Errorf("document %s still exists", id)
		}
		return nil, fmt.Errorf("existence of %s unknown: %w", id, err)
	}
	return fsPathState(ctx, env, p, true)
}

// ---- mv -------------------------------------------------------------------

// fsLoc is where a path points: a notebook root, a document, or nothing.
type fsLoc struct {
	Path     string `json:"path"`
	Missing  bool   `json:"missing,omitempty"`
	Notebook string `json:"notebook,omitempty"`
	ID       string `json:"id,omitempty"`      // "" for a notebook root
	Storage  string `json:"storage,omitempty"` // "/" for a notebook root
	Title    string `json:"title,omitempty"`
}

func fsLocate(ctx context.Context, env *Env, p fsPath) (fsLoc, error) {
	t, err := fsResolve(ctx, env, p)
	if err != nil {
		return fsLoc{}, err
	}
	switch {
	case t.Missing:
		return fsLoc{Path: p.Raw, Missing: true}, nil
	case t.DocID == "":
		return fsLoc{Path: p.Raw, Notebook: t.Notebook.ID, Storage: "/"}, nil
	}
	info, err := env.Kernel.GetBlockInfo(ctx, t.DocID)
	if err != nil {
		return fsLoc{}, err
	}
	return fsLoc{Path: p.Raw, Notebook: info.Box, ID: t.DocID, Storage: info.Path, Title: info.RootTitle}, nil
}

// dir is the storage directory children of loc live in.
func (l fsLoc) dir() string {
	if l.ID == "" {
		return "/"
	}
	return strings.TrimSuffix(l.Storage, ".sy")
}

type fsMvPlan struct {
	from, to       fsPath
	src, dst, into fsLoc // the document, the destination path, its parent
}

func (m fsMvPlan) state() map[string]any {
	return map[string]any{"from": m.src, "to": m.dst, "toParent": m.into}
}

func fsPlanMv(ctx context.Context, env *Env, a *Args) (fsMvPlan, error) {
	var m fsMvPlan
	var err error
	if m.from, err = fsDocPath("from", a.String("from")); err != nil {
		return m, err
	}
	if m.to, err = fsDocPath("to", a.String("to")); err != nil {
		return m, err
	}
	if m.from.Raw == m.to.Raw {
		return m, badArg("from and to are the same path")
	}
	if m.src, err = fsLocate(ctx, env, m.from); err != nil {
		return m, err
	}
	if m.src.Missing {
		return m, fsNoDoc(m.from)
	}
	if m.dst, err = fsLocate(ctx, env, m.to); err != nil {
		return m, err
	}
	if !m.dst.Missing {
		return m, badArg("a document already exists at %s (%s); move to a free path", m.to.Raw, m.dst.ID)
	}
	if m.into, err = fsLocate(ctx, env, m.to.Parent()); err != nil {
		return m, err
	}
	if m.into.Missing {
		return m, &Error{Code: CodeNotFound, Message: fmt.Sprintf("no document at %s, the parent of %s", m.to.Parent().Raw, m.to.Raw),
			Action: "create the parent first (fs.write), or move to an existing parent"}
	}
	if m.into.Notebook == m.src.Notebook && (m.into.ID == m.src.ID || strings.HasPrefix(m.into.Storage, m.src.dir()+"/")) {
		return m, badArg("cannot move %s under itself", m.from.Raw)
	}
	return m, nil
}

func fsMvAction() *Action {
	return &Action{
		Name: "mv", Summary: "move and/or rename a document (with its children): from one path to a free path whose parent exists",
		Policy: strict.Policy{Class: strict.Mutation, Precondition: strict.ExpectedStructureHash},
		Params: []Param{
			{Name: "from", Type: String, Required: true, Description: "the document's current path"},
			{Name: "to", Type: String, Required: true, Description: "its new path; the last segment is the new title"},
		},
		Write: &Write{
			Targets: fsTargets("from", "to"),
			State: fsGuard(func(ctx context.Context, env *Env, a *Args) (any, error) {
				m, err := fsPlanMv(ctx, env, a)
				if err != nil {
					return nil, err
				}
				return m.state(), nil
			}),
			Execute: func(ctx context.Context, env *Env, a *Args) (map[string]any, error) {
				m, err := fsPlanMv(ctx, env, a)
				if err != nil {
					return nil, fsReadFail(err)
				}
				moved, renamed := false, false
				if m.into.Notebook != m.src.Notebook || path.Dir(m.src.Storage) != m.into.dir() {
					target := m.into.ID
					if target == "" {
						target = m.into.Notebook
					}
					if err := env.Kernel.MoveDocsByID(ctx, []string{m.src.ID}, target); err != nil {
						return nil, writeErr(err, false)
					}
					moved = true
				}
				if m.to.Title() != m.src.Title {
					if err := env.Kernel.RenameDocByID(ctx, m.src.ID, m.to.Title()); err != nil {
						return nil, writeErr(err, moved)
					}
					renamed = true
				}
				return map[string]any{"from": m.from.Raw, "to": m.to.Raw, "id": m.src.ID, "moved": moved, "renamed": renamed}, nil
			},
			Readback: fsMvReadback,
		},
	}
}

// fsMvReadback: the document resolves at to, and from no longer resolves to it.
func fsMvReadback(ctx context.Context, env *Env, a *Args, payload map[string]any) (any, error) {
	from, err := fsDocPath("from", a.String("from"))
	if err != nil {
		return nil, err
	}
	to, err := fsDocPath("to", a.String("to"))
	if err != nil {
		return nil, err
	}
	id, _ := payload["id"].(string)
	var src, dst, into fsLoc
	err = fsPoll(ctx, func() (bool, error) {
		var err error
		if dst, err = fsLocate(ctx, env, to); err != nil {
			return false, err
		}
		if src, err = fsLocate(ctx, env, from); err != nil {
			return false, err
		}
		return dst.ID == id && src.ID != id, nil
	})
	if err != nil {
		return nil, fmt.Errorf("document %s at %s (and not at %s): %w", id, to.Raw, from.Raw, err)
	}
	if into, err = fsLocate(ctx, env, to.Parent()); err != nil {
		return nil, err
	}
	return fsMvPlan{src: src, dst: dst, into: into}.state(), nil
}

// ---- reorder --------------------------------------------------------------

// fsSortCustom is SiYuan's custom (manual) sort mode.
const fsSortCustom = 6

type fsReorderChild struct {
	ID   string `json:"id"`
	Path string `json:"path"` // storage path
	Name string `json:"name"`
	Sort int    `json:"sort"`
}

// fsReorderState is the P-reorder structure: the parent, its notebook's
// configuration, and every visible direct child in custom order.
type fsReorderState struct {
	Parent   fsLoc            `json:"parent"`
	Conf     siyuan.BoxConf   `json:"conf"`
	Children []fsReorderChild `json:"children"`
	fsParent fsPath           // the parent's fs path
	byTitle  map[string][]int
}

func fsReadReorder(ctx context.Context, env *Env, p fsPath) (fsReorderState, error) {
	var st fsReorderState
	if p.isRoot() {
		return st, badArg("/ lists notebooks; reorder the documents of a notebook or a document")
	}
	loc, err := fsLocate(ctx, env, p)
	if err != nil {
		return st, err
	}
	if loc.Missing {
		return st, fsNoDoc(p)
	}
	var (
		wg             sync.WaitGroup
		conf           siyuan.NotebookConf
		list           siyuan.DocList
		confErr, lsErr error
	)
	custom, unlimited := fsSortCustom, 0
	wg.Add(2)
	go func() { defer wg.Done(); conf, confErr = env.Kernel.GetNotebookConf(ctx, loc.Notebook) }()
	go func() {
		defer wg.Done()
		list, lsErr = env.Kernel.ListDocsByPath(ctx, siyuan.ListDocsRequest{Notebook: loc.Notebook, Path: loc.Storage, Sort: &custom, MaxListCount: &unlimited})
	}()
	wg.Wait()
	if err := errors.Join(confErr, lsErr); err != nil {
		return st, err
	}
	st = fsReorderState{Parent: loc, Conf: conf.Conf, Children: make([]fsReorderChild, 0, len(list.Files)), fsParent: p, byTitle: map[string][]int{}}
	for i, f := range list.Files {
		st.Children = append(st.Children, fsReorderChild{f.ID, f.Path, f.Name, f.Sort})
		st.byTitle[f.Name] = append(st.byTitle[f.Name], i)
	}
	return st, nil
}

// order maps orderedPaths onto the children: it must be a complete
// permutation of the visible children.
func (st fsReorderState) order(ordered []string) ([]fsReorderChild, error) {
	if len(st.Children) == 0 {
		return nil, badArg("%s has no child documents to order", st.fsParent.Raw)
	}
	seen := map[int]bool{}
	out := make([]fsReorderChild, 0, len(ordered))
	for i, raw := range ordered {
		q, err := fsDocPath(fmt.Sprintf("orderedPaths[%d]", i), raw)
		if err != nil {
			return nil, err
		}
		if q.Parent().Raw != st.fsParent.Raw {
			return nil, badArg("orderedPaths[%d] %s is not a direct child of %s", i, raw, st.fsParent.Raw)
		}
		idx := st.byTitle[q.Title()]
		switch {
		case len(idx) == 0:
			return nil, badArg("orderedPaths[%d] %s is not a visible child of %s", i, raw, st.fsParent.Raw)
		case len(idx) > 1:
			ids := make([]string, len(idx))
			for j, k := range idx {
				ids[j] = st.Children[k].ID
			}
			return nil, fsAmbiguous("document", q.Raw, ids)
		case seen[idx[0]]:
			return nil, badArg("orderedPaths[%d] %s is listed twice", i, raw)
		}
		seen[idx[0]] = true
		out = append(out, st.Children[idx[0]])
	}
	if len(out) != len(st.Children) {
		var missing []string
		for i, c := range st.Children {
			if !seen[i] {
				missing = append(missing, st.fsParent.child(c.Name))
			}
		}
		sort.Strings(missing)
		return nil, badArg("orderedPaths must list every visible child of %s exactly once; missing: %s", st.fsParent.Raw, strings.Join(missing, ", "))
	}
	return out, nil
}

func fsPlanReorder(ctx context.Context, env *Env, a *Args) (fsReorderState, []fsReorderChild, error) {
	p, err := parseFSPath("path", a.String("path"))
	if err != nil {
		return fsReorderState{}, nil, err
	}
	st, err := fsReadReorder(ctx, env, p)
	if err != nil {
		return st, nil, err
	}
	order, err := st.order(a.Strings("orderedPaths"))
	return st, order, err
}

func fsReorderAction() *Action {
	return &Action{
		Name: "reorder", Summary: "set the manual order of a notebook's or a document's child documents (a complete permutation); a notebook root switches to custom sort",
		Policy: strict.Policy{Class: strict.Mutation, Precondition: strict.ExpectedStructureHash},
		Params: []Param{
			{Name: "path", Type: String, Required: true, Description: "the parent: /<notebook> or a document path"},
			{Name: "orderedPaths", Type: Strings, Required: true, Description: "every visible child's path, in the wanted order"},
		},
		Write: &Write{
			Targets: fsTargets("path", "orderedPaths"),
			State: fsGuard(func(ctx context.Context, env *Env, a *Args) (any, error) {
				st, _, err := fsPlanReorder(ctx, env, a)
				if err != nil {
					return nil, err
				}
				return st, nil
			}),
			Execute: func(ctx context.Context, env *Env, a *Args) (map[string]any, error) {
				st, order, err := fsPlanReorder(ctx, env, a)
				if err != nil {
					return nil, fsReadFail(err)
				}
				paths := make([]string, len(order))
				for i, c := range order {
					paths[i] = c.Path
				}
				if err := env.Kernel.ChangeSort(ctx, st.Parent.Notebook, paths); err != nil {
					return nil, writeErr(err, false)
				}
				out := map[string]any{"path": st.fsParent.Raw, "notebook": st.Parent.Notebook, "reordered": len(order), "sortModeSet": false}
				if st.Parent.ID == "" && st.Conf.SortMode != fsSortCustom {
					conf := st.Conf
					conf.SortMode = fsSortCustom
					if _, err := env.Kernel.SetNotebookConf(ctx, st.Parent.Notebook, conf); err != nil {
						return nil, writeErr(err, true)
					}
					out["sortModeSet"] = true
				} else if st.Parent.ID != "" && st.Conf.SortMode != fsSortCustom {
					out["notebookSortMode"] = st.Conf.SortMode
					out["hint"] = "the order is stored; the file tree shows it when the notebook sorts by custom order (mode 6)"
				}
				return out, nil
			},
			Readback: fsReorderReadback,
		},
	}
}

// fsReorderReadback requires the exact requested order under custom sort
// (and, for a notebook root, the notebook in custom sort mode).
func fsReorderReadback(ctx context.Context, env *Env, a *Args, payload map[string]any) (any, error) {
	p, err := parseFSPath("path", a.String("path"))
	if err != nil {
		return nil, err
	}
	var want []string
	var st fsReorderState
	err = fsPoll(ctx, func() (bool, error) {
		var err error
		if st, err = fsReadReorder(ctx, env, p); err != nil {
			return false, err
		}
		if want == nil {
			order, err := st.order(a.Strings("orderedPaths"))
			if err != nil {
				return false, err
			}
			for _, c := range order {
				want = append(want, c.ID)
			}
		}
		if st.Parent.ID == "" && st.Conf.SortMode != fsSortCustom {
			return false, nil
		}
		if len(st.Children) != len(want) {
			return false, nil
		}
		for i, c := range st.Children {
			if c.ID != want[i] {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("the children of %s are not in the requested custom order: %w", p.Raw, err)
	}
	return st, nil
}
