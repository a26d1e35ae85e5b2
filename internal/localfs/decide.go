// Package localfs decides which of the person's files a front (sisyphus
// stdio, sisyphus call, serve --authority) may read for an agent, and where
// it may create files for one, and opens a file so that what is read is
// what was decided on.
//
// A path in a tool call is the agent's, and agents are not trusted with the
// person's disk. The person allows folders (--allow-dir, SISYPHUS_ALLOW_DIRS);
// a path is accepted only when it lies inside one of them, before and after
// every symbolic link in it is resolved, and in none of the places no folder
// rule opens: the SiYuan workspace (conf/conf.json holds its API token),
// Sisyphus's state dir (its bearer token), hidden files and folders (a name
// starting with a dot: ~/.ssh, ~/.config, .env) and the system's virtual
// file systems (/proc, /sys, /dev). A path with a ".." element is refused
// as written.
//
// The write authority never uses this package: it opens no path a call
// names at all.
package localfs

import (
	"path/filepath"
	"runtime"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
)

// Place is a folder no path may enter, and what it is, for the refusal.
type Place struct {
	Path string
	What string
}

// caseless file systems (macOS, Windows by default) give one file several
// spellings: the rule compares paths folded.
const caseless = runtime.GOOS == "darwin" || runtime.GOOS == "windows"

// systemPlaces are the virtual file systems: their files are the kernel's
// and the processes' (/proc/self/environ, /proc/self/cmdline), never the
// person's documents.
func systemPlaces() []Place {
	if runtime.GOOS == "windows" {
		return nil
	}
	return []Place{{"/proc", "a system folder"}, {"/sys", "a system folder"}, {"/dev", "a system folder"}}
}

// Decide is the rule on one absolute path: nil when p is clean, lies inside
// one of the allowed folders and in no forbidden place, and none of its
// names is hidden; otherwise a path_not_allowed failure naming p. The
// caller resolves links first (Guard does, and decides again on the
// result): Decide looks only at the text.
func Decide(p string, allowed []string, forbidden []Place) error {
	if why := reason(p, allowed, forbidden); why != "" {
		return refusal(p, why)
	}
	return nil
}

// reason is why p is refused ("" when it is not).
func reason(p string, allowed []string, forbidden []Place) string {
	if p == "" || strings.ContainsRune(p, 0) || !filepath.IsAbs(p) || filepath.Clean(p) != p {
		return "is not a clean absolute path"
	}
	for _, f := range forbidden {
		if within(p, f.Path) {
			return "lies in " + f.What + ", which no agent may read or write"
		}
	}
	if hidden(p) {
		return "is or lies in a hidden file or folder (a name starting with a dot, like ~/.ssh or .env), which no agent may read or write"
	}
	for _, a := range allowed {
		if within(p, a) {
			return ""
		}
	}
	if len(allowed) == 0 {
		return "lies outside the folders the person allowed agents, and none is allowed"
	}
	return "lies outside the folders the person allowed agents (" + strings.Join(allowed, ", ") + ")"
}

func refusal(p, why string) *failure.Error {
	e := failure.New(failure.PathNotAllowed, "the local path %q %s; nothing was read or written", p, why).With("path", p)
	return e
}

// within reports whether p is dir or lies under it; both are clean
// absolute paths.
func within(p, dir string) bool {
	if dir == "" {
		return false
	}
	if caseless {
		p, dir = strings.ToLower(p), strings.ToLower(dir)
	}
	if p == dir {
		return true
	}
	if !strings.HasSuffix(dir, string(filepath.Separator)) {
		dir += string(filepath.Separator) // not the root, whose name ends in one
	}
	return strings.HasPrefix(p, dir)
}

// hidden reports whether a name of p (after its volume) starts with a dot.
func hidden(p string) bool {
	for _, name := range strings.Split(p[len(filepath.VolumeName(p)):], string(filepath.Separator)) {
		if strings.HasPrefix(name, ".") {
			return true
		}
	}
	return false
}

// dotDot reports whether p, as written, has a ".." element (with either
// slash: a Windows path may use both).
func dotDot(p string) bool {
	for _, name := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == filepath.Separator }) {
		if name == ".." {
			return true
		}
	}
	return false
}
