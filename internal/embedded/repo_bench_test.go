package embedded

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/testvars"
)

// BenchmarkRepoSnapshot measures what a data repository snapshot costs on
// a workspace of 1,000 documents (ten paragraphs each), through the
// client: the first snapshot of them all ("first", reported once as
// first-ms and first-MB, the repository's growth), then b.N snapshots
// each after one document changed (the timeline's case: ms/op, and the
// repository's growth per snapshot as KB/op), and one of unchanged data
// ("unchanged-ms").
//
// By default it runs against an embedded kernel. With SISYPHUS_BENCH_URL
// and SISYPHUS_BENCH_TOKEN it runs against that kernel, which must
// already have a repository key; it snapshots that whole workspace,
// makes its documents in a notebook of its own and removes it at the end
// (the snapshots stay: SiYuan has no call that removes one). The
// repository's size is measured when the kernel's workspace is on this
// machine (getWorkspaceInfo).
func BenchmarkRepoSnapshot(b *testing.B) {
	ctx := context.Background()
	url, token := testvars.BenchKernel(b)
	var repoDir string
	if url == "" {
		dir := b.TempDir()
		k, err := Open(ctx, Options{Dir: dir, Token: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		srv := httptest.NewServer(k.Handler())
		b.Cleanup(func() { srv.Close(); k.Close() })
		url, token, repoDir = srv.URL, "bench", filepath.Join(dir, "repo")
	}
	c, err := siyuan.New(siyuan.Config{BaseURL: url, Token: token, Timeout: 10 * time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := c.RepoSnapshots(ctx, 1); errors.Is(err, siyuan.ErrRepoKeyMissing) {
		if repoDir == "" {
			b.Skip("the kernel has no data repository key: set one in SiYuan first")
		}
		if _, err := c.InitRepoKey(ctx); err != nil {
			b.Fatal(err)
		}
	} else if err != nil {
		b.Fatal(err)
	}
	if repoDir == "" {
		if info, err := c.GetWorkspaceInfo(ctx); err == nil {
			if _, err := os.Stat(filepath.Join(info.WorkspaceDir, "repo")); err == nil {
				repoDir = filepath.Join(info.WorkspaceDir, "repo")
			}
		}
	}
	nb, err := c.CreateNotebook(ctx, fmt.Sprintf("sisyphus-bench-repo-%d", time.Now().UnixNano()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := c.RemoveNotebook(context.Background(), nb.ID); err != nil {
			b.Errorf("remove the benchmark's notebook: %v", err)
		}
	})
	var md strings.Builder
	for i := range 10 {
		fmt.Fprintf(&md, "Paragraph %d of a benchmark document, with **some** text to make it realistic.\n\n", i)
	}
	const docs = 1000
	firstBlocks := make([]string, docs)
	for i := range docs {
		id, err := c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: nb.ID, Path: fmt.Sprintf("/doc %04d", i), Markdown: md.String()})
		if err != nil {
			b.Fatal(err)
		}
		kids, err := c.GetChildBlocks(ctx, id)
		if err != nil || len(kids) == 0 {
			b.Fatalf("children of %s: %v", id, err)
		}
		firstBlocks[i] = kids[0].ID
	}
	if err := c.FlushTransaction(ctx); err != nil {
		b.Fatal(err)
	}

	size0 := dirSize(repoDir)
	start := time.Now()
	if err := c.CreateSnapshot(ctx, "sisyphus-bench first"); err != nil {
		b.Fatal(err)
	}
	first := time.Since(start)
	size1 := dirSize(repoDir)
	// A file's versions are told apart by modification second.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(1100 * time.Millisecond)))

	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if _, err := c.UpdateBlock(ctx, firstBlocks[i%docs], "markdown", fmt.Sprintf("Changed for snapshot %d", i)); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := c.CreateSnapshot(ctx, fmt.Sprintf("sisyphus-bench %d", i)); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	size2 := dirSize(repoDir)
	start = time.Now()
	if err := c.CreateSnapshot(ctx, "sisyphus-bench unchanged"); err != nil {
		b.Fatal(err)
	}
	unchanged := time.Since(start)
	p, err := c.RepoSnapshots(ctx, 1)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(first.Microseconds())/1000, "first-ms")
	b.ReportMetric(float64(unchanged.Microseconds())/1000, "unchanged-ms")
	if repoDir != "" {
		b.ReportMetric(float64(size1-size0)/1e6, "first-MB")
		b.ReportMetric(float64(size2-size1)/1e3/float64(b.N), "KB/op")
	}
	if len(p.Snapshots) > 0 {
		b.ReportMetric(float64(p.Snapshots[0].Count), "files")
		b.ReportMetric(float64(p.Snapshots[0].Size)/1e6, "data-MB")
	}
}

// dirSize is the bytes of the regular files under dir (0 for "").
func dirSize(dir string) int64 {
	if dir == "" {
		return 0
	}
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
