package embedded

// statAsset as SiYuan 3.7.3 answers it: the size and times of an asset
// ("assets/…") or of any file of the workspace named by a file:// URL.
// The answers were captured from the real kernel.

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/djherbis/times"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
)

func (k *Kernel) statAssetRoutes() map[string]route {
	return map[string]route{
		endpoint.StatAsset: {json: k.statAsset},
	}
}

// statAsset answers size, hSize (IEC units, two decimals rounded up),
// updated and created in milliseconds and their local-time forms. SiYuan
// gives no reason for a refusal: a path that is neither an asset nor a
// file:// URL, a file outside the workspace or a missing one all answer
// code 1 with an empty message. A missing or non-string path fails its
// unchecked read: code 0, data null. created is the file's birth time
// where the system keeps one (statx on Linux), else its modification time,
// read with the library SiYuan reads it with.
func (k *Kernel) statAsset(ctx context.Context, a args) (any, error) {
	p, err := a.str("path")
	if err != nil {
		return nil, nil
	}
	refused := errCode(1, "")
	var abs string
	switch {
	case strings.HasPrefix(p, "assets/"):
		if abs, err = k.assetAbsPath(p); err != nil {
			return nil, refused
		}
	case strings.HasPrefix(p, "file://"):
		if abs, err = k.fileURLPath(p); err != nil {
			return nil, refused
		}
	default:
		return nil, refused
	}
	info, err := os.Stat(abs)
	if err != nil {
		return nil, refused
	}
	t, err := times.Stat(abs)
	if err != nil {
		return nil, refused
	}
	mod := t.ModTime()
	ms, h := mod.UnixMilli(), mod.Format("2006-01-02 15:04:05")
	born, hBorn := ms, h
	if t.HasBirthTime() {
		born, hBorn = t.BirthTime().UnixMilli(), t.BirthTime().Format("2006-01-02 15:04:05")
	}
	return map[string]any{
		"size": info.Size(), "hSize": iBytesCeil(uint64(max(info.Size(), 0))),
		"created": born, "hCreated": hBorn, "updated": ms, "hUpdated": h,
	}, nil
}

// fileURLPath is the local path of a file:// URL (its query dropped, its
// escapes decoded), which must lie inside the workspace.
func (k *Kernel) fileURLPath(u string) (string, error) {
	p := strings.TrimPrefix(u, "file://")
	if i := strings.Index(p, "?"); i >= 0 {
		p = p[:i]
	}
	p, err := url.PathUnescape(p)
	if err != nil {
		return "", fmt.Errorf("file URL %q: %w", u, err)
	}
	p = filepath.Clean(filepath.FromSlash(p))
	root := filepath.Clean(k.dir)
	if !filepath.IsAbs(p) || !strings.HasPrefix(p, root+string(filepath.Separator)) {
		return "", fmt.Errorf("file URL %q is outside the workspace", u)
	}
	return p, nil
}

// iBytesCeil is the IEC size (KiB, MiB…) with two decimals rounded up that
// statAsset shows, where the asset search shows SI units (bytesCeil).
func iBytesCeil(s uint64) string {
	if s < 10 {
		return fmt.Sprintf("%d B", s)
	}
	sizes := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	e := math.Floor(math.Log(float64(s)) / math.Log(1024))
	val := math.Ceil(float64(s)/math.Pow(1024, e)*100) / 100
	if _, frac := math.Modf(val); frac == 0 {
		return fmt.Sprintf("%.0f %s", val, sizes[int(e)])
	}
	return strings.TrimRight(fmt.Sprintf("%.2f", val), "0") + " " + sizes[int(e)]
}
