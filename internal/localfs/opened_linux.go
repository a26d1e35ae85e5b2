package localfs

import (
	"os"
	"strconv"
)

// openedPath is the path the system holds for an open file: where it was
// really opened, whatever links led there.
func openedPath(f *os.File) (string, bool) {
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil || len(p) == 0 || p[0] != '/' {
		return "", false
	}
	return p, true
}
