package main

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sisyphus-go/sisyphus/internal/authority"
)

func newAdminTokenCmd() *cobra.Command {
	var stateDir string
	cmd := &cobra.Command{
		Use:   "admin-token",
		Short: "Print the admin token: the person's, for the settings page and sisyphus config, never an agent's",
		Long: `Print the admin token of the state dir. It is the person's credential, not an agent's: it signs
in to the settings page (/settings) and lets sisyphus config read and change what agents may do
(GET and POST /config). Never put it in an agent's configuration. Agents get the bearer token
instead (the one sisyphus serve prints in its client configurations), which the settings page and
/config refuse; the admin token is refused in turn on the agents' routes (/mcp, /tasks, /health,
/transfer/*).

It is kept in the state dir's admin-token file (mode 0600), created once by sisyphus serve, or by
this command when it is missing, and read only from there: no flag or environment variable carries
it, because a flag shows in process lists and agents started from your shell inherit its
environment. To replace it, remove the file and restart sisyphus serve.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tok, created, loosened, err := authority.EnsureAdminToken(stateDir)
			if err != nil {
				return err
			}
			path := authority.AdminTokenPath(stateDir)
			if loosened {
				fmt.Fprintf(cmd.ErrOrStderr(), "sisyphus: %s was readable by others; its mode is now 0600 (remove it and restart sisyphus serve for a new token)\n", path)
			}
			if created {
				note := ""
				if _, err := authority.ReadRecord(stateDir); err == nil {
					note = "; the sisyphus serve running on this state dir uses it once restarted"
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "sisyphus: created the admin token in %s%s\n", path, note)
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), tok)
			return err
		},
	}
	cmd.Flags().StringVar(&stateDir, "state-dir", defaultStateDir(), "state dir of the authority (where its admin-token file is kept)")
	return cmd
}

// adminToken returns the state dir's admin token for the authority,
// created when missing, and refuses to start when it is the agents' bearer
// token: every agent would then hold the person's credential.
func adminToken(log *slog.Logger, stateDir, bearer string) (string, error) {
	tok, created, loosened, err := authority.EnsureAdminToken(stateDir)
	if err != nil {
		return "", err
	}
	path := authority.AdminTokenPath(stateDir)
	if tok == bearer {
		return "", fmt.Errorf("the bearer token agents use is the admin token in %s: give serve another --token (or SISYPHUS_TOKEN), or remove %s so that serve makes a new admin token", path, path)
	}
	if created {
		log.Info("created the admin token, the person's credential for the settings page and sisyphus config", "file", path)
	}
	if loosened {
		log.Warn("the admin token's file was readable by others; its mode is now 0600 (remove it and restart for a new token)", "file", path)
	}
	return tok, nil
}

// adminTokenCommand is the command that prints the admin token of
// stateDir, as the person would type it.
func adminTokenCommand(stateDir string) string {
	if stateDir == defaultStateDir() {
		return "sisyphus admin-token"
	}
	if abs, err := filepath.Abs(stateDir); err == nil {
		stateDir = abs
	}
	return "sisyphus admin-token --state-dir " + shellQuote(stateDir)
}

// shellQuote is s as a POSIX shell reads it back: unchanged when it holds
// only characters no shell treats specially, else single-quoted.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./+:,@%=") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
