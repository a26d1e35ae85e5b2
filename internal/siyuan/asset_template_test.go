package siyuan

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
)

// The asset and template calls that would remove more than the caller
// means are refused before anything is sent.
func TestAssetTemplateLocalRefusals(t *testing.T) {
	fk := newFakeKernel(t, func(w http.ResponseWriter, r *http.Request, s seen) {
		t.Errorf("request sent: %s %s", s.Path, s.Body)
		replyJSON(w, 0, "", nil)
	})
	c := newTestClient(t, fk.URL)
	ctx := context.Background()
	for _, p := range []string{"", " ", "assets", "assets/", "/assets/x", "assets/../conf/conf.json", "assets/./x",
		"../x", "assets//x", "assets/x/", "20200101000000-abcdefg", "20200101000000-abcdefg/x", "20200101000000-abcdefg/assets/",
		"conf/assets/x", "assets/x?box=1", " assets/x"} {
		if _, err := c.RemoveUnusedAsset(ctx, p); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("RemoveUnusedAsset(%q): %v, want ErrInvalidArgument", p, err)
		}
	}
	for _, p := range []string{"", "data/templates/x.md", "/ws/data/templates", "/ws/data/templates/", "/ws/data/x.md",
		"/ws/data/templates/../x", "/ws/data/templates/./x", "/ws/data/templates/a/../../x", " /ws/data/templates/x.md"} {
		if err := c.RemoveTemplate(ctx, p); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("RemoveTemplate(%q): %v, want ErrInvalidArgument", p, err)
		}
	}
	for _, id := range []string{"", "x", "20200101000000-ABCDEFG"} {
		if err := c.DocSaveAsTemplate(ctx, id, "n", false); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("DocSaveAsTemplate(%q): %v, want ErrInvalidArgument", id, err)
		}
	}
	if _, err := c.RenameAsset(ctx, "", "x"); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("RenameAsset without oldPath: %v", err)
	}
	if _, err := c.GetDocAssets(ctx, " ", true); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("GetDocAssets without id: %v", err)
	}
	if _, err := c.RenderTemplate(ctx, "20200101000000-abcdefg", "", false); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("RenderTemplate without path: %v", err)
	}
	if fk.hits.Load() != 0 {
		t.Fatalf("%d requests reached the kernel", fk.hits.Load())
	}
}

func TestAssetTemplateAccepted(t *testing.T) {
	var paths []string
	fk := newFakeKernel(t, func(w http.ResponseWriter, r *http.Request, s seen) {
		switch s.Path {
		case endpoint.RemoveUnusedAsset:
			paths = append(paths, string(s.Body))
			replyJSON(w, 0, "", map[string]any{"path": "/ws/data/x"})
		case endpoint.RemoveTemplate:
			paths = append(paths, string(s.Body))
			replyJSON(w, 0, "", nil)
		case endpoint.DocSaveAsTemplate:
			replyJSON(w, 1, "", nil)
		case endpoint.GetDocAssets, endpoint.GetDocImageAssets:
			replyJSON(w, 0, "", nil) // no assets: the kernel answers null
		default:
			t.Errorf("unexpected %s", s.Path)
		}
	})
	c := newTestClient(t, fk.URL)
	ctx := context.Background()
	for _, p := range []string{"assets/a.png", "assets/sub/a b.png", "20200101000000-abcdefg/assets/x.pdf"} {
		if _, err := c.RemoveUnusedAsset(ctx, p); err != nil {
			t.Errorf("RemoveUnusedAsset(%q): %v", p, err)
		}
	}
	for _, p := range []string{"/ws/data/templates/x.md", "/ws/data/templates/group", `C:\ws\data\templates\x.md`} {
		if err := c.RemoveTemplate(ctx, p); err != nil {
			t.Errorf("RemoveTemplate(%q): %v", p, err)
		}
	}
	if want := []string{`{"path":"assets/a.png"}`, `{"path":"assets/sub/a b.png"}`, `{"path":"20200101000000-abcdefg/assets/x.pdf"}`,
		`{"path":"/ws/data/templates/x.md"}`, `{"path":"/ws/data/templates/group"}`, `{"path":"C:\\ws\\data\\templates\\x.md"}`}; !slices.Equal(paths, want) {
		t.Errorf("sent %q, want %q", paths, want)
	}
	err := c.DocSaveAsTemplate(ctx, "20200101000000-abcdefg", "n", false)
	var api *APIError
	if !errors.Is(err, ErrTemplateExists) || !errors.As(err, &api) || api.Code != 1 || errors.Is(err, ErrFileNotFound) {
		t.Errorf("DocSaveAsTemplate of an existing name: %v, want the code 1 APIError matching ErrTemplateExists", err)
	}
	if a, err := c.GetDocAssets(ctx, "20200101000000-abcdefg", false); err != nil || a == nil || len(a) != 0 {
		t.Errorf("GetDocAssets of null = %#v, %v; want []", a, err)
	}
	if a, err := c.GetDocImageAssets(ctx, "20200101000000-abcdefg"); err != nil || a == nil || len(a) != 0 {
		t.Errorf("GetDocImageAssets of null = %#v, %v; want []", a, err)
	}
}
