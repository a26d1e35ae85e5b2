package mascotstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// memFiles is a workspace in memory; block, when set, holds every write
// of a path until it is closed.
type memFiles struct {
	mu     sync.Mutex
	files  map[string][]byte
	writes map[string]int
	block  map[string]chan struct{}
	fail   map[string]error
}

func newMem() *memFiles {
	return &memFiles{files: map[string][]byte{}, writes: map[string]int{}, block: map[string]chan struct{}{}, fail: map[string]error{}}
}

func (m *memFiles) Read(_ context.Context, p string) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.files[p]
	return bytes.Clone(d), ok, nil
}

func (m *memFiles) Write(ctx context.Context, p string, data []byte) error {
	m.mu.Lock()
	b, err := m.block[p], m.fail[p]
	m.mu.Unlock()
	if b != nil {
		select {
		case <-b:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.files[p] = bytes.Clone(data)
	m.writes[p]++
	return nil
}

func (m *memFiles) get(p string) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return bytes.Clone(m.files[p])
}

func TestParseStats(t *testing.T) {
	for _, tc := range []struct {
		name, in    string
		total, bal  int64
		wantErr     bool
		lastAction  string
		keepsFields []string
	}{
		{name: "empty", in: ""},
		{name: "upstream", in: `{"totalCalls":5,"balance":2,"updatedAt":1,"lastAction":"a/b"}`, total: 5, bal: 2, lastAction: "a/b"},
		{name: "no balance holds totalCalls", in: `{"totalCalls":7}`, total: 7, bal: 7},
		{name: "fractions floored, negatives zero", in: `{"totalCalls":7.9,"balance":-3}`, total: 7, bal: 0},
		{name: "strings are zero", in: `{"totalCalls":"9","balance":"x"}`},
		{name: "unknown kept", in: `{"totalCalls":1,"balance":1,"hat":{"on":true}}`, total: 1, bal: 1, keepsFields: []string{`"hat":{"on":true}`}},
		{name: "not an object", in: `[1,2]`, wantErr: true},
		{name: "null", in: `null`, wantErr: true},
		{name: "broken", in: `{"totalCalls":`, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := ParseStats([]byte(tc.in))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v", err)
			}
			if err != nil {
				return
			}
			if st.TotalCalls != tc.total || st.Balance != tc.bal || st.LastAction != tc.lastAction {
				t.Fatalf("got %+v", st)
			}
			out := string(st.Marshal())
			for _, f := range tc.keepsFields {
				if !strings.Contains(out, f) {
					t.Fatalf("%s lost %s", out, f)
				}
			}
		})
	}
}

// A file upstream wrote, with fields this server does not know, reads as
// upstream reads it; earning a coin writes upstream's fields in its order
// and keeps the others as they were.
func TestUpstreamStatsRoundTrip(t *testing.T) {
	in, err := os.ReadFile("testdata/upstream_stats.json")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/upstream_stats_earned.json")
	if err != nil {
		t.Fatal(err)
	}
	m := newMem()
	m.files[StatsPath] = in
	s := New(m, Options{Now: func() time.Time { return time.UnixMilli(1764950401000) }})
	st, err := s.Stats(context.Background())
	if err != nil || st.Balance != 17 || st.TotalCalls != 42 {
		t.Fatalf("read %+v, %v", st, err)
	}
	if _, err := s.Earn(context.Background(), "block/get_kramdown"); err != nil {
		t.Fatal(err)
	}
	if got := m.get(StatsPath); !bytes.Equal(got, want) {
		t.Fatalf("wrote\n%s\nwant\n%s", got, want)
	}
}

// Many clients earning at once lose no coin, and the writes are grouped:
// far fewer than one per coin.
func TestEarnConcurrentNoLostIncrement(t *testing.T) {
	m := newMem()
	m.files[StatsPath] = []byte(`{"totalCalls":10,"balance":3}`)
	s := New(m, Options{})
	const clients, perClient = 8, 50
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perClient {
				if _, err := s.Earn(context.Background(), fmt.Sprintf("c%d/%d", c, i)); err != nil {
					t.Error(err)
				}
				s.Event(fmt.Sprint("c", c), Event{Tool: "t", Action: "a", Status: Success})
				s.Record(fmt.Sprint("c", c), Record{Tool: "t", Action: "a", Status: Success})
			}
		}()
	}
	wg.Wait()
	st, err := ParseStats(m.get(StatsPath))
	if err != nil {
		t.Fatal(err)
	}
	if st.TotalCalls != 10+clients*perClient || st.Balance != 3+clients*perClient {
		t.Fatalf("lost coins: %+v", st)
	}
	if w := s.BalanceWrites(); w > clients*perClient {
		t.Fatalf("%d writes for %d coins", w, clients*perClient)
	}
	if err := s.Settle(context.Background()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Count(string(m.get(AnalyticsPath)), "\n") + 1
	if int64(lines)+s.Dropped().Records != clients*perClient {
		t.Fatalf("%d analytics lines, %d dropped", lines, s.Dropped().Records)
	}
}

// N calls arriving while a write is under way are carried by one more
// write, not N.
func TestEarnGroupCommit(t *testing.T) {
	m := newMem()
	gate := make(chan struct{})
	m.block[StatsPath] = gate
	s := New(m, Options{})
	first := make(chan error, 1)
	go func() { _, err := s.Earn(context.Background(), "a/first"); first <- err }()
	waitFor(t, func() bool { s.bal.mu.Lock(); defer s.bal.mu.Unlock(); return s.bal.pending == nil && s.bal.flushing })
	const n = 20
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() { defer wg.Done(); s.Earn(context.Background(), "a/more") }()
	}
	waitFor(t, func() bool {
		s.bal.mu.Lock()
		defer s.bal.mu.Unlock()
		return s.bal.pending != nil && s.bal.pending.earn == n
	})
	close(gate)
	wg.Wait()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if w := s.BalanceWrites(); w != 2 {
		t.Fatalf("%d writes, want 2 (the first, then the %d that waited)", w, n)
	}
	if st, _ := ParseStats(m.get(StatsPath)); st.TotalCalls != n+1 {
		t.Fatalf("%+v", st)
	}
}

// waitFor polls a condition that another goroutine makes true.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for range 20000 {
		if cond() {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("condition never held")
}

// Purchases and earnings share the one writer: no purchase is lost, none
// overdraws, and a refused one writes nothing.
func TestSpend(t *testing.T) {
	m := newMem()
	m.files[StatsPath] = []byte(`{"totalCalls":20,"balance":10}`)
	s := New(m, Options{})
	ctx := context.Background()
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, refused := 0, 0
	for range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.Spend(ctx, "milk", 3)
			mu.Lock()
			defer mu.Unlock()
			if _, is := IsInsufficient(err); is {
				refused++
			} else if err == nil {
				ok++
			} else {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	st, _ := ParseStats(m.get(StatsPath))
	if ok != 3 || refused != 2 || st.Balance != 1 || st.Spent != 9 || st.TotalCalls != 20 {
		t.Fatalf("ok %d refused %d: %+v", ok, refused, st)
	}
	if st.LastPurchase == nil || st.LastPurchase.ItemID != "milk" || st.LastPurchase.SpentAfter != 9 {
		t.Fatalf("last purchase %+v", st.LastPurchase)
	}
	writes := s.BalanceWrites()
	if _, err := s.Spend(ctx, "milk", 3); err == nil {
		t.Fatal("overdrawn")
	}
	if s.BalanceWrites() != writes {
		t.Fatal("a refused purchase wrote")
	}
}

// A file that is not upstream's shape is never written over.
func TestMalformedStatsNotOverwritten(t *testing.T) {
	m := newMem()
	m.files[StatsPath] = []byte(`not json`)
	s := New(m, Options{})
	_, err := s.Earn(context.Background(), "a/b")
	if !errors.Is(err, ErrNotWritten) {
		t.Fatalf("err %v", err)
	}
	if string(m.get(StatsPath)) != "not json" {
		t.Fatal("overwritten")
	}
}

// A display write that stalls delays neither another client's coin nor
// its analytics, and holds at most the cap of each client's events.
func TestStalledDisplayDelaysNoCall(t *testing.T) {
	m := newMem()
	gate := make(chan struct{})
	defer close(gate)
	blocking := &blockOnce{memFiles: m, gate: gate, path: EventsPath}
	s := New(blocking, Options{AnalyticsBatch: 1})
	s.Event("a", Event{Tool: "t", Action: "a0", Status: Running})
	waitFor(t, blocking.stalled)
	for i := range 3 * DefaultEventCap {
		s.Event("a", Event{Tool: "t", Action: fmt.Sprint("a", i), Status: Success})
	}
	s.Event("b", Event{Tool: "t", Action: "b1", Status: Running})
	if _, err := s.Earn(context.Background(), "t/b"); err != nil {
		t.Fatal(err)
	}
	s.Record("b", Record{Tool: "t", Action: "b1", Status: Success})
	waitFor(t, func() bool { return strings.Contains(string(m.get(AnalyticsPath)), `"action":"b1"`) })
	if st, _ := ParseStats(m.get(StatsPath)); st.TotalCalls != 1 {
		t.Fatalf("coin: %+v", st)
	}
	s.mu.Lock()
	pending := len(s.events["a"].pending)
	s.mu.Unlock()
	if pending > DefaultEventCap {
		t.Fatalf("client a holds %d events, cap %d", pending, DefaultEventCap)
	}
	if d := s.Dropped().Events; d < 2*DefaultEventCap {
		t.Fatalf("dropped %d", d)
	}
}

// The display file holds the newest event of all clients.
func TestNewestEventWins(t *testing.T) {
	m := newMem()
	s := New(m, Options{})
	for i := range 50 {
		s.Event(fmt.Sprint("c", i%5), Event{Tool: "t", Action: fmt.Sprint("x", i), Status: Success})
	}
	if err := s.Settle(context.Background()); err != nil {
		t.Fatal(err)
	}
	var e Event
	if err := json.Unmarshal(m.get(EventsPath), &e); err != nil || e.Action != "x49" || e.Seq == 0 {
		t.Fatalf("%s", m.get(EventsPath))
	}
}

// blockOnce stalls the first write of path until gate closes.
type blockOnce struct {
	*memFiles
	gate chan struct{}
	path string
	mu   sync.Mutex
	hit  bool
}

func (b *blockOnce) Write(ctx context.Context, p string, data []byte) error {
	b.mu.Lock()
	first := p == b.path && !b.hit
	if first {
		b.hit = true
	}
	b.mu.Unlock()
	if first {
		<-b.gate
	}
	return b.memFiles.Write(ctx, p, data)
}

func (b *blockOnce) stalled() bool { b.mu.Lock(); defer b.mu.Unlock(); return b.hit }

// Analytics: one line per call in upstream's shape, no argument or text,
// rotated to .1 past the size.
func TestAnalyticsRotation(t *testing.T) {
	m := newMem()
	s := New(m, Options{MaxAnalyticsBytes: 600})
	for i := range 10 {
		s.Record("c", Record{Tool: "block", Action: "update", Status: Failed, ErrorCode: "state_changed", DurationMs: int64(i)})
		if err := s.Settle(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	cur, old := m.get(AnalyticsPath), m.get(RotatedPath)
	if len(old) == 0 || len(cur) > 600 {
		t.Fatalf("no rotation: %d / %d bytes", len(cur), len(old))
	}
	for _, line := range strings.Split(string(cur), "\n") {
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"seq", "ts", "tool", "action", "status", "durationMs", "errorCode", "paramKeys", "transport"} {
			if _, ok := r[k]; !ok && k != "transport" {
				t.Fatalf("%s lacks %s", line, k)
			}
		}
	}
}

// Failing storage of events and analytics is only logged.
func TestFailingEventStorage(t *testing.T) {
	m := newMem()
	m.fail[EventsPath] = errors.New("disk full")
	m.fail[AnalyticsPath] = errors.New("disk full")
	s := New(m, Options{})
	s.Event("c", Event{Tool: "t", Action: "a", Status: Running})
	s.Record("c", Record{Tool: "t", Action: "a", Status: Success})
	if err := s.Settle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Earn(context.Background(), "t/a"); err != nil {
		t.Fatal(err)
	}
}

// FuzzParseStats: whatever the workspace holds, reading it never panics,
// and what this server writes back reads the same.
func FuzzParseStats(f *testing.F) {
	for _, s := range []string{``, `{}`, `{"totalCalls":1e308,"balance":-1}`, `{"totalCalls":3,"lastPurchase":{"itemId":"milk","cost":3}}`, `[]`, `{"a":`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := ParseStats(data)
		if err != nil {
			return
		}
		again, err := ParseStats(st.Marshal())
		if err != nil {
			t.Fatalf("%s: %v", st.Marshal(), err)
		}
		if !bytes.Equal(again.Marshal(), st.Marshal()) {
			t.Fatalf("%s -> %s", st.Marshal(), again.Marshal())
		}
	})
}
