package siyuan

import (
	"context"
	"errors"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// The data repository, as SiYuan 3.7.3 keeps it: snapshots of the
// workspace's data directory (every file but dot files, *.tmp, the
// folders starting with a dot other than .siyuan, the data root's
// .siyuan/conf.json, storage/local.json, recent-doc.json and
// ref-used.json, the user guide's notebooks and what
// .siyuan/syncignore lists), each under a 40-hex id, listed newest
// first; tags naming a snapshot (a tag is a file name, a snapshot may
// have several, naming one again moves it); the diff of two snapshots
// by path and modification second; one file of a snapshot read or
// written back. Nothing works before a repository key is set
// ([ErrRepoKeyMissing]). Every endpoint is admin-only; the ones that
// store (not rollbackRepoSnapshotFile) are refused in read-only mode.
//
// A snapshot of data that did not change since the newest one makes no
// new snapshot: the newest stays, with its memo. The kernel answers no
// id for a snapshot it made: it is the newest of [Client.RepoSnapshots]
// page 1, read right after.

// RepoSnapshot is one snapshot (see wire.RepoSnapshot).
type RepoSnapshot = wire.RepoSnapshot

// RepoTypeCount is a count of a snapshot's files by extension.
type RepoTypeCount = wire.RepoTypeCount

// RepoSnapshotsPage is one page of snapshots (see wire.RepoSnapshotsPage).
type RepoSnapshotsPage = wire.RepoSnapshotsPage

// RepoDiff is the diff of two snapshots (see wire.RepoDiff).
type RepoDiff = wire.RepoDiff

// RepoDiffFile is one file of a diff (see wire.RepoDiffFile).
type RepoDiffFile = wire.RepoDiffFile

// RepoDiffIndex is one side of a diff.
type RepoDiffIndex = wire.RepoDiffIndex

// RepoSnapshotFile is one file of a snapshot, rendered (see
// wire.RepoSnapshotFile).
type RepoSnapshotFile = wire.RepoSnapshotFile

// RepoSnapshotsPageSize is how many snapshots a page of
// [Client.RepoSnapshots] holds.
const RepoSnapshotsPageSize = 32

// ErrRepoKeyMissing is matched by errors.Is for a repository endpoint's
// refusal because no repository key is set. The kernel gives it no code
// of its own (-1, as for every other refusal) and words it in its
// language; the English and Simplified Chinese wordings are recognised.
var ErrRepoKeyMissing = errors.New("siyuan: the data repository has no key")

// repoKeyMissingWordings are the kernel's messages for a missing
// repository key (its language string 26), in the languages recognised.
var repoKeyMissingWordings = [...]string{
	"Please initialize the data repo key first",
	"请先在 [设置 - 账号与同步 - 数据仓库密钥] 中初始化数据仓库密钥",
}

func isRepoKeyMissing(e *APIError) bool {
	if !strings.HasPrefix(e.Endpoint, "/api/repo/") {
		return false
	}
	for _, w := range repoKeyMissingWordings {
		if strings.Contains(e.Msg, w) {
			return true
		}
	}
	return false
}

// InitRepoKey makes a new random repository key and answers it (base64).
// It removes the repository first: every snapshot and tag made before is
// gone. The kernel then makes a first snapshot, "[Init] Init local data
// repo", after it answered (about two seconds later on SiYuan 3.7.3).
// Call it only when [ErrRepoKeyMissing] says there is no key.
func (c *Client) InitRepoKey(ctx context.Context) (string, error) {
	var out wire.RepoKey
	if err := c.invoke(ctx, endpoint.InitRepoKey, struct{}{}, &out); err != nil {
		return "", err
	}
	if out.Key == "" {
		return "", missingResult(endpoint.InitRepoKey, "key")
	}
	return out.Key, nil
}

// CreateSnapshot snapshots the data directory under memo (trimmed, not
// empty). The kernel answers no id (see the package notes above): read
// it with [Client.RepoSnapshots]. Data unchanged since the newest
// snapshot makes no new one.
func (c *Client) CreateSnapshot(ctx context.Context, memo string) error {
	if err := need(endpoint.CreateSnapshot, "memo", memo); err != nil {
		return err
	}
	return c.invoke(ctx, endpoint.CreateSnapshot, struct {
		Memo string `json:"memo"`
	}{memo}, nil)
}

// TagSnapshot names the snapshot id with the tag name, which must be a
// valid file name (none of \ / : * ? " ' < > |). A name already on
// another snapshot moves to this one; a snapshot may have several
// names. An unknown id is refused.
func (c *Client) TagSnapshot(ctx context.Context, id, name string) error {
	if err := need(endpoint.TagSnapshot, "id", id, "name", name); err != nil {
		return err
	}
	return c.invoke(ctx, endpoint.TagSnapshot, struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}{id, name}, nil)
}

// RepoSnapshots is page (from 1) of the snapshots, newest first,
// [RepoSnapshotsPageSize] to a page. Their Tag is always empty (see
// [Client.RepoTagSnapshots]). A page past the last is empty.
func (c *Client) RepoSnapshots(ctx context.Context, page int) (RepoSnapshotsPage, error) {
	if page < 1 {
		// The kernel answers {code:0, data:null} for page 0 or less.
		return RepoSnapshotsPage{}, invalidArg(endpoint.GetRepoSnapshots, "page must be 1 or more, got %d", page)
	}
	var out RepoSnapshotsPage
	if err := c.invoke(ctx, endpoint.GetRepoSnapshots, struct {
		Page int `json:"page"`
	}{page}, &out); err != nil {
		return RepoSnapshotsPage{}, err
	}
	if out.Snapshots == nil {
		out.Snapshots = []RepoSnapshot{}
	}
	return out, nil
}

// RepoTagSnapshots lists the tagged snapshots, one entry per tag (with
// Tag and HTagUpdated set), newest snapshot first.
func (c *Client) RepoTagSnapshots(ctx context.Context) ([]RepoSnapshot, error) {
	var out wire.RepoTagSnapshots
	if err := c.invoke(ctx, endpoint.GetRepoTagSnapshots, struct{}{}, &out); err != nil {
		return nil, err
	}
	if out.Snapshots == nil {
		out.Snapshots = []RepoSnapshot{}
	}
	return out.Snapshots, nil
}

// RemoveRepoTagSnapshot takes the tag away (the snapshot stays). A tag
// that does not exist is no error.
func (c *Client) RemoveRepoTagSnapshot(ctx context.Context, tag string) error {
	if err := need(endpoint.RemoveRepoTagSnapshot, "tag", tag); err != nil {
		return err
	}
	return c.invoke(ctx, endpoint.RemoveRepoTagSnapshot, struct {
		Tag string `json:"tag"`
	}{tag}, nil)
}

// DiffRepoSnapshots compares the snapshots left and right (see
// wire.RepoDiff for which list holds what). Its lists are never nil.
func (c *Client) DiffRepoSnapshots(ctx context.Context, left, right string) (RepoDiff, error) {
	if err := need(endpoint.DiffRepoSnapshots, "left", left, "right", right); err != nil {
		return RepoDiff{}, err
	}
	var out RepoDiff
	if err := c.invoke(ctx, endpoint.DiffRepoSnapshots, struct {
		Left  string `json:"left"`
		Right string `json:"right"`
	}{left, right}, &out); err != nil {
		return RepoDiff{}, err
	}
	for _, l := range []*[]RepoDiffFile{&out.AddsLeft, &out.RemovesRight, &out.UpdatesLeft, &out.UpdatesRight} {
		if *l == nil {
			*l = []RepoDiffFile{}
		}
	}
	return out, nil
}

// RepoSnapshotFile reads the file fileID (a [RepoDiffFile]'s FileID) of
// the repository: a document as read-only block DOM (or Markdown when
// large), a text file as its text.
func (c *Client) RepoSnapshotFile(ctx context.Context, fileID string) (RepoSnapshotFile, error) {
	if err := need(endpoint.OpenRepoSnapshotFile, "id", fileID); err != nil {
		return RepoSnapshotFile{}, err
	}
	var out RepoSnapshotFile
	err := c.invoke(ctx, endpoint.OpenRepoSnapshotFile, struct {
		ID string `json:"id"`
	}{fileID}, &out)
	return out, err
}

// RollbackRepoSnapshotFile writes the file fileID back into the data
// directory. The kernel first snapshots the data as it is ("Backup
// before checkout"; none when unchanged). A document is written at its
// current place (at its snapshot's path when it was removed), its block
// tree reloaded at once and its SQL rows re-indexed shortly after; the
// file keeps the snapshot's content, block ids and updated attributes.
func (c *Client) RollbackRepoSnapshotFile(ctx context.Context, fileID string) error {
	if err := need(endpoint.RollbackRepoSnapshotFile, "id", fileID); err != nil {
		return err
	}
	return c.invoke(ctx, endpoint.RollbackRepoSnapshotFile, struct {
		ID string `json:"id"`
	}{fileID}, nil)
}
