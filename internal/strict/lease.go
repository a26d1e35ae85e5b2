package strict

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Lease limits.
const (
	// LeaseTTL is how long a preflight lease lives.
	LeaseTTL = 10 * time.Minute
	// MaxLeasesPerScope is the number of live leases one scope keeps; a
	// new one evicts the oldest.
	MaxLeasesPerScope = 4
	// MaxLeases is the number of live leases a pool keeps; a new one
	// evicts the oldest.
	MaxLeases = 1024
)

// ErrLeaseInvalid means no live lease matches: it never existed, expired,
// was evicted or consumed, belongs to another scope, or was issued by a
// previous process. The caller answers preflight_lease_invalid: run the same
// validateOnly call again.
var ErrLeaseInvalid = errors.New("strict: preflight lease is missing, expired, evicted or from another scope or process")

// Why a lease is invalid, where the pool can tell ([LeaseInvalidError]).
const (
	// LeaseUnknownCredential: the credential names no hash this process
	// issued (a typo, or one from before a restart).
	LeaseUnknownCredential = "unknown_credential"
	// LeaseOtherArguments: the lease exists for other arguments or
	// targets than the call's.
	LeaseOtherArguments = "other_arguments"
	// LeaseExpired: the lease's ten minutes are over.
	LeaseExpired = "expired"
	// LeaseNone: no live lease: it expired and was dropped, a commit used
	// it, or a previous process issued it.
	LeaseNone = "no_live_lease"
)

// LeaseInvalidError is [ErrLeaseInvalid] with why, when the pool knows.
type LeaseInvalidError struct {
	Reason string // one of the Lease* reasons
	Detail string
}

func (e *LeaseInvalidError) Error() string { return ErrLeaseInvalid.Error() + ": " + e.Detail }

func (e *LeaseInvalidError) Unwrap() error { return ErrLeaseInvalid }

func leaseInvalid(reason, format string, a ...any) error {
	return &LeaseInvalidError{Reason: reason, Detail: fmt.Sprintf(format, a...)}
}

// Scope is what a lease and a ledger record are bound to: the tool, the
// action, the digest of the business arguments (control fields excluded) and
// the sorted, deduplicated target ids.
type Scope struct {
	Tool       string
	Action     string
	ArgsDigest string
	Targets    []string
}

// NewScope returns a scope with its targets sorted and deduplicated (in a
// new slice; targets is not modified).
func NewScope(tool, action, argsDigest string, targets []string) Scope {
	return Scope{Tool: tool, Action: action, ArgsDigest: argsDigest, Targets: normTargets(targets)}
}

func normTargets(targets []string) []string {
	t := slices.Clone(targets)
	slices.Sort(t)
	return slices.Compact(t)
}

// Key returns a stable, unambiguous key for the scope. Targets are sorted
// and deduplicated first, so scopes naming the same set of targets in any
// order share a key.
func (s Scope) Key() string {
	b, _ := json.Marshal([]any{s.Tool, s.Action, s.ArgsDigest, normTargets(s.Targets)}) // cannot fail: strings only
	return string(b)
}

// Equal reports whether two scopes are the same scope.
func (s Scope) Equal(o Scope) bool {
	return s.Tool == o.Tool && s.Action == o.Action && s.ArgsDigest == o.ArgsDigest &&
		slices.Equal(normTargets(s.Targets), normTargets(o.Targets))
}

// Lease is a preflight's grant: within its scope, until ExpiresAt, a write
// may proceed if the target's live state still has Digest.
type Lease struct {
	Scope
	// Precondition is the credential field (expectedStateHash, ...); empty
	// for an additive action.
	Precondition Precondition
	// Digest is the full sha256:v1 digest of the target's state at
	// preflight; empty for an additive action.
	Digest string
	// Credential is Digest's alias in the pool; empty for an additive action.
	Credential string
	// RequestID is the id the preflight issued.
	RequestID string
	IssuedAt  time.Time
	ExpiresAt time.Time
}

// Additive reports whether the lease has no state digest.
func (l Lease) Additive() bool { return l.Digest == "" }

// LeasePool holds the preflight leases of one process, in memory only: a
// restart drops every lease, and a credential from a previous process then
// resolves to nothing (ErrLeaseInvalid).
//
// A lease lives [LeaseTTL]. At most [MaxLeasesPerScope] live leases exist per
// scope and [MaxLeases] in all; a new lease evicts the oldest beyond either
// limit. A guarded preflight repeated for the same scope and the same state
// digest refreshes that one lease (new request id and expiry) instead of
// adding another. Additive leases are kept one per request id, since two
// identical additive calls are two legitimate writes.
//
// Leases are consumed explicitly with [LeasePool.Consume]: not by a failed
// comparison (state_changed) and not by a rejection before dispatch, but as
// soon as a write is dispatched, whatever its outcome (committed, no_change,
// outcome_unknown, readback_mismatch), since another write always needs a
// fresh preflight.
//
// Expired leases are dropped on every Put. All operations are linear in the
// number of live leases (at most 1024). A LeasePool is safe for concurrent
// use.
type LeasePool struct {
	aliases *AliasPool
	now     func() time.Time

	mu     sync.Mutex
	leases []*leaseEntry // oldest first
}

type leaseEntry struct {
	Lease
	key string
}

// NewLeasePool returns an empty pool resolving credentials through aliases.
// now is the clock (time.Now if nil).
func NewLeasePool(aliases *AliasPool, now func() time.Time) *LeasePool {
	if now == nil {
		now = time.Now
	}
	return &LeasePool{aliases: aliases, now: now}
}

// Put stores a lease and returns it as stored: targets normalised, the
// credential set to the digest's alias, IssuedAt set to now and ExpiresAt
// to now + [LeaseTTL]. A lease needs a request id, and either a full digest
// and a precondition field (guarded) or neither (additive).
func (p *LeasePool) Put(l Lease) (Lease, error) {
	if l.RequestID == "" {
		return Lease{}, errors.New("strict: a lease needs the request id its preflight issued")
	}
	if (l.Digest == "") != (l.Precondition == NoPrecondition) {
		return Lease{}, fmt.Errorf("strict: a lease has a digest exactly when it has a precondition field (digest %q, field %q)", l.Digest, l.Precondition)
	}
	now := p.now()
	l.Scope = NewScope(l.Tool, l.Action, l.ArgsDigest, l.Targets)
	l.Credential = ""
	if l.Digest != "" {
		if l.Credential = p.aliases.Alias(l.Digest); l.Credential == "" {
			return Lease{}, fmt.Errorf("strict: lease digest %q is not a full sha256:v1 digest", l.Digest)
		}
	}
	l.IssuedAt = now
	l.ExpiresAt = now.Add(LeaseTTL)
	key := l.Scope.Key()

	p.mu.Lock()
	defer p.mu.Unlock()
	p.pruneLocked(now)
	if l.Digest != "" {
		p.leases = slices.DeleteFunc(p.leases, func(e *leaseEntry) bool { return e.key == key && e.Digest == l.Digest })
	}
	p.leases = append(p.leases, &leaseEntry{Lease: l, key: key})
	inScope := 0
	for _, e := range p.leases {
		if e.key == key {
			inScope++
		}
	}
	for i := 0; inScope > MaxLeasesPerScope; i++ { // oldest of the scope first
		if p.leases[i].key == key {
			p.leases = slices.Delete(p.leases, i, i+1)
			inScope--
			i--
		}
	}
	if n := len(p.leases) - MaxLeases; n > 0 {
		p.leases = slices.Delete(p.leases, 0, n)
	}
	return l, nil
}

func (p *LeasePool) pruneLocked(now time.Time) {
	p.leases = slices.DeleteFunc(p.leases, func(e *leaseEntry) bool { return !now.Before(e.ExpiresAt) })
}

// Take finds the live lease for a guarded write: it resolves the credential
// through the alias pool to a full digest (exactly, never by prefix) and
// returns the lease in exactly this scope holding that digest. It does not
// consume the lease. Its only error is [ErrLeaseInvalid]. A 64-digit
// credential is no shortcut: it too must match a live lease.
func (p *LeasePool) Take(scope Scope, credential Credential, now time.Time) (Lease, error) {
	digest, ok := p.aliases.Resolve(credential)
	if !ok {
		return Lease{}, leaseInvalid(LeaseUnknownCredential, "credential %q names no hash issued by this process", credential)
	}
	key := scope.Key()
	p.mu.Lock()
	defer p.mu.Unlock()
	other := false
	for _, e := range p.leases {
		if e.Digest != digest {
			continue
		}
		if e.key != key {
			other = true
			continue
		}
		if !now.Before(e.ExpiresAt) {
			return Lease{}, leaseInvalid(LeaseExpired, "the lease expired at %s", e.ExpiresAt.UTC().Format(time.RFC3339))
		}
		return e.Lease, nil
	}
	if other {
		return Lease{}, leaseInvalid(LeaseOtherArguments, "the credential's lease is for another tool, action, arguments or targets")
	}
	return Lease{}, leaseInvalid(LeaseNone, "no live lease for this credential in this tool, action, arguments and targets")
}

// ForRequest finds the live additive lease a preflight issued with
// requestID, in exactly this scope. It does not consume the lease.
func (p *LeasePool) ForRequest(scope Scope, requestID string, now time.Time) (Lease, error) {
	key := scope.Key()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range p.leases {
		if e.RequestID == requestID && e.Digest == "" {
			if e.key != key {
				return Lease{}, leaseInvalid(LeaseOtherArguments, "request %s was preflighted for other arguments or targets", requestID)
			}
			if !now.Before(e.ExpiresAt) {
				return Lease{}, leaseInvalid(LeaseExpired, "the lease expired at %s", e.ExpiresAt.UTC().Format(time.RFC3339))
			}
			return e.Lease, nil
		}
	}
	return Lease{}, leaseInvalid(LeaseNone, "no live additive lease for request %s", requestID)
}

// Consume removes a lease returned by [LeasePool.Take] or
// [LeasePool.ForRequest], once its write is dispatched. It reports whether
// the lease was still there; a guarded lease refreshed by a repeated
// preflight in the meantime is the same lease and is removed too.
func (p *LeasePool) Consume(l Lease) bool {
	key := l.Scope.Key()
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.leases)
	p.leases = slices.DeleteFunc(p.leases, func(e *leaseEntry) bool {
		if e.key != key || e.Digest != l.Digest {
			return false
		}
		return l.Digest != "" || e.RequestID == l.RequestID
	})
	return len(p.leases) < n
}

// Len returns the number of leases held, live or expired but not yet pruned.
func (p *LeasePool) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.leases)
}
