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
