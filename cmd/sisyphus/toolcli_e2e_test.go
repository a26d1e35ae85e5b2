package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/sisyphus-go/sisyphus/internal/toolcli"
	"github.com/sisyphus-go/sisyphus/internal/tools/catalog"
)

// toolCLI is an authority on the embedded demo and the flags that reach
// it from `sisyphus TOOL ACTION`.
type toolCLI struct {
	s          *serveProc
	front      []string
	doc, para  string
	paras      []string
	ws, state  string
	pagerMark  string // what the test pager prints
	pagerShell string // a $PAGER that prints it
}

func newToolCLI(t *testing.T) *toolCLI {
	t.Helper()
	state, ws := t.TempDir(), t.TempDir()
	c := &toolCLI{s: startServeWith(t, "--embedded", ws, "--state-dir", state), ws: ws, state: state,
		front: []string{"--embedded", ws, "--state-dir", state}}
	a := connect(t, c.s.url, "2025-11-25")
	c.doc, c.para = firstParagraph(a)
	for _, k := range a.ok("block", map[string]any{"action": "get_children", "id": c.doc})["data"].([]any) {
		c.paras = append(c.paras, k.(map[string]any)["id"].(string))
	}
	// A pager that marks what went through it, so a test sees whether
	// the output was paged.
	c.pagerMark = "<<paged>>"
	c.pagerShell = filepath.Join(t.TempDir(), "pager")
	os.WriteFile(c.pagerShell, []byte("#!/bin/sh\necho '"+c.pagerMark+"'\ncat\n"), 0o755)
	return c
}

// run runs `sisyphus args... front...` without a terminal: stdin is
// /dev/null and there is no controlling terminal.
func (c *toolCLI) run(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, append(args, c.front...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

// ok runs a command that must succeed and returns its stdout.
func (c *toolCLI) ok(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := c.run(t, nil, args...)
	if code != 0 {
		t.Fatalf("sisyphus %v: exit %d\n%s\n%s", args, code, out, errOut)
	}
	return out
}

// onTerminal runs the command on a pseudo-terminal (stdin, stdout and
// stderr), answers each prompt that contains a key of answers, and returns
// everything the terminal showed.
func (c *toolCLI) onTerminal(t *testing.T, env []string, answers map[string]string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, append(args, c.front...)...)
	cmd.Env = append(os.Environ(), env...)
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: 200})
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	var (
		mu    sync.Mutex
		shown bytes.Buffer
	)
	text := func() string { mu.Lock(); defer mu.Unlock(); return shown.String() }
	read := make(chan struct{})
	go func() {
		defer close(read)
		buf := make([]byte, 4096)
		for {
			n, err := tty.Read(buf)
			mu.Lock()
			shown.Write(buf[:n])
			mu.Unlock()
			for prompt, answer := range answers {
				if strings.Contains(text(), prompt) {
					delete(answers, prompt)
					tty.Write([]byte(answer))
				}
			}
			if err != nil {
				return
			}
		}
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("sisyphus %v on a terminal did not finish; it showed:\n%s", args, text())
	}
	// The terminal's last output is read once the process is gone (EIO
	// ends the reader).
	select {
	case <-read:
	case <-time.After(10 * time.Second):
	}
	code := 0
	if ee, ok := werr.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	return strings.ReplaceAll(text(), "\r\n", "\n"), code
}

func (c *toolCLI) kramdown(t *testing.T, id string) string {
	t.Helper()
	var m map[string]any
	json.Unmarshal([]byte(c.ok(t, "block", "get-kramdown", "--id", id, "--json")), &m)
	s, _ := m["kramdown"].(string)
	return s
}

// TestToolCLIReads: reads print for a person (a table, a document's
// Markdown as text) or as JSON; flags in kebab, camel and snake case are
// one argument; mistakes are refused before anything runs.
func TestToolCLIReads(t *testing.T) {
	t.Parallel()
	c := newToolCLI(t)
	out := c.ok(t, "notebook", "list")
	if !strings.Contains(out, "NAME") || !strings.Contains(out, "Sisyphus Demo") || !strings.Contains(out, "rwd") {
		t.Fatalf("notebook list:\n%s", out)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(c.ok(t, "notebook", "list", "--json")), &m); err != nil || m["total"] != float64(1) {
		t.Fatalf("notebook list --json: %v %v", err, m)
	}
	doc := c.ok(t, "document", "get_doc", "--id", c.doc)
	if !strings.HasPrefix(doc, "Sisyphus serves this workspace") || strings.Contains(doc, "estimatedTokens") {
		t.Fatalf("get_doc prints the Markdown as text:\n%s", doc)
	}
	// The same argument in every spelling; the action in upstream's kebab.
	first := c.ok(t, "document", "get-doc", "--id", c.doc, "--block-limit", "1", "--no-include-block-ids")
	for _, spelt := range [][]string{{"--blockLimit", "1"}, {"--block_limit=1"}, {"--blockLimit=1", "--include-block-ids=false"}} {
		if got := c.ok(t, append([]string{"document", "get_doc", "--id", c.doc}, spelt...)...); got != first {
			t.Errorf("%v: %q, want %q", spelt, got, first)
		}
	}
	if strings.Contains(first, "## What is here") {
		t.Errorf("--block-limit 1 printed more than a block:\n%s", first)
	}
	// Arrays: repeated, commas, JSON.
	for _, ids := range [][]string{{"--ids", c.paras[0], "--ids", c.paras[1]}, {"--ids", c.paras[0] + "," + c.paras[1]}, {"--ids-json", `["` + c.paras[0] + `","` + c.paras[1] + `"]`}} {
		var bk map[string]any
		json.Unmarshal([]byte(c.ok(t, append([]string{"block", "batch_kramdown", "--json"}, ids...)...)), &bk)
		if items, _ := bk["items"].([]any); len(items) != 2 {
			t.Errorf("%v: %v", ids, bk)
		}
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"document", "get_doc", "--idd", c.doc}, "unknown flag --idd (did you mean --id?)"},
		{[]string{"document", "get_doc", "--id", c.doc, "--block-limit", "many"}, "--block-limit: must be an integer"},
		{[]string{"document", "get_doc", "--id", c.doc, "--mode", "pdf"}, "must be one of markdown, html"},
		{[]string{"document", "get_dok", "--id", c.doc}, `no action "get_dok" (did you mean get_doc?)`},
		{[]string{"document", "get_doc", "--id", "nope"}, "invalid_arguments"},
	} {
		out, errOut, code := c.run(t, nil, tt.args...)
		if code == 0 || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q (stdout %q), want %q", tt.args, code, errOut, out, tt.want)
		}
	}
}

// TestToolCLIWrites: a write runs its preflight, shows it and commits in
// one go; --validate-only stops after the preflight; a dangerous action
// asks at the terminal (y/N), takes --yes, and is refused without it when
// stdin is not a terminal; a disabled action stays disabled whatever the
// person answers.
func TestToolCLIWrites(t *testing.T) {
	t.Parallel()
	c := newToolCLI(t)
	out, errOut, code := c.run(t, nil, "block", "update", "--id", c.para, "--data", "written from the shell")
	if code != 0 || !strings.Contains(errOut, "preflight block.update: 1 target(s), state expectedStateHash") ||
		!strings.Contains(out, "status:") || !strings.Contains(out, "committed") {
		t.Fatalf("strict write: exit %d\n%s\n%s", code, out, errOut)
	}
	if kd := c.kramdown(t, c.para); !strings.Contains(kd, "written from the shell") {
		t.Fatalf("the update is not there: %s", kd)
	}
	out, errOut, code = c.run(t, nil, "block", "update", "--id", c.para, "--data", "only checked", "--validate-only", "--json")
	var pre map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &pre) != nil || pre["requestId"] == nil || pre["writeAttempted"] != false {
		t.Fatalf("--validate-only: exit %d\n%s\n%s", code, out, errOut)
	}
	if kd := c.kramdown(t, c.para); strings.Contains(kd, "only checked") {
		t.Fatalf("--validate-only wrote: %s", kd)
	}
	// A value that looks like a flag is the argument's own.
	out, errOut, code = c.run(t, nil, "block", "update", "--id", c.para, "--data", "--help", "--validate-only", "--json")
	if code != 0 || json.Unmarshal([]byte(out), &pre) != nil || pre["requestId"] == nil {
		t.Fatalf("--data --help: exit %d\n%s\n%s", code, out, errOut)
	}

	// Disabled: refused, --yes or not.
	target := c.paras[1]
	out, errOut, code = c.run(t, nil, "block", "delete", "--id", target, "--yes")
	if code == 0 || !strings.Contains(errOut, "action_disabled") {
		t.Fatalf("a disabled action: exit %d\n%s\n%s", code, out, errOut)
	}
	c.s.config(t, "enable", "block.delete")
	out, errOut, code = c.run(t, nil, "block", "delete", "--id", target)
	if code == 0 || !strings.Contains(errOut, "confirmation_required") || !strings.Contains(errOut, "--yes") {
		t.Fatalf("no terminal, no --yes: exit %d\n%s\n%s", code, out, errOut)
	}
	if kd := c.kramdown(t, target); kd == "" {
		t.Fatal("refused, yet deleted")
	}
	// At a terminal: the preflight shown, then the question; "n" keeps it.
	shown, code := c.onTerminal(t, nil, map[string]string{"[y/N]": "n\n"}, "block", "delete", "--id", target)
	if code == 0 || !strings.Contains(shown, "preflight block.delete") || !strings.Contains(shown, "You are about to run block.delete") ||
		!strings.Contains(shown, "confirmation_declined") {
		t.Fatalf("declined at the terminal: exit %d\n%s", code, shown)
	}
	shown, code = c.onTerminal(t, nil, map[string]string{"[y/N]": "y\n"}, "block", "delete", "--id", target, "--no-pager")
	if code != 0 || !strings.Contains(shown, "committed") {
		t.Fatalf("confirmed at the terminal: exit %d\n%s", code, shown)
	}
	if _, _, code := c.run(t, nil, "block", "get-kramdown", "--id", target); code == 0 {
		t.Fatal("the confirmed delete did not delete")
	}
	out, errOut, code = c.run(t, nil, "block", "delete", "--id", c.paras[2], "--yes")
	if code != 0 || !strings.Contains(out, "committed") {
		t.Fatalf("--yes: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestToolCLIPagerHelpCompletion: output is paged only on a terminal;
// help is the tools' own, with the flags as typed; completion offers
// tools, actions, flags and enumerated values.
func TestToolCLIPagerHelpCompletion(t *testing.T) {
	t.Parallel()
	c := newToolCLI(t)
	pager := []string{"PAGER=" + c.pagerShell}
	out, _, code := c.run(t, pager, "document", "get_doc", "--id", c.doc)
	if code != 0 || strings.Contains(out, c.pagerMark) {
		t.Fatalf("piped output went through the pager: %q", out)
	}
	shown, code := c.onTerminal(t, pager, nil, "document", "get_doc", "--id", c.doc)
	if code != 0 || !strings.Contains(shown, c.pagerMark) || !strings.Contains(shown, "## What is here") {
		t.Fatalf("a terminal's output is paged: exit %d\n%s", code, shown)
	}
	shown, _ = c.onTerminal(t, pager, nil, "document", "get_doc", "--id", c.doc, "--no-pager")
	if strings.Contains(shown, c.pagerMark) {
		t.Fatalf("--no-pager paged:\n%s", shown)
	}

	plain := func(args ...string) string {
		t.Helper()
		out, err := run(t, args...)
		if err != nil {
			t.Fatalf("sisyphus %v: %v\n%s", args, err, out)
		}
		return out
	}
	for _, args := range [][]string{{"help", "block", "update"}, {"block", "update", "--help"}} {
		out := plain(args...)
		for _, w := range []string{"sisyphus block update [--flags]", "--id TEXT", "--data TEXT", "--data-type markdown|dom", "--validate-only", "Example:"} {
			if !strings.Contains(out, w) {
				t.Errorf("%v lacks %q:\n%s", args, w, out)
			}
		}
	}
	for _, args := range [][]string{{"help", "block"}, {"block", "--help"}, {"block"}} {
		if out := plain(args...); !strings.Contains(out, "transfer_references") || !strings.Contains(out, "delete") {
			t.Errorf("%v:\n%s", args, out)
		}
	}
	if out := plain("list"); !strings.Contains(out, "flashcard") {
		t.Errorf("list:\n%s", out)
	}
	if out := plain("list", "fs"); !strings.Contains(out, "reorder") {
		t.Errorf("list fs:\n%s", out)
	}
	if out := plain("help"); !strings.Contains(out, "Tools (sisyphus TOOL ACTION --flags") || !strings.Contains(out, "flashcard") {
		t.Errorf("help:\n%s", out)
	}

	for _, sh := range []string{"bash", "zsh", "fish"} {
		if out := plain("completion", sh); !strings.Contains(out, "sisyphus") || !strings.Contains(out, "__complete") {
			t.Errorf("completion %s:\n%.300s", sh, out)
		}
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to run the completion in")
	}
	script := filepath.Join(t.TempDir(), "completion.bash")
	os.WriteFile(script, []byte(plain("completion", "bash")), 0o644)
	for _, tt := range []struct {
		words []string
		want  []string
	}{
		{[]string{"docu"}, []string{"document"}},
		{[]string{"document", "ren"}, []string{"rename"}},
		{[]string{"document", "get_doc", "--inc"}, []string{"--include-block-ids"}},
		{[]string{"document", "get_doc", "--mode", ""}, []string{"markdown", "html"}},
		{[]string{"help", "block", "up"}, []string{"update"}},
	} {
		// bash-completion's word splitter, when the system has none: the
		// words as they are.
		prog := `
type _get_comp_words_by_ref >/dev/null 2>&1 || _get_comp_words_by_ref() { cur="${COMP_WORDS[COMP_CWORD]}"; prev="${COMP_WORDS[COMP_CWORD-1]}"; words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD; }
source "$1"; shift
COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
__start_sisyphus 2>/dev/null
printf '%s\n' "${COMPREPLY[@]}"`
		cmd := exec.Command(bash, append([]string{"-c", prog, "bash", script, bin}, tt.words...)...)
		cmd.Env = append(os.Environ(), "SISYPHUS_STATE_DIR="+c.state)
		cmd.Stderr = io.Discard
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v: %v", tt.words, err)
		}
		got := strings.Fields(string(out))
		for _, w := range tt.want {
			if !strings.Contains(" "+strings.Join(got, " ")+" ", " "+w+" ") {
				t.Errorf("completing %v: %v, want %s", tt.words, got, w)
			}
		}
	}
}

// TestToolCLIStrictOff: with strict writes off in the authority there is
// no preflight; a write runs as is, and --validate-only says so.
func TestToolCLIStrictOff(t *testing.T) {
	t.Parallel()
	state, ws := t.TempDir(), t.TempDir()
	startServeWith(t, "--embedded", ws, "--state-dir", state, "--strict-off")
	c := &toolCLI{front: []string{"--embedded", ws, "--state-dir", state}}
	c.ok(t, "fs", "write", "--path", "/Sisyphus Demo/Loose", "--markdown", "hello")
	if out := c.ok(t, "fs", "read", "--path", "/Sisyphus Demo/Loose"); !strings.Contains(out, "hello") {
		t.Fatalf("the write is not there: %s", out)
	}
	if _, errOut, code := c.run(t, nil, "fs", "replace", "--path", "/Sisyphus Demo/Loose", "--old", "hello", "--new", "bye", "--validate-only"); code == 0 || !strings.Contains(errOut, "strict_mode_disabled") {
		t.Fatalf("--validate-only with strict writes off: exit %d %s", code, errOut)
	}
}

// TestToolCmdFlagsDoNotShadowArguments: no action's argument is spelt
// like one of the tool command's own flags (connection, --json, --yes,
// ...), which would take it.
func TestToolCmdFlagsDoNotShadowArguments(t *testing.T) {
	g := &globalFlags{}
	for _, tl := range catalog.All() {
		cmd := newToolCmd(g, tl)
		for _, a := range tl.Actions {
			for _, p := range a.Arguments() {
				for _, spelt := range []string{p.Name, toolcli.FlagName(p.Name)} {
					if cmd.Flags().Lookup(spelt) != nil || spelt == "log-level" {
						t.Errorf("%s.%s: argument %s is spelt like the command's flag --%s", tl.Name, a.Name, p.Name, spelt)
					}
				}
			}
		}
	}
}
