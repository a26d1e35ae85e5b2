package file

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
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
		kp := "/" + strings.TrimPrefix(zip, "/")
		switch {
		case a.Delivery == inline:
			f, err := inlineFile(ctx, env, kp, inlineMaxBytes)
			if err != nil {
				return nil, failure.Wrap(failure.KernelError, err, "the ZIP was built in SiYuan's temp folder (%s) but could not be read to embed it", zip).Attempted(true)
			}
			if f.over {
				e := failure.New(failure.ResultTooLarge, "the ZIP is %d bytes, more than delivery inline puts in an answer (%d); it lies in SiYuan's temp folder (%s), nothing was embedded",
					f.size, inlineMaxBytes, zip).With("size", f.size).With("limit", inlineMaxBytes).With("path", zip)
				e.Action = "call again with delivery download (a manifest to fetch the ZIP), or with outputPath to save it on the person's machine"
				return nil, e.Attempted(true)
			}
			p["delivery"], p["dataBase64"], p["sha256"], p["bytes"] = string(inline), base64.StdEncoding.EncodeToString(f.data), digestOf(string(f.data)), f.size
		case a.OutputPath != "" || a.Delivery == download:
			// The ZIP's name as the caller gave it, without the prefix
			// SiYuan adds to keep its temp names apart.
			dest := a.OutputPath
			switch {
			case dest == "" && a.Name != "":
				dest = strings.TrimSuffix(a.Name, ".zip") + ".zip"
			case dest == "":
				dest = base(zip)
			}
			p["delivery"] = string(download)
			p["files"] = []tools.Download{{KernelPath: kp, Dest: dest}}
			if a.OutputPath != "" {
				p["outputPath"] = a.OutputPath
			}
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

// delivery is how an export reaches its caller: upstream 0.6.8's
// argument of export_resources and extract_doc.
type delivery string

// The deliveries.
const (
	// inline puts the files themselves in the answer (base64).
	inline delivery = "inline"
	// download answers a manifest of kernel files to fetch and save.
	download delivery = "download"
)

// ArgEnum implements tools.Enumerated.
func (delivery) ArgEnum() []string { return []string{string(inline), string(download)} }

// inlineMaxBytes bounds the file bytes delivery inline puts in one answer:
// base64 adds a third, and the answer must stay below the 1 MiB a task
// result keeps.
const inlineMaxBytes = 512 << 10

// inlined is a kernel file read for delivery inline: its bytes when it
// fits, else only its size.
type inlined struct {
	data []byte
	size int
	over bool
}

// inlineFile reads a workspace file for delivery inline, up to max bytes;
// a larger one is counted to the end (to say its size), not kept.
func inlineFile(ctx context.Context, env *tools.Env, p string, max int) (inlined, error) {
	body, _, err := env.Kernel.GetFile(ctx, p)
	if err != nil {
		return inlined{}, err
	}
	defer body.Close()
	data, err := io.ReadAll(io.LimitReader(body, int64(max)+1))
	if err != nil {
		return inlined{}, fmt.Errorf("read %s: %w", p, err)
	}
	if len(data) <= max {
		return inlined{data: data, size: len(data)}, nil
	}
	rest, err := io.Copy(io.Discard, body)
	if err != nil {
		return inlined{}, fmt.Errorf("read %s: %w", p, err)
	}
	return inlined{size: len(data) + int(rest), over: true}, nil
}

type extractArgs struct {
	ID        string   `arg:"id" help:"the document" id:"" required:""`
	OutputDir string   `arg:"outputDir" help:"a new folder to create on the person's machine, inside a folder they allowed (--allow-dir; sisyphus call: its working directory), never in the workspace, the state dir or a hidden folder; default ~/siyuan-extracted/<document id>, which must lie in an allowed folder too; the person confirms it"`
	Delivery  delivery `arg:"delivery" help:"download (as omitted): the Markdown and a manifest of its assets (files: kernelPath, dest), saved in outputDir by the stdio or call process; inline: the Markdown and the assets as base64 (assets: path, dataBase64, sha256, bytes), at most 512 KiB, saving nothing (not with outputDir)"`
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
	Validate: func(a *extractArgs) error {
		if a.Delivery == inline && a.OutputDir != "" {
			return failure.Invalid("delivery inline puts the document in the answer, outputDir saves it on the person's machine: pass one of them")
		}
		return nil
	},
	Scope: tools.Scope[extractArgs]{Touches: func(a extractArgs) []tools.Touch { return []tools.Touch{tools.OnBlock(a.ID, tools.LevelRead)} }},
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
		if a.Delivery == inline {
			return extractInline(ctx, env, a, md, title, assets, skipped)
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
		if delivery(textField(fields, "delivery")) == inline {
			return nil, nil // the answer carries it; nothing lands on the disk
		}
		dir, err := extractDest(ctx, env, textField(fields, "id"), textField(fields, "outputDir"))
		if err != nil {
			return nil, err
		}
		return []string{"creates the folder " + dir + " and saves the document's Markdown and its assets in it"}, nil
	},
	// Decided again just before the authority exports: nothing is exported
	// for a destination the front will not write.
	Front: func(ctx context.Context, env *tools.Env, fields map[string]json.RawMessage) error {
		if delivery(textField(fields, "delivery")) == inline {
			return nil
		}
		_, err := extractDest(ctx, env, textField(fields, "id"), textField(fields, "outputDir"))
		return err
	},
	Deliver: func(ctx context.Context, env *tools.Env, a extractArgs, res map[string]any) (any, error) {
		if a.Delivery == inline {
			return res, nil
		}
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

// extractInline is extract_doc's answer with delivery inline: the
// Markdown and its assets' bytes, at most inlineMaxBytes of them. It only
// reads, so a refusal leaves nothing behind.
func extractInline(ctx context.Context, env *tools.Env, a extractArgs, md siyuan.MdContent, title string, assets, skipped []string) (tools.Payload, error) {
	out := make([]map[string]any, 0, len(assets))
	var missing []string
	total := 0
	for _, as := range assets {
		f, err := inlineFile(ctx, env, workspace(strings.TrimPrefix(as, "/")), inlineMaxBytes-total)
		if missingFile(err) {
			missing = append(missing, as) // linked, but not in data/assets
			continue
		}
		if err != nil {
			return nil, tools.Refuse(err)
		}
		if f.over {
			e := failure.New(failure.ResultTooLarge, "the document's assets come to at least %d bytes (%s alone is %d), more than delivery inline puts in an answer (%d); nothing was embedded",
				total+f.size, as, f.size, inlineMaxBytes).With("size", total+f.size).With("limit", inlineMaxBytes)
			e.Action = "call again with delivery download (the Markdown and a manifest of the assets)"
			return nil, tools.Refuse(e)
		}
		total += f.size
		out = append(out, map[string]any{"path": as, "dataBase64": base64.StdEncoding.EncodeToString(f.data), "sha256": digestOf(string(f.data)), "bytes": f.size})
	}
	p := tools.Payload{"id": a.ID, "hPath": md.HPath, "delivery": string(inline), "markdown": md.Content,
		"markdownFile": safeName(title) + ".md", "assets": out, "bytes": total}
	if len(skipped) > 0 {
		p["skipped"] = skipped
	}
	if len(missing) > 0 {
		p["missing"] = missing
	}
	return p, nil
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
