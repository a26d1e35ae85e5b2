package embedded

import (
	"context"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
)

// The data repository endpoints of SiYuan 3.7.3 (kernel/api/repo.go).
// Their arguments are checked as SiYuan's BindJsonArg checks them, then
// the repository key: this kernel keeps no repository yet, so every call
// past its arguments is the missing-key refusal.

// repoKeyMissing is SiYuan's refusal of a repository call before a key
// is set (its language string 26, in English).
const repoKeyMissing = "Please initialize the data repo key first in [Settings - Account & Sync - Data repo key]"

// repoSnapshotFailed is the wording createSnapshot and tagSnapshot put
// around their failures (language string 140), with the data SiYuan adds.
func repoSnapshotFailed(msg string) error {
	return &apiError{code: -1, msg: "Failed to create data snapshot: " + msg, data: map[string]any{"closeTimeout": 5000}}
}

func (k *Kernel) repoRoutes() map[string]route {
	return map[string]route{
		endpoint.InitRepoKey:              {json: k.initRepoKey, emptyOK: true, anyBody: true},
		endpoint.CreateSnapshot:           {json: k.createSnapshot},
		endpoint.TagSnapshot:              {json: k.tagSnapshot},
		endpoint.GetRepoSnapshots:         {json: k.getRepoSnapshots},
		endpoint.GetRepoTagSnapshots:      {json: k.getRepoTagSnapshots, emptyOK: true, anyBody: true},
		endpoint.RemoveRepoTagSnapshot:    {json: k.removeRepoTagSnapshot},
		endpoint.DiffRepoSnapshots:        {json: k.diffRepoSnapshots},
		endpoint.OpenRepoSnapshotFile:     {json: k.openRepoSnapshotFile},
		endpoint.RollbackRepoSnapshotFile: {json: k.rollbackRepoSnapshotFile},
	}
}

func (k *Kernel) initRepoKey(ctx context.Context, a args) (any, error) {
	return nil, &apiError{code: -1, msg: "Failed to init data repo key: not supported", data: map[string]any{"closeTimeout": 5000}}
}

func (k *Kernel) createSnapshot(ctx context.Context, a args) (any, error) {
	if _, err := a.field("memo", false); err != nil {
		return nil, err
	}
	return nil, repoSnapshotFailed(repoKeyMissing)
}

func (k *Kernel) tagSnapshot(ctx context.Context, a args) (any, error) {
	if _, err := a.field("id", true); err != nil {
		return nil, err
	}
	if _, err := a.field("name", false); err != nil {
		return nil, err
	}
	return nil, repoSnapshotFailed(repoKeyMissing)
}

func (k *Kernel) getRepoSnapshots(ctx context.Context, a args) (any, error) {
	if _, err := a.number("page"); err != nil {
		return nil, err
	}
	return nil, errf("%s", repoKeyMissing)
}

func (k *Kernel) getRepoTagSnapshots(ctx context.Context, a args) (any, error) {
	return nil, errf("%s", repoKeyMissing)
}

func (k *Kernel) removeRepoTagSnapshot(ctx context.Context, a args) (any, error) {
	if _, err := a.field("tag", true); err != nil {
		return nil, err
	}
	return nil, errf("%s", repoKeyMissing)
}

func (k *Kernel) diffRepoSnapshots(ctx context.Context, a args) (any, error) {
	if _, err := a.field("left", true); err != nil {
		return nil, err
	}
	if _, err := a.field("right", true); err != nil {
		return nil, err
	}
	return nil, errf("%s", repoKeyMissing)
}

func (k *Kernel) openRepoSnapshotFile(ctx context.Context, a args) (any, error) {
	if _, err := a.field("id", true); err != nil {
		return nil, err
	}
	return nil, errf("%s", repoKeyMissing)
}

func (k *Kernel) rollbackRepoSnapshotFile(ctx context.Context, a args) (any, error) {
	if _, err := a.field("id", true); err != nil {
		return nil, err
	}
	return nil, errf("%s", repoKeyMissing)
}
