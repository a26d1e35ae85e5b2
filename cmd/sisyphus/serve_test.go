package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A test binary lives under go-build like a `go run` build, so these cases
// exercise the search for a real binary.
func TestStdioBinary(t *testing.T) {
	cases := []struct {
		name      string
		build     func(t *testing.T, cwd, bin string) // lays out the binaries
		want      func(cwd, bin string) string
		wantFound bool
	}{
		{"none", func(*testing.T, string, string) {}, func(string, string) string { return "/path/to/sisyphus" }, false},
		{"working directory", func(t *testing.T, cwd, _ string) { exe(t, filepath.Join(cwd, "sisyphus")) },
			func(cwd, _ string) string { return filepath.Join(cwd, "sisyphus") }, true},
		{"PATH", func(t *testing.T, _, bin string) { exe(t, filepath.Join(bin, "sisyphus")) },
			func(_, bin string) string { return filepath.Join(bin, "sisyphus") }, true},
		{"not executable", func(t *testing.T, cwd, _ string) {
			if err := os.WriteFile(filepath.Join(cwd, "sisyphus"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, func(string, string) string { return "/path/to/sisyphus" }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cwd, bin, home := t.TempDir(), t.TempDir(), t.TempDir()
			t.Chdir(cwd)
			t.Setenv("PATH", bin)
			t.Setenv("GOBIN", "")
			t.Setenv("GOPATH", "")
			t.Setenv("HOME", home)
			tc.build(t, cwd, bin)
			got, found := stdioBinary()
			if want := tc.want(cwd, bin); got != want || found != tc.wantFound {
				t.Fatalf("stdioBinary() = %q, %v; want %q, %v", got, found, want, tc.wantFound)
			}
		})
	}
}

func exe(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// The printed stdio configuration is the one that works with serve
// --embedded: the real binary, the workspace and state dir as absolute paths.
func TestPrintClientConfigEmbedded(t *testing.T) {
	cwd := t.TempDir()
	t.Chdir(cwd)
	t.Setenv("PATH", "")
	exe(t, filepath.Join(cwd, "sisyphus"))
	var out bytes.Buffer
	printClientConfig(&out, "http://127.0.0.1:1/mcp", "tok", "", "sd", kernelFlags{embedded: "demo"})
	text := out.String()
	i := strings.Index(text, "stdio client configuration")
	if i < 0 {
		t.Fatalf("no stdio configuration in:\n%s", text)
	}
	body := text[strings.Index(text[i:], "\n")+i+1:]
	var cfg struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	if err := json.NewDecoder(strings.NewReader(body)).Decode(&cfg); err != nil {
		t.Fatalf("stdio configuration is not JSON: %v\n%s", err, body)
	}
	s := cfg.MCPServers["sisyphus"]
	wantArgs := []string{"stdio", "--embedded", filepath.Join(cwd, "demo"), "--state-dir", filepath.Join(cwd, "sd")}
	if s.Command != filepath.Join(cwd, "sisyphus") || strings.Join(s.Args, " ") != strings.Join(wantArgs, " ") {
		t.Fatalf("stdio configuration = %q %q; want %q %q", s.Command, s.Args, filepath.Join(cwd, "sisyphus"), wantArgs)
	}
	if strings.Contains(text, "build the binary") {
		t.Fatalf("advises building a binary that exists:\n%s", text)
	}
}
