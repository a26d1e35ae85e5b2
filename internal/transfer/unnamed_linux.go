package transfer

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// unnamed is a file being written without a name (O_TMPFILE), in a folder
// held open: it gets its name there, in that very folder, whatever happens
// to the folder's path meanwhile.
type unnamed struct {
	f   *os.File
	dir int // an O_PATH handle on the folder
}

// errRedirected: the destination's folder is not where its path says (a
// folder on the way was swapped for a symbolic link after the caller
// decided on the path).
var errRedirected = errors.New("the destination's folder is reached through a symbolic link")

// openUnnamed opens an unnamed file in dir. It first holds dir itself,
// without following a link in its last element, and checks that the system
// holds it at dir exactly: the caller decided on dir with every link
// resolved, so a different path means a link was swapped in since
// (errRedirected). ok is false where /proc or O_TMPFILE is missing.
func openUnnamed(dir string) (u *unnamed, ok bool, err error) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		return nil, false, nil // linkUnnamed could not name it
	}
	d, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.ENOTDIR):
		return nil, true, errRedirected
	case err != nil:
		return nil, false, nil
	}
	if real, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(d)); err != nil || real != filepath.Clean(dir) {
		unix.Close(d)
		if err != nil {
			return nil, false, nil
		}
		return nil, true, errRedirected
	}
	fd, err := unix.Openat(d, ".", unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
	if err != nil {
		unix.Close(d)
		return nil, false, nil
	}
	return &unnamed{f: os.NewFile(uintptr(fd), dir), dir: d}, true, nil
}

// link names the file base in its folder; it fails with EEXIST if the name
// exists. Linking through /proc needs no privilege (AT_EMPTY_PATH would).
func (u *unnamed) link(base string) error {
	err := unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(int(u.f.Fd())), u.dir, base, unix.AT_SYMLINK_FOLLOW)
	if err != nil {
		return &os.LinkError{Op: "link", Old: u.f.Name(), New: base, Err: err}
	}
	return nil
}

// close closes the file and the folder's handle.
func (u *unnamed) close() {
	u.f.Close()
	unix.Close(u.dir)
}
