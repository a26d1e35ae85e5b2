//go:build linux

package embedded

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// syncWritten makes the files a snapshot wrote durable with one syncfs of
// the file system holding dir, rather than one fsync each: a snapshot of
// a new workspace writes thousands.
func syncWritten(dir string, _ []string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open %s: %w", dir, err)
	}
	defer d.Close()
	if err := unix.Syncfs(int(d.Fd())); err != nil {
		return fmt.Errorf("syncfs %s: %w", dir, err)
	}
	return nil
}
