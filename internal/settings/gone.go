package settings

import (
	"context"
	"fmt"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// A notebook the person hid and then removed in SiYuan leaves its none
// entry behind; counted as hiding, it would keep everything that cannot be
// filtered by notebook (SQL, index templates, workspace-wide writes)
// refused for good. But SiYuan's lsNotebooks also leaves out, for a while,
// a notebook it still has: one whose .siyuan/conf.json it cannot read or
// parse (a sync writing it, a half-written file) is skipped, while the
// index keeps its blocks and getPathByID still places its documents. Such
// a notebook must keep hiding. So a hidden notebook is gone only when
// SiYuan does not list it and its index holds no block of it; its entry
// stays none either way (tools.Policy.Gone).

// verdictFor is how long what the kernel said about a hidden notebook is
// kept, as long as the authority keeps the configuration it read: a front
// (which reads the configuration on every call) asks the kernel once per
// period, not once per call.
const verdictFor = 2 * time.Second

// verdict is what the kernel said about one hidden notebook, and when.
type verdict struct {
	gone bool
	at   time.Time
}

// gone returns which of the hidden notebooks (sorted) SiYuan no longer
// has. A verdict younger than verdictFor is reused; the others cost one
// lsNotebooks, and one query of the index for each hidden notebook it does
// not list (normally none). A lookup that fails leaves its notebooks
// hiding, and is asked again by the next call.
func (s *Store) gone(ctx context.Context, hidden []string) []string {
	if len(hidden) == 0 {
		return nil
	}
	s.placesMu.Lock()
	defer s.placesMu.Unlock()
	now := s.now()
	keep := make(map[string]verdict, len(hidden))
	var ask []string
	for _, id := range hidden {
		if v, ok := s.places[id]; ok && now.Sub(v.at) < verdictFor && !now.Before(v.at) {
			keep[id] = v
		} else {
			ask = append(ask, id)
		}
	}
	if len(ask) > 0 {
		for id, v := range s.place(ctx, ask, now) {
			keep[id] = v
		}
	}
	s.places = keep // only the notebooks hidden now: the map stays small
	var out []string
	for _, id := range hidden {
		if keep[id].gone {
			out = append(out, id)
		}
	}
	return out
}

// place asks the kernel about hidden notebooks: the verdict of each it
// could decide (one it could not is left out, so it hides).
func (s *Store) place(ctx context.Context, ids []string, now time.Time) map[string]verdict {
	nbs, err := s.kernel.ListNotebooks(ctx)
	if err != nil {
		return nil
	}
	listed := make(map[string]bool, len(nbs))
	for _, n := range nbs {
		listed[n.ID] = true
	}
	out := make(map[string]verdict, len(ids))
	for _, id := range ids {
		switch {
		case listed[id]:
			out[id] = verdict{at: now}
		case tools.CheckID("notebook", id) != nil:
			// Not an id: no notebook of SiYuan's is named so (its
			// folders are ids), and it is never put into SQL.
			out[id] = verdict{gone: true, at: now}
		default:
			indexed, err := s.indexes(ctx, id)
			if err == nil {
				out[id] = verdict{gone: !indexed, at: now}
			}
		}
	}
	return out
}

// indexes reports whether SiYuan's index holds a block of a notebook (id
// checked by the caller: nothing to escape).
func (s *Store) indexes(ctx context.Context, notebook string) (bool, error) {
	rows, err := s.kernel.QuerySQL(ctx, "SELECT box FROM blocks WHERE box = '"+notebook+"' LIMIT 1")
	if err != nil {
		return false, fmt.Errorf("look up notebook %s in the index: %w", notebook, err)
	}
	return len(rows) > 0, nil
}
