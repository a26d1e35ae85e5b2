package embedded

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"
)

// FaultKind is what an injected fault does to a request.
type FaultKind int

const (
	// DropAfterApply applies the request, then closes the connection without
	// a reply: the client cannot know the write happened.
	DropAfterApply FaultKind = iota + 1
	// FailBeforeApply answers HTTP 500 without applying anything.
	FailBeforeApply
	// Latency delays the request before it is handled.
	Latency
)

// Fault is one injected fault on one endpoint.
type Fault struct {
	Endpoint string // e.g. /api/block/updateBlock
	Kind     FaultKind
	Delay    time.Duration // for Latency
}

// String renders the fault in the --fault flag syntax.
func (f Fault) String() string {
	switch f.Kind {
	case DropAfterApply:
		return f.Endpoint + "=drop-after-apply"
	case FailBeforeApply:
		return f.Endpoint + "=fail-before-apply"
	case Latency:
		return f.Endpoint + "=latency:" + f.Delay.String()
	}
	return f.Endpoint + "=?"
}

// ParseFault parses the --fault syntax: ENDPOINT=drop-after-apply,
// ENDPOINT=fail-before-apply or ENDPOINT=latency:DURATION.
func ParseFault(spec string) (Fault, error) {
	ep, what, ok := strings.Cut(strings.TrimSpace(spec), "=")
	if !ok || ep == "" || what == "" {
		return Fault{}, fmt.Errorf("fault %q: want ENDPOINT=drop-after-apply|fail-before-apply|latency:DURATION", spec)
	}
	if !strings.HasPrefix(ep, "/api/") || strings.ContainsAny(ep, " ?#") {
		return Fault{}, fmt.Errorf("fault %q: endpoint must be a path like /api/block/updateBlock", spec)
	}
	f := Fault{Endpoint: ep}
	switch {
	case what == "drop-after-apply":
		f.Kind = DropAfterApply
	case what == "fail-before-apply":
		f.Kind = FailBeforeApply
	case strings.HasPrefix(what, "latency:"):
		d, err := time.ParseDuration(strings.TrimPrefix(what, "latency:"))
		if err != nil || d < 0 {
			return Fault{}, fmt.Errorf("fault %q: bad latency duration", spec)
		}
		f.Kind, f.Delay = Latency, d
	default:
		return Fault{}, fmt.Errorf("fault %q: unknown fault %q", spec, what)
	}
	return f, nil
}

// Faults is the set of faults a kernel injects; safe for concurrent use so
// tests can change faults while requests are in flight.
type Faults struct {
	mu     sync.RWMutex
	faults map[string][]Fault
}

// Set replaces every fault on the endpoints named in fs (other endpoints keep theirs).
func (f *Faults) Set(fs ...Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.faults == nil {
		f.faults = map[string][]Fault{}
	}
	seen := map[string]bool{}
	for _, x := range fs {
		if !seen[x.Endpoint] {
			f.faults[x.Endpoint] = nil
			seen[x.Endpoint] = true
		}
		f.faults[x.Endpoint] = append(f.faults[x.Endpoint], x)
	}
}

// Clear removes the faults of the given endpoints, or all faults when none is named.
func (f *Faults) Clear(endpoints ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(endpoints) == 0 {
		f.faults = nil
		return
	}
	for _, e := range endpoints {
		delete(f.faults, e)
	}
}

func (f *Faults) lookup(endpoint string) []Fault {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.faults[endpoint]
}

// Churn changes the faults until stop is closed, for tests that hold a
// guarantee under changing failures: every few milliseconds (a random
// pause in [minPause, maxPause)) it either clears every fault or sets one
// of choices, each half the time; seed makes the sequence repeatable. It
// clears every fault before it returns.
func (f *Faults) Churn(stop <-chan struct{}, seed uint64, minPause, maxPause time.Duration, choices ...Fault) {
	r := rand.New(rand.NewPCG(seed, seed))
	defer f.Clear()
	for {
		pause := minPause
		if maxPause > minPause {
			pause += time.Duration(r.Int64N(int64(maxPause - minPause)))
		}
		select {
		case <-stop:
			return
		case <-time.After(pause):
		}
		if r.IntN(2) == 0 || len(choices) == 0 {
			f.Clear()
		} else {
			f.Set(choices[r.IntN(len(choices))])
		}
	}
}
