//go:build unix

package netguard

import "syscall"

// DescriptorLimit is the process's soft limit of open file descriptors
// (RLIMIT_NOFILE), 0 when it cannot be read. On Unix the Go runtime raises
// the soft limit to just under the hard limit at start (on macOS to at most
// kern.maxfilesperproc), so this is what the process may really open.
func DescriptorLimit() uint64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0
	}
	return uint64(rl.Cur)
}
