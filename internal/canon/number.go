package canon

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// ErrUnsafeInteger is returned for an integer whose exact value is not a
// double (see the package comment): canonicalising it would silently merge it
// with a neighbour.
var ErrUnsafeInteger = errors.New("canon: integer is not exactly representable as a double")

// ErrNumber is returned for NaN, ±Inf, a number literal out of the double
// range, or a malformed number literal.
var ErrNumber = errors.New("canon: number cannot be canonicalised")

// maxExactInt is 2^53: every integer of at most this magnitude is a double.
const maxExactInt = 1 << 53

// appendFloat appends the ECMAScript Number.prototype.toString spelling of f
// (RFC 8785 §3.2.2.3).
func appendFloat(dst []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst, fmt.Errorf("%w: %v", ErrNumber, f)
	}
	if f == 0 { // also -0
		return append(dst, '0'), nil
	}
	// Integers up to 2^53: the shortest digits are the integer's own digits,
	// and ECMAScript writes integers below 1e21 without an exponent.
	if f == math.Trunc(f) && math.Abs(f) <= maxExactInt {
		return strconv.AppendInt(dst, int64(f), 10), nil
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	// Shortest round-tripping digits, closest to f, as "d.ddde±xx".
	var tmp [32]byte
	b := strconv.AppendFloat(tmp[:0], f, 'e', -1, 64)
	var digits [20]byte
	k := 0
	i := 0
	for ; i < len(b) && b[i] != 'e'; i++ {
		if b[i] != '.' {
			digits[k] = b[i]
			k++
		}
	}
	exp, err := strconv.Atoi(string(b[i+1:]))
	if err != nil { // cannot happen: strconv wrote the exponent
		return dst, fmt.Errorf("%w: %w", ErrNumber, err)
	}
	// ECMAScript's n: the value is 0.d1d2...dk × 10^n.
	n := exp + 1
	s := digits[:k]
	switch {
	case k <= n && n <= 21:
		dst = append(dst, s...)
		for j := 0; j < n-k; j++ {
			dst = append(dst, '0')
		}
	case 0 < n && n <= 21:
		dst = append(dst, s[:n]...)
		dst = append(dst, '.')
		dst = append(dst, s[n:]...)
	case -6 < n && n <= 0:
		dst = append(dst, '0', '.')
		for j := 0; j < -n; j++ {
			dst = append(dst, '0')
		}
		dst = append(dst, s...)
	default:
		dst = append(dst, s[0])
		if k > 1 {
			dst = append(dst, '.')
			dst = append(dst, s[1:]...)
		}
		dst = append(dst, 'e')
		if n-1 >= 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, int64(n-1), 10)
	}
	return dst, nil
}

// appendFloat32 appends a float32 as encoding/json writes it (its shortest
// float32 digits), read back as a double, so that a float32 and its JSON text
// canonicalise alike: float32(0.1) is 0.1, not 0.10000000149011612.
func appendFloat32(dst []byte, f float32) ([]byte, error) {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return dst, fmt.Errorf("%w: %v", ErrNumber, f)
	}
	var tmp [32]byte
	d, err := strconv.ParseFloat(string(strconv.AppendFloat(tmp[:0], float64(f), 'g', -1, 32)), 64)
	if err != nil { // cannot happen for a finite float32
		return dst, fmt.Errorf("%w: %w", ErrNumber, err)
	}
	return appendFloat(dst, d)
}

// appendInt64 appends a Go integer. Beyond 2^53 it follows exactly the rule
// for a plain integer literal (see appendNumberLiteral), so a Go integer and
// its JSON text always canonicalise alike.
func appendInt64(dst []byte, v int64) ([]byte, error) {
	if v >= -maxExactInt && v <= maxExactInt {
		return strconv.AppendInt(dst, v, 10), nil
	}
	var tmp [24]byte
	return appendNumberLiteral(dst, strconv.AppendInt(tmp[:0], v, 10), shapeLongInt)
}

func appendUint64(dst []byte, v uint64) ([]byte, error) {
	if v <= maxExactInt {
		return strconv.AppendUint(dst, v, 10), nil
	}
	var tmp [24]byte
	return appendNumberLiteral(dst, strconv.AppendUint(tmp[:0], v, 10), shapeLongInt)
}

// numberShape classifies a JSON number literal.
type numberShape uint8

const (
	shapeInvalid  numberShape = iota
	shapeShortInt             // plain integer of at most 15 digits: already canonical (but "-0")
	shapeLongInt              // plain integer of 16 or more digits
	shapeFloat                // has a fraction or an exponent
)

// scanNumber checks lit against the JSON number grammar and classifies it.
func scanNumber[T string | []byte](lit T) numberShape {
	i := 0
	if i < len(lit) && lit[i] == '-' {
		i++
	}
	start := i
	switch {
	case i < len(lit) && lit[i] == '0':
		i++
	case i < len(lit) && '1' <= lit[i] && lit[i] <= '9':
		for i < len(lit) && '0' <= lit[i] && lit[i] <= '9' {
			i++
		}
	default:
		return shapeInvalid
	}
	intDigits := i - start
	float := false
	if i < len(lit) && lit[i] == '.' {
		float = true
		i++
		d := i
		for i < len(lit) && '0' <= lit[i] && lit[i] <= '9' {
			i++
		}
		if i == d {
			return shapeInvalid
		}
	}
	if i < len(lit) && (lit[i] == 'e' || lit[i] == 'E') {
		float = true
		i++
		if i < len(lit) && (lit[i] == '+' || lit[i] == '-') {
			i++
		}
		d := i
		for i < len(lit) && '0' <= lit[i] && lit[i] <= '9' {
			i++
		}
		if i == d {
			return shapeInvalid
		}
	}
	switch {
	case i != len(lit):
		return shapeInvalid
	case float:
		return shapeFloat
	case intDigits <= 15:
		return shapeShortInt
	default:
		return shapeLongInt
	}
}

// appendNumberLiteral appends the canonical spelling of a JSON number literal
// whose shape was computed by scanNumber.
func appendNumberLiteral[T string | []byte](dst []byte, lit T, shape numberShape) ([]byte, error) {
	switch shape {
	case shapeShortInt:
		if len(lit) == 2 && lit[0] == '-' && lit[1] == '0' {
			return append(dst, '0'), nil
		}
		return append(dst, lit...), nil
	case shapeLongInt:
		f, err := strconv.ParseFloat(string(lit), 64)
		if err != nil {
			return dst, fmt.Errorf("%w: %s", ErrUnsafeInteger, lit)
		}
		// Accept the literal if it is exactly the double f, or if it is
		// already f's canonical spelling (a fixed point: canonical output
		// must parse back to itself). Refuse any other integer: JCS would
		// silently turn it into a different integer.
		var tmp [400]byte
		exact := strconv.AppendFloat(tmp[:0], math.Abs(f), 'f', 0, 64)
		digits := lit
		if digits[0] == '-' {
			digits = digits[1:]
		}
		n := len(dst)
		if dst, err = appendFloat(dst, f); err != nil {
			return dst[:n], err
		}
		if string(exact) != string(digits) && string(dst[n:]) != string(lit) {
			return dst[:n], fmt.Errorf("%w: %s", ErrUnsafeInteger, lit)
		}
		return dst, nil
	case shapeFloat:
		f, err := strconv.ParseFloat(string(lit), 64)
		if err != nil {
			return dst, fmt.Errorf("%w: %s is outside the double range", ErrNumber, lit)
		}
		return appendFloat(dst, f)
	}
	return dst, fmt.Errorf("%w: malformed number %q", ErrNumber, lit)
}
