package file

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// snapPages runs export_markdown_snapshot from its first page to its
// last, following nextCursor, and returns every document in order.
func (s *sfix) snapPages(t *testing.T, args map[string]any) (docs []map[string]any, pages int) {
	t.Helper()
	args = tooltest.CopyArgs(args, "action", "export_markdown_snapshot")
	for {
		res := s.OK(t, "file", args)
		if res["kind"] != "siyuan-markdown-snapshot-page" || res["status"] != "complete" {
			t.Fatalf("page: %v", res)
		}
		for _, d := range res["documents"].([]any) {
			docs = append(docs, d.(map[string]any))
		}
		pages++
		page := res["page"].(map[string]any)
		cur, _ := page["nextCursor"].(string)
		if page["hasNext"] != (cur != "") {
			t.Fatalf("hasNext and nextCursor disagree: %v", page)
		}
		if cur == "" {
			return docs, pages
		}
		args = tooltest.CopyArgs(args, "cursor", cur)
	}
}

func ids(docs []map[string]any) []string {
	var out []string
	for _, d := range docs {
		out = append(out, d["id"].(string))
	}
	return out
}

func TestExportMarkdownSnapshot(t *testing.T) {
	s := newFixture(t)
	a := s.MkDoc(t, s.NB, "/Doc/A", "alpha <b>&</b>")
	b := s.MkDoc(t, s.NB, "/Doc/A/B", "beta")
	other := s.MkDoc(t, s.NB, "/Other", "other")
	c := s.MkDoc(t, s.NB, "/Other/C", "gamma")
	docPath := s.Where(t, s.Doc).Path

	t.Run("whole notebook, page by page", func(t *testing.T) {
		docs, pages := s.snapPages(t, map[string]any{"notebookID": s.NB, "roots": []string{"/"}, "limit": 2})
		got := ids(docs)
		want := []string{s.Doc, a, b, other, c}
		if slices.Sort(got); !slices.Equal(got, kernelSorted(want)) || pages != 3 {
			t.Fatalf("%d pages of %v, want %v", pages, ids(docs), want)
		}
		var paths []string
		for _, d := range docs {
			id := d["id"].(string)
			exp := s.OK(t, "file", map[string]any{"action": "export_md", "id": id})
			content := d["content"].(string)
			if content != exp["content"] || d["hPath"] != exp["hPath"] || d["contentHash"] != "sha256:v1:"+sum([]byte(content)) {
				t.Fatalf("document %s: %v, export_md %v", id, d, exp)
			}
			if where := s.Where(t, id); d["storagePath"] != where.Path {
				t.Fatalf("document %s storagePath %v, want %s", id, d["storagePath"], where.Path)
			}
			meta := d["metadata"].(map[string]any)
			if meta["notebookID"] != s.NB || meta["id"] != id || meta["title"] != d["title"] || !strings.HasPrefix(d["metadataHash"].(string), "sha256:v1:") {
				t.Fatalf("metadata %v", d)
			}
			paths = append(paths, d["storagePath"].(string))
		}
		if !slices.IsSorted(paths) {
			t.Fatalf("not in storage-path order: %v", paths)
		}
	})

	t.Run("a document's subtree", func(t *testing.T) {
		for _, root := range []string{docPath, strings.TrimSuffix(docPath, ".sy")} {
			docs, _ := s.snapPages(t, map[string]any{"notebookID": s.NB, "roots": []string{root}})
			if got := ids(docs); !slices.Equal(got, []string{s.Doc, a, b}) {
				t.Fatalf("root %s: %v", root, got)
			}
		}
		// Overlapping roots export each document once.
		docs, _ := s.snapPages(t, map[string]any{"notebookID": s.NB, "roots": []string{docPath, "/", s.Where(t, a).Path}})
		if len(docs) != 5 {
			t.Fatalf("overlapping roots: %v", ids(docs))
		}
	})

	t.Run("explicit ids", func(t *testing.T) {
		docs, pages := s.snapPages(t, map[string]any{"notebookID": s.NB, "documentIDs": []string{c, a, c}, "limit": 1})
		if got := ids(docs); !slices.Equal(got, kernelSorted([]string{a, c})) || pages != 2 || docs[0]["storagePath"] == "" {
			t.Fatalf("ids: %v in %d pages", docs, pages)
		}
	})

	t.Run("cursor", func(t *testing.T) {
		args := map[string]any{"action": "export_markdown_snapshot", "notebookID": s.NB, "roots": []string{"/"}, "limit": 1}
		first := s.OK(t, "file", args)
		cur := first["page"].(map[string]any)["nextCursor"].(string)
		second := s.OK(t, "file", tooltest.CopyArgs(args, "cursor", cur))
		if p := second["page"].(map[string]any); p["offset"] != float64(1) || second["inventoryHash"] != first["inventoryHash"] {
			t.Fatalf("second page %v", p)
		}
		// An offset edited into the payload is caught by the check.
		parts := strings.Split(cur, ".")
		raw, _ := base64.RawURLEncoding.DecodeString(parts[1])
		var m map[string]any
		json.Unmarshal(raw, &m)
		m["o"] = 3
		edited, _ := json.Marshal(m)
		for name, bad := range map[string]string{
			"edited offset": parts[0] + "." + base64.RawURLEncoding.EncodeToString(edited) + "." + parts[2],
			"edited check":  parts[0] + "." + parts[1] + "." + strings.Repeat("0", 16),
			"other version": "s2." + parts[1] + "." + parts[2],
			"garbage":       "not a cursor",
			"upstream form": "%7B%22scopeHash%22%3A%22x%22%2C%22inventoryHash%22%3A%22y%22%2C%22offset%22%3A1%7D",
		} {
			e := s.WantErr(t, "file", tooltest.CopyArgs(args, "cursor", bad), failure.InvalidArguments)
			if !strings.Contains(e.Message, "cursor") {
				t.Fatalf("%s: %v", name, e)
			}
		}
		// Another scope's cursor.
		e := s.WantErr(t, "file", tooltest.CopyArgs(args, "roots", []string{docPath}, "cursor", cur), failure.InvalidArguments)
		if !strings.Contains(e.Message, "another export") {
			t.Fatalf("another scope: %v", e)
		}
		// The documents changed since: a new one.
		s.MkDoc(t, s.NB, "/Other/New", "new")
		e = s.WantErr(t, "file", tooltest.CopyArgs(args, "cursor", cur), failure.InvalidArguments)
		if !strings.Contains(e.Message, "changed since") {
			t.Fatalf("changed inventory: %v", e)
		}
	})

	t.Run("stops at the read budget", func(t *testing.T) {
		m := &meter{maxCalls: 128, maxBytes: snapshotReserveBytes + 50}
		v, err := s.callRaw(t, m, map[string]any{"action": "export_markdown_snapshot", "notebookID": s.NB, "documentIDs": []string{s.Doc, a, b}})
		if err != nil {
			t.Fatal(err)
		}
		page := tooltest.AsJSON(t, v)["page"].(map[string]any)
		if page["returned"] != float64(1) || page["stoppedEarly"] != "read_budget" || page["hasNext"] != true || page["nextCursor"] == nil {
			t.Fatalf("page %v", page)
		}
		// Few calls left stops it as well.
		m = &meter{maxCalls: snapshotReserveCalls + 4, maxBytes: 8 << 20}
		v, err = s.callRaw(t, m, map[string]any{"action": "export_markdown_snapshot", "notebookID": s.NB, "documentIDs": []string{s.Doc, a, b}})
		if err != nil {
			t.Fatal(err)
		}
		if page := tooltest.AsJSON(t, v)["page"].(map[string]any); page["returned"] == float64(3) || page["stoppedEarly"] != "read_budget" {
			t.Fatalf("page %v", page)
		}
	})

	t.Run("refusals", func(t *testing.T) {
		other := s.mkNotebook(t, "Elsewhere")
		elsewhere := s.MkDoc(t, other, "/E", "e")
		for _, c := range []struct {
			name string
			args map[string]any
			code failure.Code
			want string
		}{
			{"neither", map[string]any{"notebookID": s.NB}, failure.InvalidArguments, "exactly one"},
			{"both", map[string]any{"notebookID": s.NB, "roots": []string{"/"}, "documentIDs": []string{a}}, failure.InvalidArguments, "exactly one"},
			{"empty roots", map[string]any{"notebookID": s.NB, "roots": []string{}}, failure.InvalidArguments, "1 to 64"},
			{"too many roots", map[string]any{"notebookID": s.NB, "roots": slices.Repeat([]string{"/"}, 65)}, failure.InvalidArguments, "1 to 64"},
			{"too many ids", map[string]any{"notebookID": s.NB, "documentIDs": slices.Repeat([]string{a}, 501)}, failure.InvalidArguments, "1 to 500"},
			{"dot dot root", map[string]any{"notebookID": s.NB, "roots": []string{"/../x"}}, failure.InvalidArguments, "storage path"},
			{"human path root", map[string]any{"notebookID": s.NB, "roots": []string{"/Doc/A"}}, failure.InvalidArguments, "storage path"},
			{"limit", map[string]any{"notebookID": s.NB, "roots": []string{"/"}, "limit": 201}, failure.InvalidArguments, "limit"},
			{"missing root", map[string]any{"notebookID": s.NB, "roots": []string{"/" + tooltest.NewID() + ".sy"}}, failure.NotFound, "no document"},
			{"root of another notebook", map[string]any{"notebookID": s.NB, "roots": []string{s.Where(t, elsewhere).Path}}, failure.NotFound, "no document"},
			{"id of another notebook", map[string]any{"notebookID": s.NB, "documentIDs": []string{elsewhere}}, failure.InvalidArguments, "not a document of notebook"},
			{"a block, not a document", map[string]any{"notebookID": s.NB, "documentIDs": []string{s.Blocks[0]}}, failure.InvalidArguments, "not a document of notebook"},
		} {
			t.Run(c.name, func(t *testing.T) {
				e := s.WantErr(t, "file", tooltest.CopyArgs(c.args, "action", "export_markdown_snapshot"), c.code)
				if !strings.Contains(e.Message, c.want) {
					t.Fatalf("message %q lacks %q", e.Message, c.want)
				}
			})
		}
	})

	t.Run("hidden notebook", func(t *testing.T) {
		defer func() { s.Policy = nil }()
		s.Policy = &tools.Policy{Default: tools.LevelDelete, Notebooks: map[string]tools.Level{s.NB: tools.LevelNone}, AllActions: true, Strict: true}
		s.WantMissing(t, "file", map[string]any{"action": "export_markdown_snapshot", "notebookID": s.NB, "roots": []string{"/"}}, map[string]string{s.NB: tooltest.NewID()})
		s.WantMissing(t, "file", map[string]any{"action": "export_markdown_snapshot", "notebookID": tooltest.NewID(), "documentIDs": []string{a}}, map[string]string{a: tooltest.NewID()})
	})
}

// kernelSorted is ids in the order an explicit-id export gives them.
func kernelSorted(ids []string) []string {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}

// mkNotebook creates a notebook and opens it.
func (s *sfix) mkNotebook(t *testing.T, name string) string {
	t.Helper()
	nb, err := s.C.CreateNotebook(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return nb.ID
}

func TestSnapshotCursorRoundTrip(t *testing.T) {
	c := snapshotCursor{Scope: strings.Repeat("a", 64), Inventory: strings.Repeat("0", 64), Offset: 40}
	got, err := decodeSnapshotCursor(c.encode())
	if err != nil || got != c {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	for _, bad := range []snapshotCursor{
		{Scope: strings.Repeat("A", 64), Inventory: c.Inventory, Offset: 1},
		{Scope: "ab", Inventory: c.Inventory, Offset: 1},
		{Scope: c.Scope, Inventory: c.Inventory, Offset: 0},
		{Scope: c.Scope, Inventory: c.Inventory, Offset: maxSnapshotOffset + 1},
	} {
		if _, err := decodeSnapshotCursor(bad.encode()); err == nil {
			t.Errorf("%+v was accepted", bad)
		}
	}
}

func FuzzSnapshotCursor(f *testing.F) {
	f.Add(snapshotCursor{Scope: strings.Repeat("a", 64), Inventory: strings.Repeat("b", 64), Offset: 3}.encode())
	f.Add("s1..")
	f.Add("s1.e30.0000000000000000")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := decodeSnapshotCursor(s)
		if err != nil {
			if c != (snapshotCursor{}) {
				t.Fatalf("a refused cursor answered %+v", c)
			}
			return
		}
		// Only the canonical text of a well-formed cursor is accepted.
		if c.encode() != s || c.Offset < 1 || !isHexDigest(c.Scope) || !isHexDigest(c.Inventory) {
			t.Fatalf("accepted %q as %+v", s, c)
		}
	})
}
