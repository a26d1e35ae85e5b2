package file

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
)

// TestListTemplatesUpstreamArguments: upstream 0.6.8's query names the
// keyword, and page/pageSize page the list (20 a page by default).
func TestListTemplatesUpstreamArguments(t *testing.T) {
	s := newFixture(t)
	for i := range 25 {
		s.put(t, fmt.Sprintf("/data/templates/t%02d.md", i), "# t\n")
	}
	s.put(t, "/data/templates/weekly.md", "# week\n")
	list := func(m map[string]any) (names []string) {
		for _, x := range m["templates"].([]any) {
			names = append(names, x.(map[string]any)["relativePath"].(string))
		}
		return names
	}
	for _, c := range []struct {
		name                string
		args                map[string]any
		count, total, pages int
		page                int
		next                bool
		first               string
	}{
		{"default page", map[string]any{}, 20, 26, 2, 1, true, ""},
		{"second page", map[string]any{"page": 2}, 6, 26, 2, 2, false, ""},
		{"past the end answers the last", map[string]any{"page": 9}, 6, 26, 2, 2, false, ""},
		{"page size", map[string]any{"pageSize": 128}, 26, 26, 1, 1, false, ""},
		{"query", map[string]any{"query": "weekly"}, 1, 1, 1, 1, false, "weekly.md"},
		{"keyword", map[string]any{"keyword": "weekly"}, 1, 1, 1, 1, false, "weekly.md"},
		{"both, the same", map[string]any{"keyword": "weekly", "query": "weekly"}, 1, 1, 1, 1, false, "weekly.md"},
		{"query, paged", map[string]any{"query": "t", "pageSize": 10, "page": 3}, 5, 25, 3, 3, false, "t20.md"},
	} {
		args := map[string]any{"action": "list_templates"}
		for k, v := range c.args {
			args[k] = v
		}
		got := s.OK(t, "file", args)
		names := list(got)
		if len(names) != c.count || got["count"] != float64(c.count) || got["total"] != float64(c.total) || got["pageCount"] != float64(c.pages) ||
			got["page"] != float64(c.page) || got["hasNextPage"] != c.next || c.first != "" && names[0] != c.first {
			t.Errorf("%s: %v", c.name, got)
		}
	}
	for _, bad := range []map[string]any{
		{"keyword": "weekly", "query": "daily"},
		{"pageSize": 129},
		{"pageSize": 0},
		{"page": 0},
		{"querry": "weekly"},
	} {
		bad["action"] = "list_templates"
		s.WantErr(t, "file", bad, failure.InvalidArguments)
	}
}

// TestReadTemplateWindow: offset and limit count Unicode code points, and
// a window never splits a character.
func TestReadTemplateWindow(t *testing.T) {
	s := newFixture(t)
	src := "aé世🙂b\n" // 6 code points, 12 bytes
	s.put(t, "/data/templates/w.md", src)
	long := strings.Repeat("界", 8500)
	s.put(t, "/data/templates/long.md", long)
	for _, c := range []struct {
		name          string
		path          string
		offset, limit any
		want          string
		total         int
		next          int // 0: no more
	}{
		{"whole", "w.md", nil, nil, src, 6, 0},
		{"a multi-byte start", "w.md", 1, 2, "é世", 6, 3},
		{"a four-byte character", "w.md", 3, 1, "🙂", 6, 4},
		{"to the end", "w.md", 4, 100, "b\n", 6, 0},
		{"exactly the end", "w.md", 0, 6, src, 6, 0},
		{"past the end", "w.md", 7, 5, "", 6, 0},
		{"the default limit", "long.md", nil, nil, strings.Repeat("界", 8000), 8500, 8000},
		{"the next window", "long.md", 8000, nil, strings.Repeat("界", 500), 8500, 0},
		{"the largest limit", "long.md", nil, 20000, long, 8500, 0},
	} {
		args := map[string]any{"action": "read_template", "path": c.path}
		if c.offset != nil {
			args["offset"] = c.offset
		}
		if c.limit != nil {
			args["limit"] = c.limit
		}
		got := s.OK(t, "file", args)
		body := map[string]string{"w.md": src, "long.md": long}[c.path]
		if got["content"] != c.want || got["totalChars"] != float64(c.total) || got["truncated"] != (c.next != 0) ||
			got["sha256"] != sum([]byte(body)) || got["size"] != float64(len(body)) {
			t.Errorf("%s: %v", c.name, got)
		}
		if n, ok := got["nextOffset"]; ok != (c.next != 0) || ok && n != float64(c.next) {
			t.Errorf("%s: nextOffset %v", c.name, got["nextOffset"])
		}
	}
	for _, bad := range []map[string]any{{"offset": -1}, {"limit": 0}, {"limit": 20001}, {"offset": "1"}} {
		bad["action"], bad["path"] = "read_template", "w.md"
		s.WantErr(t, "file", bad, failure.InvalidArguments)
	}
}

// TestTemplateMarkdownAlias: create_template and update_template take the
// source as content or as upstream 0.6.8's markdown.
func TestTemplateMarkdownAlias(t *testing.T) {
	s := newFixture(t)
	for _, c := range []struct {
		name string
		args map[string]any
	}{
		{"markdown", map[string]any{"markdown": "# by markdown\n"}},
		{"content", map[string]any{"content": "# by content\n"}},
		{"both, the same", map[string]any{"content": "# both\n", "markdown": "# both\n"}},
		{"empty markdown", map[string]any{"markdown": ""}},
	} {
		want, _ := c.args["content"].(string)
		if m, ok := c.args["markdown"].(string); ok {
			want = m
		}
		path := strings.ReplaceAll(c.name, " ", "-") + ".md"
		create := map[string]any{"action": "create_template", "path": path}
		for k, v := range c.args {
			create[k] = v
		}
		_, res := s.strictOK(t, create, "", 1)
		if got, _ := s.read(t, "/data/templates/"+path); string(got) != want || res["sha256"] != sum([]byte(want)) {
			t.Errorf("create by %s: %q %v", c.name, got, res)
		}
		update := map[string]any{"action": "update_template", "path": path}
		for k, v := range c.args {
			update[k] = v.(string) + "updated\n"
		}
		s.strictOK(t, update, "expectedStateHash", 1)
		if got, _ := s.read(t, "/data/templates/"+path); string(got) != want+"updated\n" {
			t.Errorf("update by %s: %q", c.name, got)
		}
	}
	for _, action := range []string{"create_template", "update_template"} {
		for _, bad := range []map[string]any{
			{"content": "a", "markdown": "b"},
			{},
			{"markdwon": "a"},
		} {
			bad["action"], bad["path"] = action, "bad.md"
			e := s.InvalidAt(t, "file", bad, false)
			wantAttemptedFalse(t, e)
		}
	}
	if s.exists(t, "/data/templates/bad.md") {
		t.Fatal("a refused template write wrote")
	}
}
