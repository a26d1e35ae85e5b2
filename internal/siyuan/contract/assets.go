package contract

// Assets beyond a single upload: what /api/asset/upload does with names,
// folders and repeated bytes, which assets a document links, which assets
// nothing links, renaming one (SiYuan rewrites the links in every .sy
// file), removing them, OCR texts and the asset name search.
//
// Everything lives in the suite's notebook folder, except what only
// data/assets can show (reuse of repeated bytes, searchAsset): those files
// are named sisyphus-contract-<tag>-… and removed at the end. The
// workspace-wide calls (getUnusedAssets, removeUnusedAssets) are only
// judged on the suite's own assets, and removeUnusedAssets only runs when
// the workspace has no unused asset but the suite's.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"mime/multipart"
	"net/http"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// upFile is one file part of a raw upload.
type upFile struct {
	name string
	body []byte
}

// rawUpload posts an /api/asset/upload form: fields in order, then the
// files as "file[]" parts.
func (s *suite) rawUpload(t *testing.T, fields [][2]string, files ...upFile) rawReply {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, f := range fields {
		must(t, "multipart field", mw.WriteField(f[0], f[1]))
	}
	for _, f := range files {
		w, err := mw.CreateFormFile("file[]", f.name)
		must(t, "multipart file", err)
		_, err = w.Write(f.body)
		must(t, "multipart file", err)
	}
	must(t, "multipart close", mw.Close())
	return s.rawDo(t, "/api/asset/upload", mw.FormDataContentType(), &buf)
}

// uploadReply decodes an upload reply, requiring HTTP 200 and code 0.
type uploadReply struct {
	Code int    `json:"code"`
	Msg  string `json:"msg"`
	Data struct {
		ErrFiles []string          `json:"errFiles"`
		SuccMap  map[string]string `json:"succMap"`
	} `json:"data"`
}

func decodeUpload(t *testing.T, what string, r rawReply) uploadReply {
	t.Helper()
	var u uploadReply
	if r.status != http.StatusOK || r.ctype != envelopeType || json.Unmarshal(r.body, &u) != nil || u.Code != 0 || u.Msg != "" {
		t.Fatalf("%s: HTTP %d %q %s, want 200 code 0", what, r.status, r.ctype, r.body)
	}
	// Nothing failed: errFiles is null on the wire, not [].
	if !bytes.Contains(r.body, []byte(`"errFiles":null`)) {
		t.Fatalf("%s: %s, want errFiles null", what, r.body)
	}
	return u
}

// upload stores one file through the client and returns its asset path.
func (s *suite) upload(t *testing.T, dir, name string, body []byte) string {
	t.Helper()
	res, err := s.c.UploadAsset(t.Context(), siyuan.AssetUploadRequest{AssetsDirPath: dir,
		Files: []siyuan.UploadFile{{Name: name, Body: bytes.NewReader(body)}}})
	must(t, "UploadAsset "+name, err)
	p := res.SuccMap[name]
	if len(res.ErrFiles) != 0 || p == "" {
		t.Fatalf("UploadAsset %s = %+v", name, res)
	}
	return p
}

// globalAsset is the name of a suite file in data/assets.
func (s *suite) globalAsset(what string) string { return "sisyphus-contract-" + s.tag + "-" + what }

// removeLater removes data/<p> when the check ends.
func (s *suite) removeLater(t *testing.T, p string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.c.RemoveFile(ctx, "/data/"+p); err != nil && !errors.Is(err, siyuan.ErrFileNotFound) {
			t.Errorf("cleanup: RemoveFile(/data/%s): %v", p, err)
		}
	})
}

// assetRe matches "<dir>/<base>-<new id><ext>".
func assetRe(dir, base, ext string) *regexp.Regexp {
	return regexp.MustCompile(`^` + regexp.QuoteMeta(dir+"/"+base) + `-\d{14}-[0-9a-z]{7}` + regexp.QuoteMeta(ext) + `$`)
}

func wantAssetPath(t *testing.T, what, got string, re *regexp.Regexp) {
	t.Helper()
	if !re.MatchString(got) {
		t.Fatalf("%s: asset path %q, want %s", what, got, re)
	}
}

// checkAssetUploadNames: upload's answer shape, name filtering, folders
// other than assets/, and the refusals.
func checkAssetUploadNames(t *testing.T, s *suite) {
	dir := s.box + "/assets"
	// Two files in one request; the answer maps each name as sent.
	u := decodeUpload(t, "upload of two files", s.rawUpload(t, [][2]string{{"assetsDirPath", "/" + dir + "/"}},
		upFile{"one.txt", []byte("one " + s.tag)}, upFile{"Two.PNG", []byte("two " + s.tag)}))
	if len(u.Data.SuccMap) != 2 {
		t.Fatalf("succMap %v, want two entries", u.Data.SuccMap)
	}
	wantAssetPath(t, "one.txt", u.Data.SuccMap["one.txt"], assetRe(dir, "one", ".txt"))
	// The extension is lower-cased, the name kept.
	wantAssetPath(t, "Two.PNG", u.Data.SuccMap["Two.PNG"], assetRe(dir, "Two", ".png"))
	// Names are filtered as upload names; an id at the end is kept.
	for name, re := range map[string]*regexp.Regexp{
		"we ird#na[me](1).TXT": assetRe(dir, "we irdname1", ".txt"),
		"a:b*c?d.txt":          assetRe(dir, "a_b_c_d", ".txt"),
		"noext":                assetRe(dir, "noext", ""),
	} {
		wantAssetPath(t, "upload of "+name, s.upload(t, "/"+dir+"/", name, []byte("n")), re)
	}
	if got := s.upload(t, "/"+dir+"/", "keep-20240101010101-abcdefg.txt", []byte("k")); got != dir+"/keep-20240101010101-abcdefg.txt" {
		t.Fatalf("upload of a name ending with an id: %q, want the name kept", got)
	}
	// Any folder under data/ will do, with or without slashes; it is made.
	sub := s.box + "/sub-" + s.tag + "/deeper"
	wantAssetPath(t, "upload into "+sub, s.upload(t, "/"+sub+"/", "d.txt", []byte("d")), assetRe(sub, "d", ".txt"))
	wantAssetPath(t, "upload into "+dir+" without slashes", s.upload(t, dir, "ns.txt", []byte("d")), assetRe(dir, "ns", ".txt"))
	if entries := s.readDir(t, "/data/"+sub); len(entries) != 1 {
		t.Fatalf("ReadDir %s = %+v, want the one file", sub, entries)
	}
	// A file field that is not file[] is ignored: nothing stored, code 0.
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	must(t, "field", mw.WriteField("assetsDirPath", "/"+dir+"/"))
	fw, _ := mw.CreateFormFile("file", "wrong-field.txt")
	fw.Write([]byte("x"))
	mw.Close()
	if u := decodeUpload(t, "upload with field file", s.rawDo(t, "/api/asset/upload", mw.FormDataContentType(), &buf)); len(u.Data.SuccMap) != 0 {
		t.Fatalf("upload with field file: succMap %v, want {}", u.Data.SuccMap)
	}
	if u := decodeUpload(t, "upload without files", s.rawUpload(t, [][2]string{{"assetsDirPath", "/" + dir + "/"}})); len(u.Data.SuccMap) != 0 {
		t.Fatalf("upload without files: succMap %v", u.Data.SuccMap)
	}
	// Refusals: code -1 with HTTP 200.
	for _, v := range []string{"/../", "/..", "/../../"} {
		r := s.rawUpload(t, [][2]string{{"assetsDirPath", v}}, upFile{"x.txt", []byte("x")})
		var env struct {
			Code int    `json:"code"`
			Msg  string `json:"msg"`
		}
		if r.status != http.StatusOK || json.Unmarshal(r.body, &env) != nil || env.Code != -1 ||
			!strings.HasPrefix(env.Msg, "Path [/") || !strings.HasSuffix(env.Msg, "] is not in workspace") {
			t.Fatalf("upload into %q: HTTP %d %s, want code -1 \"Path [<absolute folder>] is not in workspace\"", v, r.status, r.body)
		}
	}
	wantEnvelope(t, "upload for an unknown block", s.rawUpload(t, [][2]string{{"id", unknownID}}, upFile{"x.txt", []byte("x")}),
		http.StatusOK, -1, "Failed to insert asset file, please reopen the document", 1)
	wantEnvelope(t, "upload of a JSON body", s.rawJSON(t, "/api/asset/upload", `{}`), http.StatusOK, -1, "request Content-Type isn't multipart/form-data", 1)
}

// checkAssetUploadReuse: the same bytes under the same name are stored
// once, but only through SiYuan's hash cache, which holds uploads into
// data/assets: those are reused from any folder, while uploads into other
// folders (a notebook's assets) and empty files are always stored anew.
func checkAssetUploadReuse(t *testing.T, s *suite) {
	dir := s.box + "/assets"
	body := []byte("reuse " + s.tag)
	// A notebook folder: stored twice.
	p1, p2 := s.upload(t, "/"+dir+"/", "same.txt", body), s.upload(t, "/"+dir+"/", "same.txt", body)
	if p1 == p2 {
		t.Fatalf("two uploads into %s both answered %s, want two files (no reuse outside data/assets)", dir, p1)
	}
	e1, e2 := s.upload(t, "/"+dir+"/", "empty.txt", nil), s.upload(t, "/"+dir+"/", "empty.txt", nil)
	if e1 == e2 {
		t.Fatalf("two empty uploads both answered %s", e1)
	}
	// data/assets: stored once, then reused.
	name := s.globalAsset("dup.txt")
	g1 := s.upload(t, "/assets/", name, body)
	s.removeLater(t, g1)
	wantAssetPath(t, "upload into /assets/", g1, assetRe("assets", strings.TrimSuffix(name, ".txt"), ".txt"))
	if g2 := s.upload(t, "/assets/", name, body); g2 != g1 {
		s.removeLater(t, g2)
		t.Fatalf("second upload of the same bytes and name: %s, want the first %s", g2, g1)
	}
	// From any folder, with the name in another case: still the first.
	if g := s.upload(t, "/"+dir+"/", strings.ToUpper(name), body); g != g1 {
		t.Fatalf("same bytes, name in upper case, into %s: %s, want the data/assets file %s", dir, g, g1)
	}
	for _, e := range s.readDir(t, "/data/"+dir) {
		if strings.HasPrefix(e.Name, strings.ToUpper(s.globalAsset(""))) {
			t.Fatalf("the reused upload was stored too: %s", e.Name)
		}
	}
	// Other bytes, or another name: a new file.
	g3 := s.upload(t, "/assets/", name, []byte("other "+s.tag))
	s.removeLater(t, g3)
	g4 := s.upload(t, "/assets/", s.globalAsset("dup2.txt"), body)
	s.removeLater(t, g4)
	if g3 == g1 || g4 == g1 || g3 == g4 {
		t.Fatalf("other bytes %s, other name %s: want new files besides %s", g3, g4, g1)
	}
	// The answer maps each name sent; two equal names in one request are
	// one key.
	u := decodeUpload(t, "upload of one name twice", s.rawUpload(t, [][2]string{{"assetsDirPath", "/" + dir + "/"}},
		upFile{"twice.txt", []byte("1")}, upFile{"twice.txt", []byte("2")}))
	if len(u.Data.SuccMap) != 1 {
		t.Fatalf("succMap %v, want one key", u.Data.SuccMap)
	}
}

// checkDocAssets: getDocAssets and getDocImageAssets list what a document
// links, for the document or any of its blocks.
func checkDocAssets(t *testing.T, s *suite) {
	dir := "/" + s.box + "/assets/"
	img := s.upload(t, dir, "pic.png", pngBytes())
	txt := s.upload(t, dir, "note.txt", []byte("note"))
	htm := s.upload(t, dir, "html.png", []byte("h"))
	// Documents link a notebook's assets as "assets/<name>".
	rel := func(p string) string { return "assets/" + path.Base(p) }
	md := strings.Join([]string{
		"![pic](" + rel(img) + ")",
		"[note](" + rel(txt) + ") and ![again](" + rel(img) + ` "t") [q](` + rel(txt) + "?page=2)",
		"[as stored](" + txt + ")",
		`<img src="` + rel(htm) + `">`,
		"[web](https://example.com/x.png) ![remote](https://example.com/y.png)",
	}, "\n\n")
	doc := s.newDoc(t, "assets-"+randWord(6), md)
	blk := s.children(t, doc)[2].ID
	want := []string{rel(img), rel(txt), rel(txt) + "?page=2", rel(htm)}
	for _, id := range []string{doc, blk} {
		got, err := s.c.GetDocAssets(t.Context(), id, true)
		must(t, "GetDocAssets", err)
		if !slices.Equal(got, want) {
			t.Fatalf("GetDocAssets(%s, keepQuery)\n got %q\nwant %q (document order, no duplicates, only assets/ links)", id, got, want)
		}
	}
	got, err := s.c.GetDocAssets(t.Context(), doc, false)
	must(t, "GetDocAssets", err)
	if w := []string{rel(img), rel(txt), rel(txt), rel(htm)}; !slices.Equal(got, w) {
		t.Fatalf("GetDocAssets(without query)\n got %q\nwant %q (cut at ?, duplicates then kept)", got, w)
	}
	// Without retainQueryStr the kernel keeps the query.
	r := s.rawJSON(t, "/api/asset/getDocAssets", `{"id":"`+doc+`"}`)
	var env struct {
		Data []string `json:"data"`
	}
	if json.Unmarshal(r.body, &env) != nil || !slices.Equal(env.Data, want) {
		t.Fatalf("getDocAssets without retainQueryStr: %s", r.body)
	}
	images, err := s.c.GetDocImageAssets(t.Context(), doc)
	must(t, "GetDocImageAssets", err)
	if w := []string{rel(img), rel(img), rel(htm), "https://example.com/y.png"}; !slices.Equal(images, w) {
		t.Fatalf("GetDocImageAssets\n got %q\nwant %q (every image, duplicates and remote ones too)", images, w)
	}
	// No assets: null on the wire, [] from the client.
	plain := s.newDoc(t, "noassets-"+randWord(6), "plain text")
	for _, ep := range []string{"/api/asset/getDocAssets", "/api/asset/getDocImageAssets"} {
		wantEnvelope(t, ep+" of a document without assets", s.rawJSON(t, ep, `{"id":"`+plain+`"}`), http.StatusOK, 0, "", 1)
		wantEnvelope(t, ep+" of an unknown id", s.rawJSON(t, ep, `{"id":"`+unknownID+`"}`), http.StatusOK, -1, "tree not found", 1)
		wantEnvelope(t, ep+" of a non-id", s.rawJSON(t, ep, `{"id":"not-an-id"}`), http.StatusOK, -1, "tree not found", 1)
	}
	if got, err := s.c.GetDocAssets(t.Context(), plain, true); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("GetDocAssets of a document without assets = %#v, %v; want [] and no error", got, err)
	}
	if got, err := s.c.GetDocImageAssets(t.Context(), plain); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("GetDocImageAssets of a document without assets = %#v, %v; want [] and no error", got, err)
	}
	_, err = s.c.GetDocAssets(t.Context(), unknownID, true)
	wantAPIError(t, "GetDocAssets of an unknown id", err, -1, "tree not found")
	_, err = s.c.GetDocImageAssets(t.Context(), unknownID)
	wantAPIError(t, "GetDocImageAssets of an unknown id", err, -1, "tree not found")
}

// unusedItems are the suite's entries of GetUnusedAssets.
func (s *suite) unusedItems(t *testing.T) []string {
	t.Helper()
	unused, err := s.c.GetUnusedAssets(t.Context())
	must(t, "GetUnusedAssets", err)
	var items []string
	for _, u := range unused {
		if u.Name != path.Base(u.Item) {
			t.Fatalf("unused asset %+v: name is not the last segment of item", u)
		}
		if strings.HasPrefix(u.Item, s.box+"/") || strings.Contains(u.Item, "sisyphus-contract-"+s.tag) {
			items = append(items, u.Item)
		}
	}
	return items
}

// checkUnusedAssets: what getUnusedAssets lists, and what
// removeUnusedAsset and removeUnusedAssets remove.
func checkUnusedAssets(t *testing.T, s *suite) {
	dir := "/" + s.box + "/assets/"
	used := s.upload(t, dir, "used.txt", []byte("used"))
	unused := s.upload(t, dir, "unused.txt", []byte("unused"))
	viaQuery := s.upload(t, dir, "viaquery.pdf", []byte("%PDF"))
	must(t, "PutFile folder", s.c.PutFile(t.Context(), siyuan.PutFileRequest{Path: "/data/" + s.box + "/assets/folder-" + s.tag, IsDir: true}))
	s.newDoc(t, "unused-"+randWord(6), "[u](assets/"+path.Base(used)+") [p](assets/"+path.Base(viaQuery)+"?page=3)")
	items := s.unusedItems(t)
	for _, want := range []string{unused, s.box + "/assets/folder-" + s.tag} {
		if !slices.Contains(items, want) {
			t.Fatalf("GetUnusedAssets lists %q for the suite, want %s (a folder without trailing slash)", items, want)
		}
	}
	for _, linked := range []string{used, viaQuery} {
		if slices.Contains(items, linked) {
			t.Fatalf("GetUnusedAssets lists the linked %s", linked)
		}
	}
	// The kernel reads no arguments.
	r := s.rawJSON(t, "/api/asset/getUnusedAssets", ``)
	if r.status != http.StatusOK || !bytes.HasPrefix(r.body, []byte(`{"code":0,"msg":"","data":[`)) {
		t.Fatalf("getUnusedAssets with an empty body: HTTP %d %s", r.status, r.body)
	}

	// removeUnusedAsset removes what it is given, linked or not, and
	// answers its absolute path even when nothing was there.
	abs, err := s.c.RemoveUnusedAsset(t.Context(), unused)
	must(t, "RemoveUnusedAsset", err)
	if !strings.HasPrefix(abs, "/") && !regexp.MustCompile(`^[A-Za-z]:\\`).MatchString(abs) || !strings.HasSuffix(abs, "/data/"+unused) {
		t.Fatalf("RemoveUnusedAsset = %q, want the absolute path <workspace>/data/%s", abs, unused)
	}
	s.getMissing(t, "removed unused asset", "/data/"+unused)
	again, err := s.c.RemoveUnusedAsset(t.Context(), unused)
	must(t, "RemoveUnusedAsset again", err)
	if again != abs {
		t.Fatalf("RemoveUnusedAsset of the removed asset = %q, want the same path %q (code 0)", again, abs)
	}
	usedAbs, err := s.c.RemoveUnusedAsset(t.Context(), used)
	must(t, "RemoveUnusedAsset of a linked asset", err)
	if !strings.HasSuffix(usedAbs, "/data/"+used) {
		t.Fatalf("RemoveUnusedAsset(%s) = %q", used, usedAbs)
	}
	s.getMissing(t, "removed linked asset (the kernel does not check links)", "/data/"+used)
	wantEnvelope(t, "removeUnusedAsset without path", s.rawJSONAny(t, "/api/asset/removeUnusedAsset", `{}`), http.StatusOK, 0, "", 1)
	// The client refuses what would remove more than an asset.
	for _, p := range []string{"", " ", "assets", "assets/", "/assets/x", "assets/../conf", "assets/./x", "../x", s.box, s.box + "/x", "conf/conf.json", "assets/x?y", "assets//x"} {
		if _, err := s.c.RemoveUnusedAsset(t.Context(), p); !errors.Is(err, siyuan.ErrInvalidArgument) {
			t.Fatalf("RemoveUnusedAsset(%q): %v, want ErrInvalidArgument", p, err)
		}
	}

	// removeUnusedAssets works on the whole workspace: only when the
	// workspace has no unused asset but the suite's.
	all, err := s.c.GetUnusedAssets(t.Context())
	must(t, "GetUnusedAssets", err)
	mine := s.unusedItems(t)
	if len(all) != len(mine) {
		t.Logf("the workspace has %d unused assets besides the suite's: removeUnusedAssets not run", len(all)-len(mine))
		return
	}
	removed, err := s.c.RemoveUnusedAssets(t.Context())
	must(t, "RemoveUnusedAssets", err)
	if len(removed) != len(mine) {
		t.Fatalf("RemoveUnusedAssets removed %q, want the %d unused %q", removed, len(mine), mine)
	}
	for _, item := range mine {
		if !slices.ContainsFunc(removed, func(p string) bool { return strings.HasSuffix(p, "/data/"+item) }) {
			t.Fatalf("RemoveUnusedAssets = %q, want the absolute path of %s", removed, item)
		}
		if s.pathExists(t, "/data/"+item) {
			t.Fatalf("%s is still there", item)
		}
	}
	if got := s.unusedItems(t); len(got) != 0 {
		t.Fatalf("GetUnusedAssets after RemoveUnusedAssets lists %q", got)
	}
	if !s.pathExists(t, "/data/"+viaQuery) {
		t.Fatalf("RemoveUnusedAssets removed the linked %s", viaQuery)
	}
	if removed, err = s.c.RemoveUnusedAssets(t.Context()); err != nil || removed == nil || len(removed) != 0 {
		t.Fatalf("RemoveUnusedAssets again = %#v, %v; want []", removed, err)
	}
}

// rawJSONAny posts a JSON body and, for the kernels' two answers to a
// malformed argument (SiYuan panics into code 0 with null data, the
// embedded kernel says code -1), normalises code -1 to that, so one
// expectation covers both.
func (s *suite) rawJSONAny(t *testing.T, endpoint, body string) rawReply {
	t.Helper()
	r := s.rawJSON(t, endpoint, body)
	var env struct {
		Code int             `json:"code"`
		Data json.RawMessage `json:"data"`
	}
	if !s.k.Live && json.Unmarshal(r.body, &env) == nil && env.Code == -1 && string(env.Data) == "null" {
		r.body = []byte(envelopeBytes(0, ""))
	}
	return r
}

// checkRenameAsset: renameAsset renames the file and rewrites the links in
// the documents.
func checkRenameAsset(t *testing.T, s *suite) {
	dir := "/" + s.box + "/assets/"
	old := s.upload(t, dir, "before.txt", []byte("rename me"))
	oldBase := path.Base(old)
	doc := s.newDoc(t, "rename-"+randWord(6), "[a](assets/"+oldBase+") and [b](assets/"+oldBase+"?x=1)\n\n[stored](<"+old+">)")
	newName := "after " + s.tag
	np, err := s.c.RenameAsset(t.Context(), "assets/"+oldBase, newName)
	must(t, "RenameAsset", err)
	// "<dir of oldPath>/<filtered name>-<new id><old ext>".
	wantAssetPath(t, "RenameAsset", np, assetRe("assets", newName, ".txt"))
	newBase := path.Base(np)
	s.getMissing(t, "renamed asset's old path", "/data/"+old)
	if got, _ := s.get(t, "/data/"+s.box+"/assets/"+newBase); string(got) != "rename me" {
		t.Fatalf("renamed asset reads %q", got)
	}
	// Every occurrence of the old file name in the .sy files is replaced.
	esc := strings.ReplaceAll(newBase, " ", "%20")
	kids := s.children(t, doc)
	if len(kids) != 2 || kids[0].Markdown != "[a](assets/"+esc+") and [b](assets/"+esc+"?x=1)" ||
		kids[1].Markdown != "[stored]("+strings.ReplaceAll(s.box+"/assets/"+newBase, " ", "%20")+")" {
		t.Fatalf("links after the rename: %+v, want assets/%s", kids, esc)
	}
	assets, err := s.c.GetDocAssets(t.Context(), doc, true)
	must(t, "GetDocAssets", err)
	if w := []string{"assets/" + newBase, "assets/" + newBase + "?x=1"}; !slices.Equal(assets, w) {
		t.Fatalf("GetDocAssets after the rename = %q, want %q", assets, w)
	}
	// A name ending with an id keeps it.
	keep := "kept-20240101010101-abcdefg"
	np2, err := s.c.RenameAsset(t.Context(), "assets/"+newBase, keep)
	must(t, "RenameAsset to a name with an id", err)
	if np2 != "assets/"+keep+".txt" {
		t.Fatalf("RenameAsset to %s = %q, want assets/%s.txt", keep, np2, keep)
	}
	// The name is filtered as an upload name.
	np3, err := s.c.RenameAsset(t.Context(), np2, "x/y:z*[w]")
	must(t, "RenameAsset with specials", err)
	wantAssetPath(t, "RenameAsset with specials", np3, assetRe("assets", "x_y_z_w", ".txt"))
	// Blank or unchanged names: "" and nothing renamed.
	for _, name := range []string{"", "  ", path.Base(np3)} {
		got, err := s.c.RenameAsset(t.Context(), np3, name)
		must(t, "RenameAsset to "+name, err)
		if got != "" {
			t.Fatalf("RenameAsset(%s, %q) = %q, want \"\"", np3, name, got)
		}
	}
	if !s.pathExists(t, "/data/"+s.box+"/assets/"+path.Base(np3)) {
		t.Fatalf("%s is gone after the no-op renames", np3)
	}
	// A missing asset still gets a new path, and nothing is created.
	ghost, err := s.c.RenameAsset(t.Context(), "assets/ghost-"+s.tag+".txt", "ghost2")
	must(t, "RenameAsset of a missing asset", err)
	wantAssetPath(t, "RenameAsset of a missing asset", ghost, assetRe("assets", "ghost2", ".txt"))
	for _, p := range []string{"/data/" + ghost, "/data/" + s.box + "/" + ghost} {
		if s.pathExists(t, p) {
			t.Fatalf("renaming a missing asset created %s", p)
		}
	}
	// The query does not matter for finding the file.
	np4, err := s.c.RenameAsset(t.Context(), np3+"?page=1", "last")
	must(t, "RenameAsset with a query", err)
	wantAssetPath(t, "RenameAsset with a query", np4, assetRe("assets", "last", ".txt"))
	if !s.pathExists(t, "/data/"+s.box+"/assets/"+path.Base(np4)) {
		t.Fatalf("RenameAsset with a query did not rename %s", np3)
	}
	// Malformed arguments.
	wantEnvelope(t, "renameAsset without newName", s.rawJSONAny(t, "/api/asset/renameAsset", `{"oldPath":"assets/x"}`), http.StatusOK, 0, "", 1)
	wantEnvelope(t, "renameAsset without oldPath", s.rawJSONAny(t, "/api/asset/renameAsset", `{"newName":"x"}`), http.StatusOK, 0, "", 1)
	wantEnvelope(t, "renameAsset with an empty body", s.rawJSON(t, "/api/asset/renameAsset", ``), http.StatusOK, -1,
		"Parses request [/api/asset/renameAsset] failed: the request body is empty or truncated (EOF)", 1)
}

// checkOCRText: without an OCR engine the kernel has no text for any path.
func checkOCRText(t *testing.T, s *suite) {
	img := s.upload(t, "/"+s.box+"/assets/", "ocr.png", pngBytes())
	for _, p := range []string{"assets/" + path.Base(img), img, "assets/none-" + s.tag + ".png", "../../etc/passwd"} {
		text, err := s.c.GetImageOCRText(t.Context(), p)
		must(t, "GetImageOCRText", err)
		if text != "" {
			t.Fatalf("GetImageOCRText(%s) = %q, want \"\"", p, text)
		}
	}
	want := `{"code":0,"msg":"","data":{"text":""}}`
	for _, body := range []string{`{}`, `{"path":null}`, `{"path":"assets/x.png"}`} {
		if r := s.rawJSON(t, "/api/asset/getImageOCRText", body); r.status != http.StatusOK || string(r.body) != want {
			t.Fatalf("getImageOCRText %s: HTTP %d %s, want %s", body, r.status, r.body, want)
		}
	}
}

// checkSearchAsset: searchAsset finds data/assets files by name or path.
func checkSearchAsset(t *testing.T, s *suite) {
	word := "sac" + randWord(8)
	a := s.upload(t, "/assets/", s.globalAsset(word+"-alpha.txt"), []byte("a "+s.tag))
	s.removeLater(t, a)
	b := s.upload(t, "/assets/", s.globalAsset(word+"-beta.PNG"), []byte("b "+s.tag))
	s.removeLater(t, b)
	// A notebook's assets are not searched.
	s.upload(t, "/"+s.box+"/assets/", word+"-box.txt", []byte("c"))
	// The real kernel searches a cache it reloads shortly after data/assets
	// changes: wait for the expected number of results.
	search := func(k string, exts []string, n int) []siyuan.AssetSearchResult {
		t.Helper()
		var res []siyuan.AssetSearchResult
		s.eventually(t, "searchAsset "+k+" sees the uploads", func() bool {
			var err error
			res, err = s.c.SearchAsset(t.Context(), k, exts)
			must(t, "SearchAsset", err)
			return len(res) >= n || !s.k.Live
		})
		return res
	}
	now := time.Now().Unix()
	res := search(word, nil, 2)
	if len(res) != 2 {
		t.Fatalf("SearchAsset(%s) = %+v, want the two data/assets files", word, res)
	}
	byPath := map[string]siyuan.AssetSearchResult{}
	for _, r := range res {
		byPath[r.Path] = r
		if r.Updated < now-600 || r.Updated > now+600 {
			t.Fatalf("updated %d, want about %d (Unix seconds)", r.Updated, now)
		}
	}
	prefix := "sisyphus-contract-" + s.tag + "-"
	if got := byPath[a].HName; got != prefix+"<mark>"+word+"</mark>-alpha.txt" {
		t.Fatalf("hName of %s = %q, want the name without id, marked", a, got)
	}
	if got := byPath[b].HName; got != prefix+"<mark>"+word+"</mark>-beta.png" {
		t.Fatalf("hName of %s = %q", b, got)
	}
	// exts filters by extension, case-insensitively.
	if res := search(word, []string{".TXT"}, 1); len(res) != 1 || res[0].Path != a {
		t.Fatalf("SearchAsset(%s, .TXT) = %+v, want %s", word, res, a)
	}
	// Words: each space-separated word counts; the whole keyword ranks first.
	res = search(word+"-beta "+word, nil, 2)
	if len(res) != 2 || res[0].Path != b {
		t.Fatalf("SearchAsset(%q) = %+v, want %s first", word+"-beta "+word, res, b)
	}
	if res[0].HName != prefix+"<mark>"+word+"-beta</mark>.png" {
		t.Fatalf("hName %q, want the whole keyword marked", res[0].HName)
	}
	// The path matches too (the id is only in the path).
	id := strings.TrimSuffix(path.Base(a), ".txt")
	id = id[len(id)-22:]
	if res := search(id, nil, 1); len(res) != 1 || res[0].Path != a || strings.Contains(res[0].HName, "<mark>") {
		t.Fatalf("SearchAsset(<id>) = %+v, want %s unmarked", res, a)
	}
	if res, err := s.c.SearchAsset(t.Context(), "zz"+randWord(12), nil); err != nil || res == nil || len(res) != 0 {
		t.Fatalf("SearchAsset of nothing = %#v, %v; want []", res, err)
	}
	wantEnvelope(t, "searchAsset without k", s.rawJSONAny(t, "/api/search/searchAsset", `{}`), http.StatusOK, 0, "", 1)
	wantEnvelope(t, "searchAsset with exts not a list", s.rawJSONAny(t, "/api/search/searchAsset", `{"k":"x","exts":".txt"}`), http.StatusOK, 0, "", 1)
}
