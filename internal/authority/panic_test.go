package authority

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
)

// A panic recovered in a goroutine working for a call reaches the log with
// its stack (the agent sees only internal_error); other errors log nothing.
func TestLogPanic(t *testing.T) {
	var panicked error
	func() {
		defer failure.Recover(&panicked)
		panic("a bug in a lookup")
	}()
	for _, tt := range []struct {
		name string
		err  error
		logs bool
	}{
		{"a recovered panic", fmt.Errorf("read: %w", panicked), true},
		{"an error", errors.New("kernel down"), false},
		{"none", nil, false},
	} {
		var buf bytes.Buffer
		r := &Runner{Logger: slog.New(slog.NewTextHandler(&buf, nil))}
		r.logPanic("block", tt.err)
		got := buf.String()
		if logged := strings.Contains(got, "a bug in a lookup") && strings.Contains(got, "panic_test.go"); logged != tt.logs {
			t.Errorf("%s: logged %q", tt.name, got)
		}
	}
}
