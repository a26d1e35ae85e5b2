package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeNotRun are the README's commands this test does not run, each with
// the reason. Every other command of the README's sh blocks, and every
// complete `sisyphus …` command in its prose, runs as printed on the
// embedded demo in a fresh account and must succeed.
var readmeNotRun = map[string]string{
	"go test ./...":                            "the test suite itself",
	"go build -o sisyphus ./cmd/sisyphus":      "TestMain builds the binary the same way; ./sisyphus is it here",
	`sisyphus config permission "Research" rw`: "names a notebook of the reader's (the demo has none called Research)",
	`sisyphus call file --json '{"action":"extract_doc","id":"20260812120000-docdocd","outputDir":"./plan-export"}'`:                                                                                        "an example document id",
	`sisyphus call file --json '{"action":"export_resources","paths":["assets/diagram-20261201183121-iry7sq5.png"],"outputPath":"./diagrams.zip"}'`:                                                         "an example asset",
	`curl -sS http://127.0.0.1:36806/transfer/upload -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/octet-stream' -H 'X-Sisyphus-File-Name: my%20photo.png' --data-binary @'my photo.png'`: "an example file of the reader's",
	"go run ./cmd/sisyphus doctor --siyuan-url http://127.0.0.1:6806 --siyuan-token <token>":                                                                                                                "a real SiYuan and its token",
	"go run ./cmd/sisyphus serve  --siyuan-url http://127.0.0.1:6806 --siyuan-token <token>":                                                                                                                "a real SiYuan and its token",
	"SISYPHUS_LIVE_SIYUAN_URL=http://127.0.0.1:6806 SISYPHUS_LIVE_SIYUAN_TOKEN=<token> go test ./internal/siyuan/contract/ -run Live -v":                                                                    "a real SiYuan and its token",
	"SISYPHUS_LIVE_SIYUAN_URL=http://127.0.0.1:6806 SISYPHUS_LIVE_SIYUAN_TOKEN=<token> go test ./cmd/sisyphus -run 'TestStrictToolsLive|TestFileToolLive' -v":                                               "a real SiYuan and its token",
}

// readmeDemo is the README's first command: the test starts it itself.
const readmeDemo = "go run ./cmd/sisyphus serve --embedded ./demo-workspace"

// readmeCommands are the commands of the README's sh blocks (comments
// dropped, continued lines joined) and the complete `sisyphus …` commands
// of its prose (not command names alone, nor forms with placeholders).
func readmeCommands(readme string) []string {
	var cmds []string
	inSh, cont := false, ""
	for _, line := range strings.Split(readme, "\n") {
		switch {
		case strings.HasPrefix(line, "```sh"):
			inSh = true
			continue
		case strings.HasPrefix(line, "```"):
			inSh = false
			continue
		}
		if !inSh || strings.HasPrefix(strings.TrimSpace(line), "#") || strings.TrimSpace(line) == "" {
			continue
		}
		if i := strings.Index(line, "  #"); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if strings.HasSuffix(line, `\`) {
			cont += strings.TrimSpace(strings.TrimSuffix(line, `\`)) + " "
			continue
		}
		cmds = append(cmds, cont+line)
		cont = ""
	}
	form := regexp.MustCompile(`[A-Z]{3,}|…|\.\.\.|\||<|:$`)
	for _, m := range regexp.MustCompile("`(sisyphus [^`]+)`").FindAllStringSubmatch(readme, -1) {
		c := m[1]
		if form.MatchString(c) || !strings.Contains(c, " ") || len(strings.Fields(c)) < 2 {
			continue
		}
		switch strings.Fields(c)[1] {
		case "serve", "stdio", "kernel":
			if len(strings.Fields(c)) == 2 {
				continue // a command's name in a sentence
			}
		}
		if len(strings.Fields(c)) == 2 && (strings.Fields(c)[1] == "call" || strings.Fields(c)[1] == "config") {
			continue
		}
		cmds = append(cmds, c)
	}
	return cmds
}

// TestREADMECommands runs every README command as printed, on the
// embedded demo of a fresh account (the demo's port is the one change: the
// test's serve listens where it can).
func TestREADMECommands(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	cmds := readmeCommands(string(data))
	seen := map[string]bool{}
	for _, c := range cmds {
		seen[c] = true
	}
	for c := range readmeNotRun {
		if !seen[c] {
			t.Errorf("readmeNotRun names %q, which the README no longer has", c)
		}
	}
	if !seen[readmeDemo] {
		t.Fatalf("the README lost its demo command %q", readmeDemo)
	}
	home := t.TempDir()
	binDir := t.TempDir()
	if err := os.Symlink(bin, filepath.Join(binDir, "sisyphus")); err != nil {
		t.Fatal(err)
	}
	// ./sisyphus, where the README's build put it.
	if err := os.Symlink(bin, filepath.Join(home, "sisyphus")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "rules.md"), []byte("Answer briefly.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(freshEnv(home), "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	// The demo, started as the README starts it (the built binary for go
	// run, in the fresh account's folder).
	demo := exec.Command(bin, "serve", "--embedded", "./demo-workspace", "--listen", "127.0.0.1:0")
	demo.Dir, demo.Env = home, env
	srv := startProc(t, demo)
	host := strings.TrimPrefix(strings.TrimSuffix(srv, "/mcp"), "http://")
	ran := 0
	for _, c := range cmds {
		if c == readmeDemo {
			continue
		}
		if why, ok := readmeNotRun[c]; ok {
			t.Logf("not run: %s (%s)", c, why)
			continue
		}
		sh := strings.ReplaceAll(c, "127.0.0.1:36806", host)
		cmd := exec.Command("sh", "-c", sh)
		cmd.Dir, cmd.Env = home, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("README command failed as printed: %s\n%v\n%s", c, err, out)
			continue
		}
		ran++
	}
	if page, err := os.ReadFile(filepath.Join(home, "settings.html")); err != nil || !strings.Contains(string(page), "Sisyphus settings") || strings.Contains(string(page), `id="token"`) {
		t.Errorf("the README's sign-in did not reach the settings page: %v\n%.300s", err, page)
	}
	t.Logf("ran %d README commands", ran)
}

// startProc starts a serve command and returns its MCP URL from its banner.
func startProc(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = nil
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	re := regexp.MustCompile(`sisyphus ready: MCP at (\S+)`)
	buf := make([]byte, 0, 8192)
	tmp := make([]byte, 4096)
	for {
		n, err := stdout.Read(tmp)
		buf = append(buf, tmp[:n]...)
		if m := re.FindSubmatch(buf); m != nil {
			go func() { // keep draining so serve never blocks on stdout
				for {
					if _, err := stdout.Read(tmp); err != nil {
						return
					}
				}
			}()
			return string(m[1])
		}
		if err != nil {
			t.Fatalf("serve exited before it was ready: %v\n%s", err, buf)
		}
	}
}
