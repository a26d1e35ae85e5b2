package transfer

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
)

// TestWriteFollowsNoSwappedLink: the front decides on a destination with
// every link resolved; a folder on its way swapped for a symbolic link
// afterwards (to ~/.config, say) is refused, and nothing lands where the
// link leads.
func TestWriteFollowsNoSwappedLink(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	decided, elsewhere := filepath.Join(base, "decided"), filepath.Join(base, "elsewhere")
	for _, d := range []string{decided, elsewhere} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The swap, after the decision on decided/...
	if err := os.Rename(decided, decided+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, decided); err != nil {
		t.Fatal(err)
	}
	k := &fakeKernel{files: map[string][]byte{"/temp/x.zip": []byte("zip"), "/data/assets/a.png": []byte("png")}}
	d := &Downloader{Kernel: k}
	if _, err := d.Download(context.Background(), File{KernelPath: "/temp/x.zip"}, filepath.Join(decided, "x.zip")); codeOf(err) != failure.TransferFailed {
		t.Fatalf("a download through a swapped link: %v", err)
	}
	files := []File{{Dest: "doc.md", Data: []byte("# doc")}, {KernelPath: "/data/assets/a.png", Dest: "assets/a.png"}}
	if _, err := d.Extract(context.Background(), files, filepath.Join(decided, "extract")); codeOf(err) != failure.TransferFailed {
		t.Fatalf("an extraction through a swapped link: %v", err)
	}
	if got := tree(t, elsewhere); len(got) != 0 {
		t.Fatalf("the swapped link led writes to %v", got)
	}
}
