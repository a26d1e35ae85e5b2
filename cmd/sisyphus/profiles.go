package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

// Profile names one SiYuan kernel and the state dir of its authority, so a
// person who runs several workspaces says --profile NAME instead of three
// flags.
type Profile struct {
	SiYuanURL   string `json:"siyuanUrl,omitempty"`
	SiYuanToken string `json:"siyuanToken,omitempty"`
	StateDir    string `json:"stateDir,omitempty"`
}

// profileFile is the person's profiles file: it holds SiYuan API tokens, so
// it is written 0600 and refused when others may read it.
type profileFile struct {
	Profiles map[string]Profile `json:"profiles"`
}

// profilesPath is $XDG_CONFIG_HOME/sisyphus/profiles.json (os.UserConfigDir:
// ~/.config on Linux, ~/Library/Application Support on macOS, %AppData% on
// Windows); SISYPHUS_PROFILES names another file.
func profilesPath() (string, error) {
	if p := os.Getenv("SISYPHUS_PROFILES"); p != "" {
		return p, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("find the configuration directory for profiles: %w", err)
	}
	return filepath.Join(dir, "sisyphus", "profiles.json"), nil
}

// loadProfiles reads the profiles file; a missing one is empty. One that
// others can read is refused, not repaired: its tokens may already have
// been copied, and the person should know (and reset them in SiYuan).
func loadProfiles() (profileFile, string, error) {
	pf := profileFile{Profiles: map[string]Profile{}}
	path, err := profilesPath()
	if err != nil {
		return pf, "", err
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return pf, path, nil
	}
	if err != nil {
		return pf, path, fmt.Errorf("read profiles: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return pf, path, fmt.Errorf("read profiles: %w", err)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 && !windows() {
		return pf, path, fmt.Errorf("refusing to read %s: it holds SiYuan tokens and others may read it (mode %04o); "+
			"run chmod 600 %s (and reset the tokens in SiYuan if someone else could have read them)", path, perm, path)
	}
	if err := json.NewDecoder(f).Decode(&pf); err != nil {
		return pf, path, fmt.Errorf("read profiles %s: %w", path, err)
	}
	if pf.Profiles == nil {
		pf.Profiles = map[string]Profile{}
	}
	return pf, path, nil
}

// save writes the profiles file atomically with mode 0600.
func (pf profileFile) save(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("save profiles: %w", err)
	}
	data, _ := json.MarshalIndent(pf, "", "  ")
	tmp, err := os.CreateTemp(filepath.Dir(path), ".profiles-*")
	if err != nil {
		return fmt.Errorf("save profiles: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(append(data, '\n'))
	for _, err := range []error{tmp.Chmod(0o600), werr, tmp.Sync(), tmp.Close(), os.Rename(tmp.Name(), path)} {
		if err != nil {
			return fmt.Errorf("save profiles: %w", err)
		}
	}
	return nil
}

var profileNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

func newProfileCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "profile",
		Short: "Keep named SiYuan kernels (URL, token, state dir) and use one with --profile NAME",
		Long: `A profile names a SiYuan kernel (its URL and API token) and the state dir of the Sisyphus
authority serving it. Every command takes --profile NAME (env SISYPHUS_PROFILE); a flag given on
the command line wins over the profile, and the profile over the environment (SIYUAN_URL,
SIYUAN_TOKEN, SISYPHUS_STATE_DIR).

Profiles are kept in profiles.json in your configuration directory (~/.config/sisyphus on Linux;
SISYPHUS_PROFILES names another file), mode 0600: a file others may read is refused.

Examples:
  sisyphus profile add work --siyuan-url http://127.0.0.1:6806 --siyuan-token TOKEN
  sisyphus profile list
  sisyphus --profile work doctor`,
	}
	var p Profile
	add := &cobra.Command{
		Use: "add NAME", Short: "Add or replace a profile", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !profileNameRE.MatchString(args[0]) {
				return fmt.Errorf("profile name %q: use letters, digits, '.', '_' or '-' (at most 64)", args[0])
			}
			if p.SiYuanURL == "" && p.StateDir == "" {
				return errors.New("give at least --siyuan-url or --state-dir")
			}
			if p.SiYuanURL != "" {
				if problem := badKernelURL(p.SiYuanURL); problem != "" {
					return errors.New(problem)
				}
			}
			if p.StateDir != "" {
				abs, err := filepath.Abs(p.StateDir)
				if err != nil {
					return err
				}
				p.StateDir = abs
			}
			pf, path, err := loadProfiles()
			if err != nil {
				return err
			}
			_, existed := pf.Profiles[args[0]]
			pf.Profiles[args[0]] = p
			if err := pf.save(path); err != nil {
				return err
			}
			verb := "added"
			if existed {
				verb = "replaced"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s profile %s in %s\n", verb, args[0], path)
			return nil
		},
	}
	add.Flags().StringVar(&p.SiYuanURL, "siyuan-url", "", "the SiYuan kernel's URL")
	add.Flags().StringVar(&p.SiYuanToken, "siyuan-token", os.Getenv("SIYUAN_TOKEN"), "its API token (default: env SIYUAN_TOKEN)")
	add.Flags().StringVar(&p.StateDir, "state-dir", "", "the state dir of the Sisyphus authority serving it")
	list := &cobra.Command{
		Use: "list", Short: "List the profiles (tokens hidden)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pf, path, err := loadProfiles()
			if err != nil {
				return err
			}
			if len(pf.Profiles) == 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "no profiles (in %s); add one with sisyphus profile add NAME --siyuan-url URL\n", path)
				return nil
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "PROFILE\tSIYUAN URL\tTOKEN\tSTATE DIR")
			for _, name := range sortedNames(pf.Profiles) {
				p := pf.Profiles[name]
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", name, orDash1(p.SiYuanURL), hidden(p.SiYuanToken), orDash1(p.StateDir))
			}
			return tw.Flush()
		},
	}
	show := &cobra.Command{
		Use: "show NAME", Short: "Print one profile as JSON (token hidden)", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			pf, _, err := loadProfiles()
			if err != nil {
				return err
			}
			p, ok := pf.Profiles[args[0]]
			if !ok {
				return fmt.Errorf("no profile %q (sisyphus profile list)", args[0])
			}
			p.SiYuanToken = hidden(p.SiYuanToken)
			b, _ := json.MarshalIndent(p, "", "  ")
			fmt.Fprintln(cmd.OutOrStdout(), string(b))
			return nil
		},
	}
	remove := &cobra.Command{
		Use: "remove NAME", Short: "Remove a profile", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			pf, path, err := loadProfiles()
			if err != nil {
				return err
			}
			if _, ok := pf.Profiles[args[0]]; !ok {
				return fmt.Errorf("no profile %q (sisyphus profile list)", args[0])
			}
			delete(pf.Profiles, args[0])
			if err := pf.save(path); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "removed profile %s from %s\n", args[0], path)
			return nil
		},
	}
	cmd.AddCommand(add, list, show, remove)
	return cmd
}

func sortedNames(m map[string]Profile) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func hidden(tok string) string {
	if tok == "" {
		return "-"
	}
	return "(set)"
}

func orDash1(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
