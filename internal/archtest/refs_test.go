package archtest

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// outsideRef matches a reference to a document that is not in the
// repository: a shared folder beside it, or the seed specification the
// project grew from. A reader of the repository has neither, so code,
// comments and docs say in their own words what the project does and why.
// ("Seeded", a fuzz corpus's seeds and a random seed are other senses and
// do not match.)
var outsideRef = regexp.MustCompile(`(?i)(\.\./)?\bshared/|\bthe seed\b|\bseed's\b|(^|\s)\(seed\)|\bspec file\b`)

// thisFile holds the pattern itself.
const thisFile = "internal/archtest/refs_test.go"

// trackedFiles lists the repository's files: git's list where there is
// one, else every file outside dot folders (a source archive).
func trackedFiles(t *testing.T, root string) []string {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = root
	if out, err := cmd.Output(); err == nil {
		var files []string
		for _, f := range strings.Split(string(out), "\x00") {
			if f != "" {
				files = append(files, f)
			}
		}
		return files
	}
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// outsideRefs returns "line: text" for each line of data that refers
// outside the repository.
func outsideRefs(data []byte) []string {
	var found []string
	for i, line := range bytes.Split(data, []byte("\n")) {
		if outsideRef.Match(line) {
			found = append(found, fmt.Sprintf("%d: %s", i+1, bytes.TrimSpace(line)))
		}
	}
	return found
}

// TestNoReferencesOutsideRepository fails when a file of the repository
// cites a document the repository does not hold.
func TestNoReferencesOutsideRepository(t *testing.T) {
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	files := trackedFiles(t, root)
	if len(files) < 100 {
		t.Fatalf("found only %d files: the scan is broken", len(files))
	}
	for _, f := range files {
		if f == thisFile {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			if os.IsNotExist(err) { // deleted but not yet committed
				continue
			}
			t.Fatal(err)
		}
		if bytes.IndexByte(data, 0) >= 0 {
			continue // binary
		}
		for _, ref := range outsideRefs(data) {
			t.Errorf("%s:%s: refers to a document outside the repository; say it in the project's own words", f, ref)
		}
	}
}

// TestOutsideRefGuardCatchesReferences proves the guard is not vacuous and
// not too wide.
func TestOutsideRefGuardCatchesReferences(t *testing.T) {
	for _, bad := range []string{
		"the specification in `shared/spec/strict-safe-writes.txt`",
		"see ../shared/design/ARCHITECTURE.md",
		"// Codes of Strict Safe Writes: the seed's failure table.",
		"// Limits are the numbers of the Seed.",
		"| `state_changed` | tool result (seed) |",
		"as the spec file says",
	} {
		if len(outsideRefs([]byte(bad))) != 1 {
			t.Errorf("not caught: %s", bad)
		}
	}
	for _, fine := range []string{
		"// box returns the seeded notebook's id.",
		"for _, seed := range seeds {",
		"rand.New(rand.NewPCG(seed, seed))",
		"if e.Seed {",
		"the block's shared helpers",
		"Boot once to seed the demo",
		"f.Add(seed)",
	} {
		if refs := outsideRefs([]byte(fine)); len(refs) != 0 {
			t.Errorf("caught, but fine: %s", fine)
		}
	}
}
