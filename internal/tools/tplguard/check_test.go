package tplguard

import (
	"context"
	"strings"
	"testing"
	"text/template"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

func hiding() context.Context {
	return tools.WithPolicy(context.Background(), &tools.Policy{Default: tools.LevelRead,
		Notebooks: map[string]tools.Level{"20260101000000-hidden0": tools.LevelNone}})
}

func open() context.Context {
	return tools.WithPolicy(context.Background(), &tools.Policy{Default: tools.LevelRead})
}

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		name   string
		src    string // sprig delimiters; checked with the file's too
		hidden bool
		want   failure.Code // "" allowed
	}{
		{"plain text", "hello", true, ""},
		{"pure functions", `{{ now | date "2006-01-02" }} {{ add 1 2 }} {{ "a" | upper }} {{ Weekday now }} {{ markdown2text "**b**" }}`, true, ""},
		{"builtins", `{{ if and true (eq 1 1) }}{{ printf "%d" (len "ab") }}{{ end }}`, true, ""},
		{"fields and variables", `{{ .title }} {{ $x := "querySQL" }}{{ $x }} {{ $querySQL := 1 }}{{ $querySQL }}`, true, ""},
		{"a method of a value", `{{ now.Year }} {{ (now).Month }}`, true, ""},
		{"defined template", `{{ define "x" }}{{ upper . }}{{ end }}{{ template "x" "a" }}`, true, ""},

		{"env", `{{ env "SIYUAN_TOKEN" }}`, false, failure.PermissionDenied},
		{"expandenv", `{{ expandenv "$HOME" }}`, false, failure.PermissionDenied},
		{"getHostByName", `{{ getHostByName "example.org" }}`, false, failure.PermissionDenied},
		{"env in a chain", `{{ env.x }}`, false, failure.PermissionDenied},
		{"env piped", `{{ "HOME" | env }}`, false, failure.PermissionDenied},
		{"env in a defined template never called", `{{ define "x" }}{{ env "A" }}{{ end }}`, false, failure.PermissionDenied},
		{"env behind a delimiter in a string", `{{ print "}}" }}{{ env "A" }}`, false, failure.PermissionDenied},

		{"unknown function", `{{ readFile "/etc/passwd" }}`, false, failure.InvalidArguments},
		{"unknown function in a chain", `{{ exec.Output }}`, false, failure.InvalidArguments},
		{"unknown function in an if", `{{ if true }}{{ system "id" }}{{ end }}`, false, failure.InvalidArguments},
		{"unknown function in a range", `{{ range (list 1) }}{{ include "x" }}{{ end }}`, false, failure.InvalidArguments},
		{"does not parse", `{{ upper `, false, failure.InvalidArguments},

		{"querySQL hidden", `{{ querySQL "SELECT * FROM blocks" }}`, true, failure.PermissionDenied},
		{"queryBlocks hidden", `{{ queryBlocks "SELECT * FROM blocks" }}`, true, failure.PermissionDenied},
		{"querySpans hidden", `{{ querySpans "SELECT * FROM spans" }}`, true, failure.PermissionDenied},
		{"getBlock hidden", `{{ getBlock "20260101000000-abcdefg" }}`, true, failure.PermissionDenied},
		{"getHPathByID hidden", `{{ getHPathByID "20260101000000-abcdefg" }}`, true, failure.PermissionDenied},
		{"statBlock hidden", `{{ (statBlock "20260101000000-abcdefg").RuneCount }}`, true, failure.PermissionDenied},
		{"querySQL in a chain hidden", `{{ querySQL.x }}`, true, failure.PermissionDenied},
		{"querySQL open", `{{ querySQL "SELECT * FROM blocks" }}`, false, ""},
		{"statBlock open", `{{ (statBlock .id).RuneCount }}`, false, ""},
		{"querySpans open", `{{ querySpans "SELECT * FROM spans WHERE content = '?'" .title }}`, false, ""},

		{"querySQL writes", `{{ querySQL "DELETE FROM blocks" }}`, false, failure.InvalidArguments},
		{"querySpans writes", `{{ querySpans "DELETE FROM spans" }}`, false, failure.InvalidArguments},
		{"querySpans filled not a select", `{{ querySpans "? FROM spans" "DELETE" }}`, false, failure.InvalidArguments},
		{"querySQL assembled", `{{ querySQL (print "DEL" "ETE FROM blocks") }}`, false, failure.InvalidArguments},
		{"querySQL from a chain", `{{ querySQL.x }}`, false, failure.InvalidArguments},
		{"queryBlocks piped", `{{ "DELETE" | queryBlocks "? FROM blocks" }}`, false, failure.InvalidArguments},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := open()
			if c.hidden {
				ctx = hiding()
			}
			file := strings.NewReplacer("{{", ".action{", "}}", "}").Replace(c.src)
			for _, tc := range []struct {
				src string
				d   Delims
			}{{c.src, Sprig}, {file, File}} {
				if c.name == "env behind a delimiter in a string" && tc.d == File {
					continue // "}" closes a .action{ there: another template
				}
				err := Check(ctx, tc.src, tc.d)
				var got failure.Code
				if err != nil {
					fe, ok := err.(*failure.Error)
					if !ok {
						t.Fatalf("%q: %v is not a failure", tc.src, err)
					}
					if fe.WriteAttempted == nil || *fe.WriteAttempted {
						t.Errorf("%q: writeAttempted must be false: %+v", tc.src, fe)
					}
					got = fe.Code
				}
				if got != c.want {
					t.Errorf("%q: %v, want %q", tc.src, err, c.want)
				}
			}
		})
	}
}

// pureStubs are the functions a template may call while a notebook is
// hidden, as text/template itself checks names: stubs for every Pure one.
func pureStubs() template.FuncMap {
	m := template.FuncMap{}
	for name, c := range Funcs {
		if c == Pure && !strings.Contains(" "+builtins+" ", " "+name+" ") {
			m[name] = func(...any) any { return nil }
		}
	}
	return m
}

// FuzzTemplateAllowed: for any text, in either engine, Check never panics;
// and whenever it allows a template while a notebook is hidden,
// text/template itself parses it knowing only the pure functions: no call
// of an Index, Host or unknown function got through, however it is
// written.
func FuzzTemplateAllowed(f *testing.F) {
	for _, s := range []string{
		"hello", `{{ now | date "2006" }}`, `{{ querySQL "SELECT 1" }}`, `{{ env "A" }}`, `{{ env.x }}`, `{{ now.Year }}`,
		`{{ define "x" }}{{ getBlock "a" }}{{ end }}`, `{{ print "}}" | querySQL }}`, `{{ $querySQL := 1 }}{{ $querySQL }}`,
		`{{ if true }}{{ statBlock .id }}{{ else }}{{ readFile "x" }}{{ end }}`, `{{ with $x := 1 }}{{ $x }}{{ end }}`,
		`{{ range $i, $v := list 1 2 }}{{ getHostByName $v }}{{ end }}`, `{{ template "y" (querySpans "SELECT 1") }}`,
		`{{ block "b" . }}{{ expandenv "$A" }}{{ end }}`, `{{ (index (queryBlocks "SELECT * FROM blocks") 0).Content }}`,
		".action{ querySQL \"SELECT 1\" }", ".action{.title}", "{{/* querySQL */}}", "{{- upper \"a\" -}}",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	ctx := hiding()
	stubs := pureStubs()
	f.Fuzz(func(t *testing.T, src string, file bool) {
		d := Sprig
		if file {
			d = File
		}
		if Check(ctx, src, d) != nil {
			return
		}
		if _, err := template.New("").Delims(d[0], d[1]).Funcs(stubs).Parse(src); err != nil {
			t.Fatalf("allowed %q (%v), but text/template knowing only the pure functions refuses it: %v", src, d, err)
		}
	})
}
