//go:build !linux

package transfer

import (
	"errors"
	"os"
)

// unnamed: only Linux has O_TMPFILE; elsewhere downloads use a named
// hidden file.
type unnamed struct{ f *os.File }

var errRedirected = errors.New("the destination's folder is reached through a symbolic link")

func openUnnamed(string) (*unnamed, bool, error) { return nil, false, nil }

func (*unnamed) link(string) error { return os.ErrInvalid }

func (u *unnamed) close() { u.f.Close() }
