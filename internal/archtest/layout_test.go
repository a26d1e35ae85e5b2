package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// toolPackages sorts the packages under internal/tools into tools and
// helpers. A package is a directory below internal/tools (testdata aside)
// with Go files that are not tests; it is a tool when one of them declares
// func Tool() (what package catalog lists), and a helper otherwise.
func toolPackages(t *testing.T, root string) (toolPkgs, helpers []string) {
	t.Helper()
	base := filepath.Join(root, "internal", "tools")
	fset := token.NewFileSet()
	kinds := map[string]bool{} // package -> is a tool
	err := filepath.WalkDir(base, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		dir := filepath.Dir(path)
		if dir == base || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(base, dir)
		rel = filepath.ToSlash(rel)
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		kinds[rel] = kinds[rel] || declaresTool(f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for pkg, isTool := range kinds {
		if isTool {
			toolPkgs = append(toolPkgs, pkg)
		} else {
			helpers = append(helpers, pkg)
		}
	}
	slices.Sort(toolPkgs)
	slices.Sort(helpers)
	return toolPkgs, helpers
}

func declaresTool(f *ast.File) bool {
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == "Tool" {
			return true
		}
	}
	return false
}

// listAfter returns the comma-separated names between marker+"(" and the
// next ")" of text, sorted; ok is false when the marker is absent.
func listAfter(text, marker string) (names []string, ok bool) {
	_, rest, ok := strings.Cut(text, marker+"(")
	if !ok {
		return nil, false
	}
	list, _, ok := strings.Cut(rest, ")")
	if !ok {
		return nil, false
	}
	for _, n := range strings.Split(list, ",") {
		names = append(names, strings.TrimSpace(n))
	}
	slices.Sort(names)
	return names, true
}

// commentText is a Go comment block as prose: the // markers gone and the
// lines joined, so that a list may wrap.
func commentText(src string) string {
	var b strings.Builder
	for _, line := range strings.Split(src, "\n") {
		if c, ok := strings.CutPrefix(strings.TrimSpace(line), "//"); ok {
			b.WriteString(strings.TrimSpace(c))
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// layoutEntries returns the internal/tools/<pkg>/ entries of the README's
// layout block.
func layoutEntries(readme string) []string {
	_, section, _ := strings.Cut(readme, "\n## Layout\n")
	_, block, _ := strings.Cut(section, "```\n")
	block, _, _ = strings.Cut(block, "```")
	var out []string
	for _, line := range strings.Split(block, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if pkg, ok := strings.CutPrefix(f[0], "internal/tools/"); ok && pkg != "" {
			out = append(out, strings.TrimSuffix(pkg, "/"))
		}
	}
	slices.Sort(out)
	return out
}

const (
	docToolsMarker   = "Each tool is a package of its own under this one "
	docHelpersMarker = "The other packages under this one are helper packages "
)

// TestToolPackagesListed fails when the README's layout or the doc of
// package tools leaves out a package under internal/tools, names one that
// is gone, or calls a helper a tool (or a tool a helper).
func TestToolPackagesListed(t *testing.T) {
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	toolPkgs, helpers := toolPackages(t, root)
	if len(toolPkgs) < 10 || !slices.Contains(helpers, "catalog") {
		t.Fatalf("found tools %v and helpers %v: the scan is broken", toolPkgs, helpers)
	}
	doc, err := os.ReadFile(filepath.Join(root, "internal", "tools", "doc.go"))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range listProblems(commentText(string(doc)), string(readme), toolPkgs, helpers) {
		t.Error(p)
	}
}

// listProblems compares the two lists of doc and the README's layout with
// the packages found.
func listProblems(doc, readme string, toolPkgs, helpers []string) []string {
	var problems []string
	for _, l := range []struct {
		marker, what string
		want         []string
	}{{docToolsMarker, "tool", toolPkgs}, {docHelpersMarker, "helper", helpers}} {
		got, ok := listAfter(doc, l.marker)
		if !ok {
			problems = append(problems, "internal/tools/doc.go has no list after \""+l.marker+"(\"")
			continue
		}
		if !slices.Equal(got, l.want) {
			problems = append(problems, "internal/tools/doc.go lists the "+l.what+" packages "+strings.Join(got, ", ")+"; they are "+strings.Join(l.want, ", "))
		}
	}
	all := slices.Sorted(slices.Values(append(slices.Clone(toolPkgs), helpers...)))
	if got := layoutEntries(readme); !slices.Equal(got, all) {
		problems = append(problems, "the README's layout lists internal/tools/{"+strings.Join(got, ",")+"}; the packages are {"+strings.Join(all, ",")+"}")
	}
	return problems
}

// TestToolListGuardCatchesOmissions proves the guard is not vacuous: a
// tool left out of either list, or named a helper, is reported.
func TestToolListGuardCatchesOmissions(t *testing.T) {
	toolPkgs, helpers := []string{"av", "tag"}, []string{"catalog"}
	readme := "x\n## Layout\n\n```\ninternal/tools/            framework\ninternal/tools/av/   a\ninternal/tools/tag/\ninternal/tools/catalog/ c\n```\n"
	doc := docToolsMarker + "(av, tag) and. " + docHelpersMarker + "(catalog)."
	if p := listProblems(doc, readme, toolPkgs, helpers); len(p) != 0 {
		t.Fatalf("complete lists reported: %v", p)
	}
	for name, c := range map[string][2]string{
		"tool missing from doc":    {strings.Replace(doc, "av, tag", "av", 1), readme},
		"tool listed as helper":    {strings.Replace(strings.Replace(doc, "av, tag", "av", 1), "(catalog)", "(catalog, tag)", 1), readme},
		"no helper list in doc":    {docToolsMarker + "(av, tag)", readme},
		"tool missing from README": {doc, strings.Replace(readme, "internal/tools/tag/\n", "", 1)},
		"stale README entry":       {doc, strings.Replace(readme, "```\n", "```\ninternal/tools/gone/\n", 1)},
	} {
		if p := listProblems(c[0], c[1], toolPkgs, helpers); len(p) == 0 {
			t.Errorf("%s: not reported", name)
		}
	}
}
