package contract

import (
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// uiChecks are SiYuan's UI nudges, which Sisyphus sends after a committed
// write so that open editors and the file tree show it. They change no
// data and answer code 0 at once, whatever the id.
var uiChecks = []check{
	{"ui_reload_protyle_known_and_unknown_ids", checkReloadProtyle},
	{"ui_reload_filetree_and_tag_ignore_their_body", checkReloadFiletreeTag},
	{"ui_reload_attribute_view_any_id", checkReloadAttributeView},
	{"ui_reload_protyle_parses_its_body", checkReloadProtyleBody},
	{"ui_reload_needs_the_token", checkReloadNeedsToken},
}

func checkReloadProtyle(t *testing.T, s *suite) {
	doc := s.newDoc(t, "reload-"+randWord(6), "shown")
	before := s.children(t, doc)
	for _, id := range []string{doc, before[0].ID, "20200101000000-aaaaaaa"} {
		must(t, "ReloadProtyle("+id+")", s.c.ReloadProtyle(t.Context(), id))
	}
	if after := s.children(t, doc); len(after) != len(before) || after[0].ID != before[0].ID {
		t.Fatalf("ReloadProtyle changed the document: %v -> %v", before, after)
	}
}

func checkReloadFiletreeTag(t *testing.T, s *suite) {
	must(t, "ReloadFiletree", s.c.ReloadFiletree(t.Context()))
	must(t, "ReloadTag", s.c.ReloadTag(t.Context()))
	for _, ep := range []string{"/api/ui/reloadFiletree", "/api/ui/reloadTag"} {
		for _, body := range []string{"", "not json", "[]"} {
			r := s.rawJSON(t, ep, body)
			if r.status != 200 || !strings.HasPrefix(string(r.body), `{"code":0,`) {
				t.Errorf("%s with body %q: %d %s", ep, body, r.status, r.body)
			}
		}
	}
}

func checkReloadAttributeView(t *testing.T, s *suite) {
	for _, id := range []string{"20200101000000-aaaaaaa", "not-an-id"} {
		must(t, "ReloadAttributeView("+id+")", s.c.ReloadAttributeView(t.Context(), id))
	}
}

// checkReloadProtyleBody: a body that is not JSON is refused with the
// kernel's parse error; a JSON body without an id still answers code 0
// (SiYuan panics after its deferred reply is written).
func checkReloadProtyleBody(t *testing.T, s *suite) {
	const ep = "/api/ui/reloadProtyle"
	for _, c := range []struct{ body, want string }{
		{"", `{"code":-1,"msg":"Parses request [` + ep + `] failed: the request body is empty or truncated (EOF)","data":null}`},
		{"x", `{"code":-1,"msg":"Parses request [` + ep + `] failed: invalid character 'x' looking for beginning of value","data":null}`},
		{"{}", `{"code":0,"msg":"","data":null}`},
		{`{"id":5}`, `{"code":0,"msg":"","data":null}`},
	} {
		r := s.rawJSON(t, ep, c.body)
		if r.status != 200 || strings.TrimSpace(string(r.body)) != c.want {
			t.Errorf("%s with body %q: %d %s, want %s", ep, c.body, r.status, r.body, c.want)
		}
	}
}

func checkReloadNeedsToken(t *testing.T, s *suite) {
	err := s.wrongTokenClient(t).ReloadFiletree(t.Context())
	if ae, ok := err.(*siyuan.AuthError); !ok || ae.Status != 401 {
		t.Fatalf("ReloadFiletree with a wrong token: %T %v, want a 401 AuthError", err, err)
	}
}
