package mcp

import (
	"encoding/json"
	"unicode/utf8"
)

// A message is validated once, as a whole (json.Valid), and its objects are
// then split without decoding: json.Unmarshal into map[string]json.RawMessage
// validated and decoded each level again (the message, its params, the
// call's arguments), and its reflection is most of what a small message
// costs to read. The splitter is held to json.Unmarshal's answer by a
// differential fuzz test (FuzzSplitObject).

// splitObject splits the JSON object data into its members' raw values by
// key, as json.Unmarshal into map[string]json.RawMessage does: keys
// unescaped, a later duplicate wins, each value its exact bytes. data must
// be valid JSON (checked by json.Valid, or a value taken from such a
// document); ok is false if it is not an object. The values share data's
// bytes (their capacity ends with them, so an append copies).
func splitObject(data []byte) (fields map[string]json.RawMessage, ok bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, false
	}
	fields = make(map[string]json.RawMessage, 4)
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return fields, skipSpace(data, i+1) == len(data)
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return nil, false
		}
		end := stringEnd(data, i)
		if end < 0 {
			return nil, false
		}
		key, ok := plainString(data[i:end])
		if !ok && json.Unmarshal(data[i:end], &key) != nil {
			return nil, false
		}
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return nil, false
		}
		i = skipSpace(data, i+1)
		vend := valueEnd(data, i)
		if vend <= i {
			return nil, false
		}
		fields[key] = json.RawMessage(data[i:vend:vend])
		i = skipSpace(data, vend)
		if i >= len(data) {
			return nil, false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return fields, skipSpace(data, i+1) == len(data)
		default:
			return nil, false
		}
	}
}

// stringValue reads the JSON string raw (a valid JSON value) as
// json.Unmarshal into a string does; ok is false for anything else.
func stringValue(raw []byte) (string, bool) {
	if s, ok := plainString(raw); ok {
		return s, true
	}
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// plainString is the content of a quoted string with no escapes and only
// ASCII (which reads as it is written); ok is false for any other string,
// which the caller decodes with encoding/json (escapes, and invalid UTF-8,
// which it replaces).
func plainString(q []byte) (string, bool) {
	if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
		return "", false
	}
	body := q[1 : len(q)-1]
	for _, c := range body {
		if c == '\\' || c == '"' || c < 0x20 || c >= utf8.RuneSelf {
			return "", false
		}
	}
	return string(body), true
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

// isString reports whether raw (a valid JSON value) is the string want,
// however it is escaped.
func isString(raw []byte, want string) bool {
	s, ok := stringValue(raw)
	return ok && s == want
}
