package mcp

import (
	"encoding/json"
	"testing"
)

func TestDecodeMessage(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		kind     msgKind
		code     int    // expected error code, 0 = none
		echo     string // id echoed on error
		method   string
		idString string
	}{
		{name: "request", in: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, kind: kindRequest, method: "ping", idString: "1"},
		{name: "string id", in: `{"jsonrpc":"2.0","id":"1","method":"ping","params":{}}`, kind: kindRequest, method: "ping", idString: `"1"`},
		{name: "notification", in: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, kind: kindNotification, method: "notifications/initialized"},
		{name: "result response", in: `{"jsonrpc":"2.0","id":7,"result":{}}`, kind: kindResponse, idString: "7"},
		{name: "error response", in: `{"jsonrpc":"2.0","id":7,"error":{"code":-1,"message":"x"}}`, kind: kindResponse, idString: "7"},
		{name: "null params", in: `{"jsonrpc":"2.0","id":1,"method":"ping","params":null}`, kind: kindRequest, method: "ping", idString: "1"},
		{name: "empty", in: ``, code: CodeParseError},
		{name: "garbage", in: `{"jsonrpc":`, code: CodeParseError},
		{name: "trailing garbage", in: `{"jsonrpc":"2.0","id":1,"method":"ping"} x`, code: CodeParseError},
		{name: "batch", in: `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, code: CodeInvalidRequest},
		{name: "scalar", in: `42`, code: CodeInvalidRequest},
		{name: "wrong version", in: `{"jsonrpc":"1.0","id":3,"method":"ping"}`, code: CodeInvalidRequest, echo: "3"},
		{name: "missing version", in: `{"id":3,"method":"ping"}`, code: CodeInvalidRequest, echo: "3"},
		{name: "null id request", in: `{"jsonrpc":"2.0","id":null,"method":"ping"}`, code: CodeInvalidRequest},
		{name: "bool id", in: `{"jsonrpc":"2.0","id":true,"method":"ping"}`, code: CodeInvalidRequest},
		{name: "object id", in: `{"jsonrpc":"2.0","id":{},"method":"ping"}`, code: CodeInvalidRequest},
		{name: "empty method", in: `{"jsonrpc":"2.0","id":4,"method":""}`, code: CodeInvalidRequest, echo: "4"},
		{name: "numeric method", in: `{"jsonrpc":"2.0","id":4,"method":5}`, code: CodeInvalidRequest, echo: "4"},
		{name: "result and error", in: `{"jsonrpc":"2.0","id":4,"result":{},"error":{"code":1,"message":""}}`, code: CodeInvalidRequest, echo: "4"},
		{name: "neither", in: `{"jsonrpc":"2.0","id":4}`, code: CodeInvalidRequest, echo: "4"},
		{name: "bad error object", in: `{"jsonrpc":"2.0","id":4,"error":"x"}`, code: CodeInvalidRequest, echo: "4"},
		{name: "response without id", in: `{"jsonrpc":"2.0","result":{}}`, code: CodeInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, echo, err := decodeMessage([]byte(tt.in))
			if tt.code != 0 {
				if err == nil {
					t.Fatalf("decoded %+v, want error %d", m, tt.code)
				}
				if err.Code != tt.code {
					t.Fatalf("code = %d (%s), want %d", err.Code, err.Message, tt.code)
				}
				if echo.String() != tt.echo {
					t.Fatalf("echo id = %q, want %q", echo.String(), tt.echo)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			if m.kind != tt.kind || m.method != tt.method || m.id.String() != tt.idString {
				t.Fatalf("got kind=%d method=%q id=%q", m.kind, m.method, m.id.String())
			}
		})
	}
}

func TestIDKeysAreTyped(t *testing.T) {
	tests := []struct {
		a, b string
		same bool
	}{
		{`1`, `"1"`, false},
		{`1`, `1.0`, true},
		{`1`, `1e0`, true},
		{`"a"`, `"a"`, true},
		{`"a"`, `"\u0061"`, true},
		{`-0`, `0`, true},
		{`2`, `3`, false},
		{`12345678901234567890`, `12345678901234567891`, false},
	}
	for _, tt := range tests {
		a, ok1 := parseID(json.RawMessage(tt.a))
		b, ok2 := parseID(json.RawMessage(tt.b))
		if !ok1 || !ok2 {
			t.Fatalf("parseID(%s, %s) failed", tt.a, tt.b)
		}
		if (a.key() == b.key()) != tt.same {
			t.Errorf("key(%s)=%q key(%s)=%q, same=%v want %v", tt.a, a.key(), tt.b, b.key(), a.key() == b.key(), tt.same)
		}
	}
}

func TestEncodeErrorOmitsMissingID(t *testing.T) {
	var v map[string]any
	if err := json.Unmarshal(encodeError(ID{}, errInternal()), &v); err != nil {
		t.Fatal(err)
	}
	if _, ok := v["id"]; ok {
		t.Fatalf("error without id must omit id: %v", v)
	}
	if err := json.Unmarshal(encodeError(StringID("x"), errInternal()), &v); err != nil || v["id"] != "x" {
		t.Fatalf("id not echoed: %v", v)
	}
}

// FuzzDecodeMessage checks that the decoder never panics and that whatever
// it accepts re-encodes to valid JSON-RPC.
func FuzzDecodeMessage(f *testing.F) {
	seeds := []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":"a","result":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`[1,2]`, `{}`, `null`, `{"jsonrpc":"2.0","id":1e400,"method":"x"}`,
		`{"jsonrpc":"2.0","id":-0.0,"method":"x"}`, "\x00", `{"jsonrpc":"2.0","id":"\ud800","method":"x"}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, echo, err := decodeMessage(data)
		if err != nil {
			if m != nil {
				t.Fatal("message and error both set")
			}
			if !json.Valid(encodeError(echo, err)) {
				t.Fatal("invalid error encoding")
			}
			return
		}
		_ = m.id.key()
		switch m.kind {
		case kindRequest:
			if m.id.IsZero() || m.method == "" {
				t.Fatal("request without id or method")
			}
			if !json.Valid(encodeResult(m.id, json.RawMessage(`{}`))) {
				t.Fatal("invalid result encoding")
			}
		case kindNotification:
			if m.method == "" {
				t.Fatal("notification without method")
			}
		case kindResponse:
			if m.id.IsZero() {
				t.Fatal("response without id")
			}
		default:
			t.Fatal("unknown kind")
		}
	})
}

// TestEncodeResult: the response assembled by hand is what encoding the
// whole response would give.
func TestEncodeResult(t *testing.T) {
	for _, c := range []struct {
		id     ID
		result string
	}{
		{IntID(7), `{}`},
		{StringID(`a "quoted" <id> & more`), `{"content":[{"type":"text","text":"\u003cb\u003e"}],"structuredContent":{"x":[1,2]}}`},
		{IntID(-1), `{"k":"é\n"}`},
	} {
		want, err := json.Marshal(wireResponse{JSONRPC: "2.0", ID: &c.id, Result: json.RawMessage(c.result)})
		if err != nil {
			t.Fatal(err)
		}
		if got := encodeResult(c.id, json.RawMessage(c.result)); string(got) != string(want) {
			t.Errorf("encodeResult = %s, want %s", got, want)
		}
	}
}

// TestMarshalResult: a result encodes as json.Marshal encodes it, an
// encodedJSON member copied as it is.
func TestMarshalResult(t *testing.T) {
	list, _ := json.Marshal([]map[string]any{{"name": "a<b>", "inputSchema": json.RawMessage(`{"type":"object"}`)}})
	for _, res := range []map[string]any{
		{},
		{"tools": encodedJSON(list)},
		{"tools": encodedJSON(list), "resultType": "complete", "ttlMs": 5, "_meta": map[string]any{"z": 1, "a": []int{1}}},
		{"content": []Content{TextContent("x & y")}, "structuredContent": json.RawMessage(`{"k": [1, 2]}`), "isError": true, "nil": nil},
	} {
		want, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		got, err := marshalResult(res)
		if err != nil || string(got) != string(want) {
			t.Errorf("marshalResult = %s, %v; want %s", got, err, want)
		}
	}
	if _, err := marshalResult(map[string]any{"f": func() {}}); err == nil {
		t.Error("a value JSON cannot encode was encoded")
	}
}
