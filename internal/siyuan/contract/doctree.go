package contract

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// The checks of /api/filetree/listDocTree: the ids of the documents under
// one document, nested as they nest, read from the notebook's directory.

var docTreeChecks = []check{
	{"filetree_doc_tree", checkDocTree},
	{"filetree_doc_tree_errors", checkDocTreeErrors},
}

// docTree posts body to listDocTree and returns the raw reply; the envelope
// is compared whole, so that a field SiYuan leaves out (children of a leaf)
// stays left out.
func (s *suite) docTree(t *testing.T, body any) string {
	t.Helper()
	b, err := json.Marshal(body)
	must(t, "marshal", err)
	return strings.TrimSpace(string(s.rawJSON(t, "/api/filetree/listDocTree", string(b)).body))
}

func checkDocTree(t *testing.T, s *suite) {
	w := randWord(8)
	a := s.newDocAt(t, "/dt-"+w, "a")
	b := s.newDocAt(t, "/dt-"+w+"/b", "b")
	c := s.newDocAt(t, "/dt-"+w+"/b/c", "c")
	e := s.newDocAt(t, "/dt-"+w+"/e", "e")
	s.flush(t)
	// Siblings come in file-name order, which for ids is id order.
	kids := []string{
		`{"id":"` + b + `","children":[{"id":"` + c + `"}]}`,
		`{"id":"` + e + `"}`,
	}
	if e < b {
		slices.Reverse(kids)
	}
	want := `{"code":0,"msg":"","data":{"tree":[` + strings.Join(kids, ",") + `]}}`
	// The path is a document's file path, with or without ".sy", the
	// leading slash and a trailing slash.
	for _, p := range []string{"/" + a, "/" + a + ".sy", a, "/" + a + "/"} {
		if got := s.docTree(t, map[string]any{"notebook": s.box, "path": p}); got != want {
			t.Fatalf("listDocTree %q = %s, want %s", p, got, want)
		}
	}
	if got, want := s.docTree(t, map[string]any{"notebook": s.box, "path": "/" + a + "/" + b}), `{"code":0,"msg":"","data":{"tree":[{"id":"`+c+`"}]}}`; got != want {
		t.Fatalf("listDocTree of the middle document = %s, want %s", got, want)
	}
	// A directory without documents answers a null tree.
	if got, want := s.docTree(t, map[string]any{"notebook": s.box, "path": "/.siyuan"}), `{"code":0,"msg":"","data":{"tree":null}}`; got != want {
		t.Fatalf("listDocTree /.siyuan = %s, want %s", got, want)
	}
}

func checkDocTreeErrors(t *testing.T, s *suite) {
	leaf := s.newDoc(t, "dt-leaf-"+randWord(8), "x")
	s.flush(t)
	null := `{"code":0,"msg":"","data":null}`
	fail := func(msg string) string { return `{"code":-1,"msg":"` + msg + `","data":null}` }
	for _, tc := range []struct {
		body any
		want string
	}{
		// The notebook's own directory is not a document's.
		{map[string]any{"notebook": s.box, "path": "/"}, fail("path escapes notebook directory")},
		{map[string]any{"notebook": s.box, "path": ""}, fail("path escapes notebook directory")},
		{map[string]any{"notebook": s.box, "path": "/./"}, fail("path escapes notebook directory")},
		{map[string]any{"notebook": s.box, "path": "/x..y"}, fail("path must not contain '..'")},
		{map[string]any{"notebook": "nope", "path": "/"}, fail("invalid ID argument")},
		// Missing or mistyped arguments fail SiYuan's unchecked reads.
		{map[string]any{"notebook": s.box}, null},
		{map[string]any{"path": "/"}, null},
		{map[string]any{"notebook": s.box, "path": 5}, null},
	} {
		if got := s.docTree(t, tc.body); got != tc.want {
			t.Fatalf("listDocTree %v = %s, want %s", tc.body, got, tc.want)
		}
	}
	// A document without children has no directory, and an unknown one
	// none either: the file system's error, naming the kernel's own
	// workspace path, which is left out of the comparison.
	for _, id := range []string{leaf, "20200101000000-zzzzzzz"} {
		got := s.docTree(t, map[string]any{"notebook": s.box, "path": "/" + id})
		var env struct {
			Code int             `json:"code"`
			Msg  string          `json:"msg"`
			Data json.RawMessage `json:"data"`
		}
		must(t, "decode listDocTree", json.Unmarshal([]byte(got), &env))
		if env.Code != -1 || string(env.Data) != "null" || !strings.HasPrefix(env.Msg, "open /") ||
			!strings.HasSuffix(env.Msg, "/data/"+s.box+"/"+id+": no such file or directory") {
			t.Fatalf("listDocTree /%s = %s, want the file system's not-found error", id, got)
		}
	}
}
