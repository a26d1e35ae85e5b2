package siyuan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/jsonobj"
)

// envelope is SiYuan's reply wrapper (gulu.Result): {code, msg, data}.
type envelope struct {
	Code int
	Msg  string
	Data json.RawMessage // nil when data is absent or null
}

// rawEnvelope is wire.Result as decodeEnvelope reads it: pointers tell an
// absent code or msg from a zero one, and data is decoded later, by type.
type rawEnvelope struct {
	Code *int            `json:"code"`
	Msg  *string         `json:"msg"`
	Data json.RawMessage `json:"data"`
}

// decodeEnvelope parses a reply body. It insists on a JSON object with a
// numeric "code" so that an HTML error page or a bare {} from something that
// is not SiYuan is not mistaken for a successful reply.
func decodeEnvelope(body []byte) (envelope, error) {
	var raw rawEnvelope
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return envelope{}, errors.New("reply is not a JSON object")
	}
	if err := json.Unmarshal(trimmed, &raw); err != nil {
		return envelope{}, fmt.Errorf("reply is not an API envelope: %w", err)
	}
	if raw.Code == nil {
		return envelope{}, errors.New(`reply has no "code" field`)
	}
	env := envelope{Code: *raw.Code, Data: raw.Data}
	if raw.Msg != nil {
		env.Msg = *raw.Msg
	}
	if isJSONNull(env.Data) {
		env.Data = nil
	}
	return env, nil
}

func isJSONNull(b json.RawMessage) bool {
	b = bytes.TrimSpace(b)
	return len(b) == 0 || bytes.Equal(b, []byte("null"))
}

// onePass reports whether a reply body decodes in one pass, straight into
// the result, exactly as the envelope and then its data would: its code is
// 0, its msg a string or null (or absent), its data present and not null,
// and none of the three appears twice. Keys are compared as encoding/json
// matches them to fields (ASCII, case folded); a key escaped or not ASCII
// leaves the reply to the two passes. On a body that is not valid JSON the
// answer does not matter: the one-pass decoding rejects it before it writes.
func onePass(body []byte) bool {
	var code, msg, data int
	ok := jsonobj.Members(body, func(k, v []byte) bool {
		key, plain := jsonobj.Plain(k)
		switch {
		case !plain:
			return false
		case strings.EqualFold(key, "code"):
			code++
			return string(v) == "0"
		case strings.EqualFold(key, "msg"):
			msg++
			return v[0] == '"' || string(v) == "null"
		case strings.EqualFold(key, "data"):
			data++
			return string(v) != "null"
		}
		return true
	})
	return ok && code == 1 && msg <= 1 && data == 1
}

// isPointer reports whether v is a non-nil pointer (what json.Unmarshal
// decodes into).
func isPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && !rv.IsNil()
}

// readCapped reads all of r, failing with a *ResponseTooLargeError beyond
// limit bytes so that a misbehaving server cannot make us buffer without bound.
func readCapped(r io.Reader, limit int64, endpoint string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return b, err
	}
	if int64(len(b)) > limit {
		return nil, &ResponseTooLargeError{Endpoint: endpoint, Limit: limit}
	}
	return b, nil
}
