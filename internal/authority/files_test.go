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

	dir := t.TempDir()
	file := filepath.Join(dir, "scan.pdf")
	os.WriteFile(file, []byte("pdf"), 0o644)
	sum := sha256.Sum256([]byte("pdf"))
	for _, tc := range []struct {
		name, handle, path string
		code               failure.Code
	}{
		{"unknown handle", "staged:NOPE", "", failure.UploadSourceUnknown},
		{"not a handle", "/etc/passwd", "", failure.UploadSourceUnknown},
		{"relative path", "", "scan.pdf", failure.InvalidArguments},
		{"missing file", "", filepath.Join(dir, "absent.pdf"), failure.NotFound},
		{"directory", "", dir, failure.InvalidArguments},
		{"readable file", "", file, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s tools.Source
			var err error
			if tc.handle != "" {
				s, err = src.Staged(tc.handle)
			} else {
				s, err = src.Local(context.Background(), tc.path)
			}
			if tc.code == "" {
				if err != nil || s.SHA256 != hex.EncodeToString(sum[:]) || s.Size != 3 || s.Name != "scan.pdf" || s.Handle != "" {
					t.Fatalf("%+v %v", s, err)
				}
				return
			}
			var fe *failure.Error
			if !errors.As(err, &fe) || fe.Code != tc.code || fe.WriteAttempted == nil || *fe.WriteAttempted {
				t.Fatalf("got %v, want %s with writeAttempted false", err, tc.code)
			}
			if tc.path != "" && !strings.Contains(fe.Message, "authority") {
				t.Fatalf("a refusal of a path must say where it was read: %q", fe.Message)
			}
		})
	}
}

// noAuthority fails every request: a stager that sends nothing passes.
type noAuthority struct{ sent *int }

func (a noAuthority) Do(*http.Request) (*http.Response, error) {
	*a.sent++
	return nil, errors.New("no authority")
}

func TestStagerTooLarge(t *testing.T) {
	sent := 0
	s := stager{&transfer.Stager{Authority: noAuthority{&sent}, MaxFileBytes: 4}}
	p := filepath.Join(t.TempDir(), "big.bin")
	os.WriteFile(p, []byte("12345"), 0o644)
	_, err := s.Stage(context.Background(), p)
	if !tools.IsTooLargeToStage(err) || sent != 0 {
		t.Fatalf("a file above the cap: %v (sent %d)", err, sent)
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
