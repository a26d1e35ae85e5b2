package search

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// frFixture: a strict fixture with a document of blocks the replace treats
// differently; it returns the doc and its blocks [text Apple, **apple**,
// list, code block, plain].
func frFixture(t *testing.T) (*tooltest.Fixture, string, []string) {
	t.Helper()
	f := tooltest.NewStrict(t, false, testTools)
	ctx := context.Background()
	doc, err := f.C.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: f.NB, Path: "/Fruit apple",
		Markdown: "Apple pie\n\n**apple** bold\n\n- apple item\n\n```\napple code\n```\n\nno fruit here"})
	if err != nil {
		t.Fatal(err)
	}
	kids, err := f.C.GetChildBlocks(ctx, doc)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, k := range kids {
		ids = append(ids, k.ID)
	}
	return f, doc, ids
}

func TestFindReplace(t *testing.T) {
	f, doc, b := frFixture(t)
	args := map[string]any{"action": "find_replace", "k": "apple", "r": "pear", "ids": []string{b[0], b[1], b[2], b[3], b[4], doc}}
	pre := f.Preflight(t, "search", args, "expectedManifestHash", 6)
	if got := toStrings(pre["willReplace"]); !slices.Equal(got, sorted(b[0], b[2])) {
		t.Fatalf("willReplace %v: text matches in any case; bold, code block, the plain block and the title need other kinds", got)
	}
	res := f.Commit(t, "search", args, pre)
	if res["count"].(float64) != 2 {
		t.Fatalf("commit: %v", res)
	}
	for i, want := range map[int]string{0: "pear pie", 1: "**apple** bold", 4: "no fruit here"} {
		if got := f.Text(t, b[i]); !strings.HasPrefix(got, want) {
			t.Errorf("block %d = %q, want %q", i, got, want)
		}
	}
	f.Replay(t, "search", args, pre, res)
	// Nothing is left to replace in text.
	f.WantErr(t, "search", tooltest.CopyArgs(args, "validateOnly", true), failure.NotFound)

	// Kinds, a title, and a stale manifest.
	args = map[string]any{"action": "find_replace", "k": "apple", "r": "fig", "ids": []string{b[1], b[3], doc},
		"replaceTypes": map[string]any{"strong": true, "codeBlock": true, "docTitle": true}}
	pre = f.Preflight(t, "search", args, "expectedManifestHash", 3)
	f.Drifted(t, "search", args, pre, func() {
		if _, err := f.C.UpdateBlock(context.Background(), b[3], "markdown", "```\napple code changed\n```"); err != nil {
			t.Fatal(err)
		}
	})
	pre = f.Preflight(t, "search", args, "expectedManifestHash", 3)
	f.Commit(t, "search", args, pre)
	if got := f.Text(t, b[1]); !strings.HasPrefix(got, "**fig** bold") {
		t.Errorf("bold after strong replace = %q", got)
	}
	if got := f.Text(t, b[3]); !strings.Contains(got, "fig code changed") {
		t.Errorf("code block after codeBlock replace = %q", got)
	}
	hp, err := f.C.GetHPathByID(context.Background(), doc)
	if err != nil || hp != "/Fruit fig" {
		t.Errorf("title after docTitle replace: %q %v", hp, err)
	}

	// Regex, with the extra readback skipped (a pattern has no fixed text).
	rx := map[string]any{"action": "find_replace", "k": `p[a-z]+r`, "r": "plum", "ids": []string{b[0]}, "methodName": "regex"}
	f.Commit(t, "search", rx, f.Preflight(t, "search", rx, "expectedManifestHash", 1))
	if got := f.Text(t, b[0]); !strings.HasPrefix(got, "plum pie") {
		t.Errorf("after regex replace = %q", got)
	}
}

func TestFindReplaceRefusals(t *testing.T) {
	f, _, b := frFixture(t)
	for _, c := range []struct {
		args map[string]any
		code failure.Code
		msg  string
	}{
		{map[string]any{"k": "apple", "r": "apple", "ids": []string{b[0]}}, failure.InvalidArguments, "the same"},
		{map[string]any{"k": "apple", "r": "x", "ids": []string{}}, failure.InvalidArguments, "at least one"},
		{map[string]any{"k": "apple", "r": "x", "ids": []string{b[0]}, "method": 2}, failure.InvalidArguments, "SQL"},
		{map[string]any{"k": "apple", "r": "x", "ids": []string{b[0]}, "groupBy": 1}, failure.InvalidArguments, "grouped"},
		{map[string]any{"k": "(", "r": "x", "ids": []string{b[0]}, "method": 3}, failure.InvalidArguments, "regular expression"},
		{map[string]any{"k": "apple", "r": "x", "ids": []string{b[0]}, "replaceTypes": map[string]any{"bogus": true}}, failure.InvalidArguments, "no kind"},
		{map[string]any{"k": "apple", "r": "x", "ids": []string{b[0]}, "replaceTypes": map[string]any{"text": false}}, failure.InvalidArguments, "enables no kind"},
		{map[string]any{"k": "apple", "r": "x", "ids": []string{b[4]}}, failure.NotFound, "no block of ids holds"},
		{map[string]any{"k": "apple", "r": "x", "ids": []string{"20200101000000-aaaaaaa"}}, failure.NotFound, ""},
	} {
		args := tooltest.CopyArgs(c.args, "action", "find_replace", "validateOnly", true)
		e := f.WantErr(t, "search", args, c.code)
		if !strings.Contains(e.Message, c.msg) || e.WriteAttempted == nil || *e.WriteAttempted {
			t.Errorf("%v: %+v", c.args, e)
		}
	}
	// Dangerous: unconfirmed, the commit is refused.
	args := map[string]any{"action": "find_replace", "k": "apple", "r": "x", "ids": []string{b[0]}}
	pre := f.Preflight(t, "search", args, "expectedManifestHash", 1)
	f.Unconfirmed = true
	f.WantErr(t, "search", tooltest.CommitArgs(args, pre), failure.ConfirmationRequired)
	f.Unconfirmed = false
	// Write permission on the block's notebook.
	f.Policy = &tools.Policy{Notebooks: map[string]tools.Level{f.NB: tools.LevelRead}, Default: tools.LevelDelete, AllActions: true, Strict: true}
	f.WantErr(t, "search", tooltest.CopyArgs(args, "validateOnly", true), failure.PermissionDenied)
}

// TestMatcher: which blocks the kernel's walk would change, from kramdown.
func TestMatcher(t *testing.T) {
	for _, c := range []struct {
		md    string
		k     string
		kinds []string
		regex bool
		want  bool
	}{
		{"Apple pie", "apple", []string{"text"}, false, true},
		{"**apple** bold", "apple", []string{"text"}, false, false},
		{"**apple** bold", "apple", []string{"strong"}, false, true},
		{"**Apple** bold", "apple", []string{"strong"}, false, false},
		{"`a<b` code", "a<b", []string{"code"}, false, true},
		{"```\napple\n```", "apple", []string{"text"}, false, false},
		{"```\napple\n```", "apple", []string{"codeBlock"}, false, true},
		{"see ((20200101000000-aaaaaaa 'apple'))", "apple", []string{"text"}, false, false},
		{"see ((20200101000000-aaaaaaa 'apple'))", "apple", []string{"blockRef"}, false, true},
		{"plain\n{: custom-x=\"apple\"}", "apple", []string{"text"}, false, false},
		{"- one\n- apple", "apple", []string{"text"}, false, true},
		{"x 123", `[0-9]+`, []string{"text"}, true, true},
		{"$apple$ math", "apple", []string{"inlineMath"}, false, true},
		{"#apple# tag", "apple", []string{"tag"}, false, true},
		{"[apple](https://example.com)", "apple", []string{"aText"}, false, true},
		{"[x](https://apple.example)", "apple", []string{"aHref"}, false, true},
	} {
		kinds := map[string]bool{}
		for _, k := range c.kinds {
			kinds[k] = true
		}
		m := newMatcher(frArgs{K: c.k, Kinds: kinds, Regex: c.regex})
		if got := m.block(c.md); got != c.want {
			t.Errorf("%q find %q in %v: %v, want %v", c.md, c.k, c.kinds, got, c.want)
		}
	}
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func sorted(s ...string) []string { slices.Sort(s); return s }
