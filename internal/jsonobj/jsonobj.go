// Package jsonobj reads the members of a JSON object without decoding them.
//
// A document is validated once, whole (json.Valid, or json.Unmarshal's own
// check), and its objects are then split by plain byte scans: decoding
// each level with json.Unmarshal into map[string]json.RawMessage validated
// and decoded it again (an MCP message, its params, a call's arguments),
// and its reflection is most of what a small message costs to read. Split
// is held to json.Unmarshal's answer by a differential fuzz test.
package jsonobj

import (
	"encoding/json"
	"unicode/utf8"
)

// Members calls fn with the raw key (quotes and escapes included) and the
// raw value of each member of the JSON object data, in order, until fn
// returns false. It reports whether data is an object it read to the end.
// On valid JSON the spans are exact; on anything else Members never panics,
// but what it reports is meaningless: validate first, or let a later
// decoding reject what it let through.
func Members(data []byte, fn func(key, value []byte) bool) bool {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return skipSpace(data, i+1) == len(data)
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return false
		}
		kend := stringEnd(data, i)
		if kend < 0 {
			return false
		}
		key := data[i:kend]
		i = skipSpace(data, kend)
		if i >= len(data) || data[i] != ':' {
			return false
		}
		i = skipSpace(data, i+1)
		vend := valueEnd(data, i)
		if vend <= i {
			return false
		}
		if !fn(key, data[i:vend:vend]) {
			return false
		}
		i = skipSpace(data, vend)
		if i >= len(data) {
			return false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return skipSpace(data, i+1) == len(data)
		default:
			return false
		}
	}
}

// Split splits the JSON object data into its members' raw values by key, as
// json.Unmarshal into map[string]json.RawMessage does: keys unescaped, a
// later duplicate wins, each value its exact bytes. data must be valid JSON
// (checked by json.Valid, or a value taken from such a document); ok is
// false if it is not an object. The values share data's bytes (their
// capacity ends with them, so an append copies).
func Split(data []byte) (fields map[string]json.RawMessage, ok bool) {
	fields = make(map[string]json.RawMessage, 4)
	ok = Members(data, func(k, v []byte) bool {
		key, ok := String(k)
		if ok {
			fields[key] = json.RawMessage(v)
		}
		return ok
	})
	if !ok {
		return nil, false
	}
	return fields, true
}

// String reads the JSON string raw as json.Unmarshal into a string does;
// ok is false for anything else. A string without escapes (any valid
// UTF-8: a note's text, most often not ASCII) reads as it is written;
// only one with escapes or invalid UTF-8 goes through encoding/json.
func String(raw []byte) (string, bool) {
	if s, ok := unescaped(raw); ok {
		return s, true
	}
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// IsString reports whether raw (a valid JSON value) is the string want,
// however it is escaped.
func IsString(raw []byte, want string) bool {
	s, ok := String(raw)
	return ok && s == want
}

// Plain is the content of a quoted string with no escapes and only ASCII
// (which reads as it is written); ok is false for any other string, which
// the caller decodes with encoding/json (escapes, and invalid UTF-8, which
// it replaces).
func Plain(q []byte) (string, bool) {
	body, ascii, ok := quoted(q)
	if !ok || !ascii {
		return "", false
	}
	return string(body), true
}

// unescaped is Plain extended to valid UTF-8, which encoding/json reads as
// it is written too (it replaces only invalid UTF-8).
func unescaped(q []byte) (string, bool) {
	body, ascii, ok := quoted(q)
	if !ok || !ascii && !utf8.Valid(body) {
		return "", false
	}
	return string(body), true
}

// quoted is the content of a quoted string with no escapes and no control
// characters (ok), and whether it is all ASCII.
func quoted(q []byte) (body []byte, ascii, ok bool) {
	if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
		return nil, false, false
	}
	body, ascii = q[1:len(q)-1], true
	for _, c := range body {
		if c == '\\' || c == '"' || c < 0x20 {
			return nil, false, false
		}
		ascii = ascii && c < utf8.RuneSelf
	}
	return body, ascii, true
}

func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// stringEnd is the index just past the string that starts at data[i] (a
// quote), or -1 if it does not end.
func stringEnd(data []byte, i int) int {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++ // the escaped byte; \uXXXX's digits hold no quote
		case '"':
			return j + 1
		}
	}
	return -1
}

// valueEnd is the index just past the value that starts at data[i], or -1.
func valueEnd(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		return stringEnd(data, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				end := stringEnd(data, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	// A number or a literal: up to the next delimiter.
	j := i
	for j < len(data) {
		switch data[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j
		}
		j++
	}
	return j
}
