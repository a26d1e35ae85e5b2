package file

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// BenchmarkFileWrites compares, on one kernel in one run, a strict
// upload_asset (256 KiB, staged) and a strict create_template (4 KiB), each
// preflight + commit through the coordinator, with the kernel calls those
// flows make, made directly, and with the one bare kernel write:
//
//   - upload: strict; bare-calls = uploadAsset + getFile (the readback
//     hashes the stored asset); bare-upload = uploadAsset;
//   - template: strict; bare-calls = getFile ×2 (the state at preflight
//     and at commit) + putFile + getFile (readback); bare-put = putFile.
//
// With SISYPHUS_BENCH_URL and SISYPHUS_BENCH_TOKEN it runs against any
// SiYuan kernel; it removes the assets and templates it wrote.
//
//	go test ./internal/tools/file -run '^$' -bench BenchmarkFileWrites -benchtime 100x
func BenchmarkFileWrites(b *testing.B) {
	ctx := context.Background()
	c := tooltest.BenchKernel(b)
	l, err := strict.OpenLedger(filepath.Join(b.TempDir(), "ledger.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	src := &tooltest.MemSources{}
	r, err := tools.NewRegistry(&tools.Env{Kernel: c, Coordinator: strict.NewCoordinator(strict.CoordinatorConfig{Ledger: l}), Sources: src}, Tool())
	if err != nil {
		b.Fatal(err)
	}
	ctx = tools.WithConfirmed(ctx, "file", "upload_asset")
	call := tooltest.Caller(b, ctx, r, "file")
	stamp := time.Now().UnixNano()
	dir := fmt.Sprintf("/assets/sisyphus-bench-%d/", stamp)
	tplDir := fmt.Sprintf("sisyphus-bench-%d", stamp)
	b.Cleanup(func() {
		c.RemoveFile(context.Background(), "/data"+dir)
		c.RemoveFile(context.Background(), "/data/templates/"+tplDir)
	})
	pic := make([]byte, 256<<10)
	rand.Read(pic)
	tpl := bytes.Repeat([]byte("## .action{.title}\n\n- item\n"), 4<<10/28)
	ops := []tooltest.Op{
		{Name: "upload/strict", Fn: func(i int) {
			h := src.Put(fmt.Sprintf("s%d.png", i), pic)
			args := map[string]any{"action": "upload_asset", "uploadSource": h, "assetsDirPath": dir}
			pre := call(tooltest.CopyArgs(args, "validateOnly", true))
			if res := call(tooltest.CommitArgs(args, pre)); res["status"] != "committed" {
				b.Fatal(res)
			}
		}},
		{Name: "upload/bare-calls", Fn: func(i int) {
			res, err := c.UploadAsset(ctx, siyuan.AssetUploadRequest{AssetsDirPath: dir, Files: []siyuan.UploadFile{{Name: fmt.Sprintf("c%d.png", i), Body: bytes.NewReader(pic)}}})
			if err != nil {
				b.Fatal(err)
			}
			if _, _, err := digestFile(ctx, c, workspace(res.SuccMap[fmt.Sprintf("c%d.png", i)])); err != nil {
				b.Fatal(err)
			}
		}},
		{Name: "upload/bare-upload", Fn: func(i int) {
			if _, err := c.UploadAsset(ctx, siyuan.AssetUploadRequest{AssetsDirPath: dir, Files: []siyuan.UploadFile{{Name: fmt.Sprintf("u%d.png", i), Body: bytes.NewReader(pic)}}}); err != nil {
				b.Fatal(err)
			}
		}},
		{Name: "template/strict", Fn: func(i int) {
			args := map[string]any{"action": "create_template", "path": fmt.Sprintf("%s/s%d.md", tplDir, i), "content": string(tpl)}
			pre := call(tooltest.CopyArgs(args, "validateOnly", true))
			if res := call(tooltest.CommitArgs(args, pre)); res["status"] != "committed" {
				b.Fatal(res)
			}
		}},
		{Name: "template/bare-calls", Fn: func(i int) {
			p := fmt.Sprintf("/data/templates/%s/c%d.md", tplDir, i)
			for range 2 {
				if _, _, err := digestFile(ctx, c, p); err != nil && !missingFile(err) {
					b.Fatal(err)
				}
			}
			if err := c.PutFile(ctx, siyuan.PutFileRequest{Path: p, Body: bytes.NewReader(tpl)}); err != nil {
				b.Fatal(err)
			}
			if _, _, err := digestFile(ctx, c, p); err != nil {
				b.Fatal(err)
			}
		}},
		{Name: "template/bare-put", Fn: func(i int) {
			if err := c.PutFile(ctx, siyuan.PutFileRequest{Path: fmt.Sprintf("/data/templates/%s/p%d.md", tplDir, i), Body: bytes.NewReader(tpl)}); err != nil {
				b.Fatal(err)
			}
		}},
	}
	tooltest.BenchLatency(b, ops)
}
