package strict

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/sisyphus-go/sisyphus/internal/canon"
)

// MinAliasLen is the length of a new alias: four hex digits. It is a lookup
// key, not a 16-bit correctness check; writes always compare full digests.
const MinAliasLen = 4

// ErrMalformedCredential is wrapped by [ParseCredential] errors. The caller
// maps it to precondition_required.
var ErrMalformedCredential = errors.New("strict: malformed hash credential")

// Credential is a parsed hash credential: its 4 to 64 lowercase hex digits,
// without the "sha256:v1:" prefix. Get one from [ParseCredential], once, at
// the edge; the pools take it without parsing again.
type Credential string

// ParseCredential accepts a credential as an agent may submit it,
// "sha256:v1:<4-64 hex digits>" or bare "<4-64 hex digits>", in any letter
// case, and returns its hex digits in lowercase.
func ParseCredential(s string) (Credential, error) {
	h := s
	if len(h) >= len(canon.Prefix) && strings.EqualFold(h[:len(canon.Prefix)], canon.Prefix) {
		h = h[len(canon.Prefix):]
	}
	if len(h) < MinAliasLen || len(h) > 64 {
		return "", fmt.Errorf("%w: want 4 to 64 hex digits, optionally after %s", ErrMalformedCredential, canon.Prefix)
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return "", fmt.Errorf("%w: %q is not a hex digit", ErrMalformedCredential, c)
		}
	}
	return Credential(strings.ToLower(h)), nil
}

// AliasPool is the one short-hash pool of a process: preflight credentials
// and every hash a response shows (previousHash, resultHash, expectedHash,
// currentHash, ...) are aliases from it.
//
// An alias is the shortest prefix of a digest's hex digits, at least
// [MinAliasLen] long, not already held by another digest. The first digest
// with prefix "abcd" keeps "abcd" for as long as the process lives; a later
// digest sharing that prefix gets "abcd1" (its own fifth digit), and so on.
// Aliases are never reassigned or shortened, and a digest keeps the alias it
// got first. Resolution is by exact alias only, never by prefix search; a
// digest's complete 64 hex digits also resolve to it, but only once the pool
// has registered that digest.
//
// The pool only grows while the process lives; a restart starts a new, empty
// pool, so aliases are not identifiers across restarts. It stores digests
// and aliases only, never note content: about 200 bytes per distinct digest
// (the two map entries and the alias), so a process that shows a million
// distinct hashes holds about 200 MB. Knowing an alias authorises nothing;
// leases do (see [LeasePool]).
//
// An AliasPool is safe for concurrent use. The zero value is not usable; use
// [NewAliasPool].
type AliasPool struct {
	mu       sync.RWMutex
	byDigest map[[32]byte]string // digest → its alias
	byAlias  map[string][32]byte // alias → digest
}

// NewAliasPool returns an empty pool.
func NewAliasPool() *AliasPool {
	return &AliasPool{byDigest: make(map[[32]byte]string), byAlias: make(map[string][32]byte)}
}

// Alias returns the alias of a full digest ("sha256:v1:<64 lowercase hex>"),
// registering one if the digest has none yet. It returns "" for a string
// that is not a full digest; callers pass only digests from package canon.
func (p *AliasPool) Alias(digest string) string {
	sum, err := canon.ParseDigest(digest)
	if err != nil {
		return ""
	}
	p.mu.RLock()
	a, ok := p.byDigest[sum]
	p.mu.RUnlock()
	if ok {
		return a
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if a, ok := p.byDigest[sum]; ok {
		return a
	}
	hex := digest[len(canon.Prefix):]
	// An alias is a prefix of its own digest, so the full 64 digits can
	// only be held by this digest: the loop always ends with an alias.
	for n := MinAliasLen; ; n++ {
		if _, taken := p.byAlias[hex[:n]]; taken {
			continue
		}
		a := strings.Clone(hex[:n])
		p.byAlias[a] = sum
		p.byDigest[sum] = a
		return a
	}
}

// Resolve returns the full digest a credential names: the digest whose
// alias is exactly the credential's hex digits, or, for 64 digits, that
// digest itself if the pool has registered it. The credential may carry the
// A prefix of an alias, or an alias extended by more digits, does not
// resolve.
func (p *AliasPool) Resolve(c Credential) (digest string, ok bool) {
	h := string(c)
	p.mu.RLock()
	defer p.mu.RUnlock()
	if len(h) == 64 {
		full := canon.Prefix + h
		sum, err := canon.ParseDigest(full)
		if err != nil {
			return "", false
		}
		if _, ok := p.byDigest[sum]; ok {
			return full, true
		}
		return "", false
	}
	sum, ok := p.byAlias[h]
	if !ok {
		return "", false
	}
	return canon.FormatDigest(sum), true
}

// Len returns the number of registered digests.
func (p *AliasPool) Len() int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return len(p.byDigest)
}
