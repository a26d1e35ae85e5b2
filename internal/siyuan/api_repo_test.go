package siyuan

import (
	"context"
	"errors"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
)

const (
	snapA = "121e491186bc73b1554c85e31d72e31cd60ce49c"
	snapB = "f007dd21a153b73c155f2f067b35d2e10989d4ec"
	fileA = "f744c8d2751a00490b2e32dcd0da5060bffe3813"
)

// repoAPICases are the data repository's methods, with answers shaped as
// SiYuan 3.7.3 gives them.
func repoAPICases() []apiCase {
	snap := `{"id":"` + snapA + `","memo":"m","created":1796533204199,"hCreated":"2026-12-06 05:00:04","files":null,"count":2,"size":900,"hSize":"900 B","systemID":"s","systemName":"vm","systemOS":"linux","tag":"","hTagUpdated":"","typesCount":[{"type":".sy","count":2}]}`
	wantSnap := RepoSnapshot{ID: snapA, Memo: "m", Created: 1796533204199, HCreated: "2026-12-06 05:00:04", Files: []byte("null"),
		Count: 2, Size: 900, HSize: "900 B", SystemID: "s", SystemName: "vm", SystemOS: "linux", TypesCount: []RepoTypeCount{{Type: ".sy", Count: 2}}}
	diffFile := RepoDiffFile{FileID: fileA, Title: "cap doc", Path: "/" + nb + "/" + doc + ".sy", HSize: "541 B", Updated: 1796533202856}
	return []apiCase{
		{"InitRepoKey", func(ctx context.Context, c *Client) (any, error) { return c.InitRepoKey(ctx) },
			endpoint.InitRepoKey, `{}`, `{"key":"a2V5"}`, "a2V5", Write},
		{"CreateSnapshot", func(ctx context.Context, c *Client) (any, error) { return nil, c.CreateSnapshot(ctx, "memo 1") },
			endpoint.CreateSnapshot, `{"memo":"memo 1"}`, `null`, nil, Write},
		{"TagSnapshot", func(ctx context.Context, c *Client) (any, error) { return nil, c.TagSnapshot(ctx, snapA, "t1") },
			endpoint.TagSnapshot, `{"id":"` + snapA + `","name":"t1"}`, `null`, nil, Write},
		{"RepoSnapshots", func(ctx context.Context, c *Client) (any, error) { return c.RepoSnapshots(ctx, 2) },
			endpoint.GetRepoSnapshots, `{"page":2}`, `{"pageCount":1,"snapshots":[` + snap + `],"totalCount":1}`,
			RepoSnapshotsPage{PageCount: 1, Snapshots: []RepoSnapshot{wantSnap}, TotalCount: 1}, Read},
		{"RepoSnapshots past the last page", func(ctx context.Context, c *Client) (any, error) { return c.RepoSnapshots(ctx, 9) },
			endpoint.GetRepoSnapshots, `{"page":9}`, `{"pageCount":1,"snapshots":[],"totalCount":1}`,
			RepoSnapshotsPage{PageCount: 1, Snapshots: []RepoSnapshot{}, TotalCount: 1}, Read},
		{"RepoTagSnapshots", func(ctx context.Context, c *Client) (any, error) { return c.RepoTagSnapshots(ctx) },
			endpoint.GetRepoTagSnapshots, `{}`, `{"snapshots":[]}`, []RepoSnapshot{}, Read},
		{"RemoveRepoTagSnapshot", func(ctx context.Context, c *Client) (any, error) { return nil, c.RemoveRepoTagSnapshot(ctx, "t1") },
			endpoint.RemoveRepoTagSnapshot, `{"tag":"t1"}`, `null`, nil, Write},
		{"DiffRepoSnapshots", func(ctx context.Context, c *Client) (any, error) { return c.DiffRepoSnapshots(ctx, snapA, snapB) },
			endpoint.DiffRepoSnapshots, `{"left":"` + snapA + `","right":"` + snapB + `"}`,
			`{"addsLeft":[],"left":{"id":"` + snapA + `","created":1},"removesRight":[],"right":{"id":"` + snapB + `","created":2},` +
				`"updatesLeft":[{"fileID":"` + fileA + `","indexID":"","title":"cap doc","path":"/` + nb + `/` + doc + `.sy","hSize":"541 B","updated":1796533202856}],"updatesRight":[]}`,
			RepoDiff{AddsLeft: []RepoDiffFile{}, Left: RepoDiffIndex{ID: snapA, Created: 1}, RemovesRight: []RepoDiffFile{},
				Right: RepoDiffIndex{ID: snapB, Created: 2}, UpdatesLeft: []RepoDiffFile{diffFile}, UpdatesRight: []RepoDiffFile{}}, Read},
		{"RepoSnapshotFile", func(ctx context.Context, c *Client) (any, error) { return c.RepoSnapshotFile(ctx, fileA) },
			endpoint.OpenRepoSnapshotFile, `{"id":"` + fileA + `"}`, `{"content":"{}","displayInText":true,"title":"/x.json","updated":5}`,
			RepoSnapshotFile{Content: "{}", DisplayInText: true, Title: "/x.json", Updated: 5}, Read},
		{"RollbackRepoSnapshotFile", func(ctx context.Context, c *Client) (any, error) { return nil, c.RollbackRepoSnapshotFile(ctx, fileA) },
			endpoint.RollbackRepoSnapshotFile, `{"id":"` + fileA + `"}`, `null`, nil, Write},
	}
}

// TestRepoArgumentsRefusedLocally: an empty required argument, or a page
// below 1 (which SiYuan answers with {code:0,data:null}), is refused
// before anything is sent.
func TestRepoArgumentsRefusedLocally(t *testing.T) {
	c, err := New(Config{BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for name, call := range map[string]func() error{
		"CreateSnapshot":        func() error { return c.CreateSnapshot(ctx, " ") },
		"TagSnapshot id":        func() error { return c.TagSnapshot(ctx, "", "t") },
		"TagSnapshot name":      func() error { return c.TagSnapshot(ctx, snapA, "") },
		"RepoSnapshots page 0":  func() error { _, err := c.RepoSnapshots(ctx, 0); return err },
		"RemoveRepoTagSnapshot": func() error { return c.RemoveRepoTagSnapshot(ctx, "") },
		"DiffRepoSnapshots":     func() error { _, err := c.DiffRepoSnapshots(ctx, snapA, ""); return err },
		"RepoSnapshotFile":      func() error { _, err := c.RepoSnapshotFile(ctx, ""); return err },
		"RollbackRepoSnapshotFile": func() error {
			return c.RollbackRepoSnapshotFile(ctx, "")
		},
	} {
		if err := call(); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s: got %v, want ErrInvalidArgument", name, err)
		}
	}
}

// TestRepoKeyMissing: the missing-key refusal is recognised by its
// wording on the repository endpoints only.
func TestRepoKeyMissing(t *testing.T) {
	const en = "Please initialize the data repo key first in [Settings - Account & Sync - Data repo key]"
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"english", &APIError{Endpoint: endpoint.GetRepoSnapshots, Code: -1, Msg: en}, true},
		{"wrapped in createSnapshot's words", &APIError{Endpoint: endpoint.CreateSnapshot, Code: -1, Msg: "Failed to create data snapshot: " + en}, true},
		{"chinese", &APIError{Endpoint: endpoint.DiffRepoSnapshots, Code: -1, Msg: "请先在 [设置 - 账号与同步 - 数据仓库密钥] 中初始化数据仓库密钥"}, true},
		{"another refusal", &APIError{Endpoint: endpoint.TagSnapshot, Code: -1, Msg: "Failed to create data snapshot: Input can not be empty"}, false},
		{"another endpoint", &APIError{Endpoint: endpoint.GetFile, Code: -1, Msg: en}, false},
	} {
		if got := errors.Is(tc.err, ErrRepoKeyMissing); got != tc.want {
			t.Errorf("%s: errors.Is = %v, want %v", tc.name, got, tc.want)
		}
	}
}
