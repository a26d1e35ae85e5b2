package authority

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/settings"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// TestCallsAndListAgree: a configuration file changed behind the
// authority's back (written straight to the kernel, as the upstream plugin
// or a person editing it does) is seen by tools/list and by a call's gate
// at the same moment. Until the cache ages out both still show the old
// configuration; once it has, whichever asks first brings in the new one
// for both. The store's clock is driven step by step, so no observation
// depends on how fast the machine is.
func TestCallsAndListAgree(t *testing.T) {
	url, c, svc := newAuthorityWith(t, nil)
	var mu sync.Mutex
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	svc.Settings.SetClock(func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
	// Past the whole ttl at once: never into its second half, where a
	// background refresh would land at a moment of its own choosing.
	age := func() { mu.Lock(); now = now.Add(ConfigCacheTTL); mu.Unlock() }
	svc.Settings.Invalidate()

	type seen struct{ list, rename bool } // tag.list and tag.rename offered
	calls := map[string]map[string]any{
		"list":   {"action": "list"},
		"rename": {"action": "rename", "oldLabel": "sisyphus-none", "newLabel": "sisyphus-other", "validateOnly": true},
	}
	// listed: tools/list offers the action (the tool is shown and its
	// schema's action enum names it).
	listed := func(action string) bool {
		_, res := rpc(t, url+"/mcp", "t", "tools/list", "", map[string]any{})
		for _, tl := range res["tools"].([]any) {
			m := tl.(map[string]any)
			if m["name"] != "tag" {
				continue
			}
			enum, _ := m["inputSchema"].(map[string]any)["properties"].(map[string]any)["action"].(map[string]any)["enum"].([]any)
			return slices.Contains(enum, any(action))
		}
		return false
	}
	// called: a call of the action passes the gate (whatever the kernel
	// then makes of it): it is neither disabled nor refused by the schema.
	called := func(action string) bool {
		_, res := rpc(t, url+"/mcp", "t", "tools/call", "tag", map[string]any{"name": "tag", "arguments": calls[action]})
		sc, _ := res["structuredContent"].(map[string]any)
		e, _ := sc["error"].(map[string]any)
		return res["isError"] != true || (e["code"] != "action_disabled" && e["code"] != "invalid_arguments")
	}
	// observe asks both ways, in the order given, and fails on any
	// disagreement between the list and the calls, or with want.
	observe := func(when string, callFirst bool, want seen) {
		t.Helper()
		for _, action := range []string{"list", "rename"} {
			var l, c bool
			if callFirst {
				c = called(action)
				l = listed(action)
			} else {
				l = listed(action)
				c = called(action)
			}
			w := want.list
			if action == "rename" {
				w = want.rename
			}
			if l != c {
				t.Fatalf("%s: tag.%s is offered by tools/list: %v, passes a call's gate: %v", when, action, l, c)
			}
			if l != w {
				t.Fatalf("%s: tag.%s offered %v, want %v", when, action, l, w)
			}
		}
	}
	put := func(body string) {
		t.Helper()
		if err := c.PutFile(context.Background(), siyuan.PutFileRequest{Path: settings.ToolsFile, Body: strings.NewReader(body), ModTime: time.Now().UnixMilli()}); err != nil {
			t.Fatal(err)
		}
	}

	before := seen{list: true, rename: true}
	observe("at the start", false, before)
	for _, step := range []struct {
		name      string
		file      string
		callFirst bool
		want      seen
	}{
		{"tag off", `{"tag":{"enabled":false}}`, false, seen{}},
		{"tag on, list off", `{"tag":{"actions":{"list":false}}}`, true, seen{rename: true}},
		{"the defaults", `{}`, false, seen{list: true, rename: true}},
		{"rename off", `{"tag":{"actions":{"rename":false}}}`, true, seen{list: true}},
		{"tag off again", `{"tag":{"enabled":false}}`, true, seen{}},
	} {
		put(step.file)
		observe(step.name+", before the cache ages out", step.callFirst, before)
		age()
		observe(step.name+", after", step.callFirst, step.want)
		observe(step.name+", after, asked the other way", !step.callFirst, step.want)
		before = step.want
	}
}
