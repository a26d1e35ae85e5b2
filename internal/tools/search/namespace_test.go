package search

import (
	"context"
	"slices"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// anchors names blocks of the fixture: alpha "Atlas" (alias "atl, Ｇlobe"),
// beta alias "globe" scoped "work", gamma alias "globe" scoped "home"; and
// in a hidden notebook a block named "Secret".
func anchors(t *testing.T) (*tooltest.Fixture, string) {
	t.Helper()
	f := tooltest.New(t, testTools)
	ctx := context.Background()
	set := func(id string, attrs map[string]string) {
		if err := f.C.SetBlockAttrs(ctx, id, attrs); err != nil {
			t.Fatal(err)
		}
	}
	set(f.Blocks[1], map[string]string{"name": "Atlas", "alias": "atl，Ｇlobe"})
	set(f.Blocks[3], map[string]string{"alias": "globe", "custom-anchor-scope": "work"})
	set(f.Blocks[5], map[string]string{"alias": "globe,zz", "custom-anchor-scope": "home, misc"})
	hidden, err := f.C.CreateNotebook(ctx, "Hidden")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := f.C.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: hidden.ID, Path: "/H", Markdown: "hidden text"})
	if err != nil {
		t.Fatal(err)
	}
	set(doc, map[string]string{"name": "Secret", "alias": "globe"})
	if err := f.C.FlushTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	f.Policy = &tools.Policy{Notebooks: map[string]tools.Level{hidden.ID: tools.LevelNone}, Default: tools.LevelRead, AllActions: true}
	return f, hidden.ID
}

func TestCheckAnchor(t *testing.T) {
	f, _ := anchors(t)
	res := f.OK(t, "search", map[string]any{"action": "check_anchor", "candidateKind": "alias",
		"candidates": []string{" ATLAS ", "globe", "secret, fresh"}, "activeScopes": []string{"Work"}})
	checks := res["checks"].([]any)
	status := map[string]string{}
	for _, c := range checks {
		c := c.(map[string]any)
		status[c["candidate"].(string)] = c["status"].(string)
		if c["candidate"] == "globe" && (c["targetCount"].(float64) != 3 || c["resolvedTargetId"] != f.Blocks[3]) {
			t.Errorf("globe: %v (alpha by NFKC alias, beta and gamma; the hidden one not counted; work scope picks beta)", c)
		}
	}
	want := map[string]string{"atlas": "collision_requires_adjudication", "globe": "resolved_by_scope", "secret": "available", "fresh": "available"}
	for k, v := range want {
		if status[k] != v {
			t.Errorf("%s: status %q, want %q (all: %v)", k, status[k], v, status)
		}
	}
	if res["availableCount"].(float64) != 2 || res["collisionCount"].(float64) != 2 || res["namespaceScanComplete"] != true {
		t.Errorf("counts: %v", res)
	}
	// Without scopes an alias held twice needs context; excluding the
	// block being edited frees a name.
	res = f.OK(t, "search", map[string]any{"action": "check_anchor", "candidateKind": "alias", "candidates": []string{"zz"}})
	if c := res["checks"].([]any)[0].(map[string]any); c["status"] != "alias_multi_match_requires_context" || c["targetCount"].(float64) != 1 {
		t.Errorf("zz: %v", c)
	}
	res = f.OK(t, "search", map[string]any{"action": "check_anchor", "candidateKind": "name", "candidates": []string{"atlas"},
		"excludeBlockIds": []string{f.Blocks[1]}})
	if c := res["checks"].([]any)[0].(map[string]any); c["status"] != "available" {
		t.Errorf("atlas excluding its block: %v", c)
	}
}

func TestKnowledge(t *testing.T) {
	f, hidden := anchors(t)
	call := func(args map[string]any) map[string]any {
		return f.OK(t, "search", tooltest.CopyArgs(args, "action", "knowledge"))
	}
	exact := call(map[string]any{"query": "atl"})
	data := exact["data"].([]any)
	if exact["retrievalMode"] != "namespace_exact" || exact["resolutionStatus"] != "unique" || len(data) != 1 || data[0].(map[string]any)["id"] != f.Blocks[1] {
		t.Fatalf("exact alias: %v", exact)
	}
	amb := call(map[string]any{"query": "globe"})
	if amb["retrievalMode"] != "namespace_ambiguous" || amb["candidateCount"].(float64) != 3 {
		t.Fatalf("ambiguous: %v", amb)
	}
	scoped := call(map[string]any{"query": "globe", "activeScopes": []string{"home"}})
	if scoped["resolutionStatus"] != "resolved_by_scope" || scoped["data"].([]any)[0].(map[string]any)["id"] != f.Blocks[5] {
		t.Fatalf("scoped: %v", scoped)
	}
	// No exact anchor, and the embedded kernel (like a fresh SiYuan 3.7.3)
	// has no embeddings: the contained anchor "atlas" answers alone.
	seeded := call(map[string]any{"query": "what is the atlas project"})
	if seeded["retrievalMode"] != "namespace_only" || seeded["semanticAvailable"] != false ||
		len(seeded["data"].([]any)) != 1 || seeded["data"].([]any)[0].(map[string]any)["id"] != f.Blocks[1] {
		t.Fatalf("seeded without semantic: %v", seeded)
	}
	if secret := call(map[string]any{"query": "secret"}); len(secret["data"].([]any)) != 0 {
		t.Fatalf("a hidden anchor answered: %v", secret)
	}
	off := call(map[string]any{"query": "atl", "namespaceMode": "off"})
	if off["retrievalMode"] != "namespace_only" || len(off["data"].([]any)) != 0 {
		t.Fatalf("namespace off: %v", off)
	}
	f.WantMissing(t, "search", map[string]any{"action": "knowledge", "query": "atl", "notebooks": []string{hidden}}, map[string]string{hidden: tooltest.NewID()})
}

func TestSemanticUnavailable(t *testing.T) {
	f := tooltest.New(t, testTools)
	e := f.WantErr(t, "search", map[string]any{"action": "semantic", "query": "anything"}, failure.KernelError)
	if e.Details["kernelVersion"] != "3.7.3" || e.Details["semanticSince"] != semanticSince || e.Details["embeddingsEnabled"] != false {
		t.Fatalf("semantic without embeddings: %+v", e)
	}
}

// TestCollapse: a nameless hit that references blocks stands for them,
// named blocks first, unreadable targets dropped.
func TestCollapse(t *testing.T) {
	for _, c := range []struct {
		name  string
		hits  []string
		named map[string]bool
		refs  map[string][]string
		known map[string]bool
		want  []string
		refsN map[string]int
	}{
		{"plain hits keep their order", []string{"a", "b"}, nil, nil, map[string]bool{"a": true, "b": true}, []string{"a", "b"}, nil},
		{"ref-only hit collapses", []string{"r", "b"}, nil, map[string][]string{"r": {"t"}}, map[string]bool{"r": true, "t": true, "b": true},
			[]string{"t", "b"}, map[string]int{"t": 1}},
		{"named first", []string{"a", "n"}, map[string]bool{"n": true}, nil, map[string]bool{"a": true, "n": true}, []string{"n", "a"}, nil},
		{"a named hit does not collapse", []string{"n"}, map[string]bool{"n": true}, map[string][]string{"n": {"t"}}, map[string]bool{"n": true, "t": true},
			[]string{"n"}, nil},
		{"unreadable target dropped", []string{"r"}, nil, map[string][]string{"r": {"hidden"}}, map[string]bool{"r": true}, nil, nil},
		{"two refs to one target", []string{"r1", "r2"}, nil, map[string][]string{"r1": {"t"}, "r2": {"t"}}, map[string]bool{"r1": true, "r2": true, "t": true},
			[]string{"t"}, map[string]int{"t": 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, cand := range collapse(c.hits, c.named, c.refs, c.known) {
				got = append(got, cand.TargetID)
				if cand.CollapsedRefs != c.refsN[cand.TargetID] {
					t.Errorf("%s collapsed %d refs, want %d", cand.TargetID, cand.CollapsedRefs, c.refsN[cand.TargetID])
				}
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
}

func TestTokens(t *testing.T) {
	for in, want := range map[string][]string{
		"Ａtlas , b，C": {"atlas", "b", "c"},
		" , ,":        nil,
		"ＡＢＣ":         {"abc"},
		"两个字,ab":      {"两个字", "ab"},
	} {
		if got := splitTokens(in); !slices.Equal(got, want) {
			t.Errorf("splitTokens(%q) = %v, want %v", in, got, want)
		}
	}
	for tok, want := range map[string]bool{"ab": false, "abcd": true, "两个": true, "两": false, "a b c": false} {
		if containable(tok) != want {
			t.Errorf("containable(%q) = %v", tok, !want)
		}
	}
}
