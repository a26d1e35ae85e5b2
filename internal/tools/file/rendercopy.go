package file

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
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

// renderCopies is the workspace folder of the private copies.
const renderCopies = "/temp/sisyphus-render"

// removeCopyTimeout bounds the removal of a copy, which runs even when the
// call was cancelled.
const removeCopyTimeout = 10 * time.Second

// renderChecked renders src (the template at rel, data-relative, which
// SiYuan lists at abs) for block id, from a private copy of src.
func renderChecked(ctx context.Context, env *tools.Env, id, rel, abs, src string, preview bool) (string, error) {
	root, sep, err := workspaceRoot(abs, rel)
	if err != nil {
		return "", err
	}
	var nonce [16]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return "", fmt.Errorf("name the template's copy: %w", err)
	}
	name := renderCopies + "/" + hex.EncodeToString(nonce[:]) + ".md"
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

// workspaceRoot is the workspace's folder on the kernel's machine, with its
// trailing separator, and that separator: abs is the template rel
// ("templates/x.md") as SiYuan lists it, <workspace>/data/templates/x.md in
// the kernel's own spelling of paths (a backslash on Windows).
func workspaceRoot(abs, rel string) (root, sep string, err error) {
	tail := "data/" + rel
	n := len(abs) - len(tail)
	if n < 2 || strings.ReplaceAll(abs[n:], `\`, "/") != tail || (abs[n-1] != '/' && abs[n-1] != '\\') {
		return "", "", fmt.Errorf("SiYuan lists the template %s at %q, not under a workspace's data/templates", rel, abs)
	}
	return abs[:n], abs[n-1 : n], nil
}
