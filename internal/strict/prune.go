package strict

import (
	"context"
	"time"
)

// PruneEvery prunes the ledger now and then every interval until ctx ends,
// so executed records leave after [Retention] and unexecuted ones after
// their first-execution window. Failures are logged; a ledger that fails
// closed keeps refusing writes either way.
func (l *Ledger) PruneEvery(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if n, err := l.Prune(ctx, l.now()); err != nil {
			l.log.Warn("pruning the write ledger failed", "err", err)
		} else if n > 0 {
			l.log.Info("pruned the write ledger", "records", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
