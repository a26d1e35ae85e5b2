package mcp

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"
)

// InputRequired returns the error a handler returns to ask the client for
// input with explicit requests (low-level MRTR). In the modern era the
// dispatcher answers with an input_required result carrying these requests
// and a requestState; in a legacy session it sends them as server-to-client
// requests and invokes the handler again with the answers in
// Request.InputResponses. Prefer Request.Input and Request.Elicit, which
// accept only answers bound to a verified requestState.
func InputRequired(requests map[string]InputRequest) error {
	return &inputRequiredError{requests: requests}
}

// IsInputRequired reports whether err asks for client input; a handler that
// gets such an error from Input or Elicit must return it unchanged.
func IsInputRequired(err error) bool {
	var ir *inputRequiredError
	return errors.As(err, &ir)
}

type inputRequiredError struct {
	requests map[string]InputRequest
}

func (e *inputRequiredError) Error() string { return "mcp: client input required" }

// stateBinding is what a requestState is bound to.
type stateBinding struct {
	principal string
	method    string
	name      string // tool or prompt name, resource URI
	// params are the salient params (arguments); their digest is taken
	// only when a state is issued or checked, not on every call.
	params json.RawMessage
	// decl is the client's elicitation declaration when the state was
	// issued. It is recorded, not compared: a retry that declares less is
	// still bound to what was asked under it (Request.StateDeclared).
	decl string
}

// statePayload is the signed content of a requestState.
type statePayload struct {
	V int                        `json:"v"`
	P string                     `json:"p"`           // hash of the principal
	M string                     `json:"m"`           // method
	N string                     `json:"n"`           // name / URI
	D string                     `json:"d"`           // arguments digest
	C string                     `json:"c,omitempty"` // elicitation declaration
	E int64                      `json:"e"`           // expiry, unix ms
	R string                     `json:"r"`           // nonce (single use)
	K map[string]string          `json:"k,omitempty"` // pending key -> method
	A map[string]json.RawMessage `json:"a,omitempty"` // answers of earlier rounds
}

const stateVersion = "s1"

// stateKeeper issues and verifies requestState tokens: HMAC-SHA256 with a
// per-process random key, short expiry, single use, and at most max
// outstanding (issued and not yet presented): beyond, the oldest is
// forgotten and answers as expired.
type stateKeeper struct {
	key [32]byte
	now func() time.Time
	max int

	mu     sync.Mutex
	issued map[string]int64 // nonce -> expiry (unix ms)
	order  []string         // nonces in issue order
}

func newStateKeeper(key [32]byte, now func() time.Time, max int) *stateKeeper {
	if max <= 0 {
		max = 128
	}
	return &stateKeeper{key: key, now: now, max: max, issued: map[string]int64{}}
}

// remember records an issued nonce, forgetting the oldest beyond max.
func (k *stateKeeper) remember(nonce string, exp int64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for len(k.issued) >= k.max && len(k.order) > 0 {
		delete(k.issued, k.order[0])
		k.order = k.order[1:]
	}
	k.issued[nonce] = exp
	k.order = append(k.order, nonce)
}

// consume removes an outstanding nonce; false if it was not outstanding.
func (k *stateKeeper) consume(nonce string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, ok := k.issued[nonce]; !ok {
		return false
	}
	delete(k.issued, nonce)
	for i, n := range k.order {
		if n == nonce {
			k.order = append(k.order[:i], k.order[i+1:]...)
			break
		}
	}
	return true
}

// outstanding is the number of issued states not yet presented.
func (k *stateKeeper) outstanding() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.issued)
}

func (k *stateKeeper) mac(data string) []byte {
	m := hmac.New(sha256.New, k.key[:])
	m.Write([]byte(data))
	return m.Sum(nil)
}

func hashPrincipal(p string) string {
	sum := sha256.Sum256([]byte("principal\x00" + p))
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}

// issue signs a new state.
func (k *stateKeeper) issue(b stateBinding, ttl time.Duration, pending map[string]string, answers map[string]json.RawMessage) (string, error) {
	var nonce [16]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return "", err
	}
	p := statePayload{
		V: 1, P: hashPrincipal(b.principal), M: b.method, N: b.name, D: b.digest(), C: b.decl,
		E: k.now().Add(ttl).UnixMilli(), R: base64.RawURLEncoding.EncodeToString(nonce[:]),
		K: pending, A: answers,
	}
	body, err := json.Marshal(p)
	if err != nil {
		return "", err
	}
	k.remember(p.R, p.E)
	signed := stateVersion + "." + base64.RawURLEncoding.EncodeToString(body)
	return signed + "." + base64.RawURLEncoding.EncodeToString(k.mac(signed)), nil
}

// verify checks integrity, expiry, binding and single use, and consumes the
// state. Every failure is -32602.
func (k *stateKeeper) verify(token string, b stateBinding) (*statePayload, *Error) {
	bad := func(why string) (*statePayload, *Error) {
		return nil, &Error{Code: CodeInvalidParams, Message: "Invalid requestState: " + why}
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 || parts[0] != stateVersion {
		return bad("malformed")
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || !hmac.Equal(sig, k.mac(parts[0]+"."+parts[1])) {
		return bad("integrity check failed")
	}
	body, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return bad("malformed")
	}
	var p statePayload
	if err := json.Unmarshal(body, &p); err != nil || p.V != 1 {
		return bad("malformed")
	}
	now := k.now().UnixMilli()
	if now > p.E {
		return bad("expired")
	}
	if p.P != hashPrincipal(b.principal) || p.M != b.method || p.N != b.name || p.D != b.digest() {
		return bad("issued for a different request")
	}
	if !k.consume(p.R) {
		return bad("already used, or no longer retained")
	}
	return &p, nil
}

// digest is the binding's params digest ("" without params).
func (b stateBinding) digest() string {
	if b.params == nil {
		return ""
	}
	return paramsDigest(b.params)
}

// paramsDigest hashes a params value canonically (object keys sorted,
// numbers kept as written).
func paramsDigest(raw json.RawMessage) string {
	canon := raw
	if len(bytes.TrimSpace(raw)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) == nil {
			if b, err := json.Marshal(v); err == nil {
				canon = b
			}
		}
	}
	sum := sha256.Sum256(canon)
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// validateInputResponse checks the shape of one answer for a request method.
func validateInputResponse(method string, raw json.RawMessage) *Error {
	switch method {
	case "elicitation/create":
		if _, err := parseElicitResult(raw); err != nil {
			return err
		}
	case "roots/list":
		var r struct {
			Roots []struct {
				URI string `json:"uri"`
			} `json:"roots"`
		}
		if json.Unmarshal(raw, &r) != nil || r.Roots == nil {
			return InvalidParamsError("inputResponses: a roots/list answer needs a roots array")
		}
	case "sampling/createMessage":
		var r struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(raw, &r) != nil || r.Role == "" || len(r.Content) == 0 {
			return InvalidParamsError("inputResponses: a sampling answer needs role and content")
		}
	}
	return nil
}

func parseElicitResult(raw json.RawMessage) (*ElicitResult, *Error) {
	var r struct {
		Action  string          `json:"action"`
		Content json.RawMessage `json:"content"`
	}
	if !isJSONObject(raw) || json.Unmarshal(raw, &r) != nil {
		return nil, InvalidParamsError("elicitation answer must be an object")
	}
	switch r.Action {
	case ElicitAccept, ElicitDecline, ElicitCancel:
	default:
		return nil, InvalidParamsError("elicitation answer: action must be accept, decline or cancel")
	}
	out := &ElicitResult{Action: r.Action, Raw: raw}
	if len(r.Content) > 0 && !isJSONNull(r.Content) {
		if !isJSONObject(r.Content) {
			return nil, InvalidParamsError("elicitation answer: content must be an object")
		}
		dec := json.NewDecoder(bytes.NewReader(r.Content))
		dec.UseNumber()
		if dec.Decode(&out.Content) != nil {
			return nil, InvalidParamsError("elicitation answer: content must be an object")
		}
	}
	return out, nil
}

// mrtrInput is the MRTR part of a request's params (modern era).
type mrtrInput struct {
	responses map[string]json.RawMessage // inputResponses as sent (unverified)
	state     *string                    // requestState as sent
}

// parseMRTRParams validates inputResponses and requestState shapes.
func parseMRTRParams(params map[string]json.RawMessage) (mrtrInput, *Error) {
	var in mrtrInput
	if raw, ok := params["inputResponses"]; ok {
		if !isJSONObject(raw) {
			return in, InvalidParamsError("inputResponses must be an object")
		}
		if err := json.Unmarshal(raw, &in.responses); err != nil {
			return in, InvalidParamsError("inputResponses must be an object")
		}
		for k, v := range in.responses {
			if !isJSONObject(v) {
				return in, InvalidParamsError("inputResponses[%q] must be an object", k)
			}
		}
	}
	if raw, ok := params["requestState"]; ok {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return in, InvalidParamsError("requestState must be a string")
		}
		in.state = &s
	}
	return in, nil
}
