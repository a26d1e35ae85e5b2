package system

import (
	"context"
	"regexp"
	"strconv"
	"strings"

	"github.com/sisyphus-go/sisyphus/docs"
	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// changelog: this server's own changelog (docs/CHANGELOG.md, built into
// the binary), parsed into entries as upstream parses its bundled one.

// ChangelogEntry is one "## <version> - <date>" section.
type ChangelogEntry struct {
	Version string   `json:"version"`
	Date    string   `json:"date,omitempty"`
	Title   string   `json:"title"`
	Items   []string `json:"items"`
	Raw     string   `json:"rawMarkdown,omitempty"`
}

var versionHeading = regexp.MustCompile(`(?m)^##[ \t]+(v?[0-9][^\s]*)[ \t]*(?:-[ \t]*(.+?))?[ \t]*$`)

// ParseChangelog splits a changelog into its version sections, newest
// first as written.
func ParseChangelog(md string) []ChangelogEntry {
	locs := versionHeading.FindAllStringSubmatchIndex(md, -1)
	out := make([]ChangelogEntry, 0, len(locs))
	for i, l := range locs {
		end := len(md)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		raw := strings.TrimSpace(md[l[0]:end])
		e := ChangelogEntry{Version: normVersion(md[l[2]:l[3]]), Title: strings.TrimSpace(md[l[0]:l[1]]), Raw: raw, Items: []string{}}
		if l[4] >= 0 {
			e.Date = strings.TrimSpace(md[l[4]:l[5]])
		}
		for _, line := range strings.Split(raw, "\n") {
			if item, ok := strings.CutPrefix(strings.TrimSpace(line), "- "); ok && strings.TrimSpace(item) != "" {
				e.Items = append(e.Items, strings.TrimSpace(item))
			}
		}
		out = append(out, e)
	}
	return out
}

func normVersion(v string) string {
	return strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(v), "v"), "V")
}

// CompareVersions orders dotted versions numerically part by part
// ("0.0.0-dev.10" after "0.0.0-dev.9"); a part that is not a number sorts
// as 0.
func CompareVersions(a, b string) int {
	pa, pb := strings.FieldsFunc(normVersion(a), sep), strings.FieldsFunc(normVersion(b), sep)
	for i := 0; i < max(len(pa), len(pb), 3); i++ {
		x, y := part(pa, i), part(pb, i)
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

func sep(r rune) bool { return r == '.' || r == '-' }

func part(p []string, i int) int {
	if i >= len(p) {
		return 0
	}
	n, err := strconv.Atoi(p[i])
	if err != nil {
		return 0
	}
	return n
}

type changelogArgs struct {
	Version     string `arg:"version" help:"one exact version, e.g. 0.0.0-dev.2"`
	FromVersion string `arg:"fromVersion" help:"the version you knew: entries newer than it"`
	Limit       int    `arg:"limit" help:"entries at most (without version)" default:"5" min:"1" max:"50"`
	IncludeRaw  bool   `arg:"includeRaw" help:"add each entry's Markdown" default:"false"`
}

var changelog = tools.Read[changelogArgs]{
	Name:    "changelog",
	Summary: "this server's changelog (built into the binary): the newest entries, one version, or what is newer than fromVersion",
	Example: map[string]any{"limit": 2},
	Scope:   tools.Scope[changelogArgs]{None: true},
	Validate: func(c *changelogArgs) error {
		c.Version, c.FromVersion = strings.TrimSpace(c.Version), strings.TrimSpace(c.FromVersion)
		if c.Version != "" && c.FromVersion != "" {
			return failure.Invalid("give version or fromVersion, not both")
		}
		return nil
	},
	Run: func(ctx context.Context, env *tools.Env, a changelogArgs) (any, error) {
		return changelogAnswer(docs.Changelog, env.Version, a)
	},
}

func changelogAnswer(md, current string, a changelogArgs) (map[string]any, error) {
	all := ParseChangelog(md)
	var picked []ChangelogEntry
	switch {
	case a.Version != "":
		for _, e := range all {
			if e.Version == normVersion(a.Version) {
				picked = append(picked, e)
			}
		}
		if len(picked) == 0 {
			e := failure.New(failure.NotFound, "the changelog has no version %s", a.Version)
			e.Action = `call {"action":"changelog"} for the newest versions`
			return nil, e
		}
	case a.FromVersion != "":
		for _, e := range all {
			if CompareVersions(e.Version, a.FromVersion) > 0 {
				picked = append(picked, e)
			}
		}
		picked = picked[:min(len(picked), a.Limit)]
	default:
		picked = all[:min(len(all), a.Limit)]
	}
	versions := make([]string, len(all))
	for i, e := range all {
		versions[i] = e.Version
	}
	if !a.IncludeRaw {
		for i := range picked {
			picked[i].Raw = ""
		}
	}
	if picked == nil {
		picked = []ChangelogEntry{}
	}
	return map[string]any{
		"source": "docs/CHANGELOG.md (built into this binary)", "serverVersion": current,
		"latestVersion": first(versions), "availableVersions": versions, "entries": picked, "total": len(all),
	}, nil
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}
