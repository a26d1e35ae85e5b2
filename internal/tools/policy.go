package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/sisyphus-go/sisyphus/internal/apps"
	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
)

// The gate: every call passes it before its action runs. It decides, from
// the Policy the call runs under, whether the tool and action are enabled
// and whether every notebook the call touches allows what the call needs.
// Confirmation of dangerous actions is asked before the call is admitted
// (see Confirm); the gate here never waits for a person.

// Level is a notebook's permission, upstream's four levels in order.
type Level uint8

// Levels.
const (
	LevelNone   Level = iota // hidden: no read, no write
	LevelRead                // "r"
	LevelWrite               // "rw": read and write, no delete
	LevelDelete              // "rwd": read, write and delete
)

// DefaultLevel is the level of a notebook without an entry.
const DefaultLevel = LevelRead

var levelNames = [...]string{"none", "r", "rw", "rwd"}

func (l Level) String() string {
	if int(l) < len(levelNames) {
		return levelNames[l]
	}
	return fmt.Sprintf("level(%d)", l)
}

// need is the word for what a level allows, in messages.
func (l Level) need() string {
	switch l {
	case LevelRead:
		return "read"
	case LevelWrite:
		return "write"
	case LevelDelete:
		return "delete"
	}
	return "nothing"
}

// ParseLevel parses one of none, r, rw, rwd.
func ParseLevel(s string) (Level, bool) {
	for i, n := range levelNames {
		if s == n {
			return Level(i), true
		}
	}
	return 0, false
}

// MigrateLevel reads a stored value as upstream does: the four levels as
// they are, its legacy names readonly → r and write → rw, anything else
// none (an unknown value never widens access).
func MigrateLevel(v any) Level {
	s, _ := v.(string)
	if l, ok := ParseLevel(s); ok {
		return l
	}
	switch s {
	case "readonly":
		return LevelRead
	case "write":
		return LevelWrite
	}
	return LevelNone
}

// Switch is one tool's configuration: whether it is enabled (nil: yes) and
// its actions' switches (an action without one takes its default).
type Switch struct {
	Enabled *bool
	Actions map[string]bool
}

// Policy is the configuration one call runs under, loaded when the call
// starts executing.
type Policy struct {
	// Notebooks are the permission entries; a notebook without one has
	// Default.
	Notebooks map[string]Level
	Default   Level
	// Tools are the tool switches. AllActions enables every action whatever
	// the switches and defaults say.
	Tools      map[string]Switch
	AllActions bool
	// Strict is the configuration's strict mode (writeSafety.strictMode).
	Strict bool
	// LargeUpload is the size above which an upload needs
	// confirmLargeFile:true (file.uploadLargeFileThresholdMB; 0: 10 MiB).
	LargeUpload int64
	// FeedbackURL is where feedback.submit posts (feedback.endpoint; ""
	// none: the action refuses and sends nothing).
	FeedbackURL string
	// Version identifies the configuration: a task result recorded under
	// another answers access_changed.
	Version string
	// Extension are the extension tool's settings.
	Extension ExtensionSettings
	// FullReadInfo (debug.slimResponses false) has every main read carry
	// readInfo, complete ones too; by default only a read that left
	// something out does (see [Cover]).
	FullReadInfo bool
	// Apps are the MCP Apps' switches (mcpToolsConfig.mcpApps).
	Apps apps.Settings
	// Err, when set, is why the configuration could not be read: every call
	// that touches a notebook, and every write, fails closed with it.
	Err error
	// Gone are notebooks at none that SiYuan neither lists nor holds a
	// block of in its index (removed after the person hid them). They hide
	// nothing, so neither Hides nor the gate's floor counts them, or a
	// notebook long gone would keep what cannot be filtered by notebook
	// refused; their level stays none, so whatever a lookup places in one
	// (it came back) is refused as hidden.
	Gone map[string]bool
}

// ExtensionSettings are mcpToolsConfig.extension: whether SiYuan's native
// MCP tools are exposed at all (includeNativeTools; even then only the read
// allowlist), and the tool names never exposed (blockedTools).
type ExtensionSettings struct {
	NativeTools bool
	Blocked     []string
}

// Unrestricted is the policy of a registry without a configuration source:
// every notebook rwd, every action enabled, strict mode on, native MCP
// tools exposed (upstream's default).
func Unrestricted() *Policy {
	return &Policy{Default: LevelDelete, AllActions: true, Strict: true, Version: "unrestricted",
		Extension: ExtensionSettings{NativeTools: true}}
}

// Level returns a notebook's level.
func (p *Policy) Level(notebook string) Level {
	if l, ok := p.Notebooks[notebook]; ok {
		return l
	}
	return p.Default
}

// Visible reports whether a notebook may be shown at all.
func (p *Policy) Visible(notebook string) bool { return p.Level(notebook) != LevelNone }

// floor is the lowest level any notebook SiYuan has may have (a gone one
// does not count).
func (p *Policy) floor() Level {
	f := p.Default
	for id, l := range p.Notebooks {
		if !p.Gone[id] {
			f = min(f, l)
		}
	}
	return f
}

// Hides reports whether some notebook is hidden (raw SQL cannot be
// filtered, so it is refused then); a gone one hides nothing.
func (p *Policy) Hides() bool {
	return p.floor() == LevelNone
}

// ActionOn reports whether the configuration enables an action of a tool.
func (p *Policy) ActionOn(t *Tool, a *Action) bool {
	if p.AllActions {
		return true
	}
	sw := p.Tools[t.Name]
	if sw.Enabled != nil && !*sw.Enabled {
		return false
	}
	if v, ok := sw.Actions[a.Name]; ok {
		return v
	}
	return !a.OffByDefault
}

// ToolOn reports whether a tool is enabled: its switch allows it and at
// least one of its actions is enabled.
func (p *Policy) ToolOn(t *Tool) bool {
	return slices.ContainsFunc(t.Actions, func(a *Action) bool { return p.ActionOn(t, a) })
}

type policyKey struct{}

// WithPolicy returns ctx carrying the policy a call runs under.
func WithPolicy(ctx context.Context, p *Policy) context.Context {
	return context.WithValue(ctx, policyKey{}, p)
}

// PolicyFrom returns the policy ctx carries, or nil.
func PolicyFrom(ctx context.Context) *Policy {
	p, _ := ctx.Value(policyKey{}).(*Policy)
	return p
}

// Visible reports whether the call's policy lets it show a notebook; a
// listing across notebooks filters its entries with it.
func Visible(ctx context.Context, notebook string) bool {
	p := PolicyFrom(ctx)
	return p == nil || p.Visible(notebook)
}

// ToolEnabled reports whether the call's policy enables a tool.
func ToolEnabled(ctx context.Context, t *Tool) bool {
	p := PolicyFrom(ctx)
	return p == nil || p.ToolOn(t)
}

// ActionEnabled reports whether the call's policy enables an action.
func ActionEnabled(ctx context.Context, t *Tool, a *Action) bool {
	p := PolicyFrom(ctx)
	return p == nil || p.ActionOn(t, a)
}

// LevelOf is the call's level in a notebook (rwd without a policy).
func LevelOf(ctx context.Context, notebook string) Level {
	if p := PolicyFrom(ctx); p != nil {
		return p.Level(notebook)
	}
	return LevelDelete
}

// Touch is one notebook a call touches and what it needs there: named by
// the notebook's id, or by a block or document id that the gate resolves to
// its notebook.
type Touch struct {
	Notebook string
	Block    string
	Need     Level
	// Why, when set, ends a refusal of this touch: why the call needs
	// that level there (a forwarded plugin tool needs rw everywhere).
	Why string
	// Bound marks a block the call reaches through data, not by an id
	// it was given (a database's blocks, the block bound to a row): one
	// the call cannot see is passed over, as the action leaves it out.
	Bound bool
}

// OnNotebook is a touch of a notebook.
func OnNotebook(id string, need Level) Touch { return Touch{Notebook: id, Need: need} }

// OnBlock is a touch of the notebook holding a block or document.
func OnBlock(id string, need Level) Touch { return Touch{Block: id, Need: need} }

// OnBound is a touch of the notebook holding a block the call reaches
// through data (see Touch.Bound).
func OnBound(id string, need Level) Touch { return Touch{Block: id, Need: need, Bound: true} }

// OnBlocks touches the notebooks of several blocks.
func OnBlocks(ids []string, need Level) []Touch {
	out := make([]Touch, 0, len(ids))
	for _, id := range ids {
		out = append(out, OnBlock(id, need))
	}
	return out
}

// Protected is the workspace folder where the configuration lives (the
// upstream plugin's storage): no action that takes a workspace path may
// read or write under it.
const Protected = "/data/storage/petal/siyuan-plugins-mcp-sisyphus"

// CheckWorkspacePath refuses a workspace path under Protected, however it
// is spelled (a missing leading slash, doubled slashes, dot segments).
func CheckWorkspacePath(field, p string) error {
	clean := "/" + strings.Trim(p, "/")
	var parts []string
	for _, seg := range strings.Split(clean, "/") {
		switch seg {
		case "", ".":
		case "..":
			if len(parts) > 0 {
				parts = parts[:len(parts)-1]
			}
		default:
			parts = append(parts, seg)
		}
	}
	norm := strings.ToLower("/" + strings.Join(parts, "/"))
	if norm == Protected || strings.HasPrefix(norm, Protected+"/") {
		e := failure.New(failure.PermissionDenied, "%s %q is in Sisyphus's configuration folder (%s), which no tool may read or write; nothing was run", field, p, Protected)
		e.Action = "change the configuration with sisyphus config or the settings page"
		return e.Attempted(false)
	}
	return nil
}

// authorize checks that the policy allows every touch, resolving block ids
// to their notebooks. Whenever it has to look (some notebook allows less
// than the call needs), a touch of something an agent cannot see is
// refused as not found: a block, document or notebook that does not exist,
// and one in a notebook hidden from agents, get the same answer (absent),
// so that no refusal tells an agent what exists where it may not look.
// Visible notebooks whose level is too low are refused by name
// (permission_denied). A malformed id is left to the action, which
// refuses it; a failed resolution fails the call (closed).
func authorize(ctx context.Context, env *Env, p *Policy, touches []Touch) error {
	if !needsLookup(p, touches) {
		return nil
	}
	needs := map[string]Level{}
	why := map[string]string{}
	var order []string
	add := func(nb string, t Touch) {
		if cur, ok := needs[nb]; !ok || t.Need > cur {
			if !ok {
				order = append(order, nb)
			}
			needs[nb] = t.Need
			why[nb] = t.Why
		}
	}
	var blocks []string
	seen := map[string]bool{}
	named := false
	for _, t := range touches {
		switch {
		case t.Notebook != "":
			named = true
		case t.Block != "" && !seen[t.Block] && CheckID("id", t.Block) == nil:
			seen[t.Block] = true
			blocks = append(blocks, t.Block)
		}
	}
	nbOf, err := placeBlocks(ctx, env, blocks)
	if err != nil {
		return err
	}
	var exists map[string]bool
	if named {
		nbs, err := env.Kernel.ListNotebooks(ctx)
		if err != nil {
			return KernelError(err)
		}
		exists = make(map[string]bool, len(nbs))
		for _, nb := range nbs {
			exists[nb.ID] = true
		}
	}
	// What cannot be seen is decided first, in the order the call names
	// it: the answer is the same whether it is missing or hidden.
	for _, t := range touches {
		switch {
		case t.Notebook != "":
			if !exists[t.Notebook] || !p.Visible(t.Notebook) {
				return absent("notebook", t.Notebook)
			}
			add(t.Notebook, t)
		case t.Block != "" && CheckID("id", t.Block) == nil:
			nb := nbOf[t.Block]
			switch {
			case (nb == "" || !p.Visible(nb)) && t.Bound:
				continue
			case nb == "" || !p.Visible(nb):
				return absent("block", t.Block)
			}
			add(nb, t)
		}
	}
	sort.Strings(order)
	for _, nb := range order {
		need := needs[nb]
		if have := p.Level(nb); have < need {
			return denied(nb, notebookName(ctx, env, nb), have, need, why[nb])
		}
	}
	return nil
}

// errAbsent marks the gate's not_found (see absent).
var errAbsent = errors.New("tools: the call names something agents cannot see")

// absent is the refusal of a touch of something an agent cannot see,
// missing or hidden alike: the code, message and fields depend only on
// what the call named.
func absent(what, id string) *failure.Error {
	e := failure.Missing(what, id)
	e.Cause = errAbsent
	return e
}

// isAbsent reports whether err is the gate's not_found.
func isAbsent(err error) bool { return errors.Is(err, errAbsent) }

// needsLookup reports whether deciding touches under p may need the kernel
// (or a refusal): nothing to decide when every notebook allows the most the
// call needs (an open configuration), the common case.
func needsLookup(p *Policy, touches []Touch) bool {
	most := LevelNone
	for _, t := range touches {
		most = max(most, t.Need)
	}
	return p.floor() < most
}

// denied is the refusal of a touch of a visible notebook whose level is
// below what the call needs (a hidden one is absent instead); why, when
// set, says why the call needs that level there. It names the notebook
// (name, when known, and id) and the command a person runs to allow the
// call: agents cannot change their permissions.
func denied(notebook, name string, have, need Level, why string) *failure.Error {
	which := "notebook " + notebook
	if name != "" {
		which = fmt.Sprintf("notebook %q (%s)", name, notebook)
	}
	msg := fmt.Sprintf("%s is %q, and this call needs to %s there", which, have, need.need())
	if why != "" {
		msg += ": " + why
	}
	grant := "sisyphus config permission " + notebook + " " + atLeast(need)
	e := failure.New(failure.PermissionDenied, "%s; nothing was run", msg).
		With("notebook", notebook).With("permission", have.String()).With("requiredPermission", atLeast(need)).With("grantCommand", grant)
	if name != "" {
		e = e.With("notebookName", name)
	}
	e.Action = "ask the person whether to allow it; they can run: " + grant
	return e.Attempted(false)
}

// notebookName is a notebook's name for a refusal ("" when SiYuan does
// not answer it).
func notebookName(ctx context.Context, env *Env, id string) string {
	nbs, err := env.Kernel.ListNotebooks(ctx)
	if err != nil {
		return ""
	}
	for _, n := range nbs {
		if n.ID == id {
			return n.Name
		}
	}
	return ""
}

// atLeast names the lowest level that allows need.
func atLeast(need Level) string {
	if need == LevelNone {
		return LevelRead.String()
	}
	return need.String()
}

// placeBlocks resolves each block to its notebook ("" for an id that names
// nothing). SiYuan answers a lookup by loading the block's document, so
// blocks that share the first one's document share its lookup: the first
// block's notebook and, at the same time, which of the others that
// document holds (getBlocksIndexes, one more load whatever their number).
// The rest are looked up each, four at a time. Either way each answer
// holds as of its own read, as one lookup per block's would.
func placeBlocks(ctx context.Context, env *Env, blocks []string) (map[string]string, error) {
	out := make(map[string]string, len(blocks))
	rest := blocks
	if len(blocks) > 1 && CheckID("id", blocks[0]) == nil {
		var (
			wg         sync.WaitGroup
			first, doc string
			idx        map[string]int
			err, idErr error
		)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer failure.Recover(&idErr)
			idx, idErr = env.Kernel.GetBlocksIndexes(ctx, blocks)
		}()
		first, doc, err = placeOf(ctx, env, blocks[0])
		wg.Wait()
		if err == nil && failure.PanicOf(idErr) != nil {
			// Not a kernel without the indexes: a bug, answered as one.
			err = idErr
		}
		if err != nil {
			return nil, err
		}
		out[blocks[0]], rest = first, nil
		for _, b := range blocks[1:] {
			// The indexes place the document's blocks (the document
			// itself reads 0: its id is in the first block's path).
			// Without them (a kernel that does not serve them) each block
			// is looked up: slower, never less sure.
			if first != "" && doc != "" && (b == doc || idErr == nil && idx[b] > 0) {
				out[b] = first
			} else {
				rest = append(rest, b)
			}
		}
	}
	where := make([]string, len(rest))
	errs := make([]error, len(rest))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i, b := range rest {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			defer failure.Recover(&errs[i])
			where[i], errs[i] = notebookOf(ctx, env, b)
		}()
	}
	wg.Wait()
	for i, b := range rest {
		if errs[i] != nil {
			return nil, errs[i]
		}
		out[b] = where[i]
	}
	return out, nil
}

// Seen reports which of ids the call may see: those the gate places in a
// notebook its policy shows. A block that does not exist is not seen, as
// one in a hidden notebook is not, so a caller that leaves out what is not
// seen answers both alike. Without a policy that hides a notebook, every
// id is seen and nothing is looked up (a caller that cares whether they
// exist reads them itself).
func Seen(ctx context.Context, env *Env, ids []string) (map[string]bool, error) {
	out := make(map[string]bool, len(ids))
	p := PolicyFrom(ctx)
	if p == nil || !p.Hides() {
		for _, id := range ids {
			out[id] = true
		}
		return out, nil
	}
	var valid []string
	for _, id := range ids {
		if CheckID("id", id) == nil && !slices.Contains(valid, id) {
			valid = append(valid, id)
		}
	}
	nbOf, err := placeBlocks(ctx, env, valid)
	if err != nil {
		return nil, err
	}
	for _, id := range valid {
		out[id] = nbOf[id] != "" && p.Visible(nbOf[id])
	}
	return out, nil
}

// maxUnindexed bounds the blocks SeenIndexed looks up one by one: past it,
// a block the index does not hold is not seen (closed).
const maxUnindexed = 16

// SeenIndexed is Seen for many blocks at once (the rows of a database):
// their notebooks come from SiYuan's index in one query per 256 (which,
// as for search, lags a move between notebooks by a few seconds), and a
// block the index does not hold (written a moment ago, or gone) is placed
// as the gate places it, up to maxUnindexed of them; the rest are not
// seen. Without a policy that hides a notebook every id is seen.
func SeenIndexed(ctx context.Context, env *Env, ids []string) (map[string]bool, error) {
	p := PolicyFrom(ctx)
	if p == nil || !p.Hides() {
		return Seen(ctx, env, ids)
	}
	var valid []string
	for _, id := range ids {
		if CheckID("id", id) == nil {
			valid = append(valid, id)
		}
	}
	valid = slices.Compact(slices.Sorted(slices.Values(valid)))
	boxOf := make(map[string]string, len(valid))
	for chunk := range slices.Chunk(valid, 256) {
		rows, err := env.Kernel.QuerySQL(ctx, fmt.Sprintf("SELECT id, box FROM blocks WHERE id IN (%s) LIMIT %d", SQLList(chunk), 2*len(chunk)+8))
		if err != nil {
			return nil, KernelError(err)
		}
		for _, r := range rows {
			id, _ := r["id"].(string)
			box, _ := r["box"].(string)
			if id != "" && box != "" {
				boxOf[id] = box
			}
		}
	}
	var unindexed []string
	for _, id := range valid {
		if boxOf[id] == "" && len(unindexed) < maxUnindexed {
			unindexed = append(unindexed, id)
		}
	}
	placed, err := Seen(ctx, env, unindexed)
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(ids))
	for _, id := range valid {
		out[id] = boxOf[id] != "" && p.Visible(boxOf[id]) || placed[id]
	}
	return out, nil
}

// VisibleRefCounts counts, for each block, the references to it that the
// call may see (from SiYuan's index): SiYuan's own counts (a block's
// refcount, a candidate's refCount) take in references from hidden
// notebooks. The index counts them, only in the notebooks the call may
// see (so no row of a hidden notebook takes a place in the answer), each
// reference once however often the index holds it. Without a policy that
// hides a notebook it answers nil: the kernel's counts stand.
func VisibleRefCounts(ctx context.Context, env *Env, ids []string) (map[string]int, error) {
	p := PolicyFrom(ctx)
	if p == nil || !p.Hides() {
		return nil, nil
	}
	out := make(map[string]int, len(ids))
	var checked []string
	for _, id := range ids {
		if _, dup := out[id]; !dup && CheckID("id", id) == nil {
			out[id] = 0
			checked = append(checked, id)
		}
	}
	if len(checked) == 0 {
		return out, nil
	}
	boxes, err := VisibleNotebooks(ctx, env)
	if err != nil || len(boxes) == 0 {
		return out, err
	}
	rows, err := env.Kernel.QuerySQL(ctx, fmt.Sprintf("SELECT def_block_id, COUNT(DISTINCT id) AS n FROM refs WHERE def_block_id IN (%s) AND box IN (%s) GROUP BY def_block_id LIMIT %d",
		SQLList(checked), SQLList(boxes), len(checked)+1))
	if err != nil {
		return nil, KernelError(err)
	}
	for _, r := range rows {
		def, _ := r["def_block_id"].(string)
		if _, asked := out[def]; asked {
			out[def] = SQLCount(r["n"])
		}
	}
	return out, nil
}

// VisibleNotebooks are the ids of the notebooks SiYuan lists that the
// call may see: what a statement of the project's own over SiYuan's index
// limits itself to (box IN (...)), so that the rows of hidden notebooks
// never fill its LIMIT nor its counts.
func VisibleNotebooks(ctx context.Context, env *Env) ([]string, error) {
	nbs, err := env.Kernel.ListNotebooks(ctx)
	if err != nil {
		return nil, KernelError(err)
	}
	var out []string
	for _, n := range nbs {
		if CheckID("notebook", n.ID) == nil && Visible(ctx, n.ID) {
			out = append(out, n.ID)
		}
	}
	return out, nil
}

// SQLList is checked ids as an SQL list ('a', 'b'): a checked id holds
// digits, letters and one dash, nothing to escape.
func SQLList(checked []string) string {
	quoted := make([]string, len(checked))
	for i, id := range checked {
		quoted[i] = "'" + id + "'"
	}
	return strings.Join(quoted, ", ")
}

// SQLCount is a COUNT(...) column of a row SiYuan's SQL API answers (a
// JSON number).
func SQLCount(v any) int {
	switch n := v.(type) {
	case float64:
		return int(n)
	case json.Number:
		i, _ := n.Int64()
		return int(i)
	}
	return 0
}

// VeilDocInfo is SiYuan's document info as the call may see it while a
// notebook is hidden: the references from blocks it cannot see are left
// out (and the count with them), and so are the databases shown only
// where it may not look (from its attribute views and its IAL's
// custom-avs). Without a hidden notebook info is unchanged.
func VeilDocInfo(ctx context.Context, env *Env, info *siyuan.DocInfo) error {
	if !Hiding(ctx) || info == nil {
		return nil
	}
	dbs := NewShownDatabases(env)
	if err := dbs.VeilAttrs(ctx, info.IAL); err != nil {
		return KernelError(err)
	}
	seen, err := Seen(ctx, env, info.RefIDs)
	if err != nil {
		return err
	}
	refs := []string{}
	for _, id := range info.RefIDs {
		if seen[id] {
			refs = append(refs, id)
		}
	}
	info.RefIDs, info.RefCount = refs, len(refs)
	views := info.AttrViews[:0]
	for _, v := range info.AttrViews {
		shown, err := dbs.Shown(ctx, v.ID)
		if err != nil {
			return KernelError(err)
		}
		if shown {
			views = append(views, v)
		}
	}
	info.AttrViews = views
	return nil
}

// RefuseWhileHidden refuses a call that reaches every notebook at once and
// cannot leave one out (SiYuan renames a tag everywhere; a forwarded
// plugin tool sees the whole workspace) while the call's policy hides a
// notebook; nil otherwise. The refusal depends on the policy alone and
// names no notebook: whatever the hidden notebooks hold, the answer is
// the same.
func RefuseWhileHidden(ctx context.Context, what string) error {
	if !Hiding(ctx) {
		return nil
	}
	e := failure.New(failure.PermissionDenied, "%s reaches every notebook and cannot leave out those hidden from agents (permission none), so it is refused while one is hidden; nothing was run", what)
	e.Action = "ask the person who runs Sisyphus to do it in SiYuan, or to give every notebook at least r"
	return e.Attempted(false)
}

// Hiding reports whether the call's policy hides a notebook: only then
// may a listing across notebooks have something to leave out.
func Hiding(ctx context.Context) bool {
	p := PolicyFrom(ctx)
	return p != nil && p.Hides()
}

// notebookOf resolves a block or document id to its notebook; an id that
// names a notebook is that notebook ("" when the id names nothing: the
// action answers not_found).
func notebookOf(ctx context.Context, env *Env, id string) (string, error) {
	nb, _, err := placeOf(ctx, env, id)
	return nb, err
}

// placeOf is notebookOf and, for a block or document, the document that
// holds it ("" for a notebook).
func placeOf(ctx context.Context, env *Env, id string) (notebook, doc string, err error) {
	if CheckID("id", id) != nil {
		return "", "", nil // the action refuses the malformed id itself
	}
	// getPathByID answers the notebook and path alone (SiYuan loads the
	// document for it, as it does for getBlockInfo, which answers more).
	loc, err := env.Kernel.GetPathByID(ctx, id)
	if err == nil && loc.Notebook != "" {
		return loc.Notebook, siyuan.DocIDOfPath(loc.Path), nil
	}
	var api *siyuan.APIError
	if err != nil && !errors.As(err, &api) {
		return "", "", KernelError(err) // not an answer: fail closed
	}
	nbs, lerr := env.Kernel.ListNotebooks(ctx)
	if lerr != nil {
		return "", "", KernelError(lerr)
	}
	for _, nb := range nbs {
		if nb.ID == id {
			return id, "", nil
		}
	}
	if ok, cerr := env.Kernel.CheckBlockExist(ctx, id); cerr != nil {
		return "", "", KernelError(cerr)
	} else if ok {
		// A block the kernel knows but could not place: never guess.
		return "", "", fmt.Errorf("block %s exists but the kernel did not say which notebook holds it", id)
	}
	return "", "", nil
}

// configFailure is the refusal of a call whose configuration is unreadable.
func configFailure(p *Policy, writes bool) *failure.Error {
	e := failure.Wrap(failure.ConfigUnavailable, p.Err, "Sisyphus's configuration could not be read (%s); nothing was run", p.Err.Error())
	if writes {
		e = e.Attempted(false)
	}
	return e
}

// disabled is the refusal of a disabled tool or action.
func disabled(t *Tool, a *Action, toolOff bool) *failure.Error {
	var e *failure.Error
	if toolOff {
		e = failure.New(failure.ActionDisabled, "the tool %s is disabled in Sisyphus's configuration; nothing was run", t.Name)
	} else {
		e = failure.New(failure.ActionDisabled, "%s.%s is disabled in Sisyphus's configuration; nothing was run", t.Name, a.Name)
	}
	e = e.With("tool", t.Name).With("action", a.Name)
	if a.Policy.Class != strict.Read {
		e = e.Attempted(false)
	}
	return e
}
