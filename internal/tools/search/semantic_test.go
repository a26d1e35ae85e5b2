package search

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// embeddings stands in for SiYuan with an embedding model: the stat says
// enabled and semantic search ranks the given blocks (neither kernel here
// has a model, so the semantic answers are the test's; the rest is the
// embedded kernel's).
func embeddings(f *tooltest.Fixture, hits []map[string]any) {
	f.SetHook(func(w http.ResponseWriter, r *http.Request) bool {
		var data any
		switch r.URL.Path {
		case "/api/ai/embeddingStat":
			data = map[string]any{"total": 10, "indexed": 10, "enabled": true}
		case "/api/search/semanticSearchBlock":
			data = map[string]any{"blocks": hits, "matchedBlockCount": len(hits), "matchedRootCount": 1, "pageCount": 1}
		default:
			return false
		}
		json.NewEncoder(w).Encode(map[string]any{"code": 0, "msg": "", "data": data})
		return true
	})
}

func TestKnowledgeSemantic(t *testing.T) {
	f := tooltest.New(t, testTools)
	ctx := context.Background()
	target := f.Blocks[1] // "alpha paragraph"
	hidden, err := f.C.CreateNotebook(ctx, "Hidden")
	if err != nil {
		t.Fatal(err)
	}
	mk := func(nb, path, md string) (string, string) {
		doc, err := f.C.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: nb, Path: path, Markdown: md})
		if err != nil {
			t.Fatal(err)
		}
		kids, err := f.C.GetChildBlocks(ctx, doc)
		if err != nil {
			t.Fatal(err)
		}
		return doc, kids[0].ID
	}
	refDoc, holder := mk(f.NB, "/Refs", "see (("+target+" 'alpha'))")
	_, secret := mk(hidden.ID, "/H", "hidden words")
	if err := f.C.FlushTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	hit := func(id, box string) map[string]any {
		return map[string]any{"id": id, "box": box, "type": "NodeParagraph"}
	}
	embeddings(f, []map[string]any{hit(holder, f.NB), hit(secret, hidden.ID), hit(f.Blocks[3], f.NB)})
	f.Policy = &tools.Policy{Notebooks: map[string]tools.Level{hidden.ID: tools.LevelNone}, Default: tools.LevelRead, AllActions: true}

	sem := f.OK(t, "search", map[string]any{"action": "semantic", "query": "greek letters"})
	if got := listIDs(sem["blocks"]); len(got) != 2 || got[0] != holder || got[1] != f.Blocks[3] {
		t.Fatalf("semantic: %v", sem)
	}
	kn := f.OK(t, "search", map[string]any{"action": "knowledge", "query": "greek letters"})
	data := kn["data"].([]any)
	if kn["retrievalMode"] != "semantic_fallback" || kn["semanticAvailable"] != true || len(data) != 2 {
		t.Fatalf("knowledge: %v", kn)
	}
	first := data[0].(map[string]any)
	// The ref-only hit stands for what it references, with the document
	// that references it.
	if first["id"] != target || first["collapsedReferenceCount"].(float64) != 1 || first["sourceResultIds"].([]any)[0] != holder {
		t.Fatalf("collapsed candidate: %v", first)
	}
	rel := first["relatedDocuments"].([]any)
	if len(rel) != 1 || rel[0].(map[string]any)["id"] != refDoc {
		t.Fatalf("related documents: %v", rel)
	}
	if data[1].(map[string]any)["id"] != f.Blocks[3] || strings.Contains(toJSON(t, kn), secret) {
		t.Fatalf("the second candidate, and nothing hidden: %v", kn)
	}
}

func TestSemanticOnOldKernel(t *testing.T) {
	f := tooltest.New(t, testTools)
	f.SetHook(func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/api/ai/embeddingStat" {
			http.Error(w, "404 page not found", http.StatusNotFound)
			return true
		}
		return false
	})
	e := f.WantErr(t, "search", map[string]any{"action": "semantic", "query": "x"}, failure.KernelError)
	if !strings.Contains(e.Message, "3.7.0 or later") || e.Details["kernelVersion"] != "3.7.3" {
		t.Fatalf("semantic on a kernel without it: %+v", e)
	}
	// knowledge still answers from the namespace.
	if kn := f.OK(t, "search", map[string]any{"action": "knowledge", "query": "x"}); kn["semanticAvailable"] != false {
		t.Fatalf("knowledge without semantic: %v", kn)
	}
}

func toJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
