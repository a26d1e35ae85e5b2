package contract

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// frDoc makes a document with one block of each kind findReplace treats
// differently and returns its id and its top-level block ids: a paragraph
// with the keyword in two cases, a bold and a code span, a list, a code
// block, and a ref whose anchor and IAL hold the keyword.
func (s *suite) frDoc(t *testing.T, title, target string) (string, []string) {
	t.Helper()
	md := "apple pie and Apple tart\n\n**apple** bold and `apple` code\n\n- apple item\n\n```\napple code\n```\n\n" +
		"ref ((" + target + " 'apple ref'))\n{: custom-x=\"apple\"}"
	doc := s.newDoc(t, title, md)
	ids := s.childIDs(t, doc)
	if len(ids) != 5 {
		t.Fatalf("find/replace doc has %d blocks, want 5", len(ids))
	}
	return doc, ids
}

// body is a block's kramdown without its IALs, which carry updated.
func (s *suite) body(t *testing.T, id string) string {
	t.Helper()
	var keep []string
	for _, l := range strings.Split(s.kramdown(t, id), "\n") {
		if l = frIALRe.ReplaceAllString(l, ""); strings.TrimSpace(l) != "" {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

var frIALRe = regexp.MustCompile(`\{: [^}]*\}`)

var findReplaceChecks = []check{
	{"find_replace_without_types_changes_nothing", checkFindReplaceNoTypes},
	{"find_replace_text_only_text_any_case", checkFindReplaceText},
	{"find_replace_kinds_by_replace_types", checkFindReplaceKinds},
	{"find_replace_doc_id_is_title_only", checkFindReplaceDocTitle},
	{"find_replace_regex", checkFindReplaceRegex},
	{"find_replace_sql_and_grouped_refused", checkFindReplaceRefused},
}

func checkFindReplaceNoTypes(t *testing.T, s *suite) {
	_, ids := s.docWithParas(t, "fr-target-none", "target")
	_, blocks := s.frDoc(t, "fr-none", ids[0])
	before := s.body(t, blocks[0])
	must(t, "FindReplace", s.c.FindReplace(t.Context(), siyuan.FindReplaceRequest{K: "apple", R: "pear", IDs: blocks}))
	if after := s.body(t, blocks[0]); after != before {
		t.Fatalf("without replaceTypes the block changed: %q -> %q", before, after)
	}
}

func checkFindReplaceText(t *testing.T, s *suite) {
	_, tids := s.docWithParas(t, "fr-target-text", "target")
	_, b := s.frDoc(t, "fr-text", tids[0])
	must(t, "FindReplace", s.c.FindReplace(t.Context(), siyuan.FindReplaceRequest{K: "apple", R: "pear", IDs: b,
		ReplaceTypes: map[string]bool{"text": true}}))
	want := []string{
		"pear pie and pear tart",              // text matches in any case
		"**apple** bold and `apple` code",     // strong and code spans need their own kinds
		"- pear item",                         // a container's text changes too
		"```\napple code\n```",                // code blocks need codeBlock
		"ref ((" + tids[0] + " 'apple ref'))", // the anchor needs blockRef
	}
	for i, id := range b {
		got := s.body(t, id)
		if i == 2 {
			got = strings.Join(strings.Fields(got), " ")
		}
		if got != want[i] {
			t.Errorf("block %d after text replace = %q, want %q", i, got, want[i])
		}
	}
	if a := s.attrs(t, b[4]); a["custom-x"] != "apple" {
		t.Errorf("attributes are never replaced: custom-x = %q", a["custom-x"])
	}
}

func checkFindReplaceKinds(t *testing.T, s *suite) {
	_, tids := s.docWithParas(t, "fr-target-kinds", "target")
	_, b := s.frDoc(t, "fr-kinds", tids[0])
	must(t, "FindReplace", s.c.FindReplace(t.Context(), siyuan.FindReplaceRequest{K: "apple", R: "pear", IDs: b[1:],
		ReplaceTypes: map[string]bool{"strong": true, "code": true, "codeBlock": true, "blockRef": true}}))
	want := []string{"**pear** bold and `pear` code", "- apple item", "```\npear code\n```", "ref ((" + tids[0] + " \"pear ref\"))"}
	for i, id := range b[1:] {
		got := s.body(t, id)
		if i == 1 {
			got = strings.Join(strings.Fields(got), " ")
		}
		if got != want[i] {
			t.Errorf("block %d after kind replace = %q, want %q", i+1, got, want[i])
		}
	}
	// Span and code block kinds match case-sensitively.
	must(t, "FindReplace", s.c.FindReplace(t.Context(), siyuan.FindReplaceRequest{K: "PEAR", R: "fig", IDs: b[3:4],
		ReplaceTypes: map[string]bool{"codeBlock": true}}))
	if got := s.body(t, b[3]); got != "```\npear code\n```" {
		t.Errorf("code block after a case-mismatched replace = %q", got)
	}
}

func checkFindReplaceDocTitle(t *testing.T, s *suite) {
	title := "fr-title apple " + randWord(4)
	doc, ids := s.docWithParas(t, title, "apple body")
	must(t, "FindReplace", s.c.FindReplace(t.Context(), siyuan.FindReplaceRequest{K: "apple", R: "pear", IDs: []string{doc},
		ReplaceTypes: map[string]bool{"text": true}}))
	if got := s.body(t, ids[0]); got != "apple body" {
		t.Errorf("a document id touches no block of its body: %q", got)
	}
	hp, err := s.c.GetHPathByID(t.Context(), doc)
	must(t, "GetHPathByID", err)
	if hp != "/"+title {
		t.Errorf("without docTitle the title stays: hpath %q", hp)
	}
	must(t, "FindReplace", s.c.FindReplace(t.Context(), siyuan.FindReplaceRequest{K: "apple", R: "pe/ar", IDs: []string{doc},
		ReplaceTypes: map[string]bool{"docTitle": true}}))
	want := strings.Replace(title, "apple", "pe／ar", 1)
	s.eventually(t, "document renamed", func() bool {
		hp, err = s.c.GetHPathByID(t.Context(), doc)
		must(t, "GetHPathByID", err)
		return hp == "/"+want
	})
}

func checkFindReplaceRegex(t *testing.T, s *suite) {
	_, ids := s.docWithParas(t, "fr-regex", "alpha 12 beta 345")
	must(t, "FindReplace", s.c.FindReplace(t.Context(), siyuan.FindReplaceRequest{K: `[0-9]+`, R: "#", IDs: ids, Method: 3,
		ReplaceTypes: map[string]bool{"text": true}}))
	if got := s.body(t, ids[0]); got != "alpha # beta #" {
		t.Fatalf("regex replace = %q", got)
	}
}

func checkFindReplaceRefused(t *testing.T, s *suite) {
	_, ids := s.docWithParas(t, "fr-refused", "apple")
	for _, c := range []struct {
		req  siyuan.FindReplaceRequest
		want string
	}{
		{siyuan.FindReplaceRequest{K: "apple", R: "pear", IDs: ids, Method: 2, ReplaceTypes: map[string]bool{"text": true}}, "SQL search mode does not support"},
		{siyuan.FindReplaceRequest{K: "apple", R: "pear", IDs: ids, GroupBy: 1, ReplaceTypes: map[string]bool{"text": true}}, "not supported after grouping"},
	} {
		err := s.c.FindReplace(t.Context(), c.req)
		var api *siyuan.APIError
		if !errors.As(err, &api) || api.Code != 1 || !strings.Contains(api.Msg, c.want) {
			t.Errorf("%+v: got %v, want code 1 %q", c.req, err, c.want)
		}
	}
	if got := s.body(t, ids[0]); got != "apple" {
		t.Fatalf("a refused replace changed the block: %q", got)
	}
}
