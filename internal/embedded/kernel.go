package embedded

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Version is the SiYuan kernel version this kernel imitates.
const Version = "3.7.3"

// Options configure a kernel.
type Options struct {
	// Dir is the workspace directory; it is created, with a sample notebook
	// and a welcome document, when it does not exist or is empty.
	Dir string
	// Token is the API token clients must send. Empty means: the token stored
	// in conf/conf.json, or a new random one written there on first start.
	Token string
	// Faults are injected per endpoint, for tests.
	Faults []Fault
	// SQLFlushInterval is how long the SQL index may lag writes; SiYuan's is
	// 3 seconds. Zero means 3 seconds.
	SQLFlushInterval time.Duration
	Logger           *slog.Logger
}

// Kernel is an embedded SiYuan-compatible kernel on one workspace.
type Kernel struct {
	dir, dataDir, tempDir string
	token                 string
	log                   *slog.Logger
	faults                *Faults
	start                 time.Time
	unlock                func() error

	// writeMu serialises every mutating request, as SiYuan's per-path write
	// mutex and single transaction queue do.
	writeMu sync.Mutex
	// avMu serialises the read-modify-write cycles of database files; it
	// is taken after writeMu.
	avMu sync.Mutex

	// mu guards the block tree below; it is held only for map access.
	mu         sync.RWMutex
	blocks     map[string]blockLoc
	rootBlocks map[string][]string
	docs       map[string]*docEntry

	sql *sqlIndex

	// mcpList is the MCP endpoint's tools, built once (mcpTools).
	mcpOnce sync.Once
	mcpList []mcpTool

	// pendingDeletes are deleteBlock calls answered but not yet applied,
	// guarded by writeMu.
	pendingDeletes []string

	// staleTitles are documents renamed since the queue was last flushed:
	// SiYuan's attribute cache keeps answering getBlockAttrs with the old
	// title until then, and so does this kernel. Guarded by mu.
	staleTitles map[string]string

	// ocr is the OCR text table, loaded at Open.
	ocr *ocrTexts
	// assetHashes remembers uploads into data/assets, for upload's reuse.
	assetHashes assetHashes

	msgMu sync.Mutex
	msgs  []Message

	// riff is the flashcard decks and review session (riff_store.go).
	riff riffStore
	// repo guards the data repository (repo_store.go).
	repo repoStore
	// mcpState holds the MCP endpoint's legacy sessions.
	mcpState mcpSessions
}

// Message is a notification pushed with pushMsg or pushErrMsg; the embedded
// kernel has no UI, so it keeps the last few for tests and logs them.
type Message struct {
	ID      string
	Text    string
	Error   bool
	Timeout int
}

// Open opens (or creates) a workspace and indexes it.
func Open(ctx context.Context, o Options) (*Kernel, error) {
	if o.Dir == "" {
		return nil, errors.New("embedded kernel: workspace directory is required")
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("workspace path: %w", err)
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	k := &Kernel{
		dir: dir, dataDir: filepath.Join(dir, "data"), tempDir: filepath.Join(dir, "temp"),
		log: log, faults: &Faults{}, start: time.Now(),
		blocks: map[string]blockLoc{}, rootBlocks: map[string][]string{}, docs: map[string]*docEntry{},
	}
	k.faults.Set(o.Faults...)
	k.ocr = loadOCRTexts(k.dataDir)
	fresh, err := k.prepareDirs()
	if err != nil {
		return nil, err
	}
	unlock, err := lockWorkspace(filepath.Join(dir, ".lock"))
	if err != nil {
		return nil, err
	}
	k.unlock = unlock
	ok := false
	defer func() {
		if !ok {
			k.unlock()
		}
	}()
	if k.token, err = k.loadToken(o.Token); err != nil {
		return nil, err
	}
	interval := o.SQLFlushInterval
	if interval <= 0 {
		interval = 3 * time.Second
	}
	if k.sql, err = openSQLIndex(ctx, k, interval); err != nil {
		return nil, err
	}
	if err := k.loadIndex(); err != nil {
		k.sql.close()
		return nil, err
	}
	if fresh {
		if err := k.seed(ctx); err != nil {
			k.sql.close()
			return nil, fmt.Errorf("seed workspace: %w", err)
		}
	}
	if err := k.sql.rebuild(ctx); err != nil {
		k.sql.close()
		return nil, err
	}
	ok = true
	log.Info("embedded kernel ready", "workspace", dir, "documents", len(k.docs), "blocks", len(k.blocks))
	return k, nil
}

// Token returns the API token clients must send.
func (k *Kernel) Token() string { return k.token }

// Dir returns the workspace directory.
func (k *Kernel) Dir() string { return k.dir }

// Faults returns the kernel's fault set, to change faults while it runs.
func (k *Kernel) Faults() *Faults { return k.faults }

// Messages returns the notifications pushed so far (the last 100).
func (k *Kernel) Messages() []Message {
	k.msgMu.Lock()
	defer k.msgMu.Unlock()
	return append([]Message(nil), k.msgs...)
}

// Close flushes the SQL index and releases the workspace lock.
func (k *Kernel) Close() error {
	k.writeMu.Lock()
	defer k.writeMu.Unlock()
	k.applyPendingLocked()
	err := k.sql.close()
	if uerr := k.unlock(); err == nil {
		err = uerr
	}
	return err
}

// prepareDirs creates the workspace layout; fresh reports a new workspace.
func (k *Kernel) prepareDirs() (fresh bool, err error) {
	entries, err := os.ReadDir(k.dataDir)
	fresh = errors.Is(err, os.ErrNotExist) || (err == nil && len(entries) == 0)
	for _, d := range []string{"conf", "data/assets", "data/templates", "data/widgets", "data/plugins",
		"data/emojis", "data/public", "data/storage", "temp/export", "history"} {
		if err := os.MkdirAll(filepath.Join(k.dir, filepath.FromSlash(d)), 0o755); err != nil {
			return false, fmt.Errorf("create workspace: %w", err)
		}
	}
	// SiYuan wipes temp/export at every boot.
	exp := filepath.Join(k.tempDir, "export")
	if err := os.RemoveAll(exp); err != nil {
		return false, fmt.Errorf("clear %s: %w", exp, err)
	}
	if err := os.MkdirAll(exp, 0o755); err != nil {
		return false, fmt.Errorf("create %s: %w", exp, err)
	}
	return fresh, nil
}

// loadToken resolves the API token: the given one, else conf/conf.json's
// api.token, else a new random token persisted there (as SiYuan does).
func (k *Kernel) loadToken(given string) (string, error) {
	p := filepath.Join(k.dir, "conf", "conf.json")
	conf := map[string]any{}
	if data, err := os.ReadFile(p); err == nil {
		if err := json.Unmarshal(data, &conf); err != nil {
			return "", fmt.Errorf("read %s: %w", p, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read %s: %w", p, err)
	}
	api, _ := conf["api"].(map[string]any)
	if api == nil {
		api = map[string]any{}
	}
	stored, _ := api["token"].(string)
	tok := given
	if tok == "" {
		tok = stored
	}
	if tok == "" {
		tok = randomAlnum(16)
	}
	if tok != stored {
		api["token"] = tok
		conf["api"] = api
		data, _ := json.MarshalIndent(conf, "", "  ")
		if err := writeFileAtomic(p, data, 0o600); err != nil {
			return "", err
		}
	}
	return tok, nil
}

func randomAlnum(n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

func (k *Kernel) version(ctx context.Context, a args) (any, error) { return Version, nil }

func (k *Kernel) bootProgress(ctx context.Context, a args) (any, error) {
	return map[string]any{"progress": 100, "details": "Finishing boot..."}, nil
}

func (k *Kernel) currentTime(ctx context.Context, a args) (any, error) {
	return time.Now().UnixMilli(), nil
}

func (k *Kernel) pushMsg(ctx context.Context, a args) (any, error)    { return k.push(a, false) }
func (k *Kernel) pushErrMsg(ctx context.Context, a args) (any, error) { return k.push(a, true) }

func (k *Kernel) push(a args, isErr bool) (any, error) {
	msg, err := a.str("msg")
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(msg) == "" {
		return nil, errf("msg can not be empty")
	}
	timeout, err := a.optInt("timeout", 7000)
	if err != nil {
		return nil, err
	}
	return map[string]any{"id": k.notify(msg, isErr, timeout)}, nil
}

// notify records a notification, as SiYuan shows one in its UI, and
// returns its ID.
func (k *Kernel) notify(msg string, isErr bool, timeout int) string {
	m := Message{ID: randomAlnum(7), Text: msg, Error: isErr, Timeout: timeout}
	k.msgMu.Lock()
	k.msgs = append(k.msgs, m)
	if len(k.msgs) > 100 {
		k.msgs = k.msgs[len(k.msgs)-100:]
	}
	k.msgMu.Unlock()
	k.log.Info("notification", "error", isErr, "msg", msg)
	return m.ID
}
