package file

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// What export_resources may put in a ZIP is what the agent may read
// through the other tools, whole: the workspace's assets, templates and
// custom emojis, and the folders of the notebooks it may read. Everything
// else under data/ is refused by name, whatever it holds today:
//
//   - data/ itself holds every notebook (hidden ones too) and the storage;
//   - data/storage holds, across every notebook, the databases (av/: rows
//     bound to blocks of hidden notebooks, cached contents included), the
//     flashcard decks (riff/), every plugin's storage (petal/<plugin>/,
//     which system.read_plugin_storage only shows redacted, and Sisyphus's
//     configuration), SiYuan's AI agent sessions (ai/), the UI's state
//     (recent-doc.json: recently opened documents; outline.json,
//     local.json, criteria.json: saved searches; bazaar.json) and what
//     later versions add there;
//   - data/plugins and data/widgets hold installed code and whatever it
//     writes beside itself (settings, tokens), data/snippets the snippets
//     system.list_snippets only shows redacted, data/public what the person
//     publishes;
//   - any other name (a file at the top, another spelling of a folder on a
//     case-insensitive disk) is refused rather than guessed at.
//
// A hidden notebook's folder is answered exactly as a folder that does not
// exist, so the answer never tells the two apart.

// exportTops are the top-level folders of data/ whose content any agent may
// read.
var exportTops = map[string]bool{"assets": true, "templates": true, "emojis": true}

// refusedTops are the top-level folders of data/ never exported, each with
// the reason the refusal gives.
var refusedTops = map[string]string{
	"storage":  "holds SiYuan's databases, flashcards, plugin storage (Sisyphus's configuration included), AI sessions and UI state across every notebook; read them with the av, flashcard and system tools",
	"plugins":  "holds installed plugins' code and what they keep beside it",
	"widgets":  "holds installed widgets' code and what they keep beside it",
	"snippets": "holds the CSS and JavaScript snippets, which system.list_snippets shows redacted",
	"public":   "holds what the person publishes, which no tool reads",
}

// notebookDir is how a notebook's folder is spelled: its id exactly (an
// upper-case spelling is another name, refused like any unknown one).
var notebookDir = regexp.MustCompile(`^\d{14}-[0-9a-z]{7}$`)

type resourcesArgs struct {
	Given      []string `arg:"paths" help:"workspace paths under data/assets, data/templates, data/emojis or data/<notebook id> (assets/x.png, data/<notebook>/<doc>.sy, ...); data/storage, plugins, widgets, snippets and public are never exported" required:""`
	Name       string   `arg:"name" help:"the ZIP's name (without .zip)"`
	OutputPath string   `arg:"outputPath" help:"where to save the ZIP on the person's machine: a new file inside a folder they allowed (--allow-dir; sisyphus call: its working directory), never in the workspace, the state dir or a hidden folder; refused if it exists; the person confirms it"`
	Delivery   delivery `arg:"delivery" help:"download: a manifest (files: kernelPath, dest), no bytes, saved by the stdio or call process at outputPath/outputDir; inline: the files as base64 in the answer (at most 512 KiB; not with outputPath/outputDir); omitted: the ZIP's temp path"`
	Paths      []string // "/data/..." workspace paths, from Given
}

func parseResources(r *resourcesArgs) error {
	r.Name = strings.TrimSpace(r.Name)
	seen := map[string]bool{}
	for i, p := range r.Given {
		field := fmt.Sprintf("paths[%d]", i)
		s := strings.TrimSpace(strings.ReplaceAll(p, "\\", "/"))
		s = strings.TrimLeft(s, "/")
		if strings.HasPrefix(s, "assets/") {
			s = "data/" + s
		}
		if s == "" {
			continue
		}
		if err := cleanRel(field, p, s); err != nil {
			return err
		}
		if err := tools.CheckWorkspacePath(field, s); err != nil {
			return err
		}
		if err := exportable(i, p, strings.TrimSuffix(s, "/")); err != nil {
			return err
		}
		if !seen[s] {
			seen[s] = true
			r.Paths = append(r.Paths, "/"+s)
		}
	}
	if len(r.Paths) == 0 {
		return failure.Invalid("paths must name at least one workspace path (assets/x.png, data/<notebook>/<doc>.sy, ...)")
	}
	if strings.ContainsAny(r.Name, `/\`) {
		return failure.Invalid("name must be a file name without slashes")
	}
	if r.Delivery == inline && r.OutputPath != "" {
		return failure.Invalid("delivery inline puts the ZIP in the answer, outputPath saves it on the person's machine: pass one of them")
	}
	return nil
}

// exportable refuses, from its spelling alone, a path outside what
// export_resources exports (rel is "data/...", clean, without a trailing
// slash). A notebook's folder passes here: its level is decided when the
// call runs.
func exportable(i int, raw, rel string) error {
	denied := func(format string, a ...any) error {
		e := failure.New(failure.PermissionDenied, "paths[%d] %q %s; nothing was exported", append([]any{i, raw}, a...)...)
		e.Action = "name the assets, templates or notebook folders to export (assets/x.png, data/<notebook id>/...)"
		return e.Attempted(false)
	}
	// Lower-cased: on a case-insensitive disk DATA/Storage is data/storage.
	lower := strings.ToLower(rel)
	if lower == "data" {
		return denied("is the whole data folder, which holds every notebook (hidden ones too) and the storage")
	}
	if strings.HasPrefix(lower, "data/") {
		top, _, _ := strings.Cut(lower[len("data/"):], "/")
		if why, ok := refusedTops[top]; ok {
			return denied("is under data/%s, which %s", top, why)
		}
	}
	if !strings.HasPrefix(rel, "data/") {
		if strings.HasPrefix(lower, "data/") {
			return failure.Invalid("paths[%d] %q: write the data folder in lower case (data/...)", i, raw)
		}
		// Outside data/ lie SiYuan's own configuration (its API token),
		// history (copies of every notebook's documents) and temp files.
		return failure.Invalid("paths[%d] must lie under data/ (assets/x.png, data/<notebook>/<doc>.sy, ...); got %q", i, raw)
	}
	top, _, _ := strings.Cut(rel[len("data/"):], "/")
	if exportTops[top] || notebookDir.MatchString(top) {
		return nil
	}
	e := failure.Invalid("paths[%d] %q is not under a folder export_resources exports: data/assets, data/templates, data/emojis, or a notebook's folder data/<notebook id> (written exactly, in lower case)", i, raw)
	return e.Attempted(false)
}

// checkResources runs before the export: each path must name a file or
// folder that exists under its exact name, reached without a symbolic link
// (SiYuan refuses a link only as the last segment, and would follow one
// above it out of the workspace). A path in a notebook the agent may not
// see gets the answer of a path that does not exist, before any kernel
// call about it.
func checkResources(ctx context.Context, env *tools.Env, paths []string) error {
	listed := map[string][]siyuan.DirEntry{} // folder → its entries, read once
	for i, p := range paths {
		segs := strings.Split(strings.Trim(p, "/"), "/")
		missing := func() error {
			e := failure.New(failure.NotFound, "paths[%d] %q names no file or folder in the workspace; nothing was exported", i, strings.TrimPrefix(p, "/"))
			e.Action = "check the path: asset paths with search.search_assets or file.get_doc_assets, notebook folders with notebook.list"
			return e.Attempted(false)
		}
		if notebookDir.MatchString(segs[1]) && !tools.Visible(ctx, segs[1]) {
			return missing()
		}
		parent := "/" + segs[0]
		for j, s := range segs[1:] {
			entries, ok := listed[parent]
			if !ok {
				var err error
				entries, err = env.Kernel.ReadDir(ctx, parent)
				if errors.Is(err, siyuan.ErrFileNotFound) {
					return missing()
				}
				if err != nil {
					return err
				}
				listed[parent] = entries
			}
			var found *siyuan.DirEntry
			for k := range entries {
				if entries[k].Name == s {
					found = &entries[k]
					break
				}
			}
			last := j == len(segs)-2
			switch {
			case found == nil || !last && !found.IsDir:
				return missing()
			case found.IsSymlink:
				e := failure.New(failure.PermissionDenied, "paths[%d] %q passes through the symbolic link %s, which exports never follow; nothing was exported",
					i, strings.TrimPrefix(p, "/"), strings.Join(segs[:j+2], "/"))
				e.Action = "export the files the link points to from where they are, or ask the person to"
				return e.Attempted(false)
			}
			parent += "/" + s
		}
	}
	return nil
}
