package contract

// Plugin storage: the workspace files under data/storage/petal/<plugin>/ that
// SiYuan plugins keep their settings in (Plugin.saveData/loadData/removeData
// call putFile/getFile/removeFile there). Sisyphus stores its configuration
// where the SiYuan plugin "siyuan-plugins-mcp-sisyphus" does, so these checks
// pin down what SiYuan 3.7.3 answers for exactly those calls: status codes,
// envelopes, content types, folder creation, path handling and modTime.
//
// Destructive cases run in the suite's own folder
// /data/storage/petal/sisyphus-contract-<tag>/ (removed at the end); the real
// plugin folder is only written when the workspace has no configuration
// there, and everything written is removed again.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

const (
	petalDir  = "/data/storage/petal"
	pluginDir = petalDir + "/siyuan-plugins-mcp-sisyphus"
	// The plugin's two configuration files (JSON, no extension).
	pluginPermissions = pluginDir + "/notebookPermissions"
	pluginToolsConfig = pluginDir + "/mcpToolsConfig"

	envelopeType = "application/json; charset=utf-8" // every JSON reply
	// internalErrMsg is SiYuan's message for failures it details only in its log.
	internalErrMsg = "Internal Server Error. For details, see the SiYuan kernel log."
	// invalidNameMsg is putFile's refusal of a new file's name.
	invalidNameMsg = "invalid file path. For details, please check https://github.com/siyuan-note/siyuan/issues/14658"
)

// ------------------------------------------------------------------ helpers

// rawReply is one HTTP exchange, for checks on the wire format itself.
type rawReply struct {
	status int
	ctype  string
	body   []byte
}

func (s *suite) rawDo(t *testing.T, endpoint, ctype string, body io.Reader) rawReply {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, strings.TrimSuffix(s.k.URL, "/")+endpoint, body)
	must(t, "NewRequest", err)
	req.Header.Set("Authorization", "Token "+s.k.Token)
	req.Header.Set("Content-Type", ctype)
	resp, err := s.k.http().Do(req)
	must(t, "POST "+endpoint, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	must(t, "read reply of "+endpoint, err)
	return rawReply{status: resp.StatusCode, ctype: resp.Header.Get("Content-Type"), body: b}
}

// rawJSON posts body as it is (it need not be valid JSON).
func (s *suite) rawJSON(t *testing.T, endpoint, body string) rawReply {
	t.Helper()
	return s.rawDo(t, endpoint, "application/json", strings.NewReader(body))
}

// pathBody is {"path": p} with p JSON-escaped.
func pathBody(p string) string {
	b, _ := json.Marshal(map[string]string{"path": p})
	return string(b)
}

// rawPut posts a putFile form: the fields in order, then the file part
// "file" (named fileName) unless file is nil.
func (s *suite) rawPut(t *testing.T, fields [][2]string, fileName string, file []byte) rawReply {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, f := range fields {
		must(t, "multipart field", mw.WriteField(f[0], f[1]))
	}
	if file != nil {
		w, err := mw.CreateFormFile("file", fileName)
		must(t, "multipart file", err)
		_, err = w.Write(file)
		must(t, "multipart file", err)
	}
	must(t, "multipart close", mw.Close())
	return s.rawDo(t, "/api/file/putFile", mw.FormDataContentType(), &buf)
}

// envelopeBytes is the exact reply body SiYuan writes for an envelope with
// null data (gin's JSON rendering: keys in this order, HTML escaped).
func envelopeBytes(code int, msg string) string {
	b, _ := json.Marshal(struct {
		Code int    `json:"code"`
		Msg  string `json:"msg"`
		Data any    `json:"data"`
	}{code, msg, nil})
	return string(b)
}

// wantEnvelope requires r to be exactly HTTP status with the JSON envelope
// {code, msg, data:null}, repeated times times in the one body.
func wantEnvelope(t *testing.T, what string, r rawReply, status, code int, msg string, times int) {
	t.Helper()
	want := strings.Repeat(envelopeBytes(code, msg), times)
	if r.status != status || r.ctype != envelopeType || string(r.body) != want {
		t.Fatalf("%s: HTTP %d %q %q\nwant HTTP %d %q %q", what, r.status, r.ctype, r.body, status, envelopeType, want)
	}
}

// wantFileReply requires r to be HTTP 200 carrying exactly body as ctype.
func wantFileReply(t *testing.T, what string, r rawReply, ctype string, body []byte) {
	t.Helper()
	if r.status != http.StatusOK || r.ctype != ctype || !bytes.Equal(r.body, body) {
		t.Fatalf("%s: HTTP %d %q %.200q\nwant HTTP 200 %q %.200q", what, r.status, r.ctype, r.body, ctype, body)
	}
}

// wantAPIError requires err to be the kernel's refusal with exactly code and msg.
func wantAPIError(t *testing.T, what string, err error, code int, msg string) *siyuan.APIError {
	t.Helper()
	api := apiError(t, what, err)
	if api.Code != code || api.Msg != msg {
		t.Fatalf("%s: code %d msg %q, want code %d msg %q", what, api.Code, api.Msg, code, msg)
	}
	return api
}

// wantNotFound requires err to be the file API's "no such path".
func wantNotFound(t *testing.T, what string, err error, msg string) {
	t.Helper()
	wantAPIError(t, what, err, 404, msg)
	if !errors.Is(err, siyuan.ErrFileNotFound) {
		t.Fatalf("%s: errors.Is(err, siyuan.ErrFileNotFound) is false for %v", what, err)
	}
}

func (s *suite) put(t *testing.T, p string, body []byte) {
	t.Helper()
	must(t, "PutFile "+p, s.c.PutFile(t.Context(), siyuan.PutFileRequest{Path: p, Body: bytes.NewReader(body)}))
}

// get reads a whole file through the client.
func (s *suite) get(t *testing.T, p string) ([]byte, string) {
	t.Helper()
	rc, ctype, err := s.c.GetFile(t.Context(), p)
	must(t, "GetFile "+p, err)
	return readAll(t, rc), ctype
}

// getMissing requires GetFile(p) to be the kernel's 404.
func (s *suite) getMissing(t *testing.T, what, p string) {
	t.Helper()
	rc, _, err := s.c.GetFile(t.Context(), p)
	if err == nil {
		t.Fatalf("%s: GetFile(%q) returned content %.200q, want 404", what, p, readAll(t, rc))
	}
	wantNotFound(t, what+": GetFile "+p, err, "file does not exist")
}

func (s *suite) readDir(t *testing.T, p string) []siyuan.DirEntry {
	t.Helper()
	entries, err := s.c.ReadDir(t.Context(), p)
	must(t, "ReadDir "+p, err)
	return entries
}

// pathExists reports whether a workspace path exists, by listing its parent
// (no side effect; files and folders alike).
func (s *suite) pathExists(t *testing.T, p string) bool {
	t.Helper()
	i := strings.LastIndex(p, "/")
	entries, err := s.c.ReadDir(t.Context(), p[:i])
	if errors.Is(err, siyuan.ErrFileNotFound) {
		return false
	}
	must(t, "ReadDir "+p[:i], err)
	return slices.ContainsFunc(entries, func(e siyuan.DirEntry) bool { return e.Name == p[i+1:] })
}

// petalCase is a fresh folder for one check inside the suite's petal folder;
// it does not exist yet.
func (s *suite) petalCase(t *testing.T, name string) string {
	t.Helper()
	dir := s.petal + "/" + name
	if s.pathExists(t, dir) {
		t.Fatalf("%s exists before the check", dir)
	}
	return dir
}

// kernelSeconds is the kernel's clock, in Unix seconds.
func (s *suite) kernelSeconds(t *testing.T) int64 {
	t.Helper()
	ms, err := s.c.CurrentTime(t.Context())
	must(t, "CurrentTime", err)
	return ms / 1000
}

func entryNames(entries []siyuan.DirEntry) []string {
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name
	}
	return names
}

// bigJSON is a configuration-like JSON document of about 1.2 MiB.
func bigJSON() []byte {
	type tool struct {
		Name    string `json:"name"`
		Enabled bool   `json:"enabled"`
		Desc    string `json:"desc"`
	}
	tools := make([]tool, 14000)
	for i := range tools {
		tools[i] = tool{fmt.Sprintf("t%06d", i), i%2 == 0, strings.Repeat("x", 40)}
	}
	b, _ := json.Marshal(map[string]any{"tools": tools})
	return b
}

// ------------------------------------------------------------------ checks

// checkStorageMissing: reading plugin configuration that was never saved.
// getFile answers HTTP 202 with an envelope, never the file body; a missing
// file, a missing plugin folder and a missing data/storage/petal are all
// code 404 "file does not exist", an existing folder is 409.
func checkStorageMissing(t *testing.T, s *suite) {
	missingBody := envelopeBytes(404, "file does not exist")
	// In the suite's own folder, which never exists at this point.
	dir := s.petalCase(t, "missing")
	for _, p := range []string{dir + "/notebookPermissions", dir, dir + "/a/b/mcpToolsConfig"} {
		wantEnvelope(t, "raw getFile "+p, s.rawJSON(t, "/api/file/getFile", pathBody(p)), http.StatusAccepted, 404, "file does not exist", 1)
		s.getMissing(t, "missing", p)
	}
	// The real plugin folder and data/storage/petal: 404 when missing, 409
	// "path is a directory" when the workspace has them.
	for _, p := range []string{petalDir, pluginDir, pluginPermissions, pluginToolsConfig} {
		r := s.rawJSON(t, "/api/file/getFile", pathBody(p))
		if s.pathExists(t, p) {
			if p == pluginPermissions || p == pluginToolsConfig {
				t.Logf("%s exists in this workspace (the plugin's configuration): not checked as missing", p)
				continue
			}
			wantEnvelope(t, "raw getFile of the existing folder "+p, r, http.StatusAccepted, 409, "path is a directory", 1)
			continue
		}
		if string(r.body) != missingBody {
			t.Fatalf("getFile %s: %q, want %q", p, r.body, missingBody)
		}
		wantEnvelope(t, "raw getFile "+p, r, http.StatusAccepted, 404, "file does not exist", 1)
		s.getMissing(t, "missing", p)
	}
	// readDir and removeFile say "path does not exist", with HTTP 200.
	wantEnvelope(t, "raw readDir of a missing folder", s.rawJSON(t, "/api/file/readDir", pathBody(dir)), http.StatusOK, 404, "path does not exist", 1)
	_, err := s.c.ReadDir(t.Context(), dir)
	wantNotFound(t, "ReadDir of a missing folder", err, "path does not exist")
	wantEnvelope(t, "raw removeFile of a missing file", s.rawJSON(t, "/api/file/removeFile", pathBody(dir+"/notebookPermissions")), http.StatusOK, 404, "path does not exist", 1)
	wantNotFound(t, "RemoveFile of a missing file", s.c.RemoveFile(t.Context(), dir+"/notebookPermissions"), "path does not exist")
	if s.pathExists(t, dir) {
		t.Fatalf("reading %s created it", dir)
	}
}

// checkStoragePluginRoundtrip writes, reads, lists, overwrites and removes
// the plugin's own two files as the plugin does (saveData: putFile with
// path, isDir=false and the file named after the last path segment, no
// modTime), unless the workspace already has them.
func checkStoragePluginRoundtrip(t *testing.T, s *suite) {
	for _, p := range []string{pluginPermissions, pluginToolsConfig} {
		if s.pathExists(t, p) {
			t.Skipf("%s exists: this workspace has the plugin's configuration, which the suite does not touch", p)
		}
	}
	petalExisted, dirExisted := s.pathExists(t, petalDir), s.pathExists(t, pluginDir)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, p := range []string{pluginPermissions, pluginToolsConfig} {
			if err := s.c.RemoveFile(ctx, p); err != nil && !errors.Is(err, siyuan.ErrFileNotFound) {
				t.Errorf("cleanup: RemoveFile(%s): %v", p, err)
			}
		}
		if !dirExisted {
			if entries, err := s.c.ReadDir(ctx, pluginDir); err == nil && len(entries) == 0 {
				if err := s.c.RemoveFile(ctx, pluginDir); err != nil {
					t.Errorf("cleanup: RemoveFile(%s): %v", pluginDir, err)
				}
			}
		}
		// data/storage/petal is left to the suite's cleanup.
	})

	perms := []byte(`{"20260101000000-abcdefg":"readonly","20260101000001-hijklmn":"write"}`)
	tools := []byte(`{"document":{"enabled":true},"block":{"enabled":false}}`)
	before := s.kernelSeconds(t)
	r := s.rawPut(t, [][2]string{{"path", pluginPermissions}, {"isDir", "false"}}, "notebookPermissions", perms)
	wantEnvelope(t, "raw putFile "+pluginPermissions, r, http.StatusOK, 0, "", 1)
	s.put(t, pluginToolsConfig, tools)
	after := s.kernelSeconds(t)

	// The missing folders were made (putFile creates every parent).
	if !petalExisted || !dirExisted {
		petal := s.readDir(t, "/data/storage")
		if i := slices.IndexFunc(petal, func(e siyuan.DirEntry) bool { return e.Name == "petal" }); i < 0 || !petal[i].IsDir {
			t.Fatalf("/data/storage lists %+v, want the folder petal", petal)
		}
		plugins := s.readDir(t, petalDir)
		if i := slices.IndexFunc(plugins, func(e siyuan.DirEntry) bool { return e.Name == "siyuan-plugins-mcp-sisyphus" }); i < 0 || !plugins[i].IsDir || plugins[i].IsSymlink {
			t.Fatalf("%s lists %+v, want the folder siyuan-plugins-mcp-sisyphus", petalDir, plugins)
		}
	}
	// A file without extension holding JSON is served as application/json.
	for p, want := range map[string][]byte{pluginPermissions: perms, pluginToolsConfig: tools} {
		got, ctype := s.get(t, p)
		if !bytes.Equal(got, want) || ctype != "application/json" {
			t.Fatalf("GetFile %s = %q (%s), want %q (application/json)", p, got, ctype, want)
		}
		wantFileReply(t, "raw getFile "+p, s.rawJSON(t, "/api/file/getFile", pathBody(p)), "application/json", want)
	}
	entries := s.readDir(t, pluginDir)
	var ours []siyuan.DirEntry
	for _, e := range entries {
		if e.Name == "notebookPermissions" || e.Name == "mcpToolsConfig" {
			ours = append(ours, e)
		}
	}
	if !dirExisted && len(entries) != 2 {
		t.Fatalf("ReadDir %s = %+v, want just the two files", pluginDir, entries)
	}
	if names := entryNames(ours); !slices.Equal(names, []string{"mcpToolsConfig", "notebookPermissions"}) {
		t.Fatalf("ReadDir %s names %v, want [mcpToolsConfig notebookPermissions] (sorted)", pluginDir, names)
	}
	for _, e := range ours {
		if e.IsDir || e.IsSymlink || e.Updated < before-1 || e.Updated > after+1 {
			t.Fatalf("entry %+v, want a plain file updated between %d and %d (no modTime: now)", e, before, after)
		}
	}
	// Overwrite: the next read sees the new bytes.
	perms2 := []byte(`{}`)
	s.put(t, pluginPermissions, perms2)
	if got, ctype := s.get(t, pluginPermissions); !bytes.Equal(got, perms2) || ctype != "application/json" {
		t.Fatalf("after overwrite GetFile = %q (%s), want %q", got, ctype, perms2)
	}
	// Remove (the plugin's removeData): then the file is "not found".
	for _, p := range []string{pluginPermissions, pluginToolsConfig} {
		must(t, "RemoveFile "+p, s.c.RemoveFile(t.Context(), p))
		s.getMissing(t, "after remove", p)
		wantNotFound(t, "RemoveFile again "+p, s.c.RemoveFile(t.Context(), p), "path does not exist")
	}
	if !dirExisted {
		if entries := s.readDir(t, pluginDir); len(entries) != 0 {
			t.Fatalf("ReadDir %s after removing both files = %+v, want []", pluginDir, entries)
		}
		must(t, "RemoveFile "+pluginDir, s.c.RemoveFile(t.Context(), pluginDir))
		_, err := s.c.ReadDir(t.Context(), pluginDir)
		wantNotFound(t, "ReadDir of the removed plugin folder", err, "path does not exist")
	}
}

// checkStoragePutMakesFolders: putFile creates every missing parent folder.
func checkStoragePutMakesFolders(t *testing.T, s *suite) {
	dir := s.petalCase(t, "mkdirs")
	p := dir + "/a/b/notebookPermissions"
	body := []byte(`{"nested":true}`)
	s.put(t, p, body)
	for _, step := range []struct{ dir, name string }{{s.petal, "mkdirs"}, {dir, "a"}, {dir + "/a", "b"}} {
		entries := s.readDir(t, step.dir)
		i := slices.IndexFunc(entries, func(e siyuan.DirEntry) bool { return e.Name == step.name })
		if i < 0 || !entries[i].IsDir || entries[i].IsSymlink {
			t.Fatalf("ReadDir %s = %+v, want the folder %s", step.dir, entries, step.name)
		}
	}
	// The raw readDir entry has exactly these fields and JSON types.
	r := s.rawJSON(t, "/api/file/readDir", pathBody(dir+"/a/b"))
	var env struct {
		Code int              `json:"code"`
		Data []map[string]any `json:"data"`
	}
	if r.status != http.StatusOK || r.ctype != envelopeType || json.Unmarshal(r.body, &env) != nil || env.Code != 0 || len(env.Data) != 1 {
		t.Fatalf("raw readDir: HTTP %d %q %q", r.status, r.ctype, r.body)
	}
	e := env.Data[0]
	var keys []string
	for k := range e {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"isDir", "isSymlink", "name", "updated"}) {
		t.Fatalf("readDir entry keys %v, want [isDir isSymlink name updated]", keys)
	}
	if n, ok := e["updated"].(float64); e["name"] != "notebookPermissions" || e["isDir"] != false || e["isSymlink"] != false || !ok || n != float64(int64(n)) {
		t.Fatalf("readDir entry %v, want name notebookPermissions, isDir/isSymlink false, updated whole seconds", e)
	}
	if got, _ := s.get(t, p); !bytes.Equal(got, body) {
		t.Fatalf("GetFile = %q, want %q", got, body)
	}
}

// checkStorageContentTypes: getFile returns the stored bytes exactly and
// names their type by extension, else by sniffing the content (SiYuan uses
// gabriel-vasile/mimetype; the embedded kernel uses the same version).
func checkStorageContentTypes(t *testing.T, s *suite) {
	dir := s.petalCase(t, "types")
	cases := []struct {
		name  string
		body  []byte
		ctype string
	}{
		{"object", []byte(`{"box":"readonly"}`), "application/json"},
		{"array", []byte(`[1,2,3]`), "application/json"},
		{"spaced", []byte("  \n{ }\n"), "application/json"},
		{"utf8", []byte(`{"a":"中文"}` + "\n"), "application/json"},
		{"latin1", []byte("{\"a\":\"caf\xe9\"}"), "application/json"}, // not UTF-8, still JSON
		{"empty", []byte{}, "text/plain"},
		{"truncated", []byte(`{"a":1`), "text/plain; charset=utf-8"},
		{"number", []byte(`42`), "text/plain; charset=utf-8"},
		{"null", []byte(`null`), "text/plain; charset=utf-8"},
		{"text", []byte("plain text"), "text/plain; charset=utf-8"},
		{"utf16bom", []byte("\xff\xfe\x00\x80binary\xc3\x28"), "text/plain; charset=utf-16le"},
		{"binary", []byte("\x00\x01\x02\x03\xff\xfe\xfd"), "application/octet-stream"},
		{"png", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR"), "image/png"},
		{"config.json", []byte(`{"a":1}`), "application/json"}, // by extension
		{"big", bigJSON(), "application/json"},
	}
	for _, c := range cases {
		p := dir + "/" + c.name
		s.put(t, p, c.body)
		got, ctype := s.get(t, p)
		if !bytes.Equal(got, c.body) {
			t.Fatalf("%s: GetFile returned %d bytes (sha256 %x), want %d (sha256 %x)", c.name, len(got), sha256.Sum256(got), len(c.body), sha256.Sum256(c.body))
		}
		if ctype != c.ctype {
			t.Fatalf("%s: Content-Type %q, want %q", c.name, ctype, c.ctype)
		}
	}
}

// checkStorageReadAfterWrite: every getFile sees the putFile answered just
// before it, whatever the sizes (a shorter file leaves nothing behind).
func checkStorageReadAfterWrite(t *testing.T, s *suite) {
	p := s.petalCase(t, "raw") + "/notebookPermissions"
	big := bytes.Repeat([]byte(`{"k":"0123456789abcdef"},`), 4096)
	for i := range 20 {
		var body []byte
		switch i % 3 {
		case 0:
			body = append([]byte(fmt.Sprintf("[%d,", i)), big...)
		case 1:
			body = []byte{}
		default:
			body = []byte(fmt.Sprintf(`{"v":%d}`, i))
		}
		s.put(t, p, body)
		if got, _ := s.get(t, p); !bytes.Equal(got, body) {
			t.Fatalf("write %d: GetFile returned %d bytes %.60q, want %d %.60q", i, len(got), got, len(body), body)
		}
	}
}

// checkStorageModTime: modTime is milliseconds since the epoch and becomes
// the file's (or new folder's) modification time, which readDir reports in
// whole seconds; without it the time is "now", also on overwrite. An
// unparsable modTime is code 500 after the file was written.
func checkStorageModTime(t *testing.T, s *suite) {
	dir := s.petalCase(t, "modtime")
	updated := func(name string) int64 {
		t.Helper()
		for _, e := range s.readDir(t, dir) {
			if e.Name == name {
				return e.Updated
			}
		}
		t.Fatalf("%s not listed in %s", name, dir)
		return 0
	}
	put := func(name string, ms int64, isDir bool) {
		t.Helper()
		req := siyuan.PutFileRequest{Path: dir + "/" + name, ModTime: ms, IsDir: isDir}
		if !isDir {
			req.Body = strings.NewReader(`{"m":1}`)
		}
		must(t, "PutFile "+name, s.c.PutFile(t.Context(), req))
	}
	for _, c := range []struct {
		name string
		ms   int64
		want int64
	}{
		{"past", 1600000000123, 1600000000},
		{"future", 4102444800999, 4102444800},
		{"seconds-by-mistake", 1600000000, 1600000}, // the unit is ms, not s
	} {
		put(c.name, c.ms, false)
		if got := updated(c.name); got != c.want {
			t.Fatalf("%s: modTime %d ms → updated %d, want %d", c.name, c.ms, got, c.want)
		}
	}
	// Overwriting without modTime sets "now" again.
	before := s.kernelSeconds(t)
	put("past", 0, false)
	after := s.kernelSeconds(t)
	if got := updated("past"); got < before-1 || got > after+1 {
		t.Fatalf("overwrite without modTime: updated %d, want now (%d..%d)", got, before, after)
	}
	// A new folder takes modTime too.
	put("folder", 1600000000123, true)
	if got := updated("folder"); got != 1600000000 {
		t.Fatalf("folder with modTime: updated %d, want 1600000000", got)
	}
	// An unparsable modTime: the file is written, then the reply is code 500.
	before = s.kernelSeconds(t)
	r := s.rawPut(t, [][2]string{{"path", dir + "/bad-modtime"}, {"isDir", "false"}, {"modTime", "abc"}}, "bad-modtime", []byte(`{"written":true}`))
	wantEnvelope(t, "putFile with modTime abc", r, http.StatusOK, 500, `strconv.ParseInt: parsing "abc": invalid syntax`, 1)
	r = s.rawPut(t, [][2]string{{"path", dir + "/float-modtime"}, {"isDir", "false"}, {"modTime", "1600000000123.5"}}, "f", []byte(`{}`))
	wantEnvelope(t, "putFile with a fractional modTime", r, http.StatusOK, 500, `strconv.ParseInt: parsing "1600000000123.5": invalid syntax`, 1)
	after = s.kernelSeconds(t)
	if got, _ := s.get(t, dir+"/bad-modtime"); string(got) != `{"written":true}` {
		t.Fatalf("file after the failed modTime: %q", got)
	}
	if got := updated("bad-modtime"); got < before-1 || got > after+1 {
		t.Fatalf("file after the failed modTime: updated %d, want now (%d..%d)", got, before, after)
	}
}

// checkStorageReadDir: readDir's answers for the cases a configuration
// loader meets. Unlike getFile and removeFile, its path is not trimmed.
func checkStorageReadDir(t *testing.T, s *suite) {
	dir := s.petalCase(t, "readdir")
	s.put(t, dir+"/b", []byte(`{}`))
	must(t, "PutFile isDir", s.c.PutFile(t.Context(), siyuan.PutFileRequest{Path: dir + "/a", IsDir: true}))
	s.put(t, dir+"/c", []byte(`{}`))
	entries := s.readDir(t, dir)
	if names := entryNames(entries); !slices.Equal(names, []string{"a", "b", "c"}) {
		t.Fatalf("ReadDir names %v, want [a b c] (sorted by name)", names)
	}
	if !entries[0].IsDir || entries[1].IsDir || entries[2].IsDir {
		t.Fatalf("ReadDir = %+v, want a folder then two files", entries)
	}
	// An empty folder is [], not null.
	wantRaw := func(what, body string, want string) {
		t.Helper()
		r := s.rawJSON(t, "/api/file/readDir", body)
		if r.status != http.StatusOK || r.ctype != envelopeType || string(r.body) != want {
			t.Fatalf("%s: HTTP %d %q %q, want 200 %q", what, r.status, r.ctype, r.body, want)
		}
	}
	wantRaw("readDir of an empty folder", pathBody(dir+"/a"), `{"code":0,"msg":"","data":[]}`)
	// Same listing without the leading slash, with a trailing one, doubled.
	for _, p := range []string{dir[1:], dir + "/", "/" + dir, dir + "/a/.."} {
		if names := entryNames(s.readDir(t, p)); !slices.Equal(names, []string{"a", "b", "c"}) {
			t.Fatalf("ReadDir(%q) names %v, want [a b c]", p, names)
		}
	}
	notDir := func(what, p string, code int, msg string) {
		t.Helper()
		wantEnvelope(t, what, s.rawJSON(t, "/api/file/readDir", pathBody(p)), http.StatusOK, code, msg, 1)
		_, err := s.c.ReadDir(t.Context(), p)
		wantAPIError(t, what, err, code, msg)
	}
	notDir("readDir of a file", dir+"/b", 409, "path is not a directory")
	notDir("readDir under a file", dir+"/b/x", 500, internalErrMsg)
	notDir("readDir of a missing folder", dir+"/none", 404, "path does not exist")
	notDir("readDir with surrounding spaces", " "+dir+" ", 404, "path does not exist") // not trimmed
	notDir("readDir above the workspace", "/..", 403, "permission denied")
	notDir("readDir far above the workspace", dir+"/../../../../../..", 403, "permission denied")
	// The empty path is the workspace root; blanks are a (missing) name.
	r := s.rawJSON(t, "/api/file/readDir", pathBody(""))
	var root struct {
		Code int               `json:"code"`
		Data []siyuan.DirEntry `json:"data"`
	}
	if r.status != http.StatusOK || json.Unmarshal(r.body, &root) != nil || root.Code != 0 {
		t.Fatalf("readDir of \"\": HTTP %d %q", r.status, r.body)
	}
	for _, want := range []string{"conf", "data", "temp"} {
		if !slices.ContainsFunc(root.Data, func(e siyuan.DirEntry) bool { return e.Name == want && e.IsDir }) {
			t.Fatalf("readDir of \"\" = %v, want the workspace root (with %s/)", entryNames(root.Data), want)
		}
	}
	wantEnvelope(t, "readDir of blanks", s.rawJSON(t, "/api/file/readDir", pathBody("   ")), http.StatusOK, 404, "path does not exist", 1)
}

// checkStorageRemove: removeFile of files and folders (recursive).
func checkStorageRemove(t *testing.T, s *suite) {
	dir := s.petalCase(t, "remove")
	s.put(t, dir+"/notebookPermissions", []byte(`{}`))
	s.put(t, dir+"/sub/deeper/mcpToolsConfig", []byte(`{}`))
	wantEnvelope(t, "raw removeFile of a file", s.rawJSON(t, "/api/file/removeFile", pathBody(dir+"/notebookPermissions")), http.StatusOK, 0, "", 1)
	s.getMissing(t, "removed file", dir+"/notebookPermissions")
	wantEnvelope(t, "raw removeFile again", s.rawJSON(t, "/api/file/removeFile", pathBody(dir+"/notebookPermissions")), http.StatusOK, 404, "path does not exist", 1)
	wantNotFound(t, "RemoveFile again", s.c.RemoveFile(t.Context(), dir+"/notebookPermissions"), "path does not exist")
	// A folder goes with everything in it.
	must(t, "RemoveFile folder", s.c.RemoveFile(t.Context(), dir+"/sub"))
	s.getMissing(t, "file in a removed folder", dir+"/sub/deeper/mcpToolsConfig")
	if entries := s.readDir(t, dir); len(entries) != 0 {
		t.Fatalf("ReadDir after removing everything = %+v", entries)
	}
	// The path is trimmed.
	s.put(t, dir+"/spaced", []byte(`{}`))
	must(t, "RemoveFile with surrounding spaces", s.c.RemoveFile(t.Context(), " "+dir+"/spaced\t"))
	s.getMissing(t, "removed with a trimmed path", dir+"/spaced")
	// Refusals.
	s.put(t, dir+"/file", []byte(`{}`))
	wantAPIError(t, "RemoveFile under a file", s.c.RemoveFile(t.Context(), dir+"/file/x"), 500, internalErrMsg)
	wantAPIError(t, "RemoveFile above the workspace", s.c.RemoveFile(t.Context(), "/.."), 403, "permission denied")
	wantAPIError(t, "RemoveFile far above", s.c.RemoveFile(t.Context(), dir+"/../../../../../../etc"), 403, "permission denied")
	wantEnvelope(t, "removeFile of blanks", s.rawJSON(t, "/api/file/removeFile", pathBody("  ")), http.StatusOK, -1, "Field [path] must not be empty", 1)
	wantEnvelope(t, "removeFile without path", s.rawJSON(t, "/api/file/removeFile", `{}`), http.StatusOK, -1, "Field [path] is required", 1)
	if got, _ := s.get(t, dir+"/file"); string(got) != `{}` {
		t.Fatalf("file after the refusals: %q", got)
	}
}

// checkStoragePathTricks: how getFile and putFile resolve workspace paths.
// The path is relative to the workspace root (not to data/), the leading
// slash is optional, white space around it is trimmed, "." and ".." are
// resolved lexically and must stay inside the workspace (403 "permission
// denied" otherwise). An admin token may read conf/conf.json; SiYuan's list
// of refused files (conf/conf.json, data/snippets/conf.json, data/templates/,
// data/.siyuan/publishAccess.json) applies only to non-admin roles.
func checkStoragePathTricks(t *testing.T, s *suite) {
	dir := s.petalCase(t, "paths")
	p := dir + "/cfg"
	body := []byte(`{"seed":1}`)
	s.put(t, p, body)
	get := func(q string) rawReply {
		t.Helper()
		return s.rawJSON(t, "/api/file/getFile", pathBody(q))
	}
	for _, q := range []string{p[1:], "//data//storage/petal/./" + strings.TrimPrefix(p, petalDir+"/"), p + "/", " \t" + p + "\n", "/conf/.." + p, dir + "/x/../cfg"} {
		wantFileReply(t, fmt.Sprintf("getFile(%q)", q), get(q), "application/json", body)
	}
	for _, q := range []string{
		strings.TrimPrefix(p, "/data"),         // relative to the workspace, not to data/
		strings.ReplaceAll(p, "/", `\`),        // backslashes are name characters (Linux)
		p + "/x",                               // under a file
		p + "\x00",                             // NUL: the file system refuses it
		pluginDir + "/../../../conf/conf.json", // lands in data/conf/conf.json
		dir + "/%63fg",                         // no URL decoding
	} {
		if strings.Contains(q, `\`) && runtime.GOOS == "windows" && !s.k.Live {
			continue // an embedded kernel on Windows has Windows separators, as SiYuan there
		}
		wantEnvelope(t, fmt.Sprintf("getFile(%q)", q), get(q), http.StatusAccepted, 404, "file does not exist", 1)
	}
	for _, q := range []string{"/..", "../x", "/../conf/conf.json", "/data/../../x", pluginDir + "/../../../../../etc/passwd"} {
		wantEnvelope(t, fmt.Sprintf("getFile(%q)", q), get(q), http.StatusAccepted, 403, "permission denied", 1)
		_, _, err := s.c.GetFile(t.Context(), q)
		wantAPIError(t, fmt.Sprintf("GetFile(%q)", q), err, 403, "permission denied")
	}
	wantEnvelope(t, "getFile of the workspace root", get("/"), http.StatusAccepted, 409, "path is a directory", 1)
	// Four ".." from the plugin folder reach conf/conf.json, which an admin
	// token may read (it holds the API token: not printed here).
	r := get(pluginDir + "/../../../../conf/conf.json")
	var conf map[string]json.RawMessage
	if r.status != http.StatusOK || r.ctype != "application/json" || json.Unmarshal(r.body, &conf) != nil || conf["api"] == nil {
		t.Fatalf("getFile of conf/conf.json with an admin token: HTTP %d %q (%d bytes), want 200 application/json with an api object", r.status, r.ctype, len(r.body))
	}

	// putFile resolves paths the same way.
	must(t, "PutFile without the leading slash", s.c.PutFile(t.Context(), siyuan.PutFileRequest{Path: dir[1:] + "/noslash", Body: strings.NewReader(`{"n":1}`)}))
	if got, _ := s.get(t, dir+"/noslash"); string(got) != `{"n":1}` {
		t.Fatalf("file put without the leading slash reads %q", got)
	}
	must(t, "PutFile with surrounding spaces", s.c.PutFile(t.Context(), siyuan.PutFileRequest{Path: " " + dir + "/spaced ", Body: strings.NewReader(`{"s":1}`)}))
	if got, _ := s.get(t, dir+"/spaced"); string(got) != `{"s":1}` {
		t.Fatalf("file put with surrounding spaces reads %q", got)
	}
	putErr := func(what, q string, isDir bool, code int, msg string) {
		t.Helper()
		req := siyuan.PutFileRequest{Path: q, IsDir: isDir}
		if !isDir {
			req.Body = strings.NewReader(`{"x":1}`)
		}
		wantAPIError(t, what, s.c.PutFile(t.Context(), req), code, msg)
	}
	putErr("PutFile above the workspace", "/..", false, 403, "permission denied")
	putErr("PutFile far above", dir+"/../../../../../../x", false, 403, "permission denied")
	putErr("PutFile of the workspace root", "/", false, 400, "path is a directory")
	putErr("PutFile of a folder", dir, false, 400, "path is a directory")
	for _, name := range []string{"a#b", "bad:name", "a?b", strings.Repeat("x", 190)} {
		putErr("PutFile of a new file named "+name, dir+"/"+name, false, 400, invalidNameMsg)
	}
	if !(runtime.GOOS == "windows" && !s.k.Live) {
		putErr("PutFile with backslashes", strings.ReplaceAll(dir+"/bs", "/", `\`), false, 400, invalidNameMsg)
	}
	// Under a file: its folders cannot be made. The message names the
	// kernel's absolute path of the file in the way.
	for _, isDir := range []bool{false, true} {
		req := siyuan.PutFileRequest{Path: p + "/child", IsDir: isDir}
		if !isDir {
			req.Body = strings.NewReader(`{}`)
		}
		api := apiError(t, "PutFile under a file", s.c.PutFile(t.Context(), req))
		if suffix := p + ": not a directory"; api.Code != -1 || !strings.HasPrefix(api.Msg, "mkdir ") || !strings.HasSuffix(api.Msg, suffix) {
			t.Fatalf("PutFile under a file (isDir %v): code %d msg %q, want -1 \"mkdir <workspace>%s\"", isDir, api.Code, api.Msg, suffix)
		}
	}
	wantEnvelope(t, "putFile with an empty path", s.rawPut(t, [][2]string{{"path", ""}, {"isDir", "false"}}, "x", []byte(`{}`)), http.StatusOK, 400, "path must not be empty", 1)
	wantEnvelope(t, "putFile without a file", s.rawPut(t, [][2]string{{"path", dir + "/nofile"}, {"isDir", "false"}}, "", nil), http.StatusOK, 400, "Field [file] must not be empty", 1)
	// The file part's own name does not matter, only path.
	r = s.rawPut(t, [][2]string{{"path", dir + "/target"}, {"isDir", "false"}}, "other-name.txt", []byte("abc"))
	wantEnvelope(t, "putFile with another file name", r, http.StatusOK, 0, "", 1)
	if got, _ := s.get(t, dir+"/target"); string(got) != "abc" {
		t.Fatalf("target reads %q", got)
	}
	if s.pathExists(t, dir+"/other-name.txt") {
		t.Fatal("putFile wrote the part's file name")
	}
	if got, _ := s.get(t, p); !bytes.Equal(got, body) {
		t.Fatalf("%s changed to %q", p, got)
	}
}

// checkStorageArgErrors: argument errors of the three JSON file endpoints.
// getFile answers them with HTTP 202; readDir and removeFile with HTTP 200,
// and an unparsable body there gets its envelope twice in one reply.
func checkStorageArgErrors(t *testing.T, s *suite) {
	for _, ep := range []struct {
		path   string
		status int
		twice  int // envelopes for an unparsable body
		blank  bool
	}{
		{"/api/file/getFile", http.StatusAccepted, 1, true},
		{"/api/file/readDir", http.StatusOK, 2, false},
		{"/api/file/removeFile", http.StatusOK, 2, true},
	} {
		for _, c := range []struct {
			body string
			msg  string
		}{
			{`{}`, "Field [path] is required"},
			{`{"path":null}`, "Field [path] is required"},
			{`null`, "Field [path] is required"},
			{`{"path":1}`, "Field [path] should be of type [String]"},
			{`{"path":["/data"]}`, "Field [path] should be of type [String]"},
		} {
			wantEnvelope(t, ep.path+" "+c.body, s.rawJSON(t, ep.path, c.body), ep.status, -1, c.msg, 1)
		}
		if ep.blank {
			wantEnvelope(t, ep.path+" with a blank path", s.rawJSON(t, ep.path, pathBody(" \t")), ep.status, -1, "Field [path] must not be empty", 1)
		}
		wantEnvelope(t, ep.path+" with a truncated body", s.rawJSON(t, ep.path, `{"path":`), ep.status, -1,
			"Parses request ["+ep.path+"] failed: unexpected EOF", ep.twice)
		wantEnvelope(t, ep.path+" with an empty body", s.rawJSON(t, ep.path, ``), ep.status, -1,
			"Parses request ["+ep.path+"] failed: the request body is empty or truncated (EOF)", ep.twice)
		wantEnvelope(t, ep.path+" with an array body", s.rawJSON(t, ep.path, `[]`), ep.status, -1,
			"Parses request ["+ep.path+"] failed: json: cannot unmarshal array into Go value of type map[string]interface {}", ep.twice)
	}
}
