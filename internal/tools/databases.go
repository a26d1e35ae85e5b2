package tools

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// A database (attribute view) belongs to no notebook of its own: it is in
// the notebooks whose documents show it with a database block. To a call
// it is in the notebooks it may see among those; one shown only where the
// call may not look is, to the call, a database that does not exist.

// VisibleBlocks are the blocks of ids the call may see, in their order
// (every one of them, and nothing looked up, without a hidden notebook).
func VisibleBlocks(ctx context.Context, env *Env, ids []string) ([]string, error) {
	seen, err := Seen(ctx, env, ids)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(slices.Clone(ids), func(b string) bool { return !seen[b] }), nil
}

// DatabaseBlocks are the database blocks showing the database avID that
// the call may see, in SiYuan's order.
func DatabaseBlocks(ctx context.Context, env *Env, avID string) ([]string, error) {
	blocks, err := env.Kernel.GetMirrorDatabaseBlocks(ctx, avID)
	if err != nil {
		return nil, fmt.Errorf("find the blocks showing database %s: %w", avID, err)
	}
	return VisibleBlocks(ctx, env, blocks)
}

// ShownDatabases answers whether the call may see a database: whether a
// database block it may see shows it. Each database is looked up once per
// ShownDatabases (one call's worth: what the call may see does not change
// during it). Without a hidden notebook every database is shown and
// nothing is looked up. It is not safe for concurrent use.
type ShownDatabases struct {
	env   *Env
	known map[string]bool
}

// NewShownDatabases starts the answers of one call.
func NewShownDatabases(env *Env) *ShownDatabases {
	return &ShownDatabases{env: env, known: map[string]bool{}}
}

// Shown reports whether the call may see the database avID.
func (s *ShownDatabases) Shown(ctx context.Context, avID string) (bool, error) {
	if !Hiding(ctx) {
		return true, nil
	}
	if v, ok := s.known[avID]; ok {
		return v, nil
	}
	blocks, err := DatabaseBlocks(ctx, s.env, avID)
	if err != nil {
		return false, err
	}
	s.known[avID] = len(blocks) > 0
	return len(blocks) > 0, nil
}

// A block that is a row of databases says so in two attributes: custom-avs,
// the databases' ids (comma-separated), which SiYuan stores in the block's
// IAL, and av-names, the databases' names with their ids as HTML, which
// SiYuan adds to what it renders (and stores too, after a database is
// renamed). The databases the call may not see are taken out of the first;
// the second, which cannot be taken apart as surely, is dropped whenever
// the first lost an id.
const (
	attrAvs   = "custom-avs"
	attrNames = "av-names"
)

var (
	// attrGroup is one set of attributes in text: an opening HTML tag
	// (SiYuan escapes < and > inside attribute values) or a kramdown IAL.
	attrGroup = regexp.MustCompile(`<[a-zA-Z][^<>]*>|\{:[^{}\n]*\}`)
	avsAttr   = regexp.MustCompile(`(\s+)custom-avs="([^"]*)"`)
	namesAttr = regexp.MustCompile(`\s+av-names="[^"]*"`)
)

// shownFunc reports whether the call may see a database.
type shownFunc = func(avID string) (bool, error)

func (s *ShownDatabases) shownIn(ctx context.Context) shownFunc {
	return func(id string) (bool, error) { return s.Shown(ctx, id) }
}

// VeilAttrs takes out of a block's attributes (getBlockAttrs, a document
// info's IAL) the databases the call may not see: custom-avs keeps the
// others (dropped when none is left) and av-names is dropped when one was
// taken out. It changes attrs in place; without a hidden notebook it does
// nothing.
func (s *ShownDatabases) VeilAttrs(ctx context.Context, attrs map[string]string) error {
	list, ok := attrs[attrAvs]
	if !ok || !Hiding(ctx) {
		return nil
	}
	kept, cut, err := shownList(list, s.shownIn(ctx))
	if err != nil || !cut {
		return err
	}
	if kept == "" {
		delete(attrs, attrAvs)
	} else {
		attrs[attrAvs] = kept
	}
	delete(attrs, attrNames)
	return nil
}

// VeilMarkup is text holding attributes (a block's kramdown, its DOM)
// with each opening tag and each IAL veiled as VeilAvs does; without a
// hidden notebook it is text unchanged.
func (s *ShownDatabases) VeilMarkup(ctx context.Context, text string) (string, error) {
	if !Hiding(ctx) || !strings.Contains(text, attrAvs) {
		return text, nil
	}
	shown := s.shownIn(ctx)
	var failed error
	out := attrGroup.ReplaceAllStringFunc(text, func(g string) string {
		veiled, err := VeilAvs(g, shown)
		if err != nil && failed == nil {
			failed = err
		}
		return veiled
	})
	if failed != nil {
		return "", failed
	}
	return out, nil
}

// VeilAvs is one opening tag or IAL with the databases shown refuses
// taken out of its custom-avs (the attribute dropped when none is left;
// every one of them, should the attribute be written twice), and its
// av-names dropped when one was.
func VeilAvs(g string, shown shownFunc) (string, error) {
	ms := avsAttr.FindAllStringSubmatchIndex(g, -1)
	if ms == nil {
		return g, nil
	}
	var out strings.Builder
	last, anyCut := 0, false
	for _, m := range ms {
		kept, cut, err := shownList(g[m[4]:m[5]], shown)
		if err != nil {
			return g, err
		}
		if !cut {
			continue
		}
		anyCut = true
		out.WriteString(g[last:m[0]])
		if kept != "" {
			out.WriteString(g[m[2]:m[3]] + attrAvs + `="` + kept + `"`)
		}
		last = m[1]
	}
	if !anyCut {
		return g, nil
	}
	out.WriteString(g[last:])
	return namesAttr.ReplaceAllLiteralString(out.String(), ""), nil
}

// shownList is a custom-avs value without the databases shown refuses,
// and whether any was taken out.
func shownList(list string, shown shownFunc) (string, bool, error) {
	var kept []string
	cut := false
	for _, id := range strings.Split(list, ",") {
		if id = strings.TrimSpace(id); id == "" {
			continue
		}
		ok, err := shown(id)
		if err != nil {
			return "", false, err
		}
		if ok {
			kept = append(kept, id)
		} else {
			cut = true
		}
	}
	if !cut {
		return list, false, nil
	}
	return strings.Join(kept, ","), true, nil
}
