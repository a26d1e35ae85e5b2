package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/authority"
	"github.com/sisyphus-go/sisyphus/internal/testvars"
)

// TestBenchE2E is the end-to-end write-latency benchmark (scripts/bench-e2e
// runs it): `sisyphus serve` against a kernel (SISYPHUS_BENCH_URL and
// SISYPHUS_BENCH_TOKEN, else an embedded kernel), a 1,000-paragraph
// document in a notebook of its own, and, interleaved in each of
// SISYPHUS_BENCH_RUNS rounds (60): a bare updateBlock and getBlockKramdown
// on paragraph 500 straight to the kernel, a strict block.update preflight
// and commit over MCP (legacy session, HTTP keep-alive), a read over MCP,
// tools/list, and a strict items[] update of 11 blocks against one bare
// batchUpdateBlock of the same 11, each step after SISYPHUS_BENCH_SETTLE
// (100ms) of quiet. Each timed call's request is encoded before its timer
// starts and its answer only checked (a bare call's code, an MCP call's
// isError) in it, on both sides alike; one more row times a read over MCP
// as a generic client makes it (encoding and decoding into maps timed). It
// prints p50 and p90 of each and the medians of the per-round ratios, and
// removes its notebook. Only runs with SISYPHUS_BENCH_E2E=1.
func TestBenchE2E(t *testing.T) {
	if !testvars.BenchE2E.On(t) {
		t.Skip("the end-to-end benchmark: set " + testvars.BenchE2E.Name + "=1 (scripts/bench-e2e)")
	}
	runs := testvars.BenchRuns.Int(t, 60)
	// Each measured step starts from a quiet kernel: SiYuan indexes a write
	// in the background, and a step started right after another's write
	// would be charged for it. A strict commit still follows its preflight
	// at once, as an agent's does.
	settle := testvars.BenchSettle.Duration(t, 100*time.Millisecond)
	url, tok := testvars.BenchKernel(t)
	kernelName := "SiYuan at " + url
	stateDir := t.TempDir()
	serve := []string{"--state-dir", stateDir}
	if url == "" {
		// The main job: serve runs the embedded kernel itself (and reaches
		// it in process); the bare calls go to the port it serves the
		// kernel on, named in the state dir.
		serve = append(serve, "--embedded", t.TempDir())
		kernelName = "embedded kernel (serve --embedded)"
	} else {
		serve = append(serve, "--siyuan-url", url, "--siyuan-token", tok)
	}
	if l := testvars.BenchLogLevel.Value(); l != "" {
		serve = append(serve, "--log-level", l) // with SISYPHUS_TEST_SERVE_LOG: every kernel call and its time
	}
	s := startServeWith(t, serve...)
	if url == "" {
		acc, err := authority.ReadKernelAccess(stateDir)
		if err != nil {
			t.Fatal(err)
		}
		url, tok = acc.URL, acc.Token
	}
	a := connect(t, s.url, "2025-11-25")

	nb := a.strictDo("notebook", map[string]any{"action": "create", "name": fmt.Sprintf("sisyphus-bench-e2e-%d", time.Now().UnixNano())})["notebook"].(string)
	s.config(t, "permission", nb, "rwd")
	s.config(t, "enable", "notebook.remove")
	defer a.strictDo("notebook", map[string]any{"action": "remove", "notebook": nb, "confirm": true})
	var md strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&md, "Paragraph %d of the benchmark document, with **some** text in it.\n\n", i)
	}
	doc := a.strictDo("document", map[string]any{"action": "create", "notebook": nb, "path": "/Bench", "markdown": md.String()})["id"].(string)
	var kids []any
	for page := 1; len(kids) < 1000; page++ {
		got := a.ok("block", map[string]any{"action": "get_children", "id": doc, "pageSize": 200, "page": page})["data"].([]any)
		if len(got) == 0 {
			t.Fatalf("the document has %d blocks", len(kids))
		}
		kids = append(kids, got...)
	}
	id := func(i int) string { return kids[i].(map[string]any)["id"].(string) }
	target := id(499)
	batch := make([]string, 11)
	for i := range batch {
		batch[i] = id(500 + i)
	}

	hc := &http.Client{}
	// The measured MCP calls come from a minimal agent: JSON-RPC over one
	// keep-alive HTTP connection, a legacy session, no SDK of its own to
	// time.
	m := newRawMCP(t, s.url)
	// Every timed call sends bytes encoded before its timer starts and
	// checks its answer's envelope without building anything from it (the
	// bare calls their code, the MCP calls isError), so that the client's
	// own JSON work, which is not Sisyphus's, weighs alike on both sides.
	bareRaw := func(path string, b []byte) {
		req, _ := http.NewRequest("POST", url+path, bytes.NewReader(b))
		req.Header.Set("Authorization", "Token "+tok)
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var env struct {
			Code int    `json:"code"`
			Msg  string `json:"msg"`
		}
		data, _ := io.ReadAll(resp.Body)
		if json.Unmarshal(data, &env) != nil || env.Code != 0 {
			t.Fatalf("%s: %s", path, data)
		}
	}
	bare := func(path string, body any) {
		b, _ := json.Marshal(body)
		bareRaw(path, b)
	}
	timed := func(f func()) time.Duration { time.Sleep(settle); t0 := time.Now(); f(); return time.Since(t0) }
	// strictRound times a strict write's preflight after the quiet and its
	// commit at once after it, as an agent makes them; the commit's request
	// is encoded between the two, untimed.
	strictRound := func(args map[string]any) (dPre, dCommit time.Duration, res map[string]any) {
		preMsg := m.encodeCall("block", with(args, "validateOnly", true))
		var pre json.RawMessage
		dPre = timed(func() { pre = m.tool(preMsg) })
		commitMsg := m.encodeCall("block", commitOf(args, decodeObject(t, pre)))
		t0 := time.Now()
		raw := m.tool(commitMsg)
		dCommit = time.Since(t0)
		return dPre, dCommit, decodeObject(t, raw)
	}

	// The kernel calls a strict update makes, made directly: at preflight
	// and again at commit the block's notebook (the gate) and its content
	// (kramdown, attributes) at once, then the update, then the readback
	// (kramdown, attributes) at once. The floor of the protocol on
	// this kernel, without Sisyphus.
	parallel := func(calls ...[2]any) {
		done := make(chan struct{}, len(calls))
		for _, c := range calls {
			go func() { bare(c[0].(string), c[1]); done <- struct{}{} }()
		}
		for range calls {
			<-done
		}
	}
	idArg := map[string]any{"id": target}
	direct := func(text string) {
		for range 2 {
			parallel([2]any{"/api/filetree/getPathByID", idArg}, [2]any{"/api/block/getBlockKramdown", idArg}, [2]any{"/api/attr/getBlockAttrs", idArg})
		}
		bare("/api/block/updateBlock", map[string]any{"id": target, "dataType": "markdown", "data": text})
		parallel([2]any{"/api/block/getBlockKramdown", idArg}, [2]any{"/api/attr/getBlockAttrs", idArg})
	}

	// The kernel calls a strict items[] update of the batch makes, made
	// directly: at preflight and at commit the blocks' notebook (the gate:
	// the first one's, and which of them its document holds), the
	// document's kramdown (the SQL index names it) and the blocks'
	// attributes, at once; the batch update; the readback: the document's
	// kramdown and the attributes, at once.
	at := func(fs ...func()) {
		done := make(chan struct{}, len(fs))
		for _, f := range fs {
			go func() { f(); done <- struct{}{} }()
		}
		for range fs {
			<-done
		}
	}
	first := map[string]any{"id": batch[0]}
	docArg := map[string]any{"id": doc}
	idsArg := map[string]any{"ids": batch}
	hint := map[string]any{"stmt": "SELECT root_id FROM blocks WHERE id = '" + batch[0] + "' LIMIT 1"}
	docRead := func(ep string) func() {
		return func() { bare("/api/query/sql", hint); bare(ep, docArg) }
	}
	lookups := func() {
		at(func() { bare("/api/filetree/getPathByID", first) }, func() { bare("/api/block/getBlocksIndexes", idsArg) })
	}
	directBatch := func(blocks []map[string]any) {
		for range 2 {
			at(lookups, docRead("/api/block/getBlockKramdown"), func() { bare("/api/attr/batchGetBlockAttrs", idsArg) })
		}
		bare("/api/block/batchUpdateBlock", map[string]any{"blocks": blocks})
		at(docRead("/api/block/getBlockKramdown"), func() { bare("/api/attr/batchGetBlockAttrs", idsArg) })
	}

	names := []string{"bare updateBlock", "bare getBlockKramdown", "same kernel calls as a strict update, direct", "strict preflight", "strict commit", "preflight + commit",
		"read over MCP (block.get_kramdown)", "MCP ping (no kernel call)", "tools/list", "bare batchUpdateBlock (11)", "strict items[] update (11)",
		"same kernel calls as a strict items[] (11), direct", "the issue's floor: getBlockKramdown, getBlockKramdown, updateBlock, getBlockKramdown",
		"read over MCP, client encoding and map decoding timed (before 2026-12-02)"}
	lat := make(map[string][]time.Duration)
	ratios := map[string][]float64{}
	for r := range runs {
		text := func(what string) string {
			return fmt.Sprintf("%s %d: the paragraph, rewritten with **some** text.", what, r)
		}
		updBody, _ := json.Marshal(map[string]any{"id": target, "dataType": "markdown", "data": text("bare")})
		dBare := timed(func() { bareRaw("/api/block/updateBlock", updBody) })
		readBody, _ := json.Marshal(idArg)
		dRead := timed(func() { bareRaw("/api/block/getBlockKramdown", readBody) })
		dDirect := timed(func() { direct(text("direct")) })
		// The floor: one read per state, the write, one readback
		// (no notebook lookup, no attributes).
		floorBody, _ := json.Marshal(map[string]any{"id": target, "dataType": "markdown", "data": text("floor")})
		dFloor := timed(func() {
			bareRaw("/api/block/getBlockKramdown", readBody)
			bareRaw("/api/block/getBlockKramdown", readBody)
			bareRaw("/api/block/updateBlock", floorBody)
			bareRaw("/api/block/getBlockKramdown", readBody)
		})
		dPre, dCommit, res := strictRound(map[string]any{"action": "update", "id": target, "data": text("strict")})
		if res["status"] != "committed" {
			t.Fatalf("round %d: %v", r, res)
		}
		readArgs := map[string]any{"action": "get_kramdown", "id": target}
		readMsg := m.encodeCall("block", readArgs)
		dMCPRead := timed(func() { m.tool(readMsg) })
		// The same read as this benchmark timed it before 2026-12-02: the
		// client's encoding in the timer and the whole answer decoded into
		// maps, as a generic client does.
		dMCPReadWhole := timed(func() {
			var env struct {
				Result map[string]any `json:"result"`
			}
			data := m.send(m.encodeCall("block", readArgs))
			if json.Unmarshal(data, &env) != nil || env.Result["isError"] == true || env.Result["structuredContent"] == nil {
				t.Fatalf("read: %s", data)
			}
		})
		pingMsg := m.encode("ping", map[string]any{})
		dPing := timed(func() { m.exchange(pingMsg) })
		listMsg := m.encode("tools/list", map[string]any{})
		dList := timed(func() { m.exchange(listMsg) })
		var bareItems, items []map[string]any
		for i, b := range batch {
			bareItems = append(bareItems, map[string]any{"id": b, "dataType": "markdown", "data": fmt.Sprintf("bare batch %d/%d", r, i)})
			items = append(items, map[string]any{"id": b, "data": fmt.Sprintf("strict batch %d/%d", r, i)})
		}
		bareBatchBody, _ := json.Marshal(map[string]any{"blocks": bareItems})
		dBareBatch := timed(func() { bareRaw("/api/block/batchUpdateBlock", bareBatchBody) })
		var directItems []map[string]any
		for i, b := range batch {
			directItems = append(directItems, map[string]any{"id": b, "dataType": "markdown", "data": fmt.Sprintf("direct batch %d/%d", r, i)})
		}
		dDirectBatch := timed(func() { directBatch(directItems) })
		dBatchPre, dBatchCommit, bres := strictRound(map[string]any{"action": "update", "items": items})
		if bres["status"] != "committed" {
			t.Fatalf("batch round %d: %v", r, bres)
		}
		dBatch := dBatchPre + dBatchCommit
		for name, d := range map[string]time.Duration{names[0]: dBare, names[1]: dRead, names[2]: dDirect, names[3]: dPre, names[4]: dCommit, names[5]: dPre + dCommit,
			names[6]: dMCPRead, names[7]: dPing, names[8]: dList, names[9]: dBareBatch, names[10]: dBatch, names[11]: dDirectBatch, names[12]: dFloor, names[13]: dMCPReadWhole} {
			lat[name] = append(lat[name], d)
		}
		ratios["preflight + commit / bare updateBlock"] = append(ratios["preflight + commit / bare updateBlock"], float64(dPre+dCommit)/float64(dBare))
		ratios["same kernel calls, direct / bare updateBlock"] = append(ratios["same kernel calls, direct / bare updateBlock"], float64(dDirect)/float64(dBare))
		ratios["preflight + commit / same kernel calls, direct"] = append(ratios["preflight + commit / same kernel calls, direct"], float64(dPre+dCommit)/float64(dDirect))
		ratios["the issue's floor / bare updateBlock"] = append(ratios["the issue's floor / bare updateBlock"], float64(dFloor)/float64(dBare))
		ratios["commit / bare updateBlock"] = append(ratios["commit / bare updateBlock"], float64(dCommit)/float64(dBare))
		ratios["read over MCP / bare getBlockKramdown"] = append(ratios["read over MCP / bare getBlockKramdown"], float64(dMCPRead)/float64(dRead))
		ratios["read over MCP, client decoding timed / bare getBlockKramdown"] = append(ratios["read over MCP, client decoding timed / bare getBlockKramdown"], float64(dMCPReadWhole)/float64(dRead))
		ratios["strict items[] (11) / bare batchUpdateBlock (11)"] = append(ratios["strict items[] (11) / bare batchUpdateBlock (11)"], float64(dBatch)/float64(dBareBatch))
		ratios["batch: same kernel calls, direct / bare batchUpdateBlock"] = append(ratios["batch: same kernel calls, direct / bare batchUpdateBlock"], float64(dDirectBatch)/float64(dBareBatch))
		ratios["strict items[] (11) / same kernel calls, direct"] = append(ratios["strict items[] (11) / same kernel calls, direct"], float64(dBatch)/float64(dDirectBatch))
	}

	var out strings.Builder
	fmt.Fprintf(&out, "\n%s, %d interleaved rounds, 1,000-paragraph document\n\n", kernelName, runs)
	fmt.Fprintf(&out, "| | p50 | p90 |\n|---|---|---|\n")
	for _, n := range names {
		d := lat[n]
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		fmt.Fprintf(&out, "| %s | %s | %s |\n", n, ms(d[len(d)/2]), ms(d[len(d)*9/10]))
	}
	fmt.Fprintf(&out, "\n| ratio (median over the rounds) | |\n|---|---|\n")
	for _, n := range []string{"preflight + commit / bare updateBlock", "commit / bare updateBlock", "the issue's floor / bare updateBlock", "same kernel calls, direct / bare updateBlock",
		"preflight + commit / same kernel calls, direct", "read over MCP / bare getBlockKramdown", "read over MCP, client decoding timed / bare getBlockKramdown",
		"strict items[] (11) / bare batchUpdateBlock (11)",
		"batch: same kernel calls, direct / bare batchUpdateBlock", "strict items[] (11) / same kernel calls, direct"} {
		v := ratios[n]
		sort.Float64s(v)
		fmt.Fprintf(&out, "| %s | %.2f× |\n", n, v[len(v)/2])
	}
	t.Log(out.String())
	if f := testvars.BenchOut.Value(); f != "" {
		os.WriteFile(f, []byte(out.String()), 0o644)
	}
}

// rawMCP is a legacy MCP session spoken directly: JSON-RPC requests
// POSTed on one keep-alive connection, JSON answers.
type rawMCP struct {
	t       *testing.T
	url, id string
	hc      *http.Client
	next    int
}

func newRawMCP(t *testing.T, url string) *rawMCP {
	m := &rawMCP{t: t, url: url, hc: &http.Client{}}
	m.rpc("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "bench", "version": "1"}})
	m.post(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return m
}

func (m *rawMCP) post(msg map[string]any) []byte {
	b, _ := json.Marshal(msg)
	return m.send(b)
}

// send POSTs one encoded message and returns the answer's body.
func (m *rawMCP) send(b []byte) []byte {
	req, _ := http.NewRequest("POST", m.url, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer sekret")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if m.id != "" {
		req.Header.Set("Mcp-Session-Id", m.id)
	}
	resp, err := m.hc.Do(req)
	if err != nil {
		m.t.Fatal(err)
	}
	defer resp.Body.Close()
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		m.id = id
	}
	data, _ := io.ReadAll(resp.Body)
	return data
}

// encode is a request for method with the session's next id, encoded
// before a timer starts.
func (m *rawMCP) encode(method string, params any) []byte {
	m.next++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.next, "method": method, "params": params})
	return b
}

// encodeCall is a tools/call of tool with args, encoded.
func (m *rawMCP) encodeCall(tool string, args map[string]any) []byte {
	return m.encode("tools/call", map[string]any{"name": tool, "arguments": args})
}

// exchange sends msg and checks that the answer is a result, which it
// returns raw: the answer is scanned whole, as a bare call's envelope is,
// and nothing is built from it.
func (m *rawMCP) exchange(msg []byte) json.RawMessage {
	m.t.Helper()
	data := m.send(msg)
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if json.Unmarshal(data, &env) != nil || env.Result == nil {
		m.t.Fatalf("%.200s: %s", msg, data)
	}
	return env.Result
}

// tool sends an encoded tools/call and returns its structuredContent raw,
// failing on an error result.
func (m *rawMCP) tool(msg []byte) json.RawMessage {
	m.t.Helper()
	data := m.send(msg)
	var env struct {
		Result *struct {
			IsError           bool            `json:"isError"`
			StructuredContent json.RawMessage `json:"structuredContent"`
		} `json:"result"`
	}
	if json.Unmarshal(data, &env) != nil || env.Result == nil || env.Result.IsError || env.Result.StructuredContent == nil {
		m.t.Fatalf("%.200s: %s", msg, data)
	}
	return env.Result.StructuredContent
}

// rpc sends one request and returns its result decoded.
func (m *rawMCP) rpc(method string, params any) map[string]any {
	m.t.Helper()
	return decodeObject(m.t, m.exchange(m.encode(method, params)))
}

// decodeObject decodes a JSON object, failing the test on anything else.
func decodeObject(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil || v == nil {
		t.Fatalf("not an object: %v: %.200s", err, raw)
	}
	return v
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }
