package canon

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// FuzzCanonical checks, for arbitrary input: no panic; input this package
// accepts is valid JSON; canonical output is a fixed point (parse → canon →
// parse → canon is stable); and encoding/json agrees on the value (decoding
// the input with UseNumber and canonicalising the Go value gives the same
// bytes, and so the same digest).
func FuzzCanonical(f *testing.F) {
	seeds := []string{
		`null`, `true`, `[1,2.5,-0,1e400]`, `{"b":1,"a":[{"z":null}]}`, `"\ud83d\ude00\u0000\/"`,
		`{"a":1,"a":2}`, `9007199254740993`, `1152921504606847000`, `[333333333.33333329, 1E30, 4.50]`,
		`{"\ue000":1,"\ud800\udc00":2}`, `"\ud800"`, "\"\xff\"", ` { } `, `[[[[]]]]`,
	}
	if data, err := os.ReadFile("testdata/jcs_objects.txt"); err == nil {
		lines := strings.Split(string(data), "\n")
		for i := 0; i < len(lines) && i < 40; i++ {
			seeds = append(seeds, lines[i])
		}
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		c1, err := Append(nil, json.RawMessage(raw))
		if raw == nil {
			return // a nil RawMessage means null
		}
		if err != nil {
			if _, derr := DigestJSON(raw); derr == nil {
				t.Fatalf("Append failed (%v) but DigestJSON succeeded", err)
			}
			return
		}
		if !json.Valid(raw) {
			t.Fatalf("accepted invalid JSON %q", raw)
		}
		if !json.Valid(c1) {
			t.Fatalf("canonical output is not JSON: %q", c1)
		}
		c2, err := Append(nil, json.RawMessage(c1))
		if err != nil || !bytes.Equal(c1, c2) {
			t.Fatalf("not a fixed point:\n in  %q\n c1  %q\n c2  %q, %v", raw, c1, c2, err)
		}
		d, err := DigestJSON(raw)
		if err != nil || d != DigestBytes(c1) {
			t.Fatalf("DigestJSON = %s, %v; want digest of %q", d, err, c1)
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("encoding/json rejects accepted input %q: %v", raw, err)
		}
		c3, err := Append(nil, v)
		if err != nil || !bytes.Equal(c1, c3) {
			t.Fatalf("Go-value path differs:\n in  %q\n raw %q\n val %q, %v", raw, c1, c3, err)
		}
		if d2, err := Digest(v); err != nil || d2 != d {
			t.Fatalf("Digest(value) = %s, %v; want %s", d2, err, d)
		}
	})
}
