package tools

import (
	"encoding/base64"
	"strings"
	"testing"
)

func TestCursor(t *testing.T) {
	type cur struct {
		Page int    `json:"p"`
		Tag  string `json:"t"`
	}
	s := EncodeCursor("c1", "test", cur{Page: 2, Tag: "x"})
	var got cur
	if err := DecodeCursor(s, "c1", "test", &got); err != nil || got != (cur{Page: 2, Tag: "x"}) {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	parts := strings.Split(s, ".")
	reseal := func(payload string) string { return "c1." + payload + "." + cursorCheck("test", payload) }
	for name, bad := range map[string]string{
		"another purpose":     EncodeCursor("c1", "other", cur{Page: 2}),
		"another version":     EncodeCursor("c2", "test", cur{Page: 2}),
		"edited payload":      "c1." + base64.RawURLEncoding.EncodeToString([]byte(`{"p":3,"t":"x"}`)) + "." + parts[2],
		"unknown field":       reseal(base64.RawURLEncoding.EncodeToString([]byte(`{"p":2,"t":"x","z":1}`))),
		"field order variant": reseal(base64.RawURLEncoding.EncodeToString([]byte(`{"t":"x","p":2}`))),
		"padding":             reseal(parts[1] + "="),
		"two parts":           "c1." + parts[1],
	} {
		if err := DecodeCursor(bad, "c1", "test", &got); err == nil {
			t.Errorf("%s: %q accepted", name, bad)
		}
	}
}
