package transfer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/failure"
)

// clock is a fake clock for expiry.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func hexSum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func codeOf(err error) failure.Code {
	var fe *failure.Error
	if errors.As(err, &fe) {
		return fe.Code
	}
	return ""
}

func stage(t *testing.T, s *Store, name string, data []byte) Staged {
	t.Helper()
	st, err := s.Stage(context.Background(), name, bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("stage %s: %v", name, err)
	}
	return st
}

func TestStageKeepsWhatItHashed(t *testing.T) {
	c := newClock()
	s := NewStore(Config{Now: c.Now})
	data := bytes.Repeat([]byte("sisyphus "), 100_000)
	for _, size := range []int64{int64(len(data)), -1} { // declared length, and chunked
		s := NewStore(Config{Now: c.Now})
		st, err := s.Stage(context.Background(), "a.bin", io.MultiReader(bytes.NewReader(data[:7]), bytes.NewReader(data[7:])), size)
		if err != nil {
			t.Fatal(err)
		}
		if st.SHA256 != hexSum(data) || st.Size != int64(len(data)) || st.FileName != "a.bin" || st.Reused ||
			!strings.HasPrefix(st.UploadSource, HandlePrefix) || len(st.UploadSource) < len(HandlePrefix)+26 {
			t.Fatalf("staged %+v", st)
		}
		if st.ExpiresAt != c.Now().Add(DefaultTTL).UnixMilli() {
			t.Fatalf("expiresAt %d", st.ExpiresAt)
		}
		snap, ok := s.Get(st.UploadSource)
		if !ok || snap.SHA256 != st.SHA256 || snap.Name != "a.bin" || snap.Size != st.Size {
			t.Fatalf("get %+v %v", snap, ok)
		}
		got, _ := io.ReadAll(snap.Open())
		if !bytes.Equal(got, data) {
			t.Fatal("the snapshot's bytes differ from the staged ones")
		}
	}
	if st := s.Stats(); st.Entries != 0 {
		t.Fatalf("another store shares state: %+v", st)
	}
}

// TestStagingLimits covers each cap with a small configuration: the file
// cap (declared and streamed), the total, the entry count, and that a
// refusal keeps nothing.
func TestStagingLimits(t *testing.T) {
	cfg := Config{MaxFileBytes: 100, MaxTotalBytes: 250, MaxEntries: 3}
	blob := func(n int, b byte) []byte { return bytes.Repeat([]byte{b}, n) }
	for _, tt := range []struct {
		name   string
		before [][]byte // staged first, each must succeed
		data   []byte
		size   int64 // declared; -2 means len(data)
		want   failure.Code
	}{
		{"at the file cap", nil, blob(100, 'a'), -2, ""},
		{"declared over the file cap", nil, blob(101, 'a'), -2, failure.FileTooLarge},
		{"streamed over the file cap", nil, blob(101, 'a'), -1, failure.FileTooLarge},
		{"declared short, streamed over", nil, blob(150, 'a'), 10, failure.FileTooLarge},
		{"total at the cap", [][]byte{blob(100, 'a'), blob(100, 'b')}, blob(50, 'c'), -2, ""},
		{"total over the cap", [][]byte{blob(100, 'a'), blob(100, 'b')}, blob(51, 'c'), -2, failure.StagingFull},
		{"entry cap", [][]byte{blob(1, 'a'), blob(1, 'b'), blob(1, 'c')}, blob(1, 'd'), -2, failure.StagingFull},
		{"reuse needs no room", [][]byte{blob(1, 'a'), blob(1, 'b'), blob(1, 'c')}, blob(1, 'c'), -2, ""},
		{"empty body", nil, nil, -2, failure.InvalidRequest},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := NewStore(cfg)
			for i, b := range tt.before {
				stage(t, s, "f"+string(rune('0'+i))+".bin", b)
			}
			if tt.name == "reuse needs no room" {
				// the same content under the same name as the third
				name := "f2.bin"
				st, err := s.Stage(context.Background(), name, bytes.NewReader(tt.data), 1)
				if err != nil || !st.Reused {
					t.Fatalf("reuse at the entry cap: %+v %v", st, err)
				}
				return
			}
			before := s.Stats()
			size := tt.size
			if size == -2 {
				size = int64(len(tt.data))
			}
			_, err := s.Stage(context.Background(), "new.bin", bytes.NewReader(tt.data), size)
			if codeOf(err) != tt.want {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
			after := s.Stats()
			if tt.want != "" && (after.Entries != before.Entries || after.Bytes != before.Bytes) {
				t.Fatalf("a refused staging kept something: %+v → %+v", before, after)
			}
			switch tt.want {
			case failure.FileTooLarge:
				if after.RefusedTooLarge != 1 {
					t.Fatalf("stats %+v", after)
				}
			case failure.StagingFull:
				if after.RefusedFull != 1 {
					t.Fatalf("stats %+v", after)
				}
			}
		})
	}
}

// TestOversizeRefusedWhileStreaming: the body is not read past the cap.
func TestOversizeRefusedWhileStreaming(t *testing.T) {
	s := NewStore(Config{MaxFileBytes: 1 << 20})
	r := &countingReader{left: 1 << 30}
	_, err := s.Stage(context.Background(), "big.bin", r, -1)
	if codeOf(err) != failure.FileTooLarge {
		t.Fatalf("err %v", err)
	}
	if r.read > 2<<20 {
		t.Fatalf("read %d bytes of an endless body before refusing", r.read)
	}
}

type countingReader struct{ left, read int64 }

func (c *countingReader) Read(p []byte) (int, error) {
	if c.left == 0 {
		return 0, io.EOF
	}
	n := int64(len(p))
	n = min(n, c.left)
	clear(p[:n])
	c.left -= n
	c.read += n
	return int(n), nil
}

func TestExpiry(t *testing.T) {
	c := newClock()
	s := NewStore(Config{Now: c.Now, TTL: time.Minute, MaxEntries: 1})
	st := stage(t, s, "a.txt", []byte("one"))
	c.Advance(59 * time.Second)
	if _, ok := s.Get(st.UploadSource); !ok {
		t.Fatal("expired early")
	}
	// Reuse refreshes nothing: the expiry stays that of the first staging.
	if again := stage(t, s, "a.txt", []byte("one")); again.UploadSource != st.UploadSource || again.ExpiresAt != st.ExpiresAt || !again.Reused {
		t.Fatalf("reuse %+v of %+v", again, st)
	}
	c.Advance(time.Second)
	if _, ok := s.Get(st.UploadSource); ok {
		t.Fatal("kept past its TTL")
	}
	if _, err := s.Resolve(st.UploadSource); codeOf(err) != failure.UploadSourceExpired {
		t.Fatalf("resolve expired: %v", err)
	}
	if _, ok := s.Lookup("a.txt", hexSum([]byte("one")), 3); ok {
		t.Fatal("lookup found an expired snapshot")
	}
	// The entry cap counts only live entries: the expired one made room.
	next := stage(t, s, "a.txt", []byte("one"))
	if next.UploadSource == st.UploadSource || next.Reused {
		t.Fatalf("staging after expiry reused the old handle: %+v", next)
	}
	if st := s.Stats(); st.Entries != 1 || st.Expired != 1 || st.Bytes != 3 {
		t.Fatalf("stats %+v", st)
	}
	// An expired handle is remembered for one TTL, then it is only unknown.
	c.Advance(2*time.Minute + time.Second)
	if _, err := s.Resolve(st.UploadSource); codeOf(err) != failure.UploadSourceUnknown {
		t.Fatalf("resolve long expired: %v", err)
	}
}

func TestFullStoreReportsWhenRoomComes(t *testing.T) {
	c := newClock()
	s := NewStore(Config{Now: c.Now, MaxEntries: 1})
	stage(t, s, "a", []byte("a"))
	c.Advance(4 * time.Minute)
	_, err := s.Stage(context.Background(), "b", strings.NewReader("b"), 1)
	var fe *failure.Error
	if !errors.As(err, &fe) || fe.Code != failure.StagingFull || fe.Details["retryAfterSeconds"] != 361 {
		t.Fatalf("err %#v", err)
	}
}

func TestReuseAndNewHandles(t *testing.T) {
	s := NewStore(Config{})
	a := stage(t, s, "doc.pdf", []byte("v1"))
	for _, tt := range []struct {
		name, file string
		data       string
		reuse      bool
	}{
		{"same name and content", "doc.pdf", "v1", true},
		{"changed content", "doc.pdf", "v2", false},
		{"same content, other name", "other.pdf", "v1", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := stage(t, s, tt.file, []byte(tt.data))
			if (st.UploadSource == a.UploadSource) != tt.reuse || st.Reused != tt.reuse {
				t.Fatalf("got %+v, first %+v", st, a)
			}
		})
	}
	// The old handle still reads the old bytes: a preflight bound to it sees
	// its own source, and a commit with the new one sees another.
	snap, ok := s.Get(a.UploadSource)
	if b, _ := io.ReadAll(snap.Open()); !ok || string(b) != "v1" {
		t.Fatalf("old handle reads %q", b)
	}
	if st := s.Stats(); st.Staged != 3 || st.Reused != 1 || st.Entries != 3 {
		t.Fatalf("stats %+v", st)
	}
}

func TestLookupFindsOnlyWhatTheStoreHashed(t *testing.T) {
	s := NewStore(Config{})
	data := []byte("asset bytes")
	sum := hexSum(data)
	for _, tt := range []struct {
		name, file, sum string
		size            int64
		found           bool
	}{
		{"claimed digest, nothing staged", "a.png", sum, int64(len(data)), false},
	} {
		if _, ok := s.Lookup(tt.file, tt.sum, tt.size); ok != tt.found {
			t.Fatalf("%s: found %v", tt.name, ok)
		}
	}
	st := stage(t, s, "a.png", data)
	for _, tt := range []struct {
		name, file, sum string
		size            int64
		found           bool
	}{
		{"exact", "a.png", sum, int64(len(data)), true},
		{"digest in upper case", "a.png", strings.ToUpper(sum), int64(len(data)), true},
		{"other name", "b.png", sum, int64(len(data)), false},
		{"other size", "a.png", sum, int64(len(data)) + 1, false},
		{"other digest", "a.png", hexSum([]byte("else")), int64(len(data)), false},
	} {
		got, ok := s.Lookup(tt.file, tt.sum, tt.size)
		if ok != tt.found || (ok && got.UploadSource != st.UploadSource) {
			t.Errorf("%s: %+v %v", tt.name, got, ok)
		}
	}
	if st := s.Stats(); st.LookupHits != 2 || st.LookupMisses != 4 || st.Entries != 1 {
		t.Fatalf("a lookup created or missed wrongly: %+v", st)
	}
}

func TestRestartClearsEverything(t *testing.T) {
	s := NewStore(Config{})
	st := stage(t, s, "a", []byte("x"))
	restarted := NewStore(Config{})
	if _, ok := restarted.Get(st.UploadSource); ok {
		t.Fatal("a new store knows an old handle")
	}
	if _, err := restarted.Resolve(st.UploadSource); codeOf(err) != failure.UploadSourceUnknown {
		t.Fatalf("resolve after restart: %v", err)
	}
	if _, err := restarted.Resolve("C:/x.png"); codeOf(err) != failure.UploadSourceUnknown {
		t.Fatalf("resolve of a path: %v", err)
	}
	if st := restarted.Stats(); st.Entries != 0 || st.Bytes != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestHandlesAreUnguessable(t *testing.T) {
	s := NewStore(Config{MaxEntries: 64, MaxTotalBytes: 1 << 20})
	seen := map[string]bool{}
	for i := range 64 {
		st := stage(t, s, "f", []byte{byte(i)})
		id := strings.TrimPrefix(st.UploadSource, HandlePrefix)
		if seen[id] || len(id) < 26 {
			t.Fatalf("handle %q repeated or short", st.UploadSource)
		}
		seen[id] = true
	}
}

func TestBusyAtTheThirdStaging(t *testing.T) {
	s := NewStore(Config{})
	var held []*io.PipeWriter
	errs := make(chan error, 2)
	for range 2 {
		pr, pw := io.Pipe()
		held = append(held, pw)
		go func() {
			_, err := s.Stage(context.Background(), "held.bin", pr, -1)
			errs <- err
		}()
		pw.Write([]byte("half a body"))
	}
	waitUntil(t, func() bool { return s.Stats().Active == 2 })
	_, err := s.Stage(context.Background(), "third.bin", strings.NewReader("x"), 1)
	if codeOf(err) != failure.StagingBusy {
		t.Fatalf("third staging: %v", err)
	}
	for _, pw := range held {
		pw.Close()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Stage(context.Background(), "third.bin", strings.NewReader("x"), 1); err != nil {
		t.Fatalf("after the two finished: %v", err)
	}
	if st := s.Stats(); st.RefusedBusy != 1 || st.Active != 0 || st.Staged != 2 || st.Reused != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func waitUntil(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached within 5 s")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestCancelledStagingKeepsNothing(t *testing.T) {
	s := NewStore(Config{})
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	go func() { pw.Write([]byte("part")); cancel(); pw.Write([]byte("rest")); pw.Close() }()
	_, err := s.Stage(ctx, "a", pr, -1)
	pr.Close()
	if err == nil {
		t.Fatal("a cancelled staging succeeded")
	}
	if st := s.Stats(); st.Entries != 0 || st.Active != 0 {
		t.Fatalf("stats %+v", st)
	}
}
