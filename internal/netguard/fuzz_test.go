package netguard

import (
	"net"
	"testing"
	"time"
)

// fakeConn is a connection that only records being closed.
type fakeConn struct {
	net.Conn
	closed bool
}

func (f *fakeConn) Close() error { f.closed = true; return nil }

// FuzzCap drives the connection cap with any sequence of arrivals, phase
// changes and closes (as net/http and the handlers make them) and checks
// its promises after each step: never more than MaxConns open; a newcomer
// refused only when every open connection is past its body and not
// blocked writing; a connection past its body evicted only while a write
// of it is blocked; the evicted one the one longest without progress.
func FuzzCap(f *testing.F) {
	f.Add(uint8(3), []byte{0, 0, 0, 0, 0, 0})
	f.Add(uint8(2), []byte{0, 0, 1, 3, 4, 3, 0, 0, 2, 1, 0})
	f.Add(uint8(1), []byte{0, 1, 3, 0, 2, 0, 0})
	f.Add(uint8(4), []byte{0, 0, 0, 0, 1, 2, 5, 1, 3, 7, 0, 0, 2, 0, 0, 0})
	f.Add(uint8(2), []byte{0, 0, 1, 3, 1, 7, 4, 1, 4, 0, 0, 4, 2, 0})
	f.Fuzz(func(t *testing.T, max uint8, ops []byte) {
		if max == 0 || max > 16 || len(ops) > 512 {
			return
		}
		g := New(Config{MaxConns: int(max)})
		var open []*conn
		clock := time.Unix(1_700_000_000, 0)
		for i := 0; i < len(ops); i++ {
			op := ops[i] % 5
			arg := 0
			if i+1 < len(ops) {
				arg = int(ops[i+1])
			}
			switch op {
			case 0: // a connection arrives
				// What each connection was, and the one a newcomer must
				// evict: the one longest without progress among those
				// waiting on their client (for headers or a body, idle,
				// or blocked writing; a write started at the fuzz's
				// clock, long before now, is blocked).
				before := map[*conn]bool{}
				var oldest *conn
				var oldestSince time.Time
				for _, c := range open {
					since, ok := c.since, c.phase.evictable()
					if w := c.writing.Load(); !ok && w != 0 {
						since, ok = time.Unix(0, w), true
					}
					before[c] = ok
					if ok && (oldest == nil || since.Before(oldestSince)) {
						oldest, oldestSince = c, since
					}
				}
				fc := &fakeConn{}
				gc := g.admit(fc)
				switch {
				case len(before) < int(max):
					if gc == nil {
						t.Fatalf("refused with %d of %d open", len(before), max)
					}
				case oldest == nil:
					if gc != nil || !fc.closed {
						t.Fatal("admitted beyond the cap with nothing evictable")
					}
				default:
					if gc == nil {
						t.Fatal("refused although a connection was evictable")
					}
					if !oldest.evicted || !oldest.Conn.(*fakeConn).closed {
						t.Fatal("the oldest evictable connection was not the one evicted")
					}
				}
				kept := open[:0]
				for _, c := range open {
					if c.evicted {
						if !before[c] {
							t.Fatalf("evicted a connection in phase %d, not blocked writing", c.phase)
						}
						continue
					}
					kept = append(kept, c)
				}
				open = kept
				if gc != nil {
					clock = clock.Add(time.Second)
					gc.since = clock
					open = append(open, gc)
				}
			case 1, 2: // net/http or a handler moves a connection on
				if len(open) > 0 {
					c := open[arg%len(open)]
					c.setPhase(phase(arg % 4))
					clock = clock.Add(time.Second)
					c.since = clock
				}
				i++
			case 3: // a connection closes
				if len(open) > 0 {
					k := arg % len(open)
					open[k].Close()
					open = append(open[:k], open[k+1:]...)
				}
				i++
			case 4: // a write starts waiting on its client, or goes out
				if len(open) > 0 {
					c := open[arg%len(open)]
					if arg%2 == 0 {
						clock = clock.Add(time.Second)
						c.writing.Store(clock.UnixNano())
					} else {
						c.writing.Store(0)
					}
				}
				i++
			}
			if st := g.Stats(); st.Open != len(open) || st.Open > int(max) {
				t.Fatalf("open %d, tracked %d, cap %d", st.Open, len(open), max)
			}
		}
	})
}
