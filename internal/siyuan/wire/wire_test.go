package wire

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestBoxCryptRoundTrips: a conf read from the kernel re-encodes its
// boxCrypt, null included, as it came; only a cleared one is left off.
func TestBoxCryptRoundTrips(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"name":"N","boxCrypt":null}`, `"boxCrypt":null`},
		{`{"name":"N","boxCrypt":{"spec":1}}`, `"boxCrypt":{"spec":1}`},
	} {
		var c BoxConf
		if err := json.Unmarshal([]byte(tc.in), &c); err != nil {
			t.Fatal(err)
		}
		out, _ := json.Marshal(c)
		if !strings.Contains(string(out), tc.want) {
			t.Errorf("%s re-encodes as %s", tc.in, out)
		}
		c.BoxCrypt = nil
		if out, _ := json.Marshal(c); strings.Contains(string(out), "boxCrypt") {
			t.Errorf("cleared BoxCrypt encodes as %s", out)
		}
	}
}
