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

// TestCallResultWire: a tool result is sent as the plain encoding of its
// parts would send it, whichever parts were encoded once beforehand.
func TestCallResultWire(t *testing.T) {
	changed := StructuredResult(map[string]any{"a": 1})
	changed.StructuredContent = json.RawMessage(`{"b": 2}`) // replaced after: encoded anew
	for _, r := range []*CallResult{
		StructuredResult(map[string]any{"id": "x", "kramdown": "a <b> & \"c\"\n{: id=\"x\"}"}),
		ErrorResult(map[string]any{"error": map[string]any{"code": "not_found"}}),
		ErrorResult("plain failure"),
		changed,
		{Content: []Content{TextContent("one"), ImageContent([]byte{1}, "image/png"), TextContent("")}, Meta: map[string]any{"k": "v"}},
		{},
	} {
		content := r.Content
		if content == nil {
			content = []Content{}
		}
		plain := map[string]any{"content": content}
		if r.StructuredContent != nil {
			plain["structuredContent"] = r.StructuredContent
		}
		if r.IsError {
			plain["isError"] = true
		}
		if len(r.Meta) > 0 {
			plain["_meta"] = r.Meta
		}
		want, err := json.Marshal(plain)
		if err != nil {
			t.Fatal(err)
		}
		got, err := marshalResult(r.toWire())
		if err != nil || string(got) != string(want) {
			t.Errorf("result wire = %s, %v; want %s", got, err, want)
		}
		if viaMarshal, err := json.Marshal(r); err != nil || string(viaMarshal) != string(want) {
			t.Errorf("json.Marshal(result) = %s, %v; want %s", viaMarshal, err, want)
		}
	}
}
