package transfer

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
)

// post sends one request to the store's handlers and decodes the answer.
func post(t testing.TB, s *Store, path, contentType string, header map[string]string, body io.Reader) (int, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, path, body)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	switch path {
	case UploadPath:
		s.ServeUpload(w, req)
	case LookupPath:
		s.ServeLookup(w, req)
	}
	var m map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
		t.Fatalf("%s answered %d with no JSON: %q", path, w.Code, w.Body.String())
	}
	if w.Code != http.StatusOK {
		e, _ := m["error"].(map[string]any)
		if e["code"] == nil || e["message"] == nil || e["action"] == nil {
			t.Fatalf("error body lacks code, message or action: %v", m)
		}
	}
	return w.Code, m
}

func errCode(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

func jsonBody(v any) io.Reader { b, _ := json.Marshal(v); return bytes.NewReader(b) }

func TestUploadBothForms(t *testing.T) {
	data := []byte("\x89PNG\r\n\x1a\n not really a png \x00\xff")
	s := NewStore(Config{})
	st, raw := post(t, s, UploadPath, "application/octet-stream", map[string]string{HeaderFileName: url.PathEscape("my image.png")}, bytes.NewReader(data))
	if st != 200 || raw["sha256"] != hexSum(data) || raw["size"] != float64(len(data)) || raw["fileName"] != "my image.png" ||
		!strings.HasPrefix(raw["uploadSource"].(string), HandlePrefix) || raw["expiresAt"] == nil {
		t.Fatalf("raw upload: %d %v", st, raw)
	}
	// The JSON form of the same name and content is the same snapshot.
	st, js := post(t, s, UploadPath, "application/json; charset=utf-8", nil,
		jsonBody(map[string]any{"fileName": "my image.png", "dataBase64": base64.StdEncoding.EncodeToString(data)}))
	if st != 200 || js["uploadSource"] != raw["uploadSource"] || js["reused"] != true {
		t.Fatalf("json upload: %d %v", st, js)
	}
	// Lookup finds it; a claimed digest of something never staged does not.
	st, found := post(t, s, LookupPath, "application/json", nil, jsonBody(map[string]any{"fileName": "my image.png", "sha256": hexSum(data), "size": len(data)}))
	if st != 200 || found["found"] != true || found["uploadSource"] != raw["uploadSource"] {
		t.Fatalf("lookup: %d %v", st, found)
	}
	st, miss := post(t, s, LookupPath, "application/json", nil, jsonBody(map[string]any{"fileName": "x.png", "sha256": hexSum([]byte("x")), "size": 1}))
	if st != 200 || miss["found"] != false || len(miss) != 1 {
		t.Fatalf("lookup miss: %d %v", st, miss)
	}
	if s.Stats().Entries != 1 {
		t.Fatalf("stats %+v", s.Stats())
	}
}

func TestUploadBadRequests(t *testing.T) {
	big := NewStore(Config{MaxFileBytes: 1000})
	b64 := func(n int) string { return base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, n)) }
	name := map[string]string{HeaderFileName: "a.bin"}
	for _, tt := range []struct {
		name        string
		contentType string
		header      map[string]string
		body        string
		status      int
		code        failure.Code
	}{
		{"no content type", "", name, "x", 415, failure.InvalidRequest},
		{"text", "text/plain", name, "x", 415, failure.InvalidRequest},
		{"multipart", "multipart/form-data; boundary=x", name, "--x--", 415, failure.InvalidRequest},
		{"malformed content type", "application/octet-stream; =", name, "x", 415, failure.InvalidRequest},
		{"raw without a name", "application/octet-stream", nil, "x", 400, failure.InvalidRequest},
		{"raw with a bad escape", "application/octet-stream", map[string]string{HeaderFileName: "a%zz"}, "x", 400, failure.InvalidRequest},
		{"raw with a path", "application/octet-stream", map[string]string{HeaderFileName: "..%2Fetc%2Fpasswd"}, "x", 400, failure.InvalidRequest},
		{"raw empty", "application/octet-stream", name, "", 400, failure.InvalidRequest},
		{"raw over the cap", "application/octet-stream", name, strings.Repeat("x", 1001), 413, failure.FileTooLarge},
		{"json not json", "application/json", nil, "{", 400, failure.InvalidRequest},
		{"json wrong type", "application/json", nil, `{"fileName": 3, "dataBase64": "eA=="}`, 400, failure.InvalidRequest},
		{"json without name", "application/json", nil, `{"dataBase64": "eA=="}`, 400, failure.InvalidRequest},
		{"json without data", "application/json", nil, `{"fileName": "a"}`, 400, failure.InvalidRequest},
		{"json null data", "application/json", nil, `{"fileName": "a", "dataBase64": null}`, 400, failure.InvalidRequest},
		{"json empty data", "application/json", nil, `{"fileName": "a", "dataBase64": ""}`, 400, failure.InvalidRequest},
		{"json bad base64", "application/json", nil, `{"fileName": "a", "dataBase64": "e$A="}`, 400, failure.InvalidRequest},
		{"json unpadded base64", "application/json", nil, `{"fileName": "a", "dataBase64": "eA"}`, 400, failure.InvalidRequest},
		{"json bad name", "application/json", nil, `{"fileName": "a/b", "dataBase64": "eA=="}`, 400, failure.InvalidRequest},
		{"json decoded over the cap", "application/json", nil, `{"fileName": "a", "dataBase64": "` + b64(1001) + `"}`, 413, failure.FileTooLarge},
		{"json body over the cap", "application/json", nil, `{"fileName": "a", "dataBase64": "` + b64(1000) + `", "pad": "` + strings.Repeat(" ", 70<<10) + `"}`, 413, failure.FileTooLarge},
		{"json at the cap", "application/json", nil, `{"fileName": "a", "dataBase64": "` + b64(1000) + `"}`, 200, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st, m := post(t, big, UploadPath, tt.contentType, tt.header, strings.NewReader(tt.body))
			if st != tt.status || (tt.code != "" && errCode(m) != string(tt.code)) {
				t.Fatalf("got %d %v, want %d %s", st, m, tt.status, tt.code)
			}
		})
	}
	for _, tt := range []struct {
		name, contentType, body string
		status                  int
	}{
		{"not json", "text/plain", `{}`, 415},
		{"broken", "application/json", `{`, 400},
		{"short digest", "application/json", `{"fileName": "a", "sha256": "abc", "size": 1}`, 400},
		{"digest not hex", "application/json", `{"fileName": "a", "sha256": "` + strings.Repeat("z", 64) + `", "size": 1}`, 400},
		{"no size", "application/json", `{"fileName": "a", "sha256": "` + hexSum(nil) + `"}`, 400},
		{"bad name", "application/json", `{"fileName": "", "sha256": "` + hexSum(nil) + `", "size": 1}`, 400},
		{"too long", "application/json", `{"fileName": "` + strings.Repeat("a", 20<<10) + `"}`, 400},
	} {
		t.Run("lookup "+tt.name, func(t *testing.T) {
			if st, m := post(t, big, LookupPath, tt.contentType, nil, strings.NewReader(tt.body)); st != tt.status {
				t.Fatalf("got %d %v, want %d", st, m, tt.status)
			}
		})
	}
	for path, h := range map[string]http.HandlerFunc{UploadPath: big.ServeUpload, LookupPath: big.ServeLookup} {
		w := httptest.NewRecorder()
		h(w, httptest.NewRequest(http.MethodGet, path, nil))
		if w.Code != 405 || w.Header().Get("Allow") != "POST" {
			t.Fatalf("GET %s: %d", path, w.Code)
		}
	}
	if st := big.Stats(); st.Entries != 1 || st.Invalid == 0 || st.RefusedTooLarge != 3 {
		t.Fatalf("stats %+v", st)
	}
}

// TestUpload429AtTheThirdOverHTTP holds two uploads open mid-body over a
// real connection; the third answers 429 with a JSON error at once.
func TestUpload429AtTheThirdOverHTTP(t *testing.T) {
	s := NewStore(Config{})
	hs := httptest.NewServer(http.HandlerFunc(s.ServeUpload))
	defer hs.Close()
	var wg sync.WaitGroup
	var writers []*io.PipeWriter
	for i := range 2 {
		pr, pw := io.Pipe()
		writers = append(writers, pw)
		req, _ := http.NewRequest(http.MethodPost, hs.URL, pr)
		req.Header.Set("Content-Type", "application/octet-stream")
		req.Header.Set(HeaderFileName, "held"+string(rune('0'+i)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("held upload: %d", resp.StatusCode)
			}
		}()
		pw.Write([]byte("first half"))
	}
	waitUntil(t, func() bool { return s.Stats().Active == 2 })
	defer func() {
		for _, pw := range writers {
			pw.Close()
		}
	}()
	req, _ := http.NewRequest(http.MethodPost, hs.URL, jsonBody(map[string]any{"fileName": "third", "dataBase64": "eA=="}))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	resp.Body.Close()
	if resp.StatusCode != 429 || errCode(m) != string(failure.StagingBusy) || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("third upload: %d %v", resp.StatusCode, m)
	}
	for _, pw := range writers {
		pw.Write([]byte(" and the rest"))
		pw.Close()
	}
	wg.Wait()
	if st := s.Stats(); st.Staged != 2 || st.RefusedBusy != 1 || st.Active != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// FuzzUploadBody: whatever the content type, name header and body, the
// upload answers JSON with 200 (and then the digest of what it kept), 400,
// 413 or 415, and keeps at most one snapshot that matches its answer.
func FuzzUploadBody(f *testing.F) {
	for _, seed := range []struct{ ct, name, body string }{
		{"application/octet-stream", "a.png", "bytes"},
		{"application/octet-stream", "a%2Fb", "bytes"},
		{"application/json", "", `{"fileName":"a.png","dataBase64":"eA=="}`},
		{"application/json", "", `{"fileName":"a.png","dataBase64":"e A=\n="}`},
		{"application/json", "", `{"fileName":"a.png","dataBase64":"\u0065A=="}`},
		{"application/json", "", `{"fileName":"a.png","dataBase64":"eA==","fileName":"b"}`},
		{"application/json", "", `[]`},
		{"application/json; charset=latin1", "", `{"fileName":"\u0000","dataBase64":"eA=="}`},
		{"multipart/form-data; boundary=b", "a", "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\"\r\n\r\nx\r\n--b--"},
	} {
		f.Add(seed.ct, seed.name, []byte(seed.body))
	}
	f.Fuzz(func(t *testing.T, ct, name string, body []byte) {
		s := NewStore(Config{MaxFileBytes: 512})
		req := httptest.NewRequest(http.MethodPost, UploadPath, bytes.NewReader(body))
		req.Header.Set("Content-Type", ct)
		if name != "" {
			req.Header.Set(HeaderFileName, name)
		}
		w := httptest.NewRecorder()
		s.ServeUpload(w, req)
		var m map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
			t.Fatalf("answer %d is not JSON: %q", w.Code, w.Body.String())
		}
		stats := s.Stats()
		switch w.Code {
		case 200:
			snap, ok := s.Get(m["uploadSource"].(string))
			if !ok || stats.Entries != 1 || snap.SHA256 != m["sha256"] || CheckFileName(snap.Name) != nil {
				t.Fatalf("200 %v but the store holds %+v", m, snap)
			}
			b, _ := io.ReadAll(snap.Open())
			if hexSum(b) != snap.SHA256 || int64(len(b)) != snap.Size || snap.Size > 512 {
				t.Fatalf("snapshot %+v does not hold what it says", snap)
			}
		case 400, 413, 415:
			if stats.Entries != 0 || errCode(m) == "" {
				t.Fatalf("%d %v kept %d entries", w.Code, m, stats.Entries)
			}
		default:
			t.Fatalf("status %d: %v", w.Code, m)
		}
		if stats.Active != 0 {
			t.Fatal("a slot was not given back")
		}
	})
}

func TestLookupReplyShape(t *testing.T) {
	b, _ := json.Marshal(LookupReply{})
	if string(b) != `{"found":false}` {
		t.Fatalf("%s", b)
	}
	b, _ = json.Marshal(LookupReply{Found: true, Staged: &Staged{UploadSource: "staged:x", FileName: "a", SHA256: "s", Size: 1, ExpiresAt: 2}})
	if string(b) != `{"found":true,"uploadSource":"staged:x","fileName":"a","sha256":"s","size":1,"expiresAt":2}` {
		t.Fatalf("%s", b)
	}
	_ = context.Background
}

// FuzzLookupBody: a lookup never creates a snapshot, and finds one only for
// the exact name, digest and size the store hashed.
func FuzzLookupBody(f *testing.F) {
	f.Add(`{"fileName":"a.png","sha256":"` + hexSum([]byte("x")) + `","size":1}`)
	f.Add(`{"fileName":"a.png","sha256":"` + strings.ToUpper(hexSum([]byte("x"))) + `","size":1}`)
	f.Add(`{"fileName":"b.png","sha256":"` + hexSum([]byte("x")) + `","size":1}`)
	f.Add(`{"fileName":"a.png","sha256":"` + hexSum([]byte("y")) + `","size":1.5}`)
	f.Add(`{"fileName":"a.png","sha256":null,"size":-1}`)
	f.Fuzz(func(t *testing.T, body string) {
		s := NewStore(Config{})
		held, _ := s.Stage(context.Background(), "a.png", strings.NewReader("x"), 1)
		req := httptest.NewRequest(http.MethodPost, LookupPath, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		s.ServeLookup(w, req)
		var m map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
			t.Fatalf("answer %d is not JSON: %q", w.Code, w.Body.String())
		}
		if s.Stats().Entries != 1 {
			t.Fatal("a lookup changed the store")
		}
		if m["found"] == true {
			var in lookupRequest
			json.Unmarshal([]byte(body), &in)
			if m["uploadSource"] != held.UploadSource || in.FileName != "a.png" || in.Size != 1 || !strings.EqualFold(in.SHA256, held.SHA256) {
				t.Fatalf("found %v for %q", m, body)
			}
		}
	})
}

// FuzzJSONUploadScan: where the fast reading of a JSON upload accepts a
// body, encoding/json reads it alike (name, bytes, or a base64 error).
func FuzzJSONUploadScan(f *testing.F) {
	for _, s := range []string{
		`{"fileName":"a.png","dataBase64":"eA=="}`,
		` { "dataBase64" : "eHk=" , "fileName" : "a\u00e9\n.png" } `,
		`{"fileName":"a","dataBase64":"e$A="}`,
		`{"fileName":"a","dataBase64":"eA"}`,
		`{"fileName":"a","dataBase64":""}`,
		`{"fileName":"\ud800","dataBase64":"eA=="}`,
		`{"fileName":"a","dataBase64":"eA==","fileName":"b"}`,
		`{"fileName":"a","FileName":"b","dataBase64":"eA=="}`,
		`{"fileName":"a","dataBase64":"eA=="}x`,
		"{\"fileName\":\"a\xff\",\"dataBase64\":\"eA==\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if _, _, ok := scanJSONUpload(body); !ok {
			return
		}
		name, data, err := parseJSONUpload(body)
		name2, data2, err2 := decodeJSONUpload(body)
		if (err == nil) != (err2 == nil) || name != name2 || !bytes.Equal(data, data2) {
			t.Fatalf("fast %q %q %v; encoding/json %q %q %v", name, data, err, name2, data2, err2)
		}
	})
}
