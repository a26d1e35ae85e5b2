package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sisyphus-go/sisyphus/internal/authority"
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
			if problem := badKernelURL(url); problem != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "FAIL  %s\n", problem)
				return errors.New("doctor found problems")
			}
			c, err := siyuan.New(siyuan.Config{BaseURL: url, Token: token, Logger: g.logger(), ReadAttempts: 1})
			if err != nil {
				fmt.Fprintf(cmd.OutOrStdout(), "FAIL  --siyuan-url %q is not a usable address: %v\n", url, err)
				return errors.New("doctor found problems")
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
		fail("%s", unreachable(ctx, url, err))
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

// badKernelURL says in plain words what is wrong with a kernel address that
// is not an http(s) URL ("" when it is one).
func badKernelURL(raw string) string {
	u, err := neturl.Parse(strings.TrimSpace(raw))
	switch {
	case err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "":
		return ""
	case !strings.Contains(raw, "://"):
		return fmt.Sprintf("--siyuan-url %q has no scheme: write it as a URL, like http://%s", raw, strings.TrimPrefix(raw, "//"))
	}
	return fmt.Sprintf("--siyuan-url %q is not an http:// or https:// URL, like http://127.0.0.1:6806", raw)
}

// unreachable explains why the kernel's version could not be read: nothing
// listening, something that is not SiYuan (a Sisyphus server, say), or a
// transport failure.
func unreachable(ctx context.Context, url string, err error) string {
	var st *siyuan.StatusError
	if errors.As(err, &st) {
		if isSisyphus(ctx, url) {
			return fmt.Sprintf("%s is a Sisyphus server (sisyphus serve), not a SiYuan kernel.\n"+
				"      Pass SiYuan's own address (its API port, 6806 by default) with --siyuan-url.", url)
		}
		return fmt.Sprintf("%s answers HTTP %d to SiYuan's API (/api/system/version): it is not a SiYuan kernel, or not its API port.\n"+
			"      Pass the address SiYuan's kernel listens on (6806 by default) with --siyuan-url.", url, st.Status)
	}
	var de *siyuan.DecodeError
	if errors.As(err, &de) {
		return fmt.Sprintf("%s answers, but not as a SiYuan kernel does (its reply is not SiYuan's JSON).\n"+
			"      Pass the address SiYuan's kernel listens on (6806 by default) with --siyuan-url.", url)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("SiYuan at %s did not answer in time. Is it busy or still starting? Try again, or raise --timeout.", url)
	}
	return fmt.Sprintf("cannot reach SiYuan at %s: nothing answers there (%v).\n      Is SiYuan running? Start it, or pass --siyuan-url (env SIYUAN_URL) with the kernel's address.", url, rootCause(err))
}

// isSisyphus tells whether url is a Sisyphus server: every one of its
// answers carries the Sisyphus-Server header.
func isSisyphus(ctx context.Context, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(url, "/")+"/health", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.Header.Get(authority.HeaderServer) != ""
}

// rootCause is the innermost error, without the client's wrapping.
func rootCause(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}
