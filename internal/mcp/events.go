package mcp

import "sync"

type eventKind int

const (
	evTools eventKind = iota + 1
	evPrompts
	evResources
	evResourceUpdated
)

type event struct {
	kind eventKind
	uri  string // evResourceUpdated
}

// hub fans list-change events out to every open listener: legacy GET
// streams, stdio connections and subscriptions/listen streams.
type hub struct {
	mu     sync.Mutex
	subs   map[*subscriber]struct{}
	closed bool
	done   chan struct{} // closed by close
}

type subscriber struct {
	ch chan event
}

func newHub() *hub { return &hub{subs: map[*subscriber]struct{}{}, done: make(chan struct{})} }

// subscribe registers a listener; call unsubscribe when done.
func (h *hub) subscribe() *subscriber {
	sub := &subscriber{ch: make(chan event, 64)}
	h.mu.Lock()
	h.subs[sub] = struct{}{}
	h.mu.Unlock()
	return sub
}

func (h *hub) unsubscribe(sub *subscriber) {
	h.mu.Lock()
	delete(h.subs, sub)
	h.mu.Unlock()
}

// publish delivers ev to every listener without blocking. A listener whose
// buffer is full misses the event: list changes are invalidations, and a
// listener that far behind has stale state either way.
func (h *hub) publish(ev event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for sub := range h.subs {
		select {
		case sub.ch <- ev:
		default:
		}
	}
}

func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.closed {
		h.closed = true
		close(h.done)
	}
}

// count returns the number of listeners (tests).
func (h *hub) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}
