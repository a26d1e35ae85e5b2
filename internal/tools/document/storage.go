package document

import (
	"fmt"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// A document can also be named the way upstream 0.6.8's rename, remove and
// move name it: by its storage path (/20240318112233-abc123.sy, or
// /<parent id>/<id>.sy under a parent), optionally with its notebook. The
// last segment of a storage path is the document's id, which is unique in
// the workspace, so the path resolves to an id without a read; the state
// read then proves the document is really there (the path is checked
// against where the document lives, never trusted), and the write itself
// goes by id, with every check an id call gets.

// storageRef is a document named by storage path: where the call says it
// lives. Notebook is "" when the call did not say (paths[] and fromPaths
// may name documents in any notebook).
type storageRef struct {
	ID, Notebook, Path string
}

// docAtPath reads a storage path: the id of the document it names, or a
// refusal naming the argument.
func docAtPath(name, p string) (string, error) {
	bad := failure.Invalid("%s must be a document's storage path like /20260812120000-abcdefg.sy or /20260812120000-parentx/20260812120000-abcdefg.sy (document lookup answers it), got %q", name, p)
	if !strings.HasPrefix(p, "/") || !strings.HasSuffix(p, ".sy") {
		return "", bad
	}
	segs := strings.Split(strings.TrimSuffix(p[1:], ".sy"), "/")
	for _, s := range segs {
		if tools.CheckID(name, s) != nil {
			return "", bad
		}
	}
	return segs[len(segs)-1], nil
}

// refsAtPaths reads storage paths (argument name, in notebook nb when nb
// is not "") into the ids they name and the places the call expects.
func refsAtPaths(name, nb string, paths []string) ([]string, []storageRef, error) {
	ids := make([]string, 0, len(paths))
	refs := make([]storageRef, 0, len(paths))
	for i, p := range paths {
		id, err := docAtPath(fmt.Sprintf("%s[%d]", name, i), p)
		if err != nil {
			return nil, nil, err
		}
		ids = append(ids, id)
		refs = append(refs, storageRef{ID: id, Notebook: nb, Path: p})
	}
	return ids, refs, nil
}

// checkAt refuses a document that is not where the call said it is: the
// storage path (and notebook, when given) did not resolve to it.
func checkAt(l docLoc, at storageRef) error {
	if l.Missing || l.NotDocument || l.Path != at.Path || at.Notebook != "" && l.Notebook != at.Notebook {
		if at.Notebook != "" {
			return failure.New(failure.NotFound, "no document at storage path %s in notebook %s", at.Path, at.Notebook)
		}
		return failure.New(failure.NotFound, "no document at storage path %s", at.Path)
	}
	return nil
}

// checkAll refuses when a document named by storage path is not there
// (states are read by id, sorted: matched here by id).
func checkAll(sts []DocState, at []storageRef) error {
	byID := make(map[string]docLoc, len(sts))
	for _, st := range sts {
		byID[st.ID] = st.docLoc
	}
	for _, ref := range at {
		if err := checkAt(byID[ref.ID], ref); err != nil {
			return err
		}
	}
	return nil
}
