package file

import (
	"context"
	"net/url"
	"regexp"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// audit_image_refs is an import's acceptance check: did the images of the
// source Markdown arrive in the SiYuan document? It compares the
// references the caller expects with the document's own image
// destinations (SiYuan's getDocImageAssets: every image of the document,
// in order, duplicates and remote ones included). It reads no local file
// and repairs nothing.

// maxExpectedRefs is upstream 0.6.8's bound on expectedRefs.
const maxExpectedRefs = 4096

type auditRefsArgs struct {
	ID       string   `arg:"id" help:"the document (or a block of it) whose image references are compared" id:"" required:""`
	Expected []string `arg:"expectedRefs" help:"the image references the source Markdown holds (up to 4096: assets/x.png, a URL), compared by file name, never read; SiYuan's -<timestamp>-<id> suffix, a query and a fragment are ignored, %-escapes decoded (upstream: as written)" required:""`
}

func (a *auditRefsArgs) check() error {
	if len(a.Expected) > maxExpectedRefs {
		return failure.Invalid("expectedRefs holds %d references; at most %d", len(a.Expected), maxExpectedRefs)
	}
	for i, r := range a.Expected {
		if r == "" {
			return failure.Invalid("expectedRefs[%d] is empty", i)
		}
	}
	return nil
}

var auditImageRefs = tools.Read[auditRefsArgs]{
	Name: "audit_image_refs", Summary: "compare the image references an import expects (expectedRefs, from its source Markdown) with the images a document holds: " +
		"which are missing and which are extra, matched by file name (SiYuan's -<timestamp>-<id> suffix ignored), each occurrence once; reads no local file, repairs nothing",
	Example:  map[string]any{"id": "20260812120000-abcdefg", "expectedRefs": []string{"assets/cover.png", "assets/figure.png"}},
	Validate: (*auditRefsArgs).check,
	Scope:    tools.Scope[auditRefsArgs]{Touches: func(a auditRefsArgs) []tools.Touch { return []tools.Touch{tools.OnBlock(a.ID, tools.LevelRead)} }},
	Run: func(ctx context.Context, env *tools.Env, a auditRefsArgs) (any, error) {
		actual, err := env.Kernel.GetDocImageAssets(ctx, a.ID)
		if treeMissing(err) {
			return nil, failure.Missing("document", a.ID)
		}
		if err != nil {
			return nil, err
		}
		actual = nonEmptyRefs(actual)
		missing := unmatchedRefs(a.Expected, actual)
		extra := unmatchedRefs(actual, a.Expected)
		return map[string]any{
			"id": a.ID, "expectedRefs": nonEmptyRefs(a.Expected), "actualRefs": actual, "missingRefs": missing, "extraRefs": extra,
			"expectedCount": len(a.Expected), "actualCount": len(actual), "ok": len(missing) == 0 && len(extra) == 0,
			"comparison": "each occurrence matched once by file name; SiYuan's -<timestamp>-<7 chars> suffix, queries, fragments and percent-encoding ignored",
		}, nil
	},
}

// nonEmptyRefs is refs without empty ones, never nil (answered as []).
func nonEmptyRefs(refs []string) []string {
	out := make([]string, 0, len(refs))
	for _, r := range refs {
		if r != "" {
			out = append(out, r)
		}
	}
	return out
}

// siyuanSuffix is what SiYuan appends to an uploaded file's name:
// -<yyyyMMddHHmmss>-<7 lowercase letters or digits>.
var siyuanSuffix = regexp.MustCompile(`-\d{14}-[a-z0-9]{7}$`)

// refKey is what two references must share to match: the file name
// without a query or fragment, decoded, without SiYuan's suffix.
func refKey(ref string) string {
	if i := strings.IndexAny(ref, "?#"); i >= 0 {
		ref = ref[:i]
	}
	ref = ref[strings.LastIndexAny(ref, `/\`)+1:]
	if d, err := url.PathUnescape(ref); err == nil {
		ref = d
	}
	stem, ext := ref, ""
	if i := strings.LastIndex(ref, "."); i > 0 {
		stem, ext = ref[:i], ref[i:]
	}
	return siyuanSuffix.ReplaceAllString(stem, "") + ext
}

// unmatchedRefs are the references of refs left once each reference of
// against has matched at most one of them, in refs' order: a multiset
// difference by refKey, so a reference given twice needs two.
func unmatchedRefs(refs, against []string) []string {
	left := map[string]int{}
	for _, r := range against {
		if r != "" {
			left[refKey(r)]++
		}
	}
	out := []string{}
	for _, r := range refs {
		if r == "" {
			continue
		}
		k := refKey(r)
		if left[k] > 0 {
			left[k]--
			continue
		}
		out = append(out, r)
	}
	return out
}
