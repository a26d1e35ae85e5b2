package tools

import (
	"context"
	"testing"
)

func TestCover(t *testing.T) {
	off := false
	next := NextStep{Purpose: "next", Tool: "document", Arguments: map[string]any{"action": "get_doc", "id": "x", "blockStart": 2}}
	for _, c := range []struct {
		name      string
		policy    *Policy
		info      ReadInfo
		coverage  string // "" when no readInfo is added
		wantSteps int
	}{
		{"complete answers stay as they are", nil, ReadInfo{Scope: "s"}, "", 0},
		{"a limitation makes it partial", nil, ReadInfo{Scope: "s", Limitations: []string{"cut"}}, CoveragePartial, 1},
		{"unknown stays unknown", nil, ReadInfo{Scope: "s", Coverage: CoverageUnknown, Limitations: []string{"maybe"}}, CoverageUnknown, 1},
		{"an enabled action is named", &Policy{Tools: map[string]Switch{"document": {Actions: map[string]bool{"get_doc": true}}}},
			ReadInfo{Limitations: []string{"cut"}}, CoveragePartial, 1},
		{"a disabled action is never named", &Policy{Tools: map[string]Switch{"document": {Actions: map[string]bool{"get_doc": false}}}},
			ReadInfo{Limitations: []string{"cut"}}, CoveragePartial, 0},
		{"a disabled tool is never named", &Policy{Tools: map[string]Switch{"document": {Enabled: &off}}},
			ReadInfo{Limitations: []string{"cut"}}, CoveragePartial, 0},
		{"another tool's switch does not matter", &Policy{Tools: map[string]Switch{"fs": {Enabled: &off}}},
			ReadInfo{Limitations: []string{"cut"}}, CoveragePartial, 1},
		{"all actions on", &Policy{AllActions: true, Tools: map[string]Switch{"document": {Enabled: &off}}},
			ReadInfo{Limitations: []string{"cut"}}, CoveragePartial, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			if c.policy != nil {
				ctx = WithPolicy(ctx, c.policy)
			}
			ret := map[string]any{}
			Cover(ctx, ret, c.info, next)
			info, ok := ret["readInfo"].(ReadInfo)
			if c.coverage == "" {
				if len(ret) != 0 {
					t.Fatalf("a complete answer grew: %v", ret)
				}
				return
			}
			if !ok || info.Coverage != c.coverage {
				t.Fatalf("readInfo %v, want coverage %s", ret["readInfo"], c.coverage)
			}
			steps, _ := ret["nextSteps"].([]NextStep)
			if len(steps) != c.wantSteps {
				t.Fatalf("nextSteps %v, want %d", steps, c.wantSteps)
			}
		})
	}
}

func TestWindowLimit(t *testing.T) {
	if got := WindowLimit("blocks", 10, 10, 25); got != "only blocks 11–20 of 25 were returned" {
		t.Fatal(got)
	}
	if got := WindowLimit("blocks", 30, 0, 25); got != "no blocks returned from 30; 25 in all" {
		t.Fatal(got)
	}
}

// TestCoverFullForm: the configuration's full form (debug.slimResponses
// false) has a complete read say so too.
func TestCoverFullForm(t *testing.T) {
	ret := map[string]any{}
	Cover(WithPolicy(context.Background(), &Policy{FullReadInfo: true}), ret, ReadInfo{Scope: "s", Representation: "markdown"})
	if info, ok := ret["readInfo"].(ReadInfo); !ok || info.Coverage != CoverageComplete || ret["nextSteps"] != nil {
		t.Fatalf("full form: %v", ret)
	}
}
