package main

import (
	"fmt"
	"os"
	"runtime"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The one place where a command's SiYuan URL, SiYuan token, embedded
// workspace and state dir are decided, for every command that has those
// flags (the generated tool CLI included): a flag given on the command line,
// else the --profile's value, else the environment, else the default. A
// front given none of the kernel's (no flag, profile or environment) then
// follows the authority of its state dir (kernelFlags.follow).

// sourceAnnotation records on a flag where its value came from: "flag",
// "profile NAME", "env" or "default".
const sourceAnnotation = "sisyphus-source"

// resolvedFlag is one flag the resolver decides.
type resolvedFlag struct {
	name    string
	env     string
	profile func(Profile) string
}

var resolvedFlags = []resolvedFlag{
	{"siyuan-url", "SIYUAN_URL", func(p Profile) string { return p.SiYuanURL }},
	{"siyuan-token", "SIYUAN_TOKEN", func(p Profile) string { return p.SiYuanToken }},
	{"embedded", "SISYPHUS_EMBEDDED", func(Profile) string { return "" }},
	{"state-dir", "SISYPHUS_STATE_DIR", func(p Profile) string { return p.StateDir }},
}

// resolveFlags applies the profile named (if any) to cmd's flags not given
// on the command line and annotates each with its source. The root command
// calls it before every subcommand; a command built elsewhere calls it with
// its own flag set and the --profile value:
//
//	if err := resolveFlags(cmd.Flags(), profileName); err != nil { ... }
//
// then reads its --siyuan-url, --siyuan-token, --embedded and --state-dir
// as usual.
func resolveFlags(fs *pflag.FlagSet, profileName string) error {
	var prof Profile
	if profileName != "" {
		pf, path, err := loadProfiles()
		if err != nil {
			return err
		}
		p, ok := pf.Profiles[profileName]
		if !ok {
			return fmt.Errorf("--profile %s: no such profile in %s (sisyphus profile list)", profileName, path)
		}
		prof = p
	}
	for _, rf := range resolvedFlags {
		f := fs.Lookup(rf.name)
		if f == nil {
			continue
		}
		src := "default"
		switch v := rf.profile(prof); {
		case f.Changed:
			src = "flag"
		case v != "":
			if err := f.Value.Set(v); err != nil {
				return fmt.Errorf("profile %s: %s: %w", profileName, rf.name, err)
			}
			src = "profile " + profileName
		case os.Getenv(rf.env) != "":
			src = "env"
		}
		if f.Annotations == nil {
			f.Annotations = map[string][]string{}
		}
		f.Annotations[sourceAnnotation] = []string{src}
	}
	return nil
}

// flagSource is where the resolver took fs's flag name from ("" when it
// did not see it).
func flagSource(fs *pflag.FlagSet, name string) string {
	if f := fs.Lookup(name); f != nil && len(f.Annotations[sourceAnnotation]) == 1 {
		return f.Annotations[sourceAnnotation][0]
	}
	return ""
}

// persistentResolve is the root command's PersistentPreRunE.
func (g *globalFlags) persistentResolve(cmd *cobra.Command, _ []string) error {
	if p := cmd.Parent(); p != nil && p.Name() == "profile" {
		return nil // profile add's flags are the profile's, not resolved from one
	}
	return resolveFlags(cmd.Flags(), g.profile)
}

func windows() bool { return runtime.GOOS == "windows" }
