// Package settings keeps Sisyphus's configuration where the upstream SiYuan
// plugin keeps it, in the same files and JSON shapes, so that a person
// moving from the plugin keeps their settings and every process serving
// the workspace sees the same ones:
//
//   - data/storage/petal/siyuan-plugins-mcp-sisyphus/notebookPermissions:
//     {"<notebook id>": "none"|"r"|"rw"|"rwd", ...}; a notebook without an
//     entry is r; legacy values migrate (readonly → r, write → rw, anything
//     unknown → none);
//   - .../mcpToolsConfig: {"<tool>": {"enabled": bool, "actions":
//     {"<action>": bool}}, "writeSafety": {"strictMode": bool}, "mcpApps":
//     {"<app>": {"enabled": bool, "actions": {"<action>": bool}}}, ...}; keys
//     Sisyphus does not use are kept as they are. Two text keys hold the
//     virtual files the fs tool shows at the root: agentSiyuanMemoryText
//     (/AGENTS.md, the agents' memory, with agentSiyuanMemoryUpdatedAt) and
//     userRulesText (/USER_RULES.md, the person's rules, read-only to
//     agents); each is capped at MaxTextBytes.
//
// Both are read and written through the kernel API (getFile, putFile), never
// on disk directly. A file that cannot be read or parsed makes the policy
// fail closed, saying why.
package settings

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/sisyphus-go/sisyphus/internal/apps"
	"io"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// The files, as workspace paths.
const (
	PermissionsFile = tools.Protected + "/notebookPermissions"
	ToolsFile       = tools.Protected + "/mcpToolsConfig"
)

// maxFile bounds what is read of one configuration file.
const maxFile = 4 << 20

// Config is the configuration as stored. The zero value is the default
// configuration (no file yet).
type Config struct {
	perms    map[string]json.RawMessage // notebook id → stored value
	tools    map[string]json.RawMessage // mcpToolsConfig's keys → stored value
	permsRaw []byte
	toolsRaw []byte
	// problems say why a file cannot be used; any makes the policy fail
	// closed.
	problems []string
	// policy is built once: a Config is not changed after its read, and
	// the authority asks a cached one on every call.
	policyOnce sync.Once
	policy     *tools.Policy
	// placed is the policy with the notebooks SiYuan no longer has
	// (Store.Policy), kept for the gone set it was built for.
	placedMu  sync.Mutex
	placed    *tools.Policy
	placedFor string
}

// Problems say why the configuration cannot be used (none: it can).
func (c *Config) Problems() []string { return append([]string(nil), c.problems...) }

// Levels are the notebook entries, migrated.
func (c *Config) Levels() map[string]tools.Level {
	out := make(map[string]tools.Level, len(c.perms))
	for id, raw := range c.perms {
		var v any
		json.Unmarshal(raw, &v)
		out[id] = tools.MigrateLevel(v)
	}
	return out
}

// Migrated lists the notebooks whose stored value is a legacy or unknown one
// (the next change of permissions stores them migrated).
func (c *Config) Migrated() []string {
	var out []string
	for id, raw := range c.perms {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			out = append(out, id)
			continue
		}
		if _, ok := tools.ParseLevel(s); !ok {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// Switches are the tool switches.
func (c *Config) Switches() map[string]tools.Switch {
	out := map[string]tools.Switch{}
	for name, raw := range c.tools {
		enabled, actions, ok := parseSwitch(raw)
		if !ok {
			continue // not a tool entry (text, numbers, legacy shapes): ignored as upstream does
		}
		out[name] = tools.Switch{Enabled: enabled, Actions: actions}
	}
	return out
}

// parseSwitch reads one {enabled, actions} entry of mcpToolsConfig, a tool
// category's or an App's (upstream stores both alike). Each member is read
// on its own: what cannot be read is left unset (on), so a malformed entry
// never switches on what another says is off. ok is false for what is not
// an object.
func parseSwitch(raw json.RawMessage) (enabled *bool, actions map[string]bool, ok bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return nil, nil, false
	}
	var b bool
	if json.Unmarshal(obj["enabled"], &b) == nil {
		enabled = &b
	}
	var acts map[string]json.RawMessage
	if json.Unmarshal(obj["actions"], &acts) == nil {
		actions = map[string]bool{}
		for a, v := range acts {
			var on bool
			if json.Unmarshal(v, &on) == nil {
				actions[a] = on
			}
		}
	}
	return enabled, actions, true
}

// Strict is writeSafety.strictMode (on unless set to false).
func (c *Config) Strict() bool {
	var ws struct {
		StrictMode *bool `json:"strictMode"`
	}
	if json.Unmarshal(c.tools["writeSafety"], &ws) == nil && ws.StrictMode != nil {
		return *ws.StrictMode
	}
	return true
}

// SlimResponses is debug.slimResponses (on unless set to false): reads
// then say what they cover only when their answer is not complete; off,
// every main read carries readInfo.
func (c *Config) SlimResponses() bool {
	var d struct {
		Slim *bool `json:"slimResponses"`
	}
	if json.Unmarshal(c.tools["debug"], &d) == nil && d.Slim != nil {
		return *d.Slim
	}
	return true
}

// Apps are mcpToolsConfig.mcpApps: each MCP App's switch and its actions
// (on unless set to false, upstream's default).
func (c *Config) Apps() apps.Settings { return parseApps(c.tools[keyApps]) }

// parseApps reads mcpToolsConfig.mcpApps as upstream stores it, each App's
// entry on its own.
func parseApps(raw json.RawMessage) apps.Settings {
	out := apps.Settings{}
	var entries map[string]json.RawMessage
	if json.Unmarshal(raw, &entries) != nil {
		return out
	}
	for key, e := range entries {
		if enabled, actions, ok := parseSwitch(e); ok {
			out[key] = apps.Switch{Enabled: enabled, Actions: actions}
		}
	}
	return out
}

// keyApps is the MCP Apps' entry in mcpToolsConfig (upstream's name).
const keyApps = "mcpApps"

// LargeUpload is file.uploadLargeFileThresholdMB in bytes: upstream's
// default 10, clamped to 1..1024.
func (c *Config) LargeUpload() int64 {
	var f struct {
		MB *float64 `json:"uploadLargeFileThresholdMB"`
	}
	mb := 10.0
	if json.Unmarshal(c.tools["file"], &f) == nil && f.MB != nil {
		mb = min(max(float64(int64(*f.MB)), 1), 1024)
	}
	return int64(mb) << 20
}

// FeedbackURL is feedback.endpoint: where feedback.submit posts ("" when
// none is set).
func (c *Config) FeedbackURL() string {
	var f struct {
		Endpoint string `json:"endpoint"`
	}
	if json.Unmarshal(c.tools["feedback"], &f) != nil {
		return ""
	}
	return f.Endpoint
}

// CheckFeedbackURL accepts an absolute http or https URL without
// credentials in it, or "" (none).
func CheckFeedbackURL(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	switch {
	case err != nil || !u.IsAbs() || u.Host == "":
		return fmt.Errorf("the feedback endpoint must be an absolute http or https URL, got %q", s)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("the feedback endpoint must be http or https, got %q", u.Scheme)
	case u.User != nil:
		return errors.New("the feedback endpoint must not carry a user or password: put credentials in a path or query the endpoint expects")
	case len(s) > 2048:
		return errors.New("the feedback endpoint is longer than 2048 characters")
	}
	return nil
}

// Extension is mcpToolsConfig.extension: includeNativeTools (on unless set
// to false, upstream's default) and blockedTools.
func (c *Config) Extension() tools.ExtensionSettings {
	out := tools.ExtensionSettings{NativeTools: true}
	var e map[string]json.RawMessage
	if json.Unmarshal(c.tools["extension"], &e) != nil {
		return out
	}
	// Each field on its own: a malformed blockedTools must not undo
	// includeNativeTools:false.
	var native bool
	if json.Unmarshal(e["includeNativeTools"], &native) == nil {
		out.NativeTools = native
	}
	var blocked []string
	if json.Unmarshal(e["blockedTools"], &blocked) == nil {
		out.Blocked = blocked
	}
	return out
}

// Version identifies the configuration's content as far as it decides
// access: the texts (agent memory, user rules) do not count, so that an
// agent writing its memory does not make its own task results, or any
// other, answer access_changed.
func (c *Config) Version() string {
	h := sha256.New()
	h.Write(c.permsRaw)
	h.Write([]byte{0})
	h.Write(c.accessRaw())
	return "config:" + hex.EncodeToString(h.Sum(nil)[:8])
}

// accessRaw is mcpToolsConfig without its text keys (as stored when it
// cannot be parsed).
func (c *Config) accessRaw() []byte {
	if c.tools == nil {
		return c.toolsRaw
	}
	rest := make(map[string]json.RawMessage, len(c.tools))
	for k, v := range c.tools {
		switch k {
		case keyMemory, keyMemoryUpdated, keyUserRules:
		default:
			rest[k] = v
		}
	}
	b, _ := json.Marshal(rest) // sorted keys; raw values as stored
	return b
}

// Policy is the configuration as the gate applies it: the same value on
// every call, which nobody may change. Every none entry hides here, even
// one of a notebook SiYuan no longer has; Store.Policy leaves those out.
func (c *Config) Policy() *tools.Policy {
	c.policyOnce.Do(func() { c.policy = c.buildPolicy() })
	return c.policy
}

func (c *Config) buildPolicy() *tools.Policy {
	p := &tools.Policy{Notebooks: c.Levels(), Default: tools.DefaultLevel, Tools: c.Switches(), Strict: c.Strict(), Version: c.Version(),
		LargeUpload: c.LargeUpload(), FeedbackURL: c.FeedbackURL(), Extension: c.Extension(), FullReadInfo: !c.SlimResponses(),
		Apps: c.Apps()}
	if len(c.problems) > 0 {
		p.Err = errors.New(strings.Join(c.problems, "; "))
	}
	return p
}

// hidden are the notebooks the configuration hides, sorted.
func (c *Config) hidden() []string {
	var out []string
	for id, l := range c.Policy().Notebooks {
		if l == tools.LevelNone {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// policyWithout is the policy with gone as its Gone notebooks (the same
// value while the set stays the same).
func (c *Config) policyWithout(gone []string) *tools.Policy {
	base := c.Policy()
	if len(gone) == 0 {
		return base
	}
	key := strings.Join(gone, ",")
	c.placedMu.Lock()
	defer c.placedMu.Unlock()
	if c.placed == nil || c.placedFor != key {
		p := *base
		p.Gone = make(map[string]bool, len(gone))
		for _, id := range gone {
			p.Gone[id] = true
		}
		c.placed, c.placedFor = &p, key
	}
	return c.placed
}

// Store reads and writes the configuration through a kernel.
type Store struct {
	kernel *siyuan.Client
	// mu serialises this process's changes (the authority's: the only
	// writer Sisyphus has).
	mu sync.Mutex

	// A cached store keeps what it read for ttl; its own changes replace
	// it at once. Past half the ttl a call still gets the cached value and
	// starts one refresh in the background, so that a steady stream of
	// calls never waits for the files; a value is never served older than
	// ttl (cachedAt is when its read began).
	ttl        time.Duration
	cacheMu    sync.Mutex
	cached     *Config
	cachedAt   time.Time
	gen        uint64 // Invalidate's count: a read begun before one is not kept
	refreshing bool
	// announced is the access version onChange last heard of.
	announced string
	onChange  func()
	// clock ages the cache and stamps the memory's update time and the
	// verdicts on hidden notebooks (nil: time.Now); clockMu guards it, as
	// a test may set it while the store is in use.
	clockMu sync.RWMutex
	clock   func() time.Time

	// places are the verdicts on the hidden notebooks (see gone).
	placesMu sync.Mutex
	places   map[string]verdict
}

func (s *Store) now() time.Time {
	s.clockMu.RLock()
	clock := s.clock
	s.clockMu.RUnlock()
	if clock != nil {
		return clock()
	}
	return time.Now()
}

// SetClock replaces the store's clock (nil: time.Now), so that a test can
// age the cache step by step instead of waiting for it.
func (s *Store) SetClock(now func() time.Time) {
	s.clockMu.Lock()
	s.clock = now
	s.clockMu.Unlock()
}

// OnChange sets f to run, on a goroutine of its own, whenever the cache
// takes a configuration whose access (Config.Version) differs from the
// last one it took: whoever read it (a call, the background refresh), the
// tool list can follow at once rather than at its next poll. Only a cached
// store calls it.
func (s *Store) OnChange(f func()) {
	s.cacheMu.Lock()
	s.onChange = f
	s.cacheMu.Unlock()
}

// NewStore returns a store that reads the files on every Load.
func NewStore(kernel *siyuan.Client) *Store { return &Store{kernel: kernel} }

// NewCachedStore returns a store that keeps what it read for ttl: the
// authority's, which every call asks. A change it makes applies to the next
// call; an edit of the files by anything else within ttl.
func NewCachedStore(kernel *siyuan.Client, ttl time.Duration) *Store {
	return &Store{kernel: kernel, ttl: ttl}
}

// Invalidate drops the cached configuration (a change was made elsewhere
// in this process); a read begun before it is not kept.
func (s *Store) Invalidate() {
	s.cacheMu.Lock()
	s.cached = nil
	s.gen++
	s.cacheMu.Unlock()
}

// refreshTimeout bounds a background refresh of the cache.
const refreshTimeout = 10 * time.Second

// Load returns the configuration: read now, or for a cached store what was
// read less than ttl ago.
func (s *Store) Load(ctx context.Context) (*Config, error) {
	if s.ttl > 0 {
		s.cacheMu.Lock()
		c, age, gen := s.cached, s.now().Sub(s.cachedAt), s.gen
		ahead := c != nil && age >= s.ttl/2 && age < s.ttl && !s.refreshing
		if ahead {
			s.refreshing = true
		}
		s.cacheMu.Unlock()
		if c != nil && age < s.ttl {
			if ahead {
				go s.refresh(gen)
			}
			return c, nil
		}
	}
	s.cacheMu.Lock()
	gen := s.gen
	s.cacheMu.Unlock()
	began := s.now()
	c, err := s.readNow(ctx)
	if err == nil && s.ttl > 0 {
		s.keep(c, gen, began)
	}
	return c, err
}

// refresh reads the files for the cache, off any call's path. A panic
// here is not kept (it would end the process): the cache ages out and the
// next call reads, and answers, for itself.
func (s *Store) refresh(gen uint64) {
	var panicked error
	defer func() {
		s.cacheMu.Lock()
		s.refreshing = false
		s.cacheMu.Unlock()
	}()
	defer failure.Recover(&panicked)
	ctx, cancel := context.WithTimeout(context.Background(), refreshTimeout)
	defer cancel()
	began := s.now()
	if c, err := s.readNow(ctx); err == nil {
		s.keep(c, gen, began)
		s.gone(ctx, c.hidden()) // the verdicts too, so that calls find them fresh
	}
}

// keep caches what a read begun at began found, unless an Invalidate came
// since it began, and tells onChange when its access differs from the last
// one kept.
func (s *Store) keep(c *Config, gen uint64, began time.Time) {
	s.cacheMu.Lock()
	var changed func()
	if s.gen == gen && (s.cached == nil || began.After(s.cachedAt)) {
		s.cached, s.cachedAt = c, began
		if v := c.Version(); v != s.announced {
			s.announced, changed = v, s.onChange
		}
	}
	s.cacheMu.Unlock()
	if changed != nil {
		// Not on this goroutine: a reader of the store may hold locks the
		// listener takes (it reads the store in turn).
		go changed()
	}
}

// readNow reads both files now. A missing file is the default; one that
// cannot be parsed is a problem of the configuration (the policy fails
// closed); a kernel that cannot be reached is an error.
func (s *Store) readNow(ctx context.Context) (*Config, error) {
	c := &Config{}
	type result struct {
		raw     []byte
		missing bool
		err     error
	}
	var perm, tool result
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		defer failure.Recover(&perm.err)
		perm.raw, perm.missing, perm.err = s.read(ctx, PermissionsFile)
	}()
	go func() {
		defer wg.Done()
		defer failure.Recover(&tool.err)
		tool.raw, tool.missing, tool.err = s.read(ctx, ToolsFile)
	}()
	wg.Wait()
	for _, err := range []error{perm.err, tool.err} {
		if err != nil {
			return nil, err
		}
	}
	c.permsRaw, c.toolsRaw = perm.raw, tool.raw
	if !perm.missing {
		if m, why := object(perm.raw); why != "" {
			c.problems = append(c.problems, PermissionsFile+" "+why)
		} else {
			c.perms = m
		}
	}
	if !tool.missing {
		if m, why := object(tool.raw); why != "" {
			c.problems = append(c.problems, ToolsFile+" "+why)
		} else {
			c.tools = m
		}
	}
	return c, nil
}

// Policy loads the configuration now, as the gate applies it: a none entry
// of a notebook SiYuan no longer has (see gone) hides nothing.
func (s *Store) Policy(ctx context.Context) (*tools.Policy, error) {
	c, err := s.Load(ctx)
	if err != nil {
		return nil, err
	}
	return c.policyWithout(s.gone(ctx, c.hidden())), nil
}

// object parses a file that must hold a JSON object; an empty one is {}.
func object(raw []byte) (map[string]json.RawMessage, string) {
	if len(raw) > maxFile {
		return nil, "is larger than 4 MiB"
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return map[string]json.RawMessage{}, ""
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, "is not a JSON object"
	}
	return m, ""
}

// read reads one file; missing reports that it does not exist.
func (s *Store) read(ctx context.Context, p string) (data []byte, missing bool, err error) {
	body, _, err := s.kernel.GetFile(ctx, p)
	if err != nil {
		if errors.Is(err, siyuan.ErrFileNotFound) {
			return nil, true, nil // nothing stored yet: the defaults
		}
		return nil, false, fmt.Errorf("read %s: %w", p, err)
	}
	defer body.Close()
	data, err = io.ReadAll(io.LimitReader(body, maxFile+1))
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", p, err)
	}
	return data, false, nil
}

// The text keys of mcpToolsConfig, as upstream names them.
const (
	keyMemory        = "agentSiyuanMemoryText"
	keyMemoryUpdated = "agentSiyuanMemoryUpdatedAt"
	keyUserRules     = "userRulesText"
)

// MaxTextBytes caps the agent memory and the user rules: both are read
// whole into every call that shows them, and into the configuration file
// every call reads.
const MaxTextBytes = 64 << 10

// text is a string key of mcpToolsConfig ("" when absent or not a string).
func (c *Config) text(key string) string {
	var s string
	if json.Unmarshal(c.tools[key], &s) != nil {
		return ""
	}
	return s
}

// AgentMemory is the agents' memory text (/AGENTS.md).
func (c *Config) AgentMemory() string { return c.text(keyMemory) }

// AgentMemoryUpdatedAt is when the memory was last set (RFC 3339, "" when
// never or when it was cleared).
func (c *Config) AgentMemoryUpdatedAt() string { return c.text(keyMemoryUpdated) }

// UserRules is the person's rules text (/USER_RULES.md).
func (c *Config) UserRules() string { return c.text(keyUserRules) }

// Change is one change of the configuration; exactly one of its parts is
// set.
type Change struct {
	// Notebook and Permission set a notebook's level.
	Notebook   string `json:"notebook,omitempty"`
	Permission string `json:"permission,omitempty"`
	// Tool (and Action) with Enabled switch a tool or one of its actions.
	Tool    string `json:"tool,omitempty"`
	Action  string `json:"action,omitempty"`
	Enabled *bool  `json:"enabled,omitempty"`
	// App (and AppAction) with Enabled switch an MCP App or one of its
	// actions (mcpApps.<app>.enabled, mcpApps.<app>.actions.<action>).
	App       string `json:"app,omitempty"`
	AppAction string `json:"appAction,omitempty"`
	// Strict sets writeSafety.strictMode.
	Strict *bool `json:"strict,omitempty"`
	// Slim sets debug.slimResponses: on, a read carries readInfo only
	// when its answer is not whole; off, every main read carries it.
	Slim *bool `json:"slim,omitempty"`
	// FeedbackURL sets feedback.endpoint ("" removes it).
	FeedbackURL *string `json:"feedbackUrl,omitempty"`
	// AgentMemory sets the agents' memory text ("" clears it); UserRules
	// the person's rules.
	AgentMemory *string `json:"agentMemory,omitempty"`
	UserRules   *string `json:"userRules,omitempty"`
}

// Validate checks the change's shape (not whether its names exist).
func (ch Change) Validate() error {
	parts := 0
	if ch.Notebook != "" || ch.Permission != "" {
		parts++
		if err := tools.CheckID("notebook", ch.Notebook); err != nil {
			return err
		}
		if _, ok := tools.ParseLevel(ch.Permission); !ok {
			return fmt.Errorf("permission must be one of none, r, rw, rwd, got %q", ch.Permission)
		}
	}
	if ch.App != "" || ch.AppAction != "" {
		parts++
		a, ok := apps.Lookup(ch.App)
		switch {
		case !ok:
			return fmt.Errorf("unknown MCP App %q (one of %s)", ch.App, strings.Join(appKeys(), ", "))
		case ch.AppAction != "" && !a.Has(ch.AppAction):
			return fmt.Errorf("the %s App has no action %q (it has %s)", ch.App, ch.AppAction, strings.Join(a.Actions, ", "))
		case ch.Enabled == nil:
			return errors.New("switching an App needs enabled")
		case ch.Tool != "" || ch.Action != "":
			return errors.New("a change switches a tool or an App, not both")
		}
	} else if ch.Tool != "" || ch.Action != "" || ch.Enabled != nil {
		parts++
		if ch.Tool == "" || ch.Enabled == nil {
			return errors.New("switching needs a tool (and optionally an action) and enabled")
		}
	}
	if ch.Strict != nil {
		parts++
	}
	if ch.Slim != nil {
		parts++
	}
	if ch.FeedbackURL != nil {
		parts++
		if err := CheckFeedbackURL(*ch.FeedbackURL); err != nil {
			return err
		}
	}
	for _, t := range []struct {
		name string
		v    *string
	}{{"the agent memory", ch.AgentMemory}, {"the user rules", ch.UserRules}} {
		if t.v == nil {
			continue
		}
		parts++
		if len(*t.v) > MaxTextBytes {
			return fmt.Errorf("%s is %d bytes, more than the %d bytes it may hold", t.name, len(*t.v), MaxTextBytes)
		}
		if !utf8.ValidString(*t.v) {
			return fmt.Errorf("%s is not valid UTF-8", t.name)
		}
	}
	if parts != 1 {
		return errors.New("a change sets exactly one of: a notebook's permission, a tool or action switch, an App switch, strict mode, slim answers, the feedback endpoint, the agent memory, the user rules")
	}
	return nil
}

// Apply makes one change: it reads the file it changes fresh, changes only
// what the change names (other keys are kept), writes it back through the
// kernel and reads it again to verify. Changes in this process are
// serialised; a file that cannot be parsed is never overwritten.
func (s *Store) Apply(ctx context.Context, ch Change) (*Config, error) {
	if err := ch.Validate(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Invalidate()
	c, err := s.Load(ctx)
	if err != nil {
		return nil, err
	}
	switch {
	case ch.Notebook != "":
		if c.perms == nil && c.permsRaw != nil {
			return nil, fmt.Errorf("%s cannot be parsed; fix or remove it before changing permissions", PermissionsFile)
		}
		perms := map[string]string{}
		for id, l := range c.Levels() {
			perms[id] = l.String() // legacy values are stored migrated
		}
		perms[ch.Notebook] = ch.Permission
		if err := s.write(ctx, PermissionsFile, perms); err != nil {
			return nil, err
		}
	default:
		if c.tools == nil && c.toolsRaw != nil {
			return nil, fmt.Errorf("%s cannot be parsed; fix or remove it before changing tools or strict mode", ToolsFile)
		}
		next := map[string]any{}
		for k, v := range c.tools {
			next[k] = v
		}
		switch {
		case ch.AgentMemory != nil:
			next[keyMemory] = *ch.AgentMemory
			next[keyMemoryUpdated] = ""
			if strings.TrimSpace(*ch.AgentMemory) != "" {
				next[keyMemoryUpdated] = s.now().UTC().Format(time.RFC3339Nano)
			}
		case ch.UserRules != nil:
			next[keyUserRules] = *ch.UserRules
		case ch.Strict != nil:
			next["writeSafety"] = merge(c.tools["writeSafety"], map[string]any{"strictMode": *ch.Strict})
		case ch.Slim != nil:
			next["debug"] = merge(c.tools["debug"], map[string]any{"slimResponses": *ch.Slim})
		case ch.FeedbackURL != nil:
			entry := merge(c.tools["feedback"], map[string]any{"endpoint": *ch.FeedbackURL})
			if *ch.FeedbackURL == "" {
				delete(entry, "endpoint")
			}
			next["feedback"] = entry
		case ch.App != "":
			var all map[string]json.RawMessage
			json.Unmarshal(c.tools[keyApps], &all)
			entry := all[ch.App]
			set := map[string]any{"enabled": *ch.Enabled}
			if ch.AppAction != "" {
				var obj map[string]json.RawMessage
				json.Unmarshal(entry, &obj)
				set = map[string]any{"actions": merge(obj["actions"], map[string]any{ch.AppAction: *ch.Enabled})}
			}
			// Other Apps and unknown members stay as stored.
			next[keyApps] = merge(c.tools[keyApps], map[string]any{ch.App: merge(entry, set)})
		default:
			entry := c.tools[ch.Tool]
			if ch.Action == "" {
				next[ch.Tool] = merge(entry, map[string]any{"enabled": *ch.Enabled})
			} else {
				var obj map[string]json.RawMessage
				json.Unmarshal(entry, &obj)
				next[ch.Tool] = merge(entry, map[string]any{"actions": merge(obj["actions"], map[string]any{ch.Action: *ch.Enabled})})
			}
		}
		if err := s.write(ctx, ToolsFile, next); err != nil {
			return nil, err
		}
	}
	s.Invalidate()
	after, err := s.Load(ctx)
	if err != nil {
		return nil, fmt.Errorf("the change was written but could not be read back: %w", err)
	}
	if !ch.shows(after) {
		return nil, errors.New("the change was written but the readback does not show it (another writer?)")
	}
	return after, nil
}

// shows reports whether c carries the change.
func (ch Change) shows(c *Config) bool {
	switch {
	case ch.Notebook != "":
		l, _ := tools.ParseLevel(ch.Permission)
		got, ok := c.Levels()[ch.Notebook]
		return ok && got == l
	case ch.Strict != nil:
		return c.Strict() == *ch.Strict
	case ch.Slim != nil:
		return c.SlimResponses() == *ch.Slim
	case ch.FeedbackURL != nil:
		return c.FeedbackURL() == *ch.FeedbackURL
	case ch.AgentMemory != nil:
		return c.AgentMemory() == *ch.AgentMemory
	case ch.UserRules != nil:
		return c.UserRules() == *ch.UserRules
	case ch.App != "":
		sw := c.Apps()[ch.App]
		if ch.AppAction == "" {
			return sw.Enabled != nil && *sw.Enabled == *ch.Enabled
		}
		v, ok := sw.Actions[ch.AppAction]
		return ok && v == *ch.Enabled
	}
	sw := c.Switches()[ch.Tool]
	if ch.Action == "" {
		return sw.Enabled != nil && *sw.Enabled == *ch.Enabled
	}
	v, ok := sw.Actions[ch.Action]
	return ok && v == *ch.Enabled
}

// appKeys are the MCP Apps' keys, for messages.
func appKeys() []string {
	var out []string
	for _, a := range apps.All() {
		out = append(out, a.Key)
	}
	return out
}

// merge sets keys of a stored object (or of a new one when it is not an
// object), keeping the others.
func merge(raw json.RawMessage, set map[string]any) map[string]any {
	out := map[string]any{}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) == nil {
		for k, v := range obj {
			out[k] = v
		}
	}
	for k, v := range set {
		out[k] = v
	}
	return out
}

// write stores v as JSON indented by two spaces, as upstream writes it.
func (s *Store) write(ctx context.Context, p string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	err = s.kernel.PutFile(ctx, siyuan.PutFileRequest{Path: p, Body: bytes.NewReader(data), ModTime: time.Now().UnixMilli()})
	if err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
}
