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
)

// Exports are external effects: the kernel writes a ZIP into its temp
// folder, and saving to the person's disk happens at the front they talk
// to (delivery=download), never on the authority. No preflight, and no
// strict guarantee.

type idArgs struct{ ID string }

func parseID(a *tools.Args) (idArgs, error) {
	return idArgs{a.String("id")}, tools.CheckID("id", a.String("id"))
}

var readsDoc = tools.Scope[idArgs]{Touches: func(a idArgs) []tools.Touch { return []tools.Touch{tools.OnBlock(a.ID, tools.LevelRead)} }}

var exportMd = tools.Read[idArgs]{
	Name: "export_md", Summary: "a document as Markdown (SiYuan's export: references and embeds as configured there)",
	Params: []tools.Param{tools.IDParam("id", "the document", true)}, Parse: parseID, Scope: readsDoc,
	Run: func(ctx context.Context, env *tools.Env, a idArgs) (any, error) {
		md, err := env.Kernel.ExportMdContent(ctx, a.ID)
		if treeMissing(err) || err == nil && md.HPath == "" {
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

type resourcesArgs struct {
	Paths      []string // "/data/..." workspace paths
	Name       string
	OutputPath string
}

var exportResources = tools.Write[resourcesArgs, struct{}]{
	Name: "export_resources",
	Summary: "export workspace resources (assets, documents' folders) as one ZIP in SiYuan's temp/export; with outputPath the ZIP is also saved " +
		"on the person's machine by the stdio or call process they run (a direct HTTP client gets a delivery=download manifest to save itself)",
	Policy: strict.Policy{Class: strict.External},
	// SiYuan builds the export before it answers: a large one takes a
	// while, as long as a transfer may.
	Timeout: exportTimeout,
	Example: map[string]any{"paths": []string{"assets/diagram-20260101000000-abcdefg.png"}, "name": "diagrams", "outputPath": "./diagrams.zip"},
	Params: []tools.Param{
		{Name: "paths", Type: tools.Strings, Description: "workspace paths: assets/x.png, data/<notebook>/<doc>.sy, ...", Required: true},
		{Name: "name", Type: tools.String, Description: "the ZIP's name (without .zip)"},
		{Name: "outputPath", Type: tools.String, Description: "where to save the ZIP on the person's machine; refused if it exists"},
	},
	Parse: parseResources,
	Scope: tools.Scope[resourcesArgs]{Touches: func(a resourcesArgs) []tools.Touch { return resourceTouches(a.Paths) }},
	Execute: func(ctx context.Context, env *tools.Env, a resourcesArgs, _ struct{}) (tools.Payload, error) {
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
	Front: func(_ context.Context, _ *tools.Env, fields map[string]json.RawMessage) error {
		var p string
		if json.Unmarshal(fields["outputPath"], &p) != nil || p == "" {
			return nil
		}
		return refuseExisting("outputPath", p)
	},
	Deliver: func(ctx context.Context, env *tools.Env, a resourcesArgs, res map[string]any) (any, error) {
		if a.OutputPath == "" || res["delivery"] != "download" {
			return res, nil
		}
		ds, err := manifest(res)
		if err != nil || len(ds) != 1 {
			return nil, fmt.Errorf("the authority's manifest: %v", err)
		}
		dst, err := filepath.Abs(a.OutputPath)
		if err != nil {
			return nil, failure.Invalid("outputPath %q: %v", a.OutputPath, err)
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

func parseResources(a *tools.Args) (resourcesArgs, error) {
	r := resourcesArgs{Name: strings.TrimSpace(a.String("name")), OutputPath: a.String("outputPath")}
	seen := map[string]bool{}
	for i, p := range a.Strings("paths") {
		s := strings.TrimSpace(strings.ReplaceAll(p, "\\", "/"))
		s = strings.TrimLeft(s, "/")
		if strings.HasPrefix(s, "assets/") {
			s = "data/" + s
		}
		if s == "" {
			continue
		}
		if err := cleanRel(fmt.Sprintf("paths[%d]", i), p, s); err != nil {
			return r, err
		}
		if err := tools.CheckWorkspacePath(fmt.Sprintf("paths[%d]", i), s); err != nil {
			return r, err
		}
		// A folder holding the configuration folder would export it too
		// (and data/ holds every notebook, hidden ones included).
		if norm := strings.ToLower("/" + strings.TrimSuffix(s, "/")); strings.HasPrefix(tools.Protected, norm+"/") {
			e := failure.New(failure.PermissionDenied, "paths[%d] %q holds Sisyphus's configuration folder (%s), which no tool may read; nothing was run", i, p, tools.Protected)
			e.Action = "name the assets, notebooks or documents to export (assets/x.png, data/<notebook>/...)"
			return r, e.Attempted(false)
		}
		// Outside data/ lie SiYuan's own configuration (its API token),
		// history (copies of every notebook's documents) and temp files.
		if !strings.HasPrefix(s, "data/") {
			return r, failure.Invalid("paths[%d] must lie under data/ (assets/x.png, data/<notebook>/<doc>.sy, ...); got %q", i, p)
		}
		if !seen[s] {
			seen[s] = true
			r.Paths = append(r.Paths, "/"+s)
		}
	}
	if len(r.Paths) == 0 {
		return r, failure.Invalid("paths must name at least one workspace path (assets/x.png, data/<notebook>/<doc>.sy, ...)")
	}
	if strings.ContainsAny(r.Name, `/\`) {
		return r, failure.Invalid("name must be a file name without slashes")
	}
	return r, nil
}

// resourceTouches are the notebooks of workspace paths under data/ that
// name one ("/data/<notebook>/..."); assets belong to the workspace.
func resourceTouches(paths []string) []tools.Touch {
	var ts []tools.Touch
	for _, p := range paths {
		segs := strings.Split(strings.TrimPrefix(p, "/"), "/")
		if len(segs) < 2 || segs[0] != "data" {
			continue
		}
		// Lower-cased: on a case-insensitive file system another spelling
		// names the same notebook folder.
		if box := strings.ToLower(segs[1]); tools.CheckID("", box) == nil {
			ts = append(ts, tools.OnNotebook(box, tools.LevelRead))
		}
	}
	return ts
}

type extractArgs struct {
	ID, OutputDir string
}

var extractDoc = tools.Write[extractArgs, struct{}]{
	Name: "extract_doc",
	Summary: "save a document as Markdown with its assets into a new folder on the person's machine (outputDir, refused if it exists), " +
		"through the stdio or call process they run; a direct HTTP client gets a delivery=download manifest",
	Policy: strict.Policy{Class: strict.External},
	// SiYuan builds the export before it answers: a large one takes a
	// while, as long as a transfer may.
	Timeout: exportTimeout,
	Example: map[string]any{"id": "20260812120000-docdocd", "outputDir": "./plan-export"},
	Params: []tools.Param{
		tools.IDParam("id", "the document", true),
		{Name: "outputDir", Type: tools.String, Description: "a folder to create on the person's machine; default ~/siyuan-extracted/<document id>"},
	},
	Parse: func(a *tools.Args) (extractArgs, error) {
		return extractArgs{a.String("id"), a.String("outputDir")}, tools.CheckID("id", a.String("id"))
	},
	Scope: tools.Scope[extractArgs]{Touches: func(a extractArgs) []tools.Touch { return []tools.Touch{tools.OnBlock(a.ID, tools.LevelRead)} }},
	Execute: func(ctx context.Context, env *tools.Env, a extractArgs, _ struct{}) (tools.Payload, error) {
		md, err := env.Kernel.ExportMdContent(ctx, a.ID)
		if treeMissing(err) || err == nil && md.HPath == "" {
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
	Front: func(_ context.Context, _ *tools.Env, fields map[string]json.RawMessage) error {
		var id, dir string
		json.Unmarshal(fields["id"], &id)
		json.Unmarshal(fields["outputDir"], &dir)
		dir, err := extractDir(id, dir)
		if err != nil {
			return err
		}
		return refuseExisting("outputDir", dir)
	},
	Deliver: func(ctx context.Context, env *tools.Env, a extractArgs, res map[string]any) (any, error) {
		ds, err := manifest(res)
		if err != nil {
			return nil, fmt.Errorf("the authority's manifest: %v", err)
		}
		dir, err := extractDir(a.ID, a.OutputDir)
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

// extractDir is where extract_doc saves, on the person's machine: outputDir,
// or ~/siyuan-extracted/<document id>.
func extractDir(id, dir string) (string, error) {
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", failure.Invalid("no outputDir, and no home directory to default to: %v", err).Attempted(false)
		}
		dir = filepath.Join(home, "siyuan-extracted", id)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", failure.Invalid("outputDir %q: %v", dir, err).Attempted(false)
	}
	return abs, nil
}

// refuseExisting refuses, at the front and before the authority exports
// anything, a destination that exists in any form.
func refuseExisting(field, p string) error {
	abs, err := filepath.Abs(p)
	if err != nil {
		return failure.Invalid("%s %q: %v", field, p, err).Attempted(false)
	}
	if _, err := os.Lstat(abs); err == nil {
		e := failure.New(failure.DestinationExists, "%s already exists; nothing was exported or written", abs).With("path", abs)
		e.Action = "name a destination that does not exist yet, or ask the person to move the existing one away"
		return e.Attempted(false)
	}
	return nil
}
