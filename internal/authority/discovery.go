package authority

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Files an authority keeps in its state dir.
const (
	// RecordFile is the discovery record (mode 0600), removed on clean exit.
	RecordFile = "authority.json"
	// LockFile carries the exclusive lock of the running authority.
	LockFile = "authority.lock"
)

// Record is the discovery record of a running authority: how fronts, stdio
// and `sisyphus call` on the same state dir find it. It holds no secret;
// the bearer token stays in its own file.
type Record struct {
	// URL is the base URL of the authority's routes (/mcp, /tasks, /health).
	URL string `json:"url"`
	// InstanceID is random per start: a front pins it and refuses writes
	// once another instance answers (write_coordinator_changed).
	InstanceID string    `json:"instanceId"`
	PID        int       `json:"pid"`
	StartedAt  time.Time `json:"startedAt"`
	Version    string    `json:"version,omitempty"`
	// Kernel is the workspace identity the authority coordinates writes for
	// (see KernelIdentity and EmbeddedIdentity).
	Kernel string `json:"kernel"`
	// Strict tells whether Strict Safe Writes are on.
	Strict bool `json:"strict"`
	// MaxRequestBytes is the largest body the authority's /mcp takes (0:
	// not said): a front refuses a larger call before sending it.
	MaxRequestBytes int64 `json:"maxRequestBytes,omitempty"`
}

// MCPURL is the record's MCP endpoint.
func (r Record) MCPURL() string { return r.URL + "/mcp" }

// NewInstanceID returns a random instance id (a UUID).
func NewInstanceID() string { return NewTaskID() }

// NewTaskID returns a random (version 4) UUID.
func NewTaskID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// WriteRecord writes rec into dir atomically with mode 0600.
func WriteRecord(dir string, rec Record) error {
	return writeStateFile(dir, RecordFile, "discovery record", rec)
}

// ErrNoRecord means no authority is recorded in the state dir.
var ErrNoRecord = errors.New("no discovery record")

// ReadRecord reads the discovery record of dir. A record whose process is
// gone (a crashed authority) is ErrNoRecord too.
func ReadRecord(dir string) (Record, error) {
	return readStateFile[Record](dir, RecordFile, "discovery record")
}

// RemoveRecord removes dir's record if it still names instance.
func RemoveRecord(dir, instance string) error {
	return removeStateFile[Record](dir, RecordFile, instance)
}

func (r Record) owner() (string, int) { return r.InstanceID, r.PID }
func (r Record) valid() bool          { return r.URL != "" && r.InstanceID != "" }

// stateFile is a file a running authority keeps in its state dir: it names
// the instance and process that wrote it, so a crashed authority's file is
// ignored and a clean exit removes only its own.
type stateFile interface {
	owner() (instance string, pid int)
	valid() bool
}

// writeStateFile writes v as JSON into dir/name atomically (synced, then
// renamed) with mode 0600: some of these files hold tokens.
func writeStateFile(dir, name, what string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+name+"-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", what, err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(append(data, '\n'))
	for _, err := range []error{tmp.Chmod(0o600), werr, tmp.Sync(), tmp.Close(), os.Rename(tmp.Name(), filepath.Join(dir, name))} {
		if err != nil {
			return fmt.Errorf("write %s: %w", what, err)
		}
	}
	return nil
}

// readStateFile reads dir/name. A missing file, or one whose process is
// gone, is ErrNoRecord; a malformed one is an error naming it.
func readStateFile[T stateFile](dir, name, what string) (T, error) {
	var v T
	data, err := os.ReadFile(filepath.Join(dir, name))
	if errors.Is(err, os.ErrNotExist) {
		return v, ErrNoRecord
	}
	if err != nil {
		return v, fmt.Errorf("read %s: %w", what, err)
	}
	if err := json.Unmarshal(data, &v); err != nil || !v.valid() {
		var zero T
		return zero, fmt.Errorf("%s %s is malformed", what, filepath.Join(dir, name))
	}
	if _, pid := v.owner(); pid > 0 && !processAlive(pid) {
		var zero T
		return zero, ErrNoRecord
	}
	return v, nil
}

// removeStateFile removes dir/name unless it names another instance.
func removeStateFile[T stateFile](dir, name, instance string) error {
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return nil
	}
	var v T
	if json.Unmarshal(data, &v) == nil {
		if owner, _ := v.owner(); owner != instance {
			return nil
		}
	}
	return os.Remove(filepath.Join(dir, name))
}

// ErrStateDirBusy means another authority holds the state dir.
var ErrStateDirBusy = errors.New("state dir in use by another authority")

// LockStateDir takes the exclusive, non-blocking lock of an authority on
// dir (created 0700 when missing). It fails at once with an error wrapping
// ErrStateDirBusy, naming the holder when its record says who it is.
func LockStateDir(dir string) (release func() error, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create state dir: %w", err)
	}
	release, err = lockFile(filepath.Join(dir, LockFile))
	if errors.Is(err, ErrStateDirBusy) {
		who := ""
		if rec, rerr := ReadRecord(dir); rerr == nil {
			who = fmt.Sprintf(" (pid %d, MCP at %s, started %s)", rec.PID, rec.MCPURL(), rec.StartedAt.Format(time.RFC3339))
		}
		return nil, fmt.Errorf("state dir %s is in use by another sisyphus serve%s: one authority per state dir; stop it first, or point this one at another --state-dir: %w", dir, who, ErrStateDirBusy)
	}
	return release, err
}

// KernelIdentity is the workspace identity of a SiYuan kernel reached at
// rawURL: the URL normalised (scheme and host lower-cased, default port
// made explicit, localhost names folded to 127.0.0.1, no trailing slash).
func KernelIdentity(rawURL string) string {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil || u.Host == "" {
		return "url:" + strings.TrimSpace(rawURL)
	}
	scheme := strings.ToLower(u.Scheme)
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	if host == "localhost" || host == "::1" {
		host = "127.0.0.1"
	}
	return "url:" + scheme + "://" + net.JoinHostPort(host, port) + strings.TrimRight(u.EscapedPath(), "/")
}

// EmbeddedIdentity is the workspace identity of the embedded kernel on dir.
func EmbeddedIdentity(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	return "embedded:" + abs
}

// identityTag is what travels in the Sisyphus-Expect-Kernel header: a short
// digest of the identity, so that no path or URL is sent.
func identityTag(identity string) string {
	sum := sha256.Sum256([]byte(identity))
	return hex.EncodeToString(sum[:8])
}

// baseURL strips a trailing /mcp (or slash) from an authority URL.
func baseURL(u string) string {
	u = strings.TrimRight(strings.TrimSpace(u), "/")
	u = strings.TrimSuffix(u, "/mcp")
	return strings.TrimSuffix(u, PluginPrefix)
}

// KernelFile holds how to reach the embedded kernel an authority runs
// (mode 0600, removed on clean exit), so that stdio and `sisyphus call`
// given the same --embedded workspace read through it instead of failing on
// the workspace lock.
const KernelFile = "kernel.json"

// KernelAccess is the content of KernelFile. The token is the embedded
// kernel's API token: the file is as private as the bearer token's.
type KernelAccess struct {
	Identity   string `json:"identity"`
	URL        string `json:"url"`
	Token      string `json:"token"`
	InstanceID string `json:"instanceId"`
	PID        int    `json:"pid"`
}

func (a KernelAccess) owner() (string, int) { return a.InstanceID, a.PID }
func (a KernelAccess) valid() bool          { return a.URL != "" }

// WriteKernelAccess writes acc into dir with mode 0600.
func WriteKernelAccess(dir string, acc KernelAccess) error {
	return writeStateFile(dir, KernelFile, "kernel access", acc)
}

// ReadKernelAccess reads dir's kernel access of a live authority; anything
// else (none, malformed, its process gone) is ErrNoRecord.
func ReadKernelAccess(dir string) (KernelAccess, error) {
	acc, err := readStateFile[KernelAccess](dir, KernelFile, "kernel access")
	if err != nil {
		return KernelAccess{}, ErrNoRecord
	}
	return acc, nil
}

// RemoveKernelAccess removes dir's kernel access if it is instance's.
func RemoveKernelAccess(dir, instance string) {
	removeStateFile[KernelAccess](dir, KernelFile, instance)
}

// TokenFile holds the bearer token the running authority uses, whatever
// gave it (flag, environment or the state dir's generated token), so that
// fronts on the same state dir reach it without being told (mode 0600,
// removed on clean exit).
const TokenFile = "authority.token"

// AuthorityToken is the content of TokenFile.
type AuthorityToken struct {
	InstanceID string `json:"instanceId"`
	Token      string `json:"token"`
	PID        int    `json:"pid"`
}

func (t AuthorityToken) owner() (string, int) { return t.InstanceID, t.PID }
func (t AuthorityToken) valid() bool          { return t.Token != "" }

// WriteAuthorityToken writes tok into dir with mode 0600.
func WriteAuthorityToken(dir string, tok AuthorityToken) error {
	return writeStateFile(dir, TokenFile, "the authority's token", tok)
}

// ReadAuthorityToken reads dir's token of a live authority; anything else
// is ErrNoRecord.
func ReadAuthorityToken(dir string) (AuthorityToken, error) {
	tok, err := readStateFile[AuthorityToken](dir, TokenFile, "the authority's token")
	if err != nil {
		return AuthorityToken{}, ErrNoRecord
	}
	return tok, nil
}

// RemoveAuthorityToken removes dir's token file if it is instance's.
func RemoveAuthorityToken(dir, instance string) {
	removeStateFile[AuthorityToken](dir, TokenFile, instance)
}
