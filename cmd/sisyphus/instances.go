package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/sisyphus-go/sisyphus/internal/authority"
)

// instance is one SiYuan kernel found listening on this machine.
type instance struct {
	URL       string   `json:"url"`
	Version   string   `json:"version"`
	Workspace string   `json:"workspace,omitempty"`
	Profiles  []string `json:"profiles,omitempty"`
	// Authority is the state dir whose running authority serves this
	// kernel, when one of the known state dirs says so.
	Authority string `json:"authority,omitempty"`
	// NeedsToken: the kernel answered its version but would not name its
	// workspace without a token none of the profiles holds.
	NeedsToken bool `json:"needsToken,omitempty"`
}

func newInstancesCmd(g *globalFlags) *cobra.Command {
	var (
		asJSON  bool
		ports   string
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "instances",
		Short: "List the SiYuan kernels running on this machine, their workspaces and versions, and which profile matches",
		Long: `Find the SiYuan kernels listening on this machine's loopback (the listening TCP ports in
/proc/net/tcp and /proc/net/tcp6 on Linux; elsewhere, or with --ports, a port range) by asking each
port for /api/system/version, then the workspace each serves (/api/system/getWorkspaceInfo, with
the token of a profile or of a running authority naming that URL when the kernel asks for one).
Embedded kernels (sisyphus kernel, sisyphus serve --embedded) count. Each line says which profiles
name the kernel and which state dir's authority serves it: with several kernels running, pick the
one whose workspace you mean, so that a token is never sent to the wrong workspace's kernel.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			var candidates []int
			if ports != "" {
				lo, hi, err := parsePortRange(ports)
				if err != nil {
					return err
				}
				for p := lo; p <= hi; p++ {
					candidates = append(candidates, p)
				}
			} else {
				candidates = listeningLoopbackPorts()
				if candidates == nil {
					for p := 6806; p <= 6906; p++ {
						candidates = append(candidates, p)
					}
				}
			}
			pf, _, err := loadProfiles()
			if err != nil {
				return err
			}
			found := findInstances(ctx, candidates, knownKernels(pf))
			if asJSON {
				if found == nil {
					found = []instance{}
				}
				b, _ := json.MarshalIndent(found, "", "  ")
				fmt.Fprintln(cmd.OutOrStdout(), string(b))
				return nil
			}
			if len(found) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "no SiYuan kernel is listening on this machine's loopback (start SiYuan, or sisyphus serve --embedded DIR)")
				return nil
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "URL\tVERSION\tWORKSPACE\tPROFILE\tAUTHORITY STATE DIR")
			for _, in := range found {
				ws := in.Workspace
				if in.NeedsToken {
					ws = "? (it wants a token: add a profile with it)"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", in.URL, in.Version, orDash1(ws), orDash1(strings.Join(in.Profiles, ", ")), orDash1(in.Authority))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the kernels as JSON")
	cmd.Flags().StringVar(&ports, "ports", "", "scan this loopback port range instead (e.g. 6806-6906)")
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Second, "give up after this long")
	return cmd
}

// knownKernel is a kernel URL some profile or authority names, with the
// token it was given.
type knownKernel struct {
	identity, token, profile, stateDir string
}

// knownKernels are the kernels the profiles name, and those the authorities
// of the profiles' and the default state dirs serve.
func knownKernels(pf profileFile) []knownKernel {
	var ks []knownKernel
	dirs := map[string]bool{defaultStateDir(): true}
	for _, name := range sortedNames(pf.Profiles) {
		p := pf.Profiles[name]
		if p.SiYuanURL != "" {
			ks = append(ks, knownKernel{identity: authority.KernelIdentity(p.SiYuanURL), token: p.SiYuanToken, profile: name})
		}
		if p.StateDir != "" {
			dirs[p.StateDir] = true
		}
	}
	for dir := range dirs {
		if acc, err := authority.ReadKernelAccess(dir); err == nil {
			ks = append(ks, knownKernel{identity: authority.KernelIdentity(acc.URL), token: acc.Token, stateDir: dir})
		}
	}
	return ks
}

// findInstances asks every port, eight at a time, whether a SiYuan kernel
// answers there, and what workspace it serves.
func findInstances(ctx context.Context, ports []int, known []knownKernel) []instance {
	var (
		mu    sync.Mutex
		found []instance
		wg    sync.WaitGroup
		slots = make(chan struct{}, 8)
	)
	client := &http.Client{Timeout: 2 * time.Second}
	for _, port := range ports {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			in, ok := probeKernel(ctx, client, fmt.Sprintf("http://127.0.0.1:%d", port), known)
			if ok {
				mu.Lock()
				found = append(found, in)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	sort.Slice(found, func(i, j int) bool { return found[i].URL < found[j].URL })
	return found
}

// probeKernel asks url for SiYuan's version (public) and workspace (public
// on SiYuan 3.7.3 from loopback; the embedded kernel wants the token).
func probeKernel(ctx context.Context, client *http.Client, url string, known []knownKernel) (instance, bool) {
	var ver string
	if code, err := kernelPost(ctx, client, url+"/api/system/version", "", &ver); err != nil || code != 0 || ver == "" {
		return instance{}, false
	}
	in := instance{URL: url, Version: ver}
	id := authority.KernelIdentity(url)
	tokens := []string{""}
	for _, k := range known {
		if k.identity != id {
			continue
		}
		if k.profile != "" {
			in.Profiles = append(in.Profiles, k.profile)
		}
		if k.stateDir != "" {
			in.Authority = k.stateDir
		}
		if k.token != "" {
			tokens = append(tokens, k.token)
		}
	}
	for _, tok := range tokens {
		var ws struct {
			WorkspaceDir string `json:"workspaceDir"`
		}
		if code, err := kernelPost(ctx, client, url+"/api/system/getWorkspaceInfo", tok, &ws); err == nil && code == 0 && ws.WorkspaceDir != "" {
			in.Workspace = ws.WorkspaceDir
			return in, true
		}
	}
	in.NeedsToken = true
	return in, true
}

// kernelPost posts {} to a kernel endpoint and decodes SiYuan's envelope.
func kernelPost(ctx context.Context, client *http.Client, url, token string, data any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader("{}"))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Token "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var env struct {
		Code int             `json:"code"`
		Data json.RawMessage `json:"data"`
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&env); err != nil {
		return 0, err
	}
	if env.Code == 0 {
		if err := json.Unmarshal(env.Data, data); err != nil {
			return 0, err
		}
	}
	return env.Code, nil
}

// listeningLoopbackPorts are the TCP ports listening on a loopback or
// unspecified address, from /proc/net/tcp and tcp6 (nil where there is no
// /proc).
func listeningLoopbackPorts() []int {
	var ports []int
	seen := map[int]bool{}
	read := false
	for _, name := range []string{"tcp", "tcp6"} {
		f, err := os.Open(filepath.Join("/proc", "net", name))
		if err != nil {
			continue
		}
		read = true
		for _, p := range parseProcNetTCP(f) {
			if !seen[p] {
				seen[p] = true
				ports = append(ports, p)
			}
		}
		f.Close()
	}
	if !read {
		return nil
	}
	sort.Ints(ports)
	if ports == nil {
		ports = []int{}
	}
	return ports
}

// parseProcNetTCP reads the listening ports (state 0A) bound to loopback
// or to every address from a /proc/net/tcp or tcp6 table.
func parseProcNetTCP(r io.Reader) []int {
	var ports []int
	sc := bufio.NewScanner(r)
	first := true
	for sc.Scan() {
		if first {
			first = false
			continue // the header
		}
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || fields[3] != "0A" {
			continue
		}
		addr, portHex, ok := strings.Cut(fields[1], ":")
		if !ok {
			continue
		}
		port, err := strconv.ParseUint(portHex, 16, 16)
		if err != nil || port == 0 {
			continue
		}
		switch addr {
		case "0100007F", "00000000", // 127.0.0.1, 0.0.0.0
			"00000000000000000000000001000000", "00000000000000000000000000000000", // ::1, ::
			"0000000000000000FFFF00000100007F": // ::ffff:127.0.0.1
			ports = append(ports, int(port))
		}
	}
	return ports
}

// parsePortRange reads "LO-HI" or "PORT".
func parsePortRange(s string) (lo, hi int, err error) {
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		b = a
	}
	lo, err1 := strconv.Atoi(strings.TrimSpace(a))
	hi, err2 := strconv.Atoi(strings.TrimSpace(b))
	if err1 != nil || err2 != nil || lo < 1 || hi > 65535 || lo > hi || hi-lo > 4096 {
		return 0, 0, fmt.Errorf("--ports %q: want LO-HI (1-65535, at most 4096 ports) or one port", s)
	}
	return lo, hi, nil
}
