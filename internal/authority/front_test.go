package authority

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sisyphus-go/sisyphus/internal/admission"
	"github.com/sisyphus-go/sisyphus/internal/embedded"
	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/mcp"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/catalog"
)

// testAuth is an in-process authority over an embedded kernel: its routes
// on a switchable handler, so tests can drop replies or swap instances.
type testAuth struct {
	k        *embedded.Kernel
	kc       *siyuan.Client
	kURL     string
	adm      *admission.Controller
	rn       *Runner
	srv      *mcp.Server
	routes   http.Handler
	hs       *httptest.Server
	instance string
	front    atomic.Pointer[http.Handler] // what hs serves; routes by default
}

type authOpts struct {
	limits admission.Limits
	auth   func(*http.Request) (string, bool)
}

func startAuth(t testing.TB, o authOpts) *testAuth {
	t.Helper()
	k, kURL, kc := testKernel(t)
	l, err := strict.OpenLedger(filepath.Join(t.TempDir(), "ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	reg, err := catalog.NewRegistry(&tools.Env{Kernel: kc, Version: "test", Coordinator: strict.NewCoordinator(strict.CoordinatorConfig{Ledger: l})})
	if err != nil {
		t.Fatal(err)
	}
	a := &testAuth{k: k, kc: kc, kURL: kURL, instance: NewInstanceID()}
	a.adm = admission.New(admission.Config{Limits: o.limits})
	a.rn = &Runner{Registry: reg, Admission: a.adm}
	a.srv = NewServer(a.rn, "test", nil, 0)
	t.Cleanup(a.srv.Close)
	a.routes = a.routesFor(a.instance, o.auth)
	a.front.Store(&a.routes)
	a.hs = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*a.front.Load()).ServeHTTP(w, r) }))
	t.Cleanup(a.hs.Close)
	return a
}

func (a *testAuth) routesFor(instance string, auth func(*http.Request) (string, bool)) http.Handler {
	return Routes(a.srv, RoutesConfig{Token: "t", Authenticate: auth, Admission: a.adm, Instance: instance,
		Kernel: KernelIdentity(a.kURL), Role: "authority", Version: "test", Strict: true})
}

func (a *testAuth) serve(h http.Handler) { a.front.Store(&h) }

// newFront is a front (stdio, call) over the same kernel, delegating to url.
func (a *testAuth) newFront(t testing.TB, url string, cfg DelegatorConfig) (*Runner, *Delegator) {
	t.Helper()
	cfg.URL, cfg.Token, cfg.Kernel, cfg.StateDir = url, "t", KernelIdentity(a.kURL), t.TempDir()
	if cfg.RecoveryPause == 0 {
		cfg.RecoveryPause = 10 * time.Millisecond
	}
	d := NewDelegator(cfg)
	reg, err := catalog.NewRegistry(&tools.Env{Kernel: a.kc, Version: "test", Delegate: d.Delegate, DelegateStrict: true})
	if err != nil {
		t.Fatal(err)
	}
	return &Runner{Registry: reg, Admission: admission.New(admission.Config{}), Delegating: true}, d
}

// paragraph returns the welcome document's first paragraph.
func (a *testAuth) paragraph(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	nbs, _ := a.kc.ListNotebooks(ctx)
	ids, _ := a.kc.GetIDsByHPath(ctx, nbs[0].ID, "/Welcome")
	kids, err := a.kc.GetChildBlocks(ctx, ids[0])
	if err != nil || len(kids) == 0 {
		t.Fatalf("welcome paragraph: %v", err)
	}
	return kids[0].ID
}

// out runs a call and decodes its structured result.
func out(t testing.TB, rn *Runner, tool string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	raw, _ := json.Marshal(args)
	res, _ := rn.Run(context.Background(), Call{Tool: tool, Args: raw})
	b, _ := json.Marshal(res.StructuredContent)
	var m map[string]any
	json.Unmarshal(b, &m)
	return m, res.IsError
}

func ok(t testing.TB, rn *Runner, tool string, args map[string]any) map[string]any {
	t.Helper()
	m, isErr := out(t, rn, tool, args)
	if isErr {
		t.Fatalf("%s %v: %v", tool, args, m)
	}
	return m
}

func failsWith(t testing.TB, rn *Runner, tool string, args map[string]any, code failure.Code) map[string]any {
	t.Helper()
	m, isErr := out(t, rn, tool, args)
	e, _ := m["error"].(map[string]any)
	if !isErr || e == nil || e["code"] != string(code) {
		t.Fatalf("%s %v: got %v, want %s", tool, args, m, code)
	}
	return m
}

func plus(m map[string]any, kv ...any) map[string]any {
	o := map[string]any{}
	for k, v := range m {
		o[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		o[kv[i].(string)] = kv[i+1]
	}
	return o
}

func commitArgs(args, pre map[string]any) map[string]any {
	return plus(args, "requestId", pre["requestId"], "expectedStateHash", pre["expectedStateHash"])
}

func TestFrontsShareOneLeasePool(t *testing.T) {
	a := startAuth(t, authOpts{})
	f1, _ := a.newFront(t, a.hs.URL, DelegatorConfig{})
	f2, d2 := a.newFront(t, a.hs.URL+"/mcp", DelegatorConfig{})
	para := a.paragraph(t)
	upd := map[string]any{"action": "update", "id": para, "data": "written through a front"}
	// Reads run on the front itself.
	ok(t, f1, "block", map[string]any{"action": "get_kramdown", "id": para})
	if got := a.adm.Stats().Events["admitted"]; got != 0 {
		t.Fatalf("a front's read reached the authority (%d admitted)", got)
	}
	pre := ok(t, f1, "block", plus(upd, "validateOnly", true))
	res := ok(t, f2, "block", commitArgs(upd, pre))
	if res["status"] != "committed" || res["requestId"] != pre["requestId"] {
		t.Fatalf("a lease from one front must commit from another: %v", res)
	}
	rep := ok(t, f1, "block", commitArgs(upd, pre))
	if rep["replayed"] != true {
		t.Fatalf("replay through the other front: %v", rep)
	}
	if url, inst := d2.Pinned(); url != a.hs.URL || inst != a.instance {
		t.Fatalf("pinned %s %s, want %s %s", url, inst, a.hs.URL, a.instance)
	}
	// The authority's own error results are relayed unchanged.
	bad := failsWith(t, f2, "block", plus(upd, "requestId", pre["requestId"], "expectedStateHash", "0000", "data", "other"), "idempotency_conflict")
	if bad["writeAttempted"] != false && bad["writeAttempted"] != nil {
		t.Fatalf("relayed error: %v", bad)
	}
	kd, _ := a.kc.GetBlockKramdown(context.Background(), para)
	if strings.Count(kd.Kramdown, "written through a front") != 1 {
		t.Fatalf("kramdown %q", kd.Kramdown)
	}
}

func TestDelegationUnavailable(t *testing.T) {
	a := startAuth(t, authOpts{})
	para := a.paragraph(t)
	pre := map[string]any{"action": "update", "id": para, "data": "x", "validateOnly": true}

	// No --authority and no discovery record.
	d := NewDelegator(DelegatorConfig{StateDir: t.TempDir(), Kernel: KernelIdentity(a.kURL)})
	_, err := d.Delegate(context.Background(), "block", mustJSON(pre))
	if code, attempted := errCode(err); code != failure.CoordinatorUnavailable || attempted == nil || *attempted {
		t.Fatalf("no authority: %v", err)
	}
	// An authority that is not listening.
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	f, _ := a.newFront(t, gone.URL, DelegatorConfig{})
	m := failsWith(t, f, "block", pre, failure.CoordinatorUnavailable)
	if m["writeAttempted"] != false {
		t.Fatalf("unavailable must say writeAttempted:false: %v", m)
	}
	// Something that is not an authority.
	other404 := httptest.NewServer(http.NotFoundHandler())
	defer other404.Close()
	f404, _ := a.newFront(t, other404.URL, DelegatorConfig{})
	failsWith(t, f404, "block", pre, failure.CoordinatorUnavailable)
	// A wrong token.
	f3, _ := a.newFront(t, a.hs.URL, DelegatorConfig{})
	f3.Registry = mustRegistry(t, a.kc, NewDelegator(DelegatorConfig{URL: a.hs.URL, Token: "nope", Kernel: KernelIdentity(a.kURL)}))
	failsWith(t, f3, "block", pre, failure.CoordinatorUnavailable)
	// An authority coordinating another workspace.
	other := NewDelegator(DelegatorConfig{URL: a.hs.URL, Token: "t", Kernel: EmbeddedIdentity(t.TempDir())})
	_, err = other.Delegate(context.Background(), "block", mustJSON(pre))
	if code, _ := errCode(err); code != failure.CoordinatorUnavailable || !strings.Contains(err.Error(), "another workspace") {
		t.Fatalf("another workspace: %v", err)
	}
	if a.adm.Stats().Events["admitted"] != 0 {
		t.Fatal("a refused delegation reached admission")
	}
}

func TestDelegationPinsTheAuthority(t *testing.T) {
	a := startAuth(t, authOpts{})
	f, d := a.newFront(t, a.hs.URL, DelegatorConfig{})
	para := a.paragraph(t)
	pre := map[string]any{"action": "update", "id": para, "data": "x", "validateOnly": true}
	ok(t, f, "block", pre)
	// Another instance appears at the same URL: refused before anything runs, and from now on.
	a.serve(a.routesFor(NewInstanceID(), nil))
	admitted := a.adm.Stats().Events["admitted"]
	failsWith(t, f, "block", pre, failure.CoordinatorChanged)
	a.serve(a.routes) // even if the old one came back
	failsWith(t, f, "block", pre, failure.CoordinatorChanged)
	if got := a.adm.Stats().Events["admitted"]; got != admitted {
		t.Fatalf("a call reached the changed authority (%d admitted, was %d)", got, admitted)
	}
	if d.Stats()["changed"] != true {
		t.Fatal("stats must say changed")
	}
	// Reads still work.
	ok(t, f, "block", map[string]any{"action": "get_kramdown", "id": para})

	// A front discovering through the state dir pins the record's instance.
	dir := t.TempDir()
	if err := WriteRecord(dir, Record{URL: a.hs.URL, InstanceID: a.instance, Kernel: KernelIdentity(a.kURL), Strict: true}); err != nil {
		t.Fatal(err)
	}
	d2 := NewDelegator(DelegatorConfig{StateDir: dir, Token: "t", Kernel: KernelIdentity(a.kURL)})
	if url, inst := d2.Pinned(); url != a.hs.URL || inst != a.instance || !d2.Strict() {
		t.Fatalf("pinned from the record: %s %s", url, inst)
	}
	// The authority stops and another instance is recorded: changed.
	a.hs.Close()
	if err := WriteRecord(dir, Record{URL: "http://127.0.0.1:1", InstanceID: NewInstanceID()}); err != nil {
		t.Fatal(err)
	}
	_, err := d2.Delegate(context.Background(), "block", mustJSON(pre))
	if code, _ := errCode(err); code != failure.CoordinatorChanged {
		t.Fatalf("after the authority was replaced: %v", err)
	}
}

// dropReplies wraps h: the first n tools/call replies carrying no
// validateOnly are dropped after the call ran (the connection is closed),
// and /tasks replies too while dropTasks is set.
type dropReplies struct {
	h         http.Handler
	n         atomic.Int32
	dropTasks atomic.Bool
	dropped   atomic.Int32
}

func (d *dropReplies) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	drop := strings.HasSuffix(r.URL.Path, "/tasks") && d.dropTasks.Load() ||
		strings.HasSuffix(r.URL.Path, "/mcp") && bytes.Contains(body, []byte(`"tools/call"`)) && !bytes.Contains(body, []byte("validateOnly")) && d.n.Add(-1) >= 0
	if !drop {
		d.h.ServeHTTP(w, r)
		return
	}
	rec := httptest.NewRecorder()
	d.h.ServeHTTP(rec, r.WithContext(context.WithoutCancel(r.Context())))
	d.dropped.Add(1)
	if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
		conn.Close()
	}
}

func TestLostReplyRecoveredThroughTaskResult(t *testing.T) {
	a := startAuth(t, authOpts{})
	drop := &dropReplies{h: a.routes}
	drop.n.Store(1)
	a.serve(drop)
	f, d := a.newFront(t, a.hs.URL, DelegatorConfig{})
	para := a.paragraph(t)
	upd := map[string]any{"action": "update", "id": para, "data": "recovered write"}
	pre := ok(t, f, "block", plus(upd, "validateOnly", true))
	res := ok(t, f, "block", commitArgs(upd, pre))
	if res["status"] != "committed" || res["replayed"] != false || drop.dropped.Load() != 1 {
		t.Fatalf("recovered: %v (dropped %d)", res, drop.dropped.Load())
	}
	st := d.Stats()
	if st["lostReplies"] != uint64(1) || st["recovered"] != uint64(1) {
		t.Fatalf("stats %v", st)
	}
	kd, _ := a.kc.GetBlockKramdown(context.Background(), para)
	if strings.Count(kd.Kramdown, "recovered write") != 1 {
		t.Fatalf("written once: %q", kd.Kramdown)
	}

	// Reply and result queries lost: outcome_unknown with the taskId, never resubmitted.
	drop.n.Store(1)
	drop.dropTasks.Store(true)
	upd2 := map[string]any{"action": "update", "id": para, "data": "unknown write"}
	pre2 := ok(t, f, "block", plus(upd2, "validateOnly", true))
	start := time.Now()
	u := failsWith(t, f, "block", commitArgs(upd2, pre2), failure.OutcomeUnknown)
	taskID, _ := u["taskId"].(string)
	if !admission.ValidTaskID(taskID) || u["requestId"] != pre2["requestId"] || u["writeAttempted"] != true {
		t.Fatalf("outcome_unknown: %v", u)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Fatalf("recovery took %v", el)
	}
	if got := drop.dropped.Load(); got != 1+1+3 {
		t.Fatalf("%d dropped exchanges, want the call and 3 result queries", got)
	}
	// Later, the task's result is there.
	drop.dropTasks.Store(false)
	rep, err := d.Control(context.Background(), taskID, admission.OpResult)
	if err != nil || !rep.Found || rep.State != admission.StateCompleted || !bytes.Contains(rep.Result, []byte(`"committed"`)) {
		t.Fatalf("later result: %+v %v", rep, err)
	}
	// The taskId cannot be reused for another call.
	status, res2 := postCall(t, a.hs.URL, "t", "block", map[string]any{"action": "get_kramdown", "id": para}, taskID)
	if status != 200 || !strings.Contains(string(res2), string(failure.TaskIDConflict)) {
		t.Fatalf("reused taskId: %d %s", status, res2)
	}
}

// postCall sends one modern tools/call with a taskId and returns the raw body.
func postCall(t testing.TB, base, token, tool string, args map[string]any, taskID string) (int, []byte) {
	t.Helper()
	return postCallWith(t, http.DefaultClient, base, token, tool, args, taskID)
}

func postCallWith(t testing.TB, hc *http.Client, base, token, tool string, args map[string]any, taskID string) (int, []byte) {
	t.Helper()
	meta := map[string]any{mcp.MetaProtocolVersion: "2026-07-28", mcp.MetaClientInfo: map[string]any{"name": "t", "version": "1"},
		mcp.MetaClientCapabilities: map[string]any{}}
	if taskID != "" {
		meta[MetaTaskID] = taskID
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args, "_meta": meta}})
	req, _ := http.NewRequest("POST", base+"/mcp", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

func postTasks(t testing.TB, base, token string, body any) (int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", base+"/tasks", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

func TestTasksRoute(t *testing.T) {
	twoContexts := func(r *http.Request) (string, bool) {
		switch r.Header.Get("Authorization") {
		case "Bearer t":
			return "alice", true
		case "Bearer u":
			return "bob", true
		}
		return "", false
	}
	a := startAuth(t, authOpts{auth: twoContexts})
	para := a.paragraph(t)
	id := NewTaskID()
	for _, prefix := range []string{"", PluginPrefix} {
		if st, _ := postTasks(t, a.hs.URL+prefix, "wrong", map[string]any{"taskId": id, "operation": "status"}); st != 401 {
			t.Fatalf("%s: no auth got %d", prefix, st)
		}
	}
	status, body := postCall(t, a.hs.URL, "t", "block", map[string]any{"action": "get_kramdown", "id": para}, id)
	if status != 200 || bytes.Contains(body, []byte(`"isError":true`)) {
		t.Fatalf("call: %d %s", status, body)
	}
	st, rep := postTasks(t, a.hs.URL+PluginPrefix, "t", map[string]any{"taskId": id, "operation": "status"})
	if st != 200 || rep["found"] != true || rep["state"] != "completed" || rep["result"] != nil || rep["cancelRequested"] != false || rep["committing"] != false {
		t.Fatalf("status: %d %v", st, rep)
	}
	st, rep = postTasks(t, a.hs.URL, "t", map[string]any{"taskId": id, "operation": "result"})
	res, _ := rep["result"].(map[string]any)
	if st != 200 || res == nil || !strings.Contains(res["structuredContent"].(map[string]any)["kramdown"].(string), "{: id=") {
		t.Fatalf("result: %d %v", st, rep)
	}
	st, rep = postTasks(t, a.hs.URL, "t", map[string]any{"taskId": id, "operation": "cancel"})
	if st != 200 || rep["accepted"] != false {
		t.Fatalf("cancel of a settled task: %d %v", st, rep)
	}
	if st, _ := postTasks(t, a.hs.URL, "u", map[string]any{"taskId": id, "operation": "result"}); st != 403 {
		t.Fatalf("another authentication context got %d", st)
	}
	if st, rep := postTasks(t, a.hs.URL, "u", map[string]any{"taskId": NewTaskID(), "operation": "status"}); st != 200 || rep["found"] != false || rep["note"] == "" {
		t.Fatalf("unknown task: %d %v", st, rep)
	}
	for _, bad := range []any{map[string]any{"operation": "status"}, map[string]any{"taskId": id, "operation": "explode"}, "nope"} {
		if st, _ := postTasks(t, a.hs.URL, "t", bad); st != 400 {
			t.Fatalf("%v: got %d", bad, st)
		}
	}
	// A malformed taskId on tools/call is refused without running.
	if _, body := postCall(t, a.hs.URL, "t", "block", map[string]any{"action": "get_kramdown", "id": para}, "not-a-uuid"); !bytes.Contains(body, []byte(string(failure.InvalidTaskID))) {
		t.Fatalf("malformed taskId: %s", body)
	}
}

func TestHealthShape(t *testing.T) {
	a := startAuth(t, authOpts{})
	id := NewTaskID()
	postCall(t, a.hs.URL, "t", "block", map[string]any{"action": "get_kramdown", "id": a.paragraph(t)}, id)
	get := func(token string) (int, []byte) {
		req, _ := http.NewRequest("GET", a.hs.URL+PluginPrefix+"/health", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if want := map[bool]string{true: a.instance}[resp.StatusCode == 200]; resp.Header.Get(HeaderInstance) != want {
			t.Fatalf("instance header %q on HTTP %d", resp.Header.Get(HeaderInstance), resp.StatusCode)
		}
		return resp.StatusCode, b
	}
	if st, _ := get("bad"); st != 401 {
		t.Fatalf("unauthenticated health: %d", st)
	}
	st, raw := get("t")
	var h map[string]any
	if st != 200 || json.Unmarshal(raw, &h) != nil {
		t.Fatalf("health: %d %s", st, raw)
	}
	for _, k := range []string{"status", "role", "inFlight", "maxInFlight", "lanes", "cancelledRunningReads", "taskResults", "readBudget", "events", "mcp"} {
		if _, ok := h[k]; !ok {
			t.Errorf("health lacks %q: %s", k, raw)
		}
	}
	lanes := h["lanes"].(map[string]any)
	if lanes["read"].(map[string]any)["concurrency"] != 4.0 || lanes["write"].(map[string]any)["concurrency"] != 1.0 || h["maxInFlight"] != 128.0 {
		t.Fatalf("lanes %v", lanes)
	}
	if h["taskResults"].(map[string]any)["records"] != 1.0 || h["readBudget"].(map[string]any)["kernelCalls"].(float64) < 1 {
		t.Fatalf("counters: %s", raw)
	}
	for _, secret := range []string{id, a.instance, `"t"`, "Bearer"} {
		if strings.Contains(string(raw), secret) {
			t.Fatalf("health discloses %q: %s", secret, raw)
		}
	}
}

// TestQueueFullAndCancellation: 128 reads held by a slow kernel fill the
// in-flight cap; the 129th answers queue_full without running; cancelled
// queued reads stop before executing, running ones after their kernel call.
func TestQueueFullAndCancellation(t *testing.T) {
	a := startAuth(t, authOpts{})
	para := a.paragraph(t)
	a.k.Faults().Set(embedded.Fault{Endpoint: "/api/block/getBlockKramdown", Kind: embedded.Latency, Delay: 400 * time.Millisecond})
	rn := &Runner{Registry: mustRegistry(t, a.kc, nil), Admission: a.adm}
	args := mustJSON(map[string]any{"action": "get_kramdown", "id": para})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	codes := make(chan failure.Code, 128)
	for i := 0; i < 128; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, _ := rn.Run(ctx, Call{Tool: "block", Args: args, CancelOnDone: true, Caller: fmt.Sprint(i % 4)})
			codes <- resultCode(res)
		}()
	}
	waitFor(t, func() bool { return a.adm.Stats().InFlight == 128 })
	start := time.Now()
	res, _ := rn.Run(context.Background(), Call{Tool: "block", Args: args})
	if resultCode(res) != failure.QueueFull || time.Since(start) > 100*time.Millisecond {
		t.Fatalf("129th call: %v", res.StructuredContent)
	}
	st := a.adm.Stats()
	if st.Lanes["read"].Running != 4 || st.Lanes["read"].Queued != 124 {
		t.Fatalf("lanes %+v", st.Lanes)
	}
	cancel()
	wg.Wait()
	close(codes)
	n := map[failure.Code]int{}
	for c := range codes {
		n[c]++
	}
	// Those running finished their kernel call (a single-call read completes); the rest never ran.
	if n[failure.Cancelled] < 100 || n[failure.Cancelled]+n[""] != 128 {
		t.Fatalf("outcomes %v", n)
	}
	if st := a.adm.Stats(); st.InFlight != 0 || st.Events["cancelledBeforeExecution"] < 100 {
		t.Fatalf("after cancelling: %+v", st)
	}
}

func TestReadBudgetThroughRunner(t *testing.T) {
	a := startAuth(t, authOpts{limits: admission.Limits{ReadCalls: 1}})
	rn := &Runner{Registry: mustRegistry(t, a.kc, nil), Admission: a.adm}
	m := failsWith(t, rn, "system", map[string]any{"action": "bootstrap"}, failure.ReadBudgetExceeded)
	if !strings.Contains(m["error"].(map[string]any)["message"].(string), "kernel calls") || m["complete"] != false {
		t.Fatalf("budget error: %v", m)
	}
	// A window read cut by its budget answers no shortened window: it
	// fails, complete:false, with how to narrow it, and names no next
	// window (the agent narrows and asks again).
	doc := failsWith(t, rn, "document", map[string]any{"action": "get_doc", "id": a.paragraph(t)}, failure.ReadBudgetExceeded)
	if doc["complete"] != false || doc["nextSteps"] != nil || doc["nextWindow"] != nil || doc["error"].(map[string]any)["action"] == "" {
		t.Fatalf("a window cut by its budget: %v", doc)
	}
	// A single-call read fits.
	ok(t, rn, "block", map[string]any{"action": "get_kramdown", "id": a.paragraph(t)})
	if st := a.adm.Stats().ReadBudget; st.ExceededCalls != 2 {
		t.Fatalf("budget stats %+v", st)
	}
	// Writes are exempt: a preflight and commit make several kernel calls.
	para := a.paragraph(t)
	upd := map[string]any{"action": "update", "id": para, "data": "exempt"}
	pre := ok(t, rn, "block", plus(upd, "validateOnly", true))
	if res := ok(t, rn, "block", commitArgs(upd, pre)); res["status"] != "committed" {
		t.Fatalf("commit under a 1-call read budget: %v", res)
	}
}

// TestCancelWriteBeforeCommit: a commit cancelled through task control
// while it reads the target's state stops at its commit barrier, writes
// nothing, and the same request commits afterwards. Skipped until the
// coordinator calls strict.CommitBarrier.
func TestCancelWriteBeforeCommit(t *testing.T) {
	a := startAuth(t, authOpts{})
	para := a.paragraph(t)
	upd := map[string]any{"action": "update", "id": para, "data": "cancelled write"}
	_, body := postCall(t, a.hs.URL, "t", "block", plus(upd, "validateOnly", true), "")
	var pre struct {
		Result struct {
			Structured map[string]any `json:"structuredContent"`
		} `json:"result"`
	}
	json.Unmarshal(body, &pre)
	a.k.Faults().Set(embedded.Fault{Endpoint: "/api/block/getBlockKramdown", Kind: embedded.Latency, Delay: 300 * time.Millisecond})
	id := NewTaskID()
	done := make(chan []byte, 1)
	go func() {
		_, b := postCall(t, a.hs.URL, "t", "block", commitArgs(upd, pre.Result.Structured), id)
		done <- b
	}()
	waitFor(t, func() bool { return a.adm.Stats().Lanes["write"].Running == 1 })
	_, rep := postTasks(t, a.hs.URL, "t", map[string]any{"taskId": id, "operation": "cancel"})
	got := <-done
	a.k.Faults().Clear()
	if rep["accepted"] != true {
		t.Fatalf("cancel before the commit started: %v", rep)
	}
	if bytes.Contains(got, []byte(`"committed"`)) {
		t.Skip("the coordinator does not call strict.CommitBarrier yet: the write went ahead")
	}
	if !bytes.Contains(got, []byte(`"cancelled"`)) || !bytes.Contains(got, []byte(`"writeAttempted":false`)) {
		t.Fatalf("cancelled commit: %s", got)
	}
	kd, _ := a.kc.GetBlockKramdown(context.Background(), para)
	if strings.Contains(kd.Kramdown, "cancelled write") {
		t.Fatal("a write cancelled before its commit landed")
	}
	_, again := postCall(t, a.hs.URL, "t", "block", commitArgs(upd, pre.Result.Structured), "")
	if !bytes.Contains(again, []byte(`"committed"`)) {
		t.Fatalf("the same request after the cancellation: %s", again)
	}
}

func TestDiscoveryRecordAndLock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	release, err := LockStateDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	rec := Record{URL: "http://127.0.0.1:9", InstanceID: NewInstanceID(), PID: 1 << 30, Kernel: "url:x", Strict: true}
	if err := WriteRecord(dir, rec); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRecord(dir); !errors.Is(err, ErrNoRecord) {
		t.Fatalf("a record of a dead process: %v", err)
	}
	rec.PID = 0
	WriteRecord(dir, rec)
	got, err := ReadRecord(dir)
	if err != nil || got.InstanceID != rec.InstanceID || got.MCPURL() != "http://127.0.0.1:9/mcp" {
		t.Fatalf("record %+v %v", got, err)
	}
	if _, err := LockStateDir(dir); !errors.Is(err, ErrStateDirBusy) || !strings.Contains(err.Error(), "in use by another sisyphus serve") {
		t.Fatalf("second lock: %v", err)
	}
	RemoveRecord(dir, NewInstanceID()) // another instance's removal leaves it
	if _, err := ReadRecord(dir); err != nil {
		t.Fatal("record removed by another instance")
	}
	RemoveRecord(dir, rec.InstanceID)
	if _, err := ReadRecord(dir); !errors.Is(err, ErrNoRecord) {
		t.Fatal("record not removed")
	}
	release()
	r2, err := LockStateDir(dir)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	r2()
	for in, want := range map[string]string{
		"http://localhost:6806/":    "url:http://127.0.0.1:6806",
		"HTTP://127.0.0.1:6806":     "url:http://127.0.0.1:6806",
		"http://[::1]:6806/x/":      "url:http://127.0.0.1:6806/x",
		"https://notes.example.com": "url:https://notes.example.com:443",
	} {
		if got := KernelIdentity(in); got != want {
			t.Errorf("KernelIdentity(%q) = %q, want %q", in, got, want)
		}
	}
}

func mustJSON(v any) json.RawMessage { b, _ := json.Marshal(v); return b }

func mustRegistry(t testing.TB, kc *siyuan.Client, d *Delegator) *tools.Registry {
	t.Helper()
	env := &tools.Env{Kernel: kc, Version: "test"}
	if d != nil {
		env.Delegate, env.DelegateStrict = d.Delegate, true
	} else {
		l, err := strict.OpenLedger(filepath.Join(t.TempDir(), "ledger.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		env.Coordinator = strict.NewCoordinator(strict.CoordinatorConfig{Ledger: l})
	}
	reg, err := catalog.NewRegistry(env)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func errCode(err error) (failure.Code, *bool) {
	var te *failure.Error
	if errors.As(err, &te) {
		return te.Code, te.WriteAttempted
	}
	return "", nil
}

func resultCode(res *mcp.CallResult) failure.Code {
	if !res.IsError {
		return ""
	}
	var m struct {
		Error struct{ Code failure.Code } `json:"error"`
	}
	raw, _ := res.StructuredContent.(json.RawMessage)
	json.Unmarshal(raw, &m)
	return m.Error.Code
}

func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestLegacyCancelStopsReadAtOnce: a legacy notifications/cancelled stops a
// running read at once: its kernel call is aborted and its slot given back
// (issue 9: it used to keep the slot until the kernel answered).
func TestLegacyCancelStopsReadAtOnce(t *testing.T) {
	a := startAuth(t, authOpts{})
	a.k.Faults().Set(embedded.Fault{Endpoint: "/api/system/version", Kind: embedded.Latency, Delay: 400 * time.Millisecond},
		embedded.Fault{Endpoint: "/api/notebook/lsNotebooks", Kind: embedded.Latency, Delay: 5 * time.Second})
	client := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: a.hs.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearerRT{"t"}}, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	ctx, cancel := context.WithCancel(context.Background())
	start := time.Now()
	go cs.CallTool(ctx, &sdk.CallToolParams{Name: "system", Arguments: map[string]any{"action": "bootstrap"}})
	waitFor(t, func() bool { return a.adm.Stats().Lanes["read"].Running == 1 })
	cancel()
	waitFor(t, func() bool { return a.adm.Stats().InFlight == 0 })
	if el := time.Since(start); el > 350*time.Millisecond {
		t.Fatalf("settled after %v: want before the current kernel call (400ms) returns", el)
	}
	if ev := a.adm.Stats().Events; ev["cancelled"] != 1 || ev["cancelAccepted"] != 1 {
		t.Fatalf("events %v", ev)
	}
}

type bearerRT struct{ tok string }

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return http.DefaultTransport.RoundTrip(r)
}

// A call larger than the authority's request cap is refused without
// running: before it is sent when the discovery record names the cap, and
// on the authority's 413 otherwise; a 503 of the authority's body budget
// says nothing ran.
func TestDelegationRefusedBySize(t *testing.T) {
	a := startAuth(t, authOpts{})
	para := a.paragraph(t)
	big := map[string]any{"action": "update", "id": para, "data": strings.Repeat("x", 100<<10), "validateOnly": true}
	var seen atomic.Int32
	capped := Routes(a.srv, RoutesConfig{Token: "t", Admission: a.adm, Instance: a.instance, Kernel: KernelIdentity(a.kURL),
		Role: "authority", Version: "test", Strict: true, MaxBodyBytes: 64 << 10})
	a.serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen.Add(1); capped.ServeHTTP(w, r) }))

	f, _ := a.newFront(t, a.hs.URL, DelegatorConfig{})
	m := failsWith(t, f, "block", big, failure.InvalidArguments)
	if m["writeAttempted"] != false || !strings.Contains(fmt.Sprint(m["error"]), "--max-request-size") {
		t.Fatalf("refused by 413: %v", m)
	}

	state := t.TempDir()
	if err := WriteRecord(state, Record{URL: a.hs.URL, InstanceID: a.instance, PID: os.Getpid(), Kernel: KernelIdentity(a.kURL), Strict: true,
		MaxRequestBytes: 64 << 10}); err != nil {
		t.Fatal(err)
	}
	before := seen.Load()
	d := NewDelegator(DelegatorConfig{StateDir: state, Token: "t", Kernel: KernelIdentity(a.kURL)})
	_, err := d.Delegate(context.Background(), "block", mustJSON(big))
	if code, attempted := errCode(err); code != failure.InvalidArguments || attempted == nil || *attempted || seen.Load() != before {
		t.Fatalf("refused from the record: %v (%d requests sent)", err, seen.Load()-before)
	}

	a.serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(HeaderInstance, a.instance)
		w.Header().Set("Retry-After", "1")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Server busy"}}`)
	}))
	small := map[string]any{"action": "update", "id": para, "data": "x", "validateOnly": true}
	if m := failsWith(t, f, "block", small, failure.QueueFull); m["writeAttempted"] != false {
		t.Fatalf("a busy authority: %v", m)
	}
	if a.adm.Stats().Events["admitted"] != 0 {
		t.Fatal("a refused delegation reached admission")
	}
}
