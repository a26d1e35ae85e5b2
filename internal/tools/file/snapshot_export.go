package file

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/kernelview"
)

// export_markdown_snapshot pages through a notebook's documents as
// Markdown, each with a digest, for a caller that keeps an auditable copy:
// nothing is written anywhere, the answer is the page. Every page
// enumerates the scope again and hashes what it found (the inventory); a
// cursor carries that hash, so a page never continues a listing that
// changed under it (the caller starts again instead of missing or
// repeating documents).

// Bounds of one page.
const (
	maxSnapshotRoots = 64
	maxSnapshotIDs   = 500
	// maxSnapshotListings bounds the kernel calls that enumerate the roots
	// (one for each root's listing, one for each document below it with
	// children of its own): the rest of the read's budget is the exports'.
	maxSnapshotListings = 64
	// A page stops before its next document once the read's budget has
	// fewer calls or bytes left than one more export may need, and once
	// its Markdown passed maxSnapshotPageBytes (the answer's size).
	snapshotReserveCalls = 16
	snapshotReserveBytes = 2 << 20
	maxSnapshotPageBytes = 4 << 20
)

type snapshotArgs struct {
	NotebookID  string   `arg:"notebookID" help:"the notebook that holds every exported document" id:"" required:""`
	Roots       []string `arg:"roots" help:"1 to 64 storage paths: / for the whole notebook, or a document's (/<id>.sy, as document.lookup answers) for it and every document below; give roots or documentIDs"`
	DocumentIDs []string `arg:"documentIDs" help:"1 to 500 documents to export, all of notebookID (each is checked when its page is exported); give roots or documentIDs" id:""`
	Limit       int      `arg:"limit" help:"documents per page (a page may stop earlier, at the read's budget or 4 MiB of Markdown, and then gives a cursor)" default:"20" min:"1" max:"200"`
	Cursor      string   `arg:"cursor" help:"page.nextCursor of the previous page, same notebookID and roots/documentIDs; refused when edited, from another scope, or the documents changed (start again)" maxLen:"512"`

	roots []string // normalised: "/" or "/<id>/<id>", sorted, each once
	ids   []string // sorted, each once
	cur   snapshotCursor
}

var exportMarkdownSnapshot = tools.Read[snapshotArgs]{
	Name: "export_markdown_snapshot",
	Summary: "one page of an auditable Markdown export of a notebook's documents, writing nothing anywhere: each document's id, title, hPath, storagePath, " +
		"content (its Markdown as export_md gives it) and contentHash (sha256:v1: and the SHA-256 of content's UTF-8 bytes), with metadata and its metadataHash; " +
		"the page says its offset, total, hasNext and nextCursor. Documents come in storage-path order (a document before those below it); " +
		"roots are enumerated again on every page and a cursor is refused once they changed",
	Example:  map[string]any{"notebookID": "20260812120000-nbnbnbn", "roots": []string{"/"}, "limit": 20},
	Validate: parseSnapshot,
	Scope: tools.Scope[snapshotArgs]{Touches: func(a snapshotArgs) []tools.Touch {
		return append([]tools.Touch{tools.OnNotebook(a.NotebookID, tools.LevelRead)}, tools.OnBlocks(a.ids, tools.LevelRead)...)
	}},
	Run: runSnapshot,
}

func parseSnapshot(a *snapshotArgs) error {
	switch {
	case (a.Roots == nil) == (a.DocumentIDs == nil):
		return failure.Invalid("give exactly one of roots (storage paths such as /) and documentIDs")
	case a.Roots != nil && (len(a.Roots) < 1 || len(a.Roots) > maxSnapshotRoots):
		return failure.Invalid("argument \"roots\" takes 1 to %d storage paths; got %d", maxSnapshotRoots, len(a.Roots))
	case a.DocumentIDs != nil && (len(a.DocumentIDs) < 1 || len(a.DocumentIDs) > maxSnapshotIDs):
		return failure.Invalid("argument \"documentIDs\" takes 1 to %d ids; got %d", maxSnapshotIDs, len(a.DocumentIDs))
	}
	for _, r := range a.Roots {
		root, err := snapshotRoot(r)
		if err != nil {
			return err
		}
		a.roots = append(a.roots, root)
	}
	a.roots = kernelview.SortedUnique(a.roots)
	a.ids = kernelview.SortedUnique(a.DocumentIDs)
	if a.Cursor != "" {
		c, err := decodeSnapshotCursor(a.Cursor)
		if err != nil {
			return failure.Invalid("argument \"cursor\" is not a cursor this action gave (%v): pass page.nextCursor unchanged, or start again without cursor", err)
		}
		a.cur = c
	}
	return nil
}

// snapshotRoot is a root as given, "/" or a document's storage path, as
// "/" or "/<id>/…/<id>" (without ".sy").
func snapshotRoot(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	if s == "/" {
		return s, nil
	}
	s = strings.TrimSuffix(strings.TrimSuffix(s, "/"), ".sy")
	segs := strings.Split(strings.TrimPrefix(s, "/"), "/")
	if !strings.HasPrefix(s, "/") || len(segs) > 8 || slices.ContainsFunc(segs, func(seg string) bool { return tools.CheckID("", seg) != nil }) {
		return "", failure.Invalid("argument \"roots\" takes / or a document's storage path such as /20260812120000-abcdefg.sy (as document.lookup answers it); got %q", raw)
	}
	return s, nil
}

// snapshotDoc is one document of the inventory: its id and its storage
// path ("" for an explicit id until its page reads it).
type snapshotDoc struct {
	ID   string `json:"id"`
	Path string `json:"path,omitempty"`
}

func runSnapshot(ctx context.Context, env *tools.Env, a snapshotArgs) (any, error) {
	scope := map[string]any{"notebookID": a.NotebookID}
	source := map[string]any{"notebookID": a.NotebookID, "exportSurface": "file.export_md"}
	var inv []snapshotDoc
	if a.ids != nil {
		scope["documentIDs"], source["documentIDs"], source["inventorySurface"] = a.ids, a.ids, "documentIDs"
		for _, id := range a.ids {
			inv = append(inv, snapshotDoc{ID: id})
		}
	} else {
		scope["roots"], source["roots"], source["inventorySurface"] = a.roots, a.roots, "filetree"
		var err error
		if inv, err = enumerateRoots(ctx, env, a.NotebookID, a.roots); err != nil {
			return nil, err
		}
	}
	scopeHash, invHash := canonicalHash(scope), canonicalHash(inv)
	offset := 0
	if a.Cursor != "" {
		switch {
		case a.cur.Scope != strings.TrimPrefix(scopeHash, hashPrefix):
			return nil, failure.Invalid("the cursor belongs to another export (another notebookID, roots or documentIDs): pass the same arguments as the page that gave it")
		case a.cur.Inventory != strings.TrimPrefix(invHash, hashPrefix) || a.cur.Offset >= len(inv):
			return nil, failure.Invalid("the documents of this export changed since the cursor was given (one was created, moved or removed): start again without cursor")
		}
		offset = a.cur.Offset
	}

	exp := kernelview.NewExporter(env)
	var docs []map[string]any
	var errs []map[string]any
	var pageBytes int
	stopped := ""
	next := offset
	for ; next < len(inv) && next-offset < a.Limit; next++ {
		if next > offset {
			if calls, left, ok := tools.ReadLeft(ctx); ok && (calls < snapshotReserveCalls || left < snapshotReserveBytes) {
				stopped = "read_budget"
				break
			}
			if pageBytes >= maxSnapshotPageBytes {
				stopped = "answer_size"
				break
			}
		}
		d, err := snapshotDocument(ctx, env, exp, a.NotebookID, inv[next])
		if err != nil {
			return nil, err
		}
		if e, ok := d["error"].(map[string]any); ok {
			errs = append(errs, e)
		}
		c, _ := d["content"].(string)
		pageBytes += len(c)
		docs = append(docs, d)
	}
	page := map[string]any{"offset": offset, "limit": a.Limit, "returned": len(docs), "total": len(inv), "hasNext": next < len(inv)}
	if next < len(inv) {
		page["nextCursor"] = snapshotCursor{Scope: strings.TrimPrefix(scopeHash, hashPrefix), Inventory: strings.TrimPrefix(invHash, hashPrefix), Offset: next}.encode()
	}
	if stopped != "" {
		page["stoppedEarly"] = stopped
	}
	status := "complete"
	if len(errs) > 0 {
		status = "partial"
	}
	if docs == nil {
		docs = []map[string]any{}
	}
	if errs == nil {
		errs = []map[string]any{}
	}
	scope["scopeHash"] = scopeHash
	return map[string]any{
		"kind": "siyuan-markdown-snapshot-page", "schemaVersion": "1.0.0", "status": status,
		"source": source, "scope": scope, "inventoryHash": invHash, "page": page, "documents": docs, "errors": errs,
	}, nil
}

// snapshotDocument exports one document of the inventory. A document gone
// since the inventory was read is an entry with an error (the page is then
// partial); a failure of the kernel fails the call.
func snapshotDocument(ctx context.Context, env *tools.Env, exp *kernelview.Exporter, nb string, d snapshotDoc) (map[string]any, error) {
	gone := func() map[string]any {
		e := map[string]any{"code": string(failure.NotFound), "documentID": d.ID, "message": "the document is gone since the inventory was read", "retryable": true}
		return map[string]any{"id": d.ID, "storagePath": d.Path, "error": e}
	}
	if d.Path == "" {
		// An explicit id: where it lives, which must be notebookID.
		if ok, err := env.Kernel.CheckBlockExist(ctx, d.ID); err != nil {
			return nil, err
		} else if !ok {
			return gone(), nil
		}
		p, err := env.Kernel.GetPathByID(ctx, d.ID)
		if err != nil {
			return nil, err
		}
		if p.Notebook != nb || siyuan.DocIDOfPath(p.Path) != d.ID {
			return nil, failure.Invalid("%s is not a document of notebook %s: documentIDs must all be documents of notebookID", d.ID, nb)
		}
		d.Path = p.Path
	}
	md, found, err := exp.Markdown(ctx, d.ID)
	if treeMissing(err) || err == nil && !found {
		return gone(), nil
	}
	if err != nil {
		return nil, err
	}
	title := path.Base(md.HPath)
	meta := map[string]any{"id": d.ID, "title": title, "hPath": md.HPath, "storagePath": d.Path, "notebookID": nb}
	sum := sha256.Sum256([]byte(md.Content))
	return map[string]any{
		"id": d.ID, "title": title, "hPath": md.HPath, "storagePath": d.Path,
		"metadata": meta, "metadataHash": canonicalHash(meta),
		"content": md.Content, "contentHash": hashPrefix + hex.EncodeToString(sum[:]),
	}, nil
}

// enumerateRoots lists the documents of the roots, each once, in storage
// path order: a root's listing (SiYuan's file tree, hidden documents
// included), and for each document of it with children the tree below it
// read from disk (listDocTree), never the SQL index, which lags behind
// writes.
func enumerateRoots(ctx context.Context, env *tools.Env, nb string, roots []string) ([]snapshotDoc, error) {
	seen := map[string]bool{}
	var out []snapshotDoc
	add := func(id, p string) {
		if !seen[id] {
			seen[id] = true
			out = append(out, snapshotDoc{ID: id, Path: p})
		}
	}
	listings := 0
	count := func() error {
		if listings++; listings > maxSnapshotListings {
			return failure.Invalid("the roots hold more than %d documents with children of their own, more than one page may enumerate: export narrower roots (a document's storage path) or documentIDs", maxSnapshotListings-len(roots))
		}
		return nil
	}
	unlimited := 0
	for _, r := range roots {
		dir := "/"
		if r != "/" {
			id := path.Base(r)
			if err := snapshotRootExists(ctx, env, nb, r, id); err != nil {
				return nil, err
			}
			add(id, r+".sy")
			dir = r + ".sy"
		}
		if err := count(); err != nil {
			return nil, err
		}
		list, err := env.Kernel.ListDocsByPath(ctx, siyuan.ListDocsRequest{Notebook: nb, Path: dir, MaxListCount: &unlimited, ShowHidden: true})
		if err != nil {
			return nil, kernelview.NotebookErr(nb, err)
		}
		for _, f := range list.Files {
			add(f.ID, f.Path)
			if f.SubFileCount == 0 {
				continue
			}
			if err := count(); err != nil {
				return nil, err
			}
			tree, err := env.Kernel.ListDocTree(ctx, nb, f.Path)
			if err != nil {
				return nil, err
			}
			var walk func(parent string, nodes []*siyuan.DocTreeNode)
			walk = func(parent string, nodes []*siyuan.DocTreeNode) {
				for _, n := range nodes {
					p := parent + "/" + n.ID
					add(n.ID, p+".sy")
					walk(p, n.Children)
				}
			}
			walk(strings.TrimSuffix(f.Path, ".sy"), tree)
		}
	}
	slices.SortFunc(out, func(x, y snapshotDoc) int { return strings.Compare(x.Path, y.Path) })
	return out, nil
}

// snapshotRootExists checks that a root names a document of the notebook
// at that storage path. A document elsewhere (another notebook, maybe one
// the call may not see) answers as one that does not exist.
func snapshotRootExists(ctx context.Context, env *tools.Env, nb, root, id string) error {
	missing := failure.New(failure.NotFound, "notebook %s has no document at %s", nb, root)
	missing.Action = "find the document's storage path with document.lookup"
	ok, err := env.Kernel.CheckBlockExist(ctx, id)
	if err != nil || !ok {
		if err == nil {
			err = missing
		}
		return err
	}
	p, err := env.Kernel.GetPathByID(ctx, id)
	if err != nil {
		return err
	}
	if p.Notebook != nb || strings.TrimSuffix(p.Path, ".sy") != root {
		return missing
	}
	return nil
}

// hashPrefix marks this project's digests as upstream's do: SHA-256,
// first version of the canonical form.
const hashPrefix = "sha256:v1:"

// canonicalHash is the digest of v's canonical JSON: object keys sorted
// (as encoding/json writes maps), no HTML escaping, no white space.
func canonicalHash(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only strings, numbers, maps and slices of them get here.
		panic(fmt.Sprintf("file: a snapshot value does not encode: %v", err))
	}
	sum := sha256.Sum256(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	return hashPrefix + hex.EncodeToString(sum[:])
}

// snapshotCursor is where the next page starts: the scope and inventory
// digests of the page that gave it (hex, without prefix) and the offset of
// the next document.
type snapshotCursor struct {
	Scope     string `json:"s"`
	Inventory string `json:"i"`
	Offset    int    `json:"o"`
}

// maxSnapshotOffset bounds a cursor's offset: an inventory is at most
// maxSnapshotIDs ids, or a notebook's documents.
const maxSnapshotOffset = 1 << 24

// The cursor's version and purpose (tools.EncodeCursor): what makes a
// cursor safe is that the page checks all of it against what it
// enumerates: another scope or inventory is refused, and an offset only
// selects among documents the call may read anyway.
const (
	cursorVersion = "s1"
	cursorPurpose = "export_markdown_snapshot"
)

func (c snapshotCursor) encode() string { return tools.EncodeCursor(cursorVersion, cursorPurpose, c) }

// decodeSnapshotCursor parses a cursor; it accepts exactly the texts
// encode writes.
func decodeSnapshotCursor(s string) (snapshotCursor, error) {
	var c snapshotCursor
	if err := tools.DecodeCursor(s, cursorVersion, cursorPurpose, &c); err != nil {
		return snapshotCursor{}, err
	}
	if !isHexDigest(c.Scope) || !isHexDigest(c.Inventory) || c.Offset < 1 || c.Offset > maxSnapshotOffset {
		return snapshotCursor{}, fmt.Errorf("its payload is not a cursor")
	}
	return c, nil
}

func isHexDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}
