package siyuan

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
)

// ErrInvalidArgument is wrapped by errors for calls rejected locally, before
// anything was sent. Validating here matters: the kernel panics on missing or
// mistyped fields and then replies {code:0, data:null}, which looks like success.
var ErrInvalidArgument = errors.New("siyuan: invalid argument")

func invalidArg(endpoint, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrInvalidArgument, endpoint, fmt.Sprintf(format, args...))
}

// APIError is a reply envelope with a non-zero code: the kernel processed the
// request and refused it. For writes it is a definite failure.
type APIError struct {
	Endpoint string
	Code     int
	Msg      string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("siyuan %s: kernel error (code %d): %s", e.Endpoint, e.Code, e.Msg)
}

// ErrFileNotFound is matched by errors.Is for the workspace file API's "no
// such path": code 404 from [Client.GetFile] ("file does not exist"),
// [Client.ReadDir] or [Client.RemoveFile] ("path does not exist"). SiYuan
// 3.7.3 gives it for a path that does not exist, and from GetFile also for
// one it cannot stat: under a regular file, or with a NUL byte. It lets a
// caller tell "nothing stored yet" (a configuration file never saved) from a
// failure: a directory (409), a refused path (403), a malformed argument
// (-1), a transport error or any other code does not match. The error itself
// stays the [*APIError] with the kernel's code and message.
var ErrFileNotFound = errors.New("siyuan: workspace path does not exist")

// Is reports whether target is [ErrFileNotFound] and e is the file API's
// 404, [ErrTemplateExists] and e is docSaveAsTemplate's code 1, or
// [ErrRepoKeyMissing] and e is a repository endpoint's missing-key refusal.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrFileNotFound:
		return e.Code == http.StatusNotFound && isFileEndpoint(e.Endpoint)
	case ErrTemplateExists:
		return e.Code == 1 && e.Endpoint == endpoint.DocSaveAsTemplate
	case ErrRepoKeyMissing:
		return isRepoKeyMissing(e)
	}
	return false
}

// isFileEndpoint is the workspace file API, whose code 404 means "no such path".
func isFileEndpoint(path string) bool {
	switch path {
	case endpoint.GetFile, endpoint.ReadDir, endpoint.RemoveFile:
		return true
	}
	return false
}

// AuthError is an HTTP 401 or 403 from the kernel's auth middleware. The
// request never reached the handler, so it is a definite failure.
type AuthError struct {
	Endpoint string
	Status   int    // 401 or 403
	Msg      string // the kernel's message, if any (403 replies have an empty body)
	Hint     string // what the operator should do about it
}

func (e *AuthError) Error() string {
	what := "SiYuan rejected the request as unauthenticated"
	if e.Status == http.StatusForbidden {
		what = "SiYuan refused the request: the caller is not allowed to use this endpoint"
	}
	s := fmt.Sprintf("siyuan %s: %s (HTTP %d", e.Endpoint, what, e.Status)
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	s += ")"
	if e.Hint != "" {
		s += "; " + e.Hint
	}
	return s
}

// NullDataError reports {code:0, data:null} from an endpoint that must return
// data. SiYuan produces exactly that when a handler panics on malformed input
// (its deferred reply still goes out), so this is a failure, not an empty result.
type NullDataError struct {
	Endpoint string
}

func (e *NullDataError) Error() string {
	return fmt.Sprintf("siyuan %s: kernel replied code 0 with null data (it does this after rejecting malformed input)", e.Endpoint)
}

// OutcomeUnknownError is returned only for writes whose request may have
// reached the kernel but whose reply was lost or unreadable: a failure after
// the request was written, a timeout or cancellation after sending, a reset
// connection, HTTP 5xx, or an undecodable 2xx body. The write may or may not
// have been applied; the caller must read the state back before retrying.
type OutcomeUnknownError struct {
	Endpoint string
	Cause    error
}

func (e *OutcomeUnknownError) Error() string {
	return fmt.Sprintf("siyuan %s: outcome unknown, the write may have been applied: %v", e.Endpoint, e.Cause)
}

func (e *OutcomeUnknownError) Unwrap() error { return e.Cause }

// IsOutcomeUnknown reports whether err (or anything it wraps) is an
// [*OutcomeUnknownError].
func IsOutcomeUnknown(err error) bool {
	var o *OutcomeUnknownError
	return errors.As(err, &o)
}

// TransportError is a failure of the HTTP exchange itself: dial or DNS
// failure, cancellation before sending, a connection dropped mid-read, or an
// unexpected HTTP status (Cause is then a [*StatusError]).
//
// Sent reports whether the kernel may have acted on the request. A write never
// yields a TransportError with Sent=true (that is an [*OutcomeUnknownError]),
// so for writes a TransportError is always a definite failure. Reads may carry
// Sent=true, which is harmless for them.
type TransportError struct {
	Endpoint string
	Cause    error
	Sent     bool
}

func (e *TransportError) Error() string {
	where := "request not delivered"
	if e.Sent {
		where = "request sent, reply lost"
	}
	return fmt.Sprintf("siyuan %s: %s: %v", e.Endpoint, where, e.Cause)
}

func (e *TransportError) Unwrap() error { return e.Cause }

// StatusError is an HTTP status the API does not use for normal replies
// (anything but 2xx, 401 and 403). It appears as the Cause of a
// [*TransportError] or of an [*OutcomeUnknownError] (5xx on a write).
type StatusError struct {
	Status int
	Body   string // start of the reply body, for diagnostics
}

func (e *StatusError) Error() string {
	s := fmt.Sprintf("unexpected HTTP status %d %s", e.Status, http.StatusText(e.Status))
	if e.Body != "" {
		s += ": " + e.Body
	}
	return s
}

// DecodeError is a reply that arrived but could not be understood: not an
// envelope, or data that does not fit the expected type. For writes it is
// wrapped in an [*OutcomeUnknownError] (the kernel did answer, so it probably
// applied the write, but we cannot tell what it said).
type DecodeError struct {
	Endpoint string
	Status   int
	Cause    error
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("siyuan %s: cannot decode reply (HTTP %d): %v", e.Endpoint, e.Status, e.Cause)
}

func (e *DecodeError) Unwrap() error { return e.Cause }

// ResponseTooLargeError is a JSON reply larger than Config.MaxResponseBytes.
// Like [*DecodeError] it is wrapped in an [*OutcomeUnknownError] for writes.
type ResponseTooLargeError struct {
	Endpoint string
	Limit    int64
}

func (e *ResponseTooLargeError) Error() string {
	return fmt.Sprintf("siyuan %s: reply exceeds the %d-byte limit", e.Endpoint, e.Limit)
}

// missingResult reports a successful-looking write reply that lacks the
// field the caller needs (e.g. a new ID). The write was accepted, so its
// effect is unknown rather than absent.
func missingResult(endpoint, field string) error {
	return &OutcomeUnknownError{Endpoint: endpoint, Cause: &DecodeError{
		Endpoint: endpoint, Status: http.StatusOK, Cause: fmt.Errorf("reply has no %s", field),
	}}
}
