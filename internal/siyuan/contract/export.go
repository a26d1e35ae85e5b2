package contract

// Export as the file tool uses it: a document's Markdown with its asset
// links, several workspace paths zipped into temp/export/, and the zip
// fetched back with getFile; and getFile/putFile on templates and assets.

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// checkExportMdAssets: exportMdContent leaves asset links as the document
// has them (relative "assets/…", a space as %20), notebook asset paths and
// remote links too; nothing is copied or rewritten.
func checkExportMdAssets(t *testing.T, s *suite) {
	dir := "/" + s.box + "/assets/"
	a := s.upload(t, dir, "exp a.txt", []byte("a"))
	img := s.upload(t, dir, "img.png", pngBytes())
	ab, ib := path.Base(a), path.Base(img)
	title := "exportassets-" + randWord(6)
	doc := s.newDoc(t, title, "![i](assets/"+ib+")\n\n[a](assets/"+strings.ReplaceAll(ab, " ", "%20")+") [b](<assets/"+ab+">)\n\n[s]("+img+")\n\n[w](https://e.x/y.png)")
	md, err := s.c.ExportMdContent(t.Context(), doc)
	must(t, "ExportMdContent", err)
	ae := strings.ReplaceAll(ab, " ", "%20")
	want := "# " + title + "\n\n![i](assets/" + ib + ")\n\n[a](assets/" + ae + ") [b](assets/" + ae + ")\n\n[s](" + img + ")\n\n[w](https://e.x/y.png)\n"
	if md.HPath != "/"+title || md.Content != want {
		t.Fatalf("ExportMdContent = %+v\nwant content %q", md, want)
	}
}

// exportReply is exportResources' answer on the wire.
type exportReply struct {
	Code int             `json:"code"`
	Msg  string          `json:"msg"`
	Data json.RawMessage `json:"data"`
}

// checkExportResourcesZip: several paths, files and folders, into one zip
// under temp/export/, entries under "<name>/<last segment>", fetched whole
// with getFile as application/zip.
func checkExportResourcesZip(t *testing.T, s *suite) {
	zdir := s.box + "/zipdir-" + s.tag
	a := s.upload(t, "/"+zdir+"/", "zip a.txt", []byte("zip a "+s.tag))
	b2 := s.upload(t, "/"+zdir+"/", "zip b.png", pngBytes())
	parent := s.newDoc(t, "zipdoc-"+randWord(6), "parent")
	child := s.newDocAt(t, "/"+s.docTitle(t, parent)+"/child", "child")
	tpl := s.templateName("zip") + ".md"
	s.putTemplate(t, tpl, "# zipped .action{.title}")
	must(t, "PutFile empty folder", s.c.PutFile(t.Context(), siyuan.PutFileRequest{Path: s.storage + "/zip-empty", IsDir: true}))
	name := "sisyphus-contract-" + s.tag + " zip"
	paths := []string{
		"/data/" + a,                    // a file
		"data/" + zdir,                  // a folder: its files, no entry of its own
		"/data/" + s.box + "/" + parent, // a document's folder of sub-documents
		"data/" + s.box + "/" + parent + ".sy",
		"/data/templates/" + tpl,
		s.storage + "/zip-empty", // an empty folder: an entry of its own
		"/data/" + a,             // twice: once in the zip
	}
	zp, err := s.c.ExportResources(t.Context(), paths, name)
	must(t, "ExportResources", err)
	t.Cleanup(func() { _ = s.c.RemoveFile(context.Background(), "/"+zp) })
	if !regexp.MustCompile(`^temp/export/[0-9a-f]{32}-` + regexp.QuoteMeta(name) + `\.zip$`).MatchString(zp) {
		t.Fatalf("ExportResources = %q, want temp/export/<32 hex>-%s.zip", zp, name)
	}
	rc, ctype, err := s.c.GetFile(t.Context(), "/"+zp)
	must(t, "GetFile zip", err)
	b := readAll(t, rc)
	if ctype != "application/zip" {
		t.Fatalf("zip content type %q, want application/zip", ctype)
	}
	// Without the leading slash too, and by the raw API: the same bytes.
	wantFileReply(t, "raw getFile of the zip", s.rawJSON(t, "/api/file/getFile", pathBody(zp)), "application/zip", b)
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	must(t, "open zip", err)
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		if f.Name == name+"/"+path.Base(a) {
			r, err := f.Open()
			must(t, "open entry", err)
			var buf bytes.Buffer
			buf.ReadFrom(r)
			r.Close()
			if buf.String() != "zip a "+s.tag {
				t.Fatalf("zipped asset reads %q", buf.String())
			}
		}
	}
	slices.Sort(names)
	want := []string{name + "/" + path.Base(a), name + "/" + path.Base(zdir) + "/" + path.Base(a), name + "/" + path.Base(zdir) + "/" + path.Base(b2),
		name + "/" + parent + ".sy", name + "/" + parent + "/" + child + ".sy", name + "/" + tpl, name + "/zip-empty/"}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("zip entries\n got %q\nwant %q", names, want)
	}
	// The name is cut to its last segment and filtered; none is
	// "export-<date and time>".
	for n, re := range map[string]string{
		"a/b:c*" + s.tag: `b_c_` + s.tag,
		"":               `export-\d{4}-\d{2}-\d{2}_\d{2}-\d{2}-\d{2}`,
	} {
		zp, err := s.c.ExportResources(t.Context(), []string{"/data/" + a}, n)
		must(t, "ExportResources named "+n, err)
		t.Cleanup(func() { _ = s.c.RemoveFile(context.Background(), "/"+zp) })
		if !regexp.MustCompile(`^temp/export/[0-9a-f]{32}-` + re + `\.zip$`).MatchString(zp) {
			t.Fatalf("ExportResources named %q = %q, want temp/export/<hex>-%s.zip", n, zp, re)
		}
	}
	// Refusals: code 1 with data {closeTimeout}; a missing path names the
	// kernel's absolute path.
	refuse := func(what, body string, msg *regexp.Regexp, data string) {
		t.Helper()
		r := s.rawJSON(t, "/api/export/exportResources", body)
		var env exportReply
		if r.status != http.StatusOK || json.Unmarshal(r.body, &env) != nil || env.Code != 1 || !msg.MatchString(env.Msg) || string(env.Data) != data {
			t.Fatalf("%s: HTTP %d %s, want code 1 msg %s data %s", what, r.status, r.body, msg, data)
		}
	}
	refuse("exportResources of a missing file", `{"paths":["/data/`+s.box+`/assets/none.txt"],"name":"x"}`,
		regexp.MustCompile(`^Export failed: lstat /.*/data/`+s.box+`/assets/none\.txt: no such file or directory$`), `{"closeTimeout":7000}`)
	refuse("exportResources above the workspace", `{"paths":["../x"],"name":"x"}`, regexp.MustCompile(`^resource path \[\.\./x\] is not in workspace$`), `{"closeTimeout":7000}`)
	refuse("exportResources of the workspace root", `{"paths":["/"],"name":"x"}`, regexp.MustCompile(`^resource path \[/\] is not in workspace$`), `{"closeTimeout":7000}`)
	refuse("exportResources without paths", `{"name":"x"}`, regexp.MustCompile(`^\[paths\] is required$`), `""`)
	wantEnvelope(t, "exportResources with paths not a list", s.rawJSONAny(t, "/api/export/exportResources", `{"paths":"x","name":"x"}`), http.StatusOK, 0, "", 1)
}

// checkStorageTemplatesAssets: getFile and putFile on data/templates and
// data/assets work as anywhere else for an admin token; a template is
// served as text/markdown, an asset by its extension.
func checkStorageTemplatesAssets(t *testing.T, s *suite) {
	tpl := s.templateName("storage") + ".md"
	s.putTemplate(t, tpl, "# .action{.title}\n")
	body, ctype := s.get(t, "/data/templates/"+tpl)
	if string(body) != "# .action{.title}\n" || ctype != "text/markdown; charset=utf-8" {
		t.Fatalf("GetFile template = %q (%s), want text/markdown; charset=utf-8", body, ctype)
	}
	if res, err := s.c.SearchTemplate(t.Context(), s.templateName("storage")); err != nil || len(res) != 1 || res[0].RelativePath != tpl {
		t.Fatalf("a template written with putFile: SearchTemplate = %+v, %v", res, err)
	}
	img := s.upload(t, "/"+s.box+"/assets/", "stored.png", pngBytes())
	if body, ctype = s.get(t, "/data/"+img); !bytes.Equal(body, pngBytes()) || ctype != "image/png" {
		t.Fatalf("GetFile asset = %d bytes (%s), want the PNG as image/png", len(body), ctype)
	}
	// putFile into an assets folder is a plain write: the name is kept.
	p := "/data/" + s.box + "/assets/put-" + s.tag + ".txt"
	s.put(t, p, []byte("put"))
	if got, ctype := s.get(t, p); string(got) != "put" || ctype != "text/plain; charset=utf-8" {
		t.Fatalf("GetFile of a put asset = %q (%s)", got, ctype)
	}
}
