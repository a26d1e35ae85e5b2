package file

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/embedded"
	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// unused lists the items list_unused_assets answers.
func (s *sfix) unused(t *testing.T) []string {
	t.Helper()
	res := s.OK(t, "file", map[string]any{"action": "list_unused_assets"})
	var out []string
	for _, a := range res["assets"].([]any) {
		out = append(out, a.(map[string]any)["item"].(string))
	}
	if res["count"] != float64(len(out)) {
		t.Fatalf("count: %v", res)
	}
	slices.Sort(out)
	return out
}

// uploadTo stores an asset in a workspace folder ("/<notebook>/assets/").
func (s *sfix) uploadTo(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	res, err := s.C.UploadAsset(context.Background(), siyuan.AssetUploadRequest{AssetsDirPath: dir,
		Files: []siyuan.UploadFile{{Name: name, Body: bytes.NewReader(data)}}})
	if err != nil || res.SuccMap[name] == "" {
		t.Fatalf("upload %s to %s: %v %+v", name, dir, err, res)
	}
	return res.SuccMap[name]
}

func TestGetDocAssets(t *testing.T) {
	s := newFixture(t)
	img := s.upload(t, "a.png", []byte("image"))
	pdf := s.upload(t, "b.pdf", []byte("pdf"))
	s.link(t, img)
	if _, err := s.C.AppendBlock(context.Background(), "markdown", "see [the pdf]("+pdf+"?page=2) and ![]("+img+")", s.Doc); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		assetType string
		want      []string
	}{
		{"", []string{img, pdf}},
		{"all", []string{img, pdf}},
		{"image", []string{img, img}},
	} {
		args := map[string]any{"action": "get_doc_assets", "id": s.Doc}
		if c.assetType != "" {
			args["assetType"] = c.assetType
		}
		res := s.OK(t, "file", args)
		var got []string
		for _, a := range res["assets"].([]any) {
			got = append(got, a.(string))
		}
		if !slices.Equal(got, c.want) || res["count"] != float64(len(c.want)) || res["id"] != s.Doc {
			t.Errorf("assetType %q: %v, want %v", c.assetType, res, c.want)
		}
	}
	// A block answers for its document.
	if res := s.OK(t, "file", map[string]any{"action": "get_doc_assets", "id": s.Blocks[0]}); res["count"] != float64(2) {
		t.Fatalf("by block: %v", res)
	}
	// A document without assets: an empty list, not null.
	plain := s.MkDoc(t, s.NB, "/Plain", "nothing")
	if res := s.OK(t, "file", map[string]any{"action": "get_doc_assets", "id": plain}); res["count"] != float64(0) || res["assets"] == nil {
		t.Fatalf("plain: %v", res)
	}
	s.WantErr(t, "file", map[string]any{"action": "get_doc_assets", "id": s.Doc, "assetType": "video"}, failure.InvalidArguments)
	s.WantErr(t, "file", map[string]any{"action": "get_doc_assets", "id": "x"}, failure.InvalidArguments)
	s.WantErr(t, "file", map[string]any{"action": "get_doc_assets", "id": "20200101010101-abcdefg"}, failure.NotFound)
	s.Policy = &tools.Policy{Default: tools.LevelDelete, Notebooks: map[string]tools.Level{s.NB: tools.LevelNone}, AllActions: true, Strict: true}
	s.WantMissing(t, "file", map[string]any{"action": "get_doc_assets", "id": s.Doc}, map[string]string{s.Doc: tooltest.NewID()})
}

func TestUnusedAssets(t *testing.T) {
	s := newFixture(t)
	ctx := context.Background()
	used := s.upload(t, "used.png", []byte("used"))
	s.link(t, used)
	loose := s.upload(t, "loose.png", []byte("loose"))
	other, err := s.C.CreateNotebook(ctx, "Other")
	if err != nil {
		t.Fatal(err)
	}
	boxed := s.uploadTo(t, "/"+other.ID+"/assets/", "boxed.png", []byte("boxed"))
	if !strings.HasPrefix(boxed, other.ID+"/assets/") {
		t.Fatalf("a notebook's asset is %s", boxed)
	}
	if got := s.unused(t); !slices.Equal(got, sortedOf(loose, boxed)) {
		t.Fatalf("unused: %v", got)
	}
	// A hidden notebook's assets are not shown.
	s.Policy = &tools.Policy{Default: tools.LevelDelete, Notebooks: map[string]tools.Level{other.ID: tools.LevelNone}, AllActions: true, Strict: true}
	if got := s.unused(t); !slices.Equal(got, []string{loose}) {
		t.Fatalf("unused with Other hidden: %v", got)
	}
	// Removing them would remove the notebook's: it needs rwd there.
	s.Policy = &tools.Policy{Default: tools.LevelDelete, Notebooks: map[string]tools.Level{other.ID: tools.LevelWrite}, AllActions: true, Strict: true}
	s.WantErr(t, "file", map[string]any{"action": "remove_unused_assets", "validateOnly": true}, failure.PermissionDenied)
	s.Policy = nil

	args := map[string]any{"action": "remove_unused_assets"}
	s.Unconfirmed = true
	pre := s.Preflight(t, "file", args, "expectedManifestHash", 1)
	e := s.WantErr(t, "file", tooltest.CommitArgs(args, pre), failure.ConfirmationRequired)
	wantAttemptedFalse(t, e)
	s.Unconfirmed = false
	// One more unused asset after the preflight: the manifest changed.
	late := s.upload(t, "late.png", []byte("late"))
	s.Drifted(t, "file", args, pre, func() {})
	if !s.exists(t, "/data/"+loose) || !s.exists(t, "/data/"+late) {
		t.Fatal("a state_changed removal removed")
	}

	pre, res := s.strictOK(t, args, "expectedManifestHash", 1)
	removed := []string{}
	for _, a := range res["removed"].([]any) {
		removed = append(removed, a.(string))
	}
	if want := sortedOf(loose, boxed, late); !slices.Equal(removed, want) || res["count"] != float64(3) {
		t.Fatalf("removed %v, want %v (%v)", removed, want, res)
	}
	for _, a := range []string{loose, late} {
		if s.exists(t, "/data/"+a) {
			t.Fatalf("%s is still there", a)
		}
	}
	if s.exists(t, "/data/"+boxed) {
		t.Fatal("the notebook's unused asset is still there")
	}
	if !s.exists(t, "/data/"+used) {
		t.Fatal("a linked asset was removed")
	}
	if got := s.unused(t); len(got) != 0 {
		t.Fatalf("unused after removal: %v", got)
	}
	s.Replay(t, "file", args, pre, res)
	// Nothing left to remove.
	e = s.WantErr(t, "file", tooltest.CopyArgs(args, "validateOnly", true), failure.NotFound)
	wantAttemptedFalse(t, e)
}

func sortedOf(s ...string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

func TestRenameAsset(t *testing.T) {
	s := newFixture(t)
	ctx := context.Background()
	data := []byte("receipt scan")
	old := s.upload(t, "scan.png", data)
	s.link(t, old)
	linking := s.Kids(t, s.Doc)[12]
	args := map[string]any{"action": "rename_asset", "oldPath": old, "newName": "receipt"}

	// The asset changes after the preflight: state_changed, not renamed.
	pre := s.Preflight(t, "file", args, "expectedStateHash", 1)
	s.Drifted(t, "file", args, pre, func() { s.put(t, "/data/"+old, "rescanned") })
	if got, _ := s.read(t, "/data/"+old); string(got) != "rescanned" {
		t.Fatal("a state_changed rename renamed")
	}
	s.put(t, "/data/"+old, string(data))

	pre, res := s.strictOK(t, args, "expectedStateHash", 1)
	np, _ := res["newPath"].(string)
	if res["oldPath"] != old || !strings.HasPrefix(np, "assets/receipt-") || !strings.HasSuffix(np, ".png") || res["sha256"] != sum(data) {
		t.Fatalf("rename: %v", res)
	}
	if s.exists(t, "/data/"+old) {
		t.Fatal("the old asset is still there")
	}
	if got, ok := s.read(t, "/data/"+np); !ok || !bytes.Equal(got, data) {
		t.Fatalf("the renamed asset: %q", got)
	}
	// The document links the new name.
	if kd := s.Text(t, linking); !strings.Contains(kd, np) || strings.Contains(kd, old) {
		t.Fatalf("the link after the rename: %s", kd)
	}
	s.Replay(t, "file", args, pre, res)

	// Its current name (with or without the extension): refused at
	// preflight. It used to reach SiYuan, which kept the asset where it
	// was, and the readback then reported readback_mismatch.
	for _, n := range []string{strings.TrimSuffix(base(np), ".png"), base(np)} {
		s.InvalidAt(t, "file", map[string]any{"action": "rename_asset", "oldPath": np, "newName": n}, false)
	}
	// A name SiYuan filters into the current one: refused at commit,
	// nothing moved, and a retry answers the recorded rejection.
	odd := s.upload(t, "a_b.png", []byte("odd"))
	same := map[string]any{"action": "rename_asset", "oldPath": odd, "newName": strings.Replace(strings.TrimSuffix(base(odd), ".png"), "_", ":", 1)}
	pre = s.Preflight(t, "file", same, "expectedStateHash", 1)
	e := s.WantErr(t, "file", tooltest.CommitArgs(same, pre), failure.InvalidArguments)
	wantAttemptedFalse(t, e)
	e = s.WantErr(t, "file", tooltest.CommitArgs(same, pre), failure.Rejected)
	wantAttemptedFalse(t, e)
	if !s.exists(t, "/data/"+odd) || !s.exists(t, "/data/"+np) {
		t.Fatal("a refused rename lost the asset")
	}

	// Missing, and bad names.
	e = s.WantErr(t, "file", map[string]any{"action": "rename_asset", "oldPath": "assets/none.png", "newName": "x", "validateOnly": true}, failure.NotFound)
	wantAttemptedFalse(t, e)
	for _, n := range []string{"", " ", "a/b", `a\b`} {
		s.InvalidAt(t, "file", map[string]any{"action": "rename_asset", "oldPath": np, "newName": n}, false)
	}
	for _, p := range []string{"assets/../conf/conf.json", "assets/", ""} {
		s.InvalidAt(t, "file", map[string]any{"action": "rename_asset", "oldPath": p, "newName": "x"}, false)
	}

	// Linked from a notebook the agent may only read: the rename would
	// rewrite its documents.
	ro, err := s.C.CreateNotebook(ctx, "ReadOnly")
	if err != nil {
		t.Fatal(err)
	}
	s.MkDoc(t, ro.ID, "/Uses", "![]("+np+")")
	s.Policy = &tools.Policy{Default: tools.LevelDelete, Notebooks: map[string]tools.Level{ro.ID: tools.LevelRead}, AllActions: true, Strict: true}
	// (The embedded kernel keeps no assets table, so the blocks' Markdown
	// tells, and the document is not in the index until the gate flushes
	// it: the rename used to pass here and rewrite the read-only notebook.)
	s.WantErr(t, "file", map[string]any{"action": "rename_asset", "oldPath": np, "newName": "again", "validateOnly": true}, failure.PermissionDenied)
	// An asset no document of that notebook links renames.
	s.Preflight(t, "file", map[string]any{"action": "rename_asset", "oldPath": odd, "newName": "fine"}, "expectedStateHash", 1)
	// A name holding LIKE's wildcard _ still resolves.
	wild := s.upload(t, "w_x.png", []byte("wild"))
	s.Preflight(t, "file", map[string]any{"action": "rename_asset", "oldPath": wild, "newName": "tame"}, "expectedStateHash", 1)
}

func TestDeleteAsset(t *testing.T) {
	s := newFixture(t)
	ctx := context.Background()
	asset := s.upload(t, "gone.png", []byte("doomed"))
	s.link(t, asset) // deleted even though a document links it
	args := map[string]any{"action": "delete_asset", "path": "/data/" + asset}

	s.Unconfirmed = true
	pre := s.Preflight(t, "file", args, "expectedStateHash", 1)
	e := s.WantErr(t, "file", tooltest.CommitArgs(args, pre), failure.ConfirmationRequired)
	wantAttemptedFalse(t, e)
	s.Unconfirmed = false
	if !s.exists(t, "/data/"+asset) {
		t.Fatal("an unconfirmed delete ran")
	}
	s.Drifted(t, "file", args, pre, func() { s.put(t, "/data/"+asset, "replaced") })
	if got, _ := s.read(t, "/data/"+asset); string(got) != "replaced" {
		t.Fatal("a state_changed delete ran")
	}

	pre, res := s.strictOK(t, args, "expectedStateHash", 1)
	if res["deleted"] != true || res["path"] != asset || s.exists(t, "/data/"+asset) {
		t.Fatalf("delete: %v", res)
	}
	s.Replay(t, "file", args, pre, res)
	e = s.WantErr(t, "file", tooltest.CopyArgs(args, "validateOnly", true), failure.NotFound)
	wantAttemptedFalse(t, e)

	// A folder is not an asset file.
	s.uploadTo(t, "/assets/sub/", "in.png", []byte("in"))
	e = s.WantErr(t, "file", map[string]any{"action": "delete_asset", "path": "assets/sub", "validateOnly": true}, failure.InvalidArguments)
	wantAttemptedFalse(t, e)
	for _, p := range []string{"assets/../conf/conf.json", "assets/", "../x.png", "assets//x.png"} {
		s.InvalidAt(t, "file", map[string]any{"action": "delete_asset", "path": p}, false)
	}

	// A notebook's asset needs rwd there.
	nb, err := s.C.CreateNotebook(ctx, "Kept")
	if err != nil {
		t.Fatal(err)
	}
	boxed := s.uploadTo(t, "/"+nb.ID+"/assets/", "boxed.png", []byte("boxed"))
	s.Policy = &tools.Policy{Default: tools.LevelDelete, Notebooks: map[string]tools.Level{nb.ID: tools.LevelWrite}, AllActions: true, Strict: true}
	s.WantErr(t, "file", map[string]any{"action": "delete_asset", "path": boxed, "validateOnly": true}, failure.PermissionDenied)
	s.Policy = nil
	s.strictOK(t, map[string]any{"action": "delete_asset", "path": boxed}, "expectedStateHash", 1)
	if s.exists(t, "/data/"+boxed) {
		t.Fatal("the notebook's asset is still there")
	}
}

// TestImageOCRText: a kernel whose workspace has OCR texts answers them;
// an asset without one answers "".
func TestImageOCRText(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "data", "assets"), 0o755); err != nil {
		t.Fatal(err)
	}
	texts, _ := json.Marshal(map[string]string{"assets/scan-20260101000000-abcdefg.png": "TOTAL 42.00"})
	if err := os.WriteFile(filepath.Join(dir, "data", "assets", "ocr-texts.json"), texts, 0o644); err != nil {
		t.Fatal(err)
	}
	k, err := embedded.Open(context.Background(), embedded.Options{Dir: dir, Token: "t", SQLFlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(k.Handler())
	t.Cleanup(func() { srv.Close(); k.Close() })
	c, err := siyuan.New(siyuan.Config{BaseURL: srv.URL, Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := tools.NewRegistry(&tools.Env{Kernel: c}, Tool())
	if err != nil {
		t.Fatal(err)
	}
	call := func(p string) (map[string]any, error) {
		raw, _ := json.Marshal(map[string]any{"action": "get_image_ocr_text", "path": p})
		v, err := r.Call(context.Background(), "file", raw)
		if err != nil {
			return nil, err
		}
		return tooltest.AsJSON(t, v), nil
	}
	for p, want := range map[string]string{
		"assets/scan-20260101000000-abcdefg.png":       "TOTAL 42.00",
		"/data/assets/scan-20260101000000-abcdefg.png": "TOTAL 42.00",
		"scan-20260101000000-abcdefg.png":              "TOTAL 42.00",
		"assets/other-20260101000000-abcdefg.png":      "",
	} {
		res, err := call(p)
		if err != nil || res["text"] != want || !strings.HasPrefix(res["path"].(string), "assets/") {
			t.Errorf("%s: %v %v, want %q", p, res, err, want)
		}
	}
	if _, err := call("assets/../conf/conf.json"); err == nil {
		t.Fatal("a path outside the assets was read")
	}
}

func TestImageOCRTextInFixture(t *testing.T) {
	s := newFixture(t)
	asset := s.upload(t, "photo.png", []byte("no text in here"))
	res := s.OK(t, "file", map[string]any{"action": "get_image_ocr_text", "path": asset})
	if res["path"] != asset || res["text"] != "" {
		t.Fatalf("ocr: %v", res)
	}
	s.WantErr(t, "file", map[string]any{"action": "get_image_ocr_text", "path": "assets/"}, failure.InvalidArguments)
	s.WantErr(t, "file", map[string]any{"action": "get_image_ocr_text", "path": ""}, failure.InvalidArguments)
	// Upstream 0.6.8's form without a path: an empty text, no asset read.
	if res := s.OK(t, "file", map[string]any{"action": "get_image_ocr_text"}); res["path"] != nil || res["text"] != "" {
		t.Fatalf("ocr without a path: %v", res)
	}
	// A hidden notebook's asset is not read.
	nb, err := s.C.CreateNotebook(context.Background(), "Hidden")
	if err != nil {
		t.Fatal(err)
	}
	boxed := s.uploadTo(t, "/"+nb.ID+"/assets/", "p.png", []byte("p"))
	s.Policy = &tools.Policy{Default: tools.LevelDelete, Notebooks: map[string]tools.Level{nb.ID: tools.LevelNone}, AllActions: true, Strict: true}
	s.WantMissing(t, "file", map[string]any{"action": "get_image_ocr_text", "path": boxed}, map[string]string{nb.ID: tooltest.NewID()})
}

// TestRemoveUnusedAtTheListCap: SiYuan lists 512 unused assets at most but
// removes every one, so at the cap the removal is refused, nothing removed.
func TestRemoveUnusedAtTheListCap(t *testing.T) {
	s := newFixture(t)
	for i := range maxListedUnused + 1 {
		s.upload(t, fmt.Sprintf("u%d.png", i), []byte(fmt.Sprint("unused ", i)))
	}
	if got := s.unused(t); len(got) != maxListedUnused {
		t.Fatalf("listed %d unused assets, SiYuan lists %d", len(got), maxListedUnused)
	}
	e := s.WantErr(t, "file", map[string]any{"action": "remove_unused_assets", "validateOnly": true}, failure.InvalidArguments)
	wantAttemptedFalse(t, e)
	if got := s.unused(t); len(got) != maxListedUnused {
		t.Fatalf("a refused removal removed: %d left", len(got))
	}
}
