package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/testvars"
)

// TestFsThroughTheBinary walks fs tree, search, replace and the virtual
// files through the binary against the embedded kernel: strict replace
// (preflight, commit, replay, a stale commit, a permission refusal), the
// agent memory written over HTTP and read by a stdio front and by the
// authority after a restart, the user rules set by sisyphus config and
// refused to agents.
func TestFsThroughTheBinary(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	fsFlow(t, []string{"--siyuan-url", k.url, "--siyuan-token", "tok"}, kernelClient(t, k.url, "tok"))
}

// TestFsLive is the same walk against a real SiYuan when
// SISYPHUS_LIVE_SIYUAN_URL and SISYPHUS_LIVE_SIYUAN_TOKEN are set, in a
// notebook it creates and removes (it leaves the memory and rules empty).
func TestFsLive(t *testing.T) {
	url, tok := testvars.Live(t)
	fsFlow(t, []string{"--siyuan-url", url, "--siyuan-token", tok}, kernelClient(t, url, tok))
}

func fsFlow(t *testing.T, kernel []string, c *siyuan.Client) {
	ctx := context.Background()
	state := t.TempDir()
	s := startServeWith(t, append(kernel, "--state-dir", state)...)
	front := append(kernel, "--state-dir", state, "--token", "sekret")
	a := connect(t, s.url, "2025-11-25")
	name := fmt.Sprintf("fs-e2e-%d", time.Now().UnixNano())
	nb := a.strictDo("notebook", map[string]any{"action": "create", "name": name})["notebook"].(string)
	s.config(t, "permission", nb, "rwd")
	s.config(t, "enable", "notebook.remove")
	defer func() {
		s.config(t, "user-rules", "--clear")
		a.ok("fs", map[string]any{"action": "read", "path": "/AGENTS.md"})
		a.strictDo("notebook", map[string]any{"action": "remove", "notebook": nb, "confirm": true})
	}()
	root := "/" + name

	// Documents to work on, created through fs.write.
	page := a.strictDo("fs", map[string]any{"action": "write", "path": root + "/Page", "markdown": "alpha teh\n\nbeta teh\n\ngamma"})["id"].(string)
	// A second document with a list, a super block (complex: skipped) and
	// an attribute the edit must keep.
	mixed := a.strictDo("fs", map[string]any{"action": "write", "path": root + "/Mixed",
		"markdown": "- item teh\n- other\n\n{{{row\nsuper teh\n}}}\n\nplain teh\n\n```sh\necho teh\n```"})["id"].(string)
	a.strictDo("fs", map[string]any{"action": "write", "path": root + "/Page/Child", "content": "child teh"})

	// tree and search.
	tr := a.ok("fs", map[string]any{"action": "tree", "path": root + "/Page", "maxDepth": 0})
	if c0 := tr["tree"].([]any)[0].(map[string]any); c0["path"] != root+"/Page/Child" || c0["children"] != float64(0) {
		t.Fatalf("tree of a document: %v", tr)
	}
	tr = a.ok("fs", map[string]any{"action": "tree", "path": root})
	var p0 map[string]any
	for _, n := range tr["tree"].([]any) {
		if n.(map[string]any)["path"] == root+"/Page" {
			p0 = n.(map[string]any)
		}
	}
	if p0 == nil || p0["children"].([]any)[0].(map[string]any)["path"] != root+"/Page/Child" || tr["partial"] != false {
		t.Fatalf("tree: %v", tr)
	}
	if top := a.ok("fs", map[string]any{"action": "tree", "path": "/", "maxDepth": 0})["tree"].([]any); top[0].(map[string]any)["path"] != "/AGENTS.md" {
		t.Fatalf("tree /: %v", top)
	}
	found := a.ok("fs", map[string]any{"action": "search", "path": root, "query": "TEH"})
	paths := map[any]int{}
	for _, m := range found["data"].([]any) {
		paths[m.(map[string]any)["path"]]++
	}
	if found["total"] != float64(7) || paths[root+"/Page"] != 2 || paths[root+"/Page/Child"] != 1 || paths[root+"/Mixed"] != 4 {
		t.Fatalf("search: %v", found)
	}
	if m, isErr := a.call("fs", map[string]any{"action": "search", "path": root, "query": "([", "regex": true}); !isErr || errCodeOf(m) != "invalid_arguments" {
		t.Fatalf("a bad regular expression: %v", m)
	}

	// replace: ambiguous refused; preflight, commit, replay.
	a.fails("fs", map[string]any{"action": "replace", "path": root + "/Page", "old": "teh", "new": "the", "validateOnly": true}, "invalid_arguments")
	a.fails("fs", map[string]any{"action": "replace", "path": root + "/Page", "old": "teh\n\nbeta", "new": "x", "validateOnly": true}, "invalid_arguments")
	rep := map[string]any{"action": "replace", "path": root + "/Page", "edit": map[string]any{"old": "teh", "new": "the", "replace_all": true}}
	pre := a.ok("fs", with(rep, "validateOnly", true))
	if pre["preconditionField"] != "expectedManifestHash" {
		t.Fatalf("replace preflight: %v", pre)
	}
	res := a.ok("fs", commitOf(rep, pre))
	if res["status"] != "committed" || len(res["changedBlocks"].([]any)) != 2 {
		t.Fatalf("replace commit: %v", res)
	}
	if again := a.ok("fs", commitOf(rep, pre)); again["replayed"] != true || again["resultHash"] != res["resultHash"] {
		t.Fatalf("replace replay: %v", again)
	}
	if md, err := c.ExportMdContent(ctx, page); err != nil || !strings.Contains(md.Content, "alpha the") || !strings.Contains(md.Content, "beta the") {
		t.Fatalf("the kernel does not show the edit: %v %q", err, md.Content)
	}
	mkids, err := c.GetChildBlocks(ctx, mixed)
	if err != nil || len(mkids) != 4 {
		t.Fatalf("mixed document: %v %v", mkids, err)
	}
	if err := c.SetBlockAttrs(ctx, mkids[2].ID, map[string]string{"custom-keep": "yes"}); err != nil {
		t.Fatal(err)
	}
	mrep := map[string]any{"action": "replace", "path": root + "/Mixed", "old": "teh", "new": "the", "replace_all": true}
	mpre0 := a.ok("fs", with(mrep, "validateOnly", true))
	mres := a.ok("fs", commitOf(mrep, mpre0))
	if sk, _ := mres["skippedComplexBlocks"].([]any); mres["status"] != "committed" || len(mres["changedBlocks"].([]any)) != 3 || len(sk) != 1 {
		t.Fatalf("replace in the mixed document: %v", mres)
	}
	if md, _ := c.ExportMdContent(ctx, mixed); !strings.Contains(md.Content, "- item the") || !strings.Contains(md.Content, "super teh") || !strings.Contains(md.Content, "plain the") || !strings.Contains(md.Content, "echo the") {
		t.Fatalf("mixed document after the replace: %q", md.Content)
	}
	if attrs, err := c.GetBlockAttrs(ctx, mkids[2].ID); err != nil || attrs["custom-keep"] != "yes" {
		t.Fatalf("the replace dropped an attribute: %v %v", attrs, err)
	}

	// A stale commit: the target block changed after the preflight.
	stale := map[string]any{"action": "replace", "path": root + "/Page", "old": "gamma", "new": "delta"}
	pre = a.ok("fs", with(stale, "validateOnly", true))
	kids, err := c.GetChildBlocks(ctx, page)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpdateBlock(ctx, kids[2].ID, "markdown", "gamma, edited in the UI"); err != nil {
		t.Fatal(err)
	}
	if e := a.fails("fs", commitOf(stale, pre), "state_changed"); e["writeAttempted"] != false {
		t.Fatalf("stale replace: %v", e)
	}
	// Permission: a read-only notebook refuses the replace.
	s.config(t, "permission", nb, "r")
	a.fails("fs", with(stale, "validateOnly", true), "permission_denied")
	s.config(t, "permission", nb, "rwd")

	// The memory: written over HTTP, read by a stdio front.
	a.fails("fs", map[string]any{"action": "rm", "path": "/AGENTS.md", "validateOnly": true}, "not_found")
	a.strictDo("fs", map[string]any{"action": "write", "path": "/AGENTS.md", "content": "prefers short answers\n\nworks on " + name})
	st := stdioAgent(t, front...)
	if r := st.ok("fs", map[string]any{"action": "read", "path": "/AGENTS.md"}); r["content"] != "prefers short answers\n\nworks on "+name || r["updatedAt"] == nil {
		t.Fatalf("the stdio front reads: %v", r)
	}
	// replace through the stdio front (delegated to the authority).
	mpre := st.ok("fs", map[string]any{"action": "replace", "path": "/AGENTS.md", "old": "short", "new": "brief", "validateOnly": true})
	if r := st.ok("fs", commitOf(map[string]any{"action": "replace", "path": "/AGENTS.md", "old": "short", "new": "brief"}, mpre)); r["status"] != "committed" {
		t.Fatalf("memory replace from stdio: %v", r)
	}
	a.fails("fs", map[string]any{"action": "mv", "from": "/AGENTS.md", "to": root + "/Memory", "confirm": true, "validateOnly": true}, "invalid_arguments")

	// Across a restart of the authority, the memory stays.
	stopServe(t, s)
	s = startServeWith(t, append(kernel, "--state-dir", state)...)
	a = connect(t, s.url, "2025-11-25")
	if r := a.ok("fs", map[string]any{"action": "read", "path": "/AGENTS.md"}); r["content"] != "prefers brief answers\n\nworks on "+name {
		t.Fatalf("after a restart: %v", r)
	}
	// rm clears it, dangerous: confirmation first.
	clear := map[string]any{"action": "rm", "path": "/AGENTS.md"}
	cpre := a.ok("fs", with(clear, "validateOnly", true, "confirm", true))
	a.fails("fs", commitOf(clear, cpre), "confirmation_required")
	if r := a.ok("fs", with(commitOf(clear, cpre), "confirm", true)); r["status"] != "committed" || r["cleared"] != true {
		t.Fatalf("clear: %v", r)
	}
	if r := a.ok("fs", map[string]any{"action": "read", "path": "/AGENTS.md"}); r["content"] != "" {
		t.Fatalf("after clear: %v", r)
	}

	// The user rules: set by the person, read by agents, never written by them.
	s.config(t, "user-rules", "answer in English\n\nask before deleting")
	if out := s.config(t, "show"); !strings.Contains(out, "ask before deleting") {
		t.Fatalf("config show lacks the rules:\n%s", out)
	}
	st = stdioAgent(t, front...)
	if r := st.ok("fs", map[string]any{"action": "read", "path": "/USER_RULES.md"}); r["content"] != "answer in English\n\nask before deleting" || r["readOnly"] != true {
		t.Fatalf("rules from stdio: %v", r)
	}
	a.fails("fs", map[string]any{"action": "write", "path": "/USER_RULES.md", "content": "x", "overwrite": true, "validateOnly": true}, "permission_denied")
	a.fails("fs", map[string]any{"action": "replace", "path": "/USER_RULES.md", "old": "English", "new": "French"}, "permission_denied")
	boot := a.ok("system", map[string]any{"action": "bootstrap"})["agentFiles"].(map[string]any)
	if boot["userRules"].(map[string]any)["text"] != "answer in English\n\nask before deleting" || boot["memory"].(map[string]any)["status"] != "missing" {
		t.Fatalf("bootstrap agentFiles: %v", boot)
	}
	if ls := a.ok("fs", map[string]any{"action": "ls", "path": "/"})["data"].([]any); ls[0].(map[string]any)["path"] != "/AGENTS.md" || ls[1].(map[string]any)["readOnly"] != true {
		t.Fatalf("ls /: %v", ls)
	}
}
