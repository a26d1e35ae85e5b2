package block

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/settings"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/kernelview"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// BenchmarkStrictUpdate compares, on one kernel in one run:
//   - strict: block.update preflight + commit through the coordinator;
//   - bare-calls: the kernel calls that flow must make, made directly
//     (state read, state read, updateBlock, state read);
//   - bare-update: one updateBlock.
//
// strict - bare-calls is the coordinator's overhead (leases, aliases,
// hashing, ledger with fsync). With SISYPHUS_BENCH_URL and
// SISYPHUS_BENCH_TOKEN it runs against any SiYuan kernel.
func BenchmarkStrictUpdate(b *testing.B) {
	ctx := context.Background()
	c := tooltest.BenchKernel(b)
	nb, err := c.CreateNotebook(ctx, fmt.Sprintf("sisyphus-bench-%d", time.Now().UnixNano()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.RemoveNotebook(context.Background(), nb.ID) })
	var md strings.Builder
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&md, "Paragraph %d with **some** text.\n\n", i)
	}
	doc, err := c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: nb.ID, Path: "/bench", Markdown: md.String()})
	if err != nil {
		b.Fatal(err)
	}
	kids, _ := c.GetChildBlocks(ctx, doc)
	id := kids[100].ID
	l, err := strict.OpenLedger(filepath.Join(b.TempDir(), "ledger.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	r, err := tools.NewRegistry(&tools.Env{Kernel: c, Coordinator: strict.NewCoordinator(strict.CoordinatorConfig{Ledger: l})}, testTools()...)
	if err != nil {
		b.Fatal(err)
	}
	// The same registry under the real gate as the authority runs it: the
	// configuration from its cached store and the block resolved to its
	// notebook (the bench notebook is rwd, the default r, so the gate
	// resolves). The stored permissions are restored afterwards.
	store := settings.NewCachedStore(c, 2*time.Second)
	before, _, restoreErr := readPermissions(ctx, c)
	if restoreErr == nil {
		b.Cleanup(func() { restorePermissions(context.Background(), c, before) })
	}
	if _, err := store.Apply(ctx, settings.Change{Notebook: nb.ID, Permission: "rwd"}); err != nil {
		b.Fatal(err)
	}
	gated, err := tools.NewRegistry(&tools.Env{Kernel: c, Coordinator: strict.NewCoordinator(strict.CoordinatorConfig{Ledger: l}), Policies: store.Policy}, testTools()...)
	if err != nil {
		b.Fatal(err)
	}
	env := &tools.Env{Kernel: c}
	call, callGated := tooltest.Caller(b, ctx, r, "block"), tooltest.Caller(b, ctx, gated, "block")
	ops := []tooltest.Op{
		{Name: "strict", Fn: func(i int) {
			args := map[string]any{"action": "update", "id": id, "data": fmt.Sprintf("strict %d", i)}
			pre := call(tooltest.CopyArgs(args, "validateOnly", true))
			call(tooltest.CommitArgs(args, pre))
		}},
		{Name: "strict-gated", Fn: func(i int) {
			args := map[string]any{"action": "update", "id": id, "data": fmt.Sprintf("gated %d", i)}
			pre := callGated(tooltest.CopyArgs(args, "validateOnly", true))
			callGated(tooltest.CommitArgs(args, pre))
		}},
		{Name: "bare-calls", Fn: func(i int) {
			if _, err := kernelview.ReadBlockStates(ctx, env, []string{id}); err != nil {
				b.Fatal(err)
			}
			st, err := kernelview.ReadBlockStates(ctx, env, []string{id})
			if err != nil {
				b.Fatal(err)
			}
			if _, _, err := updateKeeping(ctx, c, id, "markdown", fmt.Sprintf("bare %d", i), true, st[0].Attrs); err != nil {
				b.Fatal(err)
			}
			if _, err := kernelview.ReadBlockStates(ctx, env, []string{id}); err != nil {
				b.Fatal(err)
			}
		}},
		{Name: "bare-update", Fn: func(i int) {
			if _, err := c.UpdateBlock(ctx, id, "markdown", fmt.Sprintf("one %d", i)); err != nil {
				b.Fatal(err)
			}
		}},
	}
	tooltest.BenchLatency(b, ops)
}

// BenchmarkLargeUpdate: one strict block.update (preflight + commit) with
// data of 64 KiB to 8 MiB, on a block without and with a custom attribute
// (an update keeps attributes, which once made it quadratic in the size).
// The cost must grow linearly and be the same with or without attributes.
//
//	go test ./internal/tools/block -run '^$' -bench BenchmarkLargeUpdate -benchtime 3x
func BenchmarkLargeUpdate(b *testing.B) {
	for _, attrs := range []bool{false, true} {
		for _, size := range []int{64 << 10, 256 << 10, 512 << 10, 1 << 20, 3 << 20, 8 << 20} {
			name := fmt.Sprintf("attrs=%v/size=%dKiB", attrs, size>>10)
			b.Run(name, func(b *testing.B) {
				s := tooltest.NewStrict(b, false, testTools)
				s.CloseLedger()
				s.MaxWriteBytes = 16 << 20 // past the default cap, to measure
				s.Reopen(b, false)
				id := s.Blocks[0]
				if attrs {
					s.OK(b, "block", tooltest.CommitArgs(map[string]any{"action": "set_attrs", "id": id, "attrs": map[string]any{"custom-tag": "1"}},
						s.OK(b, "block", map[string]any{"action": "set_attrs", "id": id, "attrs": map[string]any{"custom-tag": "1"}, "validateOnly": true})))
				}
				b.SetBytes(int64(size))
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					data := strings.Repeat(fmt.Sprintf("run %d lorem ipsum dolor sit amet ", i), size/32)[:size]
					args := map[string]any{"action": "update", "id": id, "data": data}
					pre := s.OK(b, "block", tooltest.CopyArgs(args, "validateOnly", true))
					if res := s.OK(b, "block", tooltest.CommitArgs(args, pre)); res["status"] != "committed" {
						b.Fatalf("commit: %v", res)
					}
				}
			})
		}
	}
}

// readPermissions returns the stored permissions file (absent: nil).
func readPermissions(ctx context.Context, c *siyuan.Client) ([]byte, bool, error) {
	body, _, err := c.GetFile(ctx, settings.PermissionsFile)
	if errors.Is(err, siyuan.ErrFileNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer body.Close()
	data, err := io.ReadAll(body)
	return data, true, err
}

// restorePermissions puts back what readPermissions returned.
func restorePermissions(ctx context.Context, c *siyuan.Client, data []byte) {
	if data == nil {
		c.RemoveFile(ctx, settings.PermissionsFile)
		return
	}
	c.PutFile(ctx, siyuan.PutFileRequest{Path: settings.PermissionsFile, Body: bytes.NewReader(data)})
}
