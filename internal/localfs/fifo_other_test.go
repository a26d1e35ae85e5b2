//go:build !unix

package localfs

import "errors"

func mkfifo(string) error { return errors.New("no FIFOs on this system") }
