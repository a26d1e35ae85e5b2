package settingsui

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"sync"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/settings"
)

// flash is the one-time message the page shows after a change: the change
// (so that the page can name the notebook as it is now) and, if it was not
// made, why.
type flash struct {
	change settings.Change
	err    string
	// note is a message of its own (signed in, ...), used when change is
	// empty.
	note string
}

// session is one signed-in browser.
type session struct {
	principal string
	csrf      string
	seen      time.Time
	flash     *flash
}

// sessions are kept in memory only: they die with the process. They are
// keyed by the SHA-256 of their id, so that the map holds no usable id and
// a lookup compares digests, not secrets.
type sessions struct {
	mu    sync.Mutex
	byKey map[[32]byte]*session
	idle  time.Duration
	max   int
	now   func() time.Time
}

func newSessions(idle time.Duration, max int, now func() time.Time) *sessions {
	return &sessions{byKey: map[[32]byte]*session{}, idle: idle, max: max, now: now}
}

// randomToken is 32 bytes from crypto/rand, URL-safe.
func randomToken() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails: crypto/rand crashes the program rather than return short
	return base64.RawURLEncoding.EncodeToString(b)
}

// create starts a session for principal and returns its id (the cookie's
// value). When the store is full, the session seen longest ago goes.
func (s *sessions) create(principal string) string {
	id := randomToken()
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.pruneLocked(now)
	for len(s.byKey) >= s.max {
		var oldest [32]byte
		first := true
		for k, v := range s.byKey {
			if first || v.seen.Before(s.byKey[oldest].seen) {
				oldest, first = k, false
			}
		}
		delete(s.byKey, oldest)
	}
	s.byKey[sha256.Sum256([]byte(id))] = &session{principal: principal, csrf: randomToken(), seen: now}
	return id
}

func (s *sessions) pruneLocked(now time.Time) {
	for k, v := range s.byKey {
		if now.Sub(v.seen) >= s.idle {
			delete(s.byKey, k)
		}
	}
}

// get returns a copy of the live session with this id and marks it seen;
// an idle one has expired and is removed.
func (s *sessions) get(id string) (session, bool) {
	if id == "" {
		return session{}, false
	}
	k := sha256.Sum256([]byte(id))
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.byKey[k]
	if !ok {
		return session{}, false
	}
	now := s.now()
	if now.Sub(v.seen) >= s.idle {
		delete(s.byKey, k)
		return session{}, false
	}
	v.seen = now
	return *v, true
}

func (s *sessions) delete(id string) {
	s.mu.Lock()
	delete(s.byKey, sha256.Sum256([]byte(id)))
	s.mu.Unlock()
}

func (s *sessions) setFlash(id string, f *flash) {
	s.mu.Lock()
	if v, ok := s.byKey[sha256.Sum256([]byte(id))]; ok {
		v.flash = f
	}
	s.mu.Unlock()
}

// takeFlash returns the session's message once.
func (s *sessions) takeFlash(id string) *flash {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.byKey[sha256.Sum256([]byte(id))]
	if !ok {
		return nil
	}
	f := v.flash
	v.flash = nil
	return f
}
