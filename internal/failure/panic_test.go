package failure

import (
	"errors"
	"strings"
	"testing"
)

func TestRecover(t *testing.T) {
	tests := []struct {
		name  string
		run   func()
		panic bool
	}{
		{"a panic", func() { panic("boom") }, true},
		{"a runtime error", func() { var none []int; _ = none[len(none)] }, true},
		{"an error value", func() { panic(errors.New("boom")) }, true},
		{"no panic", func() {}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			done := make(chan struct{})
			go func() { // as the goroutines of a call use it
				defer close(done)
				defer Recover(&err)
				tt.run()
			}()
			<-done
			if !tt.panic {
				if err != nil {
					t.Fatalf("err = %v without a panic", err)
				}
				return
			}
			var fe *Error
			if !errors.As(err, &fe) || fe.Code != Internal {
				t.Fatalf("err = %v, want an internal_error", err)
			}
			p := PanicOf(err)
			if p == nil || !strings.Contains(string(p.Stack), "panic_test.go") {
				t.Fatalf("the panic and its stack are not the cause: %#v", p)
			}
			if strings.Contains(fe.Message, "boom") || strings.Contains(fe.Message, "panic_test") {
				t.Fatalf("the agent-visible message carries the panic: %q", fe.Message)
			}
		})
	}
}
