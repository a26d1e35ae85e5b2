package siyuan

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestNewValidatesConfig(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr bool
	}{
		{"plain", Config{BaseURL: "http://127.0.0.1:6806"}, false},
		{"trailing slash and prefix", Config{BaseURL: "https://example.test/siyuan/"}, false},
		{"empty", Config{}, true},
		{"no scheme", Config{BaseURL: "127.0.0.1:6806"}, true},
		{"ftp", Config{BaseURL: "ftp://127.0.0.1"}, true},
		{"no host", Config{BaseURL: "http://"}, true},
		{"query", Config{BaseURL: "http://h/?token=x"}, true},
		{"credentials", Config{BaseURL: "http://u:p@h"}, true},
		{"token newline", Config{BaseURL: "http://h", Token: "a\nb"}, true},
		{"negative attempts", Config{BaseURL: "http://h", ReadAttempts: -1}, true},
		{"negative cap", Config{BaseURL: "http://h", MaxResponseBytes: -1}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			if (err != nil) != tt.wantErr {
				t.Fatalf("New(%+v) error = %v, wantErr %v", tt.cfg, err, tt.wantErr)
			}
		})
	}
}

func TestNewAppliesDefaultsAndKeepsCallerClient(t *testing.T) {
	hc := &http.Client{Timeout: time.Minute}
	c, err := New(Config{BaseURL: "http://h:1/x/", HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	if c.readAttempts != DefaultReadAttempts || c.readBackoff != DefaultReadBackoff || c.maxResponse != DefaultMaxResponseBytes {
		t.Errorf("defaults not applied: %+v", c)
	}
	if c.BaseURL() != "http://h:1/x" {
		t.Errorf("BaseURL = %q", c.BaseURL())
	}
	if hc.CheckRedirect != nil {
		t.Error("caller's http.Client was modified")
	}
	if c.hc.Timeout != time.Minute || c.hc.CheckRedirect == nil {
		t.Error("client copy should keep Timeout and refuse redirects")
	}
}

func TestRequestShape(t *testing.T) {
	tests := []struct {
		name     string
		token    string
		wantAuth string
	}{
		{"with token", "s3cret", "Token s3cret"},
		{"without token", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fk := newFakeKernel(t, replyOK("3.7.3"))
			c := newTestClient(t, fk.URL+"/prefix/", func(c *Config) { c.Token = tt.token })
			v, err := c.Version(context.Background())
			if err != nil || v != "3.7.3" {
				t.Fatalf("Version = %q, %v", v, err)
			}
			s := fk.last(t)
			if s.Method != http.MethodPost || s.Path != "/prefix/api/system/version" {
				t.Errorf("got %s %s", s.Method, s.Path)
			}
			if s.Auth != tt.wantAuth {
				t.Errorf("Authorization = %q, want %q", s.Auth, tt.wantAuth)
			}
			if s.ContentType != "application/json" {
				t.Errorf("Content-Type = %q", s.ContentType)
			}
			if string(s.Body) != "{}" {
				t.Errorf("body = %q, want {}", s.Body)
			}
			if strings.HasPrefix(s.UserAgent, "Mozilla/") || strings.HasPrefix(s.UserAgent, "SiYuan/") {
				// SiYuan answers such agents with browser redirects.
				t.Errorf("User-Agent %q triggers browser handling", s.UserAgent)
			}
		})
	}
}

func TestDoRejectsBadArgumentsBeforeSending(t *testing.T) {
	fk := newFakeKernel(t, replyOK(nil))
	c := newTestClient(t, fk.URL)
	var notPtr string
	tests := []struct {
		name     string
		endpoint string
		req, out any
		kind     CallKind
	}{
		{"kind zero", "/api/x", nil, nil, 0},
		{"relative endpoint", "api/x", nil, nil, Read},
		{"query in endpoint", "/api/x?token=1", nil, nil, Read},
		{"out not pointer", "/api/x", nil, notPtr, Write},
		{"req not object", "/api/x", []string{"a"}, nil, Write},
		{"req not encodable", "/api/x", map[string]any{"f": func() {}}, nil, Write},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := c.Do(context.Background(), tt.endpoint, tt.req, tt.out, tt.kind)
			if !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("err = %v, want ErrInvalidArgument", err)
			}
		})
	}
	if n := fk.hits.Load(); n != 0 {
		t.Fatalf("%d requests sent, want 0", n)
	}
}

func TestDoSendsEmptyObjectForNilRequests(t *testing.T) {
	fk := newFakeKernel(t, replyOK(nil))
	c := newTestClient(t, fk.URL)
	var nilMap map[string]any
	for _, req := range []any{nil, nilMap, (*struct{})(nil)} {
		if err := c.Do(context.Background(), "/api/x", req, nil, Write); err != nil {
			t.Fatal(err)
		}
		if got := string(fk.last(t).Body); got != "{}" {
			t.Errorf("req %#v sent %q, want {}", req, got)
		}
	}
}

// TestEnvelopeDecoding covers how a 2xx body turns into data or an error.
func TestEnvelopeDecoding(t *testing.T) {
	tests := []struct {
		name  string
		body  string
		check func(t *testing.T, got string, err error)
	}{
		{"data", `{"code":0,"msg":"","data":"ok"}`, func(t *testing.T, got string, err error) {
			if err != nil || got != "ok" {
				t.Fatalf("got %q, %v", got, err)
			}
		}},
		{"api error", `{"code":-1,"msg":"invalid ID argument","data":{"closeTimeout":5000}}`, func(t *testing.T, _ string, err error) {
			var ae *APIError
			if !errors.As(err, &ae) || ae.Code != -1 || ae.Msg != "invalid ID argument" || ae.Endpoint != "/api/x" {
				t.Fatalf("err = %#v", err)
			}
		}},
		{"null data", `{"code":0,"msg":"","data":null}`, wantNullData},
		{"missing data", `{"code":0,"msg":""}`, wantNullData},
		{"missing code", `{"msg":"","data":"x"}`, wantDecodeError},
		{"empty object", `{}`, wantDecodeError},
		{"html", `<html>proxy error</html>`, wantDecodeError},
		{"empty body", ``, wantDecodeError},
		{"trailing garbage", `{"code":0,"data":"x"} {`, wantDecodeError},
		{"wrong data type", `{"code":0,"data":42}`, wantDecodeError},
		{"code not int", `{"code":"0","data":"x"}`, wantDecodeError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fk := newFakeKernel(t, func(w http.ResponseWriter, _ *http.Request, _ seen) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(tt.body))
			})
			c := newTestClient(t, fk.URL)
			var got string
			err := c.Do(context.Background(), "/api/x", nil, &got, Read)
			tt.check(t, got, err)
			if n := fk.hits.Load(); n != 1 {
				t.Errorf("%d attempts, want 1 (decoding problems are not retried)", n)
			}
		})
	}
}

func wantNullData(t *testing.T, _ string, err error) {
	t.Helper()
	var ne *NullDataError
	if !errors.As(err, &ne) || ne.Endpoint != "/api/x" {
		t.Fatalf("err = %v, want *NullDataError", err)
	}
}

func wantDecodeError(t *testing.T, _ string, err error) {
	t.Helper()
	var de *DecodeError
	if !errors.As(err, &de) {
		t.Fatalf("err = %v, want *DecodeError", err)
	}
}

func TestNullDataAllowedWhenOutIsNil(t *testing.T) {
	fk := newFakeKernel(t, replyOK(nil))
	c := newTestClient(t, fk.URL)
	if err := c.Do(context.Background(), "/api/x", nil, nil, Write); err != nil {
		t.Fatalf("null data with out=nil: %v", err)
	}
}

func TestResponseSizeCap(t *testing.T) {
	big := strings.Repeat("x", 2048)
	fk := newFakeKernel(t, replyOK(big))
	c := newTestClient(t, fk.URL, func(c *Config) { c.MaxResponseBytes = 1024 })

	var out string
	err := c.Do(context.Background(), "/api/x", nil, &out, Read)
	var tl *ResponseTooLargeError
	if !errors.As(err, &tl) || tl.Limit != 1024 || IsOutcomeUnknown(err) {
		t.Fatalf("read: err = %v, want *ResponseTooLargeError", err)
	}

	// For a write the kernel answered 2xx, so it probably applied the write.
	err = c.Do(context.Background(), "/api/x", nil, &out, Write)
	if !IsOutcomeUnknown(err) || !errors.As(err, &tl) {
		t.Fatalf("write: err = %v, want OutcomeUnknown wrapping *ResponseTooLargeError", err)
	}

	c = newTestClient(t, fk.URL) // default 64 MiB cap accepts it
	if err := c.Do(context.Background(), "/api/x", nil, &out, Read); err != nil || out != big {
		t.Fatalf("default cap: %v", err)
	}
}

func TestAuthErrors(t *testing.T) {
	tests := []struct {
		name       string
		token      string
		status     int
		body       string
		wantMsg    string
		wantInText []string
	}{
		{"wrong token", "bad", 401, `{"code":-1,"msg":"Auth failed [header: Authorization]"}`,
			"Auth failed [header: Authorization]", []string{"401", "check the API token in SiYuan Settings → About"}},
		{"no token", "", 401, `{"code":-1,"msg":"Auth failed [session]"}`,
			"Auth failed [session]", []string{"no API token is configured"}},
		{"not admin", "reader", 403, ``,
			"", []string{"403", "the token lacks admin role"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fk := newFakeKernel(t, func(w http.ResponseWriter, _ *http.Request, _ seen) {
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.body))
			})
			c := newTestClient(t, fk.URL, func(c *Config) { c.Token = tt.token })
			for _, kind := range []CallKind{Read, Write} {
				before := fk.hits.Load()
				err := c.Do(context.Background(), "/api/x", nil, nil, kind)
				var ae *AuthError
				if !errors.As(err, &ae) || ae.Status != tt.status || ae.Msg != tt.wantMsg || IsOutcomeUnknown(err) {
					t.Fatalf("%v: err = %#v", kind, err)
				}
				for _, s := range tt.wantInText {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("%v: %q does not mention %q", kind, err.Error(), s)
					}
				}
				if n := fk.hits.Load() - before; n != 1 {
					t.Errorf("%v: %d attempts, want 1", kind, n)
				}
			}
		})
	}
}

// lockedBuffer is a concurrency-safe log sink.
type lockedBuffer struct {
	buf bytes.Buffer
	mu  chan struct{}
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu <- struct{}{}
	defer func() { <-b.mu }()
	return b.buf.Write(p)
}

func TestLogsNeverContainToken(t *testing.T) {
	fk := newFakeKernel(t, func(w http.ResponseWriter, _ *http.Request, _ seen) {
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	logs := &lockedBuffer{mu: make(chan struct{}, 1)}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := newTestClient(t, fk.URL, func(c *Config) { c.Token = "very-secret-token"; c.Logger = logger })
	_ = c.Do(context.Background(), "/api/x", map[string]string{"k": "body-content"}, nil, Read)
	out := logs.buf.String()
	if !strings.Contains(out, "/api/x") || !strings.Contains(out, "retrying") {
		t.Errorf("expected attempt and retry records, got:\n%s", out)
	}
	if strings.Contains(out, "very-secret-token") || strings.Contains(out, "body-content") {
		t.Errorf("log leaks token or body:\n%s", out)
	}
}

func TestCallKindString(t *testing.T) {
	if Read.String() != "read" || Write.String() != "write" || CallKind(7).String() != "CallKind(7)" {
		t.Error("CallKind.String")
	}
}
