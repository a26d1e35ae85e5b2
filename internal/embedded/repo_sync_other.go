//go:build !linux

package embedded

import (
	"fmt"
	"os"
	"path/filepath"
)

// syncWritten makes the files a snapshot wrote durable: each file and
// its folder fsynced (no syncfs here).
func syncWritten(_ string, paths []string) error {
	dirs := map[string]bool{}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return fmt.Errorf("open %s: %w", p, err)
		}
		err = f.Sync()
		f.Close()
		if err != nil {
			return fmt.Errorf("fsync %s: %w", p, err)
		}
		dirs[filepath.Dir(p)] = true
	}
	for d := range dirs {
		if err := syncDir(d); err != nil {
			return err
		}
	}
	return nil
}
