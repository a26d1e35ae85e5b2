package transfer

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// openUnnamed opens an unnamed file in dir (O_TMPFILE); false where the
// file system does not support it.
func openUnnamed(dir string) (*os.File, bool) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		return nil, false // linkUnnamed could not name it
	}
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return nil, false
	}
	return os.NewFile(uintptr(fd), dir), true
}

// linkUnnamed names f at dst; it fails with EEXIST if dst exists. Linking
// through /proc needs no privilege (AT_EMPTY_PATH would).
func linkUnnamed(f *os.File, dst string) error {
	err := unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(int(f.Fd())), unix.AT_FDCWD, dst, unix.AT_SYMLINK_FOLLOW)
	if err != nil {
		return &os.LinkError{Op: "link", Old: f.Name(), New: dst, Err: err}
	}
	return nil
}
