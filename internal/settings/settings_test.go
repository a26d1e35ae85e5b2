package settings

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/embedded"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

func kernel(t *testing.T) *siyuan.Client {
	c, _ := countedKernel(t)
	return c
}

// calls counts a kernel's requests by path.
type calls struct {
	mu   sync.Mutex
	n    map[string]int
	fail map[string]bool // paths answered HTTP 500
	sql  []string        // the bodies of the SQL queries
}

// failing makes the kernel answer a path with HTTP 500 (on: true) or as
// it does.
func (c *calls) failing(p string, on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fail[p] = on
}

// add counts a request and reports whether it is to fail.
func (c *calls) add(p string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[p]++
	return c.fail[p]
}

// take returns the counts so far and starts again from zero.
func (c *calls) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.n
	c.n = map[string]int{}
	c.sql = nil
	return out
}

// queries returns the SQL bodies sent since the last take.
func (c *calls) queries() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.sql...)
}

// countedKernel is an embedded kernel whose requests are counted by path;
// the notebooks the tests name exist in it.
func countedKernel(t testing.TB) (*siyuan.Client, *calls) {
	t.Helper()
	k, err := embedded.Open(context.Background(), embedded.Options{Dir: t.TempDir(), Token: "t", SQLFlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	n := &calls{n: map[string]int{}, fail: map[string]bool{}}
	inner := k.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/query/sql" {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			n.mu.Lock()
			n.sql = append(n.sql, string(body))
			n.mu.Unlock()
		}
		if n.add(r.URL.Path) {
			http.Error(w, "injected", http.StatusInternalServerError)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { srv.Close(); k.Close() })
	c, err := siyuan.New(siyuan.Config{BaseURL: srv.URL, Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{nb1, nb2, nb3, nbBogus, nbNumber} {
		put(t, c, "/data/"+id+"/.siyuan/conf.json", `{"name":"`+id+`"}`)
	}
	n.take()
	return c, n
}

func put(t testing.TB, c *siyuan.Client, p, body string) {
	t.Helper()
	if err := c.PutFile(context.Background(), siyuan.PutFileRequest{Path: p, Body: strings.NewReader(body)}); err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, c *siyuan.Client, p string) string {
	t.Helper()
	r, _, err := c.GetFile(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, _ := io.ReadAll(r)
	return string(b)
}

const nb1, nb2, nb3 = "20260101000000-aaaaaaa", "20260101000000-bbbbbbb", "20260101000000-ccccccc"

// Notebooks whose stored levels upstream never wrote (read as none).
const nbBogus, nbNumber = "20260101000000-ddddddd", "20260101000000-eeeeeee"

func TestDefaults(t *testing.T) {
	s := NewStore(kernel(t))
	p, err := s.Policy(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if p.Err != nil || p.Level(nb1) != tools.LevelRead || !p.Strict || p.Hides() {
		t.Fatalf("default policy: %+v", p)
	}
	off := &tools.Action{Name: "delete", OffByDefault: true}
	on := &tools.Action{Name: "update"}
	tl := &tools.Tool{Name: "block", Actions: []*tools.Action{off, on}}
	if p.ActionOn(tl, off) || !p.ActionOn(tl, on) || !p.ToolOn(tl) {
		t.Fatal("default switches: dangerous-by-default actions are off, the others on")
	}
}

// TestSlimResponses: debug.slimResponses, on unless set to false, keeps
// complete reads without readInfo; false asks for the full form.
func TestSlimResponses(t *testing.T) {
	for body, full := range map[string]bool{`{}`: false, `{"debug": {"slimResponses": true}}`: false,
		`{"debug": {"slimResponses": false}}`: true, `{"debug": {"slimResponses": "no"}}`: false} {
		c := kernel(t)
		put(t, c, ToolsFile, body)
		cfg, err := NewStore(c).Load(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.Policy().FullReadInfo; got != full {
			t.Errorf("%s: FullReadInfo %v, want %v", body, got, full)
		}
	}
}

// TestUpstreamFiles: the files upstream writes are read as upstream reads
// them, legacy values included.
func TestUpstreamFiles(t *testing.T) {
	c := kernel(t)
	put(t, c, PermissionsFile, `{"`+nb1+`": "readonly", "`+nb2+`": "write", "`+nb3+`": "none", "`+nbBogus+`": "bogus", "`+nbNumber+`": 7}`)
	put(t, c, ToolsFile, `{"block": {"enabled": true, "actions": {"delete": true, "update": false}},
		"search": {"enabled": false, "actions": {}}, "writeSafety": {"strictMode": false},
		"userRulesText": "keep me", "debug": {"slimResponses": true}, "fs": true}`)
	s := NewStore(c)
	cfg, err := s.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Policy()
	want := map[string]tools.Level{nb1: tools.LevelRead, nb2: tools.LevelWrite, nb3: tools.LevelNone,
		nbBogus: tools.LevelNone, nbNumber: tools.LevelNone}
	for id, l := range want {
		if p.Level(id) != l {
			t.Errorf("%s: %v, want %v", id, p.Level(id), l)
		}
	}
	if got := cfg.Migrated(); len(got) != 4 {
		t.Errorf("migrated entries: %v", got)
	}
	del, upd := &tools.Action{Name: "delete", OffByDefault: true}, &tools.Action{Name: "update"}
	block := &tools.Tool{Name: "block", Actions: []*tools.Action{del, upd}}
	search := &tools.Tool{Name: "search", Actions: []*tools.Action{{Name: "fulltext"}}}
	fs := &tools.Tool{Name: "fs", Actions: []*tools.Action{{Name: "ls"}}}
	switch {
	case !p.ActionOn(block, del) || p.ActionOn(block, upd):
		t.Error("action switches not applied")
	case p.ToolOn(search):
		t.Error("a disabled tool is on")
	case !p.ToolOn(fs):
		t.Error("a legacy boolean tool entry must be ignored (defaults), as upstream does")
	case p.Strict:
		t.Error("writeSafety.strictMode false not applied")
	case p.FullReadInfo:
		t.Error("debug.slimResponses true must keep reads slim")
	case !p.Hides():
		t.Error("a none notebook must hide")
	}

	// A change stores permissions migrated and keeps every other key.
	if _, err := s.Apply(context.Background(), Change{Notebook: nb1, Permission: "rwd"}); err != nil {
		t.Fatal(err)
	}
	var stored map[string]string
	if err := json.Unmarshal([]byte(get(t, c, PermissionsFile)), &stored); err != nil {
		t.Fatal(err)
	}
	if stored[nb1] != "rwd" || stored[nb2] != "rw" || stored[nb3] != "none" || stored["20260101000000-ddddddd"] != "none" {
		t.Fatalf("stored permissions: %v", stored)
	}
	on := true
	if _, err := s.Apply(context.Background(), Change{Tool: "block", Action: "update", Enabled: &on}); err != nil {
		t.Fatal(err)
	}
	var tc map[string]json.RawMessage
	raw := get(t, c, ToolsFile)
	json.Unmarshal([]byte(raw), &tc)
	if string(tc["userRulesText"]) != `"keep me"` || !strings.Contains(string(tc["debug"]), "slimResponses") || string(tc["fs"]) != "true" {
		t.Fatalf("unknown keys were not kept: %s", raw)
	}
	var entry struct {
		Enabled bool
		Actions map[string]bool
	}
	if json.Unmarshal(tc["block"], &entry) != nil || !entry.Enabled || !entry.Actions["delete"] || !entry.Actions["update"] {
		t.Fatalf("block entry: %s", tc["block"])
	}
	if !strings.HasPrefix(raw, "{\n  \"") {
		t.Fatalf("not written as upstream writes it (two-space indent): %q", raw[:min(20, len(raw))])
	}
}

func TestApply(t *testing.T) {
	c := kernel(t)
	s := NewStore(c)
	ctx := context.Background()
	off, on := false, true
	before, _ := s.Load(ctx)
	for _, ch := range []Change{
		{Notebook: nb1, Permission: "none"},
		{Notebook: nb2, Permission: "rw"},
		{Tool: "block", Action: "delete", Enabled: &on},
		{Tool: "search", Enabled: &off},
		{Strict: &off},
	} {
		cfg, err := s.Apply(ctx, ch)
		if err != nil {
			t.Fatalf("%+v: %v", ch, err)
		}
		if !ch.shows(cfg) {
			t.Fatalf("%+v does not show", ch)
		}
	}
	after, _ := s.Load(ctx)
	p := after.Policy()
	if p.Level(nb1) != tools.LevelNone || p.Level(nb2) != tools.LevelWrite || p.Strict || p.Version == before.Version() {
		t.Fatalf("after the changes: %+v", p)
	}
	for _, bad := range []Change{
		{},
		{Notebook: "x", Permission: "rw"},
		{Notebook: nb1, Permission: "admin"},
		{Tool: "block"},
		{Notebook: nb1, Permission: "r", Strict: &on},
	} {
		if _, err := s.Apply(ctx, bad); err == nil {
			t.Errorf("%+v was accepted", bad)
		}
	}
}

// TestUnreadable: a file that cannot be parsed fails the policy closed,
// saying why, and is never overwritten by a change.
func TestUnreadable(t *testing.T) {
	c := kernel(t)
	put(t, c, PermissionsFile, `{"`+nb1+`": "rw",`)
	s := NewStore(c)
	p, err := s.Policy(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if p.Err == nil || !strings.Contains(p.Err.Error(), "notebookPermissions is not a JSON object") {
		t.Fatalf("a broken file must fail closed: %v", p.Err)
	}
	if _, err := s.Apply(context.Background(), Change{Notebook: nb1, Permission: "rwd"}); err == nil || !strings.Contains(err.Error(), "fix or remove it") {
		t.Fatalf("a change over a broken file: %v", err)
	}
	if got := get(t, c, PermissionsFile); got != `{"`+nb1+`": "rw",` {
		t.Fatalf("the broken file was overwritten: %q", got)
	}
	put(t, c, ToolsFile, strings.Repeat(" ", maxFile+1))
	if p, _ := s.Policy(context.Background()); p.Err == nil || !strings.Contains(p.Err.Error(), "4 MiB") {
		t.Fatalf("an oversize file: %v", p.Err)
	}
	// An empty file is the default, as upstream reads it.
	put(t, c, PermissionsFile, "")
	put(t, c, ToolsFile, "\n")
	if p, _ := s.Policy(context.Background()); p.Err != nil {
		t.Fatalf("empty files: %v", p.Err)
	}
}

// FuzzConfig: whatever the files hold, loading never panics, and a policy
// either fails closed or has a level for every entry.
func FuzzConfig(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":"rw"}`, `{"a":{"enabled":false,"actions":{"x":true}}}`, `[1]`, `null`, `"x"`, `{"writeSafety":{"strictMode":"no"}}`} {
		f.Add([]byte(s), []byte(s))
	}
	f.Fuzz(func(t *testing.T, perms, tl []byte) {
		c := &Config{}
		if m, why := object(perms); why == "" {
			c.perms = m
		}
		if m, why := object(tl); why == "" {
			c.tools = m
		}
		c.permsRaw, c.toolsRaw = perms, tl
		p := c.Policy()
		for id := range c.perms {
			_ = p.Level(id)
		}
		_ = c.Switches()
		_ = c.Strict()
		_ = bytes.Clone(perms)
	})
}

// TestCachedStore: a cached store answers from memory for its ttl, sees its
// own changes at once, and an edit by anything else after the ttl.
func TestCachedStore(t *testing.T) {
	c := kernel(t)
	ctx := context.Background()
	s := NewCachedStore(c, 200*time.Millisecond)
	if p, _ := s.Policy(ctx); p.Level(nb1) != tools.LevelRead {
		t.Fatal("default")
	}
	if _, err := s.Apply(ctx, Change{Notebook: nb1, Permission: "rwd"}); err != nil {
		t.Fatal(err)
	}
	if p, _ := s.Policy(ctx); p.Level(nb1) != tools.LevelDelete {
		t.Fatal("its own change must apply at once")
	}
	put(t, c, PermissionsFile, `{"`+nb1+`": "none"}`) // an edit from outside
	if p, _ := s.Policy(ctx); p.Level(nb1) != tools.LevelDelete {
		t.Fatal("within the ttl the cached configuration answers")
	}
	time.Sleep(250 * time.Millisecond)
	if p, _ := s.Policy(ctx); p.Level(nb1) != tools.LevelNone {
		t.Fatal("after the ttl the edit applies")
	}
	put(t, c, PermissionsFile, `{"`+nb1+`": "rw"}`)
	s.Invalidate()
	if p, _ := s.Policy(ctx); p.Level(nb1) != tools.LevelWrite {
		t.Fatal("after Invalidate the edit applies")
	}
}

// TestCachedStoreRefreshesAhead: past half its ttl a cached store answers
// from memory and refreshes in the background, so that the next call sees
// an outside edit without reading the files itself; a refresh begun before
// an Invalidate never puts its older read back.
func TestCachedStoreRefreshesAhead(t *testing.T) {
	c := kernel(t)
	ctx := context.Background()
	s := NewCachedStore(c, 400*time.Millisecond)
	if p, _ := s.Policy(ctx); p.Level(nb1) != tools.LevelRead {
		t.Fatal("default")
	}
	put(t, c, PermissionsFile, `{"`+nb1+`": "rw"}`)
	time.Sleep(250 * time.Millisecond) // past half the ttl
	if p, _ := s.Policy(ctx); p.Level(nb1) != tools.LevelRead {
		t.Fatal("within the ttl the cached value answers, while the refresh runs")
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		s.cacheMu.Lock()
		done := !s.refreshing
		s.cacheMu.Unlock()
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the background refresh did not finish")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if p, _ := s.Policy(ctx); p.Level(nb1) != tools.LevelWrite {
		t.Fatal("the refresh ahead did not pick up the edit")
	}

	// A read that began before an Invalidate is not kept.
	s.cacheMu.Lock()
	gen := s.gen
	s.cacheMu.Unlock()
	stale, err := s.readNow(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.Invalidate()
	s.keep(stale, gen, time.Now())
	s.cacheMu.Lock()
	kept := s.cached
	s.cacheMu.Unlock()
	if kept != nil {
		t.Fatal("a read from before an Invalidate was kept")
	}
}

// TestTexts: the agent memory and the user rules are text keys of
// mcpToolsConfig, as upstream names them; other keys are kept; the memory's
// update time is set with text and cleared with it; the cap holds.
func TestTexts(t *testing.T) {
	c := kernel(t)
	put(t, c, ToolsFile, `{"fs":{"enabled":true},"userRulesText":"old rules","other":1}`)
	s := NewStore(c)
	s.clock = func() time.Time { return time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC) }
	ctx := context.Background()
	mem, rules, empty, big := "remember this", "be brief", "", strings.Repeat("x", MaxTextBytes+1)
	first, _ := s.Load(ctx)
	for _, tc := range []struct {
		ch                     Change
		memory, updated, rules string
	}{
		{Change{AgentMemory: &mem}, mem, "2026-12-01T12:00:00Z", "old rules"},
		{Change{UserRules: &rules}, mem, "2026-12-01T12:00:00Z", rules},
		{Change{AgentMemory: &empty}, "", "", rules},
	} {
		cfg, err := s.Apply(ctx, tc.ch)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.AgentMemory() != tc.memory || cfg.AgentMemoryUpdatedAt() != tc.updated || cfg.UserRules() != tc.rules {
			t.Fatalf("%+v: memory %q at %q, rules %q", tc.ch, cfg.AgentMemory(), cfg.AgentMemoryUpdatedAt(), cfg.UserRules())
		}
	}
	// The texts are not access configuration: the version stays.
	if after, _ := s.Load(ctx); after.Version() != first.Version() {
		t.Fatalf("a text change changed the version: %s → %s", first.Version(), after.Version())
	}
	var stored map[string]any
	json.Unmarshal([]byte(get(t, c, ToolsFile)), &stored)
	if stored["other"] != float64(1) || stored["userRulesText"] != rules || stored["agentSiyuanMemoryText"] != "" {
		t.Fatalf("stored: %v", stored)
	}
	if sw := (&Config{tools: map[string]json.RawMessage{"userRulesText": json.RawMessage(`"x"`)}}).Switches(); len(sw) != 0 {
		t.Fatalf("a text key read as a tool switch: %v", sw)
	}
	for _, bad := range []Change{{AgentMemory: &big}, {UserRules: &big}, {AgentMemory: &mem, UserRules: &rules}, {UserRules: ptr("\xff")}} {
		if _, err := s.Apply(ctx, bad); err == nil {
			t.Errorf("accepted %d-byte change %+v", len(big), bad.Validate())
		}
	}
}

func ptr(s string) *string { return &s }

// TestAppSwitches: mcpApps is read into the policy (on by default), an App
// change writes only its member (unknown members and other Apps kept),
// and a change naming an unknown App or action, or without enabled, is
// refused.
func TestAppSwitches(t *testing.T) {
	c := kernel(t)
	put(t, c, ToolsFile, `{"mcpApps": {"timeline": {"enabled": true, "extra": 1}, "futureApp": {"x": true}}, "block": {"enabled": true}}`)
	s := NewStore(c)
	ctx := context.Background()
	cfg, err := s.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p := cfg.Policy(); !p.Apps.On("timeline") || !p.Apps.On("flashcardReview") || !p.Apps.ActionOn("timeline", "rollback_block") {
		t.Fatalf("defaults: %+v", p.Apps)
	}
	off := false
	if _, err := s.Apply(ctx, Change{App: "timeline", AppAction: "rollback_block", Enabled: &off}); err != nil {
		t.Fatal(err)
	}
	if cfg, err = s.Apply(ctx, Change{App: "flashcardReview", Enabled: &off}); err != nil {
		t.Fatal(err)
	}
	p := cfg.Policy()
	if p.Apps.ActionOn("timeline", "rollback_block") || !p.Apps.ActionOn("timeline", "rollback_document") || p.Apps.On("flashcardReview") {
		t.Errorf("after the changes: %+v", p.Apps)
	}
	var stored struct {
		Apps  map[string]map[string]any `json:"mcpApps"`
		Block map[string]any            `json:"block"`
	}
	if err := json.Unmarshal([]byte(get(t, c, ToolsFile)), &stored); err != nil {
		t.Fatal(err)
	}
	apps := stored.Apps
	if apps["timeline"]["extra"] != float64(1) || apps["futureApp"]["x"] != true || apps["flashcardReview"]["enabled"] != false ||
		apps["timeline"]["actions"].(map[string]any)["rollback_block"] != false || stored.Block["enabled"] != true {
		t.Errorf("stored: %v", stored)
	}
	on := true
	for _, ch := range []Change{{App: "nope", Enabled: &on}, {App: "timeline", AppAction: "buy", Enabled: &on}, {App: "timeline"},
		{App: "timeline", Tool: "block", Enabled: &on}} {
		if ch.Validate() == nil {
			t.Errorf("%+v was accepted", ch)
		}
	}
}
