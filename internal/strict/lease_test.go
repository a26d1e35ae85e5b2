package strict

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/canon"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 8, 12, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func stateDigest(t *testing.T, v any) string {
	t.Helper()
	d, err := canon.Digest(v)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

var argsA = canon.DigestBytes([]byte(`{"action":"update","id":"20260812120000-abcdefg"}`))

func guarded(scope Scope, digest, requestID string) Lease {
	return Lease{Scope: scope, Precondition: ExpectedStateHash, Digest: digest, RequestID: requestID}
}

func TestScopeKey(t *testing.T) {
	a := NewScope("block", "update", argsA, []string{"b", "a", "b"})
	if got := a.Targets; len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Fatalf("targets %v", got)
	}
	tests := []struct {
		name string
		s    Scope
		same bool
	}{
		{"same", NewScope("block", "update", argsA, []string{"a", "b"}), true},
		{"unsorted literal", Scope{Tool: "block", Action: "update", ArgsDigest: argsA, Targets: []string{"b", "a", "a"}}, true},
		{"other tool", NewScope("document", "update", argsA, []string{"a", "b"}), false},
		{"other action", NewScope("block", "delete", argsA, []string{"a", "b"}), false},
		{"other args", NewScope("block", "update", canon.DigestBytes([]byte("x")), []string{"a", "b"}), false},
		{"fewer targets", NewScope("block", "update", argsA, []string{"a"}), false},
		{"joined targets", NewScope("block", "update", argsA, []string{"a\",\"b"}), false},
		{"shifted fields", NewScope("block\",\"update", "", argsA, []string{"a", "b"}), false},
	}
	for _, tt := range tests {
		if got := a.Key() == tt.s.Key(); got != tt.same {
			t.Errorf("%s: same key = %v, want %v (%s vs %s)", tt.name, got, tt.same, a.Key(), tt.s.Key())
		}
		if got := a.Equal(tt.s); got != tt.same {
			t.Errorf("%s: Equal = %v, want %v", tt.name, got, tt.same)
		}
	}
}

func TestLeaseTakeResolvesExactCredentialInScope(t *testing.T) {
	clk := newClock()
	aliases := NewAliasPool()
	pool := NewLeasePool(aliases, clk.Now)
	scope := NewScope("block", "update", argsA, []string{"20260812120000-abcdefg"})
	digest := stateDigest(t, map[string]any{"kramdown": "old"})
	l, err := pool.Put(guarded(scope, digest, "b72f"))
	if err != nil {
		t.Fatal(err)
	}
	if l.Credential != digest[len(canon.Prefix):len(canon.Prefix)+4] || !l.ExpiresAt.Equal(clk.Now().Add(LeaseTTL)) {
		t.Fatalf("lease %+v", l)
	}
	// Response hashes share the pool: an alias without a lease authorises nothing.
	otherDigest := stateDigest(t, map[string]any{"kramdown": "new"})
	otherAlias := aliases.Alias(otherDigest)

	now := clk.Now()
	tests := []struct {
		name  string
		scope Scope
		cred  string
		at    time.Time
		err   error
		why   string // the LeaseInvalidError reason
	}{
		{"alias", scope, l.Credential, now, nil, ""},
		{"upper case", scope, strings.ToUpper(l.Credential), now, nil, ""},
		{"prefixed", scope, canon.Prefix + l.Credential, now, nil, ""},
		{"full digest", scope, digest, now, nil, ""},
		{"full hex upper", scope, strings.ToUpper(digest[len(canon.Prefix):]), now, nil, ""},
		{"targets in another order", NewScope("block", "update", argsA, []string{"20260812120000-abcdefg", "20260812120000-abcdefg"}), l.Credential, now, nil, ""},
		{"last instant", scope, l.Credential, now.Add(LeaseTTL - time.Nanosecond), nil, ""},
		{"expired", scope, l.Credential, now.Add(LeaseTTL), ErrLeaseInvalid, LeaseExpired},
		{"other action", NewScope("block", "delete", argsA, scope.Targets), l.Credential, now, ErrLeaseInvalid, LeaseOtherArguments},
		{"other args", NewScope("block", "update", canon.DigestBytes([]byte("{}")), scope.Targets), l.Credential, now, ErrLeaseInvalid, LeaseOtherArguments},
		{"other targets", NewScope("block", "update", argsA, []string{"20260812120000-zzzzzzz"}), l.Credential, now, ErrLeaseInvalid, LeaseOtherArguments},
		{"alias of a response hash", scope, otherAlias, now, ErrLeaseInvalid, LeaseNone},
		{"longer prefix than the alias", scope, digest[len(canon.Prefix) : len(canon.Prefix)+6], now, ErrLeaseInvalid, LeaseUnknownCredential},
		{"unknown full digest", scope, canon.DigestBytes([]byte("never shown")), now, ErrLeaseInvalid, LeaseUnknownCredential},
		{"malformed", scope, "8ac", now, ErrMalformedCredential, ""},
		{"empty", scope, "", now, ErrMalformedCredential, ""},
	}
	for _, tt := range tests {
		// A credential is parsed once, at the edge, before any lookup.
		got, err := Lease{}, error(nil)
		if c, perr := ParseCredential(tt.cred); perr != nil {
			err = perr
		} else {
			got, err = pool.Take(tt.scope, c, tt.at)
		}
		if tt.err != nil {
			var why *LeaseInvalidError
			if !errors.Is(err, tt.err) || tt.why != "" && (!errors.As(err, &why) || why.Reason != tt.why) {
				t.Errorf("%s: Take = %+v, %v; want %v (%s)", tt.name, got, err, tt.err, tt.why)
			}
			continue
		}
		if err != nil || got.Digest != digest || got.RequestID != "b72f" {
			t.Errorf("%s: Take = %+v, %v", tt.name, got, err)
		}
	}
	// Take does not consume; a failed comparison leaves the lease alone.
	if _, err := pool.Take(scope, cred(l.Credential), now); err != nil {
		t.Fatalf("lease consumed by Take: %v", err)
	}
	if !pool.Consume(l) {
		t.Fatal("Consume found no lease")
	}
	if _, err := pool.Take(scope, cred(l.Credential), now); !errors.Is(err, ErrLeaseInvalid) {
		t.Fatalf("Take after Consume: %v", err)
	}
	if pool.Consume(l) {
		t.Fatal("second Consume found a lease")
	}
}

func TestLeaseFromPreviousProcess(t *testing.T) {
	scope := NewScope("block", "update", argsA, []string{"x"})
	digest := stateDigest(t, "state")
	old := NewLeasePool(NewAliasPool(), nil)
	l, err := old.Put(guarded(scope, digest, "b72f"))
	if err != nil {
		t.Fatal(err)
	}
	fresh := NewLeasePool(NewAliasPool(), nil) // a restart: new pools
	for _, c := range []string{l.Credential, digest} {
		if _, err := fresh.Take(scope, cred(c), time.Now()); !errors.Is(err, ErrLeaseInvalid) {
			t.Errorf("Take(%s) in a new process: %v", c, err)
		}
	}
}

func TestLeaseRefreshAndCapacity(t *testing.T) {
	clk := newClock()
	pool := NewLeasePool(NewAliasPool(), clk.Now)
	scope := NewScope("block", "update", argsA, []string{"x"})
	d0 := stateDigest(t, 0)

	// The same scope and state refreshes one lease.
	first, _ := pool.Put(guarded(scope, d0, "aaaa"))
	clk.Advance(time.Minute)
	second, err := pool.Put(guarded(scope, d0, "bbbb"))
	if err != nil || pool.Len() != 1 || second.Credential != first.Credential || !second.ExpiresAt.After(first.ExpiresAt) {
		t.Fatalf("refresh: len %d, %+v, %v", pool.Len(), second, err)
	}
	if got, err := pool.Take(scope, cred(first.Credential), clk.Now()); err != nil || got.RequestID != "bbbb" {
		t.Fatalf("refreshed lease: %+v, %v", got, err)
	}

	// Five states in one scope: the oldest is evicted.
	var leases []Lease
	for i := 1; i <= MaxLeasesPerScope+1; i++ {
		clk.Advance(time.Second)
		l, err := pool.Put(guarded(scope, stateDigest(t, i), fmt.Sprintf("c%03d", i)))
		if err != nil {
			t.Fatal(err)
		}
		leases = append(leases, l)
	}
	if pool.Len() != MaxLeasesPerScope {
		t.Fatalf("len %d", pool.Len())
	}
	if _, err := pool.Take(scope, cred(first.Credential), clk.Now()); !errors.Is(err, ErrLeaseInvalid) {
		t.Fatalf("d0 lease should be evicted: %v", err)
	}
	if _, err := pool.Take(scope, cred(leases[0].Credential), clk.Now()); !errors.Is(err, ErrLeaseInvalid) {
		t.Fatalf("oldest lease should be evicted: %v", err)
	}
	for _, l := range leases[1:] {
		if _, err := pool.Take(scope, cred(l.Credential), clk.Now()); err != nil {
			t.Fatalf("lease %s: %v", l.RequestID, err)
		}
	}

	// 1024 in total: the oldest, whatever the scope, goes first.
	for i := 0; i < MaxLeases; i++ {
		s := NewScope("block", "update", argsA, []string{fmt.Sprintf("t%d", i)})
		if _, err := pool.Put(guarded(s, d0, fmt.Sprintf("d%04d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if pool.Len() != MaxLeases {
		t.Fatalf("len %d, want %d", pool.Len(), MaxLeases)
	}
	for _, l := range leases[1:] {
		if _, err := pool.Take(scope, cred(l.Credential), clk.Now()); !errors.Is(err, ErrLeaseInvalid) {
			t.Fatalf("old lease %s survived the global cap", l.RequestID)
		}
	}

	// Expired leases are dropped on the next Put.
	clk.Advance(LeaseTTL)
	if _, err := pool.Put(guarded(scope, d0, "eeee")); err != nil {
		t.Fatal(err)
	}
	if pool.Len() != 1 {
		t.Fatalf("len %d after expiry", pool.Len())
	}
}

func TestAdditiveLeases(t *testing.T) {
	clk := newClock()
	pool := NewLeasePool(NewAliasPool(), clk.Now)
	scope := NewScope("block", "append", argsA, []string{"parent"})
	a, err := pool.Put(Lease{Scope: scope, RequestID: "a001"})
	if err != nil || a.Credential != "" || !a.Additive() {
		t.Fatalf("additive lease %+v, %v", a, err)
	}
	// The same additive call twice is two writes: two leases.
	b, err := pool.Put(Lease{Scope: scope, RequestID: "a002"})
	if err != nil || pool.Len() != 2 {
		t.Fatalf("len %d, %v", pool.Len(), err)
	}
	now := clk.Now()
	tests := []struct {
		name  string
		scope Scope
		id    string
		at    time.Time
		err   error
	}{
		{"first", scope, "a001", now, nil},
		{"second", scope, "a002", now, nil},
		{"other scope", NewScope("block", "append", argsA, []string{"other"}), "a001", now, ErrLeaseInvalid},
		{"unknown id", scope, "a003", now, ErrLeaseInvalid},
		{"expired", scope, "a001", now.Add(LeaseTTL), ErrLeaseInvalid},
	}
	for _, tt := range tests {
		got, err := pool.ForRequest(tt.scope, tt.id, tt.at)
		if tt.err != nil {
			if !errors.Is(err, tt.err) {
				t.Errorf("%s: %+v, %v", tt.name, got, err)
			}
		} else if err != nil || got.RequestID != tt.id {
			t.Errorf("%s: %+v, %v", tt.name, got, err)
		}
	}
	if !pool.Consume(a) {
		t.Fatal("Consume(a)")
	}
	if _, err := pool.ForRequest(scope, "a001", now); !errors.Is(err, ErrLeaseInvalid) {
		t.Fatalf("consumed lease still there: %v", err)
	}
	if _, err := pool.ForRequest(scope, b.RequestID, now); err != nil {
		t.Fatalf("other additive lease consumed too: %v", err)
	}
}

func TestLeasePutValidates(t *testing.T) {
	pool := NewLeasePool(NewAliasPool(), nil)
	scope := NewScope("block", "update", argsA, nil)
	d := stateDigest(t, 1)
	bad := []Lease{
		{Scope: scope, Precondition: ExpectedStateHash, Digest: d},                      // no request id
		{Scope: scope, Digest: d, RequestID: "aaaa"},                                    // digest without a field
		{Scope: scope, Precondition: ExpectedStateHash, RequestID: "aaaa"},              // field without a digest
		{Scope: scope, Precondition: ExpectedStateHash, Digest: "8ac2", RequestID: "a"}, // not a full digest
	}
	for i, l := range bad {
		if _, err := pool.Put(l); err == nil {
			t.Errorf("lease %d accepted", i)
		}
	}
	if pool.Len() != 0 {
		t.Fatalf("len %d", pool.Len())
	}
}

func TestLeaseConcurrent(t *testing.T) {
	pool := NewLeasePool(NewAliasPool(), nil)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				scope := NewScope("block", "update", argsA, []string{fmt.Sprintf("t%d", i%20)})
				d := canon.DigestBytes([]byte(fmt.Sprintf("%d/%d", w, i)))
				l, err := pool.Put(guarded(scope, d, fmt.Sprintf("%04x", w*1000+i)))
				if err != nil {
					t.Error(err)
					return
				}
				got, err := pool.Take(scope, cred(l.Credential), time.Now())
				if err == nil && got.Digest != d {
					t.Errorf("took %s for %s", got.Digest, d)
				}
				if i%3 == 0 {
					pool.Consume(l)
				}
			}
		}()
	}
	wg.Wait()
	if pool.Len() > MaxLeases {
		t.Fatalf("len %d", pool.Len())
	}
}
