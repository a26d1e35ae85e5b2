package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
)

// invalid is an argument refusal found while executing: nothing was sent to
// the kernel, and the agent sees invalid_arguments with writeAttempted false.
func invalid(format string, a ...any) error {
	return asInvalid(badArg(format, a...))
}

// asInvalid turns a validation error (a *Error from badArg) into the
// Execute-time refusal; other errors pass unchanged.
func asInvalid(err error) error {
	var te *Error
	if errors.As(err, &te) && te.Code == CodeInvalidArguments {
		return &strict.Failure{Code: CodeInvalidArguments, Message: te.Message, Cause: strict.Reject(te)}
	}
	return err
}

// preflighting reports whether the call is a validateOnly preflight: only
// then do state readers refuse targets that are missing or arguments that
// do not fit the live state; at commit a difference must show as
// state_changed instead.
func preflighting(a *Args) bool { return a.Bool(fieldValidateOnly) }

// readbackWaits are the delays between readback attempts: the kernel indexes
// some writes asynchronously.
var readbackWaits = []time.Duration{0, 50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}

// poll runs check after each wait until it reports done; a check error ends
// polling with that error (a failed read never proves anything).
func poll(ctx context.Context, check func() (bool, error)) (bool, error) {
	for _, w := range readbackWaits {
		if err := sleepCtx(ctx, w); err != nil {
			return false, err
		}
		done, err := check()
		if err != nil {
			return false, err
		}
		if done {
			return true, nil
		}
	}
	return false, nil
}

// notebookEntry is a notebook's lsNotebooks entry without the flashcard
// counts, which change with the clock.
type notebookEntry struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Icon         string `json:"icon"`
	Sort         int    `json:"sort"`
	SortMode     int    `json:"sortMode"`
	Closed       bool   `json:"closed"`
	SubFileCount int    `json:"subFileCount"`
	Encrypted    bool   `json:"encrypted"`
	Unlocked     bool   `json:"unlocked"`
}

// confState is a notebook's conf without the opaque encryption parameters
// (never changed by these actions), as the state hashes it.
func confState(c siyuan.BoxConf) siyuan.BoxConf {
	c.BoxCrypt = nil
	return c
}

// NotebookState is the guarded state of a notebook: its lsNotebooks entry
// and its configuration.
type NotebookState struct {
	ID      string          `json:"id"`
	Missing bool            `json:"missing,omitempty"`
	Entry   *notebookEntry  `json:"entry,omitempty"`
	Conf    *siyuan.BoxConf `json:"conf,omitempty"`
}

// readNotebookState reads a notebook's entry and conf concurrently. A
// notebook absent from a successful lsNotebooks is {missing:true}; any
// failed read fails the state.
func readNotebookState(ctx context.Context, env *Env, id string) (NotebookState, error) {
	var (
		wg          sync.WaitGroup
		nbs         []siyuan.Notebook
		conf        siyuan.NotebookConf
		lErr, cErr  error
		confMissing bool
	)
	wg.Add(2)
	go func() { defer wg.Done(); nbs, lErr = env.Kernel.ListNotebooks(ctx) }()
	go func() {
		defer wg.Done()
		conf, cErr = env.Kernel.GetNotebookConf(ctx, id)
		if cErr != nil && notebookErr(id, cErr) != cErr {
			confMissing, cErr = true, nil
		}
	}()
	wg.Wait()
	if lErr != nil {
		return NotebookState{}, lErr
	}
	var entry *notebookEntry
	for _, n := range nbs {
		if n.ID == id {
			entry = &notebookEntry{n.ID, n.Name, n.Icon, n.Sort, n.SortMode, n.Closed, n.SubFileCount, n.Encrypted, n.Unlocked}
		}
	}
	if entry == nil {
		return NotebookState{ID: id, Missing: true}, nil
	}
	if cErr != nil {
		return NotebookState{}, cErr
	}
	if confMissing {
		return NotebookState{}, fmt.Errorf("notebook %s is listed but its conf is not found", id)
	}
	c := confState(conf.Conf)
	return NotebookState{ID: id, Entry: entry, Conf: &c}, nil
}

// notebookGuard is the State of a guarded notebook action: the notebook
// must exist at preflight.
func notebookGuard(ctx context.Context, env *Env, a *Args) (any, error) {
	id := a.String("notebook")
	if err := checkID("notebook", id); err != nil {
		return nil, err
	}
	st, err := readNotebookState(ctx, env, id)
	if err != nil {
		return nil, err
	}
	if st.Missing && preflighting(a) {
		return nil, notFound("notebook", id)
	}
	return st, nil
}

func notebookTarget(a *Args) []string { return []string{a.String("notebook")} }

// normalizeTitle mirrors SiYuan's normalizeDocTitle (notebook names and
// document titles): no "/", no invisible or private-use characters, NBSP
// as a space, trimmed.
func normalizeTitle(s string) string {
	s = strings.ReplaceAll(s, "/", "")
	s = strings.ReplaceAll(s, "\u00a0", " ")
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\u200d': // kept: emoji sequences need the zero-width joiner
			return r
		case r == '\u200b' || r == '\u200c' || r == '\ufeff' || r == '\u2060':
			return -1
		case r >= 0xe000 && r <= 0xf8ff, r >= 0xf0000 && r <= 0xffffd, r >= 0x100000 && r <= 0x10fffd:
			return -1
		case !unicode.IsPrint(r) && r != '\u3000':
			return -1
		}
		return r
	}, s)
	return strings.TrimSpace(s)
}

// settableConf are the notebook conf fields set_conf accepts, with their
// JSON types. closed is changed with set_open_state; encryption never.
var settableConf = map[string]string{
	"name": "string", "sort": "number", "icon": "string", "sortMode": "number",
	"refCreateSaveBox": "string", "refCreateSavePath": "string", "docCreateSaveBox": "string", "docCreateSavePath": "string",
	"dailyNoteSavePath": "string", "dailyNoteTemplatePath": "string",
}

func confPatch(a *Args) (map[string]any, error) {
	patch := a.Object("conf")
	if len(patch) == 0 {
		return nil, badArg("conf must name at least one field")
	}
	for k, v := range patch {
		kind, ok := settableConf[k]
		if !ok {
			if k == "closed" {
				return nil, badArg("conf.closed is changed with set_open_state")
			}
			return nil, badArg("conf.%s cannot be set (settable: name, icon, sort, sortMode, refCreateSaveBox, refCreateSavePath, docCreateSaveBox, docCreateSavePath, dailyNoteSavePath, dailyNoteTemplatePath)", k)
		}
		switch kind {
		case "string":
			if _, ok := v.(string); !ok {
				return nil, badArg("conf.%s must be a string", k)
			}
		case "number":
			f, ok := v.(float64)
			if !ok || f != float64(int(f)) {
				return nil, badArg("conf.%s must be an integer", k)
			}
			if k == "sortMode" && (f < 0 || f > 15) {
				return nil, badArg("conf.sortMode must be 0..15")
			}
		}
	}
	if n, ok := patch["name"].(string); ok && normalizeTitle(n) == "" {
		return nil, badArg("conf.name must not be empty")
	}
	if p, ok := patch["dailyNoteSavePath"].(string); ok && strings.TrimSpace(p) == "/" {
		return nil, badArg("conf.dailyNoteSavePath cannot be /")
	}
	return patch, nil
}

// applyConf sets the patch's fields on c.
func applyConf(c *siyuan.BoxConf, patch map[string]any) {
	for k, v := range patch {
		s, _ := v.(string)
		f, _ := v.(float64)
		switch k {
		case "name":
			c.Name = s
		case "sort":
			c.Sort = int(f)
		case "icon":
			c.Icon = s
		case "sortMode":
			c.SortMode = int(f)
		case "refCreateSaveBox":
			c.RefCreateSaveBox = s
		case "refCreateSavePath":
			c.RefCreateSavePath = s
		case "docCreateSaveBox":
			c.DocCreateSaveBox = s
		case "docCreateSavePath":
			c.DocCreateSavePath = s
		case "dailyNoteSavePath":
			c.DailyNoteSavePath = s
		case "dailyNoteTemplatePath":
			c.DailyNoteTemplatePath = s
		}
	}
}

// confField is one conf field as JSON would show it.
func confField(c siyuan.BoxConf, k string) any {
	switch k {
	case "name":
		return c.Name
	case "sort":
		return float64(c.Sort)
	case "icon":
		return c.Icon
	case "sortMode":
		return float64(c.SortMode)
	case "refCreateSaveBox":
		return c.RefCreateSaveBox
	case "refCreateSavePath":
		return c.RefCreateSavePath
	case "docCreateSaveBox":
		return c.DocCreateSaveBox
	case "docCreateSavePath":
		return c.DocCreateSavePath
	case "dailyNoteSavePath":
		return c.DailyNoteSavePath
	case "dailyNoteTemplatePath":
		return c.DailyNoteTemplatePath
	}
	return nil
}

// confMatches reports whether a conf field reads back as requested: the
// value as sent, or as SiYuan normalises it on setNotebookConf (spaces
// trimmed in each path segment, a leading "/" on the daily note paths and
// ".md" on the template; a name as SiYuan normalises titles).
func confMatches(k string, want, got any) bool {
	if got == want {
		return true
	}
	s, ok := want.(string)
	if !ok {
		return false
	}
	if k == "name" {
		return got == normalizeTitle(s)
	}
	parts := strings.Split(s, "/")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
	}
	s = strings.Join(parts, "/")
	if s != "" {
		switch k {
		case "dailyNoteTemplatePath":
			if !strings.HasSuffix(s, ".md") {
				s += ".md"
			}
			fallthrough
		case "dailyNoteSavePath":
			if !strings.HasPrefix(s, "/") {
				s = "/" + s
			}
		}
	}
	return got == s
}

// notebookReadback polls the notebook's state until want accepts it.
func notebookReadback(ctx context.Context, env *Env, id string, want func(NotebookState) error) (any, error) {
	var st NotebookState
	var last error
	ok, err := poll(ctx, func() (bool, error) {
		var err error
		if st, err = readNotebookState(ctx, env, id); err != nil {
			return false, err
		}
		last = want(st)
		return last == nil, nil
	})
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, last
	}
	return st, nil
}

func notebookWriteActions() []*Action {
	guarded := strict.Policy{Class: strict.Mutation, Precondition: strict.ExpectedStateHash}
	nbParam := idParam("notebook", "the notebook", true)
	return []*Action{
		{
			Name: "create", Summary: "create a notebook (name, optional icon); duplicate names are allowed", Policy: strict.Policy{Class: strict.Additive},
			Params: []Param{
				{Name: "name", Type: String, Description: "the notebook's name", Required: true},
				{Name: "icon", Type: String, Description: "an emoji code point in hex, like 1f4d4"},
			},
			Write: &Write{
				Execute: func(ctx context.Context, env *Env, a *Args) (map[string]any, error) {
					if normalizeTitle(a.String("name")) == "" {
						return nil, invalid("name must not be empty")
					}
					nb, err := env.Kernel.CreateNotebook(ctx, a.String("name"))
					if err != nil {
						return nil, writeErr(err, false)
					}
					if nb.ID == "" {
						return nil, errors.New("the kernel answered createNotebook without a notebook id")
					}
					out := map[string]any{"notebook": nb.ID}
					if icon := a.String("icon"); icon != "" {
						if err := env.Kernel.SetNotebookIcon(ctx, nb.ID, icon); err != nil {
							// The notebook exists already: not a clean rejection.
							return nil, writeErr(fmt.Errorf("notebook %s created, setting its icon failed: %w", nb.ID, err), true)
						}
					}
					return out, nil
				},
				Readback: func(ctx context.Context, env *Env, a *Args, p map[string]any) (any, error) {
					id, _ := p["notebook"].(string)
					name, icon := normalizeTitle(a.String("name")), a.String("icon")
					return notebookReadback(ctx, env, id, func(st NotebookState) error {
						switch {
						case st.Missing:
							return fmt.Errorf("notebook %s does not appear in lsNotebooks", id)
						case st.Entry.Name != name:
							return fmt.Errorf("notebook %s reads back a different name", id)
						case icon != "" && st.Conf.Icon != icon:
							return fmt.Errorf("notebook %s reads back icon %q, want %q", id, st.Conf.Icon, icon)
						}
						return nil
					})
				},
			},
		},
		{
			Name: "rename", Summary: "rename a notebook", Policy: guarded,
			Params: []Param{nbParam, {Name: "name", Type: String, Description: "the new name", Required: true}},
			Write: &Write{
				Targets: notebookTarget,
				State: func(ctx context.Context, env *Env, a *Args) (any, error) {
					if normalizeTitle(a.String("name")) == "" {
						return nil, badArg("name must not be empty")
					}
					return notebookGuard(ctx, env, a)
				},
				Execute: func(ctx context.Context, env *Env, a *Args) (map[string]any, error) {
					id := a.String("notebook")
					if err := checkID("notebook", id); err != nil {
						return nil, asInvalid(err)
					}
					if normalizeTitle(a.String("name")) == "" {
						return nil, invalid("name must not be empty")
					}
					if err := env.Kernel.RenameNotebook(ctx, id, a.String("name")); err != nil {
						return nil, writeErr(err, false)
					}
					return map[string]any{"notebook": id}, nil
				},
				Readback: func(ctx context.Context, env *Env, a *Args, p map[string]any) (any, error) {
					id, name := a.String("notebook"), normalizeTitle(a.String("name"))
					return notebookReadback(ctx, env, id, func(st NotebookState) error {
						if st.Missing || st.Entry.Name != name || st.Conf.Name != name {
							return fmt.Errorf("notebook %s does not read back the new name", id)
						}
						return nil
					})
				},
			},
		},
		{
			Name: "remove", Summary: "delete a notebook and every document in it (SiYuan keeps a copy in its history)", Policy: guarded, Destructive: true,
			Params: []Param{nbParam},
			Write: &Write{
				Targets: notebookTarget,
				State:   notebookGuard,
				Execute: func(ctx context.Context, env *Env, a *Args) (map[string]any, error) {
					id := a.String("notebook")
					if err := checkID("notebook", id); err != nil {
						return nil, asInvalid(err)
					}
					if err := env.Kernel.RemoveNotebook(ctx, id); err != nil {
						return nil, writeErr(err, false)
					}
					return map[string]any{"notebook": id, "removed": true}, nil
				},
				Readback: func(ctx context.Context, env *Env, a *Args, p map[string]any) (any, error) {
					// Proof of removal is absence from a successful listing,
					// never a failed read.
					id := a.String("notebook")
					return notebookReadback(ctx, env, id, func(st NotebookState) error {
						if !st.Missing {
							return fmt.Errorf("notebook %s is still listed", id)
						}
						return nil
					})
				},
			},
		},
		{
			Name: "set_conf", Summary: "change notebook settings (conf: name, icon, sort, sortMode, doc/ref create save box and path, daily note save and template path)", Policy: guarded,
			Params: []Param{nbParam, {Name: "conf", Type: Object, Description: "the fields to change; the others keep their values", Required: true}},
			Write: &Write{
				Targets: notebookTarget,
				State: func(ctx context.Context, env *Env, a *Args) (any, error) {
					if _, err := confPatch(a); err != nil {
						return nil, err
					}
					return notebookGuard(ctx, env, a)
				},
				Execute: func(ctx context.Context, env *Env, a *Args) (map[string]any, error) {
					id := a.String("notebook")
					if err := checkID("notebook", id); err != nil {
						return nil, asInvalid(err)
					}
					patch, err := confPatch(a)
					if err != nil {
						return nil, asInvalid(err)
					}
					// The client sends a whole conf: start from the stored one.
					cur, err := env.Kernel.GetNotebookConf(ctx, id)
					if err != nil {
						return nil, strict.Reject(notebookErr(id, err))
					}
					conf := cur.Conf
					applyConf(&conf, patch)
					if _, err := env.Kernel.SetNotebookConf(ctx, id, conf); err != nil {
						return nil, writeErr(err, false)
					}
					return map[string]any{"notebook": id, "fields": len(patch)}, nil
				},
				Readback: func(ctx context.Context, env *Env, a *Args, p map[string]any) (any, error) {
					id := a.String("notebook")
					patch, _ := confPatch(a)
					return notebookReadback(ctx, env, id, func(st NotebookState) error {
						if st.Missing {
							return fmt.Errorf("notebook %s is gone", id)
						}
						for k, v := range patch {
							if got := confField(*st.Conf, k); !confMatches(k, v, got) {
								return fmt.Errorf("conf.%s reads back %v, want %v", k, got, v)
							}
						}
						return nil
					})
				},
			},
		},
		{
			Name: "set_open_state", Summary: "open or close a notebook", Policy: guarded,
			Params: []Param{nbParam, {Name: "opened", Type: Boolean, Description: "true opens, false closes", Required: true}},
			Write: &Write{
				Targets: notebookTarget,
				State:   notebookGuard,
				Execute: func(ctx context.Context, env *Env, a *Args) (map[string]any, error) {
					id := a.String("notebook")
					if err := checkID("notebook", id); err != nil {
						return nil, asInvalid(err)
					}
					var err error
					if a.Bool("opened") {
						err = env.Kernel.OpenNotebook(ctx, id)
					} else {
						err = env.Kernel.CloseNotebook(ctx, id)
					}
					if err != nil {
						return nil, writeErr(err, false)
					}
					return map[string]any{"notebook": id, "opened": a.Bool("opened")}, nil
				},
				Readback: func(ctx context.Context, env *Env, a *Args, p map[string]any) (any, error) {
					id, opened := a.String("notebook"), a.Bool("opened")
					return notebookReadback(ctx, env, id, func(st NotebookState) error {
						if st.Missing {
							return fmt.Errorf("notebook %s is gone", id)
						}
						if st.Entry.Closed == opened {
							return fmt.Errorf("notebook %s reads back closed=%v", id, st.Entry.Closed)
						}
						return nil
					})
				},
			},
		},
	}
}
