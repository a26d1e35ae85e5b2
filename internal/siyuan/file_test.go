package siyuan

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
)

// parseMultipart decodes a recorded multipart body the way the kernel's gin
// handler does (via net/http's parser).
func parseMultipart(t *testing.T, s seen) *multipart.Form {
	t.Helper()
	mt, params, err := mime.ParseMediaType(s.ContentType)
	if err != nil || mt != "multipart/form-data" {
		t.Fatalf("Content-Type %q: %v", s.ContentType, err)
	}
	form, err := multipart.NewReader(bytes.NewReader(s.Body), params["boundary"]).ReadForm(32 << 20)
	if err != nil {
		t.Fatalf("multipart body does not parse: %v", err)
	}
	return form
}

func readPart(t *testing.T, fh *multipart.FileHeader) string {
	t.Helper()
	f, err := fh.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, _ := io.ReadAll(f)
	return string(b)
}

func TestUploadAssetMultipart(t *testing.T) {
	big := strings.Repeat("0123456789", 100_000) // 1 MB, streamed
	var chunked bool
	fk := newFakeKernel(t, func(w http.ResponseWriter, r *http.Request, _ seen) {
		chunked = r.ContentLength == -1
		replyJSON(w, 0, "", map[string]any{
			"errFiles": []string{},
			"succMap":  map[string]string{"a.png": "assets/a-20240101120000-aaaaaaa.png", "报告 \"v2\".pdf": "assets/x.pdf"},
		})
	})
	c := newTestClient(t, fk.URL)
	res, err := c.UploadAsset(context.Background(), AssetUploadRequest{
		AssetsDirPath:    "/assets/sub/",
		SkipIfDuplicated: true,
		Files: []UploadFile{
			{Name: "a.png", Body: strings.NewReader(big)},
			{Name: "报告 \"v2\".pdf", Body: strings.NewReader("pdf")},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.SuccMap["a.png"] != "assets/a-20240101120000-aaaaaaa.png" || len(res.ErrFiles) != 0 {
		t.Errorf("result = %+v", res)
	}
	s := fk.last(t)
	if s.Path != endpoint.UploadAsset || s.Auth != "Token test-token" {
		t.Errorf("sent to %s with auth %q", s.Path, s.Auth)
	}
	if !chunked {
		t.Error("upload body was not streamed (it had a Content-Length)")
	}
	form := parseMultipart(t, s)
	if got := form.Value["assetsDirPath"]; len(got) != 1 || got[0] != "/assets/sub/" {
		t.Errorf("assetsDirPath = %v", got)
	}
	if got := form.Value["skipIfDuplicated"]; len(got) != 1 || got[0] != "true" {
		t.Errorf("skipIfDuplicated = %v", got)
	}
	if _, ok := form.Value["id"]; ok {
		t.Error("empty id should not be sent")
	}
	files := form.File["file[]"]
	if len(files) != 2 {
		t.Fatalf("file[] parts = %d, want 2", len(files))
	}
	if files[0].Filename != "a.png" || readPart(t, files[0]) != big {
		t.Errorf("first part %q corrupted", files[0].Filename)
	}
	if files[1].Filename != "报告 \"v2\".pdf" || readPart(t, files[1]) != "pdf" {
		t.Errorf("second part = %q", files[1].Filename)
	}
}

type failingReader struct{ after int }

func (r *failingReader) Read(p []byte) (int, error) {
	if r.after <= 0 {
		return 0, errors.New("disk on fire")
	}
	n := min(len(p), r.after)
	r.after -= n
	return n, nil
}

// A failing source file means the kernel never saw a complete request, so
// the upload is a definite failure, not an unknown outcome.
func TestUploadAssetSourceFailureIsDefinite(t *testing.T) {
	fk := newFakeKernel(t, replyOK(map[string]any{"succMap": map[string]string{}}))
	c := newTestClient(t, fk.URL)
	_, err := c.UploadAsset(context.Background(), AssetUploadRequest{
		Files: []UploadFile{{Name: "a.bin", Body: &failingReader{after: 100_000}}},
	})
	var te *TransportError
	if !errors.As(err, &te) || te.Sent || IsOutcomeUnknown(err) || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("err = %#v, want definite *TransportError naming the source failure", err)
	}
}

func TestUploadAssetIsAttemptedOnce(t *testing.T) {
	fk := newFakeKernel(t, func(w http.ResponseWriter, _ *http.Request, _ seen) { dropConnection(w) })
	c := newTestClient(t, fk.URL)
	_, err := c.UploadAsset(context.Background(), AssetUploadRequest{Files: []UploadFile{{Name: "a", Body: strings.NewReader("x")}}})
	if !IsOutcomeUnknown(err) || fk.hits.Load() != 1 {
		t.Fatalf("err = %v after %d attempts, want OutcomeUnknown after 1", err, fk.hits.Load())
	}
}

func TestPutFileMultipart(t *testing.T) {
	tests := []struct {
		name     string
		req      PutFileRequest
		want     map[string]string
		wantFile string // "" = no file part
	}{
		{"file", PutFileRequest{Path: "/data/storage/x.json", ModTime: 1700000000123, Body: strings.NewReader(`{"a":1}`)},
			map[string]string{"path": "/data/storage/x.json", "isDir": "false", "modTime": "1700000000123"}, `{"a":1}`},
		{"dir", PutFileRequest{Path: "/data/storage/d", IsDir: true},
			map[string]string{"path": "/data/storage/d", "isDir": "true"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fk := newFakeKernel(t, replyOK(nil))
			c := newTestClient(t, fk.URL)
			if err := c.PutFile(context.Background(), tt.req); err != nil {
				t.Fatal(err)
			}
			s := fk.last(t)
			if s.Path != endpoint.PutFile {
				t.Errorf("path = %s", s.Path)
			}
			form := parseMultipart(t, s)
			for k, v := range tt.want {
				if got := form.Value[k]; len(got) != 1 || got[0] != v {
					t.Errorf("%s = %v, want %q", k, got, v)
				}
			}
			if _, ok := form.Value["modTime"]; ok && tt.want["modTime"] == "" {
				t.Error("zero modTime should not be sent")
			}
			files := form.File["file"]
			if tt.wantFile == "" {
				if len(files) != 0 {
					t.Errorf("unexpected file part")
				}
				return
			}
			if len(files) != 1 || files[0].Filename != "x.json" || readPart(t, files[0]) != tt.wantFile {
				t.Errorf("file part wrong: %+v", files)
			}
		})
	}
}

func TestPutFileKernelRefusal(t *testing.T) {
	// The kernel answers validation failures with HTTP 200 and a code.
	fk := newFakeKernel(t, func(w http.ResponseWriter, _ *http.Request, _ seen) {
		replyJSON(w, 400, "invalid file path", nil)
	})
	err := newTestClient(t, fk.URL).PutFile(context.Background(), PutFileRequest{Path: "/data/a", Body: strings.NewReader("x")})
	var ae *APIError
	if !errors.As(err, &ae) || ae.Code != 400 || IsOutcomeUnknown(err) {
		t.Fatalf("err = %v", err)
	}
}

func TestGetFile(t *testing.T) {
	t.Run("200 streams raw bytes", func(t *testing.T) {
		content := `{"code":0,"looks":"like an envelope but is file content"}`
		fk := newFakeKernel(t, func(w http.ResponseWriter, _ *http.Request, _ seen) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, content)
		})
		c := newTestClient(t, fk.URL, func(c *Config) { c.MaxResponseBytes = 8 }) // the cap is for JSON replies only
		rc, ct, err := c.GetFile(context.Background(), "/data/storage/x.json")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		if err := rc.Close(); err != nil {
			t.Fatal(err)
		}
		if string(b) != content || ct != "application/json" {
			t.Errorf("got %q (%s)", b, ct)
		}
		assertJSONEqual(t, fk.last(t).Body, `{"path":"/data/storage/x.json"}`)
	})

	tests := []struct {
		code int
		msg  string
	}{
		{404, "file does not exist"},
		{409, "path is a directory"},
		{403, "Forbidden"},
		{-3, "encrypted notebook"},
	}
	for _, tt := range tests {
		t.Run("202 code "+strconv.Itoa(tt.code), func(t *testing.T) {
			fk := newFakeKernel(t, func(w http.ResponseWriter, _ *http.Request, _ seen) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusAccepted)
				_, _ = io.WriteString(w, `{"code":`+strconv.Itoa(tt.code)+`,"msg":"`+tt.msg+`","data":null}`)
			})
			rc, _, err := newTestClient(t, fk.URL).GetFile(context.Background(), "/data/x")
			var ae *APIError
			if rc != nil || !errors.As(err, &ae) || ae.Code != tt.code || ae.Msg != tt.msg {
				t.Fatalf("got reader=%v err=%v, want *APIError code %d", rc != nil, err, tt.code)
			}
			if got, want := errors.Is(err, ErrFileNotFound), tt.code == 404; got != want {
				t.Errorf("errors.Is(err, ErrFileNotFound) = %v, want %v", got, want)
			}
			if fk.hits.Load() != 1 {
				t.Errorf("%d attempts, want 1", fk.hits.Load())
			}
		})
	}

	t.Run("202 with code 0 is still not content", func(t *testing.T) {
		fk := newFakeKernel(t, func(w http.ResponseWriter, _ *http.Request, _ seen) {
			w.WriteHeader(http.StatusAccepted)
			_, _ = io.WriteString(w, `{"code":0,"msg":"","data":null}`)
		})
		_, _, err := newTestClient(t, fk.URL).GetFile(context.Background(), "/data/x")
		var ae *APIError
		if !errors.As(err, &ae) {
			t.Fatalf("err = %v, want *APIError", err)
		}
	})

	t.Run("read is retried", func(t *testing.T) {
		fk := newFakeKernel(t, func(w http.ResponseWriter, _ *http.Request, _ seen) { w.WriteHeader(http.StatusBadGateway) })
		_, _, err := newTestClient(t, fk.URL).GetFile(context.Background(), "/data/x")
		if err == nil || fk.hits.Load() != 3 {
			t.Fatalf("err = %v after %d attempts, want failure after 3", err, fk.hits.Load())
		}
	})
}

// TestErrFileNotFound: only the file API's code 404 is "no such path"; the
// error stays the *APIError and may be wrapped.
func TestErrFileNotFound(t *testing.T) {
	code := 404
	fk := newFakeKernel(t, func(w http.ResponseWriter, _ *http.Request, _ seen) {
		replyJSON(w, code, "path does not exist", nil)
	})
	c := newTestClient(t, fk.URL)
	ctx := context.Background()
	_, err := c.ReadDir(ctx, "/data/storage/petal/none")
	if !errors.Is(err, ErrFileNotFound) {
		t.Errorf("ReadDir 404: errors.Is(ErrFileNotFound) false for %v", err)
	}
	err = c.RemoveFile(ctx, "/data/storage/petal/none")
	if !errors.Is(err, ErrFileNotFound) {
		t.Errorf("RemoveFile 404: errors.Is(ErrFileNotFound) false for %v", err)
	}
	if wrapped := fmt.Errorf("load config: %w", err); !errors.Is(wrapped, ErrFileNotFound) {
		t.Errorf("wrapped: errors.Is(ErrFileNotFound) false")
	}
	var ae *APIError
	if !errors.As(err, &ae) || ae.Code != 404 || ae.Msg != "path does not exist" {
		t.Errorf("err = %v, want the *APIError", err)
	}
	// A 404 from another endpoint is not a missing file.
	if _, err := c.ListNotebooks(ctx); err == nil || errors.Is(err, ErrFileNotFound) {
		t.Errorf("ListNotebooks 404: err = %v, want an error that is not ErrFileNotFound", err)
	}
	code = 409
	if _, err := c.ReadDir(ctx, "/data/storage/file"); err == nil || errors.Is(err, ErrFileNotFound) {
		t.Errorf("ReadDir 409: err = %v, want an error that is not ErrFileNotFound", err)
	}
	if errors.Is(&APIError{Endpoint: endpoint.GetFile, Code: 404}, ErrInvalidArgument) {
		t.Error("a 404 matches ErrInvalidArgument")
	}
}
