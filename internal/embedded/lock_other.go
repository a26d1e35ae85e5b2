//go:build !unix

package embedded

// lockWorkspace is a no-op where flock is unavailable.
func lockWorkspace(path string) (func() error, error) { return func() error { return nil }, nil }
