package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"path/filepath"
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
	var (
		kf       kernelFlags
		stateDir string
		timeout  time.Duration
	)
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the connection to SiYuan and the running authority, and say in plain words what is wrong",
		Long: `Check the SiYuan kernel: that it answers, that the token is accepted, that its version is 3.7 or
newer and that it has finished booting; then the write authority of the state dir (sisyphus serve):
that it answers its /health and that the kernel it serves (its embedded kernel too) answers.

With no --siyuan-url or --embedded (flag, profile or environment), doctor checks the kernel the
state dir's running authority serves. A token refused on a port that answers is told apart from a
port where nothing answers: the first is often another workspace's kernel (sisyphus instances lists
them). Each failed check says what is wrong and how to fix it. Exits non-zero when a check fails.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			w := cmd.OutOrStdout()
			url, token := kf.url, kf.token
			if acc := kf.follow(stateDir); acc != nil {
				url, token = acc.URL, acc.Token
				fmt.Fprintf(w, "ok    checking the kernel the authority of %s serves: %s\n", stateDir, describeIdentity(acc.Identity))
			} else if kf.embedded != "" {
				fmt.Fprintf(w, "FAIL  no running authority of %s serves the embedded kernel on %s: start it with sisyphus serve --embedded %s\n", stateDir, kf.embedded, kf.embedded)
				return errors.New("doctor found problems")
			}
			if problem := badKernelURL(url); problem != "" {
				fmt.Fprintf(w, "FAIL  %s\n", problem)
				return errors.New("doctor found problems")
			}
			c, err := siyuan.New(siyuan.Config{BaseURL: url, Token: token, Logger: g.logger(), ReadAttempts: 1})
			if err != nil {
				fmt.Fprintf(w, "FAIL  --siyuan-url %q is not a usable address: %v\n", url, err)
				return errors.New("doctor found problems")
			}
			ok := runDoctor(ctx, w, c, url, token)
			if !checkAuthority(ctx, w, g, stateDir) {
				ok = false
			}
			if !ok {
				return errors.New("doctor found problems")
			}
			fmt.Fprintln(w, "All checks passed.")
			return nil
		},
	}
	kf.register(cmd)
	cmd.Flags().StringVar(&stateDir, "state-dir", defaultStateDir(), "state dir of the authority to check (its discovery record and token)")
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Second, "give up after this long")
	return cmd
}

// checkAuthority checks the authority recorded in stateDir: its /health,
// and the kernel it serves. No authority running is said, not failed:
// reads work without one.
func checkAuthority(ctx context.Context, w io.Writer, g *globalFlags, stateDir string) bool {
	rec, err := authority.ReadRecord(stateDir)
	if err != nil {
		fmt.Fprintf(w, "note  no write authority runs on %s: writes from stdio and sisyphus call are refused until sisyphus serve runs there\n", stateDir)
		return true
	}
	ff := frontFlags{stateDir: stateDir}
	if _, err := ff.delegator("", g.logger()).Health(ctx); err != nil {
		fmt.Fprintf(w, "FAIL  the write authority at %s (pid %d, state dir %s) does not answer its /health: %v\n      Restart sisyphus serve, or check the token in %s.\n",
			rec.URL, rec.PID, stateDir, rootCause(err), filepath.Join(stateDir, "token"))
		return false
	}
	fmt.Fprintf(w, "ok    the write authority answers at %s (pid %d, version %s)\n", rec.URL, rec.PID, rec.Version)
	acc, err := authority.ReadKernelAccess(stateDir)
	if err != nil {
		return true
	}
	kc, err := siyuan.New(siyuan.Config{BaseURL: acc.URL, Token: acc.Token, Logger: g.logger(), ReadAttempts: 1})
	if err == nil {
		_, err = kc.ListNotebooks(ctx)
	}
	if err != nil {
		fmt.Fprintf(w, "FAIL  the authority's kernel (%s) does not answer: %v\n", describeIdentity(acc.Identity), rootCause(err))
		return false
	}
	fmt.Fprintf(w, "ok    the authority's kernel answers (%s)\n", describeIdentity(acc.Identity))
	return true
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
			fail("SiYuan at %s answers but refused the token (HTTP %d): %s\n      The token is wrong for this kernel, or this port serves another workspace%s (sisyphus instances lists the kernels running here).\n      Copy the API token again from SiYuan → Settings → About of the workspace you mean; it changes when reset.", url, authErr.Status, authErr.Hint, servedWorkspace(ctx, url))
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

// servedWorkspace names the workspace a kernel says it serves, when it says
// so without a token (SiYuan 3.7.3 does from loopback), as " than X".
func servedWorkspace(ctx context.Context, url string) string {
	var ws struct {
		WorkspaceDir string `json:"workspaceDir"`
	}
	client := &http.Client{Timeout: 2 * time.Second}
	if code, err := kernelPost(ctx, client, strings.TrimRight(url, "/")+"/api/system/getWorkspaceInfo", "", &ws); err == nil && code == 0 && ws.WorkspaceDir != "" {
		return " (it serves " + ws.WorkspaceDir + ")"
	}
	return ""
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
