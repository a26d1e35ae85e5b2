package embedded

import (
	"bytes"
	"context"
	"encoding/json"
	"mime/multipart"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// FuzzMultipartRoutes sends putFile and asset uploads with fuzzed field
// values (paths, file names, directories) in well-formed multipart, and
// fuzzed raw bodies under a multipart Content-Type: the kernel answers an
// envelope, never panics or hangs, and writes nothing outside its
// workspace.
func FuzzMultipartRoutes(f *testing.F) {
	root := f.TempDir()
	ws := filepath.Join(root, "ws")
	k, err := Open(context.Background(), Options{Dir: ws, Token: "tok", SQLFlushInterval: time.Hour})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { k.Close() })
	h := k.Handler()
	seeds := []struct {
		raw            bool
		route          uint8
		field, name    string
		content, extra string
	}{
		{false, 0, "/data/templates/a.md", "a.md", "# .action{.title}", "false"},
		{false, 0, "/data/../../escape.md", "escape.md", "x", "false"},
		{false, 0, "/data/templates/d", "", "", "true"},
		{false, 1, "/assets/", "photo.png", "\x89PNG", ""},
		{false, 1, "/assets/../../../", "../../evil.png", "x", ""},
		{false, 1, "/assets/sub/", "..\\..\\win.png", "x", ""},
		{true, 0, "", "", "--B\r\nContent-Disposition: form-data; name=\"path\"\r\n\r\n/data/x\r\n--B--\r\n", ""},
		{true, 1, "", "", "--B\r\nContent-Disposition: form-data; name=\"file[]\"; filename=\"a\"\r\n\r\nx", ""},
	}
	for _, s := range seeds {
		f.Add(s.raw, s.route, s.field, s.name, s.content, s.extra)
	}
	routes := []string{"/api/file/putFile", "/api/asset/upload"}
	f.Fuzz(func(t *testing.T, raw bool, route uint8, field, name, content, extra string) {
		p := routes[int(route)%len(routes)]
		var body bytes.Buffer
		ctype := "multipart/form-data; boundary=B"
		if raw {
			body.WriteString(content)
		} else {
			mw := multipart.NewWriter(&body)
			if p == routes[0] {
				mw.WriteField("path", field)
				mw.WriteField("isDir", extra)
			} else {
				mw.WriteField("assetsDirPath", field)
			}
			part := "file"
			if p == routes[1] {
				part = "file[]"
			}
			if w, err := mw.CreateFormFile(part, name); err == nil {
				w.Write([]byte(content))
			}
			mw.Close()
			ctype = mw.FormDataContentType()
		}
		req := httptest.NewRequest("POST", p, &body)
		req.Header.Set("Authorization", "Token tok")
		req.Header.Set("Content-Type", ctype)
		rec := httptest.NewRecorder()
		done := make(chan struct{})
		go func() { h.ServeHTTP(rec, req); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			buf := make([]byte, 1<<20)
			t.Fatalf("%s hung:\n%s", p, buf[:runtime.Stack(buf, true)])
		}
		var env map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil {
			t.Fatalf("%s: reply is not one JSON envelope: %q", p, rec.Body.String())
		}
		if _, ok := env["code"]; !ok {
			t.Fatalf("%s: reply has no code: %s", p, rec.Body.String())
		}
		ents, err := os.ReadDir(root)
		if err != nil || len(ents) != 1 || ents[0].Name() != "ws" {
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			t.Fatalf("%s with %q %q wrote outside the workspace: %v", p, field, name, names)
		}
	})
}
