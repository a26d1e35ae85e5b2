package siyuan

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"sync/atomic"
	"time"
)

// Defaults applied by [New] to zero Config fields.
const (
	DefaultReadAttempts     = 3
	DefaultReadBackoff      = 100 * time.Millisecond
	DefaultMaxResponseBytes = 64 << 20 // 64 MiB
)

// Config configures a [Client].
type Config struct {
	// BaseURL of the kernel, e.g. "http://127.0.0.1:6806". A path prefix is
	// kept (useful behind a reverse proxy).
	BaseURL string
	// Token is the API token (SiYuan Settings → About). Empty sends no
	// Authorization header, which SiYuan accepts only from localhost without
	// an access auth code.
	Token string
	// HTTPClient is used for every request; nil means a private client with a
	// clone of http.DefaultTransport. It is copied, never modified: the copy
	// refuses redirects, because following a 307/308 would re-send a write.
	HTTPClient *http.Client
	// Logger receives debug records per attempt and warnings for retries and
	// unknown outcomes. Nil discards. Tokens and bodies are never logged.
	Logger *slog.Logger
	// ReadAttempts is the total number of attempts for a read (default 3).
	ReadAttempts int
	// ReadBackoff is the pause before the first read retry, doubled for each
	// further retry (default 100ms).
	ReadBackoff time.Duration
	// Timeout bounds each attempt, including reading its reply (and, for
	// GetFile, the streamed body). Zero means only the caller's context applies.
	Timeout time.Duration
	// MaxResponseBytes caps a JSON reply (default 64 MiB). GetFile bodies are
	// streamed to the caller and not capped.
	MaxResponseBytes int64
}

// Client talks to one SiYuan kernel. Create it with [New].
type Client struct {
	baseURL      string // without trailing slash
	token        string
	hc           *http.Client
	log          *slog.Logger
	readAttempts int
	readBackoff  time.Duration
	timeout      time.Duration
	maxResponse  int64
	mcpSeq       atomic.Int64 // JSON-RPC ids of /mcp requests
}

// WithReadAttempts returns a client like c whose reads are attempted n
// times in all (at least once); c is unchanged. Writes stay single-attempt.
func (c *Client) WithReadAttempts(n int) *Client {
	return &Client{baseURL: c.baseURL, token: c.token, hc: c.hc, log: c.log, readAttempts: max(n, 1),
		readBackoff: c.readBackoff, timeout: c.timeout, maxResponse: c.maxResponse}
}

// New validates cfg and returns a client.
func New(cfg Config) (*Client, error) {
	u, err := url.Parse(strings.TrimSpace(cfg.BaseURL))
	if err != nil {
		return nil, fmt.Errorf("siyuan: invalid base URL %q: %w", cfg.BaseURL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("siyuan: base URL %q must use http or https", cfg.BaseURL)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("siyuan: base URL %q has no host", cfg.BaseURL)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("siyuan: base URL %q must not carry credentials, a query or a fragment", cfg.BaseURL)
	}
	if strings.ContainsAny(cfg.Token, "\r\n") {
		return nil, errors.New("siyuan: token contains a line break")
	}
	if cfg.ReadAttempts < 0 || cfg.ReadBackoff < 0 || cfg.Timeout < 0 || cfg.MaxResponseBytes < 0 {
		return nil, errors.New("siyuan: ReadAttempts, ReadBackoff, Timeout and MaxResponseBytes must not be negative")
	}

	c := &Client{
		baseURL:      strings.TrimRight(u.String(), "/"),
		token:        cfg.Token,
		log:          cfg.Logger,
		readAttempts: cfg.ReadAttempts,
		readBackoff:  cfg.ReadBackoff,
		timeout:      cfg.Timeout,
		maxResponse:  cfg.MaxResponseBytes,
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.readAttempts == 0 {
		c.readAttempts = DefaultReadAttempts
	}
	if c.readBackoff == 0 {
		c.readBackoff = DefaultReadBackoff
	}
	if c.maxResponse == 0 {
		c.maxResponse = DefaultMaxResponseBytes
	}
	var hc http.Client
	if cfg.HTTPClient != nil {
		hc = *cfg.HTTPClient
	} else {
		t := http.DefaultTransport.(*http.Transport).Clone()
		// One kernel host serves every call: keep enough idle connections
		// for concurrent agents instead of the default two, which under load
		// turns each call into a new connection.
		t.MaxIdleConnsPerHost = 64
		hc.Transport = t
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c.hc = &hc
	return c, nil
}

// BaseURL returns the kernel URL the client talks to.
func (c *Client) BaseURL() string { return c.baseURL }

// CallKind classifies a call for retry purposes.
type CallKind int

const (
	// Read calls have no effect on the workspace; they are retried on
	// transient failures.
	Read CallKind = iota + 1
	// Write calls may change the workspace (or have another external side
	// effect); they are attempted exactly once.
	Write
)

func (k CallKind) String() string {
	switch k {
	case Read:
		return "read"
	case Write:
		return "write"
	}
	return fmt.Sprintf("CallKind(%d)", int(k))
}

// Do is the escape hatch for endpoints without a typed method: it POSTs req as
// JSON (nil sends {}) to endpoint (e.g. "/api/system/version") and decodes the
// envelope's data into out, which must be a non-nil pointer or nil. When out is
// non-nil, {code:0, data:null} is reported as [*NullDataError]; pass nil for
// endpoints that reply null on success. kind decides retries: choose Write for
// anything that is not provably free of side effects.
func (c *Client) Do(ctx context.Context, endpoint string, req, out any, kind CallKind) error {
	return c.call(ctx, endpoint, kind, req, out, false)
}

// call is what every typed JSON method goes through.
func (c *Client) call(ctx context.Context, endpoint string, kind CallKind, req, out any, nullable bool) error {
	if kind != Read && kind != Write {
		return invalidArg(endpoint, "unknown call kind %d", int(kind))
	}
	if err := checkEndpoint(endpoint); err != nil {
		return err
	}
	if out != nil {
		if rv := reflect.ValueOf(out); rv.Kind() != reflect.Pointer || rv.IsNil() {
			// Caught before sending: failing to decode after a write was
			// applied would turn a programming error into an unknown outcome.
			return invalidArg(endpoint, "out must be a non-nil pointer, got %T", out)
		}
	}
	body, err := encodeJSONBody(endpoint, req)
	if err != nil {
		return err
	}
	r := &request{endpoint: endpoint, kind: kind, jsonBody: body, out: out, nullable: nullable}
	_, err = c.run(ctx, r)
	return err
}

func checkEndpoint(endpoint string) error {
	if !strings.HasPrefix(endpoint, "/") || strings.ContainsAny(endpoint, "?# \t\r\n") || strings.Contains(endpoint, "..") {
		return invalidArg(endpoint, "endpoint must be an absolute path such as /api/system/version")
	}
	return nil
}
