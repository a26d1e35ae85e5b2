package siyuan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
