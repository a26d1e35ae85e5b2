package main

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/testvars"
)

func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	rand.Read(b)
	return b
}

func hexSHA(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// kernelFile reads a workspace file straight from the kernel.
func kernelFile(t *testing.T, c *siyuan.Client, p string) ([]byte, error) {
	t.Helper()
	body, _, err := c.GetFile(context.Background(), p)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	return io.ReadAll(body)
}

func kernelClient(t *testing.T, url, token string) *siyuan.Client {
	t.Helper()
	c, err := siyuan.New(siyuan.Config{BaseURL: url, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func fileSHA(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return hexSHA(b)
}

// dirNames lists a directory's entries.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// TestFileToolThroughTheBinary walks every action of the file tool (and
// search.search_assets) through the binary: the person's local file staged
// by the stdio front and by sisyphus call, uploads committed and replayed
// without the local file, templates, renders, exports saved on the
// person's disk, and the asset actions, each checked against the kernel.
func TestFileToolThroughTheBinary(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	kernel := []string{"--siyuan-url", k.url, "--siyuan-token", "tok"}
	state := t.TempDir()
	s := startServeWith(t, append(kernel, "--state-dir", state, "--max-template-size", "64KiB")...)
	front := append(kernel, "--state-dir", state, "--token", "sekret", "--max-template-size", "64KiB")
	a := connect(t, s.url, "2025-11-25")
	doc, _ := firstParagraph(a)
	work := t.TempDir()
	front = append(front, "--allow-dir", work)
	fileFlow(t, fileEnv{s: s, a: a, st: stdioAgent(t, front...), c: kernelClient(t, k.url, "tok"), front: front, work: work, doc: doc, title: "Welcome"})
}

// TestFileToolLive runs the same walk against a real SiYuan when
// SISYPHUS_LIVE_SIYUAN_URL and SISYPHUS_LIVE_SIYUAN_TOKEN are set, in a
// notebook it creates and removes (its templates and assets too; it
// expects a workspace without other unused assets, like a fresh one).
func TestFileToolLive(t *testing.T) {
	url, tok := testvars.Live(t)
	kernel := []string{"--siyuan-url", url, "--siyuan-token", tok}
	state := t.TempDir()
	s := startServeWith(t, append(kernel, "--state-dir", state, "--max-template-size", "64KiB")...)
	front := append(kernel, "--state-dir", state, "--token", "sekret", "--max-template-size", "64KiB")
	a := connect(t, s.url, "2025-11-25")
	name := fmt.Sprintf("sisyphus-live-files-%d", time.Now().UnixNano())
	nb := a.strictDo("notebook", map[string]any{"action": "create", "name": name})["notebook"].(string)
	s.config(t, "permission", nb, "rwd")
	s.config(t, "enable", "notebook.remove")
	defer a.strictDo("notebook", map[string]any{"action": "remove", "notebook": nb, "confirm": true})
	doc := a.strictDo("document", map[string]any{"action": "create", "notebook": nb, "path": "/Welcome", "markdown": "Sisyphus live files\n\nsecond"})["id"].(string)
	work := t.TempDir()
	front = append(front, "--allow-dir", work)
	fileFlow(t, fileEnv{s: s, a: a, st: stdioAgent(t, front...), c: kernelClient(t, url, tok), front: front, work: work, doc: doc, title: "Welcome"})
}

// fileEnv is what fileFlow runs on: an authority, an HTTP agent, a stdio
// agent and sisyphus call flags (fronts) allowing agents the folder work,
// the kernel, and a document whose text holds "Sisyphus".
type fileEnv struct {
	s          *serveProc
	a, st      *agent
	c          *siyuan.Client
	front      []string
	work       string
	doc, title string
}

func fileFlow(t *testing.T, e fileEnv) {
	s, a, st, c, front, doc, work := e.s, e.a, e.st, e.c, e.front, e.doc, e.work
	stamp := fmt.Sprint(time.Now().UnixNano())

	// upload_asset: the stdio front stages the local file, from the folder
	// the person allowed, once the read is confirmed (this client has no
	// forms: the agent's confirm); the commit goes through another process
	// with only the handle, after the local file is gone.
	pic := randomBytes(t, 200<<10)
	local := filepath.Join(work, "diagram"+stamp+".png")
	os.WriteFile(local, pic, 0o644)
	up := map[string]any{"action": "upload_asset", "localFilePath": local}
	if m := st.fails("file", with(up, "validateOnly", true), "confirmation_required"); !strings.Contains(fmt.Sprint(m["error"]), local+" (204800 bytes)") {
		t.Fatalf("the confirmation must name the file and its size: %v", m)
	}
	pre := st.ok("file", with(with(up, "validateOnly", true), "confirm", true))
	handle, _ := pre["uploadSource"].(string)
	if !strings.HasPrefix(handle, "staged:") || pre["sha256"] != hexSHA(pic) || pre["size"] != float64(len(pic)) || pre["expectedSourceHash"] == nil {
		t.Fatalf("upload preflight: %v", pre)
	}
	os.Remove(local)
	commit := commitOf(map[string]any{"action": "upload_asset", "uploadSource": handle}, pre)
	res := a.ok("file", with(commit, "confirm", true))
	asset, _ := res["assetPath"].(string)
	if res["status"] != "committed" || res["writeSafetyGuaranteed"] != true || !strings.HasPrefix(asset, "assets/diagram"+stamp+"-") {
		t.Fatalf("upload commit: %v", res)
	}
	if got, err := kernelFile(t, c, "/data/"+asset); err != nil || hexSHA(got) != hexSHA(pic) {
		t.Fatalf("the stored asset differs from the local file: %v", err)
	}
	if rep, code := cli(t, "file", commit, append(front, "--yes")...); code != 0 || rep["replayed"] != true || rep["assetPath"] != asset {
		t.Fatalf("replay through sisyphus call without the local file: %d %v", code, rep)
	}
	// The same bytes staged again by call reuse the snapshot (lookup).
	os.WriteFile(local, pic, 0o644)
	again, _ := cli(t, "file", with(up, "validateOnly", true), append(front, "--yes")...)
	if again["uploadSource"] != handle {
		t.Fatalf("the same name and content must reuse the handle: %v", again)
	}
	// Changed content is another source: the old preflight does not
	// cover it, nothing is uploaded, and a new preflight does.
	os.WriteFile(local, append(pic, 'x'), 0o644)
	if m, _ := cli(t, "file", commitOf(up, again), append(front, "--yes")...); errCodeOf(m) != "idempotency_conflict" || m["writeAttempted"] != false {
		t.Fatalf("a commit after the file changed: %v", m)
	}
	if fresh, _ := cli(t, "file", with(up, "validateOnly", true), append(front, "--yes")...); fresh["uploadSource"] == handle || fresh["sha256"] != hexSHA(append(pic, 'x')) {
		t.Fatalf("a preflight of the changed file: %v", fresh)
	}
	// A direct HTTP client's path is never opened by the authority.
	a.fails("file", map[string]any{"action": "upload_asset", "localFilePath": "diagram.png", "validateOnly": true}, "local_path_refused")
	a.fails("file", map[string]any{"action": "upload_asset", "localFilePath": local, "confirm": true}, "local_path_refused")

	// sisyphus call uploads end to end: preflight and commit, each
	// confirmed by the person (--yes), the asset read back.
	scan := randomBytes(t, 64<<10)
	scanPath := filepath.Join(work, "scan"+stamp+".pdf")
	os.WriteFile(scanPath, scan, 0o644)
	scanUp := map[string]any{"action": "upload_asset", "localFilePath": scanPath}
	if m, _ := cli(t, "file", with(scanUp, "validateOnly", true), front...); errCodeOf(m) != "confirmation_required" || m["writeAttempted"] != false {
		t.Fatalf("a read without the person's --yes: %v", m)
	}
	spre, code := cli(t, "file", with(scanUp, "validateOnly", true), append(front, "--yes")...)
	if code != 0 || spre["sha256"] != hexSHA(scan) {
		t.Fatalf("a preflight through call: %d %v", code, spre)
	}
	bres, code := cli(t, "file", commitOf(scanUp, spre), append(front, "--yes")...)
	if code != 0 || bres["status"] != "committed" {
		t.Fatalf("a confirmed upload through call: %d %v", code, bres)
	}
	if got, err := kernelFile(t, c, "/data/"+bres["assetPath"].(string)); err != nil || hexSHA(got) != hexSHA(scan) {
		t.Fatalf("the stored asset differs: %v", err)
	}

	// Above the staging cap: refused at the front, naming the cap; nothing
	// uploads around it.
	big := randomBytes(t, 10<<20+1)
	bigPath := filepath.Join(work, "big"+stamp+".pdf")
	os.WriteFile(bigPath, big, 0o644)
	bigUp := map[string]any{"action": "upload_asset", "localFilePath": bigPath, "confirmLargeFile": true}
	if m, _ := cli(t, "file", with(bigUp, "validateOnly", true), append(front, "--yes")...); errCodeOf(m) != "file_too_large" ||
		m["writeAttempted"] != false || !strings.Contains(fmt.Sprint(m["error"]), "10485760 bytes a file") {
		t.Fatalf("a file above the staging cap: %v", m)
	}

	// Templates.
	tpl := map[string]any{"action": "create_template", "path": "e2e" + stamp + "/daily.md", "content": "# .action{.title} daily\n"}
	a.strictDo("file", tpl)
	a.fails("file", with(tpl, "validateOnly", true), "invalid_arguments") // exists
	if r := a.ok("file", map[string]any{"action": "read_template", "path": "/templates/e2e" + stamp + "/daily.md"}); r["content"] != tpl["content"] {
		t.Fatalf("read_template: %v", r)
	}
	if l := a.ok("file", map[string]any{"action": "list_templates", "keyword": "e2e" + stamp + " daily"}); l["count"] != float64(1) {
		t.Fatalf("list_templates: %v", l)
	}
	a.strictDo("file", map[string]any{"action": "update_template", "path": "e2e" + stamp + "/daily.md", "content": "## .action{.title} notes\n"})
	r := a.ok("file", map[string]any{"action": "render", "engine": "template", "id": doc, "path": "e2e" + stamp + "/daily.md"})
	if !strings.Contains(r["content"].(string), e.title+" notes") {
		t.Fatalf("render template: %v", r)
	}
	if r := a.ok("file", map[string]any{"action": "render", "engine": "sprig", "template": "{{ add 1 2 }}"}); r["content"] != "3" {
		t.Fatalf("render sprig: %v", r)
	}
	a.fails("file", map[string]any{"action": "render", "engine": "sprig", "template": `{{ querySQL "DELETE FROM blocks" }}`}, "invalid_arguments")
	over := map[string]any{"action": "create_template", "path": "big" + stamp + ".md", "content": strings.Repeat("x", 64<<10+1), "validateOnly": true}
	if e := a.fails("file", over, "invalid_arguments"); !strings.Contains(fmt.Sprint(e["error"]), "65536") {
		t.Fatalf("over-budget template: %v", e)
	}
	if _, err := kernelFile(t, c, "/data/templates/big"+stamp+".md"); err == nil {
		t.Fatal("an over-budget template was written")
	}
	a.strictDo("file", map[string]any{"action": "save_doc_as_template", "id": doc, "name": "e2e-saved-" + stamp})
	if b, err := kernelFile(t, c, "/data/templates/e2e-saved-"+stamp+".md"); err != nil || !bytes.Contains(b, []byte("Sisyphus")) {
		t.Fatalf("save_doc_as_template: %v %q", err, b)
	}
	a.fails("file", map[string]any{"action": "save_doc_as_template", "id": doc, "name": "a/b", "validateOnly": true}, "invalid_arguments")
	s.config(t, "enable", "file.delete_template")
	a.strictDo("file", map[string]any{"action": "delete_template", "path": "e2e" + stamp + "/daily.md", "confirm": true})
	if _, err := kernelFile(t, c, "/data/templates/e2e"+stamp+"/daily.md"); err == nil {
		t.Fatal("delete_template left the template")
	}

	// Exports.
	if md := a.ok("file", map[string]any{"action": "export_md", "id": doc}); !strings.Contains(md["content"].(string), e.title) {
		t.Fatalf("export_md: %v", md)
	}
	a.strictDo("block", map[string]any{"action": "append", "parentID": doc, "data": "![diagram](" + asset + ")"})
	da := a.ok("file", map[string]any{"action": "get_doc_assets", "id": doc})
	if !strings.Contains(fmt.Sprint(da["assets"]), asset) {
		t.Fatalf("get_doc_assets: %v", da)
	}
	outDir := filepath.Join(work, "out")
	os.MkdirAll(outDir, 0o755)
	os.WriteFile(filepath.Join(outDir, "keep.txt"), []byte("mine"), 0o644)
	zipPath := filepath.Join(outDir, "diagrams.zip")
	exp := map[string]any{"action": "export_resources", "paths": []string{asset}, "name": "diagrams", "outputPath": zipPath}
	if m := st.fails("file", exp, "confirmation_required"); !strings.Contains(fmt.Sprint(m["error"]), "creates the file "+zipPath) {
		t.Fatalf("the confirmation must name the destination: %v", m)
	}
	z := st.ok("file", with(exp, "confirm", true))
	if z["writeSafetyGuaranteed"] != false || z["sha256"] != fileSHA(t, zipPath) {
		t.Fatalf("export_resources: %v", z)
	}
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	var inZip []string
	for _, f := range zr.File {
		inZip = append(inZip, f.Name)
	}
	zr.Close()
	if !strings.Contains(strings.Join(inZip, " "), filepath.Base(asset)) {
		t.Fatalf("the ZIP holds %v", inZip)
	}
	before := fileSHA(t, zipPath)
	st.fails("file", with(exp, "confirm", true), "destination_exists")
	if fileSHA(t, zipPath) != before || fileSHA(t, filepath.Join(outDir, "keep.txt")) != hexSHA([]byte("mine")) {
		t.Fatal("a refused export touched existing files")
	}
	a.fails("file", with(exp, "validateOnly", true), "preflight_unavailable")

	extractDir := filepath.Join(outDir, "welcome")
	ex, code := cli(t, "file", map[string]any{"action": "extract_doc", "id": doc, "outputDir": extractDir}, append(front, "--yes")...)
	if code != 0 || ex["writeSafetyGuaranteed"] != false {
		t.Fatalf("extract_doc: %d %v", code, ex)
	}
	if got := fileSHA(t, filepath.Join(extractDir, filepath.FromSlash(asset))); got != hexSHA(pic) {
		t.Fatal("the extracted asset differs")
	}
	mdFiles, _ := filepath.Glob(filepath.Join(extractDir, "*.md"))
	if len(mdFiles) != 1 {
		t.Fatalf("extracted %v", dirNames(t, extractDir))
	}
	if m, _ := cli(t, "file", map[string]any{"action": "extract_doc", "id": doc, "outputDir": extractDir}, append(front, "--yes")...); errCodeOf(m) != "destination_exists" {
		t.Fatalf("extract over an existing directory: %v", m)
	}
	if names := dirNames(t, outDir); strings.Join(names, ",") != "diagrams.zip,keep.txt,welcome" {
		t.Fatalf("the output directory holds %v", names)
	}

	// Assets.
	if sa := a.ok("search", map[string]any{"action": "search_assets", "keyword": "diagram" + stamp}); sa["count"] != float64(1) {
		t.Fatalf("search_assets: %v", sa)
	}
	a.ok("file", map[string]any{"action": "get_image_ocr_text", "path": asset})
	ren := a.strictDo("file", map[string]any{"action": "rename_asset", "oldPath": asset, "newName": "renamed" + stamp})
	newPath, _ := ren["newPath"].(string)
	if newPath == "" {
		newPath, _ = ren["path"].(string)
	}
	if !strings.Contains(newPath, "renamed"+stamp) {
		t.Fatalf("rename_asset: %v", ren)
	}
	if _, err := kernelFile(t, c, "/data/"+asset); err == nil {
		t.Fatal("the renamed asset is still under its old name")
	}
	if da := a.ok("file", map[string]any{"action": "get_doc_assets", "id": doc}); !strings.Contains(fmt.Sprint(da["assets"]), newPath) {
		t.Fatalf("the document's links did not follow the rename: %v", da)
	}
	unused := a.ok("file", map[string]any{"action": "list_unused_assets"})
	if !strings.Contains(fmt.Sprint(unused["assets"]), "scan"+stamp) {
		t.Fatalf("list_unused_assets: %v", unused)
	}
	s.config(t, "enable", "file.remove_unused_assets")
	a.strictDo("file", map[string]any{"action": "remove_unused_assets", "confirm": true})
	if _, err := kernelFile(t, c, "/data/"+bres["assetPath"].(string)); err == nil {
		t.Fatal("remove_unused_assets left the unused asset")
	}
	s.config(t, "enable", "file.delete_asset")
	a.strictDo("file", map[string]any{"action": "delete_asset", "path": newPath, "confirm": true})
	if _, err := kernelFile(t, c, "/data/"+newPath); err == nil {
		t.Fatal("delete_asset left the asset")
	}
}

// stager talks to an authority's staging routes as a client would.
type stagerClient struct {
	t    *testing.T
	base string // the authority's base URL, without /mcp
}

func (s stagerClient) do(path, ctype string, body io.Reader, header map[string]string) (int, map[string]any) {
	s.t.Helper()
	req, _ := http.NewRequest("POST", s.base+path, body)
	req.Header.Set("Authorization", "Bearer sekret")
	req.Header.Set("Content-Type", ctype)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

func (s stagerClient) raw(name string, data []byte) (int, map[string]any) {
	return s.do("/transfer/upload", "application/octet-stream", bytes.NewReader(data), map[string]string{"X-Sisyphus-File-Name": pathEscape(name)})
}

func (s stagerClient) lookup(name, sum string, size int) (int, map[string]any) {
	b, _ := json.Marshal(map[string]any{"fileName": name, "sha256": sum, "size": size})
	return s.do("/transfer/lookup", "application/json", bytes.NewReader(b), nil)
}

func pathEscape(s string) string { return strings.ReplaceAll(s, " ", "%20") }

func stagingOf(t *testing.T, base string) map[string]any {
	t.Helper()
	st, _ := health(t, base)["staging"].(map[string]any)
	if st == nil {
		t.Fatal("/health shows no staging")
	}
	return st
}

// TestUploadStagingThroughTheBinary holds the authority's staging to its
// limits: two at once (429 for the third), 10 MiB a file, 32 MiB and 64
// files in all, expiry, lookup only of what it hashed, a restart that
// forgets, and the plugin prefix.
func TestUploadStagingThroughTheBinary(t *testing.T) {
	t.Parallel()
	state, ws := t.TempDir(), t.TempDir()
	const ttl = 3 * time.Second
	s := startServeWith(t, "--embedded", ws, "--state-dir", state, "--staging-ttl", ttl.String())
	base := strings.TrimSuffix(s.url, "/mcp")
	sc := stagerClient{t, base}
	a := connect(t, s.url, "2026-07-28")

	data := randomBytes(t, 4<<10)
	code, m := sc.raw("my photo.png", data)
	h, _ := m["uploadSource"].(string)
	if code != 200 || m["fileName"] != "my photo.png" || m["sha256"] != hexSHA(data) || !strings.HasPrefix(h, "staged:") {
		t.Fatalf("raw staging: %d %v", code, m)
	}
	if code, m := sc.raw("my photo.png", data); code != 200 || m["uploadSource"] != h || m["reused"] != true {
		t.Fatalf("the same name and content: %d %v", code, m)
	}
	if _, m := sc.raw("other.png", data); m["uploadSource"] == h {
		t.Fatal("another name got the same handle")
	}
	jb, _ := json.Marshal(map[string]any{"fileName": "j.bin", "dataBase64": base64.StdEncoding.EncodeToString(data)})
	if code, m := sc.do("/transfer/upload", "application/json", bytes.NewReader(jb), nil); code != 200 || m["sha256"] != hexSHA(data) {
		t.Fatalf("JSON staging: %d %v", code, m)
	}
	if code, m := sc.do("/plugin/private/siyuan-plugins-mcp-sisyphus/transfer/upload", "application/octet-stream", bytes.NewReader(data),
		map[string]string{"X-Sisyphus-File-Name": "p.bin"}); code != 200 {
		t.Fatalf("under the plugin prefix: %d %v", code, m)
	}
	req, _ := http.NewRequest("POST", base+"/transfer/upload", bytes.NewReader(data))
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set("X-Sisyphus-File-Name", "x.bin")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 401 {
		t.Fatalf("staging without the token: %v %v", resp, err)
	}

	// Lookup finds only what the authority hashed; a claimed digest never
	// makes a source.
	if code, m := sc.lookup("my photo.png", hexSHA(data), len(data)); code != 200 || m["found"] != true || m["uploadSource"] != h {
		t.Fatalf("lookup of a staged file: %d %v", code, m)
	}
	claimed := hexSHA([]byte("never sent"))
	if _, m := sc.lookup("claimed.png", claimed, 10); m["found"] != false || m["uploadSource"] != nil {
		t.Fatalf("lookup of a claimed digest: %v", m)
	}
	a.fails("file", map[string]any{"action": "upload_asset", "uploadSource": "staged:" + strings.Repeat("A", 26), "validateOnly": true}, "upload_source_unknown")

	// 10 MiB a file.
	entries := stagingOf(t, base)["entries"]
	if code, m := sc.raw("big.bin", make([]byte, 10<<20+1)); code != 413 || errCodeOf(m) != "file_too_large" {
		t.Fatalf("a file above 10 MiB: %d %v", code, m)
	}
	if got := stagingOf(t, base)["entries"]; got != entries {
		t.Fatalf("a refused file changed the store: %v → %v", entries, got)
	}

	// Two stagings at once; the third answers 429.
	var pws []*io.PipeWriter
	done := make(chan int, 2)
	for i := range 2 {
		pr, pw := io.Pipe()
		pws = append(pws, pw)
		go func() {
			req, _ := http.NewRequest("POST", base+"/transfer/upload", pr)
			req.ContentLength = 2 << 10
			req.Header.Set("Authorization", "Bearer sekret")
			req.Header.Set("Content-Type", "application/octet-stream")
			req.Header.Set("X-Sisyphus-File-Name", fmt.Sprintf("slow%d.bin", i))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				done <- 0
				return
			}
			resp.Body.Close()
			done <- resp.StatusCode
		}()
		pw.Write(randomBytes(t, 1<<10))
	}
	waitFor(t, "two stagings in progress", func() bool { return stagingOf(t, base)["active"] == float64(2) })
	if code, m := sc.raw("third.bin", data); code != 429 || errCodeOf(m) != "staging_busy" {
		t.Fatalf("the third staging at once: %d %v", code, m)
	}
	for _, pw := range pws {
		pw.Write(randomBytes(t, 1<<10))
		pw.Close()
	}
	for range 2 {
		if code := <-done; code != 200 {
			t.Fatalf("a slow staging ended %d", code)
		}
	}

	// Expiry: after the TTL a handle is refused as expired, and the next
	// staging removes the expired entries.
	time.Sleep(ttl + 500*time.Millisecond)
	a.fails("file", map[string]any{"action": "upload_asset", "uploadSource": h, "validateOnly": true}, "upload_source_expired")
	sc.raw("fresh.bin", data)
	if n := stagingOf(t, base)["entries"]; n != float64(1) {
		t.Fatalf("entries after expiry: %v", n)
	}

	// 32 MiB in all.
	time.Sleep(ttl + 500*time.Millisecond)
	for i := range 3 {
		if code, m := sc.raw(fmt.Sprintf("nine%d.bin", i), randomBytes(t, 9<<20)); code != 200 {
			t.Fatalf("9 MiB file %d: %d %v", i, code, m)
		}
	}
	if code, m := sc.raw("nine3.bin", randomBytes(t, 9<<20)); code != 507 || errCodeOf(m) != "staging_full" {
		t.Fatalf("past 32 MiB in all: %d %v", code, m)
	}

	// 64 files in all.
	time.Sleep(ttl + 500*time.Millisecond)
	for i := range 64 {
		if code, m := sc.raw(fmt.Sprintf("n%d.txt", i), []byte(fmt.Sprint(i))); code != 200 {
			t.Fatalf("small file %d: %d %v", i, code, m)
		}
	}
	if code, m := sc.raw("n64.txt", []byte("64")); code != 507 || errCodeOf(m) != "staging_full" {
		t.Fatalf("the 65th file: %d %v", code, m)
	}

	// A restart forgets every staged file; the ledger still replays a
	// committed upload without it.
	time.Sleep(ttl + 500*time.Millisecond)
	_, m = sc.raw("kept.png", data)
	h2 := m["uploadSource"].(string)
	up := map[string]any{"action": "upload_asset", "uploadSource": h2}
	pre := a.ok("file", with(up, "validateOnly", true))
	res := a.ok("file", with(commitOf(up, pre), "confirm", true))
	stopServe(t, s)
	s = startServeWith(t, "--embedded", ws, "--state-dir", state)
	a = connect(t, s.url, "2026-07-28")
	if n := stagingOf(t, strings.TrimSuffix(s.url, "/mcp"))["entries"]; n != float64(0) {
		t.Fatalf("entries after a restart: %v", n)
	}
	a.fails("file", map[string]any{"action": "upload_asset", "uploadSource": h2, "validateOnly": true}, "upload_source_unknown")
	if rep := a.ok("file", with(commitOf(up, pre), "confirm", true)); rep["replayed"] != true || rep["assetPath"] != res["assetPath"] {
		t.Fatalf("replay after a restart: %v", rep)
	}
}

// throttle is a kernel proxy whose getFile answers for exports trickle
// (after the first 256 KiB), or, with zeros set, are that many zero bytes
// (-1: endless): a front's download meets a slow or a huge export.
type throttle struct {
	kernel string
	zeros  atomic.Int64
	sent   atomic.Int64
}

func (p *throttle) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	out, _ := http.NewRequestWithContext(r.Context(), r.Method, p.kernel+r.URL.RequestURI(), bytes.NewReader(body))
	out.Header = r.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	// Only exports are slowed or replaced: the configuration and the
	// readbacks are read as they are.
	getFile := r.URL.Path == "/api/file/getFile" && bytes.Contains(body, []byte("temp/export/"))
	for k, v := range resp.Header {
		if getFile && k == "Content-Length" {
			continue
		}
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	if !getFile {
		io.Copy(w, resp.Body)
		return
	}
	buf := make([]byte, 64<<10)
	src := io.Reader(resp.Body)
	fake := p.zeros.Load()
	switch {
	case fake < 0:
		src = zeros{}
	case fake > 0:
		src = io.LimitReader(zeros{}, fake)
	}
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			w.(http.Flusher).Flush()
			if p.sent.Add(int64(n)) > 256<<10 && fake == 0 {
				time.Sleep(50 * time.Millisecond)
			}
		}
		if err != nil || r.Context().Err() != nil {
			return
		}
	}
}

// throttled starts a throttle in front of the kernel at url and an
// authority on it, and returns the throttle and a front's flags. Both
// processes reach the kernel through the proxy: a front and its authority
// must see the same kernel.
func throttled(t *testing.T, url string) (*throttle, []string) {
	t.Helper()
	p := &throttle{kernel: url}
	proxy := &http.Server{Handler: p}
	ln := listenLoopback(t)
	go proxy.Serve(ln)
	t.Cleanup(func() { proxy.Close() })
	state, via := t.TempDir(), "http://"+ln.Addr().String()
	startServeWith(t, "--siyuan-url", via, "--siyuan-token", "tok", "--state-dir", state)
	return p, []string{"--siyuan-url", via, "--siyuan-token", "tok", "--state-dir", state, "--token", "sekret"}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestKilledDownloadLeavesNothing: sisyphus call killed in the middle of
// saving an export leaves no file (not even a partial one) and keeps its
// neighbours; interrupted, it removes what it wrote.
func TestKilledDownloadLeavesNothing(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	c := kernelClient(t, k.url, "tok")
	if err := c.PutFile(context.Background(), siyuan.PutFileRequest{Path: "/data/assets/big.bin", Body: bytes.NewReader(randomBytes(t, 4<<20))}); err != nil {
		t.Fatal(err)
	}
	p, front := throttled(t, k.url)
	out := t.TempDir()
	front = append(front, "--allow-dir", out, "--yes")
	os.WriteFile(filepath.Join(out, "neighbour.txt"), []byte("n"), 0o644)
	exp := map[string]any{"action": "export_resources", "paths": []string{"assets/big.bin"}, "outputPath": filepath.Join(out, "big.zip")}

	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGINT} {
		p.sent.Store(0)
		raw, _ := json.Marshal(exp)
		cmd := exec.Command(bin, append([]string{"call", "file", "--json", string(raw)}, front...)...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		for p.sent.Load() <= 512<<10 {
			select {
			case err := <-exited:
				t.Fatalf("call ended before the download was under way: %v\n%s\n%s", err, stdout.String(), stderr.String())
			case <-time.After(10 * time.Millisecond):
			}
		}
		cmd.Process.Signal(sig)
		<-exited
		if names := dirNames(t, out); strings.Join(names, ",") != "neighbour.txt" {
			t.Fatalf("after %v the output directory holds %v (%s)", sig, names, stdout.String())
		}
	}
}

// TestDownload512MiBThroughTheBinary: sisyphus call saves a 512 MiB export
// with flat memory (its peak resident set against a call that downloads
// nothing, in the same run), and one past 512 MiB fails with
// download_too_large and leaves no file. Long: it streams 1 GiB.
func TestDownload512MiBThroughTheBinary(t *testing.T) {
	testvars.Long(t)
	k := startKernel(t, t.TempDir())
	p, front := throttled(t, k.url)
	out := t.TempDir()
	front = append(front, "--allow-dir", out, "--yes")
	// call runs sisyphus call and returns its answer and peak resident set.
	call := func(args map[string]any) (map[string]any, int64) {
		raw, _ := json.Marshal(args)
		cmd := exec.Command(bin, append([]string{"call", "file", "--json", string(raw)}, front...)...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		var stdout bytes.Buffer
		cmd.Stdout = &stdout
		cmd.Run()
		var m map[string]any
		json.Unmarshal(stdout.Bytes(), &m)
		return m, cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
	}
	_, base := call(map[string]any{"action": "list_templates"})

	const size = 512 << 20
	p.zeros.Store(size)
	dst := filepath.Join(out, "big.zip")
	m, peak := call(map[string]any{"action": "export_resources", "paths": []string{"assets/"}, "outputPath": dst})
	st, err := os.Stat(dst)
	if err != nil || st.Size() != size || m["bytes"] != float64(size) {
		t.Fatalf("a 512 MiB export: %v %v", m, err)
	}
	zero := sha256.New()
	io.Copy(zero, io.LimitReader(zeros{}, size))
	if m["sha256"] != hex.EncodeToString(zero.Sum(nil)) {
		t.Fatalf("the reported SHA-256 %v is not the bytes'", m["sha256"])
	}
	t.Logf("peak resident set: %d MiB saving 512 MiB, %d MiB for a read", peak>>20, base>>20)
	if growth := peak - base; growth > 32<<20 {
		t.Fatalf("saving 512 MiB grew the resident set by %d MiB (limit 32)", growth>>20)
	}
	os.Remove(dst)

	p.zeros.Store(-1)
	p.sent.Store(0)
	m, _ = call(map[string]any{"action": "export_resources", "paths": []string{"assets/"}, "outputPath": filepath.Join(out, "all.zip")})
	if errCodeOf(m) != "download_too_large" || m["writeAttempted"] != true {
		t.Fatalf("an export past 512 MiB: %v", m)
	}
	if names := dirNames(t, out); len(names) != 0 {
		t.Fatalf("the overflow left %v", names)
	}
	if sent := p.sent.Load(); sent < 512<<20 {
		t.Fatalf("the proxy sent only %d bytes", sent)
	}
}

func listenLoopback(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}
