package localfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/sisyphus-go/sisyphus/internal/failure"
)

// Rules are what a front's person decided, and what the front knows of the
// places no agent may reach.
type Rules struct {
	// Allowed are the folders the person allowed agents (relative ones
	// against WorkDir). Each must exist and be a folder.
	Allowed []string
	// Forbidden are places no path may enter even inside an allowed folder:
	// the state dir, the workspace of an embedded kernel. The system's
	// virtual file systems are always added.
	Forbidden []Place
	// WorkDir is what relative paths are relative to ("": this process's
	// working directory).
	WorkDir string
	// Workspace, when set, tells where the SiYuan workspace lies (a real
	// SiYuan answers it through its API). It is asked before the first path
	// is decided, and again until it answers: no path is accepted while the
	// workspace is unknown.
	Workspace func(ctx context.Context) (string, error)
}

// Guard applies the rules. It is safe for concurrent use; a nil Guard
// refuses every path.
type Guard struct {
	wd string
	// allowed are the allowed folders with every link resolved; named
	// adds the forms the person wrote (for the check before resolving).
	allowed, named []string
	forbidden      []Place
	workspace      func(ctx context.Context) (string, error)

	mu      sync.Mutex
	learned []Place // the workspace, once the kernel told it
}

// New checks the rules: every allowed folder exists, is a folder, and is
// not itself a place no agent may reach.
func New(r Rules) (*Guard, error) {
	wd := r.WorkDir
	if wd == "" {
		var err error
		if wd, err = os.Getwd(); err != nil {
			return nil, fmt.Errorf("localfs: the working directory: %w", err)
		}
	}
	if !filepath.IsAbs(wd) {
		return nil, fmt.Errorf("localfs: the working directory %q is not absolute", wd)
	}
	g := &Guard{wd: filepath.Clean(wd), workspace: r.Workspace}
	for _, f := range append(systemPlaces(), r.Forbidden...) {
		g.forbidden = append(g.forbidden, forms(g.abs(f.Path), f.What)...)
	}
	for _, a := range r.Allowed {
		if strings.TrimSpace(a) == "" {
			continue
		}
		abs := g.abs(a)
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return nil, fmt.Errorf("the allowed folder %s cannot be used: %w", a, err)
		}
		if st, err := os.Stat(real); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("the allowed folder %s is not a folder", a)
		}
		for _, p := range []string{abs, real} {
			if why := reason(p, []string{p}, g.forbidden); why != "" {
				return nil, fmt.Errorf("the folder %s cannot be allowed: %s %s", a, p, why)
			}
		}
		if !slices.Contains(g.allowed, real) {
			g.allowed = append(g.allowed, real)
		}
		for _, p := range []string{abs, real} {
			if !slices.Contains(g.named, p) {
				g.named = append(g.named, p)
			}
		}
	}
	return g, nil
}

// forms are a place as given and, when it differs, with its links
// resolved: a path may reach it either way.
func forms(p, what string) []Place {
	out := []Place{{p, what}}
	if real, err := filepath.EvalSymlinks(p); err == nil && real != p {
		out = append(out, Place{real, what})
	}
	return out
}

// Allowed lists the allowed folders, links resolved.
func (g *Guard) Allowed() []string {
	if g == nil {
		return nil
	}
	return slices.Clone(g.allowed)
}

func (g *Guard) abs(p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(g.wd, p)
	}
	return filepath.Clean(p)
}

// places are the forbidden places, the workspace included once known.
func (g *Guard) places(ctx context.Context) ([]Place, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.workspace != nil && g.learned == nil {
		ws, err := g.workspace(ctx)
		switch {
		case err != nil:
			return nil, failure.Wrap(failure.PathNotAllowed, err,
				"the SiYuan workspace's location could not be learned from the kernel, and no local file is read or written for an agent while it is unknown; nothing was read or written")
		case !filepath.IsAbs(ws):
			return nil, failure.New(failure.PathNotAllowed,
				"the kernel named its workspace %q, which is not an absolute path here, so no local file is read or written for an agent; nothing was read or written", ws)
		}
		g.learned = forms(filepath.Clean(ws), "the SiYuan workspace")
	}
	return append(slices.Clone(g.forbidden), g.learned...), nil
}

// check resolves p as a call names it and decides on the path as written:
// relative paths are taken from the working directory, ".." is refused.
func (g *Guard) check(ctx context.Context, p string) (abs string, forbidden []Place, err error) {
	if g == nil {
		return "", nil, refusal(p, "cannot be used: this process reads and writes no local file for agents")
	}
	if strings.TrimSpace(p) == "" || strings.ContainsRune(p, 0) {
		return "", nil, failure.New(failure.InvalidArguments, "the local path %q is empty or holds a NUL character", p)
	}
	if dotDot(p) {
		return "", nil, refusal(p, "has a \"..\" element (name the file inside an allowed folder directly)")
	}
	if forbidden, err = g.places(ctx); err != nil {
		return "", nil, err
	}
	abs = g.abs(p)
	if why := reason(abs, g.named, forbidden); why != "" {
		return "", nil, refusal(p, why)
	}
	return abs, forbidden, nil
}

// decideResolved decides on the path a link led to; the refusal names the
// path as the call wrote it.
func (g *Guard) decideResolved(given, real string, forbidden []Place) error {
	if why := reason(real, g.allowed, forbidden); why != "" {
		return refusal(given, "leads, through a symbolic link, to a path that "+why)
	}
	return nil
}

// File is a local file opened for reading, after the rule accepted it.
type File struct {
	*os.File
	// Path is the file's absolute path, every link resolved.
	Path string
	// Name is the last element of the path as the call named it.
	Name string
	// Size is the size when it was opened.
	Size int64
}

// Open opens the file at p for reading, for an agent: p must be accepted by
// the rule before and after its links are resolved, and name a regular
// file with no other name (a hard link could be a second name of a file
// the rule forbids). The opened file itself is checked again (its path as
// the system holds it, or its identity), so that a link swapped in between
// the decision and the opening is caught. Missing files are not_found.
func (g *Guard) Open(ctx context.Context, p string) (*File, error) {
	abs, forbidden, err := g.check(ctx, p)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, failure.Wrap(failure.NotFound, err, "the local file %s does not exist", abs)
	}
	if err != nil {
		return nil, failure.Wrap(failure.InvalidArguments, err, "the local file %s cannot be opened", abs)
	}
	if err := g.decideResolved(p, real, forbidden); err != nil {
		return nil, err
	}
	// Not even opened unless it is a regular file: opening a device or a
	// pipe can act (a writer waiting on a FIFO is let through).
	if st, err := os.Lstat(real); err == nil && !st.Mode().IsRegular() {
		return nil, notRegular(p, abs)
	}
	f, err := openNoFollow(real)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, failure.Wrap(failure.NotFound, err, "the local file %s does not exist", abs)
	case err != nil && isLinkLoop(err):
		return nil, refusal(p, "changed into a symbolic link while it was opened")
	case err != nil:
		return nil, failure.Wrap(failure.InvalidArguments, err, "the local file %s cannot be opened", abs)
	}
	out, err := g.verify(f, p, abs, real, forbidden)
	if err != nil {
		f.Close()
		return nil, err
	}
	return out, nil
}

// verify checks what was opened: a regular file with one name, at the path
// decided on.
func (g *Guard) verify(f *os.File, given, abs, real string, forbidden []Place) (*File, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, failure.Wrap(failure.InvalidArguments, err, "the local file %s cannot be read", abs)
	}
	if !st.Mode().IsRegular() {
		return nil, notRegular(given, abs)
	}
	if links(st) > 1 {
		return nil, refusal(given, "is a file with several names (hard links), one of which may lie where no agent may read")
	}
	if opened, ok := openedPath(f); ok {
		if opened != real {
			return nil, refusal(given, "changed while it was opened (it now names "+opened+")")
		}
		if err := g.decideResolved(given, opened, forbidden); err != nil {
			return nil, err
		}
	} else if now, err := os.Stat(real); err != nil || !os.SameFile(st, now) {
		return nil, refusal(given, "changed while it was opened")
	}
	return &File{File: f, Path: real, Name: filepath.Base(abs), Size: st.Size()}, nil
}

func notRegular(given, abs string) error {
	return failure.New(failure.InvalidArguments, "the local path %s is not a regular file (a folder, a device, a pipe or a socket); only regular files are read", abs).
		With("path", given)
}

// Destination decides where a new file or folder may be created for an
// agent: p must not exist (destination_exists), and it is accepted by the
// rule as written and once the links of its nearest existing parent are
// resolved; the missing folders between are created by the caller, inside
// the allowed folder. It returns the path to create, links resolved.
func (g *Guard) Destination(ctx context.Context, p string) (string, error) {
	abs, forbidden, err := g.check(ctx, p)
	if err != nil {
		return "", err
	}
	if _, err := os.Lstat(abs); err == nil {
		e := failure.New(failure.DestinationExists, "%s already exists; nothing was exported or written", abs).With("path", abs)
		e.Action = "name a destination that does not exist yet, or ask the person to move the existing one away"
		return "", e
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", failure.Wrap(failure.InvalidArguments, err, "the destination %s cannot be used", abs)
	}
	// The nearest parent that exists (as a name: a dangling link counts,
	// and fails to resolve below), and the names still to create.
	parent, rest := filepath.Dir(abs), []string{filepath.Base(abs)}
	for {
		if _, err := os.Lstat(parent); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", failure.Wrap(failure.InvalidArguments, err, "the destination %s cannot be used", abs)
		}
		up := filepath.Dir(parent)
		if up == parent {
			return "", failure.New(failure.InvalidArguments, "no folder of the destination %s exists", abs)
		}
		rest = append([]string{filepath.Base(parent)}, rest...)
		parent = up
	}
	real, err := filepath.EvalSymlinks(parent)
	if err != nil {
		return "", refusal(p, "has a parent that is a broken symbolic link")
	}
	if st, err := os.Stat(real); err != nil || !st.IsDir() {
		return "", failure.New(failure.InvalidArguments, "%s is not a folder; nothing was written", parent).With("path", p)
	}
	dest := filepath.Join(append([]string{real}, rest...)...)
	if err := g.decideResolved(p, dest, forbidden); err != nil {
		return "", err
	}
	return dest, nil
}
