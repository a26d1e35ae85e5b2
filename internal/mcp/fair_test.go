package mcp

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestClientKey(t *testing.T) {
	tests := []struct {
		principal, addr, name, want string
	}{
		{"bearer", "127.0.0.1:5000", "claude", "bearer\x00127.0.0.1\x00claude"},
		{"bearer", "127.0.0.1:6000", "claude", "bearer\x00127.0.0.1\x00claude"}, // another connection, the same client
		{"bearer", "[::1]:80", "", "bearer\x00::1\x00"},
		{"bearer", "pipe", "x", "bearer\x00pipe\x00x"},
		{"p", "1.2.3.4:1", strings.Repeat("é", 40), "p\x001.2.3.4\x00" + strings.Repeat("é", 32)},
	}
	for _, tt := range tests {
		if got := clientKey(tt.principal, tt.addr, tt.name); got != tt.want {
			t.Errorf("clientKey(%q, %q, %q) = %q, want %q", tt.principal, tt.addr, tt.name, got, tt.want)
		}
	}
}

func TestFairSlots(t *testing.T) {
	type step struct {
		client  string
		group   string
		admit   bool
		evicted string // the label of the holder pushed out ("" none)
	}
	caps := slotCaps{perGroup: 2, perClient: 3, total: 5, evictOwn: true}
	tests := []struct {
		name  string
		caps  slotCaps
		steps []step
	}{
		{"group cap evicts the group's oldest", caps, []step{
			{"a", "s1", true, ""}, {"a", "s1", true, ""}, {"a", "s1", true, "0"},
		}},
		{"client cap evicts the client's oldest", caps, []step{
			{"a", "s1", true, ""}, {"a", "s2", true, ""}, {"a", "s3", true, ""}, {"a", "s4", true, "0"},
		}},
		{"total evicts from the client holding the most", caps, []step{
			{"a", "s1", true, ""}, {"b", "s2", true, ""}, {"a", "s3", true, ""}, {"c", "s4", true, ""}, {"a", "s5", true, ""},
			{"d", "s6", true, "0"}, // a holds 3: its oldest goes
			{"e", "s7", true, "2"}, // a holds 2, the most: its oldest left goes
		}},
		{"equals are refused", caps, []step{
			{"a", "", true, ""}, {"b", "", true, ""}, {"c", "", true, ""}, {"d", "", true, ""}, {"e", "", true, ""},
			{"a", "", false, ""}, // a would hold 2; nobody holds 2
			{"f", "", true, "0"}, // f would hold 1: the oldest of the equals goes
		}},
		{"no own eviction: refused at the client's cap", slotCaps{perGroup: 1, perClient: 2, total: 8}, []step{
			{"a", "s1", true, ""}, {"a", "s1", false, ""}, {"a", "s2", true, ""}, {"a", "s3", false, ""}, {"b", "s4", true, ""},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFairSlots()
			groups := map[string]any{}
			evicted := map[string]bool{}
			for i, st := range tt.steps {
				var g any
				if st.group != "" {
					if groups[st.group] == nil {
						groups[st.group] = new(int)
					}
					g = groups[st.group]
				}
				label := fmt.Sprint(i)
				before := len(evicted)
				s := f.take(tt.caps, st.client, g, func() { evicted[label] = true })
				if (s != nil) != st.admit {
					t.Fatalf("step %d: admitted=%v, want %v", i, s != nil, st.admit)
				}
				switch {
				case st.evicted == "" && len(evicted) != before:
					t.Fatalf("step %d evicted %v", i, evicted)
				case st.evicted != "" && !evicted[st.evicted]:
					t.Fatalf("step %d: %s not evicted (%v)", i, st.evicted, evicted)
				}
			}
		})
	}
}

// FuzzFairSlots takes and releases places for any sequence of clients and
// checks the caps and the fairness rule after each step.
func FuzzFairSlots(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 0, 0, 0, 0})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 9, 1})
	f.Add([]byte{128, 129, 1, 2, 130, 3, 3, 3, 3})
	f.Fuzz(func(t *testing.T, ops []byte) {
		caps := slotCaps{perGroup: 2, perClient: 3, total: 6, evictOwn: len(ops)%2 == 0}
		fs := newFairSlots()
		var held []*slot
		// A group (a session) belongs to one client.
		groups := map[string][]any{}
		for _, op := range ops {
			if op >= 128 { // release one
				if len(held) > 0 {
					k := int(op-128) % len(held)
					fs.release(held[k])
					held = append(held[:k], held[k+1:]...)
				}
				continue
			}
			client := fmt.Sprint(op % 5)
			if groups[client] == nil {
				groups[client] = []any{new(int), new(int)}
			}
			group := groups[client][int(op/5)%2]
			counts, inGroup := map[string]int{}, 0
			for s := range fs.held {
				counts[s.client]++
				if s.group == group {
					inGroup++
				}
			}
			var victim *slot
			s := fs.take(caps, client, group, nil)
			for _, h := range held {
				if _, ok := fs.held[h]; !ok {
					victim = h
				}
			}
			if s == nil && victim != nil {
				t.Fatal("a refused newcomer evicted someone")
			}
			if victim != nil && victim.client != client && victim.group != group && counts[victim.client] < counts[client]+1 {
				t.Fatalf("evicted a holder of a client holding %d for one that would hold %d", counts[victim.client], counts[client]+1)
			}
			if s == nil && len(fs.held) >= caps.total && counts[client] < caps.perClient && inGroup < caps.perGroup {
				for c, n := range counts {
					if n >= counts[client]+1 {
						t.Fatalf("refused while client %s holds %d", c, n)
					}
				}
			}
			kept := held[:0]
			for _, h := range held {
				if h != victim {
					kept = append(kept, h)
				}
			}
			held = kept
			if s != nil {
				held = append(held, s)
			}
			perClient, perGroup := map[string]int{}, map[any]int{}
			for h := range fs.held {
				perClient[h.client]++
				perGroup[h.group]++
			}
			if len(fs.held) > caps.total || len(fs.held) != len(held) {
				t.Fatalf("%d held, %d tracked, cap %d", len(fs.held), len(held), caps.total)
			}
			for c, n := range perClient {
				if n > caps.perClient || fs.byClient[c] != n {
					t.Fatalf("client %s holds %d (counted %d), cap %d", c, n, fs.byClient[c], caps.perClient)
				}
			}
			for g, n := range perGroup {
				if n > caps.perGroup || fs.byGroup[g] != n {
					t.Fatalf("a group holds %d (counted %d), cap %d", n, fs.byGroup[g], caps.perGroup)
				}
			}
		}
	})
}

// Requests awaiting a client's answer are capped per session: the fifth
// elicitation of one session fails at once (the client never answers the
// first four), and frees nothing of another session.
func TestAwaitingClientRequestsAreCapped(t *testing.T) {
	s := testServer(t, nil)
	ts := newHTTPTest(t, s, HTTPOptions{})
	sid := legacyInit(t, ts.URL, nil, map[string]any{"elicitation": map[string]any{}})
	var other string
	// A legacy call outlives its stream: should the test stop early, the
	// sessions end first so the server's Close does not wait on their calls.
	t.Cleanup(func() {
		for _, id := range []string{sid, other} {
			if id != "" {
				do(t, nil, http.MethodDelete, ts.URL, "", legacyHeaders(id))
			}
		}
	})
	call := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"confirm","arguments":{}}}`, id)
	}
	var waiting []*sseReader
	for i := 0; i < 4; i++ {
		st := openSSE(t, ts.URL, call(i), legacyHeaders(sid))
		if req := st.next(t); req["method"] != "elicitation/create" {
			t.Fatalf("call %d: %v", i, req)
		}
		waiting = append(waiting, st)
	}
	r := do(t, nil, http.MethodPost, ts.URL, call(9), legacyHeaders(sid))
	if !strings.Contains(string(r.body), "too many requests already await") {
		t.Fatalf("the fifth elicitation of a session: %d %s", r.status, r.body)
	}
	// Another session still asks.
	other = legacyInit(t, ts.URL, nil, map[string]any{"elicitation": map[string]any{}})
	st := openSSE(t, ts.URL, call(1), legacyHeaders(other))
	if req := st.next(t); req["method"] != "elicitation/create" {
		t.Fatalf("another session: %v", req)
	}
	if n := s.awaiting.len(); n != 5 {
		t.Fatalf("%d requests await answers, want 5", n)
	}
	// Deleting the session withdraws its requests and frees their places.
	do(t, nil, http.MethodDelete, ts.URL, "", legacyHeaders(sid))
	deadline := time.Now().Add(5 * time.Second)
	for s.awaiting.len() != 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := s.awaiting.len(); n != 1 {
		t.Fatalf("%d requests await answers after the session ended", n)
	}
	for _, st := range waiting {
		if m := st.next(t); m != nil { // a cancelled legacy call is not answered
			t.Fatalf("a call of the deleted session: %v", m)
		}
	}
}

// FuzzSessionCaps opens sessions for any sequence of clients, some kept
// busy with a call: never more than the caps, never a busy session ended,
// a session ended for the total only from a client holding at least as
// many as the newcomer would, and a refusal only when nothing could go.
func FuzzSessionCaps(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 1, 2, 3, 4, 5, 6})
	f.Add([]byte{0, 128, 0, 128, 0, 128, 1, 1, 1, 2, 2})
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	f.Fuzz(func(t *testing.T, ops []byte) {
		s := NewServer(Options{MaxSessions: 6, MaxSessionsPerClient: 3})
		defer s.Close()
		st := s.sessions
		live := map[*session]bool{} // value: busy
		for _, op := range ops {
			client := fmt.Sprint(op % 8)
			busy := op >= 128
			counts := map[string]int{}
			for sess := range live {
				counts[sess.client]++
			}
			sess, err := st.create("p", client, "2025-11-25", nil)
			var ended []*session
			for old, b := range live {
				if st.get(old.id) == nil {
					if b {
						t.Fatal("a session with a call running was ended")
					}
					ended = append(ended, old)
					delete(live, old)
				}
			}
			switch {
			case err != nil && len(ended) > 0:
				t.Fatal("a refused session ended another")
			case len(ended) > 1:
				t.Fatalf("one newcomer ended %d sessions", len(ended))
			case len(ended) == 1 && ended[0].client != client && counts[ended[0].client] < counts[client]+1:
				t.Fatalf("ended a session of a client holding %d for one that would hold %d", counts[ended[0].client], counts[client]+1)
			case err != nil:
				idleOwn, idleFair := false, false
				for old, b := range live {
					if b {
						continue
					}
					idleOwn = idleOwn || old.client == client
					idleFair = idleFair || counts[old.client] >= counts[client]+1
				}
				if counts[client] >= 3 && idleOwn || counts[client] < 3 && len(live) >= 6 && idleFair {
					t.Fatal("refused although a session could be ended")
				}
			}
			if sess != nil {
				if busy {
					sess.inflight.add(IntID(1), func() {})
				}
				live[sess] = busy
			}
			per := map[string]int{}
			for sess := range live {
				per[sess.client]++
			}
			if len(live) > 6 || st.len() != len(live) {
				t.Fatalf("%d sessions tracked, %d stored, cap 6", len(live), st.len())
			}
			for c, n := range per {
				if n > 3 || st.perClient[c] != n {
					t.Fatalf("client %s holds %d (counted %d), cap 3", c, n, st.perClient[c])
				}
			}
		}
	})
}

// Modern subscriptions/listen streams share the event streams' places: a
// client's fifth closes its first; past the total, one of a client holding
// fewer than anyone is refused with 503.
func TestListenStreamsAreCapped(t *testing.T) {
	s := testServer(t, nil)
	ts := newHTTPTest(t, s, HTTPOptions{MaxStreams: 6, MaxStreamsPerClient: 4})
	listen := func(client string) *liveStream {
		meta := modernMeta(nil)
		meta[MetaClientInfo] = map[string]any{"name": client, "version": "1"}
		body, h := modernReq(client, "subscriptions/listen", map[string]any{"notifications": map[string]any{"toolsListChanged": true}, "_meta": meta})
		st := openStream(t, http.MethodPost, ts.URL, body, h)
		if st.status == 200 {
			st.next(t, time.Second) // acknowledged
		}
		return st
	}
	var a []*liveStream
	for i := 0; i < 4; i++ {
		a = append(a, listen("a"))
	}
	a5 := listen("a")
	if a5.status != 200 {
		t.Fatalf("a client's fifth stream: %d", a5.status)
	}
	a[0].ended(t, time.Second)
	b1, b2 := listen("b"), listen("b")
	if b1.status != 200 || b2.status != 200 {
		t.Fatalf("b: %d %d", b1.status, b2.status)
	}
	// 4 of a, 2 of b: c pushes out a's oldest.
	if c1 := listen("c"); c1.status != 200 {
		t.Fatalf("c: %d", c1.status)
	}
	a[1].ended(t, time.Second)
	if n := s.streamSlots.len(); n != 6 {
		t.Fatalf("%d streams, cap 6", n)
	}
	// a 3, b 2, c 1: a second of c would hold 2, and a holds 3: a goes.
	// Then a, b and c hold two each: a third of c is refused.
	if c2 := listen("c"); c2.status != 200 {
		t.Fatalf("c's second: %d", c2.status)
	}
	if c3 := listen("c"); c3.status != 503 {
		t.Fatalf("c's third among equals: %d", c3.status)
	}
}
