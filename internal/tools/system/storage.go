package system

import (
	"context"
	"errors"
	"io"
	"path"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// Plugin storage: sandboxed, bounded reads of one installed plugin's
// folder, /data/storage/petal/<plugin>/. A path is relative to that folder
// and is checked segment by segment against what readDir lists (it must
// exist, no segment may be a symbolic link), so no spelling reaches beyond
// it; Sisyphus's own folder, where its configuration lives, is refused
// outright.

const (
	petalRoot = "/data/storage/petal"
	// maxStorageDepth and maxStorageEntries bound a listing; maxFileBytes
	// a file read; maxOutputChars what one read shows.
	maxStorageDepth   = 4
	maxStorageEntries = 200
	maxFileBytes      = 128 << 10
	maxOutputChars    = 32000
	defaultChars      = 12000
)

// sisyphusPlugin is the folder of Sisyphus's configuration (upstream's
// plugin storage).
var sisyphusPlugin = path.Base(tools.Protected)

// CheckStoragePath normalises a path inside a plugin's storage folder: ""
// is the folder itself. It refuses absolute paths, backslashes, control
// characters, percent-encoding, drive letters, empty, "." and ".."
// segments, and segments a file system could trim into them (trailing dots
// or spaces).
func CheckStoragePath(p string) (string, error) {
	p = strings.TrimSpace(p)
	if p == "" {
		return "", nil
	}
	bad := func(why string) (string, error) {
		e := failure.Invalid("path %q %s: give a relative path inside the plugin's storage folder, such as \"config.json\" or \"sub/settings.json\"", p, why)
		return "", e
	}
	switch {
	case len(p) > 512:
		return bad("is longer than 512 bytes")
	case !utf8.ValidString(p):
		return bad("is not valid UTF-8")
	case strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~"):
		return bad("is absolute")
	case strings.ContainsAny(p, `\%:`):
		return bad(`holds \, % or :`)
	}
	for _, r := range p {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return bad("holds a control character")
		}
	}
	segs := strings.Split(p, "/")
	if len(segs) > 16 {
		return bad("is deeper than 16 folders")
	}
	for _, s := range segs {
		if strings.Trim(s, ". ") == "" || strings.HasSuffix(s, ".") || strings.HasSuffix(s, " ") || strings.HasPrefix(s, " ") {
			return bad("holds an empty, dot or dot-dot segment")
		}
	}
	return p, nil
}

// storageRoot checks the plugin and returns its storage folder: the plugin
// is installed, is not Sisyphus, and its folder is a real directory.
//
// Plugins keep what they like there, content of every notebook included
// (an index, a cache of documents, their titles), and nothing tells which
// notebook a file speaks of: while a notebook is hidden from agents the
// storage is refused, before anything is looked up (export_resources
// refuses data/storage for the same reason).
func storageRoot(ctx context.Context, env *tools.Env, plugin, frontend string) (string, error) {
	if err := tools.RefuseWhileHidden(ctx, "a plugin's storage (plugins keep content of every notebook there)"); err != nil {
		return "", err
	}
	if strings.EqualFold(plugin, sisyphusPlugin) {
		e := failure.New(failure.PermissionDenied, "the storage of %s is Sisyphus's own configuration, which no tool shows; nothing was read", plugin)
		e.Action = "the person reads it with sisyphus config show"
		return "", e
	}
	if _, err := installedPlugin(ctx, env, plugin, frontend); err != nil {
		return "", err
	}
	entries, err := env.Kernel.ReadDir(ctx, petalRoot)
	if errors.Is(err, siyuan.ErrFileNotFound) {
		return "", failure.New(failure.NotFound, "plugin %s has no storage folder (%s holds none)", plugin, petalRoot)
	}
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		if e.Name != plugin {
			continue
		}
		if e.IsSymlink || !e.IsDir {
			return "", failure.New(failure.PermissionDenied, "the storage of plugin %s is not a plain folder (a symbolic link or a file); nothing was read", plugin)
		}
		return petalRoot + "/" + plugin, nil
	}
	return "", failure.New(failure.NotFound, "plugin %s has no storage folder yet", plugin)
}

// walkTo checks every segment of rel under root: each exists as listed,
// none is a symbolic link, each but the last is a folder. It returns the
// last entry (nil for the root itself).
func walkTo(ctx context.Context, env *tools.Env, root, rel string) (*siyuan.DirEntry, error) {
	if rel == "" {
		return nil, nil
	}
	parent := root
	segs := strings.Split(rel, "/")
	var last *siyuan.DirEntry
	for i, s := range segs {
		entries, err := env.Kernel.ReadDir(ctx, parent)
		if err != nil {
			return nil, err
		}
		var found *siyuan.DirEntry
		for j := range entries {
			if entries[j].Name == s {
				found = &entries[j]
				break
			}
		}
		switch {
		case found == nil:
			return nil, failure.New(failure.NotFound, "the plugin's storage has no %s", strings.Join(segs[:i+1], "/"))
		case found.IsSymlink:
			return nil, failure.New(failure.PermissionDenied, "%s is a symbolic link, which plugin storage reads never follow", strings.Join(segs[:i+1], "/"))
		case i < len(segs)-1 && !found.IsDir:
			return nil, failure.New(failure.NotFound, "%s is a file, not a folder", strings.Join(segs[:i+1], "/"))
		}
		parent += "/" + s
		last = found
	}
	return last, nil
}

type listStorageArgs struct {
	PluginName string `arg:"pluginName" help:"the plugin's exact package name" required:""`
	Path       string `arg:"path" help:"a folder inside the storage folder, relative (default: the storage folder)"`
	Recursive  bool   `arg:"recursive" help:"list subfolders too" default:"false"`
	Depth      *int   `arg:"maxDepth" help:"levels below path to list (default 2 when recursive, else 0)" min:"0" max:"4"` // maxStorageDepth
	frontendArg
	paging
	MaxDepth int // Depth, or its default
}

var listPluginStorage = tools.Read[listStorageArgs]{
	Name: "list_plugin_storage",
	Summary: "list one installed plugin's storage folder (/data/storage/petal/<plugin>/): names, folders, links, times; " +
		"at most 4 levels and 200 entries, symbolic links never followed",
	Example: map[string]any{"pluginName": "siyuan-plugin-example", "recursive": true},
	Scope:   tools.Scope[listStorageArgs]{None: true},
	Validate: func(l *listStorageArgs) error {
		if err := storagePlace(&l.PluginName, &l.Path); err != nil {
			return err
		}
		switch {
		case l.Depth != nil:
			l.MaxDepth = *l.Depth
		case l.Recursive:
			l.MaxDepth = 2
		}
		return nil
	},
	Run: func(ctx context.Context, env *tools.Env, a listStorageArgs) (any, error) {
		root, err := storageRoot(ctx, env, a.PluginName, a.Frontend)
		if err != nil {
			return nil, err
		}
		last, err := walkTo(ctx, env, root, a.Path)
		if err != nil {
			return nil, err
		}
		if last != nil && !last.IsDir {
			return nil, failure.New(failure.InvalidArguments, "%s is a file: read it with read_plugin_storage", a.Path)
		}
		type entry struct {
			Path      string `json:"path"`
			Name      string `json:"name"`
			IsDir     bool   `json:"isDir"`
			IsSymlink bool   `json:"isSymlink"`
			Updated   int64  `json:"updated"`
			Depth     int    `json:"depth"`
		}
		var entries []entry
		truncated := false
		var walk func(abs, rel string, depth int) error
		walk = func(abs, rel string, depth int) error {
			kids, err := env.Kernel.ReadDir(ctx, abs)
			if err != nil {
				return err
			}
			for _, k := range kids {
				if len(entries) >= maxStorageEntries {
					truncated = true
					return nil
				}
				p := k.Name
				if rel != "" {
					p = rel + "/" + k.Name
				}
				entries = append(entries, entry{p, k.Name, k.IsDir, k.IsSymlink, k.Updated, depth})
				if k.IsDir && !k.IsSymlink && depth < a.MaxDepth {
					if err := walk(abs+"/"+k.Name, p, depth+1); err != nil {
						return err
					}
					if truncated {
						return nil
					}
				}
			}
			return nil
		}
		start := root
		if a.Path != "" {
			start += "/" + a.Path
		}
		if err := walk(start, a.Path, 0); err != nil {
			return nil, err
		}
		shown, pg := page(entries, a.Page, a.PageSize)
		if shown == nil {
			shown = []entry{}
		}
		out := map[string]any{"readonly": true, "pluginName": a.PluginName, "storageRoot": root, "path": a.Path,
			"entries": shown, "truncatedBySafetyLimit": truncated,
			"safetyLimits": map[string]any{"maxDepth": maxStorageDepth, "maxEntries": maxStorageEntries}}
		for k, v := range pg {
			out[k] = v
		}
		return out, nil
	},
}

// File names and kinds a storage read refuses.
var (
	sensitiveFile = regexp.MustCompile(`(?i)(^|[._-])(\.?env|credentials?|secrets?|tokens?|cookies?|private[_-]?keys?|id_rsa|id_ed25519|keystore|passwords?)($|[._-])`)
	binaryExt     = regexp.MustCompile(`(?i)\.(db|sqlite|sqlite3|zip|gz|7z|rar|tar|pdf|png|jpe?g|gif|webp|ico|woff2?|ttf|otf|wasm|dylib|so|dll|exe|bin|pem|key|p12|pfx)$`)
	textExt       = regexp.MustCompile(`(?i)\.(json|json5|ya?ml|toml|ini|conf|config|txt|md|css|scss|less|js|mjs|cjs|ts|xml|csv)$`)
)

// CheckStorageFile refuses a file an agent must not read: credential-like
// names, binary kinds, and any extension not on the text list.
func CheckStorageFile(rel string) error {
	name := path.Base(rel)
	switch {
	case sensitiveFile.MatchString(name):
		return failure.New(failure.PermissionDenied, "%s looks like a credentials file, which plugin storage reads never show", rel)
	case binaryExt.MatchString(name):
		return failure.New(failure.PermissionDenied, "%s is a binary, database, archive or key file, which plugin storage reads never show", rel)
	case strings.Contains(name, ".") && !textExt.MatchString(name):
		return failure.New(failure.PermissionDenied, "%s is not on the text file list (json, yaml, toml, ini, conf, txt, md, css, js, ts, xml, csv)", rel)
	}
	return nil
}

type readStorageArgs struct {
	PluginName string `arg:"pluginName" help:"the plugin's exact package name" required:""`
	Path       string `arg:"path" help:"a text file inside the storage folder, relative" required:""`
	MaxChars   int    `arg:"maxChars" help:"characters shown after redaction" default:"12000" min:"1" max:"32000"` // defaultChars, maxOutputChars
	frontendArg
}

var readPluginStorage = tools.Read[readStorageArgs]{
	Name: "read_plugin_storage",
	Summary: "read one text file of an installed plugin's storage folder: at most 128 KiB, secret-looking keys and values redacted, " +
		"the answer cut at maxChars",
	Example: map[string]any{"pluginName": "siyuan-plugin-example", "path": "config.json"},
	Scope:   tools.Scope[readStorageArgs]{None: true},
	Validate: func(r *readStorageArgs) error {
		if err := storagePlace(&r.PluginName, &r.Path); err != nil {
			return err
		}
		if r.Path == "" {
			return failure.Invalid("path names no file: give one, such as \"config.json\" (list_plugin_storage lists them)")
		}
		return CheckStorageFile(r.Path)
	},
	Run: func(ctx context.Context, env *tools.Env, a readStorageArgs) (any, error) {
		root, err := storageRoot(ctx, env, a.PluginName, a.Frontend)
		if err != nil {
			return nil, err
		}
		last, err := walkTo(ctx, env, root, a.Path)
		if err != nil {
			return nil, err
		}
		if last.IsDir {
			return nil, failure.New(failure.InvalidArguments, "%s is a folder: list it with list_plugin_storage", a.Path)
		}
		body, _, err := env.Kernel.GetFile(ctx, root+"/"+a.Path)
		if err != nil {
			return nil, err
		}
		defer body.Close()
		data, err := io.ReadAll(io.LimitReader(body, maxFileBytes+1))
		if err != nil {
			return nil, err
		}
		if len(data) > maxFileBytes {
			return nil, failure.New(failure.ResultTooLarge, "%s is larger than 128 KiB, more than a plugin storage read shows", a.Path)
		}
		if !utf8.Valid(data) || strings.ContainsRune(string(data), 0) {
			return nil, failure.New(failure.PermissionDenied, "%s is not UTF-8 text, which is all a plugin storage read shows", a.Path)
		}
		content, format, redacted := RedactContent(string(data))
		shown, cut := truncateChars(content, a.MaxChars)
		return map[string]any{
			"readonly": true, "pluginName": a.PluginName, "storageRoot": root, "path": a.Path,
			"format": format, "byteLength": len(data), "redacted": redacted, "truncated": cut, "content": shown,
			"safetyLimits": map[string]any{"maxFileBytes": maxFileBytes, "maxOutputChars": maxOutputChars},
		}, nil
	},
}

// truncateChars cuts s to n characters.
func truncateChars(s string, n int) (string, bool) {
	r := []rune(s)
	if len(r) <= n {
		return s, false
	}
	return string(r[:n]), true
}

// storagePlace checks a plugin's name and a path inside its storage
// folder, trimming the one and cleaning the other.
func storagePlace(plugin, p *string) (err error) {
	if err = trimPluginName(plugin); err != nil {
		return err
	}
	*p, err = CheckStoragePath(*p)
	return err
}
