package markup

import (
	"fmt"
	"sort"
	"strings"

	"github.com/88250/lute"
	"github.com/88250/lute/ast"
	"github.com/88250/lute/editor"
	"github.com/88250/lute/html"
	"github.com/88250/lute/parse"
)

// TopLevelBlocks counts the top-level blocks a markdown fragment parses
// into, with the engine SiYuan uses.
func TopLevelBlocks(md string) (int, error) {
	types, err := BlockTypes(md)
	return len(types), err
}

// BlockTypes are the types (NodeParagraph, NodeHeading, ...) of the
// top-level blocks a markdown fragment parses into, with the engine SiYuan
// uses.
func BlockTypes(md string) (types []string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed markdown: %v", r)
		}
	}()
	l := lute.New()
	l.SetKramdownIAL(true)
	l.SetSuperBlock(true)
	l.SetCallout(true)
	// Autolinks are inline and never change the block structure; Lute's
	// autolink pass is quadratic in the length of a paragraph.
	l.SetGFMAutoLink(false)
	tree := parse.Parse("", []byte(md), l.ParseOptions)
	for c := tree.Root.FirstChild; c != nil; c = c.Next {
		if c.Type != ast.NodeKramdownBlockIAL {
			types = append(types, c.Type.String())
		}
	}
	return types, nil
}

// IALLine renders attributes as a kramdown block IAL, sorted for stability.
func IALLine(attrs map[string]string) string {
	keys := make([]string, 0, len(attrs))
	for k := range attrs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("{:")
	for _, k := range keys {
		// As SiYuan stores IAL values: HTML-escaped, newlines as a marker.
		v := strings.ReplaceAll(html.EscapeAttrVal(attrs[k]), "\n", editor.IALValEscNewLine)
		fmt.Fprintf(&b, ` %s="%s"`, k, v)
	}
	b.WriteString("}")
	return b.String()
}

// SplitIAL separates a leaf block's kramdown into its body and its block
// IAL line.
func SplitIAL(kd string) (body, ial string) {
	kd = strings.TrimRight(kd, "\n")
	i := strings.LastIndex(kd, "\n")
	if i >= 0 && strings.HasPrefix(kd[i+1:], "{:") && strings.HasSuffix(kd[i+1:], "}") {
		return kd[:i], kd[i+1:]
	}
	return kd, ""
}
