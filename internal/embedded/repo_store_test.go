package embedded

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// TestHumanSize: sizes as SiYuan 3.7.3 showed them for these byte counts.
func TestHumanSize(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{
		{0, "0 B"}, {9, "9 B"}, {28, "28 B"}, {541, "541 B"}, {1000, "1 kB"},
		{14015206, "14.02 MB"}, {14493233, "14.5 MB"}, {1001, "1.01 kB"}, {999999, "1000 kB"},
	} {
		if got := humanSize(tc.n); got != tc.want {
			t.Errorf("humanSize(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

// TestTypesCount: most first, ties in the order met, past ten types an
// "Other" of 0 (SiYuan never adds the rest up).
func TestTypesCount(t *testing.T) {
	files := []repoFile{{Path: "/a.sy"}, {Path: "/b.json"}, {Path: "/c.sy"}, {Path: "/d"}, {Path: "/e."}}
	got := typesCount(files)
	if len(got) != 3 || got[0].Type != ".sy" || got[0].Count != 2 || got[1].Type != "NoExt" || got[1].Count != 2 || got[2].Type != ".json" {
		t.Fatalf("typesCount = %+v", got)
	}
	var many []repoFile
	for _, ext := range []string{".a", ".b", ".c", ".d", ".e", ".f", ".g", ".h", ".i", ".j", ".k", ".l"} {
		many = append(many, repoFile{Path: "/x" + ext})
	}
	got = typesCount(many)
	if len(got) != 11 || got[10].Type != "Other" || got[10].Count != 0 {
		t.Fatalf("typesCount of twelve types = %+v", got)
	}
}

// TestCleanTagName: SiYuan's tag name rules, and never a path.
func TestCleanTagName(t *testing.T) {
	for _, tc := range []struct {
		in, want, refusal string
	}{
		{"t1", "t1", ""},
		{"  t 1 \u200b", "t 1", ""},
		{"", "", inputEmpty},
		{" \u200b ", "", inputEmpty},
		{"a/b", "", "Do not include symbols \\ / : * ? &quot; &#039; &lt; &gt; |"},
		{`a\b`, "", "Do not include symbols \\ / : * ? &quot; &#039; &lt; &gt; |"},
		{"..", "", "invalid tag name"},
		{".", "", "invalid tag name"},
	} {
		got, refusal := cleanTagName(tc.in)
		if got != tc.want || refusal != tc.refusal {
			t.Errorf("cleanTagName(%q) = %q, %q; want %q, %q", tc.in, got, refusal, tc.want, tc.refusal)
		}
	}
}

// FuzzTagPath: whatever name an agent sends, a tag is one file directly
// in refs/tags, or none.
func FuzzTagPath(f *testing.F) {
	for _, s := range []string{"t", "..", ".", "a/b", "../latest", `..\x`, "a\x00b", ""} {
		f.Add(s)
	}
	k := &Kernel{dir: "/ws"}
	tags := filepath.Join(k.repoDir(), "refs", "tags")
	f.Fuzz(func(t *testing.T, name string) {
		if clean, refusal := cleanTagName(name); refusal == "" {
			if _, ok := k.tagPath(clean); !ok {
				t.Fatalf("a clean tag name %q has no path", clean)
			}
		}
		p, ok := k.tagPath(name)
		if ok && filepath.Dir(p) != tags {
			t.Fatalf("tag %q is at %s, outside %s", name, p, tags)
		}
	})
}

// TestWalkData: a snapshot takes the files SiYuan's repository takes.
func TestWalkData(t *testing.T) {
	k := &Kernel{dataDir: t.TempDir()}
	for _, p := range []string{
		"box/doc.sy", "box/.siyuan/conf.json", "box/.siyuan/sort.json", ".siyuan/syncignore", "assets/a.png",
		"storage/av/x.json", "storage/recent-doc.json", "storage/local.json", "storage/ref-used.json",
		".siyuan/conf.json", "box/.hidden", "box/x.tmp", ".git/config", "filesys_status_check/x",
		"20210808180117-6v0mkxr/guide.sy", "templates/t.md",
	} {
		abs := filepath.Join(k.dataDir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(abs, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(k.dataDir, "box/doc.sy"), filepath.Join(k.dataDir, "box/link.sy")); err != nil {
		t.Fatal(err)
	}
	walked, err := k.walkData()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range walked {
		got = append(got, w.path)
	}
	want := []string{"/.siyuan/syncignore", "/assets/a.png", "/box/.siyuan/conf.json", "/box/.siyuan/sort.json", "/box/doc.sy", "/storage/av/x.json", "/templates/t.md"}
	if !slices.Equal(got, want) {
		t.Fatalf("walked\n got %v\nwant %v", got, want)
	}
}

// TestRepoRollbackClosedNotebook: a document whose notebook is closed is
// not rolled back (SiYuan would restore it into a "Rollback" notebook with
// new ids); nothing is written.
func TestRepoRollbackClosedNotebook(t *testing.T) {
	e := openEnv(t, t.TempDir())
	ctx := context.Background()
	if _, err := e.c.InitRepoKey(ctx); err != nil {
		t.Fatal(err)
	}
	nb, err := e.c.CreateNotebook(ctx, "closing")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := e.c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: nb.ID, Path: "/d", Markdown: "text"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.c.CreateSnapshot(ctx, "with the doc"); err != nil {
		t.Fatal(err)
	}
	p, err := e.c.RepoSnapshots(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	e.k.repo.mu.RLock()
	files, err := e.k.readIndexFiles(p.Snapshots[0].ID)
	e.k.repo.mu.RUnlock()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(files, func(f repoFile) bool { return strings.HasSuffix(f.Path, "/"+doc+".sy") })
	if i < 0 {
		t.Fatalf("the snapshot lacks the document: %+v", files)
	}
	if err := e.c.CloseNotebook(ctx, nb.ID); err != nil {
		t.Fatal(err)
	}
	err = e.c.RollbackRepoSnapshotFile(ctx, files[i].ID)
	var api *siyuan.APIError
	if !errors.As(err, &api) || !strings.Contains(api.Msg, "is not open") {
		t.Fatalf("rollback into a closed notebook: %v", err)
	}
}

// TestRepoSnapshotUnchangedAndIDs: data unchanged makes no snapshot; a
// file's id is its path and modification second (dejavu's), so the same
// version keeps its id across snapshots.
func TestRepoSnapshotUnchangedAndIDs(t *testing.T) {
	e := openEnv(t, t.TempDir())
	ctx := context.Background()
	if _, err := e.c.RepoSnapshots(ctx, 1); !errors.Is(err, siyuan.ErrRepoKeyMissing) {
		t.Fatalf("RepoSnapshots before a key: %v", err)
	}
	if _, err := e.c.InitRepoKey(ctx); err != nil {
		t.Fatal(err)
	}
	p, err := e.c.RepoSnapshots(ctx, 1)
	if err != nil || len(p.Snapshots) != 1 || p.Snapshots[0].Memo != "[Init] Init local data repo" {
		t.Fatalf("after InitRepoKey: %+v %v", p, err)
	}
	if err := e.c.CreateSnapshot(ctx, "again"); err != nil {
		t.Fatal(err)
	}
	if q, _ := e.c.RepoSnapshots(ctx, 1); q.TotalCount != 1 {
		t.Fatalf("a snapshot of unchanged data was made: %+v", q)
	}
	if got, want := repoFileID("/box/doc.sy", 1796533202856), repoFileID("/box/doc.sy", 1796533202001); got != want {
		t.Fatalf("one second, two ids: %s %s", got, want)
	}
	// A new key replaces the repository.
	if _, err := e.c.InitRepoKey(ctx); err != nil {
		t.Fatal(err)
	}
	if q, _ := e.c.RepoSnapshots(ctx, 1); q.TotalCount != 1 {
		t.Fatalf("after a second InitRepoKey: %+v", q)
	}
}

// FuzzRepoEndpoints: whatever an agent sends the repository endpoints,
// the answer is one envelope, and no file outside the workspace is made.
func FuzzRepoEndpoints(f *testing.F) {
	dir := f.TempDir()
	ws := filepath.Join(dir, "ws")
	k, err := Open(context.Background(), Options{Dir: ws, Token: "tok", SQLFlushInterval: time.Hour})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { k.Close() })
	h := k.Handler()
	post := func(p, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", p, strings.NewReader(body))
		req.Header.Set("Authorization", "Token tok")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	post("/api/repo/initRepoKey", "{}")
	var paths []string
	for p := range k.repoRoutes() {
		if p != "/api/repo/initRepoKey" {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	for _, s := range []string{`{}`, `{"memo":"m"}`, `{"id":"../../x","name":"t"}`, `{"tag":"../latest"}`, `{"tag":".."}`,
		`{"left":"../../conf/conf","right":"x"}`, `{"id":"0000000000000000000000000000000000000000"}`, `{"page":-1}`, `{"page":1e300}`} {
		for i := range paths {
			f.Add(uint8(i), s)
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, body string) {
		rec := post(paths[int(which)%len(paths)], body)
		var env map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil {
			t.Fatalf("reply is not one JSON envelope: %q", rec.Body.String())
		}
		if _, ok := env["code"]; !ok {
			t.Fatalf("reply has no code: %s", rec.Body.String())
		}
		entries, err := os.ReadDir(dir)
		if err != nil || len(entries) != 1 {
			t.Fatalf("something was made beside the workspace: %v %v", entries, err)
		}
		if _, err := os.Stat(filepath.Join(ws, "repo", "refs", "latest")); err != nil {
			t.Fatalf("the newest snapshot's ref is gone: %v", err)
		}
	})
}
