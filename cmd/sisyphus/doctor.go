package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// minKernel is the oldest SiYuan kernel Sisyphus supports.
var minKernel = [2]int{3, 7}

func newDoctorCmd(g *globalFlags) *cobra.Command {
	var url, token string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the connection to SiYuan and say in plain words what is wrong",
		Long: `Check the configured SiYuan kernel: that it answers, that the token is accepted,
that its version is 3.7 or newer and that it has finished booting. Each failed check says
what is wrong and how to fix it. Exits non-zero when a check fails.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			c, err := siyuan.New(siyuan.Config{BaseURL: url, Token: token, Logger: g.logger(), ReadAttempts: 1})
			if err != nil {
				return err
			}
			if !runDoctor(ctx, cmd.OutOrStdout(), c, url, token) {
				return errors.New("doctor found problems")
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&url, "siyuan-url", envOr("SIYUAN_URL", "http://127.0.0.1:6806"), "the SiYuan kernel URL")
	cmd.Flags().StringVar(&token, "siyuan-token", envOr("SIYUAN_TOKEN", ""), "the SiYuan API token (Settings → About)")
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Second, "give up after this long")
	return cmd
}

// runDoctor prints one line per check and reports whether all passed.
func runDoctor(ctx context.Context, w io.Writer, c *siyuan.Client, url, token string) bool {
	ok := true
	pass := func(format string, a ...any) { fmt.Fprintf(w, "ok    "+format+"\n", a...) }
	fail := func(format string, a ...any) {
		ok = false
		fmt.Fprintf(w, "FAIL  "+format+"\n", a...)
	}

	ver, err := c.Version(ctx)
	if err != nil {
		fail("cannot reach SiYuan at %s: %v\n      Is SiYuan running? Start it, or pass --siyuan-url (env SIYUAN_URL) with the kernel's address.", url, err)
		return false
	}
	pass("SiYuan answers at %s", url)

	if major, minor, perr := parseVersion(ver); perr != nil {
		fail("SiYuan reports version %q, which is not a version number", ver)
	} else if major < minKernel[0] || major == minKernel[0] && minor < minKernel[1] {
		fail("SiYuan %s is too old: Sisyphus needs %d.%d or newer. Update SiYuan.", ver, minKernel[0], minKernel[1])
	} else {
		pass("SiYuan version %s (3.7 or newer)", ver)
	}

	bp, err := c.BootProgress(ctx)
	switch {
	case err != nil:
		fail("cannot read boot progress: %v", err)
	case bp.Progress < 100:
		fail("SiYuan is still booting (%d%%: %s). Wait until it has finished, then run doctor again.", bp.Progress, bp.Details)
	default:
		pass("SiYuan has finished booting")
	}

	nbs, err := c.ListNotebooks(ctx)
	var authErr *siyuan.AuthError
	switch {
	case errors.As(err, &authErr):
		if token == "" {
			fail("SiYuan refused the request without a token (HTTP %d).\n      Copy the API token from SiYuan → Settings → About and pass --siyuan-token (env SIYUAN_TOKEN).", authErr.Status)
		} else {
			fail("SiYuan refused the token (HTTP %d): %s\n      Copy the API token again from SiYuan → Settings → About; it changes when reset.", authErr.Status, authErr.Hint)
		}
	case err != nil:
		fail("cannot list notebooks: %v", err)
	default:
		open := 0
		for _, nb := range nbs {
			if !nb.Closed {
				open++
			}
		}
		pass("token accepted; %d notebooks (%d open)", len(nbs), open)
	}
	if ok {
		fmt.Fprintln(w, "All checks passed.")
	}
	return ok
}

func parseVersion(v string) (major, minor int, err error) {
	parts := strings.SplitN(strings.TrimPrefix(strings.TrimSpace(v), "v"), ".", 3)
	if len(parts) < 2 {
		return 0, 0, fmt.Errorf("version %q: want MAJOR.MINOR[.PATCH]", v)
	}
	if major, err = strconv.Atoi(parts[0]); err != nil {
		return 0, 0, fmt.Errorf("version %q: %w", v, err)
	}
	if minor, err = strconv.Atoi(parts[1]); err != nil {
		return 0, 0, fmt.Errorf("version %q: %w", v, err)
	}
	return major, minor, nil
}
