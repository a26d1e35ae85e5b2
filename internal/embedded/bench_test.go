package embedded

import (
	"context"
	"fmt"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/testvars"
)

// BenchmarkKernelOps measures the block operations Sisyphus leans on, over
// HTTP through the client, on a 1,000-block document, and reports p50/p99.
//
// By default it runs against an embedded kernel. With SISYPHUS_BENCH_URL and
// SISYPHUS_BENCH_TOKEN it runs the same operations against any SiYuan
// kernel (it creates and removes its own notebook), so both can be measured
// on one machine in one session.
func BenchmarkKernelOps(b *testing.B) {
	ctx := context.Background()
	url, token := testvars.BenchKernel(b)
	if url == "" {
		k, err := Open(ctx, Options{Dir: b.TempDir(), Token: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		srv := httptest.NewServer(k.Handler())
		b.Cleanup(func() { srv.Close(); k.Close() })
		url, token = srv.URL, "bench"
	}
	c, err := siyuan.New(siyuan.Config{BaseURL: url, Token: token})
	if err != nil {
		b.Fatal(err)
	}
	nb, err := c.CreateNotebook(ctx, fmt.Sprintf("sisyphus-bench-%d", time.Now().UnixNano()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.RemoveNotebook(context.Background(), nb.ID) })
	var md strings.Builder
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&md, "Paragraph %d with **some** text to make it realistic.\n\n", i)
	}
	doc, err := c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: nb.ID, Path: "/bench", Markdown: md.String()})
	if err != nil {
		b.Fatal(err)
	}
	children, err := c.GetChildBlocks(ctx, doc)
	if err != nil || len(children) < 1000 {
		b.Fatalf("document has %d blocks: %v", len(children), err)
	}
	target := children[500].ID

	ops := []struct {
		name string
		fn   func(i int) error
	}{
		{"getBlockKramdown", func(int) error { _, err := c.GetBlockKramdown(ctx, target); return err }},
		{"getBlockAttrs", func(int) error { _, err := c.GetBlockAttrs(ctx, target); return err }},
		{"updateBlock", func(i int) error {
			_, err := c.UpdateBlock(ctx, target, "markdown", fmt.Sprintf("Updated paragraph %d", i))
			return err
		}},
		{"appendBlock", func(i int) error {
			_, err := c.AppendBlock(ctx, "markdown", fmt.Sprintf("Appended %d", i), doc)
			return err
		}},
		{"setBlockAttrs", func(i int) error {
			return c.SetBlockAttrs(ctx, target, map[string]string{"custom-bench": fmt.Sprint(i)})
		}},
	}
	for _, op := range ops {
		b.Run(op.name, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				if err := op.fn(i); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[(len(lat)*99)/100].Microseconds())/1000, "p99-ms")
		})
	}
}
