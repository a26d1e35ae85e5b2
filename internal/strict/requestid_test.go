package strict

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/sisyphus-go/sisyphus/internal/testvars"
)

func openTestDB(t *testing.T, path string) *bolt.DB {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func TestParseRequestID(t *testing.T) {
	tests := []struct{ in, want string }{
		{"b72f", "b72f"},
		{"B72F", "b72f"},
		{"0123456789abcdef0123456789ABCDEF", "0123456789abcdef0123456789abcdef"},
		{"b72", ""},
		{"", ""},
		{"b72g", ""},
		{"b72f-", ""},
		{strings.Repeat("a", 33), ""},
		{"0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", ""}, // UUIDs are not our ids
	}
	for _, tt := range tests {
		got, err := ParseRequestID(tt.in)
		if tt.want == "" {
			if !errors.Is(err, ErrMalformedRequestID) {
				t.Errorf("ParseRequestID(%q) = %q, %v; want ErrMalformedRequestID", tt.in, got, err)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("ParseRequestID(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func TestIssuedIDsSurviveReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ids.db")
	seen := map[string]bool{}
	for round := 0; round < 3; round++ {
		db := openTestDB(t, path)
		iss, err := NewIDIssuer(db)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Date(2026, 8, 12, 12, 0, round, 0, time.UTC)
		iss.now = func() time.Time { return now }
		for i := 0; i < 300; i++ {
			id, err := iss.Issue(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(id) < MinRequestIDLen || !isLowerHex(id) {
				t.Fatalf("id %q", id)
			}
			if seen[id] {
				t.Fatalf("round %d: id %q reissued", round, id)
			}
			seen[id] = true
			at, ok, err := iss.Issued(ctx, strings.ToUpper(id))
			if err != nil || !ok || !at.Equal(now) {
				t.Fatalf("Issued(%s) = %v, %v, %v", id, at, ok, err)
			}
		}
		// Every id of earlier rounds is still reserved.
		for id := range seen {
			if _, ok, err := iss.Issued(ctx, id); err != nil || !ok {
				t.Fatalf("round %d: %s no longer reserved (%v)", round, id, err)
			}
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	db := openTestDB(t, path)
	defer db.Close()
	iss, err := NewIDIssuer(db)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"zzzz", "abc", "ffffffffffffffffffffffffffffffff"} {
		if _, ok, err := iss.Issued(ctx, id); ok || err != nil {
			t.Errorf("Issued(%q) = %v, %v", id, ok, err)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := iss.Issue(cctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Issue with a cancelled context: %v", err)
	}
}

// zeros is a random source that always yields zero bytes: every draw
// collides with the previous one of the same length.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

func TestIssueGrowsOneDigitPerCollision(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t, filepath.Join(t.TempDir(), "ids.db"))
	defer db.Close()
	iss, err := NewIDIssuer(db)
	if err != nil {
		t.Fatal(err)
	}
	iss.rand = zeros{}
	for n := MinRequestIDLen; n <= MaxRequestIDLen; n++ {
		id, err := iss.Issue(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if id != strings.Repeat("0", n) {
			t.Fatalf("id %q, want %d zeros", id, n)
		}
	}
	if _, err := iss.Issue(ctx); err == nil {
		t.Fatal("issued past the maximum length")
	}
}

func TestIssueManyUnique(t *testing.T) {
	n := 70000
	if !testvars.LongOn(t) && (testing.Short() || raceEnabled) {
		n = 8000 // the full run is CI's long-test pass
	}
	ctx := context.Background()
	db := openTestDB(t, filepath.Join(t.TempDir(), "ids.db"))
	defer db.Close()
	db.NoSync = true // the count matters here, not durability
	iss, err := NewIDIssuer(db)
	if err != nil {
		t.Fatal(err)
	}
	seen := make(map[string]bool, n)
	lengths := map[int]int{}
	for i := 0; i < n; i++ {
		id, err := iss.Issue(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if seen[id] {
			t.Fatalf("id %q issued twice", id)
		}
		seen[id] = true
		lengths[len(id)]++
	}
	t.Logf("%d ids by length: %v", n, lengths)
	if lengths[4] == 0 || lengths[5] == 0 {
		t.Fatalf("want 4- and 5-digit ids among %d: %v", n, lengths)
	}
	if err := db.View(func(tx *bolt.Tx) error {
		if got := tx.Bucket(reservationsBucket).Stats().KeyN; got != n {
			t.Errorf("%d reservations, want %d", got, n)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestRequestIDGrowth simulates the issuing algorithm (drawID) in memory and
// checks the growth table documented on IDIssuer.
func TestRequestIDGrowth(t *testing.T) {
	limit := 1_000_000
	if testing.Short() || raceEnabled {
		limit = 100_000
	}
	type row struct {
		n          int
		p4, p5     float64 // percent of next ids with 4 and 5 digits
		meanLength float64
	}
	want := []row{
		{1_000, 98.5, 1.5, 4.02},
		{10_000, 85.9, 14.1, 4.14},
		{65_536, 36.8, 61.8, 4.65},
		{100_000, 21.6, 74.8, 4.82},
		{300_000, 1.1, 79.0, 5.19},
		{1_000_000, 0.0, 41.1, 5.60},
	}
	src := rand.NewChaCha8([32]byte{1})
	taken := make(map[string]bool, limit)
	occ := make([]int, MaxRequestIDLen+1) // ids issued per length
	issued := 0
	for _, w := range want {
		if w.n > limit {
			break
		}
		for ; issued < w.n; issued++ {
			id, err := drawID(src, func(id []byte) bool { return taken[string(id)] })
			if err != nil {
				t.Fatal(err)
			}
			taken[id] = true
			occ[len(id)]++
		}
		// Exact distribution of the next id's length given what is taken.
		reach, mean := 1.0, 0.0
		p := make([]float64, MaxRequestIDLen+1)
		for l := MinRequestIDLen; l <= MaxRequestIDLen && reach > 1e-12; l++ {
			collide := float64(occ[l]) / math.Pow(16, float64(l))
			p[l] = reach * (1 - collide)
			mean += p[l] * float64(l)
			reach *= collide
		}
		t.Logf("issued %9d: 4 digits %5.1f%%  5 digits %5.1f%%  6+ %5.1f%%  mean %.2f",
			w.n, 100*p[4], 100*p[5], 100*(1-p[4]-p[5]), mean)
		if math.Abs(100*p[4]-w.p4) > 1 || math.Abs(100*p[5]-w.p5) > 1.5 || math.Abs(mean-w.meanLength) > 0.03 {
			t.Errorf("issued %d: got %.1f%% / %.1f%% / mean %.2f; documented %.1f%% / %.1f%% / %.2f",
				w.n, 100*p[4], 100*p[5], mean, w.p4, w.p5, w.meanLength)
		}
	}
}
