//go:build unix

package embedded

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockWorkspace takes an exclusive flock on the workspace, as SiYuan does:
// two kernels on one workspace would corrupt it.
func lockWorkspace(path string) (func() error, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open workspace lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("workspace %s is in use by another kernel", path[:len(path)-len("/.lock")])
		}
		return nil, fmt.Errorf("lock workspace: %w", err)
	}
	return func() error {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return f.Close()
	}, nil
}
