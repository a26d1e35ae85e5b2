package transfer

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/testvars"
)

var _ FileGetter = (*siyuan.Client)(nil) // the fronts' own kernel client

// fakeKernel serves workspace files from memory; a path in stall gives its
// first bytes and then blocks until the request's context ends.
type fakeKernel struct {
	files map[string][]byte
	stall map[string]bool
	calls atomic.Int64
}

func (k *fakeKernel) GetFile(ctx context.Context, p string) (io.ReadCloser, string, error) {
	k.calls.Add(1)
	data, ok := k.files[p]
	if !ok {
		return nil, "", siyuan.ErrFileNotFound
	}
	if k.stall[p] {
		return io.NopCloser(io.MultiReader(bytes.NewReader(data), stalled{ctx})), "application/octet-stream", nil
	}
	return io.NopCloser(bytes.NewReader(data)), "application/octet-stream", nil
}

type stalled struct{ ctx context.Context }

func (s stalled) Read([]byte) (int, error) { <-s.ctx.Done(); return 0, s.ctx.Err() }

// tree lists every path under dir (relative, slash-separated), with a
// trailing slash for directories.
func tree(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			rel += "/"
		}
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	return out
}

func TestDownloadOneFile(t *testing.T) {
	zip := bytes.Repeat([]byte("PK\x03\x04 zip bytes "), 200_000)
	k := &fakeKernel{files: map[string][]byte{"/temp/export/r.zip": zip}}
	dir := t.TempDir()
	writeFile(t, dir, "sibling.txt", []byte("keep me"))
	var progress []Progress
	d := &Downloader{Kernel: k, Progress: func(p Progress) { progress = append(progress, p) }}
	dst := filepath.Join(dir, "new", "deeper", "r.zip")
	res, err := d.Download(context.Background(), File{KernelPath: "/temp/export/r.zip", Size: int64(len(zip))}, dst)
	if err != nil {
		t.Fatal(err)
	}
	if res.Path != dst || res.SHA256 != hexSum(zip) || res.Size != int64(len(zip)) {
		t.Fatalf("result %+v", res)
	}
	if got, _ := os.ReadFile(dst); !bytes.Equal(got, zip) {
		t.Fatal("saved bytes differ")
	}
	if got := tree(t, dir); !slices.Equal(got, []string{"new/", "new/deeper/", "new/deeper/r.zip", "sibling.txt"}) {
		t.Fatalf("tree %v", got)
	}
	if len(progress) < 3 || progress[len(progress)-1].Done != int64(len(zip)) || progress[0].Total != int64(len(zip)) {
		t.Fatalf("progress %v", progress)
	}
	for i := 1; i < len(progress); i++ {
		if progress[i].Done < progress[i-1].Done {
			t.Fatalf("progress went back: %v", progress)
		}
	}
}

// TestDownloadRefusesExisting: an existing file, directory or link at the
// destination is refused before anything is fetched or written.
func TestDownloadRefusesExisting(t *testing.T) {
	k := &fakeKernel{files: map[string][]byte{"/temp/x.zip": []byte("new")}}
	for _, kind := range []string{"file", "directory", "dangling link"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			dst := filepath.Join(dir, "out.zip")
			switch kind {
			case "file":
				writeFile(t, dir, "out.zip", []byte("old"))
			case "directory":
				os.Mkdir(dst, 0o755)
				writeFile(t, dst, "inside", []byte("old"))
			case "dangling link":
				os.Symlink(filepath.Join(dir, "nowhere"), dst)
			}
			before := tree(t, dir)
			d := &Downloader{Kernel: k}
			_, err := d.Download(context.Background(), File{KernelPath: "/temp/x.zip"}, dst)
			if codeOf(err) != failure.DestinationExists {
				t.Fatalf("err %v", err)
			}
			if _, err := d.Extract(context.Background(), []File{{KernelPath: "/temp/x.zip", Dest: "a"}}, dst); codeOf(err) != failure.DestinationExists {
				t.Fatalf("extract: %v", err)
			}
			if after := tree(t, dir); !slices.Equal(before, after) || k.calls.Load() != 0 {
				t.Fatalf("tree %v → %v, %d fetches", before, after, k.calls.Load())
			}
			if kind == "file" {
				if b, _ := os.ReadFile(dst); string(b) != "old" {
					t.Fatal("the existing file was changed")
				}
			}
		})
	}
}

func TestExtractDocument(t *testing.T) {
	md := []byte("# Doc\n\n![](assets/a.png)\n")
	png := bytes.Repeat([]byte{0x89, 'P', 'N', 'G'}, 5000)
	k := &fakeKernel{files: map[string][]byte{"/temp/export/doc.md": md, "/data/assets/a.png": png}}
	parent := t.TempDir()
	writeFile(t, parent, "sibling.md", []byte("keep"))
	dir := filepath.Join(parent, "Doc")
	var last Progress
	d := &Downloader{Kernel: k, Progress: func(p Progress) { last = p }}
	res, err := d.Extract(context.Background(), []File{
		{KernelPath: "/temp/export/doc.md", Dest: "Doc.md", Size: int64(len(md))},
		{KernelPath: "/data/assets/a.png", Dest: "assets/a.png", Size: int64(len(png))},
	}, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].SHA256 != hexSum(md) || res[1].SHA256 != hexSum(png) || res[1].Path != filepath.Join(dir, "assets", "a.png") {
		t.Fatalf("results %+v", res)
	}
	if got := tree(t, parent); !slices.Equal(got, []string{"Doc/", "Doc/Doc.md", "Doc/assets/", "Doc/assets/a.png", "sibling.md"}) {
		t.Fatalf("tree %v", got)
	}
	if want := int64(len(md) + len(png)); last.Done != want || last.Total != want {
		t.Fatalf("progress %+v", last)
	}
}

// TestFailuresRemoveOnlyTheirOwnOutput: whatever fails, the call removes
// what it created (its temp files, the extraction directory, the parents
// it made) and nothing else.
func TestFailuresRemoveOnlyTheirOwnOutput(t *testing.T) {
	k := &fakeKernel{
		files: map[string][]byte{"/ok": []byte("fine"), "/big": bytes.Repeat([]byte{0}, 3000), "/slow": []byte("some bytes, then nothing"),
			"/short": []byte("abc")},
		stall: map[string]bool{"/slow": true},
	}
	for _, tt := range []struct {
		name    string
		d       Downloader
		files   []File
		cancel  bool
		code    failure.Code
		isCause error
	}{
		{"overflow of one file", Downloader{MaxBytes: 1000}, []File{{KernelPath: "/big", Dest: "big"}}, false, failure.DownloadTooLarge, nil},
		{"overflow of the running total", Downloader{MaxBytes: 3005}, []File{{KernelPath: "/ok", Dest: "a"}, {KernelPath: "/ok", Dest: "b"}, {KernelPath: "/big", Dest: "c/big"}}, false, failure.DownloadTooLarge, nil},
		{"declared over the limit", Downloader{MaxBytes: 10}, []File{{KernelPath: "/ok", Dest: "a", Size: 11}}, false, failure.DownloadTooLarge, nil},
		{"missing kernel file", Downloader{}, []File{{KernelPath: "/ok", Dest: "a"}, {KernelPath: "/gone", Dest: "b"}}, false, failure.TransferFailed, siyuan.ErrFileNotFound},
		{"deadline", Downloader{FileTimeout: 50 * time.Millisecond}, []File{{KernelPath: "/ok", Dest: "a"}, {KernelPath: "/slow", Dest: "s/slow"}}, false, failure.TransferFailed, context.DeadlineExceeded},
		{"cancelled mid-stream", Downloader{}, []File{{KernelPath: "/slow", Dest: "slow"}}, true, failure.TransferFailed, context.Canceled},
		{"size mismatch", Downloader{}, []File{{KernelPath: "/short", Dest: "x", Size: 4}}, false, failure.TransferFailed, nil},
	} {
		for _, mode := range []string{"download", "extract"} {
			if mode == "download" && len(tt.files) > 1 {
				continue
			}
			t.Run(tt.name+"/"+mode, func(t *testing.T) {
				root := t.TempDir()
				writeFile(t, root, "sibling", []byte("keep"))
				os.Mkdir(filepath.Join(root, "existing"), 0o755)
				writeFile(t, filepath.Join(root, "existing"), "old", []byte("keep"))
				before := tree(t, root)
				d := tt.d
				d.Kernel = k
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if tt.cancel {
					time.AfterFunc(50*time.Millisecond, cancel)
				}
				var err error
				start := time.Now()
				if mode == "download" {
					_, err = d.Download(ctx, tt.files[0], filepath.Join(root, "existing", "new", "out"))
				} else {
					_, err = d.Extract(ctx, tt.files, filepath.Join(root, "existing", "made", "doc"))
				}
				if codeOf(err) != tt.code || (tt.isCause != nil && !errors.Is(err, tt.isCause)) {
					t.Fatalf("err %v, want %s (%v)", err, tt.code, tt.isCause)
				}
				if after := tree(t, root); !slices.Equal(before, after) {
					t.Fatalf("left behind: %v → %v", before, after)
				}
				if time.Since(start) > 5*time.Second {
					t.Fatalf("took %s", time.Since(start))
				}
			})
		}
	}
}

func TestManifestRefusals(t *testing.T) {
	k := &fakeKernel{files: map[string][]byte{"/a": []byte("a")}}
	d := &Downloader{Kernel: k}
	for _, tt := range []struct {
		name  string
		files []File
	}{
		{"empty", nil},
		{"no source", []File{{Dest: "a"}}},
		{"two sources", []File{{KernelPath: "/a", AuthorityPath: "/x", Dest: "a"}}},
		{"authority path without an authority", []File{{AuthorityPath: "/x", Dest: "a"}}},
		{"no dest", []File{{KernelPath: "/a"}}},
		{"absolute", []File{{KernelPath: "/a", Dest: "/etc/passwd"}}},
		{"dot dot", []File{{KernelPath: "/a", Dest: "../a"}}},
		{"inner dot dot", []File{{KernelPath: "/a", Dest: "x/../../a"}}},
		{"unclean", []File{{KernelPath: "/a", Dest: "x//a"}}},
		{"backslash", []File{{KernelPath: "/a", Dest: `x\a`}}},
		{"duplicate", []File{{KernelPath: "/a", Dest: "a"}, {KernelPath: "/a", Dest: "a"}}},
		{"file and directory", []File{{KernelPath: "/a", Dest: "a"}, {KernelPath: "/a", Dest: "a/b"}}},
		{"negative size", []File{{KernelPath: "/a", Dest: "a", Size: -1}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			_, err := d.Extract(context.Background(), tt.files, dir)
			if codeOf(err) != failure.InvalidArguments {
				t.Fatalf("err %v", err)
			}
			if _, err := os.Lstat(dir); !os.IsNotExist(err) {
				t.Fatal("the directory was created")
			}
		})
	}
	if k.calls.Load() != 0 {
		t.Fatal("a refused manifest fetched files")
	}
}

// TestDownloadThroughTheKernelClient goes through *siyuan.Client against an
// HTTP server that answers getFile as SiYuan does, and through an Authority
// for an authorityPath entry.
func TestDownloadThroughTheKernelClient(t *testing.T) {
	data := bytes.Repeat([]byte("kernel bytes "), 10_000)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/api/file/getFile" && r.Header.Get("Authorization") == "Token k":
			w.Header().Set("Content-Type", "application/zip")
			w.Write(data)
		case r.URL.Path == "/transfer/files/x":
			w.Write(data[:100])
		default:
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	defer hs.Close()
	c, err := siyuan.New(siyuan.Config{BaseURL: hs.URL, Token: "k"})
	if err != nil {
		t.Fatal(err)
	}
	d := &Downloader{Kernel: c, Authority: &serverAuthority{url: hs.URL}}
	dir := t.TempDir()
	res, err := d.Download(context.Background(), File{KernelPath: "/temp/export/a.zip"}, filepath.Join(dir, "a.zip"))
	if err != nil || res.SHA256 != hexSum(data) {
		t.Fatalf("%+v %v", res, err)
	}
	res, err = d.Download(context.Background(), File{AuthorityPath: "/transfer/files/x"}, filepath.Join(dir, "x"))
	if err != nil || res.SHA256 != hexSum(data[:100]) {
		t.Fatalf("authority path: %+v %v", res, err)
	}
}

// zeros is an endless stream of zero bytes, counted.
type zeros struct{ n int64 }

func (z *zeros) Read(p []byte) (int, error) { clear(p); z.n += int64(len(p)); return len(p), nil }

// zeroServer streams size zero bytes for getFile (-1: without end).
func zeroServer(t testing.TB, size int64) *siyuan.Client {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var src io.Reader = &zeros{}
		if size >= 0 {
			src = io.LimitReader(src, size)
		}
		io.CopyBuffer(w, src, make([]byte, 256<<10))
	}))
	t.Cleanup(hs.Close)
	c, err := siyuan.New(siyuan.Config{BaseURL: hs.URL})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestDownloadLimit512MiB runs the real limit against a local server
// streaming zeros: exactly 512 MiB is saved, one byte more is refused and
// removed.
func TestDownloadLimit512MiB(t *testing.T) {
	testvars.Long(t) // it streams 1 GiB through the disk
	dir := t.TempDir()
	d := &Downloader{Kernel: zeroServer(t, DefaultMaxDownloadBytes)}
	res, err := d.Download(context.Background(), File{KernelPath: "/temp/export/big.zip"}, filepath.Join(dir, "exact.zip"))
	if err != nil || res.Size != DefaultMaxDownloadBytes {
		t.Fatalf("at the limit: %+v %v", res, err)
	}
	os.Remove(res.Path)
	d = &Downloader{Kernel: zeroServer(t, DefaultMaxDownloadBytes+1)}
	_, err = d.Download(context.Background(), File{KernelPath: "/temp/export/big.zip"}, filepath.Join(dir, "over.zip"))
	if codeOf(err) != failure.DownloadTooLarge {
		t.Fatalf("over the limit: %v", err)
	}
	if got := tree(t, dir); len(got) != 0 {
		t.Fatalf("left behind %v", got)
	}
	if !strings.Contains(err.Error(), "536870912") {
		t.Fatalf("message %q does not name the limit", err)
	}
}

// pipeGetter serves every file from one pipe the test writes.
type pipeGetter struct{ r *io.PipeReader }

func (g pipeGetter) GetFile(context.Context, string) (io.ReadCloser, string, error) {
	return g.r, "application/zip", nil
}

// TestDownloadInProgressHasNoName: on Linux a download being written is an
// unnamed file, so a process killed mid-transfer leaves nothing in the
// destination's directory; the name appears only when the file is whole.
func TestDownloadInProgressHasNoName(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("unnamed files are Linux's O_TMPFILE")
	}
	dir := t.TempDir()
	pr, pw := io.Pipe()
	d := &Downloader{Kernel: pipeGetter{pr}}
	done := make(chan error, 1)
	go func() {
		_, err := d.Download(context.Background(), File{KernelPath: "/temp/export/x.zip"}, filepath.Join(dir, "x.zip"))
		done <- err
	}()
	if _, err := pw.Write(make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	// The first MiB has been read (the pipe returned): the file exists
	// only as an open descriptor.
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("a download in progress shows in its directory: %v", ents)
	}
	pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, "x.zip"))
	if err != nil || st.Size() != 1<<20 || st.Mode().Perm() != 0o644&^umask(t) {
		t.Fatalf("the saved file: %v %v", st, err)
	}
}

// umask is the process's file mode creation mask.
func umask(t *testing.T) os.FileMode {
	f := filepath.Join(t.TempDir(), "probe")
	if err := os.WriteFile(f, nil, 0o777); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(f)
	return 0o777 &^ st.Mode().Perm()
}
