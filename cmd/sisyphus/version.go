package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version and commit are stamped at build time (scripts/release):
// -ldflags "-X main.version=v1.2.3 -X main.commit=<git commit>". They are
// only ever set by the linker.
var (
	version = "dev"
	commit  = ""
)

// buildVersion is the stamped version, else the module version go install
// recorded, with the commit: the stamped one, else the one the go tool
// recorded from the source checkout.
func buildVersion() string {
	v, rev := version, commit
	if info, ok := debug.ReadBuildInfo(); ok {
		if v == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v = info.Main.Version
		}
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && rev == "" {
				rev = s.Value
			}
		}
	}
	if len(rev) >= 12 {
		v += " (" + rev[:12] + ")"
	}
	return v
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of sisyphus",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(cmd.OutOrStdout(), "sisyphus %s %s/%s %s\n", buildVersion(), runtime.GOOS, runtime.GOARCH, runtime.Version())
			return nil
		},
	}
}
