package transfer

import (
	"fmt"
	"io"
	"path/filepath"
	"time"
)

// ProgressPrinter returns a Progress callback that rewrites one status line
// on w (a terminal's stderr) at most ten times a second, and always at the
// end of a file. The caller prints the final newline.
func ProgressPrinter(w io.Writer) func(Progress) {
	var last time.Time
	return func(p Progress) {
		now := time.Now()
		if now.Sub(last) < 100*time.Millisecond && (p.Total < 0 || p.Done < p.Total) {
			return
		}
		last = now
		if p.Total > 0 {
			fmt.Fprintf(w, "\r\033[Ksaving %s: %s of %s (%d%%)", filepath.Base(p.File), mib(p.Done), mib(p.Total), p.Done*100/p.Total)
			return
		}
		fmt.Fprintf(w, "\r\033[Ksaving %s: %s", filepath.Base(p.File), mib(p.Done))
	}
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
