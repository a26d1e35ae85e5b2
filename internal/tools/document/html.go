package document

import (
	"context"
	"regexp"
	"strconv"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/kernelview"
	"github.com/sisyphus-go/sisyphus/internal/tools/markup"
)

// getDocArgs are get_doc's: a markdown window, or html with a size.
type getDocArgs struct {
	ID   string `arg:"id" help:"the document" id:"" required:""`
	Mode string `arg:"mode" help:"\"markdown\" (block windows, the default) or \"html\" (the editor's DOM)" enum:"markdown,html" default:"markdown"`
	Size *int   `arg:"size" help:"html: at most about this many blocks (SiYuan's default: all)" min:"1"`
	kernelview.WindowArgs
}

func (g *getDocArgs) check() error {
	// The window arguments have defaults and are ignored in mode html.
	if g.Mode != "html" && g.Size != nil {
		return failure.Invalid("size is only for mode html; mode markdown takes blockStart, blockLimit and tokenBudget")
	}
	return nil
}

// readHTML is get_doc mode html: SiYuan's filetree/getDoc of the document.
func readHTML(ctx context.Context, env *tools.Env, a getDocArgs) (any, error) {
	if _, err := locateDocument(ctx, env, a.ID, "%s is a block inside a document, not a document; read it with block.dom"); err != nil {
		return nil, err
	}
	size := 0 // SiYuan's default: every block
	if a.Size != nil {
		size = *a.Size
	}
	d, err := env.Kernel.GetDoc(ctx, a.ID, size)
	if err != nil {
		return nil, err
	}
	html := d.Content
	if tools.Hiding(ctx) {
		if html, err = veilHTML(ctx, env, html); err != nil {
			return nil, err
		}
	}
	return map[string]any{"id": a.ID, "mode": "html", "notebook": d.Box, "path": d.Path, "html": html, "blockCount": d.BlockCount}, nil
}

var (
	blockTag = regexp.MustCompile(`<[a-z]+\b[^>]*\bdata-node-id="([0-9]{14}-[0-9a-z]{7})"[^>]*>`)
	divTag   = regexp.MustCompile(`<(/?)div\b[^>]*>`)
	nodeID   = regexp.MustCompile(`\bdata-node-id="([0-9]{14}-[0-9a-z]{7})"`)
)

// veilHTML is a document's DOM as a call may see it while a notebook is
// hidden: SiYuan's getDoc marks each block with the number of references
// to it (a refcount attribute and the count its attribute bar shows) and
// the databases it is a row of (custom-avs, their names in av-names and
// in a bar of its attribute area), both over every notebook. Each count
// counts the references the call may see (dropped at none); the databases
// shown only where the call may not look are taken out.
func veilHTML(ctx context.Context, env *tools.Env, html string) (string, error) {
	var ids []string
	for _, m := range blockTag.FindAllStringSubmatch(html, -1) {
		ids = append(ids, m[1])
	}
	counts, err := tools.VisibleRefCounts(ctx, env, ids)
	if err != nil {
		return "", err
	}
	// The databases first: the bar SiYuan draws for them holds their
	// names and ids (tools.ShownDatabases.VeilDOM).
	dbs := tools.NewShownDatabases(env)
	if html, err = dbs.VeilDOM(ctx, html); err != nil {
		return "", err
	}
	return recount(html, counts, func(av string) (bool, error) { return dbs.Shown(ctx, av) })
}

// recount rewrites a getDoc DOM with counts (see veilHTML). Blocks are
// divs: the count a block's attribute bar shows is in a div of the
// innermost block open around it.
func recount(html string, counts map[string]int, visibleDB func(string) (bool, error)) (string, error) {
	var out strings.Builder
	var stack []string
	last := 0
	for _, loc := range divTag.FindAllStringSubmatchIndex(html, -1) {
		if loc[0] < last {
			continue // the </div> of a count written with it: it closes nothing on the stack
		}
		tag := html[loc[0]:loc[1]]
		if loc[2] != loc[3] { // </div>
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			continue
		}
		id := ""
		if m := nodeID.FindStringSubmatch(tag); m != nil {
			id = m[1]
			veiled, err := veilTag(tag, counts[id], visibleDB)
			if err != nil {
				return "", err
			}
			out.WriteString(html[last:loc[0]])
			out.WriteString(veiled)
			last = loc[1]
		} else if size := markup.RefCountDivLen(html[loc[0]:]); size > 0 {
			owner := ""
			for i := len(stack) - 1; i >= 0 && owner == ""; i-- {
				owner = stack[i]
			}
			out.WriteString(html[last:loc[0]])
			end := loc[0] + size
			if n := counts[owner]; n > 0 {
				out.WriteString(tag + strconv.Itoa(n) + "</div>")
			}
			last = end
			continue // its </div> is consumed with it
		}
		stack = append(stack, id)
	}
	out.WriteString(html[last:])
	return out.String(), nil
}

// veilTag is a block's opening tag with its refcount attribute set to n
// (dropped at 0), and without the databases the call may not see in its
// custom-avs (and then without its av-names).
func veilTag(tag string, n int, visibleDB func(string) (bool, error)) (string, error) {
	tag = markup.SetRefCount(tag, n)
	return tools.VeilAvs(tag, visibleDB)
}
