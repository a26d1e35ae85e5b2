package strict

import (
	"context"

	"github.com/sisyphus-go/sisyphus/internal/failure"
)

type commitBarrierKey struct{}

// WithCommitBarrier returns ctx carrying enter, the commit barrier of one
// call. The coordinator calls it synchronously right before a write becomes
// irrevocable (see [CommitBarrier]). enter returns nil to let the write go
// ahead, after which its owner must reject any cancellation of the call; or
// an error to stop it. It is called at most once per write.
func WithCommitBarrier(ctx context.Context, enter func() error) context.Context {
	return context.WithValue(ctx, commitBarrierKey{}, enter)
}

// CommitBarrier passes ctx's commit barrier, if it carries one. The
// coordinator calls it right before the ledger's executing entry of a strict
// commit, and right before the dispatch of an external or strict-off write,
// under the write lane. A nil answer means the write goes ahead: mutation,
// readback and ledger entries then finish together whatever happens to the
// caller. A refusal is a *failure.Error (cancelled, writeAttempted false):
// nothing was recorded as executing or dispatched, and the lease and the
// request id are not used up.
func CommitBarrier(ctx context.Context, requestID string) error {
	enter, _ := ctx.Value(commitBarrierKey{}).(func() error)
	if enter == nil {
		return nil
	}
	if err := enter(); err != nil {
		f := fail(failure.Cancelled, false, err, "the call was cancelled before its write started; nothing was written")
		f.RequestID = requestID
		return f
	}
	return nil
}
