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

// TestTagToolThroughTheBinary walks every action of the tag tool through
// the binary against the embedded kernel: list and search, a rename
// preflighted, committed and replayed, a stale rename refused, the gate on
// every notebook that uses the tag (hidden ones' tags never listed), and a
// removal that needs confirmation.
func TestTagToolThroughTheBinary(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	s := startServeWith(t, "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", t.TempDir())
	a := connect(t, s.url, "2025-11-25")
	c := kernelClient(t, k.url, "tok")
	nb := a.strictDo("notebook", map[string]any{"action": "create", "name": "Tags"})["notebook"].(string)
	other := a.strictDo("notebook", map[string]any{"action": "create", "name": "Other tags"})["notebook"].(string)
	tagFlow(t, s, a, c, nb, other)
}

// TestTagToolLive runs the same walk against a real SiYuan when
// SISYPHUS_LIVE_SIYUAN_URL and SISYPHUS_LIVE_SIYUAN_TOKEN are set, in two
// notebooks it creates and removes; its labels are its own (random), so no
// user's tag is touched.
func TestTagToolLive(t *testing.T) {
	url, tok := testvars.Live(t)
	s := startServeWith(t, "--siyuan-url", url, "--siyuan-token", tok, "--state-dir", t.TempDir())
	a := connect(t, s.url, "2025-11-25")
	s.config(t, "enable", "notebook.remove")
	stamp := time.Now().UnixNano()
	var nbs []string
	for _, n := range []string{"tags", "other-tags"} {
		nb := a.strictDo("notebook", map[string]any{"action": "create", "name": fmt.Sprintf("sisyphus-live-%s-%d", n, stamp)})["notebook"].(string)
		s.config(t, "permission", nb, "rwd")
		nbs = append(nbs, nb)
	}
	defer func() {
		for _, nb := range nbs {
			s.config(t, "permission", nb, "rwd")
			a.strictDo("notebook", map[string]any{"action": "remove", "notebook": nb, "confirm": true})
		}
	}()
	tagFlow(t, s, a, kernelClient(t, url, tok), nbs[0], nbs[1])
}

// blockTagsOf is the blocks.tag column of a block, read from the kernel.
func blockTagsOf(t *testing.T, c *siyuan.Client, id string) string {
	t.Helper()
	ctx := context.Background()
	if err := c.FlushTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	rows, err := c.QuerySQL(ctx, "SELECT tag FROM blocks WHERE id = '"+id+"' LIMIT 1")
	if err != nil || len(rows) != 1 {
		t.Fatalf("tags of %s: %v %v", id, rows, err)
	}
	return fmt.Sprint(rows[0]["tag"])
}

func tagFlow(t *testing.T, s *serveProc, a *agent, c *siyuan.Client, nb, other string) {
	s.config(t, "permission", nb, "rwd")
	s.config(t, "permission", other, "rwd")
	l := fmt.Sprintf("e2e%d", time.Now().UnixNano()%1e9)
	doc := a.strictDo("document", map[string]any{"action": "create", "notebook": nb, "path": "/Tagged",
		"markdown": "alpha #" + l + "# and #" + l + "/kid#\n\nbeta #" + l + "#"})["id"].(string)
	kids := a.ok("block", map[string]any{"action": "get_children", "id": doc})["data"].([]any)
	p0 := kids[0].(map[string]any)["id"].(string)
	p1 := kids[1].(map[string]any)["id"].(string)
	odoc := a.strictDo("document", map[string]any{"action": "create", "notebook": other, "path": "/Elsewhere",
		"markdown": "gamma #" + l + "# #" + l + "private#"})["id"].(string)
	op := a.ok("block", map[string]any{"action": "get_children", "id": odoc})["data"].([]any)[0].(map[string]any)["id"].(string)

	// list: the tree with counts, and a keyword search.
	tree := fmt.Sprint(a.ok("tag", map[string]any{"action": "list", "ignoreMaxListHint": true})["tags"])
	if !strings.Contains(tree, "label:"+l+" name:"+l) || !strings.Contains(tree, "label:"+l+"/kid") || !strings.Contains(tree, l+"private") {
		t.Fatalf("tag list: %s", tree)
	}
	found := a.ok("tag", map[string]any{"action": "list", "keyword": l + " kid"})
	if fmt.Sprint(found["tags"]) != "[<mark>"+l+"</mark>/<mark>kid</mark>]" {
		t.Fatalf("tag search: %v", found)
	}
	// A hidden notebook's tags are not listed.
	s.config(t, "permission", other, "none")
	if tree := fmt.Sprint(a.ok("tag", map[string]any{"action": "list"})["tags"]); strings.Contains(tree, l+"private") || !strings.Contains(tree, l) {
		t.Fatalf("tag list with a hidden notebook: %s", tree)
	}
	if found := a.ok("tag", map[string]any{"action": "list", "query": l + "private"}); fmt.Sprint(found["tags"]) != "[]" {
		t.Fatalf("tag search with a hidden notebook: %v", found)
	}

	// rename needs write on every notebook that uses the tag: refused
	// while the other notebook is read-only, naming it, and while any
	// notebook is hidden, naming none (whatever the tag: SiYuan renames it
	// everywhere), never with its content.
	ren := map[string]any{"action": "rename", "oldLabel": l, "newLabel": l + "x"}
	for _, level := range []string{"none", "r"} {
		s.config(t, "permission", other, level)
		m := a.fails("tag", with(ren, "validateOnly", true), "permission_denied")
		if strings.Contains(fmt.Sprint(m), "gamma") {
			t.Fatalf("the refusal shows the other notebook's text: %v", m)
		}
		if named := m["error"].(map[string]any)["notebook"]; level == "none" && (named != nil || strings.Contains(fmt.Sprint(m), other)) || level == "r" && named != other {
			t.Fatalf("the refusal at %s: %v", level, m)
		}
	}
	s.config(t, "permission", other, "rw")
	pre := a.ok("tag", with(ren, "validateOnly", true))
	if pre["preconditionField"] != "expectedManifestHash" || pre["blockCount"] != float64(3) || pre["notebookCount"] != float64(2) {
		t.Fatalf("rename preflight: %v", pre)
	}
	res := a.ok("tag", commitOf(ren, pre))
	if res["status"] != "committed" || res["writeSafetyGuaranteed"] != true {
		t.Fatalf("rename commit: %v", res)
	}
	if rep := a.ok("tag", commitOf(ren, pre)); rep["replayed"] != true || rep["resultHash"] != res["resultHash"] {
		t.Fatalf("rename replay: %v", rep)
	}
	for id, want := range map[string]string{p0: "#" + l + "x# #" + l + "x/kid#", p1: "#" + l + "x#", op: "#" + l + "x# #" + l + "private#"} {
		if got := blockTagsOf(t, c, id); got != want {
			t.Errorf("after rename, %s carries %q, want %q", id, got, want)
		}
	}

	// A tagged block changed after the preflight: the commit is refused.
	l2 := l + "x"
	back := map[string]any{"action": "rename", "oldLabel": l2, "newLabel": l + "y"}
	pre = a.ok("tag", with(back, "validateOnly", true))
	if _, err := c.UpdateBlock(context.Background(), p1, "markdown", "beta changed #"+l2+"#"); err != nil {
		t.Fatal(err)
	}
	a.fails("tag", commitOf(back, pre), "state_changed")
	if got := blockTagsOf(t, c, p0); got != "#"+l2+"# #"+l2+"/kid#" {
		t.Fatalf("a stale rename ran: %q", got)
	}

	// remove is dangerous and needs delete on every notebook that uses it.
	rm := map[string]any{"action": "remove", "label": l2}
	a.fails("tag", with(rm, "validateOnly", true), "permission_denied")
	s.config(t, "permission", other, "rwd")
	pre = a.ok("tag", with(rm, "validateOnly", true))
	if m, isErr := a.call("tag", commitOf(rm, pre)); !isErr || errCodeOf(m) != "confirmation_required" {
		t.Fatalf("unconfirmed remove: %v", m)
	}
	if got := blockTagsOf(t, c, p1); !strings.Contains(got, l2) {
		t.Fatalf("an unconfirmed remove ran: %q", got)
	}
	res = a.ok("tag", with(commitOf(rm, pre), "confirm", true))
	if res["status"] != "committed" {
		t.Fatalf("remove: %v", res)
	}
	for id, want := range map[string]string{p0: "#" + l2 + "/kid#", p1: "", op: "#" + l + "private#"} {
		if got := blockTagsOf(t, c, id); got != want {
			t.Errorf("after remove, %s carries %q, want %q", id, got, want)
		}
	}
	a.fails("tag", with(rm, "validateOnly", true), "not_found")
}
