package embedded

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// ixRaw posts a JSON body and returns the raw response.
func (e *ixEnv) raw(endpoint string, body any) (int, http.Header, []byte) {
	e.t.Helper()
	data, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+endpoint, bytes.NewReader(data))
	req.Header.Set("Authorization", "Token t")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

// ixPart is one multipart field: a value, or a file when file is set.
type ixPart struct {
	name, value, file string
	data              []byte
}

func ixMultipartRequest(t *testing.T, endpoint string, parts ...ixPart) *http.Request {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, p := range parts {
		if p.file == "" {
			mw.WriteField(p.name, p.value)
			continue
		}
		w, _ := mw.CreateFormFile(p.name, p.file)
		w.Write(p.data)
	}
	mw.Close()
	req := httptest.NewRequest(http.MethodPost, endpoint, &buf)
	req.Header.Set("Authorization", "Token t")
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return req
}

func (e *ixEnv) multipart(endpoint string, parts ...ixPart) ixReply {
	e.t.Helper()
	req := ixMultipartRequest(e.t, e.srv.URL+endpoint, parts...)
	req.RequestURI = ""
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var r ixReply
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		e.t.Fatalf("%s: decode: %v", endpoint, err)
	}
	r.Status = resp.StatusCode
	return r
}

func (e *ixEnv) write(rel, content string) string {
	e.t.Helper()
	p := filepath.Join(e.k.Dir(), filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

func TestGetFile(t *testing.T) {
	e := ixOpen(t)
	e.write("data/storage/hello.txt", "hello from sisyphus\n")
	e.write("data/storage/blob", "\x89PNG\r\n\x1a\n....")
	e.write("data/storage/petal/plugin/config", `{"a":1}`)
	e.write("data/storage/petal/plugin/empty", "")
	e.write("data/storage/petal/plugin/utf16", "\xff\xfe\x00\x80binary")
	e.write("data/storage/petal/plugin/bin", "\x00\x01\x02\x03\xff")
	outside := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(outside, []byte("secret"), 0o644)
	os.Symlink(outside, filepath.Join(e.k.Dir(), "data", "storage", "escape.txt"))
	os.Symlink(filepath.Dir(outside), filepath.Join(e.k.Dir(), "data", "storage", "escapedir"))
	os.Symlink("hello.txt", filepath.Join(e.k.Dir(), "data", "storage", "inside.txt"))

	tests := []struct {
		name   string
		body   any
		status int
		code   int    // envelope code when status is 202
		ctype  string // content type when status is 200
		body2  string
	}{
		{"text", map[string]any{"path": "/data/storage/hello.txt"}, 200, 0, "text/plain; charset=utf-8", "hello from sisyphus\n"},
		{"relative form", map[string]any{"path": "data/storage/hello.txt"}, 200, 0, "text/plain; charset=utf-8", "hello from sisyphus\n"},
		{"sniffed", map[string]any{"path": "/data/storage/blob"}, 200, 0, "image/png", ""},
		{"symlink inside", map[string]any{"path": "/data/storage/inside.txt"}, 200, 0, "text/plain; charset=utf-8", "hello from sisyphus\n"},
		{"conf readable by admin", map[string]any{"path": "/conf/conf.json"}, 200, 0, "application/json", ""},
		// SiYuan sniffs with gabriel-vasile/mimetype, not net/http.
		{"sniffed json", map[string]any{"path": "/data/storage/petal/plugin/config"}, 200, 0, "application/json", `{"a":1}`},
		{"sniffed empty", map[string]any{"path": "/data/storage/petal/plugin/empty"}, 200, 0, "text/plain", ""},
		{"sniffed utf-16 bom", map[string]any{"path": "/data/storage/petal/plugin/utf16"}, 200, 0, "text/plain; charset=utf-16le", ""},
		{"sniffed binary", map[string]any{"path": "/data/storage/petal/plugin/bin"}, 200, 0, "application/octet-stream", ""},
		{"trimmed path", map[string]any{"path": " \t/data/storage/petal/plugin/config\n"}, 200, 0, "application/json", `{"a":1}`},
		{"backslashes are name characters", map[string]any{"path": `\data\storage\petal\plugin\config`}, 202, 404, "", "file does not exist"},
		{"under a file", map[string]any{"path": "/data/storage/petal/plugin/config/x"}, 202, 404, "", "file does not exist"},
		{"nul byte", map[string]any{"path": "/data/storage/petal/plugin/config\x00"}, 202, 404, "", "file does not exist"},
		{"missing plugin dir", map[string]any{"path": "/data/storage/petal/other/config"}, 202, 404, "", "file does not exist"},
		{"lexical dotdot", map[string]any{"path": "/data/storage/petal/plugin/../../../conf/conf.json"}, 202, 404, "", "file does not exist"},
		{"missing", map[string]any{"path": "/data/storage/does-not-exist.txt"}, 202, 404, "", "file does not exist"},
		{"directory", map[string]any{"path": "/data/storage"}, 202, 409, "", "path is a directory"},
		{"traversal", map[string]any{"path": "../secret.txt"}, 202, 403, "", "permission denied"},
		{"deep traversal", map[string]any{"path": "/data/../../../etc/passwd"}, 202, 403, "", "permission denied"},
		{"symlink escaping", map[string]any{"path": "/data/storage/escape.txt"}, 202, 403, "", "permission denied"},
		{"through escaping dir", map[string]any{"path": "/data/storage/escapedir/secret.txt"}, 202, 403, "", "permission denied"},
		{"missing path", map[string]any{}, 202, -1, "", "Field [path] is required"},
		{"null path", map[string]any{"path": nil}, 202, -1, "", "Field [path] is required"},
		{"number path", map[string]any{"path": 1}, 202, -1, "", "Field [path] should be of type [String]"},
		{"null body", nil, 202, -1, "", "Field [path] is required"},
		{"empty path", map[string]any{"path": " "}, 202, -1, "", "must not be empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, h, body := e.raw("/api/file/getFile", tc.body)
			if status != tc.status {
				t.Fatalf("HTTP %d, want %d: %s", status, tc.status, body)
			}
			if status == 200 {
				if h.Get("Content-Type") != tc.ctype {
					t.Errorf("Content-Type %q, want %q", h.Get("Content-Type"), tc.ctype)
				}
				if tc.body2 != "" && string(body) != tc.body2 {
					t.Errorf("body %q", body)
				}
				return
			}
			var env wire.Result
			if err := json.Unmarshal(body, &env); err != nil {
				t.Fatal(err)
			}
			if env.Code != tc.code || !strings.Contains(env.Msg, tc.body2) {
				t.Errorf("envelope %+v, want code %d msg ~%q", env, tc.code, tc.body2)
			}
		})
	}
}

func TestPutFile(t *testing.T) {
	e := ixOpen(t)
	mod := time.Date(2026, 11, 30, 9, 8, 46, 414e6, time.UTC)
	modMS := "1796029726414"
	_ = mod
	tests := []struct {
		name  string
		parts []ixPart
		code  int
		msg   string
		check func(t *testing.T)
	}{
		{"file with modTime", []ixPart{{name: "path", value: "/data/storage/sisyphus-test.txt"}, {name: "isDir", value: "false"},
			{name: "modTime", value: modMS}, {name: "file", file: "x.txt", data: []byte("hello from sisyphus\n")}}, 0, "",
			func(t *testing.T) {
				p := filepath.Join(e.k.Dir(), "data", "storage", "sisyphus-test.txt")
				data, _ := os.ReadFile(p)
				info, err := os.Stat(p)
				if err != nil || string(data) != "hello from sisyphus\n" || info.ModTime().UnixMilli() != 1796029726414 {
					t.Errorf("file %q mtime %v err %v", data, info.ModTime(), err)
				}
			}},
		{"file part before path", []ixPart{{name: "file", file: "x.txt", data: []byte("v2")}, {name: "path", value: "data/storage/sisyphus-test.txt"}}, 0, "",
			func(t *testing.T) {
				if data, _ := os.ReadFile(filepath.Join(e.k.Dir(), "data", "storage", "sisyphus-test.txt")); string(data) != "v2" {
					t.Errorf("overwrite: %q", data)
				}
			}},
		{"nested new dirs", []ixPart{{name: "path", value: "/data/storage/a/b/c.json"}, {name: "file", file: "c.json", data: []byte("{}")}}, 0, "", nil},
		{"mkdir", []ixPart{{name: "path", value: "/data/storage/newdir"}, {name: "isDir", value: "true"}}, 0, "",
			func(t *testing.T) {
				if info, err := os.Stat(filepath.Join(e.k.Dir(), "data", "storage", "newdir")); err != nil || !info.IsDir() {
					t.Errorf("mkdir: %v", err)
				}
			}},
		{"empty path", []ixPart{{name: "path", value: " "}, {name: "file", file: "x", data: []byte("x")}}, 400, "path must not be empty", nil},
		{"traversal", []ixPart{{name: "path", value: "../../evil.txt"}, {name: "file", file: "x", data: []byte("x")}}, 403, "permission denied", nil},
		{"invalid name", []ixPart{{name: "path", value: "/data/storage/a#b.txt"}, {name: "file", file: "x", data: []byte("x")}}, 400, "invalid file path", nil},
		{"directory without isDir", []ixPart{{name: "path", value: "/data/storage"}, {name: "file", file: "x", data: []byte("x")}}, 400, "path is a directory", nil},
		{"no file", []ixPart{{name: "path", value: "/data/storage/nofile.txt"}}, 400, "Field [file] must not be empty", nil},
		{"bad modTime", []ixPart{{name: "path", value: "/data/storage/t.txt"}, {name: "modTime", value: "soon"}, {name: "file", file: "x", data: []byte("x")}}, 500, "invalid syntax", nil},
		// SiYuan takes a path under a regular file for a new one: its folders
		// cannot be made.
		{"under a file", []ixPart{{name: "path", value: "/data/storage/a/b/c.json/d"}, {name: "file", file: "d", data: []byte("x")}}, -1, "/data/storage/a/b/c.json: not a directory", nil},
		{"backslash in name", []ixPart{{name: "path", value: `\data\storage\bs`}, {name: "file", file: "bs", data: []byte("x")}}, 400, "invalid file path", nil},
		{"nul in name", []ixPart{{name: "path", value: "/data/storage/nul\x00"}, {name: "file", file: "x", data: []byte("x")}}, 400, "invalid file path", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.multipart("/api/file/putFile", tc.parts...)
			if r.Status != 200 || r.Code != tc.code || !strings.Contains(r.Msg, tc.msg) {
				t.Fatalf("HTTP %d code %d msg %q, want code %d ~%q", r.Status, r.Code, r.Msg, tc.code, tc.msg)
			}
			if tc.check != nil {
				tc.check(t)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(e.k.Dir()), "evil.txt")); err == nil {
		t.Fatal("traversal wrote outside the workspace")
	}
	entries, _ := os.ReadDir(filepath.Join(e.k.Dir(), "data", "storage"))
	for _, en := range entries {
		if strings.Contains(en.Name(), ".tmp-") || strings.HasPrefix(en.Name(), "part-") {
			t.Errorf("temporary file left behind: %s", en.Name())
		}
	}

	t.Run("body over the cap", func(t *testing.T) {
		old := maxUploadBytes
		maxUploadBytes = 1024
		defer func() { maxUploadBytes = old }()
		// Served in-process: over TCP, net/http lingers 500 ms before closing
		// a connection whose body was not read, which would slow the test.
		req := ixMultipartRequest(t, "/api/file/putFile", ixPart{name: "path", value: "/data/storage/big.bin"},
			ixPart{name: "file", file: "big.bin", data: bytes.Repeat([]byte("x"), 4096)})
		rec := httptest.NewRecorder()
		e.k.Handler().ServeHTTP(rec, req)
		var env wire.Result
		json.Unmarshal(rec.Body.Bytes(), &env)
		if rec.Code != http.StatusRequestEntityTooLarge || env.Code != -1 || !strings.Contains(env.Msg, "too large") {
			t.Fatalf("HTTP %d envelope %+v", rec.Code, env)
		}
		if _, err := os.Stat(filepath.Join(e.k.Dir(), "data", "storage", "big.bin")); err == nil {
			t.Fatal("oversized upload was written")
		}
	})
}

func TestRemoveFileAndReadDir(t *testing.T) {
	e := ixOpen(t)
	e.write("data/storage/x/one.txt", "1")
	e.write("data/storage/x/sub/two.txt", "2")
	os.Symlink("one.txt", filepath.Join(e.k.Dir(), "data", "storage", "x", "link"))

	var entries []wire.DirEntry
	e.ok("/api/file/readDir", map[string]any{"path": "/data/storage/x"}, &entries)
	got := map[string]string{}
	for _, en := range entries {
		got[en.Name] = map[bool]string{true: "dir", false: "file"}[en.IsDir] + map[bool]string{true: "+link", false: ""}[en.IsSymlink]
		if en.Updated < time.Now().Add(-time.Hour).Unix() || en.Updated > time.Now().Add(time.Minute).Unix() {
			t.Errorf("%s updated %d is not unix seconds", en.Name, en.Updated)
		}
	}
	if got["one.txt"] != "file" || got["sub"] != "dir" || got["link"] != "file+link" || len(got) != 3 {
		t.Errorf("readDir %v", got)
	}
	var empty []any
	e.write("data/storage/emptydir/.keep", "")
	os.Remove(filepath.Join(e.k.Dir(), "data", "storage", "emptydir", ".keep"))
	if r := e.post("/api/file/readDir", map[string]any{"path": "/data/storage/emptydir"}); string(r.Data) != "[]" {
		t.Errorf("empty dir %s", r.Data)
	}
	_ = empty

	tests := []struct {
		endpoint string
		path     string
		code     int
		msg      string
	}{
		{"/api/file/readDir", "/data/storage/x/one.txt", 409, "path is not a directory"},
		{"/api/file/readDir", "/data/nothing", 404, "path does not exist"},
		{"/api/file/readDir", "/..", 403, "permission denied"},
		{"/api/file/readDir", " /data/storage/x ", 404, "path does not exist"}, // not trimmed
		{"/api/file/readDir", "/data/storage/x/one.txt/y", 500, internalErrorMsg},
		{"/api/file/removeFile", " /data/storage/x/nothing ", 404, "path does not exist"}, // trimmed
		{"/api/file/removeFile", "/data/storage/x/one.txt/y", 500, internalErrorMsg},
		{"/api/file/removeFile", "/data/storage/x/one.txt", 0, ""},
		{"/api/file/removeFile", "/data/storage/x/one.txt", 404, "path does not exist"},
		{"/api/file/removeFile", "/data/storage/x/sub", 0, ""},
		{"/api/file/removeFile", "/", 403, "permission denied"},
		{"/api/file/removeFile", "../x", 403, "permission denied"},
	}
	for _, tc := range tests {
		r := e.post(tc.endpoint, map[string]any{"path": tc.path})
		if r.Status != 200 || r.Code != tc.code || !strings.Contains(r.Msg, tc.msg) {
			t.Errorf("%s %s: HTTP %d code %d msg %q, want %d ~%q", tc.endpoint, tc.path, r.Status, r.Code, r.Msg, tc.code, tc.msg)
		}
	}
	if _, err := os.Stat(filepath.Join(e.k.Dir(), "data", "storage", "x", "sub")); err == nil {
		t.Error("directory not removed")
	}
}

// TestFileArgErrors: the file endpoints' argument errors carry SiYuan's
// BindJsonArg messages; readDir and removeFile repeat a parse failure's
// envelope in one reply, as SiYuan does.
func TestFileArgErrors(t *testing.T) {
	e := ixOpen(t)
	for _, ep := range []string{"/api/file/readDir", "/api/file/removeFile"} {
		for _, tc := range []struct{ body, msg string }{
			{`{}`, "Field [path] is required"},
			{`null`, "Field [path] is required"},
			{`{"path":1}`, "Field [path] should be of type [String]"},
			{`[]`, "Parses request [" + ep + "] failed: json: cannot unmarshal array into Go value of type map[string]interface {}"},
		} {
			r := e.post(ep, json.RawMessage(tc.body))
			if r.Status != 200 || r.Code != -1 || r.Msg != tc.msg {
				t.Errorf("%s %s: HTTP %d code %d msg %q, want -1 %q", ep, tc.body, r.Status, r.Code, r.Msg, tc.msg)
			}
		}
		req, _ := http.NewRequest(http.MethodPost, e.srv.URL+ep, strings.NewReader("{"))
		req.Header.Set("Authorization", "Token t")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		one := `{"code":-1,"msg":"Parses request [` + ep + `] failed: unexpected EOF","data":null}`
		if resp.StatusCode != 200 || string(b) != one+one {
			t.Errorf("%s with a malformed body: HTTP %d %s, want the envelope twice", ep, resp.StatusCode, b)
		}
	}
	r := e.post("/api/file/removeFile", map[string]any{"path": " \t "})
	if r.Code != -1 || r.Msg != "Field [path] must not be empty" {
		t.Errorf("removeFile of a blank path: %+v", r)
	}
}

func TestUploadAsset(t *testing.T) {
	e := ixOpen(t)
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR-sisyphus-test-blob")
	type result = wire.AssetUploadResult
	upload := func(parts ...ixPart) (result, ixReply) {
		r := e.multipart("/api/asset/upload", parts...)
		var res result
		if r.Code == 0 {
			if err := json.Unmarshal(r.Data, &res); err != nil {
				t.Fatal(err)
			}
		}
		return res, r
	}
	assetRe := regexp.MustCompile(`^assets/pic-\d{14}-[0-9a-z]{7}\.png$`)

	first, r := upload(ixPart{name: "file[]", file: "pic.png", data: png})
	if !assetRe.MatchString(first.SuccMap["pic.png"]) || !strings.Contains(string(r.Data), `"errFiles":null`) {
		t.Fatalf("first upload %s", r.Data)
	}
	if data, err := os.ReadFile(filepath.Join(e.k.Dir(), "data", filepath.FromSlash(first.SuccMap["pic.png"]))); err != nil || !bytes.Equal(data, png) {
		t.Fatalf("stored asset: %v", err)
	}

	tests := []struct {
		name  string
		parts []ixPart
		check func(t *testing.T, res result, r ixReply)
	}{
		{"same bytes same name dedups", []ixPart{{name: "file[]", file: "pic.png", data: png}}, func(t *testing.T, res result, r ixReply) {
			if res.SuccMap["pic.png"] != first.SuccMap["pic.png"] {
				t.Errorf("dedup: %v vs %v", res.SuccMap, first.SuccMap)
			}
		}},
		{"same name different case dedups", []ixPart{{name: "file[]", file: "PIC.PNG", data: png}}, func(t *testing.T, res result, r ixReply) {
			if res.SuccMap["PIC.PNG"] != first.SuccMap["pic.png"] {
				t.Errorf("dedup: %v", res.SuccMap)
			}
		}},
		{"same bytes other name is new", []ixPart{{name: "file[]", file: "other.png", data: png}}, func(t *testing.T, res result, r ixReply) {
			if !strings.HasPrefix(res.SuccMap["other.png"], "assets/other-") {
				t.Errorf("%v", res.SuccMap)
			}
		}},
		{"other bytes same name is new", []ixPart{{name: "file[]", file: "pic.png", data: append([]byte("x"), png...)}}, func(t *testing.T, res result, r ixReply) {
			if p := res.SuccMap["pic.png"]; p == first.SuccMap["pic.png"] || !assetRe.MatchString(p) {
				t.Errorf("%v", res.SuccMap)
			}
		}},
		{"several files, names filtered", []ixPart{{name: "file[]", file: "a b(1).TXT", data: []byte("a")}, {name: "file[]", file: "c.txt", data: []byte("c")}}, func(t *testing.T, res result, r ixReply) {
			if len(res.SuccMap) != 2 || !regexp.MustCompile(`^assets/a b1-\d{14}-[0-9a-z]{7}\.txt$`).MatchString(res.SuccMap["a b(1).TXT"]) {
				t.Errorf("%v", res.SuccMap)
			}
		}},
		{"name keeps its id", []ixPart{{name: "file[]", file: "doc-20240101120000-abcdefg.pdf", data: []byte("%PDF")}}, func(t *testing.T, res result, r ixReply) {
			if res.SuccMap["doc-20240101120000-abcdefg.pdf"] != "assets/doc-20240101120000-abcdefg.pdf" {
				t.Errorf("%v", res.SuccMap)
			}
		}},
		{"custom dir", []ixPart{{name: "assetsDirPath", value: "/assets/sub/"}, {name: "file[]", file: "n.txt", data: []byte("n")}}, func(t *testing.T, res result, r ixReply) {
			p := res.SuccMap["n.txt"]
			if !strings.HasPrefix(p, "assets/sub/n-") {
				t.Fatalf("%v", res.SuccMap)
			}
			if _, err := os.Stat(filepath.Join(e.k.Dir(), "data", filepath.FromSlash(p))); err != nil {
				t.Error(err)
			}
		}},
		{"dir field after file", []ixPart{{name: "file[]", file: "late.txt", data: []byte("l")}, {name: "assetsDirPath", value: "/assets/late/"}}, func(t *testing.T, res result, r ixReply) {
			if !strings.HasPrefix(res.SuccMap["late.txt"], "assets/late/late-") {
				t.Errorf("%v", res.SuccMap)
			}
		}},
		{"dir outside workspace", []ixPart{{name: "assetsDirPath", value: "../../../tmp"}, {name: "file[]", file: "x.txt", data: []byte("x")}}, func(t *testing.T, res result, r ixReply) {
			if r.Code != -1 || !strings.Contains(r.Msg, "is not in workspace") {
				t.Errorf("code %d msg %q", r.Code, r.Msg)
			}
		}},
		{"empty file never dedups", []ixPart{{name: "file[]", file: "e.txt", data: nil}, {name: "file[]", file: "e.txt", data: nil}}, func(t *testing.T, res result, r ixReply) {
			if !strings.HasPrefix(res.SuccMap["e.txt"], "assets/e-") {
				t.Errorf("%v", res.SuccMap)
			}
		}},
		{"no files", []ixPart{{name: "assetsDirPath", value: "/assets/"}}, func(t *testing.T, res result, r ixReply) {
			if r.Code != 0 || len(res.SuccMap) != 0 {
				t.Errorf("%d %s", r.Code, r.Data)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, r := upload(tc.parts...)
			tc.check(t, res, r)
		})
	}
	if left, _ := filepath.Glob(filepath.Join(e.k.Dir(), "temp", "upload-*")); len(left) != 0 {
		t.Errorf("spool directories left: %v", left)
	}
}

func TestFileNameFilter(t *testing.T) {
	tests := []struct{ in, want string }{
		{"pic.png", "pic.png"},
		{"a b(1).png", "a b1.png"},
		{"x/y:z.txt", "x_y_z.txt"},
		{"#tag%$;.md", "tag.md"},
		{"trailing.", "trailing"},
		{"zero\u200bwidth", "zerowidth"},
		{strings.Repeat("é", 100) + ".txt", strings.Repeat("é", 92) + ".txt"},
	}
	for _, tc := range tests {
		if got := fileNameFilter(tc.in); got != tc.want {
			t.Errorf("fileNameFilter(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if validUploadFileName("a#b.txt") || !validUploadFileName("conf.json") {
		t.Error("validUploadFileName")
	}
}

// FuzzWorkspacePath checks the getFile/putFile path sanitiser: whatever the
// input, an accepted path lies inside the workspace, lexically and after
// following links (the existing part of a path with a NUL byte is checked;
// the file system refuses the rest).
func FuzzWorkspacePath(f *testing.F) {
	for _, s := range []string{"", "/", "data/x", "/data/../conf/conf.json", "..", "../x", "/../../etc/passwd",
		"data/link/secret", "data/link/../x", `..\..\x`, "a\x00b", "//data//x/", "./././data", "data/inside/x", "data/loop/x"} {
		f.Add(s)
	}
	root := f.TempDir()
	ws := filepath.Join(root, "ws")
	outside := filepath.Join(root, "outside")
	os.MkdirAll(filepath.Join(ws, "data"), 0o755)
	os.MkdirAll(outside, 0o755)
	os.Symlink(outside, filepath.Join(ws, "data", "link"))
	os.Symlink(filepath.Join(ws, "data"), filepath.Join(ws, "data", "inside"))
	os.Symlink("loop", filepath.Join(ws, "data", "loop"))
	realWS, _ := filepath.EvalSymlinks(ws)
	f.Fuzz(func(t *testing.T, rel string) {
		abs, err := resolveInWorkspace(ws, rel)
		if err != nil {
			return
		}
		if abs != ws && !isSubPath(ws, abs) {
			t.Fatalf("%q → %q escapes the workspace lexically", rel, abs)
		}
		// A NUL byte may pass (SiYuan does not refuse it either): every
		// file system call fails on it with EINVAL.
		// Follow links on the existing part: it must stay inside.
		existing, rest := abs, ""
		for {
			if _, err := os.Lstat(existing); err == nil {
				break
			}
			rest = filepath.Join(filepath.Base(existing), rest)
			existing = filepath.Dir(existing)
		}
		real, err := filepath.EvalSymlinks(existing)
		if err != nil {
			t.Fatalf("%q accepted but %q does not resolve: %v", rel, existing, err)
		}
		real = filepath.Join(real, rest)
		if real != realWS && !isSubPath(realWS, real) {
			t.Fatalf("%q → %q resolves outside the workspace: %q", rel, abs, real)
		}
	})
}
