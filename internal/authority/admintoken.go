package authority

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// AdminTokenFile holds the person's admin token in the state dir (mode
// 0600). It is the credential of the administrative routes (GET and POST
// /config, the settings page's sign-in) and of nothing else: agents hold
// the bearer token, which those routes refuse.
//
// The admin token is read from this file only, never from a flag or the
// environment: a flag shows in every process list, and an agent started
// from the person's shell inherits the person's environment.
const AdminTokenFile = "admin-token"

// MinAdminTokenLen is the shortest admin token accepted from the file: a
// generated one has 64 hex digits (256 bits), and a token short enough to
// guess must not open the configuration because a person edited the file.
const MinAdminTokenLen = 32

// AdminTokenPath is the admin token's file in the state dir.
func AdminTokenPath(stateDir string) string { return filepath.Join(stateDir, AdminTokenFile) }

// EnsureAdminToken returns the admin token kept in stateDir, creating it
// first when it is missing (32 bytes of crypto/rand, hex, mode 0600; the
// state dir is created 0700). created reports a new token. A file readable
// by others than its owner is narrowed to 0600 (reported by loosened).
func EnsureAdminToken(stateDir string) (tok string, created, loosened bool, err error) {
	path := AdminTokenPath(stateDir)
	tok, err = ReadAdminToken(path)
	if err == nil {
		loosened, err = narrow(path)
		return tok, false, loosened, err
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", false, false, err
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return "", false, false, fmt.Errorf("create state dir: %w", err)
	}
	b := make([]byte, 32)
	rand.Read(b) // never fails: crypto/rand crashes the program rather than return short
	tok = hex.EncodeToString(b)
	won, err := createOnce(stateDir, path, []byte(tok+"\n"))
	if err != nil {
		return "", false, false, fmt.Errorf("write the admin token: %w", err)
	}
	if !won {
		// Another process (sisyphus admin-token beside serve) made it
		// between the read and the link: use theirs.
		tok, err = ReadAdminToken(path)
		return tok, false, false, err
	}
	return tok, true, false, nil
}

// ReadAdminToken reads the admin token kept in the file at path. A missing
// file is an error wrapping fs.ErrNotExist; an empty, short or spaced one
// says how to make a new one.
func ReadAdminToken(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read the admin token: %w", err)
	}
	tok := strings.TrimSpace(string(data))
	if err := checkAdminToken(tok); err != nil {
		return "", fmt.Errorf("the admin token in %s %w: remove the file and sisyphus serve (or sisyphus admin-token) makes a new one", path, err)
	}
	return tok, nil
}

// checkAdminToken refuses a token that cannot be one: too short to resist
// guessing, or with characters a form field or an Authorization header
// would not carry unchanged.
func checkAdminToken(tok string) error {
	if len(tok) < MinAdminTokenLen {
		return fmt.Errorf("is shorter than %d characters", MinAdminTokenLen)
	}
	for _, c := range tok {
		if c <= ' ' || c > '~' {
			return errors.New("holds a character other than printable ASCII")
		}
	}
	return nil
}

// createOnce writes data to path unless path exists, so that no reader
// ever sees a partial file: the bytes are written and synced under a
// temporary name, then linked to path (which fails if another process got
// there first: won is false then).
func createOnce(dir, path string, data []byte) (won bool, err error) {
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+"-*") // mode 0600
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(data)
	for _, err := range []error{werr, tmp.Chmod(0o600), tmp.Sync(), tmp.Close()} {
		if err != nil {
			return false, err
		}
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return false, nil
		}
		return false, err
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync() // the new name survives a crash
		d.Close()
	}
	return true, nil
}

// narrow sets the mode of the file at path to 0600 when others than its
// owner may read or write it; loosened reports that it had to. Windows
// keeps no such bits (its access lists are the user profile's).
func narrow(path string) (loosened bool, err error) {
	if runtime.GOOS == "windows" {
		return false, nil
	}
	st, err := os.Stat(path)
	if err != nil {
		return false, fmt.Errorf("check the admin token's mode: %w", err)
	}
	if st.Mode().Perm()&0o077 == 0 {
		return false, nil
	}
	if err := os.Chmod(path, 0o600); err != nil {
		return true, fmt.Errorf("narrow the admin token's mode to 0600: %w", err)
	}
	return true, nil
}
