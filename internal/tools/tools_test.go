package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/embedded"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
)

type fixture struct {
	r           *Registry
	closeLedger func()
	c           *siyuan.Client
	nb          string
	doc         string   // "Guide", with headings and paragraphs
	blocks      []string // its top-level blocks
	child       string   // "Guide/Child"
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	ctx := context.Background()
	k, err := embedded.Open(ctx, embedded.Options{Dir: t.TempDir(), Token: "t", SQLFlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(k.Handler())
	t.Cleanup(func() { srv.Close(); k.Close() })
	c, err := siyuan.New(siyuan.Config{BaseURL: srv.URL, Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRegistry(&Env{Kernel: c, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	nb, err := c.CreateNotebook(ctx, "Tools")
	if err != nil {
		t.Fatal(err)
	}
	md := "# One\n\nalpha paragraph\n\n## One.A\n\nbeta paragraph\n\n# Two\n\ngamma paragraph with a unique zebra word\n"
	doc, err := c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: nb.ID, Path: "/Guide", Markdown: md})
	if err != nil {
		t.Fatal(err)
	}
	child, err := c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: nb.ID, Path: "/Guide/Child", Markdown: "child text"})
	if err != nil {
		t.Fatal(err)
	}
	kids, err := c.GetChildBlocks(ctx, doc)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, k := range kids {
		ids = append(ids, k.ID)
	}
	if err := c.FlushTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	return &fixture{r: r, c: c, nb: nb.ID, doc: doc, blocks: ids, child: child}
}

// call runs a tool and returns the result as generic JSON (as an agent sees it).
func (f *fixture) call(t *testing.T, tool string, args map[string]any) (map[string]any, *Error) {
	t.Helper()
	raw, _ := json.Marshal(args)
	v, err := f.r.Call(context.Background(), tool, raw)
	if err != nil {
		var te *Error
		if !errors.As(err, &te) {
			t.Fatalf("%s %v: error is not a *tools.Error: %v", tool, args, err)
		}
		return nil, te
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("result is not a JSON object: %s", b)
	}
	return m, nil
}

func (f *fixture) ok(t *testing.T, tool string, args map[string]any) map[string]any {
	t.Helper()
	m, err := f.call(t, tool, args)
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	return m
}

func TestEveryActionIsClassified(t *testing.T) {
	f := newFixture(t)
	for _, tool := range f.r.Tools() {
		for _, a := range tool.Actions {
			if err := a.Policy.Validate(); err != nil {
				t.Errorf("%s.%s: %v", tool.Name, a.Name, err)
			}
		}
	}
	bad := &Registry{tools: map[string]*Tool{}}
	err := bad.add(&Tool{Name: "x", Actions: []*Action{{Name: "y", Run: func(context.Context, *Env, *Args) (any, error) { return nil, nil }}}})
	if err == nil || !strings.Contains(err.Error(), "not classified") {
		t.Fatalf("an unclassified action must be refused, got %v", err)
	}
}

func TestSchemas(t *testing.T) {
	f := newFixture(t)
	for _, tool := range f.r.Tools() {
		s := tool.InputSchema()
		props := s["properties"].(map[string]any)
		enum := props["action"].(map[string]any)["enum"].([]string)
		if enum[0] != "help" || len(enum) != len(tool.Actions)+1 {
			t.Errorf("%s: action enum %v", tool.Name, enum)
		}
		if s["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
			t.Errorf("%s: not a 2020-12 schema", tool.Name)
		}
		if _, err := json.Marshal(s); err != nil {
			t.Errorf("%s: schema does not encode: %v", tool.Name, err)
		}
		reads := true
		for _, a := range tool.Actions {
			reads = reads && a.Policy.Class == strict.Read
		}
		if tool.ReadOnly() != reads {
			t.Errorf("%s: ReadOnly() = %v", tool.Name, tool.ReadOnly())
		}
	}
}

func TestErrors(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		tool string
		args any
		code string
		msg  string
	}{
		{"nope", map[string]any{"action": "list"}, CodeUnknownTool, "unknown tool"},
		{"notebook", map[string]any{}, CodeInvalidArguments, `missing argument "action"`},
		{"notebook", map[string]any{"action": 7}, CodeInvalidArguments, `"action" must be a string`},
		{"notebook", map[string]any{"action": "explode"}, CodeUnknownAction, `no action "explode"`},
		{"notebook", []int{1}, CodeInvalidArguments, "arguments must be a JSON object"},
		{"notebook", map[string]any{"action": "help", "topic": "nope"}, CodeUnknownHelpTopic, `no action "nope"`},
		{"notebook", map[string]any{"action": "list", "extra": 1}, CodeInvalidArguments, "does not take extra"},
		{"notebook", map[string]any{"action": "get_conf"}, CodeInvalidArguments, `missing argument "notebook"`},
		{"notebook", map[string]any{"action": "get_conf", "notebook": 12}, CodeInvalidArguments, `"notebook" must be a string`},
		{"notebook", map[string]any{"action": "get_conf", "notebook": "nope"}, CodeInvalidArguments, "must be a SiYuan id"},
		{"notebook", map[string]any{"action": "get_conf", "notebook": "20200101000000-aaaaaaa"}, CodeNotFound, "notebook 20200101000000-aaaaaaa not found"},
		{"block", map[string]any{"action": "get_kramdown", "id": "20200101000000-aaaaaaa"}, CodeNotFound, "block 20200101000000-aaaaaaa not found"},
		{"block", map[string]any{"action": "get_children", "id": "x", "pageSize": 1000}, CodeInvalidArguments, "between 1 and 200"},
		{"block", map[string]any{"action": "get_children", "id": "x", "page": 1.5}, CodeInvalidArguments, "must be an integer"},
		{"search", map[string]any{"action": "fulltext", "query": "x", "method": "sql"}, CodeInvalidArguments, "must be one of keyword, query, regex"},
		{"search", map[string]any{"action": "fulltext", "query": "  "}, CodeInvalidArguments, "must not be empty"},
		{"search", map[string]any{"action": "query_sql", "stmt": "DELETE FROM blocks"}, CodeInvalidArguments, "only a single SELECT"},
		{"search", map[string]any{"action": "query_sql", "stmt": "SELECT 1; DELETE FROM blocks"}, CodeInvalidArguments, "single statement"},
		{"search", map[string]any{"action": "query_sql", "stmt": "SELECT nope FROM nothing"}, CodeKernelError, "SiYuan answered code"},
		{"document", map[string]any{"action": "lookup"}, CodeInvalidArguments, "exactly one of"},
		{"document", map[string]any{"action": "lookup", "hpath": "/Nope", "notebook": "NB"}, CodeNotFound, "not found"},
		{"document", map[string]any{"action": "get_doc", "id": "BLOCK"}, CodeInvalidArguments, "not a document"},
		{"document", map[string]any{"action": "get_child_docs"}, CodeInvalidArguments, "either id"},
		{"document", map[string]any{"action": "list_tree", "notebook": "NB", "path": "/x"}, CodeInvalidArguments, "storage path"},
	}
	for _, tt := range tests {
		name := fmt.Sprintf("%s %v", tt.tool, tt.args)
		t.Run(name, func(t *testing.T) {
			raw, _ := json.Marshal(tt.args)
			raw = []byte(strings.ReplaceAll(strings.ReplaceAll(string(raw), "NB", f.nb), "BLOCK", f.blocks[1]))
			_, err := f.r.Call(context.Background(), tt.tool, raw)
			var te *Error
			if !errors.As(err, &te) {
				t.Fatalf("want a tools error, got %v", err)
			}
			if te.Code != tt.code || !strings.Contains(te.Message, tt.msg) {
				t.Fatalf("got %s %q, want %s containing %q", te.Code, te.Message, tt.code, tt.msg)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	f := newFixture(t)
	for _, tool := range f.r.Tools() {
		h := f.ok(t, tool.Name, map[string]any{"action": "help"})
		if len(h["actions"].([]any)) != len(tool.Actions) {
			t.Errorf("%s help lists %v", tool.Name, h["actions"])
		}
		for _, a := range tool.Actions {
			ht := f.ok(t, tool.Name, map[string]any{"action": "help", "topic": a.Name})
			if ht["class"] != a.Policy.Class.String() || ht["example"].(map[string]any)["action"] != a.Name {
				t.Errorf("%s.%s help: %v", tool.Name, a.Name, ht)
			}
		}
	}
}

func TestNotebookAndBlockReads(t *testing.T) {
	f := newFixture(t)
	list := f.ok(t, "notebook", map[string]any{"action": "list"})
	if list["total"].(float64) != 2 {
		t.Fatalf("notebooks: %v", list)
	}
	conf := f.ok(t, "notebook", map[string]any{"action": "get_conf", "notebook": f.nb})
	if conf["name"] != "Tools" {
		t.Fatalf("conf: %v", conf)
	}
	kd := f.ok(t, "block", map[string]any{"action": "get_kramdown", "id": f.blocks[1]})
	if !strings.HasPrefix(kd["kramdown"].(string), "alpha paragraph\n{: ") {
		t.Fatalf("kramdown: %v", kd)
	}
	attrs := f.ok(t, "block", map[string]any{"action": "get_attrs", "id": f.blocks[1]})
	if attrs["attrs"].(map[string]any)["id"] != f.blocks[1] {
		t.Fatalf("attrs: %v", attrs)
	}
	info := f.ok(t, "block", map[string]any{"action": "info", "id": f.blocks[1]})
	doc := info["document"].(map[string]any)
	if doc["id"] != f.doc || doc["hpath"] != "/Guide" || doc["notebook"] != f.nb || info["isDocument"] != false {
		t.Fatalf("info: %v", info)
	}
	dom := f.ok(t, "block", map[string]any{"action": "dom", "id": f.blocks[1]})
	if !strings.Contains(dom["dom"].(string), `data-node-id="`+f.blocks[1]+`"`) {
		t.Fatalf("dom: %v", dom)
	}
	kids := f.ok(t, "block", map[string]any{"action": "get_children", "id": f.doc, "pageSize": 2, "page": 2})
	if kids["total"].(float64) != 6 || kids["pageCount"].(float64) != 3 || len(kids["data"].([]any)) != 2 || kids["hasNextPage"] != true {
		t.Fatalf("children page: %v", kids)
	}
	// A heading's children are the blocks under it.
	hk := f.ok(t, "block", map[string]any{"action": "get_children", "id": f.blocks[0]})
	if hk["total"].(float64) != 3 {
		t.Fatalf("heading children: %v", hk)
	}
}

func TestDocumentReads(t *testing.T) {
	f := newFixture(t)
	for _, args := range []map[string]any{
		{"action": "lookup", "id": f.blocks[2]},
		{"action": "lookup", "notebook": f.nb, "hpath": "/Guide"},
		{"action": "lookup", "notebook": f.nb, "path": "/" + f.doc + ".sy"},
	} {
		m := f.ok(t, "document", args)
		docs := m["documents"].([]any)
		if len(docs) != 1 || docs[0].(map[string]any)["id"] != f.doc || docs[0].(map[string]any)["title"] != "Guide" {
			t.Fatalf("lookup %v: %v", args, m)
		}
	}
	whole := f.ok(t, "document", map[string]any{"action": "get_doc", "id": f.doc})
	want := "# One\n\nalpha paragraph\n\n## One.A\n\nbeta paragraph\n\n# Two\n\ngamma paragraph with a unique zebra word"
	if whole["content"] != want || whole["hasNextWindow"] != false || whole["totalBlocks"].(float64) != 6 {
		t.Fatalf("get_doc: %q %v", whole["content"], whole)
	}
	outline := whole["outline"].([]any)
	if len(outline) != 2 || len(outline[0].(map[string]any)["children"].([]any)) != 1 {
		t.Fatalf("outline: %v", outline)
	}
	// Windows: two blocks at a time, following nextWindow until the end.
	var got []string
	args := map[string]any{"action": "get_doc", "id": f.doc, "blockLimit": 2, "includeBlockIds": true}
	for i := 0; i < 10; i++ {
		w := f.ok(t, "document", args)
		got = append(got, w["content"].(string))
		if len(w["blocks"].([]any)) != int(w["returnedBlocks"].(float64)) {
			t.Fatalf("blocks sidecar: %v", w)
		}
		next, ok := w["nextWindow"].(map[string]any)
		if !ok {
			break
		}
		args = next
		args["includeBlockIds"] = true
	}
	if strings.Join(got, "\n\n") != want || len(got) != 3 {
		t.Fatalf("windows joined: %q (%d windows)", strings.Join(got, "\n\n"), len(got))
	}
	// A tiny token budget still returns one whole block.
	tiny := f.ok(t, "document", map[string]any{"action": "get_doc", "id": f.doc, "blockStart": 5, "tokenBudget": 100})
	if tiny["returnedBlocks"].(float64) != 1 {
		t.Fatalf("tiny budget: %v", tiny)
	}
	cd := f.ok(t, "document", map[string]any{"action": "get_child_docs", "id": f.doc})
	if cd["total"].(float64) != 1 || cd["data"].([]any)[0].(map[string]any)["id"] != f.child {
		t.Fatalf("child docs: %v", cd)
	}
	root := f.ok(t, "document", map[string]any{"action": "get_child_docs", "notebook": f.nb})
	if root["total"].(float64) != 1 {
		t.Fatalf("root docs: %v", root)
	}
	tree := f.ok(t, "document", map[string]any{"action": "list_tree", "notebook": f.nb})
	top := tree["tree"].([]any)[0].(map[string]any)
	if top["id"] != f.doc || top["children"].([]any)[0].(map[string]any)["id"] != f.child || tree["partial"] != false {
		t.Fatalf("tree: %v", tree)
	}
	shallow := f.ok(t, "document", map[string]any{"action": "list_tree", "notebook": f.nb, "maxDepth": 1})
	if shallow["partial"] != true {
		t.Fatalf("depth-limited tree must say partial: %v", shallow)
	}
	ol := f.ok(t, "document", map[string]any{"action": "get_outline", "id": f.doc})
	if len(ol["outline"].([]any)) != 2 {
		t.Fatalf("outline: %v", ol)
	}
}

func TestSearchAndSystem(t *testing.T) {
	f := newFixture(t)
	ft := f.ok(t, "search", map[string]any{"action": "fulltext", "query": "zebra"})
	blocks := ft["blocks"].([]any)
	if len(blocks) != 1 || blocks[0].(map[string]any)["id"] != f.blocks[5] {
		t.Fatalf("fulltext: %v", ft)
	}
	all := f.ok(t, "search", map[string]any{"action": "query_sql", "stmt": "SELECT id FROM blocks WHERE root_id='" + f.doc + "' ORDER BY id;", "maxRows": 3})
	if all["truncated"] != true || all["rowCount"].(float64) != 3 {
		t.Fatalf("query_sql truncation: %v", all)
	}
	few := f.ok(t, "search", map[string]any{"action": "query_sql", "stmt": "/* heads */ WITH h AS (SELECT id FROM blocks WHERE type='h' AND root_id='" + f.doc + "') SELECT count(*) AS n FROM h"})
	if few["truncated"] != false || few["rows"].([]any)[0].(map[string]any)["n"].(float64) != 3 {
		t.Fatalf("query_sql with: %v", few)
	}
	v := f.ok(t, "system", map[string]any{"action": "version"})
	if v["siyuan"] != "3.7.3" || v["sisyphus"] != "test" {
		t.Fatalf("version: %v", v)
	}
	b := f.ok(t, "system", map[string]any{"action": "bootstrap"})
	ws := b["writeSafety"].(map[string]any)
	if len(b["notebooks"].([]any)) != 2 || ws["protocol"] != "preflight-lease-v1" || ws["strictMode"] != true {
		t.Fatalf("bootstrap: %v", b)
	}
	g := fmt.Sprint(ws["guarded"])
	if !strings.Contains(g, "block.update (expectedStateHash)") || !strings.Contains(fmt.Sprint(ws["requestIdOnly"]), "block.append") ||
		!strings.Contains(fmt.Sprint(ws["external"]), "system.notify") || strings.Contains(g, "get_kramdown") {
		t.Fatalf("bootstrap write catalogue: %v", ws)
	}
}

func TestKernelFailures(t *testing.T) {
	f := newFixture(t)
	bad, _ := siyuan.New(siyuan.Config{BaseURL: "http://127.0.0.1:1", ReadAttempts: 1})
	r, _ := NewRegistry(&Env{Kernel: bad})
	_, err := r.Call(context.Background(), "notebook", json.RawMessage(`{"action":"list"}`))
	var te *Error
	if !errors.As(err, &te) || te.Code != CodeKernelUnreachable {
		t.Fatalf("unreachable kernel: %v", err)
	}
	wrong, _ := siyuan.New(siyuan.Config{BaseURL: f.c.BaseURL(), Token: "wrong"})
	r, _ = NewRegistry(&Env{Kernel: wrong})
	_, err = r.Call(context.Background(), "notebook", json.RawMessage(`{"action":"list"}`))
	if !errors.As(err, &te) || te.Code != CodeKernelAuth || errors.Unwrap(te) == nil {
		t.Fatalf("wrong token: %v", err)
	}
}
