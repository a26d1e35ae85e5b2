package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The attacks of these tests are an agent's: every path is one an agent
// sends in a tool call, to the authority over HTTP or to a front (stdio,
// sisyphus call, serve --authority) the person runs.

// hostTree is a person's machine as the attacker finds it: a SiYuan
// workspace (its API token in conf/conf.json), Sisyphus's state dir, a
// home with a hidden key, a secret outside every allowed folder, and an
// allowed folder full of links leading to each.
type hostTree struct {
	root, ws, state, home, allowed, secret string
	k                                      *kernelProc
}

const secretWord = "sekretword"

func newHostTree(t *testing.T) hostTree {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h := hostTree{root: root, ws: filepath.Join(root, "ws"), state: filepath.Join(root, "state"), home: filepath.Join(root, "home"),
		allowed: filepath.Join(root, "allowed"), secret: filepath.Join(root, "outside", "secret.txt")}
	for _, d := range []string{h.ws, h.state, filepath.Join(h.home, ".ssh"), h.allowed, filepath.Dir(h.secret)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(h.home, ".ssh", "id_ed25519"), []byte("PRIVATE KEY "+secretWord+"1"), 0o600)
	os.WriteFile(h.secret, []byte("notes "+secretWord+"2"), 0o600)
	h.k = startKernel(t, h.ws)
	for name, target := range map[string]string{
		"to-key":     filepath.Join(h.home, ".ssh", "id_ed25519"),
		"ssh":        filepath.Join(h.home, ".ssh"),
		"to-conf":    filepath.Join(h.ws, "conf", "conf.json"),
		"ws":         h.ws,
		"to-token":   filepath.Join(h.state, "ledger.db"),
		"to-secret":  h.secret,
		"to-outside": filepath.Dir(h.secret),
		"to-proc":    "/proc/self/environ",
	} {
		if err := os.Symlink(target, filepath.Join(h.allowed, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(h.allowed, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	return h
}

// kernel are the flags that reach the tree's kernel.
func (h hostTree) kernel() []string {
	return []string{"--siyuan-url", h.k.url, "--siyuan-token", "tok"}
}

// attacks are the paths an agent names to read what is not its to read.
func (h hostTree) attacks() []string {
	return []string{
		filepath.Join(h.ws, "conf", "conf.json"), "/proc/self/cmdline", "/proc/self/environ", "/etc/passwd",
		filepath.Join(h.state, "ledger.db"), h.secret, filepath.Join(h.home, ".ssh", "id_ed25519"),
		"conf/conf.json", "../ws/conf/conf.json", "allowed/../outside/secret.txt",
		filepath.Join(h.allowed, "to-key"), filepath.Join(h.allowed, "ssh", "id_ed25519"), filepath.Join(h.allowed, "to-conf"),
		filepath.Join(h.allowed, "ws", "conf", "conf.json"), filepath.Join(h.allowed, "to-token"), filepath.Join(h.allowed, "to-secret"),
		filepath.Join(h.allowed, "to-outside", "secret.txt"), filepath.Join(h.allowed, "to-proc"), filepath.Join(h.allowed, "..", "outside", "secret.txt"),
	}
}

// assets lists the workspace's stored assets.
func (h hostTree) assets(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(h.ws, "data", "assets"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// assetText checks what fulltext_asset_content finds of word: with want,
// it waits until the asset index has it; without, it finds nothing.
func assetText(t *testing.T, a *agent, word string, want bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		r := a.ok("search", map[string]any{"action": "fulltext_asset_content", "query": word})
		total, _ := r["total"].(float64)
		switch found := total > 0; {
		case found == want:
			return
		case !want:
			t.Fatalf("fulltext_asset_content finds %q: %v", word, r)
		case time.Now().After(deadline):
			t.Fatalf("fulltext_asset_content does not find %q: %v", word, r)
		}
	}
}

// TestAuthorityOpensNoPath: an HTTP agent names files of the authority's
// machine (the workspace's conf.json, which holds SiYuan's API token, /proc,
// the state dir's token, a secret), as a preflight, confirmed, insisting on
// a large file, in both eras: each is refused (local_path_refused), with
// the way to stage a file instead, nothing is stored and the asset search
// finds none of it, though it finds a file staged the right way.
func TestAuthorityOpensNoPath(t *testing.T) {
	t.Parallel()
	h := newHostTree(t)
	s := startServeWith(t, append(h.kernel(), "--state-dir", h.state)...)
	a := connect(t, s.url, "2025-11-25")
	for _, p := range h.attacks() {
		for _, key := range []string{"localFilePath", "file"} {
			for _, extra := range []map[string]any{{"validateOnly": true}, {"confirm": true}, {"confirm": true, "confirmLargeFile": true},
				{"validateOnly": true, "uploadSource": "staged:" + strings.Repeat("A", 26)}} {
				args := map[string]any{"action": "upload_asset", key: p}
				for k, v := range extra {
					args[k] = v
				}
				m := a.fails("file", args, "local_path_refused")
				e := m["error"].(map[string]any)
				if m["writeAttempted"] != false || !strings.Contains(fmt.Sprint(e["action"]), "/transfer/upload") {
					t.Fatalf("%v: %v", args, m)
				}
			}
		}
	}
	base := strings.TrimSuffix(s.url, "/mcp")
	status, body := modernCall(context.Background(), http.DefaultClient, base, "file",
		map[string]any{"action": "upload_asset", "localFilePath": filepath.Join(h.ws, "conf", "conf.json"), "confirm": true}, "")
	if res, isErr := toolResult(t, status, body); !isErr || errCodeOf(res) != "local_path_refused" {
		t.Fatalf("a modern call: %v", res)
	}
	if got := h.assets(t); len(got) != 0 {
		t.Fatalf("a named path was stored: %v", got)
	}

	// The way that works: stage the bytes, upload the handle. The asset
	// search finds its text, and none of the secrets.
	control := secretWord[:6] + "control"
	code, st := stagerClient{t, base}.raw("control.txt", []byte("staged "+control+"\n"))
	if code != 200 {
		t.Fatalf("staging: %d %v", code, st)
	}
	up := map[string]any{"action": "upload_asset", "uploadSource": st["uploadSource"]}
	if res := a.ok("file", with(commitOf(up, a.ok("file", with(up, "validateOnly", true))), "confirm", true)); res["status"] != "committed" {
		t.Fatalf("a staged upload: %v", res)
	}
	assetText(t, a, control, true)
	for _, w := range []string{secretWord + "1", secretWord + "2", `"token"`, "tok"} {
		assetText(t, a, w, false)
	}
	if got := h.assets(t); len(got) != 1 {
		t.Fatalf("assets: %v", got)
	}
}

// formAgent runs `sisyphus stdio args...` in dir with env added, as a
// desktop client with forms whose answers come from answer (every form's
// message is kept).
type formAgent struct {
	*agent
	mu       sync.Mutex
	messages []string
}

func newFormAgent(t *testing.T, dir string, env []string, answer func(msg string) *sdk.ElicitResult, args ...string) *formAgent {
	t.Helper()
	f := &formAgent{}
	var opts *sdk.ClientOptions
	if answer != nil {
		opts = &sdk.ClientOptions{ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			f.mu.Lock()
			f.messages = append(f.messages, req.Params.Message)
			f.mu.Unlock()
			return answer(req.Params.Message), nil
		}}
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "desktop", Version: "1"}, opts)
	cmd := exec.Command(bin, append([]string{"stdio"}, args...)...)
	cmd.Dir, cmd.Env, cmd.Stderr = dir, append(os.Environ(), env...), io.Discard
	cs, err := client.Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	f.agent = &agent{t: t, cs: cs}
	return f
}

func (f *formAgent) lastForm() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.messages) == 0 {
		return ""
	}
	return f.messages[len(f.messages)-1]
}

func accept(string) *sdk.ElicitResult {
	return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}
}

// cliIn runs `sisyphus call` in dir with env added.
func cliIn(t *testing.T, dir string, env []string, tool string, args map[string]any, extra ...string) (map[string]any, int) {
	t.Helper()
	raw, _ := json.Marshal(args)
	cmd := exec.Command(bin, append([]string{"call", tool, "--json", string(raw)}, extra...)...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if json.Unmarshal(stdout.Bytes(), &m) != nil {
		t.Fatalf("call %s %v printed no JSON (exit %d): %s %s", tool, args, code, stdout.String(), stderr.String())
	}
	return m, code
}

// upload runs an upload's preflight and commit through a front agent that
// confirms by itself (confirm:true) and returns the stored asset's path.
func uploadThrough(t *testing.T, a *agent, args map[string]any) string {
	t.Helper()
	pre := a.ok("file", with(with(args, "validateOnly", true), "confirm", true))
	res := a.ok("file", with(commitOf(map[string]any{"action": "upload_asset", "uploadSource": pre["uploadSource"]}, pre), "confirm", true))
	if res["status"] != "committed" {
		t.Fatalf("upload %v: %v", args, res)
	}
	return res["assetPath"].(string)
}

// TestFrontReadsOnlyAllowedFolders: a front reads a file for its agent
// only inside the folders its person allowed, and never the workspace, the
// state dir, a hidden file or a system file, however a link or ".." leads
// there; stdio by default allows nothing, sisyphus call its working
// directory; the person's form names the file and its size.
func TestFrontReadsOnlyAllowedFolders(t *testing.T) {
	t.Parallel()
	h := newHostTree(t)
	s := startServeWith(t, append(h.kernel(), "--state-dir", h.state)...)
	front := append(h.kernel(), "--state-dir", h.state)
	word := "allowedword"
	pic := []byte("notes " + word + "\n")
	note := filepath.Join(h.allowed, "note.txt")
	os.WriteFile(note, pic, 0o644)

	// stdio allowing the folder: the file uploads, and the person's form
	// names it, resolved, with its size.
	st := newFormAgent(t, h.root, nil, accept, append(front, "--allow-dir", h.allowed)...)
	pre := st.ok("file", map[string]any{"action": "upload_asset", "localFilePath": note, "validateOnly": true})
	if want := fmt.Sprintf("reads the file %s (%d bytes)", note, len(pic)); !strings.Contains(st.lastForm(), want) {
		t.Fatalf("the form says %q, not %q", st.lastForm(), want)
	}
	res := st.ok("file", commitOf(map[string]any{"action": "upload_asset", "uploadSource": pre["uploadSource"]}, pre))
	if got, err := os.ReadFile(filepath.Join(h.ws, "data", filepath.FromSlash(res["assetPath"].(string)))); err != nil || !bytes.Equal(got, pic) {
		t.Fatalf("the stored asset: %q %v", got, err)
	}
	// A person who declines: nothing is read or staged.
	decline := newFormAgent(t, h.root, nil, func(string) *sdk.ElicitResult { return &sdk.ElicitResult{Action: "decline"} },
		append(front, "--allow-dir", h.allowed)...)
	decline.fails("file", map[string]any{"action": "upload_asset", "localFilePath": note, "validateOnly": true}, "confirmation_declined")

	// Every attack through that stdio, confirmed by the agent: refused
	// before the person is asked.
	plain := newFormAgent(t, h.root, nil, nil, append(front, "--allow-dir", h.allowed)...)
	for _, p := range h.attacks() {
		m, isErr := plain.call("file", map[string]any{"action": "upload_asset", "localFilePath": p, "validateOnly": true, "confirm": true})
		if !isErr || errCodeOf(m) != "path_not_allowed" && errCodeOf(m) != "not_found" || m["writeAttempted"] != false {
			t.Fatalf("%s: %v", p, m)
		}
		if strings.Contains(fmt.Sprint(m), secretWord) {
			t.Fatalf("%s: the refusal shows a secret: %v", p, m)
		}
	}
	plain.fails("file", map[string]any{"action": "upload_asset", "localFilePath": filepath.Join(h.allowed, "fifo"), "validateOnly": true, "confirm": true}, "invalid_arguments")
	plain.fails("file", map[string]any{"action": "upload_asset", "localFilePath": h.allowed, "validateOnly": true, "confirm": true}, "invalid_arguments")

	// Even allowing the whole tree, the workspace (which the kernel names),
	// the state dir and hidden files stay out of reach.
	wide := newFormAgent(t, h.root, nil, nil, append(front, "--allow-dir", h.root)...)
	for _, p := range []string{filepath.Join(h.ws, "conf", "conf.json"), filepath.Join(h.state, "ledger.db"), filepath.Join(h.home, ".ssh", "id_ed25519"),
		filepath.Join(h.allowed, "to-conf"), filepath.Join(h.allowed, "to-key")} {
		m := wide.fails("file", map[string]any{"action": "upload_asset", "localFilePath": p, "validateOnly": true, "confirm": true}, "path_not_allowed")
		if m["writeAttempted"] != false {
			t.Fatalf("%s: %v", p, m)
		}
	}
	// The secret itself lies in an allowed folder there: it uploads.
	uploadThrough(t, wide.agent, map[string]any{"action": "upload_asset", "localFilePath": h.secret})

	// stdio without --allow-dir reads nothing, even in its working directory.
	none := newFormAgent(t, h.allowed, nil, nil, front...)
	if m := none.fails("file", map[string]any{"action": "upload_asset", "localFilePath": "note.txt", "validateOnly": true, "confirm": true}, "path_not_allowed"); !strings.Contains(fmt.Sprint(m["error"]), "none is allowed") {
		t.Fatalf("stdio without allowed folders: %v", m)
	}
	// SISYPHUS_ALLOW_DIRS allows as the flag does.
	byEnv := newFormAgent(t, h.root, []string{"SISYPHUS_ALLOW_DIRS=" + h.allowed}, nil, front...)
	uploadThrough(t, byEnv.agent, map[string]any{"action": "upload_asset", "localFilePath": note})

	// sisyphus call: its working directory is allowed by default.
	up := map[string]any{"action": "upload_asset", "localFilePath": "note.txt", "validateOnly": true}
	cpre, code := cliIn(t, h.allowed, nil, "file", up, append(front, "--yes")...)
	if code != 0 || cpre["sha256"] != hexSHA(pic) {
		t.Fatalf("call in the allowed folder: %d %v", code, cpre)
	}
	cres, code := cliIn(t, h.allowed, nil, "file", commitOf(map[string]any{"action": "upload_asset", "localFilePath": "note.txt"}, cpre), append(front, "--yes")...)
	if code != 0 || (cres["status"] != "committed" && cres["replayed"] != true) {
		t.Fatalf("call's commit: %d %v", code, cres)
	}
	if got, err := os.ReadFile(filepath.Join(h.ws, "data", filepath.FromSlash(cres["assetPath"].(string)))); err != nil || !bytes.Equal(got, pic) {
		t.Fatalf("the asset call stored: %q %v", got, err)
	}
	if m, _ := cliIn(t, h.home, nil, "file", with(up, "localFilePath", note), append(front, "--yes")...); errCodeOf(m) != "path_not_allowed" {
		t.Fatalf("call outside its working directory: %v", m)
	}
	for _, p := range []string{"to-key", "to-conf", "to-token", "ssh/id_ed25519", "../outside/secret.txt", "to-proc", "fifo"} {
		if m, _ := cliIn(t, h.allowed, nil, "file", with(up, "localFilePath", p), append(front, "--yes")...); errCodeOf(m) != "path_not_allowed" && errCodeOf(m) != "invalid_arguments" {
			t.Fatalf("call with %s: %v", p, m)
		}
	}
	// Run from inside the workspace, call still reads nothing of it.
	if m, _ := cliIn(t, h.ws, nil, "file", with(up, "localFilePath", "conf/conf.json"), append(front, "--yes")...); errCodeOf(m) != "path_not_allowed" {
		t.Fatalf("call in the workspace: %v", m)
	}
	// An allowed folder that is itself forbidden stops the front at start.
	if out, err := exec.Command(bin, append([]string{"call", "file", "--json", `{"action":"help"}`, "--allow-dir", filepath.Join(h.home, ".ssh")}, front...)...).CombinedOutput(); err == nil ||
		!strings.Contains(string(out), "hidden") {
		t.Fatalf("allowing ~/.ssh: %v %s", err, out)
	}

	// The authority takes no allowed folder: it opens no path at all.
	if out, err := exec.Command(bin, "serve", "--embedded", t.TempDir(), "--state-dir", t.TempDir(), "--listen", "127.0.0.1:0", "--allow-dir", h.allowed).CombinedOutput(); err == nil ||
		!strings.Contains(string(out), "opens no path") {
		t.Fatalf("an authority given --allow-dir: %v %s", err, out)
	}

	// serve --authority, a front over HTTP: nothing allowed by default.
	fs := startServeWith(t, append(h.kernel(), "--state-dir", t.TempDir(), "--authority", strings.TrimSuffix(s.url, "/mcp"), "--authority-token", "sekret")...)
	fa := connect(t, fs.url, "2025-11-25")
	for _, p := range []string{note, filepath.Join(h.ws, "conf", "conf.json"), "/etc/passwd"} {
		fa.fails("file", map[string]any{"action": "upload_asset", "localFilePath": p, "validateOnly": true, "confirm": true}, "path_not_allowed")
	}

	a := connect(t, s.url, "2025-11-25")
	assetText(t, a, word, true)
	assetText(t, a, secretWord+"1", false)
	assetText(t, a, "tok", false)
}

// TestFrontSavesOnlyWhereAllowed: an export a front saves lands only
// inside an allowed folder, after the person confirmed the destination
// the form names; anywhere else it is refused before the authority exports
// anything, and no folder is created.
func TestFrontSavesOnlyWhereAllowed(t *testing.T) {
	t.Parallel()
	h := newHostTree(t)
	startServeWith(t, append(h.kernel(), "--state-dir", h.state)...)
	front := append(h.kernel(), "--state-dir", h.state)
	// HOME: the default extraction folder, ~/siyuan-extracted, is not
	// allowed.
	st := newFormAgent(t, h.root, []string{"HOME=" + h.home}, accept, append(front, "--allow-dir", h.allowed)...)
	doc, _ := firstParagraph(st.agent)
	uploadThrough(t, st.agent, map[string]any{"action": "upload_asset", "localFilePath": writeTemp(t, h.allowed, "pic.png", "png bytes")})
	assets := h.assets(t)
	exports := func() []string {
		ents, _ := os.ReadDir(filepath.Join(h.ws, "temp", "export"))
		var out []string
		for _, e := range ents {
			out = append(out, e.Name())
		}
		return out
	}
	before := exports()

	refused := []string{filepath.Join(h.root, "outside", "x.zip"), filepath.Join(h.root, "new", "deep", "x.zip"), filepath.Join(h.home, ".config", "x.zip"),
		filepath.Join(h.ws, "data", "x.zip"), filepath.Join(h.state, "x.zip"), filepath.Join(h.allowed, "to-outside", "x.zip"),
		filepath.Join(h.allowed, "ssh", "x.zip"), filepath.Join(h.allowed, "..", "x.zip"), filepath.Join(h.allowed, ".hidden", "x.zip"), "/proc/x.zip"}
	for _, dst := range refused {
		for _, args := range []map[string]any{
			{"action": "export_resources", "paths": []string{"assets/" + assets[0]}, "outputPath": dst, "confirm": true},
			{"action": "extract_doc", "id": doc, "outputDir": dst, "confirm": true},
		} {
			if m := st.fails("file", args, "path_not_allowed"); m["writeAttempted"] != false {
				t.Fatalf("%v: %v", args, m)
			}
		}
	}
	st.fails("file", map[string]any{"action": "extract_doc", "id": doc}, "path_not_allowed")
	if got := exports(); len(got) != len(before) {
		t.Fatalf("a refused export ran at the authority: %v", got)
	}
	for _, p := range []string{filepath.Join(h.root, "new"), filepath.Join(h.home, ".config"), filepath.Join(h.home, "siyuan-extracted"), filepath.Join(h.allowed, ".hidden")} {
		if _, err := os.Lstat(p); err == nil {
			t.Fatalf("a refused export created %s", p)
		}
	}

	// Inside the allowed folder: the form names the destination, resolved,
	// and the export lands there (missing folders created inside it).
	zipPath := filepath.Join(h.allowed, "out", "resources.zip")
	z := st.ok("file", map[string]any{"action": "export_resources", "paths": []string{"assets/" + assets[0]}, "outputPath": zipPath})
	if !strings.Contains(st.lastForm(), "creates the file "+zipPath) || z["outputPath"] != zipPath || z["sha256"] != fileSHA(t, zipPath) {
		t.Fatalf("export: %v (form %q)", z, st.lastForm())
	}
	dir := filepath.Join(h.allowed, "extracted")
	ex := st.ok("file", map[string]any{"action": "extract_doc", "id": doc, "outputDir": "allowed/extracted"})
	if !strings.Contains(st.lastForm(), "creates the folder "+dir) || ex["outputDir"] != dir {
		t.Fatalf("extract: %v (form %q)", ex, st.lastForm())
	}
	// The default destination, once its folder is allowed.
	extracted := filepath.Join(h.home, "siyuan-extracted")
	os.Mkdir(extracted, 0o755)
	def := newFormAgent(t, h.root, []string{"HOME=" + h.home}, accept, append(front, "--allow-dir", extracted)...)
	if ex := def.ok("file", map[string]any{"action": "extract_doc", "id": doc}); ex["outputDir"] != filepath.Join(extracted, doc) {
		t.Fatalf("the default destination: %v", ex)
	}
	// Declined: nothing saved.
	no := newFormAgent(t, h.root, nil, func(string) *sdk.ElicitResult { return &sdk.ElicitResult{Action: "decline"} }, append(front, "--allow-dir", h.allowed)...)
	no.fails("file", map[string]any{"action": "extract_doc", "id": doc, "outputDir": filepath.Join(h.allowed, "declined")}, "confirmation_declined")
	if _, err := os.Lstat(filepath.Join(h.allowed, "declined")); err == nil {
		t.Fatal("a declined extraction was saved")
	}
}

func writeTemp(t *testing.T, dir, name, data string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
