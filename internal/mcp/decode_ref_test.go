package mcp

import (
	"bytes"
	"encoding/json"
	"maps"
	"reflect"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/jsonobj"
)

func sameFields(a, b map[string]json.RawMessage) bool {
	return maps.EqualFunc(a, b, func(x, y json.RawMessage) bool { return bytes.Equal(x, y) })
}

// FuzzDecodeMessageMatchesReference holds decodeMessage to the decoder it
// replaced (json.Unmarshal at each level, kept below as the reference): the
// same message, echo and error for every input.
func FuzzDecodeMessageMatchesReference(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":"a","result":{}}`, `{"jsonrpc":"2.0","id":"a","error":{"code":1,"message":"m"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2\u002e0","id":1,"method":"\u0070ing"}`, `{"jsonrpc":"2.0","id":1,"method":null}`,
		`{"jsonrpc":2.0,"id":1,"method":"x"}`, `{"jsonrpc":"2.0","id":null,"method":"x"}`, `{"id":1,"method":"x"}`,
		`[1,2]`, `[`, `{}`, `null`, `"x"`, ` {"jsonrpc":"2.0","method":"x","params":null} `, "{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, echo, err := decodeMessage(data)
		rm, recho, rerr := decodeMessageRef(data)
		if !reflect.DeepEqual(echo, recho) || !reflect.DeepEqual(err, rerr) {
			t.Fatalf("%q: echo %v err %v; reference echo %v err %v", data, echo, err, recho, rerr)
		}
		if (m == nil) != (rm == nil) {
			t.Fatalf("%q: message %v, reference %v", data, m, rm)
		}
		if m == nil {
			return
		}
		if m.kind != rm.kind || m.id != rm.id || m.method != rm.method || !bytes.Equal(m.params, rm.params) ||
			!bytes.Equal(m.result, rm.result) || !reflect.DeepEqual(m.err, rm.err) {
			t.Fatalf("%q: %+v, reference %+v", data, m, rm)
		}
		p, perr := m.paramsObj()
		rp, rperr := paramsObjectRef(rm.params)
		if !reflect.DeepEqual(perr, rperr) || !sameFields(p, rp) {
			t.Fatalf("%q: params %q (%v), reference %q (%v)", data, p, perr, rp, rperr)
		}
	})
}

func paramsObjectRef(raw json.RawMessage) (map[string]json.RawMessage, *Error) {
	if len(raw) == 0 {
		return map[string]json.RawMessage{}, nil
	}
	if !isJSONObject(raw) {
		return nil, InvalidParamsError("params must be an object")
	}
	var p map[string]json.RawMessage
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, InvalidParamsError("params must be an object")
	}
	return p, nil
}

// decodeMessageRef is decodeMessage as it was before the splitter.
func decodeMessageRef(data []byte) (*message, ID, *Error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, ID{}, &Error{Code: CodeParseError, Message: "Parse error: empty message"}
	}
	// An object is checked by its decoding (which validates it whole
	// first); anything else only to tell a parse error from a bad message.
	if data[0] != '{' {
		if !json.Valid(data) {
			return nil, ID{}, &Error{Code: CodeParseError, Message: "Parse error: invalid JSON"}
		}
		if data[0] == '[' {
			return nil, ID{}, errInvalidRequest("Invalid request: batches are not supported")
		}
		return nil, ID{}, errInvalidRequest("Invalid request: message must be a JSON object")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, ID{}, &Error{Code: CodeParseError, Message: "Parse error: invalid JSON"}
	}
	m := &message{}
	var echo ID
	rawID, hasID := fields["id"]
	if hasID {
		if id, ok := parseID(rawID); ok {
			m.id, echo = id, id
		} else if !isJSONNull(rawID) {
			return nil, ID{}, errInvalidRequest("Invalid request: id must be a string or a number")
		}
	}
	var version string
	if v, ok := fields["jsonrpc"]; !ok || json.Unmarshal(v, &version) != nil || version != "2.0" {
		return nil, echo, errInvalidRequest(`Invalid request: jsonrpc must be "2.0"`)
	}
	if rawMethod, ok := fields["method"]; ok {
		if json.Unmarshal(rawMethod, &m.method) != nil || m.method == "" {
			return nil, echo, errInvalidRequest("Invalid request: method must be a non-empty string")
		}
		if p, ok := fields["params"]; ok && !isJSONNull(p) {
			m.params = p
		}
		switch {
		case !hasID:
			m.kind = kindNotification
		case m.id.IsZero():
			return nil, ID{}, errInvalidRequest("Invalid request: id must not be null")
		default:
			m.kind = kindRequest
		}
		return m, echo, nil
	}
	res, hasResult := fields["result"]
	rawErr, hasErr := fields["error"]
	if !hasID || hasResult == hasErr {
		return nil, echo, errInvalidRequest("Invalid request: not a request, notification or response")
	}
	m.kind = kindResponse
	if hasResult {
		m.result = res
	} else {
		var we wireError
		if json.Unmarshal(rawErr, &we) != nil {
			return nil, echo, errInvalidRequest("Invalid request: malformed error object")
		}
		m.err = &we
	}
	return m, echo, nil
}

// BenchmarkDecodeCall reads a tools/call as callTool does (the message, its
// params, the arguments), with the splitter and with the reference decoder.
func BenchmarkDecodeCall(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"block","arguments":{"action":"update","id":"20260812120000-abcdefg","data":"New content with **some** text","requestId":"b72f","expectedStateHash":"8ac2"},"_meta":{"progressToken":3}}}`)
	b.Run("split", func(b *testing.B) {
		for b.Loop() {
			m, _, err := decodeMessage(msg)
			if err != nil {
				b.Fatal(err)
			}
			p, _ := m.paramsObj()
			if _, ok := jsonobj.String(p["name"]); !ok {
				b.Fatal("name")
			}
			if _, ok := jsonobj.Split(p["arguments"]); !ok {
				b.Fatal("arguments")
			}
		}
	})
	b.Run("unmarshal", func(b *testing.B) {
		for b.Loop() {
			m, _, err := decodeMessageRef(msg)
			if err != nil {
				b.Fatal(err)
			}
			p, _ := paramsObjectRef(m.params)
			var name string
			var args map[string]json.RawMessage
			if json.Unmarshal(p["name"], &name) != nil || json.Unmarshal(p["arguments"], &args) != nil {
				b.Fatal("params")
			}
		}
	})
}
