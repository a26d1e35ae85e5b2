package file

import (
	"context"
	"fmt"
	"net/url"
	"path"
	"sort"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// Assets are files under data/assets (the workspace's) or under a
// notebook's own assets folder ("<notebook>/assets/…", which then needs
// that notebook's permission).

// assetRef is a parsed asset path: its kernel form ("assets/…" or
// "<notebook>/assets/…") and the notebook it belongs to, if any.
type assetRef struct {
	Path     string
	Notebook string
}

// parseAsset accepts "x.png", "assets/x.png", "/data/assets/x.png",
// "<notebook>/assets/x.png", and each percent-encoded as a link writes it.
func parseAsset(field, p string) (assetRef, error) {
	// A path copied from a document's link (get_doc_assets answers them as
	// written) is percent-encoded; the file's name is the decoded one.
	if strings.Contains(p, "%") {
		if d, err := url.PathUnescape(p); err == nil {
			p = d
		}
	}
	s := strings.TrimSpace(strings.ReplaceAll(p, "\\", "/"))
	s = strings.TrimPrefix(strings.TrimLeft(s, "/"), "data/")
	if box, rest, ok := strings.Cut(s, "/"); ok && tools.CheckID("", box) == nil && strings.HasPrefix(rest, "assets/") {
		if err := cleanRel(field, p, s); err != nil {
			return assetRef{}, err
		}
		if rest == "assets/" {
			return assetRef{}, failure.Invalid("argument %q must name an asset file; got %q", field, p)
		}
		return assetRef{Path: s, Notebook: box}, nil
	}
	rel, err := assetPath(field, p)
	return assetRef{Path: rel}, err
}

// touch is what an action on the asset needs of its notebook.
func (a assetRef) touch(need tools.Level) []tools.Touch {
	if a.Notebook == "" {
		return nil
	}
	return []tools.Touch{tools.OnNotebook(a.Notebook, need)}
}

// assetState is one asset as guarded writes see it.
type assetState struct {
	Path   string `json:"path"`
	Exists bool   `json:"exists"`
	SHA256 string `json:"sha256,omitempty"`
	Size   int64  `json:"size,omitempty"`
}

func readAssetState(ctx context.Context, env *tools.Env, p string) (assetState, error) {
	st := assetState{Path: p}
	sum, size, err := digestFile(ctx, env.Kernel, workspace(p))
	switch {
	case missingFile(err):
		return st, nil
	case err != nil:
		var api *siyuan.APIError
		if asAPI(err, &api) && api.Code == 409 {
			return st, failure.Invalid("%s is a folder, not an asset file", p)
		}
		return st, err
	}
	st.Exists, st.SHA256, st.Size = true, sum, size
	return st, nil
}

func mustExist(st assetState) error {
	if !st.Exists {
		return failure.Missing("asset", st.Path)
	}
	return nil
}

var listUnusedAssets = tools.Read[tools.NoArgs]{
	Name: "list_unused_assets", Summary: "assets no document links, newest first (at most 512): the workspace's and the notebooks' you may see",
	Scope: tools.Scope[tools.NoArgs]{Global: true},
	Run: func(ctx context.Context, env *tools.Env, _ tools.NoArgs) (any, error) {
		items, err := env.Kernel.GetUnusedAssets(ctx)
		if err != nil {
			return nil, err
		}
		out := visibleAssets(ctx, items)
		return map[string]any{"assets": out, "count": len(out)}, nil
	},
}

// visibleAssets drops the assets of notebooks hidden from agents.
func visibleAssets(ctx context.Context, items []siyuan.UnusedAsset) []siyuan.UnusedAsset {
	out := make([]siyuan.UnusedAsset, 0, len(items))
	for _, it := range items {
		if box, _, ok := strings.Cut(it.Item, "/"); ok && tools.CheckID("", box) == nil && !tools.Visible(ctx, box) {
			continue
		}
		out = append(out, it)
	}
	return out
}

type docAssetsArgs struct {
	ID        string `arg:"id" help:"the document (or a block of it)" id:"" required:""`
	AssetType string `arg:"assetType" help:"all assets, or images only" enum:"all,image" default:"all"`
}

// assetArg is an asset named by path ("the asset"), and the path parsed.
type assetArg struct {
	Given string `arg:"path" help:"the asset" required:""`
	assetRef
}

func (a *assetArg) parse() (err error) {
	a.assetRef, err = parseAsset("path", a.Given)
	return err
}

var getDocAssets = tools.Read[docAssetsArgs]{
	Name: "get_doc_assets", Summary: "the assets a document links (assetType all, or image for its images only)",
	Scope: tools.Scope[docAssetsArgs]{Touches: func(a docAssetsArgs) []tools.Touch { return []tools.Touch{tools.OnBlock(a.ID, tools.LevelRead)} }},
	Run: func(ctx context.Context, env *tools.Env, a docAssetsArgs) (any, error) {
		var list []string
		var err error
		if a.AssetType == "image" {
			list, err = env.Kernel.GetDocImageAssets(ctx, a.ID)
		} else {
			list, err = env.Kernel.GetDocAssets(ctx, a.ID, false)
		}
		if treeMissing(err) {
			return nil, failure.Missing("document", a.ID)
		}
		if err != nil {
			return nil, err
		}
		return map[string]any{"id": a.ID, "assetType": a.AssetType, "assets": list, "count": len(list)}, nil
	},
}

// ocrArgs is get_image_ocr_text's image. Upstream 0.6.8 lets path be
// omitted and answers an empty text then; so does this action.
type ocrArgs struct {
	Given *string `arg:"path" help:"the image asset (omitted: an empty text, as upstream 0.6.8 answers)"`
	assetRef
}

var getImageOCRText = tools.Read[ocrArgs]{
	Name: "get_image_ocr_text", Summary: "the OCR text SiYuan stores for an image asset (\"\" when it has none)",
	Example: map[string]any{"path": "assets/scan-20260101000000-abcdefg.png"},
	Validate: func(a *ocrArgs) (err error) {
		if a.Given != nil {
			a.assetRef, err = parseAsset("path", *a.Given)
		}
		return err
	},
	Scope: tools.Scope[ocrArgs]{Touches: func(a ocrArgs) []tools.Touch { return a.touch(tools.LevelRead) }},
	Run: func(ctx context.Context, env *tools.Env, a ocrArgs) (any, error) {
		if a.Given == nil {
			return map[string]any{"path": nil, "text": ""}, nil
		}
		text, err := env.Kernel.GetImageOCRText(ctx, a.Path)
		if err != nil {
			return nil, err
		}
		return map[string]any{"path": a.Path, "text": text}, nil
	},
}

// unusedState is the manifest remove_unused_assets is guarded by: every
// asset it would remove.
type unusedState struct {
	Assets []string `json:"assets"`
}

// maxListedUnused is how many unused assets SiYuan's getUnusedAssets lists
// at most (siyuan-note/siyuan#13075).
const maxListedUnused = 512

func readUnused(ctx context.Context, env *tools.Env) (unusedState, error) {
	items, err := env.Kernel.GetUnusedAssets(ctx)
	if err != nil {
		return unusedState{}, err
	}
	st := unusedState{Assets: make([]string, 0, len(items))}
	for _, it := range items {
		st.Assets = append(st.Assets, it.Item)
	}
	sort.Strings(st.Assets)
	return st, nil
}

// removeUnusedAssets hands its readback the assets it removed typed, not
// through the payload's "removed".
var removeUnusedAssets = tools.WriteWith[tools.NoArgs, unusedState, []string]{Write: tools.Write[tools.NoArgs, unusedState]{
	Name: "remove_unused_assets", Summary: "remove every asset no document links, in every notebook (a person must confirm; guarded by the list list_unused_assets shows)",
	Policy:      strict.WritePolicy{Class: strict.Mutation, Precondition: strict.ExpectedManifestHash},
	Destructive: true, Dangerous: true,
	Example: map[string]any{"validateOnly": true},
	// A notebook whose own assets folder holds unused assets loses them:
	// it needs rwd. The workspace's data/assets belongs to no notebook.
	Scope: tools.Scope[tools.NoArgs]{Resolve: func(ctx context.Context, env *tools.Env, _ tools.NoArgs) ([]tools.Touch, error) {
		// SiYuan removes the unused assets of every notebook at once: a
		// refusal that depended on a hidden notebook's would tell of them.
		if err := tools.RefuseWhileHidden(ctx, "remove_unused_assets"); err != nil {
			return nil, err
		}
		st, err := readUnused(ctx, env)
		if err != nil {
			return nil, err
		}
		var ts []tools.Touch
		for _, a := range st.Assets {
			if box, _, ok := strings.Cut(a, "/"); ok && tools.CheckID("", box) == nil {
				ts = append(ts, tools.OnNotebook(box, tools.LevelDelete))
			}
		}
		return ts, nil
	}},
	Targets: func(tools.NoArgs) []string { return []string{"assets:unused"} },
	State: func(ctx context.Context, env *tools.Env, _ tools.NoArgs) (unusedState, error) {
		return readUnused(ctx, env)
	},
	Check: func(_ tools.NoArgs, st unusedState) error {
		if len(st.Assets) >= maxListedUnused {
			// SiYuan lists 512 at most but removes them all: the rest
			// would go without the preflight having seen them.
			e := failure.Invalid("SiYuan lists at most %d unused assets and there may be more, which its removal would take unseen; nothing was removed", maxListedUnused)
			e.Action = "remove them with delete_asset (list_unused_assets names them), or ask the person to clean up unused assets in SiYuan"
			return e.Attempted(false)
		}
		if len(st.Assets) == 0 {
			return failure.New(failure.NotFound, "no asset is unused; nothing to remove").Attempted(false)
		}
		return nil
	},
},
	Execute: func(ctx context.Context, env *tools.Env, _ tools.NoArgs, st unusedState) (tools.Payload, []string, error) {
		removed, err := env.Kernel.RemoveUnusedAssets(ctx)
		if err != nil {
			return nil, nil, tools.WriteFailure(err, false)
		}
		return tools.Payload{"removed": st.Assets, "count": len(removed)}, st.Assets, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, _ tools.NoArgs, _ tools.Payload, removed []string) (any, error) {
		for _, a := range removed {
			st, err := readAssetState(ctx, env, a)
			if err != nil && !strings.Contains(err.Error(), "folder") {
				return nil, err
			}
			if st.Exists {
				return nil, fmt.Errorf("%s is still there", a)
			}
		}
		return readUnused(ctx, env)
	},
}

type renameAssetArgs struct {
	OldPath string `arg:"oldPath" help:"the asset" required:""`
	NewName string `arg:"newName" help:"its new name, without extension (SiYuan appends a new id)" required:""`
	Old     assetRef
}

// renamedAsset is what renameAsset hands its readback, typed rather than
// read back from the payload's "newPath" and "sha256": the path SiYuan
// gave the asset and the content it must still have.
type renamedAsset struct {
	NewPath, SHA256 string
}

var renameAsset = tools.WriteWith[renameAssetArgs, assetState, renamedAsset]{Write: tools.Write[renameAssetArgs, assetState]{
	Name: "rename_asset", Summary: "rename an asset; SiYuan rewrites every document's links to it and keeps its extension (the answer names the new path)",
	Policy:  guarded,
	Example: map[string]any{"oldPath": "assets/scan-20260101000000-abcdefg.png", "newName": "receipt", "validateOnly": true},
	Validate: func(a *renameAssetArgs) error {
		r, err := parseAsset("oldPath", a.OldPath)
		if err != nil {
			return err
		}
		name := strings.TrimSpace(a.NewName)
		if name == "" || strings.ContainsAny(name, "/\\") {
			return failure.Invalid("newName must be a plain name without slashes")
		}
		if cur := base(r.Path); name == cur || name+path.Ext(cur) == cur {
			return failure.Invalid("newName %q is the asset's current name; nothing to rename", name)
		}
		a.Old, a.NewName = r, name
		return nil
	},
	// SiYuan rewrites the file name wherever a document holds it: each of
	// their notebooks needs write (as the SQL index knows them: its assets
	// table, and the blocks whose Markdown or attributes hold the name, for
	// kernels that keep no assets table), and the asset's own notebook, if
	// it lives in one. The index is flushed first: it lags writes.
	Scope: tools.Scope[renameAssetArgs]{Resolve: func(ctx context.Context, env *tools.Env, a renameAssetArgs) ([]tools.Touch, error) {
		// SiYuan rewrites the links of every notebook at once: a refusal
		// that depended on whether a hidden notebook links the asset
		// would tell of it.
		if err := tools.RefuseWhileHidden(ctx, "rename_asset"); err != nil {
			return nil, err
		}
		if err := env.Kernel.FlushTransaction(ctx); err != nil {
			return nil, err
		}
		// instr, not LIKE ... ESCAPE: SiYuan answers no rows to any
		// statement with an ESCAPE clause; and an answer that is not rows
		// fails the call (fail closed).
		name := "'" + sqlText(base(a.Old.Path)) + "'"
		rows, err := env.Kernel.QuerySQLStrict(ctx, "SELECT DISTINCT box FROM assets WHERE path = '"+sqlText(a.Old.Path)+"'"+
			" UNION SELECT DISTINCT box FROM blocks WHERE instr(markdown, "+name+") > 0 OR instr(ial, "+name+") > 0 LIMIT 1000")
		if err != nil {
			return nil, err
		}
		ts := a.Old.touch(tools.LevelWrite)
		for _, r := range rows {
			if box, _ := r["box"].(string); box != "" {
				ts = append(ts, tools.OnNotebook(box, tools.LevelWrite))
			}
		}
		return ts, nil
	}},
	Targets: func(a renameAssetArgs) []string { return []string{a.Old.Path} },
	State: func(ctx context.Context, env *tools.Env, a renameAssetArgs) (assetState, error) {
		return readAssetState(ctx, env, a.Old.Path)
	},
	Check: func(_ renameAssetArgs, st assetState) error { return mustExist(st) },
},
	Execute: func(ctx context.Context, env *tools.Env, a renameAssetArgs, st assetState) (tools.Payload, renamedAsset, error) {
		np, err := env.Kernel.RenameAsset(ctx, a.Old.Path, a.NewName)
		if err != nil {
			return nil, renamedAsset{}, tools.WriteFailure(err, false)
		}
		if np == "" || np == a.Old.Path {
			// The name SiYuan keeps (filtered, with the asset's id) is
			// the current one: nothing moved.
			return nil, renamedAsset{}, tools.Refuse(failure.Invalid("SiYuan renamed nothing: the new name is the asset's current one"))
		}
		return tools.Payload{"oldPath": a.Old.Path, "newPath": np, "sha256": st.SHA256}, renamedAsset{np, st.SHA256}, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a renameAssetArgs, _ tools.Payload, d renamedAsset) (any, error) {
		np := d.NewPath
		st, err := readAssetState(ctx, env, np)
		if err != nil {
			return nil, err
		}
		if !st.Exists || st.SHA256 != d.SHA256 {
			return nil, fmt.Errorf("the renamed asset %s reads back %+v", np, st)
		}
		if old, err := readAssetState(ctx, env, a.Old.Path); err != nil || old.Exists {
			return nil, fmt.Errorf("the old asset %s is still there (%v)", a.Old.Path, err)
		}
		return st, nil
	},
}

var deleteAsset = tools.Write[assetArg, assetState]{
	Name: "delete_asset", Summary: "delete an asset file, even if documents still link it (a person must confirm)",
	Policy: guarded, Destructive: true, Dangerous: true,
	Example:  map[string]any{"path": "assets/old-20260101000000-abcdefg.png", "validateOnly": true},
	Validate: (*assetArg).parse,
	Scope:    tools.Scope[assetArg]{Touches: func(a assetArg) []tools.Touch { return a.touch(tools.LevelDelete) }},
	Targets:  func(a assetArg) []string { return []string{a.Path} },
	State: func(ctx context.Context, env *tools.Env, a assetArg) (assetState, error) {
		return readAssetState(ctx, env, a.Path)
	},
	Check: func(_ assetArg, st assetState) error { return mustExist(st) },
	Execute: func(ctx context.Context, env *tools.Env, a assetArg, _ assetState) (tools.Payload, error) {
		if _, err := env.Kernel.RemoveUnusedAsset(ctx, a.Path); err != nil {
			return nil, tools.WriteFailure(err, false)
		}
		return tools.Payload{"path": a.Path, "deleted": true}, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a assetArg, _ tools.Payload) (any, error) {
		st, err := readAssetState(ctx, env, a.Path)
		if err != nil {
			return nil, err
		}
		if st.Exists {
			return nil, fmt.Errorf("the asset %s is still there", a.Path)
		}
		return st, nil
	},
}

// sqlText is s as the inside of an SQL string literal.
func sqlText(s string) string { return strings.ReplaceAll(s, "'", "''") }
