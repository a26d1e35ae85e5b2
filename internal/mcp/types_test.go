package mcp

import (
	"encoding/json"
	"testing"
)

// TestContentJSON: each content type encodes as the schema names it; a
// text block as the map it was once built from would encode.
func TestContentJSON(t *testing.T) {
	for _, c := range []struct {
		in   Content
		want string
	}{
		{TextContent(`a <b> & "c"` + "\n"), `{"text":"a \u003cb\u003e \u0026 \"c\"\n","type":"text"}`},
		{TextContent(""), `{"text":"","type":"text"}`},
		{ImageContent([]byte{1, 2}, "image/png"), `{"data":"AQI=","mimeType":"image/png","type":"image"}`},
		{Content{Type: "resource_link", URI: "siyuan://x", Name: "x"}, `{"name":"x","type":"resource_link","uri":"siyuan://x"}`},
	} {
		got, err := json.Marshal(c.in)
		if err != nil || string(got) != c.want {
			t.Errorf("Marshal(%+v) = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
	if _, err := json.Marshal(Content{Type: "nope"}); err == nil {
		t.Error("an unknown content type encoded")
	}
}
