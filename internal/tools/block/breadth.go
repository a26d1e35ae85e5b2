package block

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/kernelview"
)

// maxBatchKramdown is upstream's limit of ids per batch_kramdown.
const maxBatchKramdown = 20

// batchArgs' ids are not checked as declared: a malformed one is that
// item's error, as upstream answers it.
type batchArgs struct {
	IDs  []string `arg:"ids" help:"1-20 block or document ids" required:""`
	Mode string   `arg:"mode" help:"\"md\" (Markdown markers, the default) or \"textmark\" (inline marks as spans)" enum:"md,textmark" default:"md"`
}

var batchKramdown = tools.Read[batchArgs]{
	Name: "batch_kramdown", Summary: "the kramdown of 1-20 blocks in the order given (duplicates kept), each with its own error: an id that is missing or not readable is an item error",
	Example: map[string]any{"ids": []string{"20260812120000-aaaaaaa", "20260812120000-bbbbbbb"}},
	Validate: func(b *batchArgs) error {
		if len(b.IDs) == 0 || len(b.IDs) > maxBatchKramdown {
			return failure.Invalid("ids must hold 1 to %d ids, got %d", maxBatchKramdown, len(b.IDs))
		}
		return nil
	},
	// Each id's notebook is checked per item (a refusal is that item's
	// error), so the gate checks none.
	Scope: tools.Scope[batchArgs]{Global: true},
	Run:   runBatchKramdown,
}

// itemError is one batch item's failure, under upstream's "type" and the
// project's "code". An id whose notebook the call may not read answers as
// one that does not exist, so that nothing about it shows.
func itemError(code failure.Code, msg string) map[string]any {
	return map[string]any{"type": string(code), "code": string(code), "message": msg}
}

func runBatchKramdown(ctx context.Context, env *tools.Env, a batchArgs) (any, error) {
	readable := map[string]bool{}
	var ask []string
	for _, id := range a.IDs {
		if _, done := readable[id]; done || tools.CheckID("id", id) != nil {
			continue
		}
		loc, err := env.Kernel.GetPathByID(ctx, id)
		if err != nil && !isAPIError(err) {
			return nil, err // not an answer: fail closed
		}
		ok := err == nil && loc.Notebook != "" && tools.LevelOf(ctx, loc.Notebook) >= tools.LevelRead
		readable[id] = ok
		if ok {
			ask = append(ask, id)
		}
	}
	kds := map[string]string{}
	if len(ask) > 0 {
		var err error
		if kds, err = env.Kernel.GetBlockKramdownsMode(ctx, ask, a.Mode); err != nil {
			return nil, err
		}
	}
	dbs := tools.NewShownDatabases(env)
	items := make([]map[string]any, 0, len(a.IDs))
	ok := 0
	for _, id := range a.IDs {
		kd, found := kds[id]
		if found {
			var err error
			if kd, err = dbs.VeilKramdown(ctx, kd); err != nil {
				return nil, err
			}
		}
		switch {
		case tools.CheckID("id", id) != nil:
			items = append(items, map[string]any{"id": id, "ok": false, "error": itemError(failure.InvalidArguments, "not a SiYuan id")})
		case !readable[id] || !found:
			items = append(items, map[string]any{"id": id, "ok": false, "error": itemError(failure.NotFound, "no readable block has this id")})
		default:
			ok++
			items = append(items, map[string]any{"id": id, "ok": true, "kramdown": stripZeroWidth(kd)})
		}
	}
	failed := len(items) - ok
	out := map[string]any{"items": items, "requested": len(items), "succeeded": ok, "failed": failed, "partial": ok > 0 && failed > 0}
	info := tools.ReadInfo{Scope: fmt.Sprintf("%d blocks by id", len(items)), Representation: "kramdown"}
	if failed > 0 {
		// A missing id and one the call may not read fail alike, so the
		// limitation names neither.
		info.Limitations = []string{fmt.Sprintf("%d of %d items were not read (each item's error says why)", failed, len(items))}
	}
	tools.Cover(ctx, out, info)
	return out, nil
}

// stripZeroWidth drops the zero-width spaces SiYuan's editor leaves in
// text, as upstream does for batch reads.
func stripZeroWidth(s string) string { return strings.ReplaceAll(s, "\u200b", "") }

type breadcrumbArgs struct {
	ID           string   `arg:"id" help:"the block" id:"" required:""`
	ExcludeTypes []string `arg:"excludeTypes" help:"inline types left out of the crumbs' names (e.g. tag)"`
}

var breadcrumb = tools.Read[breadcrumbArgs]{
	Name: "breadcrumb", Summary: "the path from a block's document down to the block: the document (named notebook + human path), the headings and list items above it, the block last",
	Scope: tools.Scope[breadcrumbArgs]{Touches: func(a breadcrumbArgs) []tools.Touch { return []tools.Touch{tools.OnBlock(a.ID, tools.LevelRead)} }},
	Run: func(ctx context.Context, env *tools.Env, a breadcrumbArgs) (any, error) {
		crumbs, err := env.Kernel.GetBlockBreadcrumb(ctx, a.ID, a.ExcludeTypes)
		if err != nil {
			return nil, err
		}
		// The kernel answers an unknown block with no crumbs.
		if len(crumbs) == 0 {
			if err := kernelview.MustExist(ctx, env, a.ID); err != nil {
				return nil, err
			}
		}
		return map[string]any{"id": a.ID, "breadcrumb": crumbs}, nil
	},
}

type idsArgs struct {
	IDs []string `arg:"ids" help:"one or more block or document ids" id:"" required:""`
}

// atLeastOne refuses an empty list of ids.
func atLeastOne(ids []string) error {
	if len(ids) == 0 {
		return failure.Invalid("ids must hold at least one id")
	}
	return nil
}

// idsExist answers not_found for the first id the kernel does not know
// (several endpoints count or skip unknown ids silently).
func idsExist(ctx context.Context, env *tools.Env, ids []string) error {
	for _, id := range kernelview.SortedUnique(ids) {
		if err := kernelview.MustExist(ctx, env, id); err != nil {
			return err
		}
	}
	return nil
}

var wordCount = tools.Read[idsArgs]{
	Name: "word_count", Summary: "text statistics of blocks with their descendants (a document: its whole body): letters (without spaces), words, links, images, references, and the number of blocks asked for",
	Example:  map[string]any{"ids": []string{"20260812120000-docdocd"}},
	Validate: func(a *idsArgs) error { return atLeastOne(a.IDs) },
	Scope:    tools.Scope[idsArgs]{Touches: func(a idsArgs) []tools.Touch { return tools.OnBlocks(a.IDs, tools.LevelRead) }},
	Run: func(ctx context.Context, env *tools.Env, a idsArgs) (any, error) {
		if err := idsExist(ctx, env, a.IDs); err != nil {
			return nil, err
		}
		st, err := env.Kernel.GetBlocksWordCount(ctx, a.IDs)
		if err != nil {
			return nil, err
		}
		return map[string]any{"ids": a.IDs, "stat": st}, nil
	},
}

// docsInfoArgs take ids (or a single id) as upstream's docs_info does:
// exactly one of them.
type docsInfoArgs struct {
	ID       string   `arg:"id" help:"one document (or a block in it)" id:""`
	IDs      []string `arg:"ids" help:"several documents" id:""`
	RefCount bool     `arg:"refCount" help:"include refCount and refIDs (the blocks referencing the document or anything in it)" default:"false"`
	AV       bool     `arg:"av" help:"include attrViews (the databases the document is in)" default:"false"`
}

func (a *docsInfoArgs) oneOf() error {
	switch {
	case a.ID != "" && len(a.IDs) > 0, a.ID == "" && len(a.IDs) == 0:
		return failure.Invalid("pass exactly one of id or ids")
	case a.ID != "":
		a.IDs = []string{a.ID}
	}
	return atLeastOne(a.IDs)
}

var docsInfo = tools.Read[docsInfoArgs]{
	Name: "docs_info", Summary: "document info (title, attributes, icon, child document count) of each id's document, in order; refCount adds the blocks referencing it, av its databases",
	Example:  map[string]any{"ids": []string{"20260812120000-docdocd"}, "refCount": true},
	Validate: (*docsInfoArgs).oneOf,
	Scope:    tools.Scope[docsInfoArgs]{Touches: func(a docsInfoArgs) []tools.Touch { return tools.OnBlocks(a.IDs, tools.LevelRead) }},
	Run: func(ctx context.Context, env *tools.Env, a docsInfoArgs) (any, error) {
		if err := idsExist(ctx, env, a.IDs); err != nil {
			return nil, err
		}
		infos, err := env.Kernel.GetDocsInfo(ctx, a.IDs, a.RefCount, a.AV)
		if err != nil {
			return nil, err
		}
		if a.RefCount {
			// A referencing block in a notebook the call may not read is
			// left out, and the count with it.
			for i := range infos {
				if infos[i].RefIDs, err = readableBlocks(ctx, env, infos[i].RefIDs); err != nil {
					return nil, err
				}
				infos[i].RefCount = len(infos[i].RefIDs)
			}
		}
		// A database shown only where the call may not look is not one
		// the document is in, to the call (its attribute views, its IAL).
		for i := range infos {
			if err := tools.VeilDocInfo(ctx, env, &infos[i]); err != nil {
				return nil, err
			}
		}
		return map[string]any{"documents": infos, "count": len(infos)}, nil
	},
}

// readableBlocks keeps the blocks whose notebooks the call may read.
func readableBlocks(ctx context.Context, env *tools.Env, ids []string) ([]string, error) {
	out := []string{}
	for _, id := range ids {
		loc, err := env.Kernel.GetPathByID(ctx, id)
		if err != nil {
			if isAPIError(err) {
				continue // gone since it was listed
			}
			return nil, err
		}
		if tools.LevelOf(ctx, loc.Notebook) >= tools.LevelRead {
			out = append(out, id)
		}
	}
	return out, nil
}

// isAPIError reports a kernel answer (as opposed to no answer).
func isAPIError(err error) bool {
	var api *siyuan.APIError
	return errors.As(err, &api)
}

type recentArgs struct {
	Count int `arg:"count" help:"at most this many blocks, after leaving out unreadable notebooks" min:"1"`
}

// recentDoc is one document of recent_updated's summary.
type recentDoc struct {
	DocumentID        string        `json:"documentId"`
	Notebook          string        `json:"notebook"`
	Path              string        `json:"path"`
	HPath             string        `json:"hPath,omitempty"`
	Name              string        `json:"name,omitempty"`
	UpdatedBlockCount int           `json:"updatedBlockCount"`
	SampleBlocks      []recentBlock `json:"sampleBlocks"`
}

type recentBlock struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	SubType string `json:"subtype,omitempty"`
	Content string `json:"content"`
	Path    string `json:"path"`
}

// recentItem is one block of recent_updated's raw stream.
type recentItem struct {
	ID       string `json:"id"`
	Box      string `json:"box"`
	RootID   string `json:"rootID"`
	ParentID string `json:"parentID"`
	Path     string `json:"path"`
	HPath    string `json:"hPath"`
	Type     string `json:"type"`
	SubType  string `json:"subType,omitempty"`
	Content  string `json:"content"`
	Markdown string `json:"markdown"`
}

var recentUpdated = tools.Read[recentArgs]{
	Name: "recent_updated", Summary: "the workspace's most recently updated paragraphs (SiYuan lists up to 16, from its search index), in readable notebooks only, grouped by document",
	Example: map[string]any{"count": 10},
	Scope:   tools.Scope[recentArgs]{Global: true},
	Run: func(ctx context.Context, env *tools.Env, a recentArgs) (any, error) {
		blocks, err := env.Kernel.GetRecentUpdatedBlocks(ctx)
		if err != nil {
			return nil, err
		}
		items := []recentItem{}
		for _, b := range blocks {
			if tools.LevelOf(ctx, b.Box) < tools.LevelRead {
				continue
			}
			if a.Count > 0 && len(items) == a.Count {
				break
			}
			items = append(items, recentItem{b.ID, b.Box, b.RootID, b.ParentID, b.Path, b.HPath, b.Type, b.SubType, b.Content, b.Markdown})
		}
		docs := []*recentDoc{}
		byDoc := map[string]*recentDoc{}
		lowLevel := false
		for _, it := range items {
			lowLevel = lowLevel || it.Type != "NodeDocument"
			d := byDoc[it.RootID]
			if d == nil {
				d = &recentDoc{DocumentID: it.RootID, Notebook: it.Box, Path: it.Path, HPath: it.HPath, SampleBlocks: []recentBlock{}}
				if it.HPath != "" {
					d.Name = path.Base(it.HPath)
				}
				byDoc[it.RootID] = d
				docs = append(docs, d)
			}
			d.UpdatedBlockCount++
			if len(d.SampleBlocks) < 3 {
				d.SampleBlocks = append(d.SampleBlocks, recentBlock{it.ID, it.Type, it.SubType, it.Content, it.Path})
			}
		}
		return map[string]any{
			"documents": docs, "documentCount": len(docs), "count": len(items), "containsLowLevelBlocks": lowLevel,
			"grouping": "document", "primaryView": "documents", "items": items,
			"hint": "documents is the summary grouped by document; items is the raw stream of recent blocks, newest first",
		}, nil
	},
}
