package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/embedded"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// TestAVViewsTwoAgentsUnderFaults: two agents shape one database at once
// through the binary (filters, sorts, a hidden column, the column order),
// each on the view its own database block shows and on one view both
// write, while the kernel's transactions change faults every few
// milliseconds (applied then the connection dropped, refused before
// applying, delayed; the tool answers a refusal with HTTP 500 as
// outcome_unknown too, since a real SiYuan may have applied before
// failing). The kernel runs in this process behind a recorder
// that sees every transaction, what it writes and whether it applied, in
// the order the kernel handled them: the ground truth the agents' answers
// are held to.
//
//   - No duplicate: each write's transaction reached the kernel once per
//     request that was not refused at commit (a request repeated after
//     outcome_unknown is answered from the ledger, never sent again).
//   - No lost change: a committed write applied; the final state of each
//     view is what the last applied write on each of its parts left.
//   - Every outcome_unknown is resolved by reading the view; on an agent's
//     own view the reading agrees with what the kernel applied.
//   - Each view part's history is linearizable: in the kernel's order, a
//     committed write's previousHash is the resultHash of the committed
//     write before it on the same part, unless a write of unknown outcome
//     applied in between; a state_changed commit sent nothing.
func TestAVViewsTwoAgentsUnderFaults(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	k, err := embedded.Open(ctx, embedded.Options{Dir: t.TempDir(), Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	rec := &viewTxRecorder{received: map[string]int{}}
	srv := httptest.NewServer(rec.wrap(k.Handler()))
	t.Cleanup(func() { srv.Close(); k.Close() })
	c := kernelClient(t, srv.URL, "tok")
	s := startServeWith(t, "--siyuan-url", srv.URL, "--siyuan-token", "tok", "--state-dir", t.TempDir())
	agents := []*agent{connect(t, s.url, "2025-11-25"), connect(t, s.url, "2026-07-28")}
	doc, _ := firstParagraph(agents[0])

	// One database, three blocks showing it: block 0 its first view (both
	// agents write it), blocks 1 and 2 a view each, added by add_view.
	av := freshNodeID()
	blocks := []string{freshNodeID(), freshNodeID(), freshNodeID()}
	if _, err := c.Transactions(ctx, []siyuan.Transaction{{DoOperations: []siyuan.Operation{siyuan.InsertDatabaseBlockOp(blocks[0], av, "", doc)}}}); err != nil {
		t.Fatal(err)
	}
	r0, err := c.RenderAttributeViewOrCreate(ctx, siyuan.RenderAVRequest{ID: av, BlockID: blocks[0]})
	if err != nil {
		t.Fatal(err)
	}
	a0 := agents[0]
	for _, name := range []string{"C1", "C2", "C3"} {
		a0.strictDo("av", map[string]any{"action": "add_column", "avID": av, "keyName": name, "keyType": "text"})
	}
	a0.strictDo("av", map[string]any{"action": "add_rows", "avID": av, "primaryKeyTexts": []string{"alpha", "beta"}})
	views := []string{r0.ViewID, freshNodeID(), freshNodeID()}
	// Block 0 names its view, so that the views added later (each the
	// database's current view in turn) do not move it.
	if err := c.SetBlockAttrs(ctx, blocks[0], map[string]string{"custom-sy-av-view": views[0]}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < 3; i++ {
		if _, err := c.Transactions(ctx, []siyuan.Transaction{{DoOperations: []siyuan.Operation{siyuan.InsertDatabaseBlockOp(blocks[i], av, blocks[i-1], "")}}}); err != nil {
			t.Fatal(err)
		}
		a0.strictDo("av", map[string]any{"action": "add_view", "avID": av, "blockID": blocks[i], "viewID": views[i], "layout": "table", "name": fmt.Sprintf("V%d", i)})
	}
	stored, err := c.GetAttributeView(ctx, av)
	if err != nil || stored == nil {
		t.Fatal(err)
	}
	var pk string
	var keys, others []string // every column; the ones a write may hide
	for _, col := range viewOf(stored, views[0]).Table.Columns {
		keys = append(keys, col.ID)
	}
	for _, kv := range stored.KeyValues {
		if kv.Key.Type == siyuan.AVKeyBlock {
			pk = kv.Key.ID
		} else {
			others = append(others, kv.Key.ID)
		}
	}
	if len(keys) != 5 || len(others) != 4 || pk == "" {
		t.Fatalf("columns %v, others %v, pk %q", keys, others, pk)
	}

	// The writes: agent n's round i shapes the shared view (even rounds)
	// or its own, with filters, sorts, visibility and order in turn. Every
	// write's content differs from every other's (a marker, a permutation
	// drawn once, a column of its own), so the recorder can tell whose
	// transaction it sees.
	const rounds = 24
	var sortsDrawn, ordersDrawn atomic.Int64
	ordersDrawn.Store(1) // permutation 0 is the order the views start in
	write := func(n, i int) viewWrite {
		view := 0
		if i%2 == 1 {
			view = n + 1
		}
		w := viewWrite{agent: n, view: view, args: map[string]any{"avID": av, "blockID": blocks[view], "viewID": views[view]}}
		k := i / 8 // the how-manieth write of its kind on its view
		switch (i / 2) % 4 {
		case 0:
			marker := fmt.Sprintf("a%d-r%d", n, i)
			w.part, w.key = "filters", "filters|"+blocks[view]+"|"+marker
			w.args["action"] = "set_filters"
			w.args["filters"] = []any{map[string]any{"column": pk, "operator": "Does not contains",
				"value": map[string]any{"type": "block", "block": map[string]any{"content": marker}}}}
			w.landed = func(v *siyuan.AVView) bool { return filterMarker(v) == marker }
		case 1:
			cols := nthPermutation(keys, int(sortsDrawn.Add(1)))
			w.part, w.key = "sorts", "sorts|"+blocks[view]+"|"+strings.Join(cols, ",")
			var sorts []any
			for _, col := range cols {
				sorts = append(sorts, map[string]any{"column": col, "order": "ASC"})
			}
			w.args["action"], w.args["sorts"] = "set_sorts", sorts
			w.landed = func(v *siyuan.AVView) bool { return slices.Equal(sortColumns(v), cols) }
		case 2:
			// Hide a column of the agent's own, show it again, hide the
			// next: never the same write twice.
			col, hidden := others[(2*n+k/2)%len(others)], k%2 == 0
			w.part, w.key = "fields", "hidden|"+blocks[view]+"|"+col+"|"+strconv.FormatBool(hidden)
			w.args["action"], w.args["keyID"], w.args["hidden"] = "set_column_visibility", col, hidden
			w.landed = func(v *siyuan.AVView) bool { return slices.Contains(hiddenColumns(v), col) == hidden }
		case 3:
			order := nthPermutation(keys, int(ordersDrawn.Add(1)))
			w.part, w.key = "fields", "order|"+blocks[view]+"|"+strings.Join(order, ",")
			w.args["action"], w.args["keyIDs"] = "set_column_order", order
			w.landed = func(v *siyuan.AVView) bool { return slices.Equal(columnOrder(v), order) }
		}
		return w
	}

	// Faults change every few milliseconds from here on.
	stop := make(chan struct{})
	var churn sync.WaitGroup
	churn.Add(1)
	go func() {
		defer churn.Done()
		k.Faults().Churn(stop, 27, 3*time.Millisecond, 15*time.Millisecond,
			embedded.Fault{Endpoint: "/api/transactions", Kind: embedded.DropAfterApply},
			embedded.Fault{Endpoint: "/api/transactions", Kind: embedded.FailBeforeApply},
			embedded.Fault{Endpoint: "/api/transactions", Kind: embedded.Latency, Delay: 15 * time.Millisecond},
			embedded.Fault{Endpoint: "/api/av/getAttributeView", Kind: embedded.Latency, Delay: 3 * time.Millisecond})
	}()

	var (
		mu   sync.Mutex
		done []viewWrite // every commit answered, with its answer
		wg   sync.WaitGroup
	)
	for n, a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < rounds && !t.Failed(); i++ {
				w := write(n, i)
				for {
					// Whether the view shows the change already: a column
					// shown again after its hiding was not applied. Exact,
					// as no other agent writes what a write of this test
					// can leave unchanged.
					st, err := c.GetAttributeView(ctx, av)
					if err != nil || st == nil {
						t.Errorf("read %s: %v", av, err)
						return
					}
					w.before = w.landed(viewOf(st, views[w.view]))
					pre, isErr := a.call("av", with(w.args, "validateOnly", true))
					if isErr {
						t.Errorf("%s preflight: %v", w.key, pre)
						return
					}
					cargs := commitOf(w.args, pre)
					res, isErr := a.call("av", cargs)
					w.outcome = errCodeOf(res)
					switch {
					case !isErr && (res["status"] == "committed" || res["status"] == "no_change"):
						// no_change: showing a column whose hiding was refused.
						w.outcome, w.previous, w.result = res["status"].(string), res["previousHash"].(string), res["resultHash"].(string)
					case w.outcome == "outcome_unknown":
						// Asked again, the ledger answers: nothing is sent.
						if again, _ := a.call("av", cargs); errCodeOf(again) != "outcome_unknown" {
							t.Errorf("%s repeated after outcome_unknown: %v", w.key, again)
						}
						// Resolved by reading the view.
						st, err := c.GetAttributeView(ctx, av)
						if err != nil || st == nil {
							t.Errorf("read %s: %v", av, err)
							return
						}
						w.resolvedLanded = w.landed(viewOf(st, views[w.view]))
					case w.outcome == "":
						t.Errorf("%s commit: %v", w.key, res)
						return
					}
					mu.Lock()
					done = append(done, w)
					mu.Unlock()
					if w.outcome != "state_changed" {
						break
					}
					// The other agent wrote this part first: preflight again.
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	churn.Wait()
	if t.Failed() {
		return
	}

	final, err := c.GetAttributeView(ctx, av)
	if err != nil || final == nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	applied := map[string]bool{}
	for _, key := range rec.applied {
		applied[key] = true
	}
	// No duplicate: each transaction as many times as requests sent it (a
	// state_changed commit sent nothing).
	sent, outcomes := map[string]int{}, map[string]int{}
	byKey := map[string]viewWrite{} // a write's last request: its final answer
	for _, w := range done {
		outcomes[w.outcome]++
		byKey[w.key] = w
		if w.outcome != "state_changed" {
			sent[w.key]++
		}
	}
	for key, n := range rec.received {
		if strings.Contains(key, "|") && n != sent[key] {
			t.Errorf("%s reached the kernel %d times, sent by %d requests", key, n, sent[key])
		}
	}
	for key, n := range sent {
		if rec.received[key] != n {
			t.Errorf("%s reached the kernel %d times, sent by %d requests", key, rec.received[key], n)
		}
	}
	for _, w := range done {
		switch {
		case (w.outcome == "committed" || w.outcome == "no_change") && !applied[w.key]:
			t.Errorf("%s committed, never applied (a lost change)", w.key)
		case w.outcome == "outcome_unknown" && w.resolvedLanded && !applied[w.key] && !w.before:
			t.Errorf("%s resolved as landed, never applied", w.key)
		case w.outcome == "outcome_unknown" && w.view != 0 && w.resolvedLanded != (applied[w.key] || w.before):
			// Only its agent writes this view: the reading is exact.
			t.Errorf("%s resolved as landed=%t, applied=%t, there before=%t", w.key, w.resolvedLanded, applied[w.key], w.before)
		case w.outcome != "committed" && w.outcome != "no_change" && w.outcome != "outcome_unknown" && w.outcome != "state_changed" && applied[w.key]:
			t.Errorf("%s answered %s, yet applied", w.key, w.outcome)
		}
	}

	// Linearizable per view part, in the kernel's order; and the final
	// state is what the last applied write on each part left.
	links := 0 // committed writes checked against the commit before them
	for view := range views {
		var last, lastFilter, lastSort, lastOrder *viewWrite
		lastHidden := map[string]*viewWrite{}
		chainBroken := map[string]bool{}
		lastResult := map[string]string{}
		for _, key := range rec.applied {
			w, ok := byKey[key]
			if !ok || w.view != view {
				continue
			}
			last = &w
			switch {
			case w.outcome == "committed" || w.outcome == "no_change":
				if prev := lastResult[w.part]; prev != "" && !chainBroken[w.part] {
					links++
					if w.previous != prev {
						t.Errorf("view %d %s: %s committed on %s, the commit before it left %s", view, w.part, w.key, w.previous, prev)
					}
				}
				lastResult[w.part], chainBroken[w.part] = w.result, false
			default:
				chainBroken[w.part] = true // a write of unknown outcome moved the state
			}
			switch w.args["action"] {
			case "set_filters":
				lastFilter = last
			case "set_sorts":
				lastSort = last
			case "set_column_order":
				lastOrder = last
			case "set_column_visibility":
				lastHidden[w.args["keyID"].(string)] = last
			}
		}
		v := viewOf(final, views[view])
		for _, lw := range []*viewWrite{lastFilter, lastSort, lastOrder} {
			if lw != nil && !lw.landed(v) {
				t.Errorf("view %d: the last applied write %s (%s) is not in the final state", view, lw.key, lw.outcome)
			}
		}
		for col, lw := range lastHidden {
			if !lw.landed(v) {
				t.Errorf("view %d column %s: the last applied write %s (%s) is not in the final state", view, col, lw.key, lw.outcome)
			}
		}
	}
	resolved := map[bool]int{}
	for _, w := range done {
		if w.outcome == "outcome_unknown" {
			resolved[w.resolvedLanded]++
		}
	}
	t.Logf("%d commits answered: %v; outcome_unknown read as landed %d, not landed %d; %d transactions applied; %d commits chained to the one before",
		len(done), outcomes, resolved[true], resolved[false], len(rec.applied), links)
	if outcomes["committed"] == 0 || outcomes["outcome_unknown"] == 0 || links == 0 {
		t.Errorf("the faults never left a commit both ways, or no two commits followed each other: %v, %d links", outcomes, links)
	}
}

// viewWrite is one view-shaping request and its answer.
type viewWrite struct {
	agent, view      int
	part, key        string // the view part it changes; its transaction's content
	args             map[string]any
	landed           func(*siyuan.AVView) bool
	outcome          string // committed, or the error code
	previous, result string
	before           bool // the view showed the change before the commit
	resolvedLanded   bool // outcome_unknown: the view read after showed the change
}

// viewTxRecorder sees every /api/transactions request: what it writes
// (as the test names a write) and whether the kernel applied it.
type viewTxRecorder struct {
	mu       sync.Mutex
	received map[string]int
	applied  []string // in the order the kernel finished them
}

func (r *viewTxRecorder) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/api/transactions" {
			next.ServeHTTP(w, req)
			return
		}
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		key := viewTxKey(body)
		r.mu.Lock()
		r.received[key]++
		r.mu.Unlock()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, req)
		// Dropped after applying (hijacked), or answered code 0: applied.
		// A 500 is the fault that applies nothing.
		var env struct{ Code int }
		ok := sw.hijacked || sw.status == http.StatusOK && json.Unmarshal(sw.body.Bytes(), &env) == nil && env.Code == 0
		if ok {
			r.mu.Lock()
			r.applied = append(r.applied, key)
			r.mu.Unlock()
		}
	})
}

// viewTxKey names a transaction as the test names the write that sent it.
func viewTxKey(body []byte) string {
	var tx struct {
		Transactions []struct {
			DoOperations []struct {
				Action     string          `json:"action"`
				ID         string          `json:"id"`
				BlockID    string          `json:"blockID"`
				PreviousID string          `json:"previousID"`
				Data       json.RawMessage `json:"data"`
			} `json:"doOperations"`
		} `json:"transactions"`
	}
	if json.Unmarshal(body, &tx) != nil || len(tx.Transactions) != 1 || len(tx.Transactions[0].DoOperations) == 0 {
		return "other"
	}
	ops := tx.Transactions[0].DoOperations
	switch op := ops[0]; op.Action {
	case "setAttrViewFilters":
		var fs []*siyuan.AVViewFilter
		json.Unmarshal(op.Data, &fs)
		return "filters|" + op.BlockID + "|" + filterMarker(&siyuan.AVView{Filters: fs})
	case "setAttrViewSorts":
		var ss []*siyuan.AVViewSort
		json.Unmarshal(op.Data, &ss)
		return "sorts|" + op.BlockID + "|" + strings.Join(sortColumns(&siyuan.AVView{Sorts: ss}), ",")
	case "setAttrViewColHidden":
		return "hidden|" + op.BlockID + "|" + op.ID + "|" + string(op.Data)
	case "sortAttrViewCol":
		var ids []string
		for _, o := range ops {
			ids = append(ids, o.ID)
		}
		return "order|" + op.BlockID + "|" + strings.Join(ids, ",")
	}
	return "other"
}

// statusWriter keeps a reply's status and body, and whether the
// connection was taken over (the drop-after-apply fault).
type statusWriter struct {
	http.ResponseWriter
	status   int
	body     bytes.Buffer
	hijacked bool
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.body.Write(b)
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	w.hijacked = true
	return w.ResponseWriter.(http.Hijacker).Hijack()
}

func viewOf(av *siyuan.AttributeView, id string) *siyuan.AVView {
	for _, v := range av.Views {
		if v != nil && v.ID == id {
			return v
		}
	}
	return &siyuan.AVView{}
}

// filterMarker is the text the view's first filter rule compares with
// (the tool stores the rules inside one group).
func filterMarker(v *siyuan.AVView) string {
	l := v.Filters
	for len(l) > 0 {
		f := l[0]
		if f.Value != nil && f.Value.Block != nil {
			return f.Value.Block.Content
		}
		l = f.Filters
	}
	return ""
}

func sortColumns(v *siyuan.AVView) []string {
	var out []string
	for _, s := range v.Sorts {
		out = append(out, s.Column)
	}
	return out
}

func columnOrder(v *siyuan.AVView) []string {
	var out []string
	if v.Table != nil {
		for _, c := range v.Table.Columns {
			out = append(out, c.ID)
		}
	}
	return out
}

func hiddenColumns(v *siyuan.AVView) []string {
	var out []string
	if v.Table != nil {
		for _, c := range v.Table.Columns {
			if c.Hidden {
				out = append(out, c.ID)
			}
		}
	}
	return out
}

// nthPermutation is the n-th permutation of items (n modulo their
// number of permutations), in lexicographic order of positions.
func nthPermutation(items []string, n int) []string {
	rest := slices.Clone(items)
	fact := 1
	for i := 2; i <= len(rest); i++ {
		fact *= i
	}
	n %= fact
	var out []string
	for len(rest) > 0 {
		fact /= len(rest)
		i := n / fact
		n %= fact
		out = append(out, rest[i])
		rest = slices.Delete(rest, i, i+1)
	}
	return out
}
