package siyuan

import (
	"context"
	"io"
)

// ReadMeter is charged by the client's read path for every read call made
// with a context that carries it (see [WithReadMeter]): once per logical call
// before it is sent (retries of that call are not charged again), and with
// the size of every reply body it receives (the JSON envelope, or the bytes
// of a streamed file as the caller reads them). A non-nil error from either
// fails the call with that error: ChargeCall before anything is sent,
// ChargeBytes before the reply is decoded (or on the stream read that
// crossed the limit). Write calls are never charged.
//
// It is the hook for read budgets and cancellation checkpoints: the owner of
// the meter decides what a limit is and remembers that it was crossed, so
// that a handler which catches the error cannot hide it.
type ReadMeter interface {
	ChargeCall(endpoint string) error
	ChargeBytes(endpoint string, n int64) error
}

type readMeterKey struct{}

// WithReadMeter returns ctx carrying m; read calls made with it charge m.
func WithReadMeter(ctx context.Context, m ReadMeter) context.Context {
	return context.WithValue(ctx, readMeterKey{}, m)
}

// WithoutReadMeter returns ctx with no meter: calls made under it are not
// charged to the read (the gate's own lookups, for one).
func WithoutReadMeter(ctx context.Context) context.Context {
	return context.WithValue(ctx, readMeterKey{}, ReadMeter(nil))
}

// ReadMeterFrom returns the meter ctx carries, or nil.
func ReadMeterFrom(ctx context.Context) ReadMeter {
	m, _ := ctx.Value(readMeterKey{}).(ReadMeter)
	return m
}

// meteredBody charges a streamed read body as the caller reads it.
type meteredBody struct {
	io.ReadCloser
	m        ReadMeter
	endpoint string
	err      error
}

func (b *meteredBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		if cerr := b.m.ChargeBytes(b.endpoint, int64(n)); cerr != nil {
			b.err = cerr
			return n, cerr
		}
	}
	return n, err
}
