package canon

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
)

// Prefix starts every digest: the algorithm and the canonical-form version.
// A change to the canonical form must bump the version, never reuse it.
const Prefix = "sha256:v1:"

// DigestLen is the length of a formatted digest.
const DigestLen = len(Prefix) + 2*sha256.Size

// ErrMalformedDigest is wrapped by [ParseDigest] errors.
var ErrMalformedDigest = errors.New("canon: malformed digest")

// FormatDigest formats a SHA-256 sum as "sha256:v1:<64 lowercase hex>".
func FormatDigest(sum [sha256.Size]byte) string {
	var b [DigestLen]byte
	copy(b[:], Prefix)
	hex.Encode(b[len(Prefix):], sum[:])
	return string(b[:])
}

// ParseDigest parses a full digest in its only spelling,
// "sha256:v1:<64 lowercase hex>". Short credentials are not digests; see the
// strict package's alias pool for those.
func ParseDigest(s string) ([sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	if len(s) != DigestLen || s[:len(Prefix)] != Prefix {
		return sum, fmt.Errorf("%w: want %s followed by 64 lowercase hex digits", ErrMalformedDigest, Prefix)
	}
	h := s[len(Prefix):]
	for i := 0; i < len(h); i++ {
		if c := h[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return sum, fmt.Errorf("%w: byte %d is %q, not lowercase hex", ErrMalformedDigest, len(Prefix)+i, c)
		}
	}
	if _, err := hex.Decode(sum[:], []byte(h)); err != nil {
		return sum, fmt.Errorf("%w: %w", ErrMalformedDigest, err)
	}
	return sum, nil
}

// Digest returns the versioned digest of v's canonical form. It streams the
// canonical bytes into the hash through a bounded buffer.
func Digest(v any) (string, error) {
	h := sha256.New()
	if err := Encode(h, v); err != nil {
		return "", err
	}
	return sumOf(h), nil
}

// DigestJSON parses raw as JSON (numbers kept exact, see the package comment)
// and returns the digest of its canonical form. raw must hold exactly one JSON
// value, optionally surrounded by whitespace.
func DigestJSON(raw []byte) (string, error) {
	t, err := parse(raw)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	e := newStreamEncoder(h)
	if _, err := e.tapeValue(&t, 0, 0); err != nil {
		return "", err
	}
	if err := e.flush(); err != nil {
		return "", err
	}
	return sumOf(h), nil
}

// DigestBytes returns the versioned digest of raw bytes hashed as they are,
// for content that is not JSON (uploaded files, assets).
func DigestBytes(b []byte) string {
	return FormatDigest(sha256.Sum256(b))
}

// DigestReader is [DigestBytes] for a stream; it reads r to EOF.
func DigestReader(r io.Reader) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", fmt.Errorf("canon: hashing stream: %w", err)
	}
	return sumOf(h), nil
}

func sumOf(h interface{ Sum([]byte) []byte }) string {
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return FormatDigest(sum)
}
