package embedded

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// ixEnv is a kernel on a temporary workspace behind an HTTP test server;
// the background SQL flush is effectively off (one hour), so the index lags
// until a test flushes it.
type ixEnv struct {
	t   *testing.T
	k   *Kernel
	srv *httptest.Server
}

func ixOpen(t *testing.T) *ixEnv {
	t.Helper()
	k, err := Open(context.Background(), Options{Dir: t.TempDir(), Token: "t", SQLFlushInterval: time.Hour})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	srv := httptest.NewServer(k.Handler())
	t.Cleanup(func() {
		srv.Close()
		if err := k.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return &ixEnv{t: t, k: k, srv: srv}
}

// ixReply is a decoded envelope plus the HTTP status.
type ixReply struct {
	Status int
	Code   int             `json:"code"`
	Msg    string          `json:"msg"`
	Data   json.RawMessage `json:"data"`
}

// post sends a JSON body (any value, or a raw string) and decodes the envelope.
func (e *ixEnv) post(endpoint string, body any) ixReply {
	e.t.Helper()
	var data []byte
	switch b := body.(type) {
	case string:
		data = []byte(b)
	default:
		var err error
		if data, err = json.Marshal(b); err != nil {
			e.t.Fatal(err)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+endpoint, bytes.NewReader(data))
	req.Header.Set("Authorization", "Token t")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatalf("POST %s: %v", endpoint, err)
	}
	defer resp.Body.Close()
	var r ixReply
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		e.t.Fatalf("POST %s: decode: %v", endpoint, err)
	}
	r.Status = resp.StatusCode
	return r
}

// ok posts and requires code 0, decoding data into out (if not nil).
func (e *ixEnv) ok(endpoint string, body any, out any) {
	e.t.Helper()
	r := e.post(endpoint, body)
	if r.Status != http.StatusOK || r.Code != 0 {
		e.t.Fatalf("POST %s %v: HTTP %d code %d msg %q", endpoint, body, r.Status, r.Code, r.Msg)
	}
	if out != nil {
		if err := json.Unmarshal(r.Data, out); err != nil {
			e.t.Fatalf("POST %s: data %s: %v", endpoint, r.Data, err)
		}
	}
}

// box returns the seeded notebook's id.
func (e *ixEnv) box() string {
	e.t.Helper()
	var nb struct {
		Notebooks []struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"notebooks"`
	}
	e.ok("/api/notebook/lsNotebooks", map[string]any{}, &nb)
	if len(nb.Notebooks) == 0 {
		e.t.Fatal("no notebook")
	}
	return nb.Notebooks[0].ID
}

// doc creates a document and returns its id.
func (e *ixEnv) doc(box, hpath, md string) string {
	e.t.Helper()
	var id string
	e.ok("/api/filetree/createDocWithMd", map[string]any{"notebook": box, "path": hpath, "markdown": md}, &id)
	return id
}

func (e *ixEnv) sql(stmt string) []map[string]any {
	e.t.Helper()
	var rows []map[string]any
	e.ok("/api/query/sql", map[string]any{"stmt": stmt}, &rows)
	return rows
}

func (e *ixEnv) flush() { e.t.Helper(); e.ok("/api/sqlite/flushTransaction", "", nil) }

// ixFixture is the Markdown of the document most index tests use.
const ixFixture = "# Heading\n\nFirst para **bold** *em* #tag1# [link](https://x.y)\n\n- item1\n- item2\n\n```go\nfmt.Println(1)\n```\n\n> quote\n\n|a|b|\n|---|---|\n|1|2|\n"

func ixRowsByType(rows []map[string]any) map[string]map[string]any {
	m := map[string]map[string]any{}
	for _, r := range rows {
		t := r["type"].(string)
		if _, dup := m[t]; !dup {
			m[t] = r
		}
	}
	return m
}

func TestSQLIndexLagsUntilFlush(t *testing.T) {
	e := ixOpen(t)
	box := e.box()
	id := e.doc(box, "/Alpha", "first")
	q := "SELECT id FROM blocks WHERE root_id='" + id + "'"
	if rows := e.sql(q); len(rows) != 0 {
		t.Fatalf("before flush: %d rows, want none (SiYuan's index lags)", len(rows))
	}
	e.flush()
	if rows := e.sql(q); len(rows) != 2 {
		t.Fatalf("after flush: %d rows, want doc + paragraph", len(rows))
	}
	e.ok("/api/block/appendBlock", map[string]any{"parentID": id, "dataType": "markdown", "data": "appended LAGCHECK"}, nil)
	lag := "SELECT id FROM blocks WHERE content LIKE '%LAGCHECK%'"
	if rows := e.sql(lag); len(rows) != 0 {
		t.Fatalf("append visible before flush: %v", rows)
	}
	e.flush()
	if rows := e.sql(lag); len(rows) != 1 {
		t.Fatalf("append after flush: %v", rows)
	}
	e.ok("/api/filetree/removeDocByID", map[string]any{"id": id}, nil)
	e.flush()
	if rows := e.sql(q); len(rows) != 0 {
		t.Fatalf("removed document still indexed: %v", rows)
	}
}

func TestSQLIndexBackgroundFlush(t *testing.T) {
	k, err := Open(context.Background(), Options{Dir: t.TempDir(), Token: "t", SQLFlushInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(k.Handler())
	defer func() { srv.Close(); k.Close() }()
	e := &ixEnv{t: t, k: k, srv: srv}
	id := e.doc(e.box(), "/Bg", "background flush")
	deadline := time.Now().Add(2 * time.Second)
	for len(e.sql("SELECT id FROM blocks WHERE id='"+id+"'")) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("background flusher never indexed the document")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestSQLIndexRebuiltAtOpen(t *testing.T) {
	dir := t.TempDir()
	k, err := Open(context.Background(), Options{Dir: dir, Token: "t", SQLFlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(k.Handler())
	e := &ixEnv{t: t, k: k, srv: srv}
	id := e.doc(e.box(), "/Persisted", "kept across restarts")
	srv.Close()
	if err := k.Close(); err != nil { // Close flushes the queue
		t.Fatal(err)
	}
	e = nil
	e2 := func() *ixEnv {
		k, err := Open(context.Background(), Options{Dir: dir, Token: "t", SQLFlushInterval: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(k.Handler())
		t.Cleanup(func() { srv.Close(); k.Close() })
		return &ixEnv{t: t, k: k, srv: srv}
	}()
	if rows := e2.sql("SELECT content FROM blocks WHERE root_id='" + id + "' AND type='p'"); len(rows) != 1 || rows[0]["content"] != "kept across restarts" {
		t.Fatalf("after reopen: %v", rows)
	}
}

func TestSQLIndexRows(t *testing.T) {
	e := ixOpen(t)
	box := e.box()
	id := e.doc(box, "/Alpha", ixFixture)
	e.flush()
	rows := e.sql("SELECT * FROM blocks WHERE root_id='" + id + "'")
	byType := ixRowsByType(rows)
	heading := byType["h"]["id"]
	tests := []struct {
		typ  string
		want map[string]any
	}{
		{"d", map[string]any{"content": "Alpha", "fcontent": "Alpha", "length": 5.0, "markdown": "", "parent_id": "", "sort": 0.0,
			"hpath": "/Alpha", "box": box, "path": "/" + id + ".sy", "root_id": id, "created": id[:14], "subtype": ""}},
		{"h", map[string]any{"content": "Heading", "fcontent": "", "length": 7.0, "markdown": "# Heading", "parent_id": id, "sort": 5.0, "subtype": "h1"}},
		{"p", map[string]any{"content": "First para bold em #tag1# link https://x.y", "fcontent": "", "tag": "#tag1#",
			"markdown": "First para **bold** *em* #tag1# [link](https://x.y)", "parent_id": heading, "sort": 10.0}},
		{"l", map[string]any{"content": " item1 item2", "fcontent": "item1", "length": 5.0, "markdown": "- item1\n- item2", "sort": 20.0, "subtype": "u", "parent_id": heading}},
		{"i", map[string]any{"content": " item1", "fcontent": "item1", "markdown": "- item1", "subtype": "u"}},
		{"c", map[string]any{"content": "fmt.Println(1)\n", "length": 15.0, "markdown": "```go\nfmt.Println(1)\n```"}},
		{"b", map[string]any{"content": " quote", "fcontent": "quote", "markdown": "> quote", "sort": 20.0}},
		{"t", map[string]any{"content": "a b 1 2", "length": 7.0, "markdown": "|a|b|\n| ---| ---|\n|1|2|"}},
	}
	for _, tc := range tests {
		t.Run(tc.typ, func(t *testing.T) {
			row := byType[tc.typ]
			if row == nil {
				t.Fatalf("no %s row in %v", tc.typ, rows)
			}
			for col, want := range tc.want {
				if got := row[col]; got != want {
					t.Errorf("%s = %#v, want %#v", col, got, want)
				}
			}
			if h, _ := row["hash"].(string); len(h) != 7 {
				t.Errorf("hash %q is not 7 hex characters", h)
			}
			if ial, _ := row["ial"].(string); !strings.HasPrefix(ial, "{: ") || !strings.Contains(ial, `id="`+row["id"].(string)+`"`) {
				t.Errorf("ial %q", ial)
			}
			if row["updated"] == "" || row["created"] != row["id"].(string)[:14] {
				t.Errorf("created %v updated %v", row["created"], row["updated"])
			}
		})
	}
	if len(rows) != 12 {
		t.Errorf("%d rows, want 12 (every block but the IALs)", len(rows))
	}
}

func TestSQLIndexAttributes(t *testing.T) {
	e := ixOpen(t)
	id := e.doc(e.box(), "/Attrs", "para")
	e.flush()
	para := e.sql("SELECT id FROM blocks WHERE root_id='" + id + "' AND type='p'")[0]["id"].(string)
	e.ok("/api/attr/setBlockAttrs", map[string]any{"id": para, "attrs": map[string]any{"custom-x": "y", "name": "Nom", "memo": "a &amp; b"}}, nil)
	e.ok("/api/attr/setBlockAttrs", map[string]any{"id": id, "attrs": map[string]any{"tags": "a,b"}}, nil)
	e.flush()
	attrs := e.sql("SELECT name, value, type, block_id, root_id FROM attributes WHERE block_id='" + para + "' ORDER BY name")
	var names []string
	for _, a := range attrs {
		names = append(names, a["name"].(string))
		if a["type"] != "b" || a["root_id"] != id {
			t.Errorf("attribute row %v", a)
		}
	}
	if got := strings.Join(names, ","); got != "custom-x,memo,name" {
		t.Errorf("attribute names %q, want custom-x,memo,name (id/updated are not attributes)", got)
	}
	row := e.sql("SELECT name, memo FROM blocks WHERE id='" + para + "'")[0]
	if row["name"] != "Nom" {
		t.Errorf("name column %v", row["name"])
	}
	if doc := e.sql("SELECT tag FROM blocks WHERE id='" + id + "'")[0]; doc["tag"] != "#a# #b#" {
		t.Errorf("document tag column %v, want #a# #b#", doc["tag"])
	}
}

func TestQuerySQL(t *testing.T) {
	e := ixOpen(t)
	var md strings.Builder
	for i := range 70 {
		fmt.Fprintf(&md, "para %d\n\n", i)
	}
	id := e.doc(e.box(), "/Many", md.String())
	e.flush()
	count := func(stmt string) int {
		var rows []map[string]any
		e.ok("/api/query/sql", map[string]any{"stmt": stmt}, &rows)
		return len(rows)
	}
	limitTests := []struct {
		stmt string
		want int
	}{
		{"SELECT * FROM blocks WHERE root_id='" + id + "'", 64},
		{"SELECT * FROM blocks WHERE root_id='" + id + "';", 64},
		{"SELECT * FROM blocks WHERE root_id='" + id + "' -- trailing comment", 64},
		{"select * from blocks where root_id='" + id + "' limit 100", 71},
		{"SELECT * FROM blocks WHERE root_id='" + id + "' LIMIT 5 OFFSET 2", 5},
		{"SELECT * FROM (SELECT * FROM blocks WHERE root_id='" + id + "' LIMIT 100)", 64},
		{"WITH x AS (SELECT * FROM blocks WHERE root_id='" + id + "') SELECT * FROM x", 64},
		{"SELECT 'LIMIT 3' AS s FROM blocks WHERE root_id='" + id + "'", 64},
		{"SELECT * FROM blocks WHERE root_id='nope'", 0},
	}
	for _, tc := range limitTests {
		if got := count(tc.stmt); got != tc.want {
			t.Errorf("%s: %d rows, want %d", tc.stmt, got, tc.want)
		}
	}

	errTests := []struct {
		name string
		body any
		code int
		msg  string
	}{
		{"missing stmt", map[string]any{}, -1, "stmt"},
		{"empty stmt", map[string]any{"stmt": "  "}, -1, "Field [stmt] must not be empty"},
		{"unknown mode", map[string]any{"stmt": "SELECT 1", "mode": "x"}, -1, "unknown [mode]"},
		{"two statements", map[string]any{"stmt": "SELECT 1; SELECT 2"}, -1, "SQL statement is not single"},
		{"readonly delete", map[string]any{"stmt": "DELETE FROM blocks", "mode": "readonly"}, -1, "SQL statement is not a read-only query"},
		{"readonly CTE delete", map[string]any{"stmt": "WITH x AS (SELECT 1) DELETE FROM blocks", "mode": "readonly"}, -1, "SQL statement is not read-only"},
		{"no such table", map[string]any{"stmt": "SELECT * FROM nope"}, 1, "no such table: nope"},
		{"syntax", map[string]any{"stmt": "SELEC 1"}, 1, "syntax error"},
		{"readonly syntax", map[string]any{"stmt": "SELECT * FROM nope", "mode": "readonly"}, -1, "no such table: nope"},
	}
	for _, tc := range errTests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.post("/api/query/sql", tc.body)
			if r.Code != tc.code || !strings.Contains(r.Msg, tc.msg) {
				t.Fatalf("code %d msg %q, want %d containing %q", r.Code, r.Msg, tc.code, tc.msg)
			}
		})
	}
	if count("SELECT * FROM blocks WHERE root_id='"+id+"'") != 64 {
		t.Fatal("readonly refusal must not have deleted anything")
	}

	// Values: integers, text, NULL; an empty result is [] (not null).
	r := e.post("/api/query/sql", map[string]any{"stmt": "SELECT 1 AS i, 'x' AS s, NULL AS n, 1.5 AS f", "mode": "readonly"})
	if r.Code != 0 || string(r.Data) != `[{"f":1.5,"i":1,"n":null,"s":"x"}]` {
		t.Errorf("values: %d %s", r.Code, r.Data)
	}
	if r := e.post("/api/query/sql", map[string]any{"stmt": "SELECT * FROM blocks WHERE 0"}); string(r.Data) != "[]" {
		t.Errorf("empty result %s, want []", r.Data)
	}
	// SiYuan's other tables exist (empty), and blocks_fts mirrors blocks.
	for _, tbl := range []string{"refs", "spans", "assets", "file_annotation_refs", "attributes"} {
		if r := e.post("/api/query/sql", map[string]any{"stmt": "SELECT * FROM " + tbl}); r.Code != 0 {
			t.Errorf("%s: %d %s", tbl, r.Code, r.Msg)
		}
	}
	if got := count("SELECT id FROM blocks_fts WHERE blocks_fts MATCH '\"para 42\"' LIMIT 10"); got != 1 {
		t.Errorf("blocks_fts match: %d rows", got)
	}
	// Writes through the default mode reach the index (as in SiYuan), and
	// multiple mode accepts several statements.
	e.ok("/api/query/sql", map[string]any{"stmt": "UPDATE blocks SET content='rewritten' WHERE id='" + id + "'"}, nil)
	if got := count("SELECT id FROM blocks_fts WHERE blocks_fts MATCH 'rewritten'"); got != 1 {
		t.Errorf("fts after UPDATE: %d", got)
	}
	e.ok("/api/query/sql", map[string]any{"stmt": "SELECT 1; SELECT 2", "mode": "multiple"}, nil)
}

func TestSQLScan(t *testing.T) {
	tests := []struct {
		stmt     string
		first    string
		limit    bool
		multiple bool
		end      string
	}{
		{"SELECT 1", "SELECT", false, false, "SELECT 1"},
		{"select 1 limit 2;", "SELECT", true, false, "select 1 limit 2"},
		{"SELECT ';' ; ", "SELECT", false, false, "SELECT ';'"},
		{"SELECT 1; DELETE FROM blocks", "SELECT", false, true, "SELECT 1"},
		{"SELECT 1; -- only a comment\n/* and another */ ;", "SELECT", false, false, "SELECT 1"},
		{"/* c */ WITH x AS (SELECT 1 LIMIT 1) SELECT * FROM x", "WITH", false, false, "/* c */ WITH x AS (SELECT 1 LIMIT 1) SELECT * FROM x"},
		{"SELECT [limit] FROM t", "SELECT", false, false, "SELECT [limit] FROM t"},
		{"SELECT \"a;b\" -- x", "SELECT", false, false, "SELECT \"a;b\""},
		{"SELECT 'unterminated", "SELECT", false, false, "SELECT 'unterminated"},
	}
	for _, tc := range tests {
		info := sqlScan(tc.stmt)
		if info.first != tc.first || (info.limitAt >= 0) != tc.limit || info.multiple != tc.multiple || tc.stmt[:info.end] != tc.end {
			t.Errorf("%q: %+v (end %q)", tc.stmt, info, tc.stmt[:info.end])
		}
	}
}

// ixSearchResult is what fullTextSearchBlock answers.
type ixSearchResult = wire.FullTextSearchResult

func TestFullTextSearchBlock(t *testing.T) {
	e := ixOpen(t)
	box := e.box()
	alpha := e.doc(box, "/Alpha", ixFixture+"\nAnother BOLD claim: 5 < 6 & 7\n")
	beta := e.doc(box, "/Beta", "beta apple\n\nbeta pear and apple\n\n## Pear heading\n")
	before := func() ixSearchResult {
		var r ixSearchResult
		e.ok("/api/search/fullTextSearchBlock", map[string]any{"query": "apple"}, &r)
		return r
	}()
	if len(before.Blocks) != 0 {
		t.Fatalf("search sees unflushed writes: %+v", before)
	}
	e.flush()

	tests := []struct {
		name       string
		args       map[string]any
		ids        int // blocks returned
		matched    int
		roots      int
		docMode    bool
		contentHas string
		check      func(t *testing.T, r ixSearchResult)
	}{
		{name: "keyword", args: map[string]any{"query": "bold"}, ids: 2, matched: 2, roots: 1, contentHas: "<mark>bold</mark>"},
		{name: "keyword case-insensitive", args: map[string]any{"query": "BOLD"}, ids: 2, matched: 2, roots: 1, contentHas: "<mark>bold</mark>"},
		{name: "html escaped", args: map[string]any{"query": "claim"}, ids: 1, matched: 1, roots: 1, contentHas: "<mark>claim</mark>: 5 &lt; 6 &amp; 7"},
		{name: "types filter", args: map[string]any{"query": "pear", "types": map[string]any{"heading": true}}, ids: 1, matched: 1, roots: 1,
			check: func(t *testing.T, r ixSearchResult) {
				if r.Blocks[0].Type != "NodeHeading" || r.Blocks[0].SubType != "h2" {
					t.Errorf("type %s %s", r.Blocks[0].Type, r.Blocks[0].SubType)
				}
			}},
		{name: "paths filter", args: map[string]any{"query": "apple", "paths": []string{box + "/" + alpha + ".sy", "not a path"}}, ids: 0},
		{name: "paths filter hit", args: map[string]any{"query": "apple", "paths": []string{box + "/" + beta + ".sy"}}, ids: 2, matched: 2, roots: 1},
		{name: "paging", args: map[string]any{"query": "apple", "pageSize": 1, "page": 2}, ids: 1, matched: 2, roots: 1,
			check: func(t *testing.T, r ixSearchResult) {
				if r.PageCount != 2 {
					t.Errorf("pageCount %d", r.PageCount)
				}
			}},
		{name: "doc mode", args: map[string]any{"query": "pear apple"}, ids: 2, matched: 1, roots: 1, docMode: true, contentHas: "<mark>"},
		{name: "query syntax", args: map[string]any{"query": "apple NOT pear", "method": 1}, ids: 1, matched: 1, roots: 1, contentHas: "<mark>apple</mark>"},
		{name: "sql", args: map[string]any{"query": "SELECT * FROM blocks WHERE content LIKE '%apple%'", "method": 2}, ids: 2, matched: 2, roots: 1},
		{name: "sql paged by its limit", args: map[string]any{"query": "SELECT * FROM blocks WHERE content LIKE '%apple%' LIMIT 1", "method": 2, "page": 2}, ids: 1, matched: 2, roots: 1},
		{name: "regex", args: map[string]any{"query": "app?le", "method": 3}, ids: 2, matched: 2, roots: 1, contentHas: "<mark>apple</mark>"},
		{name: "bad regex", args: map[string]any{"query": "(", "method": 3}, ids: 0},
		{name: "empty", args: map[string]any{"query": ""}, ids: 0},
		{name: "by id", args: map[string]any{"query": beta}, ids: 1, matched: 1, roots: 1,
			check: func(t *testing.T, r ixSearchResult) {
				if b := r.Blocks[0]; b.Type != "NodeDocument" || b.HPath != "/" || b.Content != "Beta" {
					t.Errorf("document hit %+v (its hPath drops its own title)", b)
				}
			}},
		{name: "group by doc", args: map[string]any{"query": "apple", "groupBy": 1}, ids: 1, matched: 2, roots: 1,
			check: func(t *testing.T, r ixSearchResult) {
				for _, root := range r.Blocks {
					if root.Type != "NodeDocument" || len(root.Children) != 2 {
						t.Errorf("group %+v", root)
					}
					for _, c := range root.Children {
						if c.RootID != root.ID {
							t.Errorf("child %s under %s", c.ID, root.ID)
						}
					}
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var r ixSearchResult
			e.ok("/api/search/fullTextSearchBlock", tc.args, &r)
			if len(r.Blocks) != tc.ids || (tc.matched != 0 && r.MatchedBlockCount != tc.matched) || (tc.roots != 0 && r.MatchedRootCount != tc.roots) || r.DocMode != tc.docMode {
				t.Fatalf("got %d blocks, matched %d/%d, docMode %v: %+v", len(r.Blocks), r.MatchedBlockCount, r.MatchedRootCount, r.DocMode, r)
			}
			if tc.contentHas != "" && !strings.Contains(r.Blocks[0].Content, tc.contentHas) {
				t.Errorf("content %q lacks %q", r.Blocks[0].Content, tc.contentHas)
			}
			for _, b := range r.Blocks {
				if b.Created != "" || b.Updated != "" || b.Box != box || b.IAL["id"] != b.ID {
					t.Errorf("block shape %+v", b)
				}
			}
			if tc.check != nil {
				tc.check(t, r)
			}
		})
	}

	// The wire shape: SiYuan's field names, blocks [] when nothing matches.
	raw := e.post("/api/search/fullTextSearchBlock", map[string]any{"query": "zzzz-nothing"})
	if !strings.Contains(string(raw.Data), `"blocks":[]`) || !strings.Contains(string(raw.Data), `"docMode":false`) {
		t.Errorf("empty search %s", raw.Data)
	}
	raw = e.post("/api/search/fullTextSearchBlock", map[string]any{"query": "pear heading"})
	for _, field := range []string{`"hPath"`, `"rootID"`, `"parentID"`, `"fcontent"`, `"subType"`, `"refs":null`, `"riffCard":null`, `"children":null`, `"refCount":0`} {
		if !strings.Contains(string(raw.Data), field) {
			t.Errorf("search block lacks %s: %s", field, raw.Data)
		}
	}
}

func TestSQLIndexConcurrentQueriesAndFlushes(t *testing.T) {
	e := ixOpen(t)
	id := e.doc(e.box(), "/Busy", "start")
	e.flush()
	query := func(mode string) error {
		body, _ := json.Marshal(map[string]any{"stmt": "SELECT count(*) AS n FROM blocks WHERE root_id='" + id + "'", "mode": mode})
		req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/api/query/sql", bytes.NewReader(body))
		req.Header.Set("Authorization", "Token t")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var r ixReply
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
			return err
		}
		if r.Code != 0 {
			return fmt.Errorf("code %d: %s", r.Code, r.Msg)
		}
		return nil
	}
	done := make(chan struct{})
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				for _, mode := range []string{"", "readonly"} {
					if err := query(mode); err != nil {
						errs <- err
						return
					}
				}
			}
		})
	}
	for i := range 20 {
		e.ok("/api/block/appendBlock", map[string]any{"parentID": id, "dataType": "markdown", "data": fmt.Sprintf("line %d", i)}, nil)
		e.flush()
	}
	close(done)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatalf("query failed during flushes: %v", err)
	default:
	}
	if rows := e.sql("SELECT id FROM blocks WHERE root_id='" + id + "' AND type='p'"); len(rows) != 21 {
		t.Fatalf("%d paragraphs indexed, want 21", len(rows))
	}
	// Readonly connections went back to the pool writable again.
	e.ok("/api/query/sql", map[string]any{"stmt": "UPDATE blocks SET memo='m' WHERE id='" + id + "'"}, nil)
}

// TestQuerySQLInterruptedWhenTheClientGoesAway: a statement that never ends
// stops when its request's context ends (the client gave up), and the
// index keeps answering (issue 9: it used to run on for minutes).
func TestQuerySQLInterruptedWhenTheClientGoesAway(t *testing.T) {
	e := ixOpen(t)
	body, _ := json.Marshal(map[string]any{"stmt": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c"})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.srv.URL+"/api/query/sql", bytes.NewReader(body))
	req.Header.Set("Authorization", "Token t")
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("a statement that never ends answered")
	}
	// The handler itself returns promptly: the next query gets a connection
	// and an answer well before a runaway statement would give one back.
	start := time.Now()
	rows := e.sql("SELECT count(*) AS n FROM blocks")
	if len(rows) != 1 || time.Since(start) > 5*time.Second {
		t.Fatalf("after an interrupted statement: %v in %v", rows, time.Since(start))
	}
	deadline := time.Now().Add(5 * time.Second)
	for e.k.sql.db.Stats().InUse > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the interrupted statement still holds a connection: %+v", e.k.sql.db.Stats())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
