// Package tooltest is the test support of the tool packages: an embedded
// kernel with a notebook and a document, a registry of the tools under
// test, an optional strict coordinator over a ledger, and helpers that call
// tools as an agent does and check the Strict Safe Writes answers.
//
// It is imported only by tests.
package tooltest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/embedded"
	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// Fixture is an embedded kernel, a client, and a registry of the tools
// under test.
type Fixture struct {
	R *tools.Registry
	C *siyuan.Client
	K *embedded.Kernel
	// NB is a notebook; Doc a document in it ("Guide" in New, "Doc" in
	// NewStrict) with top-level Blocks; Child a child document of Doc
	// (New only).
	NB     string
	Doc    string
	Blocks []string
	Child  string
	// Ledger is the ledger file of a strict fixture.
	Ledger string
	// MaxWriteBytes is the registry's write cap from the next Reopen (0:
	// the default).
	MaxWriteBytes int
	// MaxTemplateBytes is the registry's template body budget from the
	// next Reopen (0: the default).
	MaxTemplateBytes int
	// Sources are the upload sources of the registry (a MemSources from
	// the start; set before Reopen to change them).
	Sources tools.Sources
	// OnDispatch observes strict dispatches from the next Reopen.
	OnDispatch func(strict.Dispatch)
	// Unconfirmed stops Call from confirming dangerous calls (tests of the
	// confirmation itself).
	Unconfirmed bool
	// Policy, when set, is the configuration Call runs its calls under.
	Policy *tools.Policy

	tools  func() []*tools.Tool
	wrap   atomic.Pointer[func(http.Handler) http.Handler]
	ledger *strict.Ledger
}

// Hook intercepts kernel requests in a test: returning true means it
// answered the request itself.
type Hook func(w http.ResponseWriter, r *http.Request) bool

// SetHook installs h in front of the kernel (nil removes it).
func (f *Fixture) SetHook(h Hook) {
	if h == nil {
		f.Wrap(nil)
		return
	}
	f.Wrap(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !h(w, r) {
				next.ServeHTTP(w, r)
			}
		})
	})
}

// Wrap puts middleware in front of the kernel (nil removes it).
func (f *Fixture) Wrap(mw func(next http.Handler) http.Handler) {
	if mw == nil {
		f.wrap.Store(nil)
		return
	}
	f.wrap.Store(&mw)
}

// start opens an embedded kernel behind the fixture's hook.
func (f *Fixture) start(t testing.TB, cfg siyuan.Config) {
	t.Helper()
	k, err := embedded.Open(context.Background(), embedded.Options{Dir: t.TempDir(), Token: "t", SQLFlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	inner := k.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if mw := f.wrap.Load(); mw != nil {
			(*mw)(inner).ServeHTTP(w, r)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { srv.Close(); k.Close() })
	cfg.BaseURL, cfg.Token = srv.URL, "t"
	c, err := siyuan.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.K, f.C = k, c
}

// New returns a fixture without a coordinator (writes answer
// write_coordinator_unavailable): notebook "Tools" with document "Guide"
// (headings and paragraphs) and its child "Guide/Child". tools builds the
// tools to register.
func New(t testing.TB, toolset func() []*tools.Tool) *Fixture {
	t.Helper()
	ctx := context.Background()
	f := &Fixture{tools: toolset}
	f.start(t, siyuan.Config{})
	nb, err := f.C.CreateNotebook(ctx, "Tools")
	if err != nil {
		t.Fatal(err)
	}
	md := "# One\n\nalpha paragraph\n\n## One.A\n\nbeta paragraph\n\n# Two\n\ngamma paragraph with a unique zebra word\n"
	doc, err := f.C.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: nb.ID, Path: "/Guide", Markdown: md})
	if err != nil {
		t.Fatal(err)
	}
	child, err := f.C.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: nb.ID, Path: "/Guide/Child", Markdown: "child text"})
	if err != nil {
		t.Fatal(err)
	}
	f.NB, f.Doc, f.Child, f.Blocks = nb.ID, doc, child, f.kids(t, doc)
	if err := f.C.FlushTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	f.R = f.Registry(t, &tools.Env{Kernel: f.C, Version: "test"})
	return f
}

// NewStrict returns a fixture with a strict coordinator (or one in strict
// off mode) over a ledger: notebook "Strict" with document "Doc" of twelve
// paragraphs.
func NewStrict(t testing.TB, strictOff bool, toolset func() []*tools.Tool) *Fixture {
	return newStrict(t, strictOff, toolset, siyuan.Config{}, "Strict", twelve())
}

// NewHooked is NewStrict with a hook in front of the kernel and fast read
// retries: notebook "Hooked" with document "Doc" of two paragraphs.
func NewHooked(t testing.TB, toolset func() []*tools.Tool) *Fixture {
	return newStrict(t, false, toolset, siyuan.Config{ReadBackoff: time.Millisecond}, "Hooked", "one\n\ntwo\n")
}

func twelve() string {
	var md strings.Builder
	for i := 0; i < 12; i++ {
		fmt.Fprintf(&md, "paragraph %d\n\n", i)
	}
	return md.String()
}

func newStrict(t testing.TB, strictOff bool, toolset func() []*tools.Tool, cfg siyuan.Config, name, md string) *Fixture {
	t.Helper()
	ctx := context.Background()
	f := &Fixture{tools: toolset, Ledger: filepath.Join(t.TempDir(), "ledger.db")}
	f.start(t, cfg)
	nb, err := f.C.CreateNotebook(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := f.C.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: nb.ID, Path: "/Doc", Markdown: md})
	if err != nil {
		t.Fatal(err)
	}
	f.NB, f.Doc, f.Blocks = nb.ID, doc, f.kids(t, doc)
	f.Reopen(t, strictOff)
	return f
}

func (f *Fixture) kids(t testing.TB, id string) []string {
	t.Helper()
	kids, err := f.C.GetChildBlocks(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, k := range kids {
		ids = append(ids, k.ID)
	}
	return ids
}

// Registry returns a new registry of the fixture's tools bound to env.
func (f *Fixture) Registry(t testing.TB, env *tools.Env) *tools.Registry {
	t.Helper()
	r, err := tools.NewRegistry(env, f.tools()...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Reopen starts a new coordinator (a process restart) on the same ledger.
func (f *Fixture) Reopen(t testing.TB, strictOff bool) {
	t.Helper()
	l, err := strict.OpenLedger(f.Ledger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	f.ledger = l
	coord := strict.NewCoordinator(strict.CoordinatorConfig{Ledger: l, StrictOff: strictOff, OnDispatch: f.OnDispatch})
	if f.Sources == nil {
		f.Sources = &MemSources{}
	}
	f.R = f.Registry(t, &tools.Env{Kernel: f.C, Coordinator: coord, MaxWriteBytes: f.MaxWriteBytes, MaxTemplateBytes: f.MaxTemplateBytes, Sources: f.Sources})
}

// CloseLedger closes the ledger, as a process exit does (Reopen after it).
func (f *Fixture) CloseLedger() { f.ledger.Close() }

// Call runs a tool and returns the result as generic JSON (as an agent
// sees it), or its *failure.Error.
func (f *Fixture) Call(t testing.TB, tool string, args map[string]any) (map[string]any, *failure.Error) {
	t.Helper()
	raw, _ := json.Marshal(args)
	ctx := context.Background()
	if f.Policy != nil {
		ctx = tools.WithPolicy(ctx, f.Policy)
	}
	if !f.Unconfirmed {
		// The person running the test confirms every dangerous call.
		action, _ := args["action"].(string)
		ctx = tools.WithConfirmed(ctx, tool, action)
	}
	v, err := f.R.Call(ctx, tool, raw)
	if err != nil {
		var fe *failure.Error
		if !errors.As(err, &fe) {
			t.Fatalf("%s %v: error is not a *failure.Error: %v", tool, args, err)
		}
		return nil, fe
	}
	return AsJSON(t, v), nil
}

// AsJSON round-trips v through JSON into an object.
func AsJSON(t testing.TB, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("result is not a JSON object: %s", b)
	}
	return m
}

// OK runs a tool call that must succeed.
func (f *Fixture) OK(t testing.TB, tool string, args map[string]any) map[string]any {
	t.Helper()
	m, err := f.Call(t, tool, args)
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	return m
}

// WantErr runs a tool call that must fail with code.
func (f *Fixture) WantErr(t testing.TB, tool string, args map[string]any, code failure.Code) *failure.Error {
	t.Helper()
	_, err := f.Call(t, tool, args)
	if err == nil || err.Code != code {
		t.Fatalf("%s %v: got %v, want %s", tool, args, err, code)
	}
	return err
}

// Text is a block's kramdown.
func (f *Fixture) Text(t testing.TB, id string) string {
	t.Helper()
	kd, err := f.C.GetBlockKramdown(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return kd.Kramdown
}

// OtherCredential is a well-formed credential that is not cred: "0000",
// unless cred's digest happens to start so (one state in 65,536), then
// "1111". A test of a wrong credential must not send the right one by
// chance.
func OtherCredential(cred string) string {
	if strings.HasPrefix(strings.TrimPrefix(cred, "sha256:v1:"), "0000") {
		return "1111"
	}
	return "0000"
}

// CopyArgs copies m and sets extra key, value pairs.
func CopyArgs(m map[string]any, extra ...any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(extra); i += 2 {
		out[extra[i].(string)] = extra[i+1]
	}
	return out
}

// CommitArgs turns a preflight answer into the commit call.
func CommitArgs(args, pre map[string]any) map[string]any {
	out := CopyArgs(args)
	delete(out, "validateOnly")
	out["requestId"] = pre["requestId"]
	if f, ok := pre["preconditionField"].(string); ok {
		out[f] = pre[f]
	}
	return out
}

// Preflight runs the validateOnly call and checks the answer's shape:
// field is the precondition field ("" for additive actions).
func (f *Fixture) Preflight(t testing.TB, tool string, args map[string]any, field string, targets int) map[string]any {
	t.Helper()
	pre := f.OK(t, tool, CopyArgs(args, "validateOnly", true))
	id, _ := pre["requestId"].(string)
	if pre["validateOnly"] != true || pre["writeAttempted"] != false || len(id) < 4 || pre["requestIdExpiresAt"] == nil ||
		pre["leaseExpiresAt"] == nil || pre["targetCount"] != float64(targets) {
		t.Fatalf("%s.%s preflight: %v", tool, args["action"], pre)
	}
	if field == "" {
		if _, ok := pre["preconditionField"]; ok {
			t.Fatalf("%s.%s is additive but its preflight names a precondition: %v", tool, args["action"], pre)
		}
		return pre
	}
	cred, _ := pre[field].(string)
	if pre["preconditionField"] != field || len(cred) < 4 || pre["hashPrefixLength"] != float64(len(cred)) {
		t.Fatalf("%s.%s preflight: want %s, got %v", tool, args["action"], field, pre)
	}
	return pre
}

// Commit runs the real call for a preflight and checks it committed.
func (f *Fixture) Commit(t testing.TB, tool string, args, pre map[string]any) map[string]any {
	t.Helper()
	res := f.OK(t, tool, CommitArgs(args, pre))
	if res["status"] != "committed" || res["replayed"] != false || res["writeAttempted"] != true || res["writeSafetyGuaranteed"] != true ||
		res["requestId"] != pre["requestId"] || res["resultHash"] == nil || res["targetCount"] != pre["targetCount"] {
		t.Fatalf("%s.%s commit: %v", tool, args["action"], res)
	}
	if _, guarded := pre["preconditionField"]; guarded && (res["previousHash"] == nil || res["previousHash"] == res["resultHash"]) {
		t.Fatalf("%s.%s commit hashes: %v", tool, args["action"], res)
	}
	return res
}

// Replay repeats the commit and checks it replays without executing.
func (f *Fixture) Replay(t testing.TB, tool string, args, pre, res map[string]any) map[string]any {
	t.Helper()
	rep := f.OK(t, tool, CommitArgs(args, pre))
	if rep["replayed"] != true || rep["writeAttempted"] != false || rep["status"] != res["status"] || rep["resultHash"] != res["resultHash"] {
		t.Fatalf("%s.%s replay: %v", tool, args["action"], rep)
	}
	return rep
}

// Drifted commits after drift and checks state_changed with nothing written.
func (f *Fixture) Drifted(t testing.TB, tool string, args, pre map[string]any, drift func()) {
	t.Helper()
	drift()
	e := f.WantErr(t, tool, CommitArgs(args, pre), failure.StateChanged)
	field, _ := pre["preconditionField"].(string)
	if e.ExpectedHash != pre[field] || e.CurrentHash == "" || e.CurrentHash == e.ExpectedHash || *e.WriteAttempted {
		t.Fatalf("state_changed details: %+v", e)
	}
}

// InvalidAt checks a call is refused as invalid_arguments without a write:
// at preflight, or (atCommit) at the commit after a successful preflight.
func (f *Fixture) InvalidAt(t testing.TB, tool string, args map[string]any, atCommit bool) *failure.Error {
	t.Helper()
	if !atCommit {
		e := f.WantErr(t, tool, CopyArgs(args, "validateOnly", true), failure.InvalidArguments)
		if e.WriteAttempted == nil || *e.WriteAttempted {
			t.Fatalf("invalid preflight: writeAttempted %v", e.WriteAttempted)
		}
		return e
	}
	pre := f.OK(t, tool, CopyArgs(args, "validateOnly", true))
	e := f.WantErr(t, tool, CommitArgs(args, pre), failure.InvalidArguments)
	if e.WriteAttempted == nil || *e.WriteAttempted || e.RequestID != pre["requestId"] {
		t.Fatalf("invalid commit: %+v", e)
	}
	return e
}

// MkDoc creates a document from markdown at a human path.
func (f *Fixture) MkDoc(t testing.TB, nb, hpath, md string) string {
	t.Helper()
	id, err := f.C.CreateDocWithMd(context.Background(), siyuan.CreateDocRequest{Notebook: nb, Path: hpath, Markdown: md})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// Where is a document's storage path and notebook.
func (f *Fixture) Where(t testing.TB, id string) siyuan.DocPath {
	t.Helper()
	p, err := f.C.GetPathByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Kids lists a block's child block ids.
func (f *Fixture) Kids(t testing.TB, id string) []string { return f.kids(t, id) }

// Exists asks the kernel whether a block (or document) exists.
func (f *Fixture) Exists(t testing.TB, id string) bool {
	t.Helper()
	ok, err := f.C.CheckBlockExist(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// Schema is a tool's input schema as r shows it now (its configuration,
// its strict mode).
func Schema(t testing.TB, r *tools.Registry, tool string) map[string]any {
	t.Helper()
	v, err := r.View(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tl, ok := r.Tool(tool)
	if !ok {
		t.Fatalf("no tool %s", tool)
	}
	return tl.InputSchema(v)
}

// AsMissing calls a tool with args, and again with every string of args
// that names something hidden replaced as subst says (an id by one that
// names nothing, a name by one no notebook has); it answers both results
// as JSON, the second with the replacements undone, each without what no
// two calls share (request ids, lease times, credentials). A call that
// shows nothing of what is hidden answers the two alike.
func (f *Fixture) AsMissing(t testing.TB, tool string, args map[string]any, subst map[string]string) (hidden, missing string) {
	t.Helper()
	answer := func(args map[string]any) string {
		res, err := f.Call(t, tool, args)
		var v any = res
		if err != nil {
			v = err.Result()
		}
		b, _ := json.Marshal(stripVolatile(v))
		return string(b)
	}
	hidden = answer(args)
	missing = answer(swap(args, subst).(map[string]any))
	back := make([]string, 0, 2*len(subst))
	for k, v := range subst {
		back = append(back, v, k)
	}
	return hidden, strings.NewReplacer(back...).Replace(missing)
}

// WantMissing requires a call about something hidden to answer not_found,
// exactly as the same call about things that do not exist (AsMissing), and
// returns its error.
func (f *Fixture) WantMissing(t testing.TB, tool string, args map[string]any, subst map[string]string) *failure.Error {
	t.Helper()
	hidden, missing := f.AsMissing(t, tool, args, subst)
	if hidden != missing {
		t.Errorf("%s %v about something hidden answers\n  %s\nand about things that do not exist\n  %s", tool, args["action"], hidden, missing)
	}
	_, e := f.Call(t, tool, args)
	if e == nil || e.Code != failure.NotFound {
		t.Errorf("%s %v about something hidden: got %v, want not_found", tool, args["action"], e)
	}
	return e
}

// swap replaces, in every string of v, each key of subst by its value.
func swap(v any, subst map[string]string) any {
	switch x := v.(type) {
	case string:
		for k, r := range subst {
			x = strings.ReplaceAll(x, k, r)
		}
		return x
	case []string:
		out := make([]string, len(x))
		for i, e := range x {
			out[i] = swap(e, subst).(string)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = swap(e, subst)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = swap(e, subst)
		}
		return out
	}
	return v
}

// stripVolatile drops what no two calls share: request ids, lease and
// expiry times, credentials.
func stripVolatile(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(m))
	for k, e := range m {
		switch k {
		case "requestId", "requestIdExpiresAt", "leaseExpiresAt", "expectedStateHash", "expectedStructureHash", "expectedManifestHash", "expectedSourceHash":
			continue
		}
		out[k] = stripVolatile(e)
	}
	return out
}
