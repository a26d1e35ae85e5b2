//go:build unix

package localfs

import (
	"errors"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// openNoFollow opens p for reading without following a link in its last
// element, and without waiting on a pipe (a FIFO opens at once, and is then
// refused as no regular file).
func openNoFollow(p string) (*os.File, error) {
	for {
		fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: p, Err: err}
		}
		// Reads of a regular file do not block; the flag only kept the
		// open from waiting.
		if err := unix.SetNonblock(fd, false); err != nil {
			unix.Close(fd)
			return nil, &fs.PathError{Op: "open", Path: p, Err: err}
		}
		return os.NewFile(uintptr(fd), p), nil
	}
}

// isLinkLoop reports whether an open failed on a link in the last element
// (O_NOFOLLOW's ELOOP; some systems answer EMLINK or EFTYPE).
func isLinkLoop(err error) bool {
	return errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EMLINK)
}

// links is the number of names of the file.
func links(st fs.FileInfo) uint64 {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Nlink)
	}
	return 1
}
