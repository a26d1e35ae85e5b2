package tools

import "fmt"

// PayloadKey is how a readback reads a value that reaches it only in the
// payload (a staged creation's receipt, which hands nothing else): checked,
// so that a renamed, missing or mistyped key fails the readback, which the
// coordinator answers readback_mismatch, instead of an unchecked assertion
// leaving it to verify a zero value. A readback that can take the value
// from its typed args, or from a WriteWith's D, does that instead.
func PayloadKey[T any](p Payload, key string) (T, error) {
	var zero T
	v, ok := p[key]
	if !ok {
		return zero, fmt.Errorf("the payload has no %q to read back", key)
	}
	t, ok := v.(T)
	if !ok {
		return zero, fmt.Errorf("the payload's %q is a %T, not the %T the readback reads", key, v, zero)
	}
	return t, nil
}
