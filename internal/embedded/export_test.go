package embedded

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

func TestExportResources(t *testing.T) {
	e := ixOpen(t)
	e.write("data/storage/res/a.txt", "A")
	e.write("data/storage/res/sub/b.txt", "B")
	os.MkdirAll(filepath.Join(e.k.Dir(), "data", "storage", "res", "empty"), 0o755)
	e.write("data/storage/single.md", "# S")

	// zipEntries fetches the zip through getFile, as a client would.
	zipEntries := func(t *testing.T, p string) map[string]string {
		t.Helper()
		status, h, body := e.raw("/api/file/getFile", map[string]any{"path": "/" + p})
		if status != 200 || h.Get("Content-Type") != "application/zip" {
			t.Fatalf("getFile %s: HTTP %d %s", p, status, h.Get("Content-Type"))
		}
		zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
		if err != nil {
			t.Fatal(err)
		}
		ret := map[string]string{}
		for _, f := range zr.File {
			rc, _ := f.Open()
			data, _ := io.ReadAll(rc)
			rc.Close()
			ret[f.Name] = string(data)
		}
		return ret
	}
	stamp := regexp.MustCompile(`^temp/export/[0-9a-f]{32}-export-\d{4}-\d{2}-\d{2}_\d{2}-\d{2}-\d{2}\.zip$`)

	tests := []struct {
		name    string
		body    map[string]any
		code    int
		msg     string
		pathRe  *regexp.Regexp
		entries []string
	}{
		{name: "default name", body: map[string]any{"paths": []string{"data/storage/single.md"}}, pathRe: stamp,
			entries: []string{"*/single.md"}},
		{name: "named, dir and file", body: map[string]any{"paths": []string{"/data/storage/res", "data/storage/single.md"}, "name": "bundle"},
			pathRe:  regexp.MustCompile(`^temp/export/[0-9a-f]{32}-bundle\.zip$`),
			entries: []string{"bundle/res/a.txt", "bundle/res/empty/", "bundle/res/sub/b.txt", "bundle/single.md"}},
		{name: "unsafe name", body: map[string]any{"paths": []string{"data/storage/single.md"}, "name": "../x"},
			pathRe: regexp.MustCompile(`^temp/export/[0-9a-f]{32}-x\.zip$`), entries: []string{"x/single.md"}},
		{name: "no paths", body: map[string]any{}, code: 1, msg: "[paths] is required"},
		{name: "missing resource", body: map[string]any{"paths": []string{"data/storage/nope"}}, code: 1, msg: "no such file or directory"},
		{name: "outside", body: map[string]any{"paths": []string{"../../etc/passwd"}}, code: 1, msg: "is not in workspace"},
		{name: "workspace root", body: map[string]any{"paths": []string{"/"}}, code: 1, msg: "is not in workspace"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.post("/api/export/exportResources", tc.body)
			if r.Code != tc.code || !strings.Contains(r.Msg, tc.msg) {
				t.Fatalf("code %d msg %q, want %d ~%q", r.Code, r.Msg, tc.code, tc.msg)
			}
			if tc.code != 0 {
				return
			}
			var out struct {
				Path string `json:"path"`
			}
			e.ok("/api/export/exportResources", tc.body, &out)
			if !tc.pathRe.MatchString(out.Path) {
				t.Fatalf("path %q does not match %s", out.Path, tc.pathRe)
			}
			got := zipEntries(t, out.Path)
			var names []string
			for n := range got {
				names = append(names, n)
			}
			sort.Strings(names)
			if len(names) != len(tc.entries) {
				t.Fatalf("entries %v, want %v", names, tc.entries)
			}
			for i, want := range tc.entries {
				if ok, _ := filepath.Match(want, names[i]); !ok {
					t.Errorf("entry %q, want %q", names[i], want)
				}
			}
			if tc.name == "named, dir and file" && (got["bundle/res/a.txt"] != "A" || got["bundle/res/sub/b.txt"] != "B") {
				t.Errorf("contents %v", got)
			}
		})
	}
	if partial, _ := filepath.Glob(filepath.Join(e.k.Dir(), "temp", "export", "*.partial")); len(partial) != 0 {
		t.Errorf("partial zips left: %v", partial)
	}
}

func TestExportMdContent(t *testing.T) {
	e := ixOpen(t)
	box := e.box()
	target := e.doc(box, "/Target", "# Target heading\n\ntarget body")
	e.flush()
	heading := e.sql("SELECT id FROM blocks WHERE root_id='" + target + "' AND type='h'")[0]["id"].(string)
	src := e.doc(box, "/Src", "# Local\n\nsee (("+heading+" \"the heading\")) and [link](siyuan://blocks/"+heading+")\n\n"+
		"gone ((20200101000000-aaaaaaa 'gone'))\n\n{{SELECT * FROM blocks WHERE id='"+heading+"'}}\n\nline1\nline2 #tag#\n\n- [ ] task\n")
	e.ok("/api/attr/setBlockAttrs", map[string]any{"id": src, "attrs": map[string]any{"tags": "x,y"}}, nil)
	local := e.sql("SELECT id FROM blocks WHERE id='" + heading + "'") // the embed resolves through the index
	if len(local) != 1 {
		t.Fatal("heading not indexed")
	}
	created, _ := time.ParseInLocation("20060102150405", src[:14], time.Local)

	tests := []struct {
		name  string
		body  map[string]any
		has   []string
		hasNo []string
		exact string
	}{
		{name: "defaults: yfm, title, footnotes, quoted embed", body: map[string]any{"id": src},
			has: []string{
				"---\ntitle: Src\ndate: " + created.Format(time.RFC3339) + "\nlastmod: ",
				"tags:\n  - 'x'\n  - 'y'\n---\n\n# Src\n\n# Local\n",
				"see the heading[^1] and link[^1]\n",
				"gone gone[^2]\n",
				"> # Target heading\n>\n> target body\n",
				"line1  \nline2 #tag#",
				"- [ ] task",
				"[^1]: # Target heading\n\n    target body\n",
			},
			hasNo: []string{"{:", "[^2]:", "((", "{{"}},
		{name: "no yfm, anchor links", body: map[string]any{"id": src, "yfm": false, "refMode": 2},
			has:   []string{"# Src\n\n# Local", "see [the heading](siyuan://blocks/" + heading + ") and [link](siyuan://blocks/" + heading + ")"},
			hasNo: []string{"---\n", "[^1]"}},
		{name: "anchor text, raw embed, no title", body: map[string]any{"id": src, "yfm": false, "refMode": 3, "embedMode": 0, "addTitle": false},
			// Embedded headings move under the heading above the embed (as
			// SiYuan 3.7.3 does with the raw embed mode).
			has:   []string{"see the heading and link\n", "\n## Target heading\n\ntarget body\n"},
			hasNo: []string{"# Src", "> # Target", "siyuan://"}},
		{name: "a heading block exports with its children", body: map[string]any{"id": heading, "yfm": false},
			exact: "# Target\n\n# Target heading\n\ntarget body\n"},
		{name: "heading levels adjusted", body: map[string]any{"id": heading, "yfm": false, "adjustHeadingLevel": true},
			exact: "# Target\n\n## Target heading\n\ntarget body\n"},
		{name: "document without title", body: map[string]any{"id": target, "yfm": false, "addTitle": false},
			exact: "# Target heading\n\ntarget body\n"},
		{name: "unknown id answers empty strings", body: map[string]any{"id": "20200101000000-zzzzzzz"}, exact: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out wire.MdContent
			e.ok("/api/export/exportMdContent", tc.body, &out)
			for _, s := range tc.has {
				if !strings.Contains(out.Content, s) {
					t.Errorf("content lacks %q:\n%s", s, out.Content)
				}
			}
			for _, s := range tc.hasNo {
				if strings.Contains(out.Content, s) {
					t.Errorf("content has %q:\n%s", s, out.Content)
				}
			}
			if tc.exact != "" || len(tc.has) == 0 {
				if out.Content != tc.exact {
					t.Errorf("content %q, want %q", out.Content, tc.exact)
				}
			}
		})
	}
	if r := e.post("/api/export/exportMdContent", map[string]any{"id": "nope"}); r.Code != -1 || r.Msg != "invalid ID argument" {
		t.Errorf("invalid id: %d %q", r.Code, r.Msg)
	}
	// hPath is the document's, and the export reads the tree (no lag).
	e.ok("/api/block/appendBlock", map[string]any{"parentID": target, "dataType": "markdown", "data": "fresh NOLAG"}, nil)
	var out wire.MdContent
	e.ok("/api/export/exportMdContent", map[string]any{"id": target}, &out)
	if out.HPath != "/Target" || !strings.Contains(out.Content, "fresh NOLAG") {
		t.Errorf("hPath %q content %q", out.HPath, out.Content)
	}
}

func TestExportRefInsideDocument(t *testing.T) {
	e := ixOpen(t)
	id := e.doc(e.box(), "/Self", "# Part\n\ntext")
	e.flush()
	h := e.sql("SELECT id FROM blocks WHERE root_id='" + id + "' AND type='h'")[0]["id"].(string)
	e.ok("/api/block/appendBlock", map[string]any{"parentID": id, "dataType": "markdown", "data": "back to ((" + h + " 'Part'))"}, nil)
	var out struct {
		Content string `json:"content"`
	}
	e.ok("/api/export/exportMdContent", map[string]any{"id": id, "yfm": false}, &out)
	if !strings.Contains(out.Content, "back to [Part](#"+h+")") || strings.Contains(out.Content, "[^") {
		t.Errorf("in-document ref: %s", out.Content)
	}
}
