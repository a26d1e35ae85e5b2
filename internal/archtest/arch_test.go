package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/sisyphus-go/sisyphus"

// layers ranks every package of the module: a package may import only
// packages of a lower rank (never one of its own rank: no tool package
// imports another). A new package must be ranked here before it builds a
// passing test.
var layers = map[string]int{
	"internal/failure":         0,
	"internal/canon":           0,
	"internal/jsonobj":         0,
	"internal/siyuan/wire":     0,
	"internal/siyuan/mdexport": 0,
	"internal/siyuan/endpoint": 0,
	"internal/histcheck":       0,
	"internal/netguard":        0,
	"internal/testvars":        0,
	"internal/kernelopts":      0,
	"internal/apps":            0,
	"docs":                     0,

	"internal/siyuan":      1,
	"internal/strict":      1,
	"internal/admission":   1,
	"internal/mcp":         1,
	"internal/embedded":    1,
	"internal/transfer":    1,
	"internal/localfs":     1,
	"internal/mascotstore": 1,
	// markup takes SiYuan's Lute configuration from mdexport.
	"internal/tools/markup": 1,

	"internal/tools":            2,
	"internal/siyuan/contract":  2,
	"internal/tools/kernelview": 3,
	"internal/tools/tplguard":   3,
	"internal/tools/tplfile":    3,
	"internal/skills":           3,
	"internal/settings":         3,
	// toolcli reads the declarations of every tool as the command line's
	// flags, help and completion.
	"internal/toolcli": 3,

	"internal/tools/av":        4,
	"internal/tools/block":     4,
	"internal/tools/document":  4,
	"internal/tools/fs":        4,
	"internal/tools/file":      4,
	"internal/tools/notebook":  4,
	"internal/tools/search":    4,
	"internal/tools/system":    4,
	"internal/tools/feedback":  4,
	"internal/tools/tag":       4,
	"internal/tools/timeline":  4,
	"internal/tools/flashcard": 4,
	"internal/tools/extension": 4,
	"internal/tools/mascot":    4,

	"internal/tools/catalog":  5,
	"internal/tools/tooltest": 5,
	"internal/settingsui":     5,

	"internal/authority":              6,
	"internal/mcp/conformancefixture": 7,
	"cmd/sisyphus":                    7,

	"internal/archtest": 8,
}

// rules are the arrows of ARCHITECTURE.md section 5 that ranks alone do
// not say: what some packages may import at all.
var rules = []struct {
	pkg    string
	allow  func(imp string) bool
	reason string
}{
	{"internal/mcp", func(imp string) bool { return imp == "internal/jsonobj" },
		"mcp is the protocol layer and knows nothing of SiYuan, tools or strict writes (it shares only the JSON object splitter)"},
	{"internal/strict", func(imp string) bool { return imp == "internal/canon" || imp == "internal/failure" },
		"strict depends only on canonical hashing and the error vocabulary (never mcp, tools or the kernel client)"},
	{"internal/failure", func(string) bool { return false }, "the error vocabulary imports nothing of the project, so every layer can use it"},
	{"internal/embedded", func(imp string) bool {
		return imp == "internal/siyuan/wire" || imp == "internal/siyuan/endpoint" || imp == "internal/siyuan/mdexport"
	},
		"the embedded kernel shares only the wire types and the endpoint table with the client, and the Markdown export with the tools"},
	{"internal/netguard", func(string) bool { return false },
		"netguard bounds connections for any server (the authority, a front, the embedded kernel) and knows nothing of them"},
	{"internal/transfer", func(imp string) bool { return imp == "internal/failure" },
		"transfer knows only the error vocabulary: the authority, a front's kernel client and the tools reach it through its interfaces"},
	{"internal/localfs", func(imp string) bool { return imp == "internal/failure" },
		"localfs is the one rule of which local paths a front may use for an agent; it knows only the error vocabulary"},
	{"internal/apps", func(string) bool { return false },
		"apps only declares the MCP Apps (views, launchers, action tools, switches); the authority wires them"},
	{"internal/testvars", func(string) bool { return false },
		"testvars only reads the tests' switches, so that every package's tests may import it"},
}

// onlyFrom lists packages that only the packages named (and tests) may
// import. Test support packages are themselves imported only by tests.
var onlyFrom = map[string][]string{
	"internal/embedded":        {"cmd/sisyphus", "internal/tools/tooltest"},
	"internal/tools/tooltest":  {}, // test support: tests only
	"internal/histcheck":       {},
	"internal/siyuan/contract": {},
	// The tests' switches: the binary must never read them.
	"internal/testvars": {"internal/tools/tooltest", "internal/siyuan/contract"},
}

type pkgImports struct {
	code, tests map[string]bool // project imports, module prefix stripped
}

func scan(t *testing.T) map[string]*pkgImports {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found: %v", err)
	}
	pkgs := map[string]*pkgImports{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		p := pkgs[rel]
		if p == nil {
			p = &pkgImports{code: map[string]bool{}, tests: map[string]bool{}}
			pkgs[rel] = p
		}
		into := p.code
		if strings.HasSuffix(path, "_test.go") {
			into = p.tests
		}
		for _, is := range f.Imports {
			imp, _ := strconv.Unquote(is.Path.Value)
			if own, ok := strings.CutPrefix(imp, module+"/"); ok {
				into[own] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// TestImportArrows fails when an import breaks the architecture's arrows.
func TestImportArrows(t *testing.T) {
	pkgs := scan(t)
	names := make([]string, 0, len(pkgs))
	for n := range pkgs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, pkg := range names {
		rank, ok := layers[pkg]
		if !ok {
			t.Errorf("package %s has no rank in internal/archtest: rank it so its arrows can be checked", pkg)
			continue
		}
		for imp := range pkgs[pkg].code {
			ir, ok := layers[imp]
			switch {
			case !ok:
				t.Errorf("%s imports %s, which has no rank", pkg, imp)
			case ir >= rank:
				t.Errorf("%s (rank %d) imports %s (rank %d): arrows point down only; no tool package imports another", pkg, rank, imp, ir)
			}
			if from, limited := onlyFrom[imp]; limited && !slices.Contains(from, pkg) {
				t.Errorf("%s imports %s, which only %v and tests may import", pkg, imp, from)
			}
		}
		for _, r := range rules {
			if r.pkg != pkg {
				continue
			}
			for imp := range pkgs[pkg].code {
				if !r.allow(imp) {
					t.Errorf("%s imports %s: %s", pkg, imp, r.reason)
				}
			}
		}
		// Tests of one tool do not reach into another tool either.
		if rank == layers["internal/tools/block"] {
			for imp := range pkgs[pkg].tests {
				if imp != pkg && layers[imp] == rank {
					t.Errorf("tests of %s import the tool package %s", pkg, imp)
				}
			}
		}
	}
}

// TestArrowGuardCatchesViolations proves the guard is not vacuous: a
// tool importing another tool, and mcp importing the kernel client, fail.
func TestArrowGuardCatchesViolations(t *testing.T) {
	for _, bad := range [][2]string{
		{"internal/tools/block", "internal/tools/document"},
		{"internal/tools", "internal/tools/catalog"},
		{"internal/strict", "internal/mcp"},
	} {
		if layers[bad[1]] < layers[bad[0]] {
			t.Errorf("%s may import %s: the ranks do not forbid it", bad[0], bad[1])
		}
	}
	ok := true
	for _, r := range rules {
		if r.pkg == "internal/mcp" && r.allow("internal/siyuan") {
			ok = false
		}
	}
	if !ok {
		t.Error("mcp may import the kernel client")
	}
}

// TestCodesSpelledOnce fails when an agent-visible error code is spelled as
// a string outside the one vocabulary (package failure).
func TestCodesSpelledOnce(t *testing.T) {
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	codes := map[string]bool{}
	data, err := os.ReadFile(filepath.Join(root, "internal", "failure", "codes.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if _, after, ok := strings.Cut(line, "Code = \""); ok {
			codes[strings.TrimSuffix(strings.TrimSpace(after), "\"")] = true
		}
	}
	if len(codes) < 20 {
		t.Fatalf("read only %d codes from package failure", len(codes))
	}
	fset := token.NewFileSet()
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() && path != root && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") ||
			strings.HasPrefix(rel, "internal/failure/") || strings.HasPrefix(rel, "internal/mcp/") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Error(err)
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				// admission's task states share the word "cancelled".
				if s, err := strconv.Unquote(lit.Value); err == nil && codes[s] && !(s == "cancelled" && strings.HasPrefix(rel, "internal/admission/")) {
					t.Errorf("%s: the code %q is spelled here; use its constant in package failure", fset.Position(lit.Pos()), s)
				}
			}
			return true
		})
		return nil
	})
}
