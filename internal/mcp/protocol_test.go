package mcp

import (
	"encoding/json"
	"testing"
)

func TestCapabilities(t *testing.T) {
	tests := []struct {
		caps     string
		form     bool
		decl     string
		urlInput bool
		sampling bool
	}{
		{`{}`, false, "", false, false},
		{`null`, false, "", false, false},
		{`[]`, false, "", false, false},
		{`{"elicitation":{}}`, true, "form", false, false},
		{`{"elicitation":{"form":{}}}`, true, "form", false, false},
		{`{"elicitation":{"url":{}}}`, false, "url", true, false},
		{`{"elicitation":{"form":{},"url":{}}}`, true, "form+url", true, false},
		{`{"elicitation":true}`, false, "", false, false},
		{`{"sampling":{},"elicitation":{"\u0075rl":{}}}`, false, "url", true, true},
		{`{"elicitation":{"url":{}},"elicitation":{}}`, true, "form", false, false}, // a later duplicate wins
	}
	for _, tt := range tests {
		c := parseCapabilities(json.RawMessage(tt.caps))
		var ref capabilities
		_ = json.Unmarshal([]byte(tt.caps), &ref)
		if len(c) != len(ref) {
			t.Errorf("%s: parsed %v, json.Unmarshal %v", tt.caps, c, ref)
		}
		if got := c.elicitationForm(); got != tt.form {
			t.Errorf("%s: elicitationForm %v, want %v", tt.caps, got, tt.form)
		}
		if got := c.elicitationDecl(); got != tt.decl {
			t.Errorf("%s: elicitationDecl %q, want %q", tt.caps, got, tt.decl)
		}
		if got := c.supportsInput("elicitation/create", json.RawMessage(`{"mode":"url"}`)); got != tt.urlInput {
			t.Errorf("%s: url elicitation %v, want %v", tt.caps, got, tt.urlInput)
		}
		if got := c.supportsInput("elicitation/create", json.RawMessage(`{}`)); got != tt.form {
			t.Errorf("%s: form elicitation %v, want %v", tt.caps, got, tt.form)
		}
		if got := c.supportsInput("sampling/createMessage", nil); got != tt.sampling {
			t.Errorf("%s: sampling %v, want %v", tt.caps, got, tt.sampling)
		}
	}
}

func TestCheckArguments(t *testing.T) {
	e := &toolEntry{required: []string{"action"}, props: map[string]string{"action": "string", "id": "string", "n": "integer", "b": "boolean"}}
	tests := []struct{ args, want string }{
		{`{"action":"x","id":"y","n":2,"b":true,"other":[1]}`, ""},
		{`{"id":"y"}`, "missing required argument(s): action"},
		// Two mismatches: the first by name, whatever their order.
		{`{"action":"x","n":"2","b":1}`, `argument "b" must be of type boolean, got number`},
		{`{"b":1,"n":"2","action":"x"}`, `argument "b" must be of type boolean, got number`},
		{`{"action":"x","n":1.5}`, `argument "n" must be of type integer, got number`},
	}
	for _, tt := range tests {
		var args map[string]json.RawMessage
		if err := json.Unmarshal([]byte(tt.args), &args); err != nil {
			t.Fatal(err)
		}
		if got := e.checkArguments(args); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.args, got, tt.want)
		}
	}
}
