package tools

import (
	"context"
	"errors"
	"log/slog"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
)

// KernelError maps any error of a call onto the agent-visible vocabulary:
// a *failure.Error passes unchanged; a kernel client failure gets its
// code; anything else is kernel_error. The cause stays internal.
func KernelError(err error) *failure.Error {
	var fe *failure.Error
	if errors.As(err, &fe) {
		return fe
	}
	var auth *siyuan.AuthError
	var api *siyuan.APIError
	var tr *siyuan.TransportError
	switch {
	case siyuan.IsOutcomeUnknown(err):
		e := failure.Wrap(failure.OutcomeUnknown, err, "the kernel's reply was lost after the request was sent")
		e.Action = "inspect the target before retrying"
		return e
	case errors.As(err, &auth):
		return failure.Wrap(failure.KernelAuth, err, "SiYuan refused Sisyphus's API token")
	case errors.As(err, &api):
		return failure.Wrap(failure.KernelError, err, "SiYuan answered code %d: %s", api.Code, api.Msg)
	case errors.As(err, &tr), errors.Is(err, context.DeadlineExceeded):
		return failure.Wrap(failure.KernelUnreachable, err, "SiYuan could not be reached")
	case errors.Is(err, context.Canceled):
		return failure.Wrap(failure.Cancelled, err, "the call was cancelled")
	}
	e := failure.Wrap(failure.KernelError, err, "the kernel call failed")
	e.Action = "retry the read; run sisyphus doctor if it persists"
	return e
}

// WriteFailure classifies a failed kernel write for the coordinator: a
// refusal before anything of this call was applied is a rejection; anything
// else (a lost reply, or a failure after an earlier write of the same call
// applied) leaves the outcome unknown.
func WriteFailure(err error, appliedBefore bool) error {
	if appliedBefore || siyuan.IsOutcomeUnknown(err) {
		return err
	}
	var api *siyuan.APIError
	var auth *siyuan.AuthError
	var tr *siyuan.TransportError
	if errors.As(err, &api) || errors.As(err, &auth) || errors.As(err, &tr) && !tr.Sent || errors.Is(err, siyuan.ErrInvalidArgument) {
		return strict.Reject(err)
	}
	return err
}

// Refuse marks a refusal decided in Execute before any kernel write of the
// call: the agent sees its code (a kernel read failure gets its kernel
// code), writeAttempted false, and the ledger records the request as
// rejected. Prefer refusing in Validate or Check, before the ledger records
// anything.
func Refuse(err error) error {
	return strict.Reject(KernelError(err))
}

// agentSafe makes an error's text fit for an agent: a kernel client failure
// (whose text carries addresses and transport internals) reads as its
// plain description, while errors.Is/As still reach the cause and logs
// still show it. Other errors pass unchanged.
func agentSafe(err error) error {
	var fe *failure.Error
	if err == nil || errors.As(err, &fe) || !isKernelFailure(err) {
		return err
	}
	return &safeError{text: KernelError(err).Message, cause: err}
}

func isKernelFailure(err error) bool {
	var auth *siyuan.AuthError
	var api *siyuan.APIError
	var tr *siyuan.TransportError
	return siyuan.IsOutcomeUnknown(err) || errors.As(err, &auth) || errors.As(err, &api) || errors.As(err, &tr)
}

type safeError struct {
	text  string
	cause error
}

func (e *safeError) Error() string { return e.text }
func (e *safeError) Unwrap() error { return e.cause }

// LogValue shows the internal cause in logs.
func (e *safeError) LogValue() slog.Value { return slog.StringValue(e.cause.Error()) }
