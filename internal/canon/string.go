package canon

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"
)

// ErrInvalidString is returned for a string that is not valid Unicode text:
// invalid UTF-8, or an escape for an unpaired surrogate.
var ErrInvalidString = errors.New("canon: string is not valid UTF-8")

const hexDigits = "0123456789abcdef"

// needsEscape marks the bytes JCS escapes: '"', '\\' and U+0000..U+001F.
var needsEscape = [256]bool{
	'"': true, '\\': true,
	0x00: true, 0x01: true, 0x02: true, 0x03: true, 0x04: true, 0x05: true, 0x06: true, 0x07: true,
	0x08: true, 0x09: true, 0x0a: true, 0x0b: true, 0x0c: true, 0x0d: true, 0x0e: true, 0x0f: true,
	0x10: true, 0x11: true, 0x12: true, 0x13: true, 0x14: true, 0x15: true, 0x16: true, 0x17: true,
	0x18: true, 0x19: true, 0x1a: true, 0x1b: true, 0x1c: true, 0x1d: true, 0x1e: true, 0x1f: true,
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// specialBits has the high bit set in (at least) every byte of w that JCS
// escapes: < 0x20, '"' or '\\'. A byte >= 0x80 never sets it by itself;
// borrows can only add false positives next to a true one.
func specialBits(w uint64) uint64 {
	lt := (w - lsb*0x20) &^ w
	q := w ^ (lsb * '"')
	q = (q - lsb) &^ q
	bs := w ^ (lsb * '\\')
	bs = (bs - lsb) &^ bs
	return (lt | q | bs) & msb
}

func load64s(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// cleanPrefixString returns how many leading bytes of s need no escaping,
// and whether that prefix holds any byte >= 0x80. Such bytes count as clean
// here: UTF-8 validity is checked separately.
func cleanPrefixString(s string) (n int, high bool) {
	i := 0
	var hi uint64
	for ; i+8 <= len(s); i += 8 {
		w := load64s(s[i : i+8])
		if specialBits(w) != 0 {
			break
		}
		hi |= w
	}
	for ; i < len(s); i++ {
		if needsEscape[s[i]] {
			break
		}
		hi |= uint64(s[i])
	}
	return i, hi&msb != 0
}

// cleanPrefixBytes is cleanPrefixString for a byte slice; it also reports
// whether that prefix holds any byte >= 0x80.
func cleanPrefixBytes(b []byte) (n int, high bool) {
	i := 0
	var hi uint64
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		if specialBits(w) != 0 {
			break
		}
		hi |= w
	}
	for ; i < len(b); i++ {
		if needsEscape[b[i]] {
			break
		}
		hi |= uint64(b[i])
	}
	return i, hi&msb != 0
}

// asciiCleanPrefix returns how many leading bytes of s are ASCII needing no
// escaping: such text is canonical as it is.
func asciiCleanPrefix(s string) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := load64s(s[i : i+8])
		if w&msb != 0 || specialBits(w) != 0 {
			break
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c >= 0x80 || needsEscape[c] {
			return i
		}
	}
	return i
}

func appendEscapeByte(dst []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(dst, '\\', c)
	case '\b':
		return append(dst, '\\', 'b')
	case '\t':
		return append(dst, '\\', 't')
	case '\n':
		return append(dst, '\\', 'n')
	case '\f':
		return append(dst, '\\', 'f')
	case '\r':
		return append(dst, '\\', 'r')
	}
	return append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
}

// appendEscapedString appends s with JCS minimal escaping, without quotes,
// and reports whether s holds any byte >= 0x80 (whose UTF-8 validity the
// caller must check).
func appendEscapedString(dst []byte, s string) ([]byte, bool) {
	high := false
	for len(s) > 0 {
		n, h := cleanPrefixString(s)
		high = high || h
		dst = append(dst, s[:n]...)
		if n == len(s) {
			break
		}
		dst = appendEscapeByte(dst, s[n])
		s = s[n+1:]
	}
	return dst, high
}

// appendEscapedBytes is appendEscapedString for a byte slice.
func appendEscapedBytes(dst []byte, b []byte) []byte {
	for len(b) > 0 {
		n, _ := cleanPrefixBytes(b)
		dst = append(dst, b[:n]...)
		if n == len(b) {
			break
		}
		dst = appendEscapeByte(dst, b[n])
		b = b[n+1:]
	}
	return dst
}

// appendString appends the quoted canonical form of a Go string.
func appendString(dst []byte, s string) ([]byte, error) {
	n := asciiCleanPrefix(s)
	orig := len(dst)
	dst = slices.Grow(dst, len(s)+2)
	dst = append(dst, '"')
	dst = append(dst, s[:n]...)
	if n < len(s) {
		var high bool
		dst, high = appendEscapedString(dst, s[n:])
		if high && !utf8.ValidString(s[n:]) {
			return dst[:orig], fmt.Errorf("%w: %.40q", ErrInvalidString, s)
		}
	}
	return append(dst, '"'), nil
}

// compareKeys orders object keys by their UTF-16 code units, as RFC 8785
// requires. Byte order of UTF-8 is code point order; the two differ only
// when a supplementary character (UTF-16 surrogates D800..DBFF, UTF-8 lead
// byte F0..F4) meets a character in U+E000..U+FFFF (lead byte EE or EF).
// At the first differing byte the two strings are at the same offset within
// the same rune position, so comparing lead bytes is enough.
func compareKeys[T string | []byte](a, b T) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		ca, cb := a[i], b[i]
		if ca == cb {
			continue
		}
		if ca >= 0xee && cb >= 0xee && (ca >= 0xf0) != (cb >= 0xf0) {
			if ca >= 0xf0 {
				return -1
			}
			return 1
		}
		if ca < cb {
			return -1
		}
		return 1
	}
	return cmp.Compare(len(a), len(b))
}
