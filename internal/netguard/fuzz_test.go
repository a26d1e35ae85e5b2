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
// refused only when every open connection is past its body; a connection
// past its body never evicted; the evicted one the oldest evictable.
func FuzzCap(f *testing.F) {
	f.Add(uint8(3), []byte{0, 0, 0, 0, 0, 0})
	f.Add(uint8(2), []byte{0, 0, 1, 3, 4, 3, 0, 0, 2, 1, 0})
	f.Add(uint8(1), []byte{0, 1, 3, 0, 2, 0, 0})
	f.Add(uint8(4), []byte{0, 0, 0, 0, 1, 2, 5, 1, 3, 7, 0, 0, 2, 0, 0, 0})
	f.Fuzz(func(t *testing.T, max uint8, ops []byte) {
		if max == 0 || max > 16 || len(ops) > 512 {
			return
		}
		g := New(Config{MaxConns: int(max)})
		var open []*conn
		clock := time.Unix(1_700_000_000, 0)
		for i := 0; i < len(ops); i++ {
			op := ops[i] % 4
			arg := 0
			if i+1 < len(ops) {
				arg = int(ops[i+1])
			}
			switch op {
			case 0: // a connection arrives
				before := map[*conn]phase{}
				var oldest *conn
				for _, c := range open {
					before[c] = c.phase
					if c.phase.evictable() && (oldest == nil || c.since.Before(oldest.since)) {
						oldest = c
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
						if !before[c].evictable() {
							t.Fatalf("evicted a connection in phase %d", before[c])
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
			}
			if st := g.Stats(); st.Open != len(open) || st.Open > int(max) {
				t.Fatalf("open %d, tracked %d, cap %d", st.Open, len(open), max)
			}
		}
	})
}
