package canon

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
)

// MaxDepth bounds the nesting of arrays and objects.
const MaxDepth = 10000

// ErrTooDeep is returned for values nested deeper than [MaxDepth] (including
// self-referencing maps and slices).
var ErrTooDeep = errors.New("canon: value nested too deeply")

// flushAt is the buffered size at which a streaming encoder writes out.
const flushAt = 32 << 10

// Append appends the canonical JSON form of v to dst and returns the extended
// buffer. On error dst is returned unchanged in length.
func Append(dst []byte, v any) ([]byte, error) {
	e := encoder{buf: dst}
	if err := e.value(v, 0); err != nil {
		return dst, err
	}
	return e.buf, nil
}

// Encode writes the canonical JSON form of v to w, in chunks of about 32 KiB,
// never holding the whole output. On error some output may have been written.
func Encode(w io.Writer, v any) error {
	e := newStreamEncoder(w)
	if err := e.value(v, 0); err != nil {
		return err
	}
	return e.flush()
}

// encoder accumulates canonical bytes in buf and, when w is set, writes them
// out whenever buf reaches flushAt.
type encoder struct {
	buf []byte
	w   io.Writer
	// keys and members are stacks of scratch space for sorting object
	// members; each object uses the segment above its parent's.
	keys    []string
	members []uint32
}

func newStreamEncoder(w io.Writer) *encoder {
	return &encoder{buf: make([]byte, 0, 4096), w: w}
}

func (e *encoder) maybeFlush() error {
	if e.w != nil && len(e.buf) >= flushAt {
		return e.flush()
	}
	return nil
}

func (e *encoder) flush() error {
	if e.w == nil || len(e.buf) == 0 {
		return nil
	}
	_, err := e.w.Write(e.buf)
	e.buf = e.buf[:0]
	if err != nil {
		return fmt.Errorf("canon: writing canonical JSON: %w", err)
	}
	return nil
}

func (e *encoder) value(v any, depth int) error {
	var err error
	switch x := v.(type) {
	case nil:
		e.buf = append(e.buf, "null"...)
	case string:
		e.buf, err = appendString(e.buf, x)
	case bool:
		if x {
			e.buf = append(e.buf, "true"...)
		} else {
			e.buf = append(e.buf, "false"...)
		}
	case map[string]any:
		return e.mapAny(x, depth)
	case []any:
		return e.sliceAny(x, depth)
	case float64:
		e.buf, err = appendFloat(e.buf, x)
	case json.Number:
		e.buf, err = appendNumberLiteral(e.buf, string(x), scanNumber(string(x)))
	case json.RawMessage:
		return e.raw(x, depth)
	case int:
		e.buf, err = appendInt64(e.buf, int64(x))
	case int64:
		e.buf, err = appendInt64(e.buf, x)
	case int32:
		e.buf, err = appendInt64(e.buf, int64(x))
	case int16:
		e.buf, err = appendInt64(e.buf, int64(x))
	case int8:
		e.buf, err = appendInt64(e.buf, int64(x))
	case uint:
		e.buf, err = appendUint64(e.buf, uint64(x))
	case uint64:
		e.buf, err = appendUint64(e.buf, x)
	case uint32:
		e.buf, err = appendUint64(e.buf, uint64(x))
	case uint16:
		e.buf, err = appendUint64(e.buf, uint64(x))
	case uint8:
		e.buf, err = appendUint64(e.buf, uint64(x))
	case float32:
		e.buf, err = appendFloat32(e.buf, x)
	case []string:
		err = array(e, x, depth, func(s string) (err error) {
			if e.buf, err = appendString(e.buf, s); err != nil {
				return err
			}
			return e.maybeFlush()
		})
	case map[string]string:
		if x == nil {
			e.buf = append(e.buf, "null"...)
			return nil
		}
		m := make(map[string]any, len(x))
		for k, s := range x {
			m[k] = s
		}
		return e.mapAny(m, depth)
	case []map[string]any:
		err = array(e, x, depth, func(m map[string]any) error { return e.mapAny(m, depth+1) })
	default:
		raw, merr := json.Marshal(v)
		if merr != nil {
			return fmt.Errorf("canon: marshalling %T: %w", v, merr)
		}
		return e.raw(raw, depth)
	}
	if err != nil {
		return err
	}
	return e.maybeFlush()
}

func (e *encoder) mapAny(m map[string]any, depth int) error {
	if m == nil {
		e.buf = append(e.buf, "null"...)
		return nil
	}
	if depth >= MaxDepth {
		return ErrTooDeep
	}
	base := len(e.keys)
	for k := range m {
		e.keys = append(e.keys, k)
	}
	slices.SortFunc(e.keys[base:], compareKeys[string])
	e.buf = append(e.buf, '{')
	for i := base; i < len(e.keys); i++ {
		k := e.keys[i]
		if i > base {
			e.buf = append(e.buf, ',')
		}
		var err error
		if e.buf, err = appendString(e.buf, k); err != nil {
			return err
		}
		e.buf = append(e.buf, ':')
		if err := e.value(m[k], depth+1); err != nil {
			return err
		}
	}
	e.buf = append(e.buf, '}')
	clear(e.keys[base:])
	e.keys = e.keys[:base]
	return e.maybeFlush()
}

func (e *encoder) sliceAny(s []any, depth int) error {
	if err := array(e, s, depth, func(v any) error { return e.value(v, depth+1) }); err != nil || s == nil {
		return err
	}
	return e.maybeFlush()
}

// array encodes a slice as a JSON array (nil as null), each element by
// each, refusing one deeper than MaxDepth.
func array[T any](e *encoder, s []T, depth int, each func(T) error) error {
	if s == nil {
		e.buf = append(e.buf, "null"...)
		return nil
	}
	if depth >= MaxDepth {
		return ErrTooDeep
	}
	e.buf = append(e.buf, '[')
	for i, v := range s {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		if err := each(v); err != nil {
			return err
		}
	}
	e.buf = append(e.buf, ']')
	return nil
}

// raw canonicalises embedded JSON text.
func (e *encoder) raw(raw []byte, depth int) error {
	if raw == nil { // encoding/json writes a nil RawMessage as null
		e.buf = append(e.buf, "null"...)
		return nil
	}
	t, err := parseDepth(raw, depth)
	if err != nil {
		return err
	}
	_, err = e.tapeValue(&t, 0, depth)
	return err
}
