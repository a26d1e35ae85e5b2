package settingsui

import (
	"context"
	"sync"
	"time"
)

// failureGate slows wrong sign-ins and never holds up a right one.
//
// A right admin token is admitted as soon as it is checked: the gate is
// not consulted on that path, so no number of wrong tokens sent before or
// at the same time, from any address, delays or refuses it. Nothing is
// counted per address either: every local process reaches the server from
// 127.0.0.1, and a lock-out per address would let any of them lock the
// person out.
//
// A wrong token is answered only after holding one of a few slots for a
// delay, so failures cost the server bounded work: at most slots answers
// (and log lines) per delay, at most slots+maxWaiting requests held, and
// one beyond that answered at once with 429. It does not bound how fast a
// client learns that a guess is wrong (no immediate success says so), and
// is not meant to: the admin token's 256 random bits make guessing
// hopeless at any rate.
type failureGate struct {
	slots chan struct{}
	delay time.Duration
	// pause holds a failure for the delay; it returns early with ctx's
	// error (tests replace it to hold failures until they say).
	pause func(ctx context.Context, d time.Duration) error

	mu         sync.Mutex
	waiting    int
	maxWaiting int
}

func newFailureGate(slots, maxWaiting int, delay time.Duration) *failureGate {
	return &failureGate{slots: make(chan struct{}, slots), delay: delay, maxWaiting: maxWaiting, pause: sleep}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// hold keeps a failed sign-in in one of the slots for the delay, first
// waiting for a slot when fewer than maxWaiting wait already. It reports
// false at once when too many wait (the answer is then 429), or when ctx
// ends first (the client went away).
func (g *failureGate) hold(ctx context.Context) bool {
	select {
	case g.slots <- struct{}{}:
	default:
		g.mu.Lock()
		if g.waiting >= g.maxWaiting {
			g.mu.Unlock()
			return false
		}
		g.waiting++
		g.mu.Unlock()
		var got bool
		select {
		case g.slots <- struct{}{}:
			got = true
		case <-ctx.Done():
		}
		g.mu.Lock()
		g.waiting--
		g.mu.Unlock()
		if !got {
			return false
		}
	}
	defer func() { <-g.slots }()
	return g.pause(ctx, g.delay) == nil
}
