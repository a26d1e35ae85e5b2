package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sisyphus-go/sisyphus/internal/skills"
	"github.com/sisyphus-go/sisyphus/internal/tools/catalog"
)

// clientSkillDirs are the skills folders of clients that load skills from
// the person's home, relative to it.
var clientSkillDirs = map[string]string{
	"claude": ".claude/skills",
	"codex":  ".codex/skills",
	"cursor": ".cursor/skills",
	"gemini": ".gemini/skills",
}

func clientNames() string {
	names := make([]string, 0, len(clientSkillDirs))
	for n := range clientSkillDirs {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, "|")
}

func newSkillCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "skill",
		Short: "List the agent skills built into sisyphus, or install them into a client's skills folder",
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List the skills with their digests",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sk, err := skills.Render(catalog.All())
			if err != nil {
				return err
			}
			for _, s := range sk {
				fmt.Fprintf(cmd.OutOrStdout(), "%s\t%s\t%s\n", s.Name, s.Digest(), s.Description)
			}
			return nil
		},
	})
	var dir, client string
	var force bool
	install := &cobra.Command{
		Use:   "install",
		Short: "Write every skill as <dir>/<name>/SKILL.md",
		Long: "Write every skill as <dir>/<name>/SKILL.md, into --dir or the skills folder of --client (" + clientNames() + ", under your home).\n" +
			"A SKILL.md that exists and differs (edited, or from another version) is not replaced unless --force; then nothing is written.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			target, err := skillDir(dir, client)
			if err != nil {
				return err
			}
			sk, err := skills.Render(catalog.All())
			if err != nil {
				return err
			}
			return installSkills(cmd, target, sk, force)
		},
	}
	install.Flags().StringVar(&dir, "dir", "", "the skills folder to write into")
	install.Flags().StringVar(&client, "client", "", "a client whose skills folder to write into: "+clientNames())
	install.Flags().BoolVar(&force, "force", false, "replace SKILL.md files that differ from this version's")
	cmd.AddCommand(install)
	return cmd
}

// skillDir is the folder --dir or --client names (exactly one of them).
func skillDir(dir, client string) (string, error) {
	switch {
	case dir != "" && client != "":
		return "", errors.New("give --dir or --client, not both")
	case dir != "":
		return dir, nil
	case client == "":
		return "", errors.New("give --dir DIR or --client " + clientNames())
	}
	rel, ok := clientSkillDirs[client]
	if !ok {
		return "", fmt.Errorf("unknown client %q: one of %s, or --dir", client, clientNames())
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no home folder for --client: %w", err)
	}
	return filepath.Join(home, rel), nil
}

// installSkills writes each skill's SKILL.md under dir. Every file is
// checked before any is written: an install that refuses writes nothing.
func installSkills(cmd *cobra.Command, dir string, sk []skills.Skill, force bool) error {
	type plan struct {
		path  string
		body  []byte
		state string // "new", "same", "changed"
	}
	var plans []plan
	var changed []string
	for _, s := range sk {
		p := plan{path: filepath.Join(dir, s.Name, "SKILL.md"), body: s.Body, state: "new"}
		old, err := os.ReadFile(p.path)
		switch {
		case err == nil && bytes.Equal(old, s.Body):
			p.state = "same"
		case err == nil:
			p.state = "changed"
			changed = append(changed, p.path)
		case !errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("read %s: %w", p.path, err)
		}
		plans = append(plans, p)
	}
	if len(changed) > 0 && !force {
		return fmt.Errorf("these files differ from this version's skills and were left as they are (nothing was written; --force replaces them):\n  %s",
			strings.Join(changed, "\n  "))
	}
	out := cmd.OutOrStdout()
	for _, p := range plans {
		if p.state == "same" {
			fmt.Fprintf(out, "unchanged %s\n", p.path)
			continue
		}
		if err := writeFileAtomic(p.path, p.body); err != nil {
			return err
		}
		verb := "wrote"
		if p.state == "changed" {
			verb = "replaced"
		}
		fmt.Fprintf(out, "%s %s\n", verb, p.path)
	}
	return nil
}

// writeFileAtomic writes path through a temporary file in its folder, so
// that a client never reads half a skill.
func writeFileAtomic(path string, body []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".SKILL.md-*")
	if err != nil {
		return err
	}
	_, werr := f.Write(body)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
