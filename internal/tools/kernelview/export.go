package kernelview

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"

	"github.com/88250/lute/ast"
	"github.com/88250/lute/parse"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/siyuan/mdexport"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// ExportMarkdown is SiYuan's Markdown export of a document or block
// (exportMdContent, without YAML front matter, in the modes the person set
// in SiYuan) as the call's policy lets it be shown.
//
// SiYuan's export shows the text of other blocks: footnote definitions of
// the blocks a reference or a siyuan://blocks/ link points to (and of
// those they point to, recursively), anchors the index fills in, and the
// blocks an embed's query finds. While no notebook is hidden the answer is
// SiYuan's own, unchanged and at no extra cost. While one is, deciding
// needs the blocks the export would show: the export is rendered here, by
// the renderer the embedded kernel exports with, from the kernel's trees
// (read as the gate places a block: its notebook from getPathByID, which
// reads the block tree, not the lagging SQL index), with every block of a
// hidden notebook answered as missing. A reference into a hidden notebook
// then reads exactly as SiYuan writes a reference to a removed block: its
// anchor text and its footnote number, without a definition; an embed
// never shows a hidden block, and a database block shows no table (see
// policySource.AttributeView). When that render showed nothing hidden, ran
// no query and met no database, SiYuan's own answer is returned instead,
// byte for byte.
//
// An embed's query is raw SQL over every notebook, which cannot be limited
// to the visible ones (its result can depend on hidden blocks through a
// subquery, an ORDER BY or a LIMIT: an oracle even when no hidden row is
// shown), so while a notebook is hidden only the plain form SiYuan's own
// embed menu writes, SELECT * FROM blocks WHERE id='<id>', shows its
// block; any other query shows nothing, as a query that finds nothing
// does (search.query_sql is refused then for the same reason).
//
// found is false when no block has the id (SiYuan answers empty strings).
func ExportMarkdown(ctx context.Context, env *tools.Env, id string) (md siyuan.MdContent, found bool, err error) {
	return NewExporter(env).Markdown(ctx, id)
}

// Exporter is ExportMarkdown for the several documents of one call (a
// search reads each document it searches as exported): SiYuan's export
// settings are read once, when the first export needs them. It is safe
// for concurrent use; it serves one call (one policy, settings read once).
type Exporter struct {
	env      *tools.Env
	once     sync.Once
	settings mdexport.Settings
	err      error
}

// NewExporter starts the exports of one call.
func NewExporter(env *tools.Env) *Exporter { return &Exporter{env: env} }

// Markdown is ExportMarkdown of one document or block.
func (e *Exporter) Markdown(ctx context.Context, id string) (md siyuan.MdContent, found bool, err error) {
	env := e.env
	p := tools.PolicyFrom(ctx)
	if p == nil || !p.Hides() {
		md, err = env.Kernel.ExportMdContent(ctx, id)
		return md, err == nil && md.HPath != "", err
	}
	e.once.Do(func() { e.settings, e.err = exportSettings(ctx, env) })
	settings, err := e.settings, e.err
	if err != nil {
		return md, false, err
	}
	src := &policySource{env: env, policy: p, docs: map[string][]byte{}, places: map[string]siyuan.DocPath{}}
	o := mdexport.Options{RefMode: settings.RefMode, EmbedMode: settings.EmbedMode, AddTitle: settings.AddTitle}
	content, found, err := mdexport.Export(ctx, src, settings, o, id)
	if err != nil || !found {
		return md, false, err
	}
	if !src.hidden && !src.queried {
		md, err = env.Kernel.ExportMdContent(ctx, id)
		return md, err == nil && md.HPath != "", err
	}
	hPath, err := env.Kernel.GetHPathByID(ctx, id)
	if err != nil {
		return md, false, err
	}
	return siyuan.MdContent{HPath: hPath, Content: content}, true, nil
}

// exportSettings reads the values of SiYuan's configuration an export
// depends on; a value the configuration lacks keeps SiYuan's default.
func exportSettings(ctx context.Context, env *tools.Env) (mdexport.Settings, error) {
	s := mdexport.DefaultSettings()
	conf, err := env.Kernel.GetConf(ctx)
	if err != nil {
		return s, err
	}
	var c struct {
		Export struct {
			BlockRefMode          *int    `json:"blockRefMode"`
			BlockEmbedMode        *int    `json:"blockEmbedMode"`
			AddTitle              *bool   `json:"addTitle"`
			BlockRefTextLeft      *string `json:"blockRefTextLeft"`
			BlockRefTextRight     *string `json:"blockRefTextRight"`
			TagOpenMarker         *string `json:"tagOpenMarker"`
			TagCloseMarker        *string `json:"tagCloseMarker"`
			FileAnnotationRefMode *int    `json:"fileAnnotationRefMode"`
			InlineMemo            *bool   `json:"inlineMemo"`
		} `json:"export"`
		Editor struct {
			AnchorMaxLen     *int `json:"blockRefDynamicAnchorTextMaxLen"`
			HeadingEmbedMode *int `json:"headingEmbedMode"`
		} `json:"editor"`
		Search struct {
			Limit *int `json:"limit"`
		} `json:"search"`
	}
	if err := json.Unmarshal(conf.Conf, &c); err != nil {
		return s, fmt.Errorf("SiYuan's configuration: %w", err)
	}
	set := func(dst *int, v *int) {
		if v != nil {
			*dst = *v
		}
	}
	setS := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	setB := func(dst *bool, v *bool) {
		if v != nil {
			*dst = *v
		}
	}
	e := c.Export
	set(&s.RefMode, e.BlockRefMode)
	set(&s.EmbedMode, e.BlockEmbedMode)
	setB(&s.AddTitle, e.AddTitle)
	setS(&s.RefTextLeft, e.BlockRefTextLeft)
	setS(&s.RefTextRight, e.BlockRefTextRight)
	setS(&s.TagOpen, e.TagOpenMarker)
	setS(&s.TagClose, e.TagCloseMarker)
	set(&s.FileAnnotationRefMode, e.FileAnnotationRefMode)
	setB(&s.InlineMemo, e.InlineMemo)
	set(&s.AnchorMaxLen, c.Editor.AnchorMaxLen)
	set(&s.HeadingEmbedMode, c.Editor.HeadingEmbedMode)
	set(&s.SearchLimit, c.Search.Limit)
	return s, nil
}

// plainEmbed is the statement SiYuan writes for an embedded block.
var plainEmbed = regexp.MustCompile(`^\s*(?i:select)\s+\*\s+(?i:from)\s+(?i:blocks)\s+(?i:where)\s+(?i:id)\s*=\s*'(\d{14}-[0-9a-z]{7})'\s*;?\s*$`)

// policySource reads the kernel for an export, answering every block of a
// notebook the policy hides as missing, and records whether it did
// (hidden) or met a query it would not run (queried).
type policySource struct {
	env    *tools.Env
	policy *tools.Policy

	mu      sync.Mutex
	hidden  bool
	queried bool
	docs    map[string][]byte         // .sy files read, by workspace path
	places  map[string]siyuan.DocPath // getPathByID's answers, by id
}

func (s *policySource) hide() {
	s.mu.Lock()
	s.hidden = true
	s.mu.Unlock()
}

// place is where the block id lives ("" notebook when nowhere).
func (s *policySource) place(ctx context.Context, id string) (siyuan.DocPath, error) {
	s.mu.Lock()
	loc, ok := s.places[id]
	s.mu.Unlock()
	if ok {
		return loc, nil
	}
	if tools.CheckID("id", id) != nil {
		return siyuan.DocPath{}, nil
	}
	loc, err := s.env.Kernel.GetPathByID(ctx, id)
	var api *siyuan.APIError
	if errors.As(err, &api) {
		loc, err = siyuan.DocPath{}, nil // SiYuan knows no such block
	}
	if err != nil {
		return loc, err
	}
	s.mu.Lock()
	s.places[id] = loc
	s.mu.Unlock()
	return loc, nil
}

func (s *policySource) Block(ctx context.Context, id string) (*parse.Tree, *ast.Node, error) {
	loc, err := s.place(ctx, id)
	if err != nil || loc.Notebook == "" || loc.Path == "" {
		return nil, nil, err
	}
	if !s.policy.Visible(loc.Notebook) {
		s.hide()
		return nil, nil, nil
	}
	p := "/data/" + loc.Notebook + loc.Path
	s.mu.Lock()
	data, ok := s.docs[p]
	s.mu.Unlock()
	if !ok {
		body, _, err := s.env.Kernel.GetFile(ctx, p)
		if errors.Is(err, siyuan.ErrFileNotFound) {
			return nil, nil, nil // removed since getPathByID answered
		}
		if err != nil {
			return nil, nil, err
		}
		data, err = io.ReadAll(body)
		body.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", p, err)
		}
		s.mu.Lock()
		s.docs[p] = data
		s.mu.Unlock()
	}
	// A fresh tree each time: the export changes what it loads.
	tree, err := mdexport.ParseSY(data)
	if err != nil {
		return nil, nil, err
	}
	tree.Box, tree.Path = loc.Notebook, loc.Path
	tree.Root.Box, tree.Root.Path = loc.Notebook, loc.Path
	node := mdexport.NodeByID(tree.Root, id)
	if node == nil {
		return nil, nil, nil
	}
	return tree, node, nil
}

// RefText is sql.GetRefText, a hidden block's answer being a missing one's.
func (s *policySource) RefText(ctx context.Context, id string) (string, error) {
	if tools.CheckID("id", id) != nil {
		if strings.HasPrefix(id, "assets") {
			return id, nil
		}
		return "block not found", nil
	}
	rows, err := s.env.Kernel.QuerySQL(ctx, "SELECT name, type, content, markdown, box FROM blocks WHERE id = '"+id+"' LIMIT 1")
	if err != nil {
		return "", err
	}
	if len(rows) == 0 {
		return "block not found", nil
	}
	r := rows[0]
	str := func(k string) string { v, _ := r[k].(string); return v }
	if !s.policy.Visible(str("box")) {
		s.hide()
		return "block not found", nil
	}
	return mdexport.IndexedRefText(str("name"), str("type"), str("content"), str("markdown")), nil
}

// Embed shows the block of a plain embed (as missing when hidden or
// gone); any other query is not run (see ExportMarkdown).
func (s *policySource) Embed(_ context.Context, stmt string, _ int) ([]string, error) {
	if m := plainEmbed.FindStringSubmatch(stmt); m != nil {
		return []string{m[1]}, nil
	}
	s.mu.Lock()
	s.queried = true
	s.mu.Unlock()
	return nil, nil
}

// AttributeView keeps a database block as it is: the export shows it as
// SiYuan shows a database it cannot read (an empty element naming the
// database), never the table. SiYuan's table lists every row of the view
// with its cells: the text of the blocks rows are bound to, relations,
// rollups and templates computed over rows bound to blocks in hidden
// notebooks. What agents may see of a database is the av tool's to say
// (its reads leave those out and count them as withheld); an export
// cannot count what it leaves out, so while a notebook is hidden it shows
// no database at all, and the answer is this render, not SiYuan's.
func (s *policySource) AttributeView(context.Context, *parse.Tree, *ast.Node) (*ast.Node, error) {
	s.hide()
	return nil, nil
}

// Annotation reads an asset's .sya file.
func (s *policySource) Annotation(ctx context.Context, _, asset string) ([]byte, error) {
	if strings.Contains(asset, "..") || !strings.HasPrefix(asset, "assets/") {
		return nil, nil
	}
	body, _, err := s.env.Kernel.GetFile(ctx, "/data/"+asset+".sya")
	if errors.Is(err, siyuan.ErrFileNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer body.Close()
	return io.ReadAll(io.LimitReader(body, 4<<20))
}
