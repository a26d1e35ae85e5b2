// Package histcheck checks histories of strict writes for linearizability
// with Porcupine. A block is a register: a strict update preflighted at
// state S is a compare-and-set S → V, a read observes the content, and a
// write's outcome is what Strict Safe Writes reported: committed means it
// happened, a refusal that it did not, an unknown outcome that it may have.
// It is test support: only tests import it.
package histcheck

import (
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

// Outcomes of a write.
const (
	OK      = "ok"      // committed: it happened
	Fail    = "fail"    // a definite refusal: it did not happen
	Unknown = "unknown" // outcome_unknown, readback_mismatch, a lost reply: it may have happened
)

// Op is one operation on a register.
type Op struct {
	Read   bool
	Expect string // a CAS: the content its preflight leased
	Blind  bool   // what the preflight leased is not known: checked as a plain write
	Value  string // a CAS: the new content
}

// Model is a register whose content starts as initial.
func Model(initial string) porcupine.Model {
	return (&porcupine.NondeterministicModel{
		Init: func() []any { return []any{initial} },
		Step: step,
		DescribeOperation: func(input, output any) string {
			in := input.(Op)
			if in.Read {
				return fmt.Sprintf("read → %v", output)
			}
			return fmt.Sprintf("cas(%q → %q) %v", in.Expect, in.Value, output)
		},
	}).ToModel()
}

func step(state, input, output any) []any {
	s, in, out := state.(string), input.(Op), output.(string)
	if in.Read {
		if s == out {
			return []any{s}
		}
		return nil
	}
	can := in.Blind || s == in.Expect
	switch {
	case out == Fail:
		return []any{s}
	case out == OK && can:
		return []any{in.Value}
	case out == OK:
		return nil
	case can: // unknown: it happened, or it did not
		return []any{in.Value, s}
	}
	return []any{s}
}

// History records operations on several registers, safe for concurrent use.
type History struct {
	start time.Time
	mu    sync.Mutex
	ops   map[int][]porcupine.Operation
}

// New starts a history; its clock starts now.
func New() *History { return &History{start: time.Now(), ops: map[int][]porcupine.Operation{}} }

// Now is the history's clock.
func (h *History) Now() int64 { return int64(time.Since(h.start)) }

// Record adds an operation on register key by client, called at call and
// returned at ret; an unknown outcome may take effect any time after its
// call.
func (h *History) Record(key, client int, in Op, call int64, out string, ret int64) {
	if out == Unknown {
		ret = math.MaxInt64
	}
	h.mu.Lock()
	h.ops[key] = append(h.ops[key], porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret})
	h.mu.Unlock()
}

// Len is the number of operations recorded.
func (h *History) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, ops := range h.ops {
		n += len(ops)
	}
	return n
}

// Writes counts the writes recorded, by outcome.
func (h *History) Writes() map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]int{}
	for _, ops := range h.ops {
		for _, op := range ops {
			if !op.Input.(Op).Read {
				out[op.Output.(string)]++
			}
		}
	}
	return out
}

// Check checks register key, whose content started as initial. A history
// that is not linearizable (or not decided within timeout) is an error
// naming a visualisation of it.
func (h *History) Check(key int, initial string, timeout time.Duration) error {
	h.mu.Lock()
	ops := append([]porcupine.Operation(nil), h.ops[key]...)
	h.mu.Unlock()
	model := Model(initial)
	res, info := porcupine.CheckOperationsVerbose(model, ops, timeout)
	if res == porcupine.Ok {
		return nil
	}
	where := "(no visualisation)"
	if f, err := os.CreateTemp("", "history-*.html"); err == nil {
		if porcupine.Visualize(model, info, f) == nil {
			where = f.Name()
		}
		f.Close()
	}
	return fmt.Errorf("register %d: a history of %d operations is %v; visualisation: %s", key, len(ops), res, where)
}

// Content is a block's text as the register holds it: its kramdown's
// first line, without the IAL SiYuan lists in varying order.
func Content(kramdown string) string {
	line, _, _ := strings.Cut(kramdown, "\n")
	return strings.TrimSpace(line)
}
