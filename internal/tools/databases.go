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

// VeilKramdown is a block's kramdown with each IAL (and anything else
// holding attributes) veiled as VeilAvs does; without a hidden notebook
// it is kd unchanged.
func (s *ShownDatabases) VeilKramdown(ctx context.Context, kd string) (string, error) {
	if !Hiding(ctx) || !strings.Contains(kd, attrAvs) {
		return kd, nil
	}
	shown := s.shownIn(ctx)
	var failed error
	out := attrGroup.ReplaceAllStringFunc(kd, func(g string) string {
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

// VeilDOM is a DOM SiYuan rendered (getDoc, getBlockDOM) veiled as
// VeilAvDOM does; without a hidden notebook it is dom unchanged.
func (s *ShownDatabases) VeilDOM(ctx context.Context, dom string) (string, error) {
	if !Hiding(ctx) || !strings.Contains(dom, attrAvs) && !strings.Contains(dom, avBarClass) {
		return dom, nil
	}
	return VeilAvDOM(dom, s.shownIn(ctx))
}

// avBarClass marks the bar SiYuan draws in a block's attribute area for
// the databases it is a row of: a database icon, then a span per database
// (data-av-id, its name) separated by &nbsp;. getDoc fills it; getBlockDOM
// draws the icon alone.
const avBarClass = "protyle-attr--av"

var (
	divTag    = regexp.MustCompile(`<(/?)div\b[^>]*>`)
	blockDiv  = regexp.MustCompile(`\bdata-node-id="`)
	avBarOpen = regexp.MustCompile(`^<div\b[^>]*\bclass="[^"]*\bprotyle-attr--av\b[^"]*"[^>]*>$`)
	barIcon   = regexp.MustCompile(`^<svg\b[^<>]*>(?:<use\b[^<>]*>(?:</use>)?)?</svg>`)
	barSpan   = regexp.MustCompile(`<span\b[^>]*\bdata-av-id="([^"]*)"[^>]*>[^<]*</span>`)
)

// VeilAvDOM is a DOM with each block's opening tag veiled as VeilAvs
// does, and each block's database bar keeping the spans of the databases
// shown allows; the bar goes whole when none is left, or when the block
// was a row of databases none of which shown allows (the icon alone would
// say it is a row of something). Of a bar, only the icon and the spans
// it can read are kept.
func VeilAvDOM(dom string, shown shownFunc) (string, error) {
	type open struct{ block, cleared bool }
	var (
		out   strings.Builder
		stack []open
		last  int
	)
	for _, loc := range divTag.FindAllStringSubmatchIndex(dom, -1) {
		if loc[0] < last {
			continue // inside a bar already written
		}
		tag := dom[loc[0]:loc[1]]
		if loc[2] != loc[3] { // </div>
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			continue
		}
		switch {
		case avBarOpen.MatchString(tag):
			end := strings.Index(dom[loc[1]:], "</div>")
			if end < 0 {
				out.WriteString(dom[last:loc[0]])
				last = len(dom) // an unclosed bar: nothing after it is told apart from it
				continue
			}
			end += loc[1]
			cleared := false
			for i := len(stack) - 1; i >= 0; i-- {
				if stack[i].block {
					cleared = stack[i].cleared
					break
				}
			}
			tag, err := VeilAvs(tag, shown) // a bar SiYuan draws has none: still, whatever it holds
			if err != nil {
				return "", err
			}
			bar, err := veilBar(tag, dom[loc[1]:end], cleared, shown)
			if err != nil {
				return "", err
			}
			out.WriteString(dom[last:loc[0]])
			out.WriteString(bar)
			last = end + len("</div>")
		case blockDiv.MatchString(tag):
			veiled, err := VeilAvs(tag, shown)
			if err != nil {
				return "", err
			}
			cleared := false
			if veiled != tag {
				m := avsAttr.FindStringSubmatch(veiled)
				cleared = m == nil || strings.Trim(m[2], ", ") == ""
			}
			out.WriteString(dom[last:loc[0]])
			out.WriteString(veiled)
			last = loc[1]
			stack = append(stack, open{block: true, cleared: cleared})
		default:
			stack = append(stack, open{})
		}
	}
	out.WriteString(dom[last:])
	return out.String(), nil
}

// veilBar is one database bar (its opening tag and its content) as the
// call may see it: "" when its block lost every database, else the icon
// and the spans of the databases shown allows ("" when none is left).
func veilBar(tag, content string, cleared bool, shown shownFunc) (string, error) {
	if cleared {
		return "", nil
	}
	icon := barIcon.FindString(content)
	var kept []string
	spans := barSpan.FindAllStringSubmatch(content, -1)
	for _, m := range spans {
		ok, err := shown(m[1])
		if err != nil {
			return "", err
		}
		if ok {
			kept = append(kept, m[0])
		}
	}
	if len(spans) > 0 && len(kept) == 0 {
		return "", nil
	}
	return tag + icon + strings.Join(kept, "&nbsp;") + "</div>", nil
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
