package failure

import (
	"errors"
	"fmt"
	"runtime/debug"
)

// Panic is the internal cause of an internal_error made of a panic: its
// value and the stack where it happened, for the log (never shown to the
// agent).
type Panic struct {
	Value any
	Stack []byte
}

func (p *Panic) Error() string { return fmt.Sprintf("panic: %v", p.Value) }

// Recover, deferred at the top of a goroutine that works for a call (a
// lookup beside the call's own read, the gate deciding its notebooks),
// turns a panic there into an internal_error in *err, which the call then
// answers. Nothing else recovers a goroutine's panic: the MCP layer's
// recovery runs on the call's own goroutine, and a panic anywhere else
// ends the process, every client's calls and streams with it.
func Recover(err *error) {
	if v := recover(); v != nil {
		*err = Wrap(Internal, &Panic{Value: v, Stack: debug.Stack()}, "internal error: a bug in Sisyphus stopped this call (the server's log has the details)")
	}
}

// PanicOf returns the recovered panic err carries, or nil.
func PanicOf(err error) *Panic {
	var p *Panic
	if errors.As(err, &p) {
		return p
	}
	return nil
}
