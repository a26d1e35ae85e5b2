package timeline

import (
	"context"
	"io"
	"slices"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// The data repository's endpoints, as the tool calls them. (SiYuan's
// repository answers are decoded here into the fields the tool uses.)

// snapshot is one repository snapshot as SiYuan lists it.
type snapshot struct {
	ID      string `json:"id"`
	Memo    string `json:"memo"`
	Created int64  `json:"created"`
	Tag     string `json:"tag"`
}

// diffFile is one file of a diff between two snapshots.
type diffFile struct {
	FileID string `json:"fileID"`
	Path   string `json:"path"`
}

// snapshotDiff is SiYuan's diff of two snapshots: addsLeft are the files
// only the right one holds, removesRight those only the left one holds,
// updatesLeft/updatesRight both versions of a changed file.
type snapshotDiff struct {
	AddsLeft     []diffFile `json:"addsLeft"`
	UpdatesLeft  []diffFile `json:"updatesLeft"`
	UpdatesRight []diffFile `json:"updatesRight"`
	RemovesRight []diffFile `json:"removesRight"`
}

// snapshotFile is a file of a snapshot as SiYuan opens it: a document is
// its block DOM, or its kramdown text when it is large (displayInText).
type snapshotFile struct {
	Title         string `json:"title"`
	Content       string `json:"content"`
	DisplayInText bool   `json:"displayInText"`
}

func tagSnapshots(ctx context.Context, env *tools.Env) ([]snapshot, error) {
	var out struct {
		Snapshots []snapshot `json:"snapshots"`
	}
	err := env.Kernel.Do(ctx, "/api/repo/getRepoTagSnapshots", nil, &out, siyuan.Read)
	return out.Snapshots, err
}

func newestSnapshots(ctx context.Context, env *tools.Env) ([]snapshot, error) {
	var out struct {
		Snapshots []snapshot `json:"snapshots"`
	}
	err := env.Kernel.Do(ctx, "/api/repo/getRepoSnapshots", map[string]any{"page": 1}, &out, siyuan.Read)
	slices.SortStableFunc(out.Snapshots, func(a, b snapshot) int { return int(b.Created - a.Created) })
	return out.Snapshots, err
}

func createSnapshot(ctx context.Context, env *tools.Env, memo string) error {
	return env.Kernel.Do(ctx, "/api/repo/createSnapshot", map[string]any{"memo": memo}, nil, siyuan.Write)
}

func tagSnapshot(ctx context.Context, env *tools.Env, id, name string) error {
	return env.Kernel.Do(ctx, "/api/repo/tagSnapshot", map[string]any{"id": id, "name": name}, nil, siyuan.Write)
}

func removeTag(ctx context.Context, env *tools.Env, tag string) error {
	return env.Kernel.Do(ctx, "/api/repo/removeRepoTagSnapshot", map[string]any{"tag": tag}, nil, siyuan.Write)
}

func diffSnapshots(ctx context.Context, env *tools.Env, left, right string) (snapshotDiff, error) {
	var out snapshotDiff
	err := env.Kernel.Do(ctx, "/api/repo/diffRepoSnapshots", map[string]any{"left": left, "right": right}, &out, siyuan.Read)
	return out, err
}

func openSnapshotFile(ctx context.Context, env *tools.Env, fileID string) (snapshotFile, error) {
	var out snapshotFile
	err := env.Kernel.Do(ctx, "/api/repo/openRepoSnapshotFile", map[string]any{"id": fileID}, &out, siyuan.Read)
	return out, err
}

func rollbackFile(ctx context.Context, env *tools.Env, fileID string) error {
	return env.Kernel.Do(ctx, "/api/repo/rollbackRepoSnapshotFile", map[string]any{"id": fileID}, nil, siyuan.Write)
}

// maxDocBytes bounds the document file a comparison reads: past it SiYuan
// shows a snapshot's document as text, not blocks.
const maxDocBytes = 1 << 20

// readDocFile reads a document's .sy file from the workspace.
func readDocFile(ctx context.Context, env *tools.Env, box, path string) ([]byte, error) {
	rc, _, err := env.Kernel.GetFile(ctx, "/data/"+box+path)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(io.LimitReader(rc, maxDocBytes+1))
}
