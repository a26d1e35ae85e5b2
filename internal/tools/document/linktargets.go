package document

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/markup"
)

// ensure_link_targets gives an import the documents its links point at,
// inside one explicit scope: the direct child documents of one parent
// document. A target is found only by its id, never by its title: titles
// repeat and change, and linking to the wrong note is silent. A title is
// taken only to create a new child, and a child that already has it
// refuses the creation rather than being adopted.
//
// resolve and reuse (and create with dryRun) are reads; create is a strict
// additive write, staged: one document per target, each with an id
// reserved before the first is sent, so a resume after a lost reply finds
// what was made instead of making it twice.

// linkMode is what ensure_link_targets does with its targets.
type linkMode string

// ArgEnum: the modes upstream 0.6.8 documents.
func (linkMode) ArgEnum() []string { return []string{"resolve", "reuse", "create"} }

// Bounds upstream 0.6.8 documents.
const (
	maxLinkTargets  = 100
	maxLinkKeyChars = 256
	maxLinkTitle    = 256
)

// linkTarget is one target as the call names it, checked.
type linkTarget struct {
	Key   string
	ID    string // resolve, reuse
	Title string // create: normalized as SiYuan stores titles
}

type linkTargetsArgs struct {
	Notebook string           `arg:"notebook" help:"the notebook holding parentId and every target" id:"" required:""`
	ParentID string           `arg:"parentId" help:"the parent document: only its direct child documents are link targets, hidden ones included (their titles are taken too)" id:"" required:""`
	Mode     linkMode         `arg:"mode" help:"resolve or reuse: check targets named by id (a read; the two differ only in the disposition answered); create: make a new child document per title, a strict additive write: preflight with validateOnly, then commit with its requestId (no hash: upstream 0.6.8 asks for expectedStructureHash). While a child already has one of the titles, create makes nothing (upstream 0.6.8 creates the other titles)" required:""`
	Targets  []map[string]any `arg:"targets" help:"1 to 100 objects {key, id, title}: key (1 to 256 characters, unique) names the target in the answer's linkMap and is never looked up as a title; id (resolve, reuse) an existing direct child document; title (create, 1 to 256 characters, no / or \\, unique) the new document's title, normalized as SiYuan stores titles. Keys other than these are refused (upstream 0.6.8 ignores them)" required:""`
	Markdown *string          `arg:"markdown" help:"create only: the body of every document created (existing targets are never edited)"`
	DryRun   bool             `arg:"dryRun" help:"create only: plan without creating (a read: which titles would be created, which are taken); the write's own preflight is validateOnly" default:"false"`
	// List is Targets checked.
	List []linkTarget
}

func (a *linkTargetsArgs) check() error {
	create := a.Mode == "create"
	if a.Markdown != nil && !create {
		return failure.Invalid("markdown is for mode create only: resolve and reuse never edit a target")
	}
	if a.DryRun && !create {
		return failure.Invalid("dryRun is for mode create only: resolve and reuse are reads already")
	}
	if len(a.Targets) == 0 || len(a.Targets) > maxLinkTargets {
		return failure.Invalid("targets must hold 1 to %d objects; got %d", maxLinkTargets, len(a.Targets))
	}
	keys, titles := map[string]bool{}, map[string]bool{}
	a.List = make([]linkTarget, 0, len(a.Targets))
	for i, raw := range a.Targets {
		t, err := parseLinkTarget(i, raw)
		if err != nil {
			return err
		}
		if keys[t.Key] {
			return failure.Invalid("targets[%d].key %q is given twice: keys must be unique", i, t.Key)
		}
		keys[t.Key] = true
		switch {
		case t.ID != "" && t.Title != "":
			return failure.Invalid("targets[%d] gives both id and title: give id (resolve, reuse) or title (create)", i)
		case create && t.Title == "":
			return failure.Invalid("targets[%d] has no title: mode create makes a document per title (to link to an existing document, use resolve or reuse with its id)", i)
		case !create && t.ID == "":
			return failure.Invalid("targets[%d] has no id: mode %s takes existing documents by id only, never by title", i, a.Mode)
		case create && titles[t.Title]:
			return failure.Invalid("targets[%d].title %q is given twice: titles to create must be unique", i, t.Title)
		}
		titles[t.Title] = true
		a.List = append(a.List, t)
	}
	return nil
}

// parseLinkTarget checks one object of targets.
func parseLinkTarget(i int, raw map[string]any) (linkTarget, error) {
	var t linkTarget
	str := func(name string) (string, bool, error) {
		v, ok := raw[name]
		if !ok || v == nil {
			return "", false, nil
		}
		s, isStr := v.(string)
		if !isStr {
			return "", true, failure.Invalid("targets[%d].%s must be a string", i, name)
		}
		return strings.TrimSpace(s), true, nil
	}
	for k := range raw {
		if k != "key" && k != "id" && k != "title" {
			return t, failure.Invalid("targets[%d] has %q: a target takes key, id and title only", i, k)
		}
	}
	key, _, err := str("key")
	if err != nil {
		return t, err
	}
	if n := utf8.RuneCountInString(key); n == 0 || n > maxLinkKeyChars {
		return t, failure.Invalid("targets[%d].key must be 1 to %d characters", i, maxLinkKeyChars)
	}
	t.Key = key
	id, given, err := str("id")
	if err != nil {
		return t, err
	}
	if given {
		if err := tools.CheckID("targets["+strconv.Itoa(i)+"].id", id); err != nil {
			return t, err
		}
		t.ID = id
	}
	title, given, err := str("title")
	if err != nil {
		return t, err
	}
	if given {
		if strings.ContainsAny(title, `/\`) {
			return t, failure.Invalid("targets[%d].title %q must be one document's title, without / or \\", i, title)
		}
		t.Title = markup.NormalizeTitle(title)
		if n := utf8.RuneCountInString(t.Title); n == 0 || n > maxLinkTitle {
			return t, failure.Invalid("targets[%d].title must be 1 to %d characters", i, maxLinkTitle)
		}
	}
	return t, nil
}

// touches: the notebook named and the parent's (the gate resolves it), at
// the level the form needs.
func (a linkTargetsArgs) touches(need tools.Level) []tools.Touch {
	return either([]string{a.Notebook, a.ParentID}, need)
}

// linkChild is one direct child document of the parent.
type linkChild struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Path  string `json:"path"`
}

// linkScope is the parent and its direct child documents: all a call of
// ensure_link_targets may answer or create.
type linkScope struct {
	Parent   docLoc      `json:"parent"`
	Children []linkChild `json:"children"`
}

func (s linkScope) child(id string) (linkChild, bool) {
	i := slices.IndexFunc(s.Children, func(c linkChild) bool { return c.ID == id })
	if i < 0 {
		return linkChild{}, false
	}
	return s.Children[i], true
}

func (s linkScope) titled(title string) bool {
	return slices.ContainsFunc(s.Children, func(c linkChild) bool { return c.Title == title })
}

// answer is the scope as upstream answers it.
func (s linkScope) answer() map[string]any {
	return map[string]any{"notebook": s.Parent.Notebook, "parentId": s.Parent.ID, "parentPath": s.Parent.Path, "parentHPath": s.Parent.HPath}
}

// readLinkScope reads the parent (a document in the notebook named) and
// lists its direct children, hidden ones included: a hidden child with a
// title still takes it.
func readLinkScope(ctx context.Context, env *tools.Env, a linkTargetsArgs) (linkScope, error) {
	loc, err := locateDoc(ctx, env, a.ParentID)
	switch {
	case err != nil:
		return linkScope{}, err
	case loc.Missing:
		return linkScope{}, failure.Missing("document", a.ParentID)
	case loc.NotDocument:
		return linkScope{}, failure.Invalid("parentId %s is a block inside a document, not a document", a.ParentID)
	case loc.Notebook != a.Notebook:
		return linkScope{}, failure.Invalid("parentId %s is not in notebook %s", a.ParentID, a.Notebook)
	}
	unlimited := 0
	list, err := env.Kernel.ListDocsByPath(ctx, siyuan.ListDocsRequest{Notebook: loc.Notebook, Path: loc.Path, MaxListCount: &unlimited, ShowHidden: true})
	if err != nil {
		return linkScope{}, err
	}
	st := linkScope{Parent: loc, Children: make([]linkChild, 0, len(list.Files))}
	for _, f := range list.Files {
		st.Children = append(st.Children, linkChild{ID: f.ID, Title: f.Name, Path: f.Path})
	}
	return st, nil
}

// linkResult is one target found or made, as upstream answers it.
type linkResult struct {
	Key         string `json:"key"`
	Disposition string `json:"disposition"`
	ID          string `json:"id"`
	Notebook    string `json:"notebook"`
	Path        string `json:"path"`
	HPath       string `json:"hPath"`
	Title       string `json:"title"`
}

// unresolvedTarget is a target the call could not give, and why.
type unresolvedTarget struct {
	Key    string `json:"key"`
	ID     string `json:"id,omitempty"`
	Title  string `json:"title,omitempty"`
	Reason string `json:"reason"`
}

// Reasons, as upstream 0.6.8 names them.
const (
	reasonNotChild   = "target_not_direct_child_of_explicit_parent"
	reasonTitleTaken = "same_title_child_requires_explicit_id"
)

// planned is a target create would make.
type planned struct {
	Key   string `json:"key"`
	Title string `json:"title"`
}

// linkAnswer is the answer of every form: upstream's shape.
func linkAnswer(a linkTargetsArgs, sc linkScope, created, found []linkResult, unresolved []unresolvedTarget, would []planned) map[string]any {
	linkMap := map[string]any{}
	for _, r := range slices.Concat(created, found) {
		linkMap[r.Key] = map[string]any{"id": r.ID, "notebook": r.Notebook, "path": r.Path, "hPath": r.HPath}
	}
	resolved, reused := []linkResult{}, []linkResult{}
	if a.Mode == "resolve" {
		resolved = append(resolved, found...)
	} else {
		reused = append(reused, found...)
	}
	out := map[string]any{
		"success": len(unresolved) == 0, "changed": len(created) > 0, "mode": string(a.Mode), "dryRun": a.DryRun,
		"scope": sc.answer(), "created": orNone(created), "resolved": resolved, "reused": reused, "unresolved": orNone(unresolved),
		"linkMap": linkMap, "createdCount": len(created), "resolvedCount": len(resolved), "reusedCount": len(reused),
		"unresolvedCount": len(unresolved),
	}
	if len(would) > 0 {
		out["wouldCreate"] = would
	}
	return out
}

func orNone[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// takenTitles are the create targets whose title a child already has.
func takenTitles(a linkTargetsArgs, sc linkScope) (taken []unresolvedTarget, free []planned) {
	for _, t := range a.List {
		if sc.titled(t.Title) {
			taken = append(taken, unresolvedTarget{Key: t.Key, Title: t.Title, Reason: reasonTitleTaken})
		} else {
			free = append(free, planned{t.Key, t.Title})
		}
	}
	return taken, free
}

var ensureLinkTargets = tools.Read[linkTargetsArgs]{
	Name: "ensure_link_targets", Summary: "the link map of an import inside one scope, the direct child documents of parentId: resolve or reuse checks targets by id (never by title); " +
		"create with dryRun plans; create makes a child document per title (a strict additive write), refused while a child has one of the titles",
	Example: map[string]any{"notebook": "20260812115959-nbnbnbn", "parentId": "20260812120000-abcdefg", "mode": "reuse",
		"targets": []map[string]any{{"key": "source-index", "id": "20260812120001-hijklmn"}}},
	WriteForm: ensureLinkTargetsCreate.Action(), WriteWhen: "mode", WriteValue: "create",
	// create with dryRun:true is the plan, a read.
	WriteIf: func(_ context.Context, _ *tools.Env, fields map[string]json.RawMessage) (bool, error) {
		var dry bool
		raw, ok := fields["dryRun"]
		return !ok || json.Unmarshal(raw, &dry) != nil || !dry, nil
	},
	Validate: (*linkTargetsArgs).check,
	Scope:    tools.Scope[linkTargetsArgs]{Touches: func(a linkTargetsArgs) []tools.Touch { return a.touches(tools.LevelRead) }},
	Run: func(ctx context.Context, env *tools.Env, a linkTargetsArgs) (any, error) {
		if a.Mode == "create" && !a.DryRun {
			return nil, failure.Invalid("mode create without dryRun is a write")
		}
		sc, err := readLinkScope(ctx, env, a)
		if err != nil {
			return nil, err
		}
		if a.Mode == "create" {
			taken, would := takenTitles(a, sc)
			return linkAnswer(a, sc, nil, nil, taken, would), nil
		}
		disposition := map[linkMode]string{"resolve": "resolved", "reuse": "reused"}[a.Mode]
		var found []linkResult
		var unresolved []unresolvedTarget
		for _, t := range a.List {
			c, ok := sc.child(t.ID)
			if !ok {
				unresolved = append(unresolved, unresolvedTarget{Key: t.Key, ID: t.ID, Reason: reasonNotChild})
				continue
			}
			hp, err := env.Kernel.GetHPathByID(ctx, c.ID)
			if err != nil {
				return nil, err
			}
			found = append(found, linkResult{Key: t.Key, Disposition: disposition, ID: c.ID, Notebook: sc.Parent.Notebook, Path: c.Path, HPath: hp, Title: c.Title})
		}
		return linkAnswer(a, sc, nil, found, unresolved, nil), nil
	},
}

// Ids a creation reserves beside one per target ("doc:<i>"): where the
// documents go, read at commit and kept in the ledger so that a resume
// creates exactly there.
const (
	idLinkParentPath  = "parentPath"
	idLinkParentHPath = "parentHPath"
)

func linkDocKey(i int) string { return "doc:" + strconv.Itoa(i) }

var ensureLinkTargetsCreate = tools.Write[linkTargetsArgs, linkScope]{
	Summary: "with mode create: make a direct child document of parentId per target title (body markdown), each with an id reserved before the first is sent; " +
		"refused while a child of parentId has one of the titles (it is never adopted); answers the link map",
	Policy: strict.WritePolicy{Class: strict.Additive},
	Example: map[string]any{"notebook": "20260812115959-nbnbnbn", "parentId": "20260812120000-abcdefg", "mode": "create",
		"targets": []map[string]any{{"key": "glossary", "title": "Glossary"}}, "validateOnly": true},
	Validate: (*linkTargetsArgs).check,
	Scope:    tools.Scope[linkTargetsArgs]{Touches: func(a linkTargetsArgs) []tools.Touch { return a.touches(tools.LevelWrite) }},
	Targets:  func(a linkTargetsArgs) []string { return []string{a.ParentID} },
	State:    readLinkScope,
	Check: func(a linkTargetsArgs, sc linkScope) error {
		taken, _ := takenTitles(a, sc)
		if len(taken) == 0 {
			return nil
		}
		titles := make([]string, len(taken))
		for i, t := range taken {
			titles[i] = strconv.Quote(t.Title)
		}
		e := failure.Invalid("a child document of %s already has the title %s: a title never adopts an existing document, so nothing was created", a.ParentID, strings.Join(titles, ", "))
		e.Action = "link to it with mode reuse and its id (document get_child_docs lists the children), or create under another title"
		return e.With("unresolved", taken).Attempted(false)
	},
	Notes: func(a linkTargetsArgs, sc linkScope) map[string]any {
		_, would := takenTitles(a, sc)
		return map[string]any{"scope": sc.answer(), "wouldCreate": would}
	},
	Stages: &tools.Stages[linkTargetsArgs, linkScope]{
		Reserve: func(a linkTargetsArgs, sc linkScope) (map[string]string, error) {
			ids := map[string]string{idLinkParentPath: sc.Parent.Path, idLinkParentHPath: sc.Parent.HPath}
			for i := range a.List {
				ids[linkDocKey(i)] = newDocID()
			}
			return ids, nil
		},
		Steps: func(a linkTargetsArgs) []tools.Step[linkTargetsArgs] {
			steps := make([]tools.Step[linkTargetsArgs], len(a.List))
			for i := range a.List {
				steps[i] = createLinkTargetStep(i)
			}
			return steps
		},
		Receipt: func(a linkTargetsArgs, ids map[string]string, done []string) tools.Payload {
			made := []map[string]any{}
			for i, t := range a.List {
				if slices.Contains(done, linkDocKey(i)) {
					made = append(made, map[string]any{"key": t.Key, "id": ids[linkDocKey(i)], "title": t.Title})
				}
			}
			return tools.Payload{"created": made, "createdCount": len(made),
				"scope": map[string]any{"notebook": a.Notebook, "parentId": a.ParentID, "parentPath": ids[idLinkParentPath], "parentHPath": ids[idLinkParentHPath]}}
		},
	},
	Readback: func(ctx context.Context, env *tools.Env, a linkTargetsArgs, p tools.Payload) (any, error) {
		made, _ := p["created"].([]map[string]any)
		scope, _ := p["scope"].(map[string]any)
		if len(made) != len(a.List) || scope == nil {
			return nil, fmt.Errorf("the receipt holds %d of %d created documents", len(made), len(a.List))
		}
		parentPath, _ := scope["parentPath"].(string)
		parentHPath, _ := scope["parentHPath"].(string)
		sc := linkScope{Parent: docLoc{ID: a.ParentID, Notebook: a.Notebook, Path: parentPath, HPath: parentHPath}}
		created := make([]linkResult, 0, len(made))
		for i, m := range made {
			id, _ := m["id"].(string)
			r, err := readCreatedTarget(ctx, env, sc, a.List[i], id)
			if err != nil {
				return nil, err
			}
			created = append(created, r)
		}
		for k, v := range linkAnswer(a, sc, created, nil, nil, nil) {
			p[k] = v
		}
		return created, nil
	},
}

// createLinkTargetStep creates target i with its reserved id under the
// parent. A second send cannot make a second document: SiYuan refuses an
// id that exists (Redo).
func createLinkTargetStep(i int) tools.Step[linkTargetsArgs] {
	key := linkDocKey(i)
	return tools.Step[linkTargetsArgs]{Name: key, Redo: true,
		Do: func(ctx context.Context, env *tools.Env, a linkTargetsArgs, ids map[string]string) (map[string]string, error) {
			var md string
			if a.Markdown != nil {
				md = *a.Markdown
			}
			_, err := env.Kernel.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: a.Notebook, ParentID: a.ParentID, ID: ids[key],
				Path: strings.TrimSuffix(ids[idLinkParentHPath], "/") + "/" + a.List[i].Title, Markdown: md})
			return nil, tools.WriteFailure(err, false)
		},
		Present: func(ctx context.Context, env *tools.Env, _ linkTargetsArgs, ids map[string]string) (bool, error) {
			return tools.Poll(ctx, func() (bool, error) { return env.Kernel.CheckBlockExist(ctx, ids[key]) })
		},
	}
}

// readCreatedTarget verifies a created target: a document of the
// notebook, a direct child of the parent, with its title and human path.
func readCreatedTarget(ctx context.Context, env *tools.Env, sc linkScope, t linkTarget, id string) (linkResult, error) {
	loc, err := tools.Await(ctx, func(ctx context.Context) (docLoc, error) { return locateDoc(ctx, env, id) },
		func(loc docLoc) error {
			if loc.Missing || loc.NotDocument {
				return fmt.Errorf("document %s does not exist", id)
			}
			return nil
		})
	if err != nil {
		return linkResult{}, err
	}
	attrs, err := env.Kernel.GetBlockAttrs(ctx, id)
	if err != nil {
		return linkResult{}, err
	}
	want := strings.TrimSuffix(sc.Parent.HPath, "/") + "/" + t.Title
	switch {
	case loc.Notebook != sc.Parent.Notebook:
		return linkResult{}, fmt.Errorf("document %s is in notebook %s, want %s", id, loc.Notebook, sc.Parent.Notebook)
	case path.Dir(loc.Path) != docDir(sc.Parent.Path):
		return linkResult{}, fmt.Errorf("document %s is not a direct child of %s", id, sc.Parent.ID)
	case attrs["title"] != t.Title:
		return linkResult{}, fmt.Errorf("document %s reads back another title", id)
	case loc.HPath != want:
		return linkResult{}, fmt.Errorf("document %s is not at the human path %s", id, want)
	}
	return linkResult{Key: t.Key, Disposition: "created", ID: id, Notebook: loc.Notebook, Path: loc.Path, HPath: loc.HPath, Title: t.Title}, nil
}

// newDocID is a fresh SiYuan id for a document the creation pins, so that
// a resume can ask whether it exists.
func newDocID() string {
	const alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 7)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return time.Now().Format("20060102150405") + "-" + string(b)
}
