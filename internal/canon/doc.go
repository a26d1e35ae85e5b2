// Package canon produces canonical JSON and the versioned digests Strict Safe
// Writes compares: "sha256:v1:" followed by the 64 lowercase hex digits of the
// SHA-256 of the canonical UTF-8 bytes.
//
// # Canonical form
//
// The canonical form is RFC 8785, the JSON Canonicalization Scheme (JCS):
//
//   - object members sorted by their keys compared as UTF-16 code units (so a
//     key with a non-BMP character such as U+1F600 sorts before one with
//     U+E000..U+FFFF, as in JavaScript), arrays kept in order;
//   - no insignificant whitespace;
//   - strings with the minimal JCS escaping: only '"', '\\' and U+0000..U+001F
//     are escaped (\b \t \n \f \r, otherwise \u00xx in lowercase hex); every
//     other character, including U+2028, U+2029 and DEL, is written literally
//     as UTF-8. Invalid UTF-8 and unpaired surrogate escapes are refused;
//   - numbers as IEEE-754 doubles serialised by the ECMAScript
//     Number.prototype.toString algorithm (RFC 8785 §3.2.2.3): shortest
//     round-tripping digits, plain notation for 1e-7 < |x| < 1e21, otherwise
//     "d.ddde±n"; -0 is written 0; NaN and ±Inf are refused;
//   - duplicate object keys in parsed JSON are refused (RFC 8785 requires
//     I-JSON input, and a digest must not depend on which duplicate wins).
//
// # Integers beyond 2^53
//
// JCS treats every number as a double, so 9007199254740993 and
// 9007199254740992 would canonicalise to the same text and two different
// states would share a digest. This package refuses that silently lossy case
// with [ErrUnsafeInteger]. A JSON number written as a plain integer (no
// fraction, no exponent) of magnitude above 2^53, a json.Number of that form,
// or a Go integer value of that magnitude, is accepted only if
//
//   - its exact value is a double (2^60 = 1152921504606846976 is accepted and,
//     as JSON.stringify does, written 1152921504606847000), or
//   - it already is the canonical spelling of a double (1152921504606847000
//     itself), so that canonical output always parses back to itself.
//
// Everything else is refused: 9007199254740993, or an int64 such as
// 1234567890123456789. The one ambiguity left is the pair above: the integers
// 1152921504606846976 and 1152921504606847000 share a canonical form, as they
// do in every JCS implementation. Between 2^53 and 2^63 about one integer in
// two hundred is exactly a double and about as many are such spellings; at or
// below 2^53 there is no ambiguity at all. A number written
// with a fraction or an exponent is a float by declaration and is rounded to
// the nearest double as RFC 8785 prescribes (333333333.33333329 becomes
// 333333333.3333333). Integers of magnitude at most 2^53 are always exact, so
// counters, sort values, sizes and millisecond timestamps are never affected.
// Callers that decode kernel replies themselves should use
// json.Decoder.UseNumber (or pass raw bytes to [DigestJSON]) so that a large
// integer is refused here rather than silently rounded by their decoder.
//
// # Go values
//
// [Append], [Encode] and [Digest] accept nil, bool, string, json.Number,
// json.RawMessage, every integer and float type, map[string]any, []any,
// map[string]string, []string and []map[string]any directly (the fast path);
// any other value (structs, pointers, typed maps and slices) is marshalled
// with encoding/json and the result canonicalised, so it follows
// encoding/json's rules (struct tags, []byte as base64, invalid UTF-8 replaced
// by U+FFFD). Nesting deeper than [MaxDepth] is refused, which also stops
// self-referencing maps.
//
// [Encode] and [Digest] write through a small buffer (at most a few tens of
// KiB beyond the input), never building the whole output. [DigestJSON] parses
// its input into a compact index (about 16 bytes per JSON value) before
// writing, because object members can only be emitted once sorted.
//
// Nothing in this package holds state between calls; every function is safe
// for concurrent use.
package canon
