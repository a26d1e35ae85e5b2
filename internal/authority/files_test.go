package authority

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/localfs"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/transfer"
)

func TestSources(t *testing.T) {
	store := transfer.NewStore(transfer.Config{})
	src := sources{store}
	st, err := store.Stage(context.Background(), "a.png", strings.NewReader("png bytes"), 9)
	if err != nil {
		t.Fatal(err)
	}
	got, err := src.Staged(st.UploadSource)
	if err != nil || got.Handle != st.UploadSource || got.Name != "a.png" || got.Size != 9 || got.SHA256 != st.SHA256 {
		t.Fatalf("staged source %+v %v", got, err)
	}
	body, _ := got.Open()
	if b, _ := io.ReadAll(body); string(b) != "png bytes" {
		t.Fatalf("staged bytes %q", b)
	}

	for _, handle := range []string{"staged:NOPE", "/etc/passwd", "conf/conf.json"} {
		_, err := src.Staged(handle)
		var fe *failure.Error
		if !errors.As(err, &fe) || fe.Code != failure.UploadSourceUnknown || fe.WriteAttempted == nil || *fe.WriteAttempted {
			t.Fatalf("%q: got %v, want upload_source_unknown with writeAttempted false", handle, err)
		}
	}
}

// noAuthority fails every request: a stager that sends nothing passes.
type noAuthority struct{ sent *int }

func (a noAuthority) Do(*http.Request) (*http.Response, error) {
	*a.sent++
	return nil, errors.New("no authority")
}

// allowing is a front's folder rule allowing dir.
func allowing(t *testing.T, dir string) *localfs.Guard {
	t.Helper()
	g, err := localfs.New(localfs.Rules{Allowed: []string{dir}, WorkDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestStagerAtTheFront: the front's stager reads only what its folder rule
// lets it, and refuses a file above the staging cap naming the cap; in
// neither case is anything sent.
func TestStagerAtTheFront(t *testing.T) {
	sent := 0
	dir := t.TempDir()
	s := stager{s: &transfer.Stager{Authority: noAuthority{&sent}, MaxFileBytes: 4}, guard: allowing(t, dir)}
	os.WriteFile(filepath.Join(dir, "big.bin"), []byte("12345"), 0o644)
	_, err := s.Stage(context.Background(), "big.bin")
	if errCodeOf(err) != failure.FileTooLarge || !strings.Contains(err.Error(), "4 bytes a file") || sent != 0 {
		t.Fatalf("a file above the cap: %v (sent %d)", err, sent)
	}
	outside := filepath.Join(t.TempDir(), "x.bin")
	os.WriteFile(outside, []byte("1"), 0o644)
	for _, p := range []string{outside, "/etc/passwd", "/proc/self/cmdline", "../x.bin"} {
		if _, err := s.Stage(context.Background(), p); errCodeOf(err) != failure.PathNotAllowed || sent != 0 {
			t.Fatalf("%s: %v (sent %d)", p, err, sent)
		}
	}
	none := stager{s: &transfer.Stager{Authority: noAuthority{&sent}}}
	if _, err := none.Stage(context.Background(), filepath.Join(dir, "big.bin")); errCodeOf(err) != failure.PathNotAllowed || sent != 0 {
		t.Fatalf("a front without a rule: %v", err)
	}
	disk := localDisk{allowing(t, dir)}
	if f, err := disk.Inspect(context.Background(), "big.bin"); err != nil || f.Path != filepath.Join(dir, "big.bin") || f.Size != 5 {
		t.Fatalf("inspect: %+v %v", f, err)
	}
	if d, err := disk.Destination(context.Background(), "new/out.zip"); err != nil || d != filepath.Join(dir, "new", "out.zip") {
		t.Fatalf("destination: %q %v", d, err)
	}
}

// slowGetter streams size bytes over about d.
type slowGetter struct {
	size int
	d    time.Duration
}

func (g slowGetter) GetFile(ctx context.Context, _ string) (io.ReadCloser, string, error) {
	pr, pw := io.Pipe()
	go func() {
		chunk := g.size / 10
		for range 10 {
			time.Sleep(g.d / 10)
			pw.Write(make([]byte, chunk))
		}
		pw.Close()
	}()
	return pr, "application/zip", nil
}

// TestDownloadProgress: a transfer longer than a second shows its progress
// on the writer (a terminal's stderr) and ends the line; a short one
// prints nothing.
func TestDownloadProgress(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want bool
	}{{50 * time.Millisecond, false}, {1500 * time.Millisecond, true}} {
		var out bytes.Buffer
		dl := downloader{d: &transfer.Downloader{Kernel: slowGetter{10 << 20, tc.d}}, progress: &out}
		dst := filepath.Join(t.TempDir(), "x.zip")
		saved, err := dl.File(context.Background(), tools.Download{KernelPath: "/temp/export/x.zip", Dest: "x.zip"}, dst)
		if err != nil || saved.Size != 10<<20 {
			t.Fatalf("%+v %v", saved, err)
		}
		shown := strings.Contains(out.String(), "saving x.zip")
		if shown != tc.want || tc.want && !strings.HasSuffix(out.String(), "\n") {
			t.Fatalf("a %s transfer printed %q", tc.d, out.String())
		}
	}
}

// TestDownloaderInline: a manifest entry with its content is saved like a
// fetched file, beside the fetched ones.
func TestDownloaderInline(t *testing.T) {
	dl := downloader{d: &transfer.Downloader{Kernel: slowGetter{1 << 10, time.Millisecond}}}
	dir := filepath.Join(t.TempDir(), "doc")
	saved, err := dl.Tree(context.Background(), []tools.Download{{Dest: "Plan.md", Inline: "# Plan\n"}, {KernelPath: "/data/assets/a.png", Dest: "assets/a.png"}}, dir)
	if err != nil || len(saved) != 2 {
		t.Fatalf("%+v %v", saved, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "Plan.md")); string(b) != "# Plan\n" {
		t.Fatalf("the inline file holds %q", b)
	}
	sum := sha256.Sum256([]byte("# Plan\n"))
	if saved[0].SHA256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("inline digest %s", saved[0].SHA256)
	}
}
