package document

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/kernelview"
	"github.com/sisyphus-go/sisyphus/internal/tools/tplguard"
)

type dailyArgs struct {
	Notebook string `arg:"notebook" help:"the notebook" id:"" required:""`
	App      string `arg:"app" help:"optional SiYuan app id the kernel's created-note event is addressed to"`
}

// createDailyNote hands its readback the note's id typed, not through the
// payload's "id".
var createDailyNote = tools.WriteWith[dailyArgs, kernelview.DailyTarget, string]{Write: tools.Write[dailyArgs, kernelview.DailyTarget]{
	Name: "create_daily_note", Summary: "today's daily note of a notebook, created at the notebook's daily-note path " +
		"(dailyNoteSavePath, with its dailyNoteTemplatePath body) unless it exists; a second call the same day answers the same note. " +
		"Prefer it to creating a dated document by hand for a diary, journal or daily log",
	Policy:  strict.WritePolicy{Class: strict.Additive},
	Example: map[string]any{"notebook": "20260812115959-nbnbnbn", "validateOnly": true},
	Scope:   tools.Scope[dailyArgs]{Touches: func(a dailyArgs) []tools.Touch { return []tools.Touch{tools.OnNotebook(a.Notebook, tools.LevelWrite)} }},
	Targets: func(a dailyArgs) []string { return []string{a.Notebook} },
	State: func(ctx context.Context, env *tools.Env, a dailyArgs) (kernelview.DailyTarget, error) {
		t, err := kernelview.ReadDailyTarget(ctx, env, a.Notebook)
		if err == nil && !t.Missing {
			// Creating the note renders the notebook's templates.
			err = tplguard.CheckDailyNote(ctx, env, t.SavePath, t.Template)
		}
		return t, err
	},
	Check: func(_ dailyArgs, st kernelview.DailyTarget) error { return st.Check() },
},
	Execute: func(ctx context.Context, env *tools.Env, a dailyArgs, _ kernelview.DailyTarget) (tools.Payload, string, error) {
		id, err := env.Kernel.CreateDailyNote(ctx, a.Notebook, a.App)
		if err != nil {
			return nil, "", tools.WriteFailure(err, false)
		}
		return tools.Payload{"id": id, "notebook": a.Notebook}, id, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a dailyArgs, p tools.Payload, id string) (any, error) {
		note, err := tools.Await(ctx, func(ctx context.Context) (kernelview.DailyNoteAt, error) {
			return kernelview.ReadDailyNote(ctx, env, id)
		}, func(n kernelview.DailyNoteAt) error { return n.Of(a.Notebook) })
		if err != nil {
			return nil, err
		}
		p["hPath"], p["path"], p["date"] = note.HPath, note.Path, note.Date
		return note, nil
	},
}

// ---- duplicate ------------------------------------------------------------

// DupState is what document.duplicate guards: the source document (its
// place and its block state).
type DupState = DocState

// duplicated is what duplicate hands its readback: the source's state
// before the copy (what the copy must not change) and the copy's id,
// typed rather than read back from the payload's "id".
type duplicated struct {
	Before DupState
	ID     string
}

var duplicate = tools.WriteWith[sourceArgs, DupState, duplicated]{Write: tools.Write[sourceArgs, DupState]{
	Name: "duplicate", Summary: "copy a document (without its child documents) next to it, with new block ids and the title " +
		"\"<title> (Duplicated <time>)\"; the answer's id is the copy",
	Policy:  guarded,
	Example: map[string]any{"id": "20260812120000-docdocd", "validateOnly": true},
	Scope:   tools.Scope[sourceArgs]{Touches: func(a sourceArgs) []tools.Touch { return []tools.Touch{tools.OnBlock(a.ID, tools.LevelWrite)} }},
	Targets: func(a sourceArgs) []string { return []string{a.ID} },
	State: func(ctx context.Context, env *tools.Env, a sourceArgs) (DupState, error) {
		return readDocState(ctx, env, a.ID, false)
	},
	Check: func(_ sourceArgs, st DupState) error {
		switch {
		case st.Missing:
			return failure.Missing("document", st.ID)
		case st.NotDocument:
			// SiYuan would copy the whole document holding the block.
			return failure.Invalid("id %s is a block inside a document, not a document; pass the document's id", st.ID)
		}
		return nil
	},
},
	// The source's state hands the readback what the copy must not change.
	Execute: func(ctx context.Context, env *tools.Env, a sourceArgs, st DupState) (tools.Payload, duplicated, error) {
		d, err := env.Kernel.DuplicateDoc(ctx, a.ID)
		if err != nil {
			return nil, duplicated{Before: st}, tools.WriteFailure(err, false)
		}
		return tools.Payload{"id": d.ID, "sourceID": a.ID, "notebook": d.Notebook, "path": d.Path}, duplicated{st, d.ID}, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a sourceArgs, p tools.Payload, dup duplicated) (any, error) {
		id, before := dup.ID, dup.Before
		copyState, err := tools.Await(ctx, func(ctx context.Context) (DupState, error) { return readDocState(ctx, env, id, false) },
			func(st DupState) error {
				if st.Missing || st.NotDocument {
					return fmt.Errorf("the copy %s is not a document", id)
				}
				return nil
			})
		if err != nil {
			return nil, err
		}
		src, err := readDocState(ctx, env, a.ID, false)
		if err != nil {
			return nil, err
		}
		changed, err := differ(before, src)
		if err != nil {
			return nil, err
		}
		if changed {
			return nil, fmt.Errorf("the source %s changed while it was copied", a.ID)
		}
		if err := sameContent(ctx, env, a.ID, id); err != nil {
			return nil, err
		}
		if copyState.Notebook != src.Notebook || path.Dir(copyState.Path) != path.Dir(src.Path) {
			return nil, fmt.Errorf("the copy %s is at %s, not beside %s", id, copyState.Path, src.Path)
		}
		p["hPath"] = copyState.HPath
		// The copy's state, as upstream re-targets its probe at the new id.
		return copyState, nil
	},
}

var (
	nodeIDRe  = regexp.MustCompile(`\d{14}-[0-9a-z]{7}`)
	blockIDRe = regexp.MustCompile(`\bid="(\d{14}-[0-9a-z]{7})"`)
	// SiYuan drops database and flashcard bindings from a copy.
	unboundRe = regexp.MustCompile(` ?\b(?:custom-avs|custom-sy-av-view|custom-sy-av-s-text-[^=]*|custom-riff-decks)="[^"]*"`)
)

// sameContent requires dst to hold src's body under new ids: the same
// kramdown once every id is masked (references to the document's own
// blocks follow the copy), and no block id in common.
func sameContent(ctx context.Context, env *tools.Env, src, dst string) error {
	a, err := env.Kernel.GetBlockKramdown(ctx, src)
	if err != nil {
		return err
	}
	b, err := env.Kernel.GetBlockKramdown(ctx, dst)
	if err != nil {
		return err
	}
	body := func(k string) string {
		k = kernelview.NormalizeKramdown(k)
		if i := strings.LastIndex(k, "\n{:"); i >= 0 {
			k = k[:i] // the document's own attributes: its new id and title
		}
		return nodeIDRe.ReplaceAllString(unboundRe.ReplaceAllString(k, ""), "ID")
	}
	if body(a.Kramdown) != body(b.Kramdown) {
		return fmt.Errorf("the copy %s does not hold the source's blocks", dst)
	}
	ids := map[string]bool{}
	for _, m := range blockIDRe.FindAllStringSubmatch(a.Kramdown, -1) {
		ids[m[1]] = true
	}
	for _, m := range blockIDRe.FindAllStringSubmatch(b.Kramdown, -1) {
		if ids[m[1]] {
			return fmt.Errorf("the copy %s reuses block id %s", dst, m[1])
		}
	}
	return nil
}

// differ reports whether two states of a document differ, as their JSON
// shows them.
func differ(before, after DupState) (bool, error) {
	b, err := json.Marshal(before)
	if err != nil {
		return false, fmt.Errorf("encode the state before: %w", err)
	}
	a, err := json.Marshal(after)
	if err != nil {
		return false, fmt.Errorf("encode the state after: %w", err)
	}
	return !bytes.Equal(a, b), nil
}
