package canon

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"unicode/utf8"
)

// ErrSyntax is wrapped by errors for input that is not JSON text.
var ErrSyntax = errors.New("canon: invalid JSON")

// ErrDuplicateKey is returned for an object with two members of the same key.
var ErrDuplicateKey = errors.New("canon: duplicate object key")

// kind is the type of a parsed JSON value.
type kind uint8

const (
	kNull kind = iota
	kFalse
	kTrue
	kNumber
	kString
	kArray
	kObject
)

// String node flags: a string is clean raw text (0), raw text with escapes
// (strEscaped), or an object key with escapes decoded into tape.dec
// (strDecoded).
const (
	strEscaped = 1
	strDecoded = 2
)

// node is one JSON value in a tape, in document order. Containers are
// followed by their children (objects: key, value, key, value, ...).
type node struct {
	kind kind
	// flag: for a string, 0, strEscaped or strDecoded;
	// for a number, its numberShape.
	flag uint8
	// For strings and numbers, the byte range in src (or in dec); for
	// containers, start is the number of elements or members and end is the
	// index of the first node after the subtree.
	start, end uint32
}

// tape is a parsed JSON text.
type tape struct {
	src   []byte
	dec   []byte // unescaped text of object keys that had escapes
	nodes []node
}

func (t *tape) text(i uint32) []byte {
	n := &t.nodes[i]
	if n.flag == strDecoded {
		return t.dec[n.start:n.end]
	}
	return t.src[n.start:n.end]
}

// skip returns the index of the node after the value at i.
func (t *tape) skip(i uint32) uint32 {
	if k := t.nodes[i].kind; k == kArray || k == kObject {
		return t.nodes[i].end
	}
	return i + 1
}

type parser struct {
	src []byte
	pos int
	t   tape
}

func parse(src []byte) (tape, error) { return parseDepth(src, 0) }

// parseDepth parses src as one JSON value nested depth levels deep already.
func parseDepth(src []byte, depth int) (tape, error) {
	if uint64(len(src)) >= math.MaxUint32 {
		return tape{}, fmt.Errorf("%w: input of %d bytes is too large", ErrSyntax, len(src))
	}
	p := parser{src: src}
	p.t.src = src
	p.t.nodes = make([]node, 0, len(src)/24+4)
	p.skipWS()
	if err := p.value(depth); err != nil {
		return tape{}, err
	}
	p.skipWS()
	if p.pos != len(src) {
		return tape{}, p.errorf("unexpected data after the top-level value")
	}
	return p.t, nil
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("%w at byte %d: %s", ErrSyntax, p.pos, fmt.Sprintf(format, args...))
}

func (p *parser) skipWS() {
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) error {
	if p.pos >= len(p.src) {
		return p.errorf("unexpected end of input")
	}
	switch c := p.src[p.pos]; c {
	case '{':
		return p.object(depth)
	case '[':
		return p.array(depth)
	case '"':
		return p.str(false)
	case 't':
		return p.literal("true", kTrue)
	case 'f':
		return p.literal("false", kFalse)
	case 'n':
		return p.literal("null", kNull)
	default:
		if c == '-' || '0' <= c && c <= '9' {
			return p.number()
		}
		return p.errorf("unexpected character %q", c)
	}
}

func (p *parser) literal(word string, k kind) error {
	if len(p.src)-p.pos < len(word) || string(p.src[p.pos:p.pos+len(word)]) != word {
		return p.errorf("invalid literal, want %s", word)
	}
	p.pos += len(word)
	p.t.nodes = append(p.t.nodes, node{kind: k})
	return nil
}

func (p *parser) number() error {
	start := p.pos
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if '0' <= c && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
			p.pos++
			continue
		}
		break
	}
	shape := scanNumber(p.src[start:p.pos])
	if shape == shapeInvalid {
		p.pos = start
		return p.errorf("malformed number")
	}
	p.t.nodes = append(p.t.nodes, node{kind: kNumber, flag: uint8(shape), start: uint32(start), end: uint32(p.pos)})
	return nil
}

// str parses a string. A key with escapes is decoded into tape.dec, since
// keys are compared when sorting; any other string with escapes stays raw
// and is rewritten to canonical escaping when written out.
func (p *parser) str(key bool) error {
	start := p.pos + 1
	n, high := cleanPrefixBytes(p.src[start:])
	i := start + n
	if i >= len(p.src) {
		return p.errorf("unterminated string")
	}
	switch c := p.src[i]; {
	case c == '"':
		if high && !utf8.Valid(p.src[start:i]) {
			return fmt.Errorf("%w at byte %d", ErrInvalidString, start)
		}
		p.t.nodes = append(p.t.nodes, node{kind: kString, start: uint32(start), end: uint32(i)})
		p.pos = i + 1
		return nil
	case c == '\\':
		return p.escapedStr(start, i, high, key)
	default:
		p.pos = i
		return p.errorf("control character %#02x in string", c)
	}
}

// escapedStr parses a string with escapes; src[start:i] is its clean prefix
// and src[i] is the first backslash.
func (p *parser) escapedStr(start, i int, high, key bool) error {
	d0 := len(p.t.dec)
	if key {
		p.t.dec = append(p.t.dec, p.src[start:i]...)
	}
	for {
		if i >= len(p.src) {
			p.pos = i
			return p.errorf("unterminated string")
		}
		switch c := p.src[i]; {
		case c == '"':
			node := node{kind: kString, flag: strEscaped, start: uint32(start), end: uint32(i)}
			if key {
				node.flag, node.start, node.end = strDecoded, uint32(d0), uint32(len(p.t.dec))
			}
			// Escapes decode to whole UTF-8 sequences, so the raw
			// text is valid exactly when its unescaped runs are.
			if high && !utf8.Valid(p.src[start:i]) {
				return fmt.Errorf("%w at byte %d", ErrInvalidString, start)
			}
			p.t.nodes = append(p.t.nodes, node)
			p.pos = i + 1
			return nil
		case c == '\\':
			r, n, err := decodeEscape(p.src, i)
			if err != nil {
				p.pos = i
				return err
			}
			if key {
				p.t.dec = utf8.AppendRune(p.t.dec, r)
			}
			i += n
		case c < 0x20:
			p.pos = i
			return p.errorf("control character %#02x in string", c)
		default:
			n, h := cleanPrefixBytes(p.src[i:])
			if key {
				p.t.dec = append(p.t.dec, p.src[i:i+n]...)
			}
			high = high || h
			i += n
		}
	}
}

// decodeEscape decodes the escape sequence at src[i] (a backslash), a
// surrogate pair counting as one, and returns the rune and the length.
func decodeEscape(src []byte, i int) (rune, int, error) {
	if i+1 >= len(src) {
		return 0, 0, fmt.Errorf("%w at byte %d: unterminated escape", ErrSyntax, i)
	}
	switch src[i+1] {
	case '"':
		return '"', 2, nil
	case '\\':
		return '\\', 2, nil
	case '/':
		return '/', 2, nil
	case 'b':
		return '\b', 2, nil
	case 'f':
		return '\f', 2, nil
	case 'n':
		return '\n', 2, nil
	case 'r':
		return '\r', 2, nil
	case 't':
		return '\t', 2, nil
	case 'u':
		r, ok := hex4(src, i+2)
		if !ok {
			return 0, 0, fmt.Errorf("%w at byte %d: malformed \\u escape", ErrSyntax, i)
		}
		switch {
		case 0xd800 <= r && r < 0xdc00:
			lo, ok := rune(0), false
			if i+7 < len(src) && src[i+6] == '\\' && src[i+7] == 'u' {
				lo, ok = hex4(src, i+8)
			}
			if !ok || lo < 0xdc00 || lo > 0xdfff {
				return 0, 0, fmt.Errorf("%w: unpaired surrogate escape at byte %d", ErrInvalidString, i)
			}
			return 0x10000 + (r-0xd800)<<10 + (lo - 0xdc00), 12, nil
		case 0xdc00 <= r && r <= 0xdfff:
			return 0, 0, fmt.Errorf("%w: unpaired surrogate escape at byte %d", ErrInvalidString, i)
		}
		return r, 6, nil
	}
	return 0, 0, fmt.Errorf("%w at byte %d: invalid escape \\%c", ErrSyntax, i, src[i+1])
}

// appendReescaped appends the canonical escaping of raw string text that
// the parser has validated: each escape is replaced by its character, which
// is then escaped again only if JCS escapes it.
func appendReescaped(dst []byte, raw []byte) []byte {
	for len(raw) > 0 {
		n, _ := cleanPrefixBytes(raw)
		dst = append(dst, raw[:n]...)
		if n == len(raw) {
			break
		}
		r, size, _ := decodeEscape(raw, n)
		if r < utf8.RuneSelf && needsEscape[r] {
			dst = appendEscapeByte(dst, byte(r))
		} else {
			dst = utf8.AppendRune(dst, r)
		}
		raw = raw[n+size:]
	}
	return dst
}

func hex4(src []byte, i int) (rune, bool) {
	if i+4 > len(src) {
		return 0, false
	}
	var r rune
	for _, c := range src[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

func (p *parser) array(depth int) error {
	if depth >= MaxDepth {
		return ErrTooDeep
	}
	idx := len(p.t.nodes)
	p.t.nodes = append(p.t.nodes, node{kind: kArray})
	p.pos++
	p.skipWS()
	count := uint32(0)
	if p.pos < len(p.src) && p.src[p.pos] == ']' {
		p.pos++
	} else {
		for {
			if err := p.value(depth + 1); err != nil {
				return err
			}
			count++
			p.skipWS()
			if p.pos >= len(p.src) {
				return p.errorf("unterminated array")
			}
			if c := p.src[p.pos]; c == ',' {
				p.pos++
				p.skipWS()
				continue
			} else if c == ']' {
				p.pos++
				break
			}
			return p.errorf("want ',' or ']' in array")
		}
	}
	p.t.nodes[idx].start = count
	p.t.nodes[idx].end = uint32(len(p.t.nodes))
	return nil
}

func (p *parser) object(depth int) error {
	if depth >= MaxDepth {
		return ErrTooDeep
	}
	idx := len(p.t.nodes)
	p.t.nodes = append(p.t.nodes, node{kind: kObject})
	p.pos++
	p.skipWS()
	count := uint32(0)
	if p.pos < len(p.src) && p.src[p.pos] == '}' {
		p.pos++
	} else {
		for {
			if p.pos >= len(p.src) || p.src[p.pos] != '"' {
				return p.errorf("want a string key in object")
			}
			if err := p.str(true); err != nil {
				return err
			}
			p.skipWS()
			if p.pos >= len(p.src) || p.src[p.pos] != ':' {
				return p.errorf("want ':' after object key")
			}
			p.pos++
			p.skipWS()
			if err := p.value(depth + 1); err != nil {
				return err
			}
			count++
			p.skipWS()
			if p.pos >= len(p.src) {
				return p.errorf("unterminated object")
			}
			if c := p.src[p.pos]; c == ',' {
				p.pos++
				p.skipWS()
				continue
			} else if c == '}' {
				p.pos++
				break
			}
			return p.errorf("want ',' or '}' in object")
		}
	}
	p.t.nodes[idx].start = count
	p.t.nodes[idx].end = uint32(len(p.t.nodes))
	return nil
}

// tapeValue writes the canonical form of the value at node i and returns the
// index of the node after it.
func (e *encoder) tapeValue(t *tape, i uint32, depth int) (uint32, error) {
	n := t.nodes[i]
	var err error
	switch n.kind {
	case kNull:
		e.buf = append(e.buf, "null"...)
	case kFalse:
		e.buf = append(e.buf, "false"...)
	case kTrue:
		e.buf = append(e.buf, "true"...)
	case kNumber:
		e.buf, err = appendNumberLiteral(e.buf, t.src[n.start:n.end], numberShape(n.flag))
	case kString:
		e.tapeString(t, i)
	case kArray:
		e.buf = append(e.buf, '[')
		j := i + 1
		for c := uint32(0); c < n.start; c++ {
			if c > 0 {
				e.buf = append(e.buf, ',')
			}
			if j, err = e.tapeValue(t, j, depth+1); err != nil {
				return 0, err
			}
		}
		e.buf = append(e.buf, ']')
		return n.end, e.maybeFlush()
	case kObject:
		return n.end, e.tapeObject(t, i, depth)
	}
	if err != nil {
		return 0, err
	}
	return i + 1, e.maybeFlush()
}

func (e *encoder) tapeString(t *tape, i uint32) {
	n := &t.nodes[i]
	e.buf = append(e.buf, '"')
	switch n.flag {
	case strDecoded:
		e.buf = appendEscapedBytes(e.buf, t.dec[n.start:n.end])
	case strEscaped:
		e.buf = appendReescaped(e.buf, t.src[n.start:n.end])
	default:
		// Raw text without escapes holds no '"', '\\' or control
		// character: it is already canonical.
		e.buf = append(e.buf, t.src[n.start:n.end]...)
	}
	e.buf = append(e.buf, '"')
}

func (e *encoder) tapeObject(t *tape, i uint32, depth int) error {
	n := t.nodes[i]
	base := len(e.members)
	j := i + 1
	for c := uint32(0); c < n.start; c++ {
		e.members = append(e.members, j)
		j = t.skip(j + 1)
	}
	mem := e.members[base:]
	if len(mem) > 1 {
		slices.SortFunc(mem, func(a, b uint32) int { return compareKeys(t.text(a), t.text(b)) })
		for k := 1; k < len(mem); k++ {
			if string(t.text(mem[k-1])) == string(t.text(mem[k])) {
				return fmt.Errorf("%w: %.40q", ErrDuplicateKey, t.text(mem[k]))
			}
		}
	}
	e.buf = append(e.buf, '{')
	for k, key := range mem {
		if k > 0 {
			e.buf = append(e.buf, ',')
		}
		e.tapeString(t, key)
		e.buf = append(e.buf, ':')
		if _, err := e.tapeValue(t, key+1, depth+1); err != nil {
			return err
		}
	}
	e.buf = append(e.buf, '}')
	e.members = e.members[:base]
	return e.maybeFlush()
}
