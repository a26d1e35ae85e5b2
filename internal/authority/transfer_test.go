package authority

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/transfer"
)

// stagingAuthority is an authority's service served with its staging store
// and an instance id, on a switchable handler.
type stagingAuthority struct {
	svc      *Service
	url      string
	instance string
	h        atomic.Pointer[http.Handler]
}

func newStagingAuthority(t *testing.T) *stagingAuthority {
	t.Helper()
	_, _, svc := newAuthorityWith(t, nil)
	a := &stagingAuthority{svc: svc, instance: NewInstanceID()}
	a.serveAs(a.instance)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*a.h.Load()).ServeHTTP(w, r) }))
	t.Cleanup(hs.Close)
	a.url = hs.URL
	return a
}

func (a *stagingAuthority) serveAs(instance string) {
	h := Routes(a.svc.MCP, RoutesConfig{Token: "t", Admission: a.svc.Admission, Instance: instance, Role: "authority", Version: "test",
		Staging: a.svc.Staging})
	a.h.Store(&h)
}

func send(t *testing.T, method, url string, header map[string]string, body io.Reader) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, url, body)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if h, ok := header["Host"]; ok {
		req.Host = h
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

func TestStagingRoutes(t *testing.T) {
	a := newStagingAuthority(t)
	data := []byte("an image, say")
	sum := transferDigest(data)
	for _, prefix := range []string{"", PluginPrefix} {
		t.Run("prefix "+prefix, func(t *testing.T) {
			raw := func(extra map[string]string) (int, map[string]any) {
				h := map[string]string{"Authorization": "Bearer t", "Content-Type": "application/octet-stream", transfer.HeaderFileName: url.PathEscape("a b.png")}
				for k, v := range extra {
					h[k] = v
				}
				return send(t, "POST", a.url+prefix+transfer.UploadPath, h, bytes.NewReader(data))
			}
			st, up := raw(nil)
			if st != 200 || up["sha256"] != sum || up["fileName"] != "a b.png" {
				t.Fatalf("upload: %d %v", st, up)
			}
			lookup, _ := json.Marshal(map[string]any{"fileName": "a b.png", "sha256": sum, "size": len(data)})
			st, found := send(t, "POST", a.url+prefix+transfer.LookupPath, map[string]string{"Authorization": "Bearer t", "Content-Type": "application/json"}, bytes.NewReader(lookup))
			if st != 200 || found["found"] != true || found["uploadSource"] != up["uploadSource"] {
				t.Fatalf("lookup: %d %v", st, found)
			}
			for _, c := range []struct {
				name   string
				header map[string]string
				status int
				code   failure.Code
			}{
				{"no token", map[string]string{"Authorization": ""}, 401, failure.Unauthorized},
				{"wrong token", map[string]string{"Authorization": "Bearer nope"}, 401, failure.Unauthorized},
				{"foreign origin", map[string]string{"Origin": "http://evil.example"}, 403, failure.Forbidden},
				{"null origin", map[string]string{"Origin": "null", "Sec-Fetch-Site": "same-origin"}, 403, failure.Forbidden},
				{"rebinding host", map[string]string{"Host": "evil.example"}, 421, failure.Misdirected},
				{"another instance", map[string]string{HeaderExpectInstance: NewInstanceID()}, 409, failure.CoordinatorChanged},
			} {
				st, m := raw(c.header)
				if e, _ := m["error"].(map[string]any); st != c.status || e["code"] != string(c.code) {
					t.Errorf("%s: %d %v", c.name, st, m)
				}
			}
		})
	}
	if snap, err := a.svc.Staging.Resolve(""); err == nil || snap.Size != 0 {
		t.Fatal("resolved an empty handle")
	}
	// /health shows the staging counts beside admission's, nothing more.
	st, h := send(t, "GET", a.url+"/health", map[string]string{"Authorization": "Bearer t"}, nil)
	staging, _ := h["staging"].(map[string]any)
	if st != 200 || staging["staged"] != 1.0 || staging["reused"] != 1.0 || staging["lookupHits"] != 2.0 || staging["entries"] != 1.0 ||
		staging["bytes"] != float64(len(data)) || staging["maxConcurrent"] != 2.0 || h["lanes"] == nil {
		t.Fatalf("health: %d %v", st, h)
	}
	if raw, _ := json.Marshal(h); bytes.Contains(raw, []byte("staged:")) || bytes.Contains(raw, []byte(sum)) {
		t.Fatalf("health discloses a handle or a digest: %s", raw)
	}
}

func transferDigest(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// TestFrontAnswersStagingRoutes404: a front has no store; it says where to
// stage, behind the same token.
func TestFrontAnswersStagingRoutes404(t *testing.T) {
	url, c := newAuthority(t)
	d := NewDelegator(DelegatorConfig{URL: url, Token: "t", StateDir: t.TempDir()})
	svc, err := NewService(ServiceConfig{Kernel: c, Delegator: d, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	if svc.Staging != nil || svc.Stager == nil || svc.Downloader == nil {
		t.Fatalf("a front's service: staging %v, stager %v, downloader %v", svc.Staging, svc.Stager, svc.Downloader)
	}
	hs := httptest.NewServer(Routes(svc.MCP, RoutesConfig{Token: "f", Admission: svc.Admission, Role: "front", Version: "test"}))
	defer hs.Close()
	for _, prefix := range []string{"", PluginPrefix} {
		for _, path := range []string{transfer.UploadPath, transfer.LookupPath} {
			if st, _ := send(t, "POST", hs.URL+prefix+path, nil, strings.NewReader("x")); st != 401 {
				t.Fatalf("%s without a token: %d", path, st)
			}
			st, m := send(t, "POST", hs.URL+prefix+path, map[string]string{"Authorization": "Bearer f", "Content-Type": "application/octet-stream"}, strings.NewReader("x"))
			if e, _ := m["error"].(map[string]any); st != 404 || e["code"] != string(failure.NotAuthority) {
				t.Fatalf("%s on a front: %d %v", path, st, m)
			}
		}
	}
	if _, h := send(t, "GET", hs.URL+"/health", map[string]string{"Authorization": "Bearer f"}, nil); h["staging"] != nil {
		t.Fatalf("a front's health shows staging: %v", h)
	}
}

// TestFrontStagesThroughTheDelegator: the front's Stager reaches the
// authority with the Delegator's URL, token and pins; the authority's
// upload_asset then reads exactly the file's bytes.
func TestFrontStagesThroughTheDelegator(t *testing.T) {
	a := newStagingAuthority(t)
	data := bytes.Repeat([]byte("local file "), 50_000)
	p := filepath.Join(t.TempDir(), "report.pdf")
	os.WriteFile(p, data, 0o600)
	d := NewDelegator(DelegatorConfig{URL: a.url, Token: "t", StateDir: t.TempDir()})
	st := stager{s: &transfer.Stager{Authority: d}, guard: allowing(t, filepath.Dir(p))}
	handle, err := st.Stage(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := a.svc.Staging.Resolve(handle)
	if err != nil || snap.Name != "report.pdf" {
		t.Fatalf("resolve %q: %+v %v", handle, snap, err)
	}
	if b, _ := io.ReadAll(snap.Open()); !bytes.Equal(b, data) {
		t.Fatal("the staged bytes differ from the file")
	}
	if _, inst := d.Pinned(); inst != a.instance {
		t.Fatalf("pinned %q, want %q", inst, a.instance)
	}

	// A wrong token is the Delegator's plain-words refusal.
	bad := stager{s: &transfer.Stager{Authority: NewDelegator(DelegatorConfig{URL: a.url, Token: "wrong", StateDir: t.TempDir()})}, guard: st.guard}
	if _, err := bad.Stage(context.Background(), p); errCodeOf(err) != failure.CoordinatorUnavailable || !strings.Contains(err.Error(), "refused the token") {
		t.Fatalf("wrong token: %v", err)
	}
	// Another instance behind the same URL: the pinned front refuses.
	a.serveAs(NewInstanceID())
	if _, err := st.Stage(context.Background(), p); errCodeOf(err) != failure.CoordinatorChanged {
		t.Fatalf("another instance: %v", err)
	}
	// No authority at all.
	gone := stager{s: &transfer.Stager{Authority: NewDelegator(DelegatorConfig{URL: "http://127.0.0.1:1", Token: "t", StateDir: t.TempDir()})}, guard: st.guard}
	if _, err := gone.Stage(context.Background(), p); errCodeOf(err) != failure.CoordinatorUnavailable {
		t.Fatalf("no authority: %v", err)
	}
}

func errCodeOf(err error) failure.Code {
	c, _ := errCode(err)
	return c
}
