package search

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// TestSearchAssetsKeywordNames: the keyword may come as keyword, or as
// upstream 0.6.8's query or legacy k; names that disagree are refused.
func TestSearchAssetsKeywordNames(t *testing.T) {
	f := tooltest.New(t, testTools)
	for _, name := range []string{"diagram.png", "photo.png", "diagram.pdf"} {
		res, err := f.C.UploadAsset(context.Background(), siyuan.AssetUploadRequest{AssetsDirPath: "/assets/",
			Files: []siyuan.UploadFile{{Name: name, Body: bytes.NewReader([]byte(name))}}})
		if err != nil || res.SuccMap[name] == "" {
			t.Fatalf("upload %s: %v %+v", name, err, res)
		}
	}
	names := func(m map[string]any) (out []string) {
		for _, a := range m["assets"].([]any) {
			p := a.(map[string]any)["path"].(string)
			out = append(out, p[strings.LastIndex(p, "/")+1:strings.Index(p, "-")]+p[strings.LastIndex(p, "."):])
		}
		slices.Sort(out)
		return out
	}
	for _, c := range []struct {
		name string
		args map[string]any
		want []string
	}{
		{"keyword", map[string]any{"keyword": "diagram"}, []string{"diagram.pdf", "diagram.png"}},
		{"query", map[string]any{"query": "diagram"}, []string{"diagram.pdf", "diagram.png"}},
		{"k", map[string]any{"k": "photo"}, []string{"photo.png"}},
		{"query and k agreeing", map[string]any{"query": "photo", "k": "photo"}, []string{"photo.png"}},
		{"all three agreeing", map[string]any{"keyword": "diagram", "query": "diagram", "k": "diagram", "exts": []string{"pdf"}}, []string{"diagram.pdf"}},
		{"an empty name is not given", map[string]any{"keyword": "", "k": "photo"}, []string{"photo.png"}},
		{"none: every asset", map[string]any{}, []string{"diagram.pdf", "diagram.png", "photo.png"}},
	} {
		args := map[string]any{"action": "search_assets"}
		for k, v := range c.args {
			args[k] = v
		}
		if got := names(f.OK(t, "search", args)); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	for _, bad := range []map[string]any{
		{"query": "diagram", "k": "photo"},
		{"keyword": "diagram", "query": "photo"},
		{"keyword": "diagram", "k": "photo"},
		{"kk": "photo"},
	} {
		bad["action"] = "search_assets"
		f.WantErr(t, "search", bad, failure.InvalidArguments)
	}
}
