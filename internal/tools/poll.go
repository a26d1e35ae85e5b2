package tools

import (
	"context"
	"time"
)

// readbackWaits are the delays between readback attempts: the kernel
// applies or indexes some writes a little after it answers.
var readbackWaits = [...]time.Duration{0, 50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond,
	400 * time.Millisecond, 800 * time.Millisecond}

// Poll runs check after each readback wait (0 to 800 ms, 1.55 s in all) until it reports done, and
// reports whether it did; a check error ends polling with that error (a
// failed read never proves anything, in either direction).
func Poll(ctx context.Context, check func() (bool, error)) (bool, error) {
	for _, w := range readbackWaits {
		if err := Sleep(ctx, w); err != nil {
			return false, err
		}
		done, err := check()
		if err != nil {
			return false, err
		}
		if done {
			return true, nil
		}
	}
	return false, nil
}

// Sleep waits d, or until ctx ends.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Await reads the state after each readback wait until accept passes, and
// returns the last state read. A read error ends it at once with that error
// (a failed read proves nothing); when accept never passes, its last
// refusal is the error.
func Await[S any](ctx context.Context, read func(context.Context) (S, error), accept func(S) error) (S, error) {
	var st S
	var last error
	ok, err := Poll(ctx, func() (bool, error) {
		var err error
		if st, err = read(ctx); err != nil {
			return false, err
		}
		last = accept(st)
		return last == nil, nil
	})
	switch {
	case err != nil:
		return st, err
	case !ok:
		return st, last
	}
	return st, nil
}
