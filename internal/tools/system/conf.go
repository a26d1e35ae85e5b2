package system

import (
	"context"
	"regexp"
	"strconv"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// conf: SiYuan's configuration, masked, read progressively as upstream
// does: a summary of the top level first, then one key path at a time, each
// bounded in depth and width. The root is getConf's data ({conf, start,
// isPublish}), so key paths read "conf.appearance.mode" as upstream's do.

type confArgs struct {
	Mode     string `arg:"mode" help:"summary: a navigable overview; get: one key path" enum:"summary,get" default:"summary"`
	KeyPath  string `arg:"keyPath" help:"dot/bracket path of one field or subtree, e.g. \"conf.appearance.mode\" or \"conf.langs[0]\" (mode get)"`
	MaxDepth int    `arg:"maxDepth" help:"levels of objects and arrays to open" default:"1" min:"0" max:"5"`
	MaxItems int    `arg:"maxItems" help:"keys or items shown per level" default:"12" min:"1" max:"100"`
}

var confAction = tools.Read[confArgs]{
	Name:         "conf",
	Summary:      "SiYuan's configuration with every secret masked, read progressively: mode summary first, then mode get with a keyPath (off by default)",
	Example:      map[string]any{"mode": "get", "keyPath": "conf.appearance", "maxDepth": 1},
	OffByDefault: true,
	Scope:        tools.Scope[confArgs]{None: true},
	Validate: func(c *confArgs) error {
		if c.Mode == "get" {
			_, err := parseKeyPath(c.KeyPath)
			return err
		}
		return nil
	},
	Run: func(ctx context.Context, env *tools.Env, a confArgs) (any, error) {
		root, err := maskedConf(ctx, env)
		if err != nil {
			return nil, err
		}
		return confAnswer(root, a)
	},
}

// maskedConf reads getConf and masks it.
func maskedConf(ctx context.Context, env *tools.Env) (map[string]any, error) {
	c, err := env.Kernel.GetConf(ctx)
	if err != nil {
		return nil, err
	}
	conf, err := decodeJSON(c.Conf)
	if err != nil {
		return nil, failure.New(failure.KernelError, "SiYuan answered a configuration that is not JSON")
	}
	masked, _ := RedactValue(conf)
	if masked, err = tools.VeilConf(ctx, env, masked); err != nil {
		return nil, err
	}
	return map[string]any{"conf": masked, "start": c.Start, "isPublish": c.IsPublish}, nil
}

func confAnswer(root map[string]any, a confArgs) (map[string]any, error) {
	if a.Mode == "get" {
		segs, err := parseKeyPath(a.KeyPath)
		if err != nil {
			return nil, err
		}
		v, err := valueAt(root, segs)
		if err != nil {
			return nil, err
		}
		return map[string]any{
			"mode": "get", "keyPath": a.KeyPath,
			"value": summarize(v, 0, a.MaxDepth, a.MaxItems),
			"hints": []string{
				"Increase maxDepth or maxItems to see more of the subtree.",
				`Call {"action":"conf","mode":"summary"} to see the sibling keys first.`,
			},
		}, nil
	}
	keys := sortedKeys(root)
	shown := keys[:min(len(keys), a.MaxItems)]
	return map[string]any{
		"mode": "summary", "totalTopLevelKeys": len(keys), "topLevelKeys": shown,
		"truncatedTopLevelKeys": len(keys) - len(shown),
		"summary":               summarize(root, 0, a.MaxDepth, a.MaxItems),
		"hints": []string{
			`Call {"action":"conf","mode":"get","keyPath":"<path>"} to read one field or subtree.`,
			`keyPath takes dot/bracket syntax such as "conf.appearance.mode" or "conf.langs[0]".`,
			"Secrets (tokens, keys, passwords, sync credentials, local paths) are always shown as " + Redacted + ".",
		},
	}, nil
}

var keySegment = regexp.MustCompile(`[^.\[\]]+`)

// pathSeg is one key path step: an object key, or an array index.
type pathSeg struct {
	key   string
	index int // -1: a key
}

func parseKeyPath(p string) ([]pathSeg, error) {
	if len(p) > 512 {
		return nil, failure.Invalid("keyPath is longer than 512 characters")
	}
	parts := keySegment.FindAllString(p, -1)
	if len(parts) == 0 {
		return nil, failure.Invalid(`mode "get" needs a keyPath such as "conf.appearance.mode"`)
	}
	segs := make([]pathSeg, len(parts))
	for i, s := range parts {
		segs[i] = pathSeg{key: s, index: -1}
		if n, err := strconv.Atoi(s); err == nil && n >= 0 && strconv.Itoa(n) == s {
			segs[i].index = n
		}
	}
	return segs, nil
}

func valueAt(root any, segs []pathSeg) (any, error) {
	cur := root
	for i, s := range segs {
		switch x := cur.(type) {
		case []any:
			if s.index < 0 || s.index >= len(x) {
				return nil, notFoundAt(segs[:i+1])
			}
			cur = x[s.index]
		case map[string]any:
			v, ok := x[s.key]
			if !ok {
				return nil, notFoundAt(segs[:i+1])
			}
			cur = v
		default:
			return nil, notFoundAt(segs[:i+1])
		}
	}
	return cur, nil
}

func notFoundAt(segs []pathSeg) *failure.Error {
	p := ""
	for i, s := range segs {
		switch {
		case s.index >= 0:
			p += "[" + s.key + "]"
		case i > 0:
			p += "." + s.key
		default:
			p += s.key
		}
	}
	e := failure.New(failure.NotFound, "the configuration has no %s", p)
	e.Action = `call {"action":"conf","mode":"summary"} or a shorter keyPath to see which keys exist`
	return e
}

// summarize is upstream's summary node: primitives as they are, objects
// and arrays opened to maxDepth with at most maxItems entries per level.
func summarize(v any, depth, maxDepth, maxItems int) map[string]any {
	switch x := v.(type) {
	case nil:
		return map[string]any{"type": "null", "value": nil, "truncated": false}
	case []any:
		n := map[string]any{"type": "array", "length": len(x), "omittedItems": max(0, len(x)-maxItems)}
		head := x[:min(len(x), maxItems)]
		if depth >= maxDepth {
			types := make([]string, len(head))
			for i, item := range head {
				types[i] = typeName(item)
			}
			n["sampleTypes"], n["truncated"] = types, len(x) > 0
			return n
		}
		items := make([]any, len(head))
		for i, item := range head {
			items[i] = summarize(item, depth+1, maxDepth, maxItems)
		}
		n["items"], n["truncated"] = items, len(x) > maxItems
		return n
	case map[string]any:
		keys := sortedKeys(x)
		head := keys[:min(len(keys), maxItems)]
		n := map[string]any{"type": "object", "keyCount": len(keys), "omittedKeys": len(keys) - len(head)}
		if depth >= maxDepth {
			n["keysPreview"], n["truncated"] = head, len(keys) > 0
			return n
		}
		entries := make(map[string]any, len(head))
		for _, k := range head {
			entries[k] = summarize(x[k], depth+1, maxDepth, maxItems)
		}
		n["entries"], n["truncated"] = entries, len(keys) > maxItems
		return n
	}
	return map[string]any{"type": "primitive", "value": v, "truncated": false}
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case string:
		return "string"
	case bool:
		return "boolean"
	}
	return "number"
}
