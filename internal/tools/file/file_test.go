package file

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

func testTools() []*tools.Tool { return []*tools.Tool{Tool()} }

// sfix is a strict fixture with this package's helpers.
type sfix struct{ *tooltest.Fixture }

func newFixture(t *testing.T) *sfix {
	t.Helper()
	return &sfix{tooltest.NewStrict(t, false, testTools)}
}

// mem is the fixture's staging store.
func (s *sfix) mem() *tooltest.MemSources { return s.Sources.(*tooltest.MemSources) }

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// read returns a workspace file's bytes, or ok false when it is missing.
func (s *sfix) read(t *testing.T, p string) (data []byte, ok bool) {
	t.Helper()
	body, _, err := s.C.GetFile(context.Background(), p)
	if errors.Is(err, siyuan.ErrFileNotFound) {
		return nil, false
	}
	if err != nil {
		t.Fatalf("getFile %s: %v", p, err)
	}
	defer body.Close()
	data, err = io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	return data, true
}

func (s *sfix) exists(t *testing.T, p string) bool {
	t.Helper()
	_, ok := s.read(t, p)
	return ok
}

// put writes a workspace file directly (as SiYuan's UI or another client
// would).
func (s *sfix) put(t *testing.T, p, content string) {
	t.Helper()
	if err := s.C.PutFile(context.Background(), siyuan.PutFileRequest{Path: p, Body: strings.NewReader(content)}); err != nil {
		t.Fatalf("putFile %s: %v", p, err)
	}
}

// upload stores an asset directly through the kernel and returns its path
// ("assets/…").
func (s *sfix) upload(t *testing.T, name string, data []byte) string {
	t.Helper()
	res, err := s.C.UploadAsset(context.Background(), siyuan.AssetUploadRequest{AssetsDirPath: "/assets/",
		Files: []siyuan.UploadFile{{Name: name, Body: bytes.NewReader(data)}}})
	if err != nil || res.SuccMap[name] == "" {
		t.Fatalf("upload %s: %v %+v", name, err, res)
	}
	return res.SuccMap[name]
}

// link appends a paragraph linking an asset to the fixture's document.
func (s *sfix) link(t *testing.T, asset string) {
	t.Helper()
	if _, err := s.C.AppendBlock(context.Background(), "markdown", "![]("+asset+")", s.Doc); err != nil {
		t.Fatal(err)
	}
}

// strictOK runs preflight then commit of a file action.
func (s *sfix) strictOK(t *testing.T, args map[string]any, field string, targets int) (pre, res map[string]any) {
	t.Helper()
	pre = s.Preflight(t, "file", args, field, targets)
	res = s.Commit(t, "file", args, pre)
	return pre, res
}

// wantAttemptedFalse checks a refusal says nothing was written.
func wantAttemptedFalse(t *testing.T, e *failure.Error) {
	t.Helper()
	if e.WriteAttempted == nil || *e.WriteAttempted {
		t.Fatalf("%s: writeAttempted must be false: %+v", e.Code, e)
	}
}

// TestActionClasses pins what kind of write each action is: the
// confirmations, switches and preconditions agents and the settings page
// rely on.
func TestActionClasses(t *testing.T) {
	tool := Tool()
	reads := []string{"list_templates", "read_template", "render", "export_md", "list_unused_assets", "get_doc_assets", "get_image_ocr_text",
		"read_image", "export_markdown_snapshot", "audit_image_refs"}
	for _, n := range reads {
		a, ok := tool.Action(n)
		if !ok || a.Policy.Class != strict.Read || a.Dangerous {
			t.Errorf("%s must be a plain read: %+v", n, a)
		}
	}
	for _, c := range []struct {
		name                     string
		class                    strict.Class
		pre                      strict.Precondition
		dangerous, off, destruct bool
	}{
		{"upload_asset", strict.Mutation, strict.ExpectedSourceHash, true, false, false},
		{"create_template", strict.Mutation, strict.ExpectedStateHash, false, false, false},
		{"update_template", strict.Mutation, strict.ExpectedStateHash, false, false, false},
		{"delete_template", strict.Mutation, strict.ExpectedStateHash, true, true, true},
		{"save_doc_as_template", strict.Mutation, strict.ExpectedStateHash, false, false, false},
		{"export_resources", strict.External, "", false, false, false},
		{"extract_doc", strict.External, "", false, false, false},
		{"remove_unused_assets", strict.Mutation, strict.ExpectedManifestHash, true, false, true},
		{"rename_asset", strict.Mutation, strict.ExpectedStateHash, false, false, false},
		{"delete_asset", strict.Mutation, strict.ExpectedStateHash, true, false, true},
	} {
		a, ok := tool.Action(c.name)
		if !ok {
			t.Errorf("no action %s", c.name)
			continue
		}
		if a.Policy.Class != c.class || a.Policy.Precondition != c.pre || a.Dangerous != c.dangerous || a.OffByDefault != c.off || a.Destructive != c.destruct {
			t.Errorf("%s: %+v dangerous %v off %v destructive %v", c.name, a.Policy, a.Dangerous, a.OffByDefault, a.Destructive)
		}
	}
	// create_template is additive unless it overwrites.
	for overwrite, want := range map[bool]strict.Class{false: strict.Additive, true: strict.Mutation} {
		if got := createTemplate.PolicyFor(createTemplateArgs{Overwrite: overwrite}); got.Class != want {
			t.Errorf("create_template overwrite %v: %v", overwrite, got)
		}
	}
	if got := len(tool.Actions); got != 20 {
		t.Errorf("%d actions", got)
	}
}

func TestAssetPathForms(t *testing.T) {
	for _, c := range []struct {
		in, want string // want "": refused
		box      string
	}{
		{"x.png", "assets/x.png", ""},
		{"assets/x.png", "assets/x.png", ""},
		{"/assets/x.png", "assets/x.png", ""},
		{"/data/assets/x.png", "assets/x.png", ""},
		{"data/assets/sub/x.png", "assets/sub/x.png", ""},
		{`assets\sub\x.png`, "assets/sub/x.png", ""},
		{"  assets/x.png ", "assets/x.png", ""},
		{"20260101000000-abcdefg/assets/x.png", "20260101000000-abcdefg/assets/x.png", "20260101000000-abcdefg"},
		{"/data/20260101000000-abcdefg/assets/x.png", "20260101000000-abcdefg/assets/x.png", "20260101000000-abcdefg"},
		// A notebook path with nothing after assets/ names no file.
		{"20260101000000-abcdefg/assets/", "", ""},
		{"assets/", "", ""},
		{"/assets/sub/", "", ""},
		{"", "", ""},
		{"assets/../conf/conf.json", "", ""},
		{"../conf/conf.json", "", ""},
		{"assets/./x.png", "", ""},
		{"assets//x.png", "", ""},
		{"assets/x\x00.png", "", ""},
		{"assets/\xff.png", "", ""},
		{"20260101000000-abcdefg/assets/../../conf", "", ""},
		// As a document's link writes it.
		{"assets/my%20photo%201.png", "assets/my photo 1.png", ""},
		{"assets/%2E%2E/conf/conf.json", "", ""},
		{"assets/bad%zz.png", "assets/bad%zz.png", ""},
	} {
		r, err := parseAsset("path", c.in)
		switch {
		case c.want == "" && err == nil:
			t.Errorf("%q: accepted as %+v", c.in, r)
		case c.want != "" && err != nil:
			t.Errorf("%q: %v", c.in, err)
		case c.want != "" && (r.Path != c.want || r.Notebook != c.box):
			t.Errorf("%q: %+v, want %s in %q", c.in, r, c.want, c.box)
		}
		var fe *failure.Error
		if err != nil && (!errors.As(err, &fe) || fe.Code != failure.InvalidArguments) {
			t.Errorf("%q: %v is not invalid_arguments", c.in, err)
		}
	}
}

func TestTemplatePathForms(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"daily.md", "templates/daily.md"},
		{"/templates/daily.md", "templates/daily.md"},
		{"templates/daily.md", "templates/daily.md"},
		{"data/templates/daily.md", "templates/daily.md"},
		{"/data/templates/daily.md", "templates/daily.md"},
		// The absolute path list_templates shows.
		{"/home/me/SiYuan/data/templates/daily.md", "templates/daily.md"},
		{`C:\SiYuan\data\templates\work\weekly.md`, "templates/work/weekly.md"},
		{"work/weekly.md", "templates/work/weekly.md"},
		{"Daily.MD", "templates/Daily.MD"},
		{"../x.md", ""},
		{"work/../../x.md", ""},
		{"./x.md", ""},
		{"x.txt", ""},
		{"x", ""},
		{"", ""},
		{"/templates/", ""},
		{"work//x.md", ""},
		{"x\n.md", ""},
	} {
		got, err := templatePath("path", c.in)
		if c.want == "" {
			var fe *failure.Error
			if err == nil || !errors.As(err, &fe) || fe.Code != failure.InvalidArguments {
				t.Errorf("%q: got %q, %v; want invalid_arguments", c.in, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q: got %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestAssetDirForms(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "/assets/"},
		{"/assets/", "/assets/"},
		{"assets", "/assets/"},
		{"/data/assets/diagrams", "/assets/diagrams/"},
		{`assets\a\b\`, "/assets/a/b/"},
		{"/conf/", ""},
		{"../x", ""},
		{"/assets/../conf", ""},
		{"/assets/./x", ""},
		{"/assets//x", ""},
		{"/assetsx/", ""},
		{"data/20260101000000-abcdefg/assets", ""},
	} {
		got, err := assetDir(c.in)
		if c.want == "" {
			if err == nil {
				t.Errorf("%q: accepted as %q", c.in, got)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q: got %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestTemplateNames(t *testing.T) {
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"weekly-review", true},
		{"周报 2026", true},
		{"a.b", true},
		{"", false},
		{" lead", false},
		{"trail ", false},
		{"a/b", false},
		{`a\b`, false},
		{"a:b", false},
		{"a*b", false},
		{"a?b", false},
		{`a"b`, false},
		{"a'b", false},
		{"a<b", false},
		{"a>b", false},
		{"a|b", false},
		{".hidden", false},
		{"tab\there", false},
		{"\xff", false},
		{strings.Repeat("x", 181), false},
		{strings.Repeat("x", 180), true},
	} {
		if err := templateName(c.name); (err == nil) != c.ok {
			t.Errorf("%q: %v, want ok %v", c.name, err, c.ok)
		}
	}
}

func TestSafeName(t *testing.T) {
	for in, want := range map[string]string{
		"Plan":       "Plan",
		" a/b:c ":    "a_b_c",
		`x\y*z?"<>|`: "x_y_z_____",
		"tab\tname":  "tab_name",
		"   ":        "document",
		"日本語のタイトル":   "日本語のタイトル",
	} {
		if got := safeName(in); got != want {
			t.Errorf("safeName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestImageMarkdown(t *testing.T) {
	for _, tc := range []struct{ name, asset, want string }{
		{"diagram.png", "assets/diagram-20260101000000-abcdefg.png", "![diagram.png](assets/diagram-20260101000000-abcdefg.png)"},
		{"my photo (1).png", "assets/my photo 1-20260101000000-abcdefg.png", "![my photo (1).png](assets/my%20photo%201-20260101000000-abcdefg.png)"},
		{"a[b].png", "assets/a(b)-20260101000000-abcdefg.png", `![a\[b\].png](assets/a%28b%29-20260101000000-abcdefg.png)`},
	} {
		if got := imageMarkdown(tc.name, tc.asset); got != tc.want {
			t.Errorf("imageMarkdown(%q, %q) = %q, want %q", tc.name, tc.asset, got, tc.want)
		}
	}
}
