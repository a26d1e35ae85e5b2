package endpoint

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"
)

// TestEveryPathHasOneNameAndAClass: each constant of endpoint.go is one
// path, named once and classed; the table classes no path without a name.
func TestEveryPathHasOneNameAndAClass(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "endpoint.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]string{} // path -> name
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			if len(vs.Values) != 1 {
				continue // the Class values after Read
			}
			lit, ok := vs.Values[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				continue // Read = iota + 1
			}
			p, err := strconv.Unquote(lit.Value)
			if err != nil {
				t.Fatal(err)
			}
			if prev, dup := named[p]; dup {
				t.Errorf("%s is named both %s and %s", p, prev, vs.Names[0].Name)
			}
			named[p] = vs.Names[0].Name
			if _, ok := ClassOf(p); !ok {
				t.Errorf("%s (%s) has no class", vs.Names[0].Name, p)
			}
		}
	}
	for _, p := range Paths() {
		if _, ok := named[p]; !ok {
			t.Errorf("the table classes %s, which has no name", p)
		}
	}
}
