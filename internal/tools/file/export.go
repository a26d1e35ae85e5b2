package file

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/kernelview"
)

// Exports are external effects: the kernel writes a ZIP into its temp
// folder, and saving to the person's disk happens at the front they talk
// to (delivery=download), never on the authority. No preflight, and no
// strict guarantee.

type idArgs struct {
	ID string `arg:"id" help:"the document" id:"" required:""`
}

var readsDoc = tools.Scope[idArgs]{Touches: func(a idArgs) []tools.Touch { return []tools.Touch{tools.OnBlock(a.ID, tools.LevelRead)} }}

var exportMd = tools.Read[idArgs]{
	Name: "export_md", Summary: "a document as Markdown (SiYuan's export: references and embeds as configured there; " +
		"a reference into a hidden notebook reads as one to a removed block, and while a notebook is hidden an embed shows only the block of a plain SELECT * FROM blocks WHERE id='...')",
	Scope: readsDoc,
	Run: func(ctx context.Context, env *tools.Env, a idArgs) (any, error) {
		md, found, err := kernelview.ExportMarkdown(ctx, env, a.ID)
		if treeMissing(err) || err == nil && !found {
			// SiYuan answers an empty export for an unknown id.
			return nil, failure.Missing("document", a.ID)
		}
		if err != nil {
			return nil, err
		}
		return map[string]any{"id": a.ID, "hPath": md.HPath, "content": md.Content}, nil
	},
}

// exportTimeout bounds an export in the write lane (as long as one file's
// transfer may take).
const exportTimeout = 120 * time.Second

var exportResources = tools.Write[resourcesArgs, struct{}]{
	Name: "export_resources",
	Summary: "export workspace resources (assets, templates, emojis, notebooks' folders and documents) as one ZIP in SiYuan's temp/export; with outputPath the ZIP is also saved " +
		"on the person's machine by the stdio or call process they run, inside a folder they allowed and after they confirmed the destination " +
		"(a direct HTTP client gets a delivery=download manifest to save itself)",
	Policy: strict.WritePolicy{Class: strict.External},
	// SiYuan builds the export before it answers: a large one takes a
	// while, as long as a transfer may.
	Timeout:  exportTimeout,
	Example:  map[string]any{"paths": []string{"assets/diagram-20260101000000-abcdefg.png"}, "name": "diagrams", "outputPath": "./diagrams.zip"},
	Validate: parseResources,
	// Global: each path's notebook is decided in Execute (checkResources),
	// where a hidden one answers as a missing path does.
	Scope: tools.Scope[resourcesArgs]{Global: true},
	Execute: func(ctx context.Context, env *tools.Env, a resourcesArgs, _ struct{}) (tools.Payload, error) {
		if err := checkResources(ctx, env, a.Paths); err != nil {
			return nil, tools.Refuse(err)
		}
		zip, err := env.Kernel.ExportResources(ctx, a.Paths, a.Name)
		if err != nil {
			return nil, tools.WriteFailure(err, false)
		}
		p := tools.Payload{"path": zip, "paths": a.Paths}
		if a.OutputPath != "" {
			p["delivery"] = "download"
			p["files"] = []tools.Download{{KernelPath: "/" + strings.TrimPrefix(zip, "/"), Dest: a.OutputPath}}
			p["outputPath"] = a.OutputPath
		}
		return p, nil
	},
	LocalEffects: func(ctx context.Context, env *tools.Env, fields map[string]json.RawMessage) ([]string, error) {
		p := textField(fields, "outputPath")
		if p == "" {
			return nil, nil
		}
		dst, err := env.LocalDisk().Destination(ctx, p)
		if err != nil {
			return nil, err
		}
		return []string{"creates the file " + dst + " (a ZIP of the exported resources)"}, nil
	},
	// Decided again just before the authority exports: nothing is exported
	// for a destination the front will not write.
	Front: func(ctx context.Context, env *tools.Env, fields map[string]json.RawMessage) error {
		if p := textField(fields, "outputPath"); p != "" {
			_, err := env.LocalDisk().Destination(ctx, p)
			return err
		}
		return nil
	},
	Deliver: func(ctx context.Context, env *tools.Env, a resourcesArgs, res map[string]any) (any, error) {
		if a.OutputPath == "" || res["delivery"] != "download" {
			return res, nil
		}
		ds, err := manifest(res)
		if err != nil || len(ds) != 1 {
			return nil, fmt.Errorf("the authority's manifest: %v", err)
		}
		dst, err := env.LocalDisk().Destination(ctx, a.OutputPath)
		if err != nil {
			return nil, err
		}
		saved, err := env.Downloader.File(ctx, ds[0], dst)
		if err != nil {
			return nil, err
		}
		res["saved"] = []tools.Saved{saved}
		res["outputPath"], res["sha256"], res["bytes"] = saved.Path, saved.SHA256, saved.Size
		delete(res, "files")
		return res, nil
	},
}

type extractArgs struct {
	ID        string `arg:"id" help:"the document" id:"" required:""`
	OutputDir string `arg:"outputDir" help:"a new folder to create on the person's machine, inside a folder they allowed (--allow-dir; sisyphus call: its working directory), never in the workspace, the state dir or a hidden folder; default ~/siyuan-extracted/<document id>, which must lie in an allowed folder too; the person confirms it"`
}

var extractDoc = tools.Write[extractArgs, struct{}]{
	Name: "extract_doc",
	Summary: "save a document as Markdown with its assets into a new folder on the person's machine (outputDir, refused if it exists), " +
		"through the stdio or call process they run, inside a folder they allowed and after they confirmed the destination; " +
		"a direct HTTP client gets a delivery=download manifest",
	Policy: strict.WritePolicy{Class: strict.External},
	// SiYuan builds the export before it answers: a large one takes a
	// while, as long as a transfer may.
	Timeout: exportTimeout,
	Example: map[string]any{"id": "20260812120000-docdocd", "outputDir": "./plan-export"},
	Scope:   tools.Scope[extractArgs]{Touches: func(a extractArgs) []tools.Touch { return []tools.Touch{tools.OnBlock(a.ID, tools.LevelRead)} }},
	Execute: func(ctx context.Context, env *tools.Env, a extractArgs, _ struct{}) (tools.Payload, error) {
		md, found, err := kernelview.ExportMarkdown(ctx, env, a.ID)
		if treeMissing(err) || err == nil && !found {
			return nil, tools.Refuse(failure.Missing("document", a.ID))
		}
		if err != nil {
			return nil, tools.WriteFailure(err, false)
		}
		// Without query strings: the files themselves, each once.
		links, err := env.Kernel.GetDocAssets(ctx, a.ID, false)
		if err != nil {
			return nil, tools.WriteFailure(err, false)
		}
		// A link is URL-encoded as Markdown writes it (SiYuan decodes it
		// too when it exports); one that does not name a file under
		// data/assets (assets/../../conf/conf.json) is skipped, never
		// fetched.
		var assets, skipped []string
		for _, l := range links {
			if d, err := url.PathUnescape(l); err == nil {
				l = d
			}
			if rel, err := assetPath("asset", l); err != nil || rel != l {
				skipped = append(skipped, l)
				continue
			}
			if !slices.Contains(assets, l) {
				assets = append(assets, l)
			}
		}
		title := base(md.HPath)
		if title == "" || title == "/" || title == "." {
			title = a.ID
		}
		files := make([]tools.Download, 0, len(assets))
		for _, as := range assets {
			rel := strings.TrimPrefix(as, "/")
			files = append(files, tools.Download{KernelPath: workspace(rel), Dest: rel})
		}
		p := tools.Payload{"id": a.ID, "hPath": md.HPath, "delivery": "download", "markdown": md.Content,
			"markdownFile": safeName(title) + ".md", "files": files, "outputDir": a.OutputDir}
		if len(skipped) > 0 {
			p["skipped"] = skipped
		}
		return p, nil
	},
	LocalEffects: func(ctx context.Context, env *tools.Env, fields map[string]json.RawMessage) ([]string, error) {
		dir, err := extractDest(ctx, env, textField(fields, "id"), textField(fields, "outputDir"))
		if err != nil {
			return nil, err
		}
		return []string{"creates the folder " + dir + " and saves the document's Markdown and its assets in it"}, nil
	},
	// Decided again just before the authority exports: nothing is exported
	// for a destination the front will not write.
	Front: func(ctx context.Context, env *tools.Env, fields map[string]json.RawMessage) error {
		_, err := extractDest(ctx, env, textField(fields, "id"), textField(fields, "outputDir"))
		return err
	},
	Deliver: func(ctx context.Context, env *tools.Env, a extractArgs, res map[string]any) (any, error) {
		ds, err := manifest(res)
		if err != nil {
			return nil, fmt.Errorf("the authority's manifest: %v", err)
		}
		dir, err := extractDest(ctx, env, a.ID, a.OutputDir)
		if err != nil {
			return nil, err
		}
		md, _ := res["markdown"].(string)
		name, _ := res["markdownFile"].(string)
		saved, err := env.Downloader.Tree(ctx, append([]tools.Download{{Dest: name, Inline: md}}, ds...), dir)
		if err != nil {
			return nil, err
		}
		delete(res, "files")
		delete(res, "markdown")
		res["outputDir"], res["saved"] = dir, saved
		return res, nil
	},
}

// safeName turns a title into a file name.
func safeName(s string) string {
	s = strings.Map(func(r rune) rune {
		if strings.ContainsRune(`/\:*?"<>|`, r) || r < 0x20 {
			return '_'
		}
		return r
	}, strings.TrimSpace(s))
	if s == "" {
		return "document"
	}
	return s
}

// manifest reads the files of a delivery=download answer.
func manifest(res map[string]any) ([]tools.Download, error) {
	raw, _ := res["files"].([]any)
	out := make([]tools.Download, 0, len(raw))
	for _, f := range raw {
		m, _ := f.(map[string]any)
		kp, _ := m["kernelPath"].(string)
		dest, _ := m["dest"].(string)
		if kp == "" || dest == "" {
			return nil, fmt.Errorf("an entry without kernelPath or dest: %v", f)
		}
		out = append(out, tools.Download{KernelPath: kp, Dest: dest})
	}
	return out, nil
}

// treeMissing reports whether the kernel answered that no document holds
// the id ("tree not found").
func treeMissing(err error) bool {
	var ae *siyuan.APIError
	return asAPI(err, &ae) && strings.Contains(ae.Msg, "tree not found")
}

// extractDest is where extract_doc saves, on the person's machine, as the
// front's folder rule decides it: outputDir, or ~/siyuan-extracted/<document
// id>, which the rule must accept like any other.
func extractDest(ctx context.Context, env *tools.Env, id, dir string) (string, error) {
	if dir == "" {
		if err := tools.CheckID("id", id); err != nil {
			return "", err
		}
		home, err := os.UserHomeDir()
		if err != nil {
			return "", failure.Invalid("no outputDir, and no home directory to default to: %v", err).Attempted(false)
		}
		dir = filepath.Join(home, "siyuan-extracted", id)
	}
	return env.LocalDisk().Destination(ctx, dir)
}

// textField is a string argument as sent ("" when absent or not a string).
func textField(fields map[string]json.RawMessage, name string) string {
	var s string
	json.Unmarshal(fields[name], &s)
	return s
}
