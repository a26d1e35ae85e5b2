// Package tplfile renders SiYuan template files (data/templates/...)
// exactly as they were checked: it reads a template within the template
// budget, refuses references to blocks the call cannot see, and has SiYuan
// render a private copy of the bytes checked rather than the file itself.
// file.render and the database items made from a new-item template with a
// content template both render this way.
package tplfile

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/markup"
)

// SiYuan renders a template file by its path, reading the file itself. Had
// render passed it the template's own path, SiYuan would read the file a
// second time, after the check: an agent rewriting the template in between
// (template writes run in the write lane beside renders in the read lane,
// and a front renders beside its authority's writes) would have SiYuan
// render what nobody checked, index helpers and all, while a notebook is
// hidden. So SiYuan renders a private copy of exactly the bytes checked,
// written under temp/ of the workspace (outside data/: no tool reads or
// writes there, SiYuan neither indexes nor syncs it) under a random name,
// and removed once rendered, whatever came of it.
//
// Serialising renders with template writes in the write lane would not
// reach a front's renders, and would let one slow render (its SQL helpers)
// hold every agent's writes; reading the file again after the render and
// comparing digests would miss a template rewritten and then restored
// while SiYuan rendered.

// CopiesDir is the workspace folder of the private copies (removed once
// rendered; a test looks there for leftovers).
const CopiesDir = "/temp/sisyphus-render"

// removeCopyTimeout bounds the removal of a copy, which runs even when the
// call was cancelled.
const removeCopyTimeout = 10 * time.Second

// Read reads the source of the template at rel ("templates/x.md",
// data-relative), within the template budget.
func Read(ctx context.Context, env *tools.Env, rel string) (string, error) {
	body, _, err := env.Kernel.GetFile(ctx, "/data/"+strings.TrimPrefix(rel, "/"))
	if errors.Is(err, siyuan.ErrFileNotFound) {
		return "", failure.Missing("template", rel)
	}
	if err != nil {
		return "", err
	}
	defer body.Close()
	data, err := io.ReadAll(io.LimitReader(body, int64(env.TemplateBytes())+1))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", rel, err)
	}
	if len(data) > env.TemplateBytes() {
		return "", failure.Invalid("the template %s is larger than the template budget (%d bytes); nothing was rendered", rel, env.TemplateBytes())
	}
	return string(data), nil
}

// Locate is where SiYuan lists the template rel on its own machine, in
// its own spelling of paths.
func Locate(ctx context.Context, env *tools.Env, rel string) (string, error) {
	want := strings.TrimPrefix(rel, "templates/")
	all, err := env.Kernel.SearchTemplate(ctx, "")
	if err != nil {
		return "", err
	}
	for _, t := range all {
		if t.RelativePath == want {
			return t.Path, nil
		}
	}
	e := failure.New(failure.NotFound, "SiYuan does not list the template %s (README.md and files starting with a dot are not templates); nothing was done", rel)
	e.Action = "list_templates shows the templates SiYuan knows"
	return "", e.Attempted(false)
}

// CheckRefs refuses a template (its source, or the DOM it rendered to)
// that references a block the call cannot see: SiYuan fills a reference's
// empty anchor with its target's text as it renders. The refusal is the
// one for a block that does not exist, whether it is missing or hidden.
func CheckRefs(ctx context.Context, env *tools.Env, text string) error {
	if !tools.Hiding(ctx) {
		return nil
	}
	ids := markup.RefIDs(text)
	if len(ids) == 0 {
		return nil
	}
	seen, err := tools.Seen(ctx, env, ids)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if !seen[id] {
			return failure.Missing("block", id)
		}
	}
	return nil
}

// Render renders src (the template at rel, data-relative, which SiYuan
// lists at abs) for block id, from a private copy of src. src must have
// passed tplguard.Check and CheckRefs.
func Render(ctx context.Context, env *tools.Env, id, rel, abs, src string, preview bool) (string, error) {
	root, sep, err := WorkspaceRoot(abs, rel)
	if err != nil {
		return "", err
	}
	var nonce [16]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return "", fmt.Errorf("name the template's copy: %w", err)
	}
	name := CopiesDir + "/" + hex.EncodeToString(nonce[:]) + ".md"
	if err := env.Kernel.PutFile(ctx, siyuan.PutFileRequest{Path: name, Body: strings.NewReader(src)}); err != nil {
		return "", fmt.Errorf("copy the template %s for rendering: %w", rel, err)
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeCopyTimeout)
		defer cancel()
		env.Kernel.RemoveFile(rctx, name) // a leftover holds a template any agent may read
	}()
	return env.Kernel.RenderTemplate(ctx, id, root+strings.ReplaceAll(strings.TrimPrefix(name, "/"), "/", sep), preview)
}

// WorkspaceRoot is the workspace's folder on the kernel's machine, with its
// trailing separator, and that separator: abs is the template rel
// ("templates/x.md") as SiYuan lists it, <workspace>/data/templates/x.md in
// the kernel's own spelling of paths (a backslash on Windows).
func WorkspaceRoot(abs, rel string) (root, sep string, err error) {
	tail := "data/" + rel
	n := len(abs) - len(tail)
	if n < 2 || strings.ReplaceAll(abs[n:], `\`, "/") != tail || (abs[n-1] != '/' && abs[n-1] != '\\') {
		return "", "", fmt.Errorf("SiYuan lists the template %s at %q, not under a workspace's data/templates", rel, abs)
	}
	return abs[:n], abs[n-1 : n], nil
}
