package failure

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
)

// Error is an agent-visible failure: a stable code, a message, what the
// caller should do, and machine-readable details. Internal causes stay in
// Cause and never reach the agent.
type Error struct {
	Code    Code
	Message string
	// Action overrides the code's caller action from [Codes].
	Action string
	// Details are machine-readable specifics shown inside the error object
	// (validActions, expectedField, notebook, ...).
	Details map[string]any

	// The outcome of a write, shown beside the error object.
	WriteAttempted *bool
	RequestID      string
	// ExpectedHash and CurrentHash are aliases, for state_changed.
	ExpectedHash, CurrentHash string
	// Cancelled, beside the error object, tells a confirmation the person
	// dismissed (true) from one they declined or that was invalid (false).
	Cancelled *bool
	// Complete, beside the error object, is false on a read stopped by its
	// budget or deadline: what it read is not given, and a page is never
	// advanced by itself (the caller narrows the read and asks again).
	Complete *bool

	Cause error
}

// New returns an error with a formatted message.
func New(code Code, format string, a ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, a...)}
}

// Wrap returns an error with a formatted message and an internal cause.
func Wrap(code Code, cause error, format string, a ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, a...), Cause: cause}
}

// Invalid is an invalid_arguments error.
func Invalid(format string, a ...any) *Error { return New(InvalidArguments, format, a...) }

// Missing is a not_found error for one thing (a block, a notebook, ...).
func Missing(what, id string) *Error {
	return New(NotFound, "%s %s not found", what, id)
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Unwrap returns the internal cause.
func (e *Error) Unwrap() error { return e.Cause }

// CallerAction is what the caller should do: the error's own Action, or
// its code's.
func (e *Error) CallerAction() string {
	if e.Action != "" {
		return e.Action
	}
	entry, _ := Lookup(e.Code)
	return entry.CallerAction
}

// SetCancelled sets Cancelled and returns e.
func (e *Error) SetCancelled(b bool) *Error {
	e.Cancelled = &b
	return e
}

// Attempted sets whether a write was attempted and returns e.
func (e *Error) Attempted(b bool) *Error {
	e.WriteAttempted = &b
	return e
}

// OrAttempted is a copy of e that says whether a write was attempted: as e
// says, or b when e leaves it open. It is how a layer that knows on which
// side of the first kernel write a failure fell completes what the failing
// step did not say (OrAttempted(false): nothing was attempted), without
// changing an error another caller may hold.
func (e *Error) OrAttempted(b bool) *Error {
	c := e.Clone()
	if c.WriteAttempted == nil {
		c.Attempted(b)
	}
	return c
}

// With adds a detail and returns e.
func (e *Error) With(key string, value any) *Error {
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	e.Details[key] = value
	return e
}

// Clone returns a shallow copy whose Details can be changed independently.
func (e *Error) Clone() *Error {
	c := *e
	c.Details = maps.Clone(e.Details)
	return &c
}

// Prefixed is err with prefix before its message, to say which argument
// or file a refusal is about: a *failure.Error anywhere in err's chain
// becomes a copy with its message prefixed (the same code and details),
// any other error is wrapped.
func Prefixed(err error, prefix string) error {
	var fe *Error
	if !errors.As(err, &fe) {
		return fmt.Errorf("%s%w", prefix, err)
	}
	c := fe.Clone()
	c.Message = prefix + c.Message
	return c
}

// Body is the error object: {code, message, action, ...details}.
func (e *Error) Body() map[string]any {
	body := make(map[string]any, len(e.Details)+3)
	maps.Copy(body, e.Details)
	body["code"] = string(e.Code)
	body["message"] = e.Message
	if a := e.CallerAction(); a != "" {
		body["action"] = a
	}
	return body
}

// Result is the structured object of an error answer: {error: Body()}
// plus, for writes, writeAttempted and requestId beside it, and for
// state_changed the expected and current hashes.
func (e *Error) Result() map[string]any {
	out := map[string]any{"error": e.Body()}
	if e.WriteAttempted != nil {
		out["writeAttempted"] = *e.WriteAttempted
	}
	if e.RequestID != "" {
		out["requestId"] = e.RequestID
	}
	if e.ExpectedHash != "" {
		out["expectedHash"] = e.ExpectedHash
		out["currentHash"] = e.CurrentHash
	}
	if e.Cancelled != nil {
		out["cancelled"] = *e.Cancelled
	}
	if e.Complete != nil {
		out["complete"] = *e.Complete
	}
	return out
}

// MarshalJSON encodes the error object alone (Body).
func (e *Error) MarshalJSON() ([]byte, error) { return json.Marshal(e.Body()) }

// Parse reads an error result object (as [Error.Result] makes it) back into
// an Error, for a front relaying its authority's answer. ok is false when
// the object carries no error code.
func Parse(result []byte) (e *Error, ok bool) {
	var r struct {
		Error          map[string]json.RawMessage `json:"error"`
		WriteAttempted *bool                      `json:"writeAttempted"`
		RequestID      string                     `json:"requestId"`
		ExpectedHash   string                     `json:"expectedHash"`
		CurrentHash    string                     `json:"currentHash"`
		Cancelled      *bool                      `json:"cancelled"`
		Complete       *bool                      `json:"complete"`
	}
	if json.Unmarshal(result, &r) != nil || r.Error == nil {
		return nil, false
	}
	e = &Error{WriteAttempted: r.WriteAttempted, RequestID: r.RequestID, ExpectedHash: r.ExpectedHash, CurrentHash: r.CurrentHash, Cancelled: r.Cancelled, Complete: r.Complete}
	for k, raw := range r.Error {
		var s string
		switch k {
		case "code":
			json.Unmarshal(raw, &s)
			e.Code = Code(s)
		case "message":
			json.Unmarshal(raw, &e.Message)
		case "action":
			json.Unmarshal(raw, &e.Action)
		default:
			var v any
			if json.Unmarshal(raw, &v) == nil {
				if e.Details == nil {
					e.Details = map[string]any{}
				}
				e.Details[k] = v
			}
		}
	}
	return e, e.Code != ""
}
