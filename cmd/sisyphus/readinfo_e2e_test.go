package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestReadInfoThroughTheBinary: the main reads say, through the binary,
// when their answer leaves something out (readInfo partial, with what)
// and name the exact read that continues them (nextSteps), which the agent
// can call as given; whole answers carry neither; a hidden notebook makes
// a search partial without telling anything of it; a next step never
// names a disabled action. (The av reads are checked in avFlow, a read cut
// by its deadline in TestRunawayReadsDoNotHoldTheReadLane.)
func TestReadInfoThroughTheBinary(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	s := startServeWith(t, "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", t.TempDir())
	a := connect(t, s.url, "2025-11-25")
	name := fmt.Sprintf("readinfo-e2e-%d", time.Now().UnixNano())
	nb := a.strictDo("notebook", map[string]any{"action": "create", "name": name})["notebook"].(string)
	s.config(t, "permission", nb, "rwd")
	var paras []string
	for i := range 6 {
		paras = append(paras, fmt.Sprintf("okapi paragraph %d", i))
	}
	doc := a.strictDo("fs", map[string]any{"action": "write", "path": "/" + name + "/Long", "markdown": strings.Join(paras, "\n\n")})["id"].(string)

	// follow reads a window or page, then each next step, to the end.
	follow := func(tool string, args map[string]any) (n int) {
		t.Helper()
		for ; n < 10; n++ {
			m := a.ok(tool, args)
			steps, _ := m["nextSteps"].([]any)
			if len(steps) == 0 {
				if m["readInfo"] != nil {
					t.Fatalf("%s %v: readInfo without a next step at the end: %v", tool, args, m)
				}
				return n + 1
			}
			if info, _ := m["readInfo"].(map[string]any); info["coverage"] != "partial" || len(info["limitations"].([]any)) == 0 {
				t.Fatalf("%s %v: readInfo %v", tool, args, m["readInfo"])
			}
			step := steps[0].(map[string]any)
			if step["tool"] != tool {
				t.Fatalf("%s: next step %v", tool, step)
			}
			args = step["arguments"].(map[string]any)
		}
		t.Fatalf("%s: next steps never end", tool)
		return n
	}
	if n := follow("document", map[string]any{"action": "get_doc", "id": doc, "blockLimit": 2}); n != 3 {
		t.Fatalf("get_doc took %d windows", n)
	}
	if n := follow("fs", map[string]any{"action": "read", "path": "/" + name + "/Long", "blockLimit": 4}); n != 2 {
		t.Fatalf("fs.read took %d windows", n)
	}
	hits := func(q string) int {
		return len(a.ok("search", map[string]any{"action": "fulltext", "query": q})["blocks"].([]any))
	}
	waitFor(t, "the index to hold the paragraphs", func() bool { return hits("okapi") == 6 })
	if n := follow("search", map[string]any{"action": "fulltext", "query": "okapi", "pageSize": 4}); n != 2 {
		t.Fatalf("fulltext took %d pages", n)
	}
	sql := a.ok("search", map[string]any{"action": "query_sql", "stmt": "SELECT id FROM blocks WHERE root_id='" + doc + "'", "maxRows": 1})
	if sql["readInfo"].(map[string]any)["coverage"] != "partial" || sql["nextSteps"].([]any)[0].(map[string]any)["arguments"].(map[string]any)["maxRows"] != float64(1000) {
		t.Fatalf("query_sql cut by maxRows: %v", sql)
	}
	batch := a.ok("block", map[string]any{"action": "batch_kramdown", "ids": []string{doc, freshNodeID()}})
	if batch["readInfo"].(map[string]any)["coverage"] != "partial" {
		t.Fatalf("batch_kramdown with a missing id: %v", batch)
	}
	for tool, args := range map[string]map[string]any{
		"document": {"action": "get_doc", "id": doc},
		"block":    {"action": "get_kramdown", "id": doc},
		"search":   {"action": "query_sql", "stmt": "SELECT id FROM blocks WHERE id='" + doc + "'"},
	} {
		if m := a.ok(tool, args); m["readInfo"] != nil || m["nextSteps"] != nil {
			t.Fatalf("%s %v: a whole answer with readInfo: %v", tool, args["action"], m)
		}
	}

	// The full form: with slim answers off (sisyphus config slim off),
	// every main read says what it covers, whole answers too; turned back
	// on, whole answers carry nothing again.
	created := a.strictDo("av", map[string]any{"action": "create", "parentID": doc, "name": "Shelf", "primaryKeyTexts": []string{"Dune"}})
	avID, _ := created["avID"].(string)
	if avID == "" {
		t.Fatalf("av.create: %v", created)
	}
	whole := []struct {
		tool string
		args map[string]any
	}{
		{"fs", map[string]any{"action": "read", "path": "/" + name + "/Long"}},
		{"document", map[string]any{"action": "get_doc", "id": doc}},
		{"block", map[string]any{"action": "get_kramdown", "id": doc}},
		{"block", map[string]any{"action": "batch_kramdown", "ids": []string{doc}}},
		{"search", map[string]any{"action": "fulltext", "query": "okapi"}},
		{"search", map[string]any{"action": "query_sql", "stmt": "SELECT id FROM blocks WHERE id='" + doc + "'"}},
		{"av", map[string]any{"action": "get", "avID": avID}},
		{"av", map[string]any{"action": "render", "avID": avID}},
		{"av", map[string]any{"action": "get_attribute_view_keys", "avID": avID}},
		{"av", map[string]any{"action": "get_primary_key_values", "avID": avID}},
	}
	if out := s.config(t, "slim", "off"); !strings.Contains(out, "slim read answers off (was on)") || !strings.Contains(out, "Slim read answers: off") {
		t.Fatalf("config slim off said:\n%s", out)
	}
	for _, w := range whole {
		m := a.ok(w.tool, w.args)
		info, _ := m["readInfo"].(map[string]any)
		if info["coverage"] != "complete" || info["scope"] == "" || info["limitations"] != nil || m["nextSteps"] != nil {
			t.Errorf("full form, %s.%s: readInfo %v, nextSteps %v", w.tool, w.args["action"], m["readInfo"], m["nextSteps"])
		}
	}
	// A partial answer is the same in both forms.
	if m := a.ok("document", map[string]any{"action": "get_doc", "id": doc, "blockLimit": 2}); m["readInfo"].(map[string]any)["coverage"] != "partial" || len(m["nextSteps"].([]any)) == 0 {
		t.Errorf("full form, a window: %v", m)
	}
	s.config(t, "slim", "on")
	for _, w := range whole {
		if m := a.ok(w.tool, w.args); m["readInfo"] != nil || m["nextSteps"] != nil {
			t.Errorf("slim again, %s.%s: %v", w.tool, w.args["action"], m["readInfo"])
		}
	}

	// A next step is always an enabled call: with document switched off,
	// fs.read's window names fs.read only.
	s.config(t, "disable", "document")
	m := a.ok("fs", map[string]any{"action": "read", "path": "/" + name + "/Long", "blockLimit": 2})
	out, _ := json.Marshal(m["nextSteps"])
	if !strings.Contains(string(out), `"tool":"fs"`) || strings.Contains(string(out), "get_doc") || strings.Contains(string(out), `"document"`) {
		t.Fatalf("next steps with document disabled: %s", out)
	}
	s.config(t, "enable", "document")

	// A hidden notebook: a search says it was not searched, whether or not
	// it holds a match, and shows nothing of it.
	other := fmt.Sprintf("readinfo-hidden-%d", time.Now().UnixNano())
	hid := a.strictDo("notebook", map[string]any{"action": "create", "name": other})["notebook"].(string)
	s.config(t, "permission", hid, "rwd")
	a.strictDo("fs", map[string]any{"action": "write", "path": "/" + other + "/Secret", "markdown": "okapi secret"})
	waitFor(t, "the index to hold the secret", func() bool { return hits("okapi") == 7 })
	s.config(t, "permission", hid, "none")
	veiled := a.ok("search", map[string]any{"action": "fulltext", "query": "okapi"})
	info, _ := veiled["readInfo"].(map[string]any)
	body, _ := json.Marshal(veiled)
	if info["coverage"] != "partial" || !strings.Contains(fmt.Sprint(info["limitations"]), "hidden") || strings.Contains(string(body), "secret") || strings.Contains(string(body), hid) {
		t.Fatalf("fulltext while a notebook is hidden: %s", body)
	}
}
