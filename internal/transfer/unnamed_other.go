//go:build !linux

package transfer

import "os"

// openUnnamed: only Linux has O_TMPFILE; elsewhere downloads use a named
// hidden file.
func openUnnamed(string) (*os.File, bool) { return nil, false }

func linkUnnamed(*os.File, string) error { return os.ErrInvalid }
