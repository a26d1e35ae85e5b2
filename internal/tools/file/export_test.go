package file

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/localfs"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// zipEntries reads a ZIP from the workspace: entry name → bytes.
func (s *sfix) zipEntries(t *testing.T, p string) map[string][]byte {
	t.Helper()
	data, ok := s.read(t, p)
	if !ok {
		t.Fatalf("no ZIP at %s", p)
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("%s is not a ZIP: %v", p, err)
	}
	out := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatalf("entry %s: %v", f.Name, err)
		}
		out[f.Name] = b
	}
	return out
}

// entry finds the ZIP entry whose name ends with suffix.
func entry(entries map[string][]byte, suffix string) ([]byte, bool) {
	for n, b := range entries {
		if strings.HasSuffix(n, suffix) {
			return b, true
		}
	}
	return nil, false
}

func TestExportMd(t *testing.T) {
	s := newFixture(t)
	md := s.OK(t, "file", map[string]any{"action": "export_md", "id": s.Doc})
	content, _ := md["content"].(string)
	if md["id"] != s.Doc || md["hPath"] != "/Doc" || !strings.HasPrefix(content, "# Doc\n") {
		t.Fatalf("export_md: %v", md)
	}
	for i := range 12 {
		if !strings.Contains(content, fmt.Sprintf("\nparagraph %d\n", i)) {
			t.Fatalf("paragraph %d missing: %q", i, content)
		}
	}
	s.WantErr(t, "file", map[string]any{"action": "export_md", "id": "20200101010101-abcdefg"}, failure.NotFound)
	s.WantErr(t, "file", map[string]any{"action": "export_md", "id": "nope"}, failure.InvalidArguments)
	s.WantErr(t, "file", map[string]any{"action": "export_md"}, failure.InvalidArguments)
	// A hidden notebook's document is not exported.
	s.Policy = &tools.Policy{Default: tools.LevelDelete, Notebooks: map[string]tools.Level{s.NB: tools.LevelNone}, AllActions: true, Strict: true}
	s.WantMissing(t, "file", map[string]any{"action": "export_md", "id": s.Doc}, map[string]string{s.Doc: tooltest.NewID()})
}

func TestExportResources(t *testing.T) {
	s := newFixture(t)
	data := []byte("asset bytes for the zip")
	asset := s.upload(t, "pic.png", data)

	res := s.OK(t, "file", map[string]any{"action": "export_resources", "paths": []string{asset, "/data/" + asset, "data/" + s.NB}, "name": "bundle"})
	zp, _ := res["path"].(string)
	if !strings.HasPrefix(zp, "temp/export/") || !strings.HasSuffix(zp, "bundle.zip") || res["writeAttempted"] != true || res["writeSafetyGuaranteed"] != false {
		t.Fatalf("export: %v", res)
	}
	if _, ok := res["delivery"]; ok {
		t.Fatalf("without outputPath there is nothing to deliver: %v", res)
	}
	// Duplicate spellings are one path.
	if paths := res["paths"].([]any); len(paths) != 2 || paths[0] != "/data/"+asset || paths[1] != "/data/"+s.NB {
		t.Fatalf("paths %v", paths)
	}
	entries := s.zipEntries(t, "/"+zp)
	if got, ok := entry(entries, "/"+base(asset)); !ok || !bytes.Equal(got, data) {
		t.Fatalf("the ZIP lacks the asset: %v", keys(entries))
	}
	sy, ok := entry(entries, "/"+s.Doc+".sy")
	if !ok || !strings.Contains(string(sy), "paragraph 11") {
		t.Fatalf("the ZIP lacks the document: %v", keys(entries))
	}

	// validateOnly: refused without executing (an external effect has no
	// preflight), so no new ZIP.
	before := s.assetsIn(t, "/temp/export")
	e := s.WantErr(t, "file", map[string]any{"action": "export_resources", "paths": []string{asset}, "validateOnly": true}, failure.PreflightUnavailable)
	wantAttemptedFalse(t, e)
	if e.RequestID != "" || len(s.assetsIn(t, "/temp/export")) != len(before) {
		t.Fatalf("an export preflight exported: %+v", e)
	}

	// At the authority, outputPath answers a manifest for the front to
	// save; the authority writes nothing there.
	out := filepath.Join(t.TempDir(), "bundle.zip")
	res = s.OK(t, "file", map[string]any{"action": "export_resources", "paths": []string{asset}, "outputPath": out})
	files, _ := res["files"].([]any)
	if res["delivery"] != "download" || res["outputPath"] != out || len(files) != 1 {
		t.Fatalf("manifest: %v", res)
	}
	f := files[0].(map[string]any)
	if f["kernelPath"] != "/"+res["path"].(string) || f["dest"] != out {
		t.Fatalf("manifest entry: %v", f)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the authority saved the ZIP itself")
	}
	if _, ok := entry(s.zipEntries(t, f["kernelPath"].(string)), "/"+base(asset)); !ok {
		t.Fatal("the manifest's ZIP lacks the asset")
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestExportResourcesScope: export_resources exports what an agent may
// read (assets, templates, emojis, the folders of notebooks it may read) and
// refuses the rest of data/ by name, each storage folder included; a hidden
// notebook's folder answers exactly as a missing one; nothing outside data/
// and nothing through a symbolic link.
func TestExportResourcesScope(t *testing.T) {
	s := newFixture(t)
	ctx := context.Background()
	hidden, err := s.C.CreateNotebook(ctx, "Hidden")
	if err != nil {
		t.Fatal(err)
	}
	hiddenDoc := s.MkDoc(t, hidden.ID, "/Secret", "secret text")
	hiddenSY := "data/" + hidden.ID + s.Where(t, hiddenDoc).Path
	// Every storage folder and file SiYuan keeps, and the other top folders.
	for _, p := range []string{
		tools.Protected + "/notebookPermissions", "/data/storage/petal/other-plugin/token.json",
		"/data/storage/av/20260101000000-abcdefg.json", "/data/storage/riff/20260101000000-abcdefg.deck",
		"/data/storage/recent-doc.json", "/data/storage/outline.json", "/data/storage/local.json", "/data/storage/criteria.json",
		"/data/storage/bazaar.json", "/data/storage/ai/agent/sessions/index.json",
		"/data/plugins/p/plugin.json", "/data/widgets/w/widget.json", "/data/snippets/conf.json", "/data/public/x.txt",
		"/data/templates/t.md", "/data/emojis/e.png",
	} {
		s.put(t, p, "{}")
	}
	asset := s.upload(t, "pic.png", []byte("png"))
	s.Policy = &tools.Policy{Default: tools.LevelDelete, Notebooks: map[string]tools.Level{hidden.ID: tools.LevelNone}, AllActions: true, Strict: true}
	before := len(s.assetsIn(t, "/temp/export"))
	missingID := "20200101000000-zzzzzzz"
	for _, c := range []struct {
		paths []string
		name  string
		code  failure.Code
	}{
		{[]string{"data"}, "", failure.PermissionDenied},
		{[]string{"/data/"}, "", failure.PermissionDenied},
		{[]string{"DATA"}, "", failure.PermissionDenied},
		{[]string{"data/storage"}, "", failure.PermissionDenied},
		{[]string{"data/storage/"}, "", failure.PermissionDenied},
		{[]string{"DATA/Storage/petal/"}, "", failure.PermissionDenied},
		{[]string{"data/Storage/av"}, "", failure.PermissionDenied},
		{[]string{tools.Protected}, "", failure.PermissionDenied},
		{[]string{tools.Protected + "/notebookPermissions"}, "", failure.PermissionDenied},
		// A hidden notebook is a notebook that does not exist.
		{[]string{"data/" + hidden.ID}, "", failure.NotFound},
		{[]string{"data/" + hidden.ID + "/x.sy"}, "", failure.NotFound},
		{[]string{"assets/x.png", "data/" + hidden.ID}, "", failure.NotFound},
		{[]string{"data/storage/petal"}, "", failure.PermissionDenied},
		{[]string{"data/storage/petal/other-plugin"}, "", failure.PermissionDenied},
		{[]string{"data/storage/petal/other-plugin/token.json"}, "", failure.PermissionDenied},
		{[]string{"data/storage/av"}, "", failure.PermissionDenied},
		{[]string{"data/storage/av/20260101000000-abcdefg.json"}, "", failure.PermissionDenied},
		{[]string{"data/storage/riff"}, "", failure.PermissionDenied},
		{[]string{"data/storage/riff/20260101000000-abcdefg.deck"}, "", failure.PermissionDenied},
		{[]string{"data/storage/recent-doc.json"}, "", failure.PermissionDenied},
		{[]string{"data/storage/outline.json"}, "", failure.PermissionDenied},
		{[]string{"data/storage/local.json"}, "", failure.PermissionDenied},
		{[]string{"data/storage/criteria.json"}, "", failure.PermissionDenied},
		{[]string{"data/storage/bazaar.json"}, "", failure.PermissionDenied},
		{[]string{"data/storage/ai"}, "", failure.PermissionDenied},
		{[]string{"data/plugins"}, "", failure.PermissionDenied},
		{[]string{"data/plugins/p/plugin.json"}, "", failure.PermissionDenied},
		{[]string{"data/widgets/w"}, "", failure.PermissionDenied},
		{[]string{"data/snippets"}, "", failure.PermissionDenied},
		{[]string{"data/snippets/conf.json"}, "", failure.PermissionDenied},
		{[]string{"data/public"}, "", failure.PermissionDenied},
		{[]string{"assets/x.png", "data/storage/local.json"}, "", failure.PermissionDenied},
		// Unknown names, other spellings, files at the top: refused from
		// the spelling alone, whatever notebook they might name.
		{[]string{"data/Assets/x.png"}, "", failure.InvalidArguments},
		{[]string{"data/" + strings.ToUpper(hidden.ID)}, "", failure.InvalidArguments},
		{[]string{"data/" + strings.ToUpper(s.NB)}, "", failure.InvalidArguments},
		{[]string{"data/.siyuan"}, "", failure.InvalidArguments},
		{[]string{"data/x.json"}, "", failure.InvalidArguments},
		{[]string{"data/%2e%2e/conf"}, "", failure.InvalidArguments},
		{[]string{"Data/assets"}, "", failure.InvalidArguments},
		{[]string{"conf"}, "", failure.InvalidArguments},
		{[]string{"conf/conf.json"}, "", failure.InvalidArguments},
		{[]string{"history"}, "", failure.InvalidArguments},
		{[]string{"temp/export"}, "", failure.InvalidArguments},
		{[]string{"data/../conf"}, "", failure.InvalidArguments},
		{[]string{"data/assets/../storage"}, "", failure.InvalidArguments},
		{[]string{"data/./assets"}, "", failure.InvalidArguments},
		{[]string{"data//assets"}, "", failure.InvalidArguments},
		{[]string{"data/assets/\x00"}, "", failure.InvalidArguments},
		{[]string{""}, "", failure.InvalidArguments},
		{[]string{}, "", failure.InvalidArguments},
		{[]string{"assets/x.png"}, "a/b", failure.InvalidArguments},
		// Paths that name nothing, and a hidden notebook's, alike.
		{[]string{"assets/nope.png"}, "", failure.NotFound},
		{[]string{"data/templates/nope.md"}, "", failure.NotFound},
		{[]string{"data/" + missingID}, "", failure.NotFound},
		{[]string{"data/" + hidden.ID}, "", failure.NotFound},
		{[]string{"data/" + missingID + "/x.sy"}, "", failure.NotFound},
		{[]string{hiddenSY}, "", failure.NotFound},
		{[]string{asset + "/inside"}, "", failure.NotFound},
		{[]string{"assets/x.png", "data/" + hidden.ID}, "", failure.NotFound},
	} {
		args := map[string]any{"action": "export_resources", "paths": c.paths}
		if c.name != "" {
			args["name"] = c.name
		}
		e := s.WantErr(t, "file", args, c.code)
		wantAttemptedFalse(t, e)
		if strings.Contains(e.Message, s.K.Dir()) {
			t.Errorf("%v: the refusal shows the workspace's location: %s", c.paths, e.Message)
		}
	}
	// No oracle: a hidden notebook's folder is refused in the words of a
	// missing one.
	hiddenErr := s.WantErr(t, "file", map[string]any{"action": "export_resources", "paths": []string{"data/" + hidden.ID}}, failure.NotFound)
	missingErr := s.WantErr(t, "file", map[string]any{"action": "export_resources", "paths": []string{"data/" + missingID}}, failure.NotFound)
	if strings.ReplaceAll(hiddenErr.Message, hidden.ID, missingID) != missingErr.Message || hiddenErr.Action != missingErr.Action ||
		len(hiddenErr.Details) != len(missingErr.Details) {
		t.Fatalf("a hidden notebook's folder is told apart from a missing one:\n%+v\n%+v", hiddenErr, missingErr)
	}
	s.WantMissing(t, "file", map[string]any{"action": "export_resources", "paths": []string{"data/" + hidden.ID + "/x.sy"}}, map[string]string{hidden.ID: tooltest.NewID()})
	if after := len(s.assetsIn(t, "/temp/export")); after != before {
		t.Fatalf("refused exports wrote %d ZIPs", after-before)
	}
	// What an agent may read exports.
	res := s.OK(t, "file", map[string]any{"action": "export_resources",
		"paths": []string{"data/" + s.NB, "data/assets", "data/templates", "data/emojis/e.png", asset}})
	entries := s.zipEntries(t, "/"+res["path"].(string))
	for _, want := range []string{"/" + s.Doc + ".sy", "/t.md", "/e.png", "/" + base(asset)} {
		if _, ok := entry(entries, want); !ok {
			t.Errorf("the ZIP lacks %s: %v", want, keys(entries))
		}
	}
	// A symbolic link is never followed, as the last segment or above it
	// (it could lead out of the workspace).
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("host secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(s.K.Dir(), "data", "assets", "linked")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"assets/linked", "assets/linked/secret.txt", "data/assets/linked/secret.txt"} {
		e := s.WantErr(t, "file", map[string]any{"action": "export_resources", "paths": []string{p}}, failure.PermissionDenied)
		wantAttemptedFalse(t, e)
		if !strings.Contains(e.Message, "symbolic link") {
			t.Errorf("%s: %v", p, e)
		}
	}
}

func TestExtractDoc(t *testing.T) {
	s := newFixture(t)
	data := []byte("image for the extract")
	asset := s.upload(t, "shot.png", data)
	s.link(t, asset)
	s.link(t, asset) // twice: listed once
	spaced := s.upload(t, "with space.png", []byte("spaced"))
	s.link(t, strings.ReplaceAll(spaced, " ", "%20"))
	// A link that climbs out of the assets folder is never fetched.
	s.link(t, "assets/../../conf/conf.json")

	res := s.OK(t, "file", map[string]any{"action": "extract_doc", "id": s.Doc, "outputDir": "./plan"})
	md, _ := res["markdown"].(string)
	if res["delivery"] != "download" || res["hPath"] != "/Doc" || res["markdownFile"] != "Doc.md" || res["outputDir"] != "./plan" ||
		!strings.Contains(md, "paragraph 11") || !strings.Contains(md, asset) || res["writeSafetyGuaranteed"] != false || res["writeAttempted"] != true {
		t.Fatalf("extract: %v", res)
	}
	var got []string
	for _, f := range res["files"].([]any) {
		m := f.(map[string]any)
		got = append(got, m["kernelPath"].(string)+" -> "+m["dest"].(string))
	}
	want := []string{"/data/" + asset + " -> " + asset, "/data/" + spaced + " -> " + spaced}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("files:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if sk, _ := res["skipped"].([]any); len(sk) != 1 || sk[0] != "assets/../../conf/conf.json" {
		t.Fatalf("skipped: %v", res["skipped"])
	}
	// Every file of the manifest can be fetched.
	for _, w := range []string{asset, spaced} {
		if !s.exists(t, "/data/"+w) {
			t.Fatalf("the manifest names %s, which getFile cannot read", w)
		}
	}

	e := s.WantErr(t, "file", map[string]any{"action": "extract_doc", "id": s.Doc, "validateOnly": true}, failure.PreflightUnavailable)
	wantAttemptedFalse(t, e)
	e = s.WantErr(t, "file", map[string]any{"action": "extract_doc", "id": "20200101010101-abcdefg"}, failure.NotFound)
	wantAttemptedFalse(t, e)
	s.WantErr(t, "file", map[string]any{"action": "extract_doc", "id": "x"}, failure.InvalidArguments)
	// A document without assets: an empty manifest besides the Markdown.
	plain := s.MkDoc(t, s.NB, "/Plain: x*y", "no assets")
	res = s.OK(t, "file", map[string]any{"action": "extract_doc", "id": plain})
	if files := res["files"].([]any); len(files) != 0 || res["markdownFile"] != "Plain_ x_y.md" {
		t.Fatalf("plain: %v", res)
	}
}

// A front: its registry delegates writes to the fixture's (the authority),
// decides local paths with a localfs.Guard over one allowed folder, stages
// local files and saves downloads with the fakes below.

// guardDisk is the front's folder rule as the tools ask it.
type guardDisk struct{ g *localfs.Guard }

func (d guardDisk) Inspect(ctx context.Context, p string) (tools.LocalFile, error) {
	f, err := d.g.Open(ctx, p)
	if err != nil {
		return tools.LocalFile{}, err
	}
	f.Close()
	return tools.LocalFile{Path: f.Path, Size: f.Size}, nil
}

func (d guardDisk) Destination(ctx context.Context, p string) (string, error) {
	return d.g.Destination(ctx, p)
}

type fakeStager struct {
	mem    *tooltest.MemSources
	guard  *localfs.Guard
	mu     sync.Mutex
	staged map[string]string // path@sha → handle: a snapshot is reused
	opened int               // files the stager read
}

func (f *fakeStager) Stage(ctx context.Context, p string) (string, error) {
	file, err := f.guard.Open(ctx, p)
	if err != nil {
		return "", err
	}
	defer file.Close()
	data, err := io.ReadAll(file)
	if err != nil {
		return "", err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.opened++
	key := file.Path + "@" + sum(data)
	if h, ok := f.staged[key]; ok {
		return h, nil
	}
	h := f.mem.Put(file.Name, data)
	f.staged[key] = h
	return h, nil
}

type fakeDownloader struct{ c *siyuan.Client }

func (d fakeDownloader) fetch(ctx context.Context, dl tools.Download) ([]byte, error) {
	if dl.Inline != "" {
		return []byte(dl.Inline), nil
	}
	body, _, err := d.c.GetFile(ctx, dl.KernelPath)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	return io.ReadAll(body)
}

func (d fakeDownloader) save(ctx context.Context, dl tools.Download, p string) (tools.Saved, error) {
	data, err := d.fetch(ctx, dl)
	if err != nil {
		return tools.Saved{}, err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return tools.Saved{}, err
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return tools.Saved{}, err
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		return tools.Saved{}, err
	}
	return tools.Saved{Path: p, SHA256: sum(data), Size: int64(len(data))}, nil
}

func (d fakeDownloader) File(ctx context.Context, dl tools.Download, p string) (tools.Saved, error) {
	return d.save(ctx, dl, p)
}

func (d fakeDownloader) Tree(ctx context.Context, ds []tools.Download, dir string) ([]tools.Saved, error) {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	var out []tools.Saved
	for _, dl := range ds {
		sv, err := d.save(ctx, dl, filepath.Join(dir, filepath.FromSlash(dl.Dest)))
		if err != nil {
			return nil, err
		}
		out = append(out, sv)
	}
	return out, nil
}

type front struct {
	r    *tools.Registry
	mu   sync.Mutex
	sent []map[string]any // what the front sent the authority
}

// allowedGuard allows agents the folder dir, the fixture's workspace being
// the one the kernel names.
func (s *sfix) allowedGuard(t *testing.T, dir string) *localfs.Guard {
	t.Helper()
	g, err := localfs.New(localfs.Rules{Allowed: []string{dir}, WorkDir: dir,
		Workspace: func(context.Context) (string, error) { return s.K.Dir(), nil }})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// front is a front whose person allowed agents the folder dir.
func (s *sfix) front(t *testing.T, stager tools.Stager, dir string) *front {
	t.Helper()
	f := &front{}
	f.r = s.Registry(t, &tools.Env{Kernel: s.C, Stager: stager, Downloader: fakeDownloader{s.C}, DelegateStrict: true, Local: guardDisk{s.allowedGuard(t, dir)},
		Delegate: func(ctx context.Context, tool string, raw json.RawMessage) (any, error) {
			var m map[string]any
			if err := json.Unmarshal(raw, &m); err != nil {
				return nil, err
			}
			f.mu.Lock()
			f.sent = append(f.sent, m)
			f.mu.Unlock()
			// The authority's entry point reads the front's confirm:true.
			action, _ := m["action"].(string)
			if m["confirm"] == true {
				ctx = tools.WithConfirmed(ctx, tool, action)
			}
			return s.R.Call(ctx, tool, raw)
		}})
	return f
}

// call runs a confirmed call at the front.
func (f *front) call(t *testing.T, args map[string]any) (map[string]any, *failure.Error) {
	t.Helper()
	raw, _ := json.Marshal(args)
	action, _ := args["action"].(string)
	v, err := f.r.Call(tools.WithConfirmed(context.Background(), "file", action), "file", raw)
	if err != nil {
		var fe *failure.Error
		if !errors.As(err, &fe) {
			t.Fatalf("%v: %v", args, err)
		}
		return nil, fe
	}
	return tooltest.AsJSON(t, v), nil
}

// unconfirmed runs a call at the front that its entry point did not
// confirm.
func (f *front) unconfirmed(t *testing.T, args map[string]any) (map[string]any, *failure.Error) {
	t.Helper()
	v, err := f.r.Call(context.Background(), "file", mustJSON(t, args))
	if err != nil {
		var fe *failure.Error
		if !errors.As(err, &fe) {
			t.Fatalf("%v: %v", args, err)
		}
		return nil, fe
	}
	return tooltest.AsJSON(t, v), nil
}

// toConfirm is what the front's entry point asks its person about a call.
func (f *front) toConfirm(t *testing.T, args map[string]any) tools.Pending {
	t.Helper()
	p, pending, err := f.r.ToConfirm(context.Background(), "file", tools.Input{Raw: mustJSON(t, args)})
	if err != nil || !pending {
		t.Fatalf("%v: pending %v, %v", args, pending, err)
	}
	return p
}

func (f *front) ok(t *testing.T, args map[string]any) map[string]any {
	t.Helper()
	m, err := f.call(t, args)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return m
}

func (f *front) last() map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sent[len(f.sent)-1]
}

func TestFrontSavesExports(t *testing.T) {
	s := newFixture(t)
	data := []byte("the front saves me")
	asset := s.upload(t, "saved.png", data)
	s.link(t, asset)
	dir := t.TempDir()
	fr := s.front(t, nil, dir)

	// export_resources with outputPath: the person confirms the destination,
	// and the ZIP lands there.
	out := filepath.Join(dir, "out.zip")
	exp := map[string]any{"action": "export_resources", "paths": []string{asset}, "outputPath": out}
	p := fr.toConfirm(t, exp)
	if p.Dangerous || len(p.Local) != 1 || !strings.Contains(p.Local[0], "creates the file "+out) || !strings.Contains(p.Message(), out) {
		t.Fatalf("the confirmation of an export: %+v", p)
	}
	if _, e := fr.unconfirmed(t, exp); e == nil || e.Code != failure.ConfirmationRequired {
		t.Fatalf("an unconfirmed export: %v", e)
	}
	res := fr.ok(t, exp)
	zipped, err := os.ReadFile(out)
	if err != nil || res["outputPath"] != out || res["sha256"] != sum(zipped) || res["bytes"] != float64(len(zipped)) || res["files"] != nil {
		t.Fatalf("saved ZIP: %v (%v)", res, err)
	}
	zr, err := zip.NewReader(bytes.NewReader(zipped), int64(len(zipped)))
	if err != nil || len(zr.File) != 1 || !strings.HasSuffix(zr.File[0].Name, "/"+base(asset)) {
		t.Fatalf("saved ZIP entries: %v", err)
	}
	// An existing outputPath is not overwritten.
	if _, e := fr.call(t, exp); e == nil || e.Code != failure.DestinationExists {
		t.Fatalf("an export over an existing file: %v", e)
	}
	// Without outputPath nothing lands on the person's disk: no question.
	if _, pending, err := fr.r.ToConfirm(context.Background(), "file", tools.Input{Raw: mustJSON(t, map[string]any{"action": "export_resources", "paths": []string{asset}})}); pending || err != nil {
		t.Fatalf("an export without a destination needs confirmation: %v", err)
	}

	// Destinations the rule refuses: refused before the authority exports
	// anything, and no folder is created.
	other := t.TempDir()
	sent := len(fr.sent)
	for _, dst := range []string{filepath.Join(other, "out.zip"), filepath.Join(other, "new", "out.zip"), filepath.Join(dir, ".hidden", "out.zip"),
		"../" + filepath.Base(other) + "/x.zip", filepath.Join(s.K.Dir(), "data", "x.zip")} {
		for _, args := range []map[string]any{
			{"action": "export_resources", "paths": []string{asset}, "outputPath": dst},
			{"action": "extract_doc", "id": s.Doc, "outputDir": dst},
		} {
			if _, _, err := fr.r.ToConfirm(context.Background(), "file", tools.Input{Raw: mustJSON(t, args)}); codeOfErr(err) != failure.PathNotAllowed {
				t.Fatalf("%v: the confirmation of a refused destination: %v", args, err)
			}
			if _, e := fr.call(t, args); e == nil || e.Code != failure.PathNotAllowed || e.WriteAttempted == nil || *e.WriteAttempted {
				t.Fatalf("%v: %v", args, e)
			}
		}
	}
	if len(fr.sent) != sent {
		t.Fatalf("a refused destination reached the authority: %v", fr.sent[sent:])
	}
	if names, _ := os.ReadDir(other); len(names) != 0 {
		t.Fatalf("a refused destination wrote %v", names)
	}
	// The default destination, ~/siyuan-extracted/<id>, lies in no allowed
	// folder here.
	if _, e := fr.call(t, map[string]any{"action": "extract_doc", "id": s.Doc}); e == nil || e.Code != failure.PathNotAllowed {
		t.Fatalf("the default destination outside the allowed folders: %v", e)
	}

	// extract_doc: the Markdown and the assets in a new folder.
	target := filepath.Join(dir, "extract")
	ext := map[string]any{"action": "extract_doc", "id": s.Doc, "outputDir": target}
	if p := fr.toConfirm(t, ext); len(p.Local) != 1 || !strings.Contains(p.Local[0], "creates the folder "+target) {
		t.Fatalf("the confirmation of an extraction: %+v", p)
	}
	res = fr.ok(t, ext)
	if res["outputDir"] != target || res["files"] != nil || res["markdown"] != nil {
		t.Fatalf("extract: %v", res)
	}
	md, err := os.ReadFile(filepath.Join(target, "Doc.md"))
	if err != nil || !strings.Contains(string(md), "paragraph 0") || !strings.Contains(string(md), asset) {
		t.Fatalf("Doc.md: %q %v", md, err)
	}
	if got, err := os.ReadFile(filepath.Join(target, filepath.FromSlash(asset))); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("asset: %q %v", got, err)
	}
	if saved := res["saved"].([]any); len(saved) != 2 {
		t.Fatalf("saved: %v", saved)
	}
	// The folder exists now: refused.
	if _, e := fr.call(t, ext); e == nil || e.Code != failure.DestinationExists {
		t.Fatalf("an extract into an existing folder: %v", e)
	}
	// validateOnly goes to the authority and is refused there.
	_, e := fr.call(t, map[string]any{"action": "extract_doc", "id": s.Doc, "outputDir": filepath.Join(dir, "x"), "validateOnly": true})
	if e == nil || e.Code != failure.PreflightUnavailable {
		t.Fatalf("preflight at the front: %v", e)
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a refused extract created its folder")
	}
}

func TestFrontStagesUploads(t *testing.T) {
	s := newFixture(t)
	dir := t.TempDir()
	stager := &fakeStager{mem: s.mem(), guard: s.allowedGuard(t, dir), staged: map[string]string{}}
	fr := s.front(t, stager, dir)
	local := filepath.Join(dir, "note.png")
	data := []byte("staged at the front")
	if err := os.WriteFile(local, data, 0o644); err != nil {
		t.Fatal(err)
	}

	// Reading the file is confirmed, even as a preflight, with the file and
	// its size named.
	args := map[string]any{"action": "upload_asset", "file": "note.png"}
	p := fr.toConfirm(t, tooltest.CopyArgs(args, "validateOnly", true))
	want := fmt.Sprintf("reads the file %s (%d bytes)", local, len(data))
	if !p.Dangerous || len(p.Local) != 1 || !strings.Contains(p.Local[0], want) || !strings.Contains(p.Message(), want) {
		t.Fatalf("the confirmation of a read: %+v", p)
	}
	e := tools.Confirm(context.Background(), nil, p)
	var fe *failure.Error
	if !errors.As(e, &fe) || fe.Code != failure.ConfirmationRequired || !strings.Contains(fe.Message, want) || fmt.Sprint(fe.Details["local"]) != fmt.Sprint(p.Local) {
		t.Fatalf("confirmation_required for a client without forms: %v", e)
	}
	if _, fe := fr.unconfirmed(t, tooltest.CopyArgs(args, "validateOnly", true)); fe == nil || fe.Code != failure.ConfirmationRequired || stager.opened != 0 {
		t.Fatalf("an unconfirmed read: %v (%d opened)", fe, stager.opened)
	}

	// The front stages the person's file: the authority sees a handle, never
	// the local path.
	pre := fr.ok(t, tooltest.CopyArgs(args, "validateOnly", true))
	sent := fr.last()
	h, _ := sent["uploadSource"].(string)
	if h == "" || sent["localFilePath"] != nil || sent["file"] != nil || pre["uploadSource"] != h || pre["sha256"] != sum(data) {
		t.Fatalf("sent %v, preflight %v", sent, pre)
	}
	res := fr.ok(t, tooltest.CommitArgs(args, pre))
	if res["status"] != "committed" || res["uploadSource"] != h || fr.last()["confirm"] != true {
		t.Fatalf("commit: %v (sent %v)", res, fr.last())
	}
	if stored, ok := s.read(t, "/data/"+res["assetPath"].(string)); !ok || !bytes.Equal(stored, data) {
		t.Fatalf("stored %q", stored)
	}
	// A replay with the handle alone needs no local file.
	if err := os.Remove(local); err != nil {
		t.Fatal(err)
	}
	byHandle := tooltest.CommitArgs(map[string]any{"action": "upload_asset", "uploadSource": h}, pre)
	if p := fr.toConfirm(t, byHandle); !p.Dangerous || p.Local != nil {
		t.Fatalf("a commit by handle reads nothing here: %+v", p)
	}
	rep := fr.ok(t, byHandle)
	if rep["replayed"] != true || rep["assetPath"] != res["assetPath"] {
		t.Fatalf("replay: %v", rep)
	}

	// The same path under both names is one file; two paths are refused.
	os.WriteFile(local, data, 0o644)
	if pre := fr.ok(t, map[string]any{"action": "upload_asset", "localFilePath": local, "file": local, "validateOnly": true}); pre["fileName"] != "note.png" {
		t.Fatalf("both names: %v", pre)
	}
	if _, fe := fr.call(t, map[string]any{"action": "upload_asset", "localFilePath": local, "file": local + "x", "validateOnly": true}); fe == nil || fe.Code != failure.InvalidArguments {
		t.Fatalf("two paths: %v", fe)
	}

	// Files the rule refuses: nothing is read or sent.
	outside := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(outside, []byte("secret"), 0o600)
	os.Symlink(outside, filepath.Join(dir, "link-out"))
	os.Symlink(filepath.Join(s.K.Dir(), "conf", "conf.json"), filepath.Join(dir, "link-conf"))
	os.WriteFile(filepath.Join(dir, ".env"), []byte("TOKEN=x"), 0o600)
	opened, sentBefore := stager.opened, len(fr.sent)
	for _, bad := range []string{outside, "link-out", "link-conf", ".env", "../" + filepath.Base(filepath.Dir(outside)) + "/secret.txt",
		filepath.Join(s.K.Dir(), "conf", "conf.json"), "/proc/self/cmdline", "/etc/passwd"} {
		for _, key := range []string{"localFilePath", "file"} {
			args := map[string]any{"action": "upload_asset", key: bad, "validateOnly": true}
			if _, _, err := fr.r.ToConfirm(context.Background(), "file", tools.Input{Raw: mustJSON(t, args)}); codeOfErr(err) != failure.PathNotAllowed {
				t.Fatalf("%s: the confirmation of a refused file: %v", bad, err)
			}
			if _, fe := fr.call(t, args); fe == nil || fe.Code != failure.PathNotAllowed || fe.WriteAttempted == nil || *fe.WriteAttempted {
				t.Fatalf("%s: %v", bad, fe)
			}
		}
	}
	if stager.opened != opened || len(fr.sent) != sentBefore {
		t.Fatalf("a refused file was read (%d) or sent (%v)", stager.opened-opened, fr.sent[sentBefore:])
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func codeOfErr(err error) failure.Code {
	var fe *failure.Error
	if errors.As(err, &fe) {
		return fe.Code
	}
	return ""
}
