package tools

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

// FuzzToolArguments sends arbitrary argument objects to every tool: an
// agent's input must come back as a result or a typed *Error, never a panic
// or an untyped failure. Writes run against a registry without a
// coordinator, so nothing is ever written.
func FuzzToolArguments(f *testing.F) {
	fx := newFixture(f)
	r, err := NewRegistry(&Env{Kernel: fx.c})
	if err != nil {
		f.Fatal(err)
	}
	names := []string{"notebook", "document", "block", "fs", "search", "system"}
	for _, s := range []string{
		`{"action":"help"}`, `{"action":"get_doc","id":"` + fx.doc + `","blockLimit":2}`,
		`{"action":"update","id":"` + fx.blocks[0] + `","data":"x","validateOnly":true}`,
		`{"action":"query_sql","stmt":"SELECT 1"}`, `{"action":"ls","path":"/Tools"}`, `[]`, `{"action":null}`,
		`{"action":"update","items":[{"id":1}]}`, `{"action":"fulltext","query":"zebra","paths":[1]}`,
	} {
		f.Add(uint8(0), s)
		f.Add(uint8(2), s)
	}
	f.Fuzz(func(t *testing.T, which uint8, args string) {
		v, err := r.Call(context.Background(), names[int(which)%len(names)], json.RawMessage(args))
		if err != nil {
			var te *Error
			if !errors.As(err, &te) || te.Code == "" {
				t.Fatalf("untyped failure for %q: %v", args, err)
			}
			return
		}
		if _, err := json.Marshal(v); err != nil {
			t.Fatalf("result does not encode: %v", err)
		}
	})
}
