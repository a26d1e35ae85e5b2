package timeline

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// The data repository's calls, with a missing repository key answered as
// the setting it is.

// snapshot is one repository snapshot as SiYuan lists it.
type snapshot = siyuan.RepoSnapshot

// repoErr turns the kernel's refusal for want of a repository key into
// not_configured; other errors pass.
func repoErr(err error) error {
	if errors.Is(err, siyuan.ErrRepoKeyMissing) {
		e := failure.New(failure.NotConfigured, "SiYuan's data repository has no key, so it keeps no snapshots; nothing was changed")
		e.Action = "ask the person to set the data repository key in SiYuan (Settings, About, Data repo key), then call again"
		return e.Attempted(false)
	}
	return err
}

func tagSnapshots(ctx context.Context, env *tools.Env) ([]snapshot, error) {
	s, err := env.Kernel.RepoTagSnapshots(ctx)
	return s, repoErr(err)
}

// newestSnapshots is the first page of snapshots, newest first.
func newestSnapshots(ctx context.Context, env *tools.Env) ([]snapshot, error) {
	p, err := env.Kernel.RepoSnapshots(ctx, 1)
	return p.Snapshots, repoErr(err)
}

func createSnapshot(ctx context.Context, env *tools.Env, memo string) error {
	return repoErr(env.Kernel.CreateSnapshot(ctx, memo))
}

func tagSnapshot(ctx context.Context, env *tools.Env, id, name string) error {
	return repoErr(env.Kernel.TagSnapshot(ctx, id, name))
}

func removeTag(ctx context.Context, env *tools.Env, tag string) error {
	return repoErr(env.Kernel.RemoveRepoTagSnapshot(ctx, tag))
}

func diffSnapshots(ctx context.Context, env *tools.Env, left, right string) (siyuan.RepoDiff, error) {
	d, err := env.Kernel.DiffRepoSnapshots(ctx, left, right)
	return d, repoErr(err)
}

func openSnapshotFile(ctx context.Context, env *tools.Env, fileID string) (siyuan.RepoSnapshotFile, error) {
	f, err := env.Kernel.RepoSnapshotFile(ctx, fileID)
	return f, repoErr(err)
}

func rollbackFile(ctx context.Context, env *tools.Env, fileID string) error {
	return repoErr(env.Kernel.RollbackRepoSnapshotFile(ctx, fileID))
}

// maxDocBytes bounds the document file a comparison reads: past it SiYuan
// shows a snapshot's document as text, not blocks.
const maxDocBytes = 1 << 20

// readDocFile reads a document's .sy file from the workspace (its place
// comes from the kernel, never from an agent).
func readDocFile(ctx context.Context, env *tools.Env, box, path string) ([]byte, error) {
	rc, _, err := env.Kernel.GetFile(ctx, "/data/"+box+path)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(io.LimitReader(rc, maxDocBytes+1))
}

// settle waits until the second a snapshot was taken in (created, the
// kernel's milliseconds) has passed. SiYuan's repository knows a file by
// its path and modification second: a document edited within the second
// of a snapshot would look unchanged to every later snapshot, so a
// comparison would miss the edit. After a snapshot the tool takes, no
// later edit can share its second.
func settle(ctx context.Context, created int64) error {
	wait := time.Duration(1000-created%1000+20) * time.Millisecond
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(wait):
		return nil
	}
}
