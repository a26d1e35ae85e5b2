package mcp

import (
	"net"
	"strings"
	"sync"
	"unicode/utf8"
)

// clientKey names a client for the caps on sessions, event streams and
// requests awaiting a client's answer. Every agent of one bearer token
// shares its principal, so the key adds the remote address and the name
// the client gives itself (clientInfo.name). The name is self-declared: a
// client can take many names, which is why the caps are also fair between
// clients (see fairSlots), and never a reason to trust anyone.
func clientKey(principal, remoteAddr, name string) string {
	host := remoteAddr
	if h, _, err := net.SplitHostPort(remoteAddr); err == nil {
		host = h
	}
	if len(name) > 64 {
		name = name[:64]
		for !utf8.ValidString(name) {
			name = name[:len(name)-1]
		}
	}
	return strings.Join([]string{principal, host, name}, "\x00")
}

// slotCaps are the caps of one kind of holder. When a cap is reached, a
// newcomer takes the place of the oldest holder of its own group or client
// if evictOwn, else it is refused; when the total is reached, it takes the
// place of the oldest holder of the client holding the most, and only of a
// client holding at least as many as the newcomer's client would: a client
// flooding the pool, under as many names as it likes, loses its own holders
// first, and never pushes out a client holding fewer.
type slotCaps struct {
	perGroup  int // 0: no group cap
	perClient int
	total     int
	evictOwn  bool
}

// fairSlots holds the places of one kind of holder (event streams,
// requests awaiting a client's answer). It is safe for concurrent use.
type fairSlots struct {
	mu       sync.Mutex
	seq      uint64
	held     map[*slot]struct{}
	byClient map[string]int
	byGroup  map[any]int
}

// slot is one holder's place.
type slot struct {
	client string
	group  any    // the holder's session (nil: none)
	seq    uint64 // admission order: lower is older
	evict  func() // ends the holder when a newcomer takes its place
}

func newFairSlots() *fairSlots {
	return &fairSlots{held: map[*slot]struct{}{}, byClient: map[string]int{}, byGroup: map[any]int{}}
}

// take admits a holder of client (in group, when not nil: a group, a
// session, belongs to one client), making room as c says. It returns nil when the holder is refused. evict runs outside the
// lock, at most once, when a later newcomer takes the place.
func (f *fairSlots) take(c slotCaps, client string, group any, evict func()) *slot {
	f.mu.Lock()
	var victim *slot
	full := true
	switch {
	case group != nil && c.perGroup > 0 && f.byGroup[group] >= c.perGroup:
		if c.evictOwn {
			victim = f.oldestLocked(func(s *slot) bool { return s.group == group })
		}
	case f.byClient[client] >= c.perClient:
		if c.evictOwn {
			victim = f.oldestLocked(func(s *slot) bool { return s.client == client })
		}
	case len(f.held) >= c.total:
		victim = f.fairVictimLocked(f.byClient[client] + 1)
	default:
		full = false
	}
	if full && victim == nil {
		f.mu.Unlock()
		return nil
	}
	if victim != nil {
		f.dropLocked(victim)
	}
	f.seq++
	s := &slot{client: client, group: group, seq: f.seq, evict: evict}
	f.held[s] = struct{}{}
	f.byClient[client]++
	if group != nil {
		f.byGroup[group]++
	}
	f.mu.Unlock()
	if victim != nil && victim.evict != nil {
		victim.evict()
	}
	return s
}

// release frees s's place (nothing when it was already taken over).
func (f *fairSlots) release(s *slot) {
	if s == nil {
		return
	}
	f.mu.Lock()
	f.dropLocked(s)
	f.mu.Unlock()
}

func (f *fairSlots) dropLocked(s *slot) {
	if _, ok := f.held[s]; !ok {
		return
	}
	delete(f.held, s)
	if f.byClient[s.client]--; f.byClient[s.client] <= 0 {
		delete(f.byClient, s.client)
	}
	if s.group != nil {
		if f.byGroup[s.group]--; f.byGroup[s.group] <= 0 {
			delete(f.byGroup, s.group)
		}
	}
}

func (f *fairSlots) oldestLocked(match func(*slot) bool) *slot {
	var o *slot
	for s := range f.held {
		if match(s) && (o == nil || s.seq < o.seq) {
			o = s
		}
	}
	return o
}

// fairVictimLocked is the oldest holder of the client holding the most,
// if that client holds at least need; nil otherwise.
func (f *fairSlots) fairVictimLocked(need int) *slot {
	var v *slot
	for s := range f.held {
		n := f.byClient[s.client]
		if n < need {
			continue
		}
		if v == nil || n > f.byClient[v.client] || n == f.byClient[v.client] && s.seq < v.seq {
			v = s
		}
	}
	return v
}

func (f *fairSlots) len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.held)
}
