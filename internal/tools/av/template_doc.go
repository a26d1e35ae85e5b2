package av

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/markup"
	"github.com/sisyphus-go/sisyphus/internal/tools/tplfile"
	"github.com/sisyphus-go/sisyphus/internal/tools/tplguard"
)

// Document targets of create_from_template: the template makes a new
// document and binds the item to it, as SiYuan 3.7.3's
// createAttributeViewItem does, composed from calls whose ids this call
// chooses (the document's as well as the item's), so that a replay after
// a lost reply finds both and makes neither again.
//
// Where the document goes is decided as SiYuan decides it: the
// template's save location (a notebook, else the database block's, and a
// path template), else the database block's notebook's settings for new
// documents, else the workspace's; the path template rendered by the
// kernel (renderSprig, the functions SiYuan gives it), the title the
// rendered primary key (else the path's last part); a relative path is
// under the database block's document when it stays in that notebook.
// The document is made with createDocWithMd (the reserved id; missing
// parents are made as SiYuan makes them), the template's icon set on it,
// then the item bound to it by the transaction SiYuan builds.
//
// A content template (contentTemplatePath, under data/templates) fills
// the document as SiYuan's applyNewItemContentTemplate does: the file is
// rendered for the new document, its blocks replace the document's first
// (the empty paragraph a new document has), and the template's own
// document attributes (name, alias, bookmark, memo, icon, custom-*) are
// copied onto it; the item template's icon is set after, over the
// template's. Here the file is read, hashed into the state and checked
// like any template file.render renders (tplguard, hidden references),
// and SiYuan renders a private copy of exactly those bytes (tplfile); the
// blocks go in with the removal of the empty paragraph in one
// transaction, the first block under an id this call reserved, so that a
// replay finds them. SiYuan copies attribute values as the template
// rendered them; an attribute whose value holds template actions cannot
// be read rendered through the API, and such a template is refused at
// preflight, as is a title that renders empty (which SiYuan replaces by
// "Untitled" marked as empty).

const idDoc = "doc"

// idFirst is the reserved id of the content template's first block.
const idFirst = "first"

// docTarget is what decides where the document goes (hashed: a change of
// any of it between the preflight and the commit is state_changed).
type docTarget struct {
	Box       string   `json:"box"`   // the database block's notebook
	Root      string   `json:"root"`  // its document
	HPath     string   `json:"hpath"` // that document's human path
	NBBox     string   `json:"nbBox,omitempty"`
	NBPath    string   `json:"nbPath,omitempty"`
	ConfBox   string   `json:"confBox,omitempty"`
	ConfPath  string   `json:"confPath,omitempty"`
	Open      []string `json:"open"`
	Encrypted []string `json:"encrypted,omitempty"`
}

// docPlace is where the document goes, once the path is rendered.
type docPlace struct {
	Box, HPath, ParentID, Title string
}

func readDocTarget(ctx context.Context, env *tools.Env, blockID string) (*docTarget, error) {
	info, err := env.Kernel.GetBlockInfo(ctx, blockID)
	if err != nil {
		return nil, fmt.Errorf("read the database block %s: %w", blockID, err)
	}
	t := &docTarget{Box: info.Box, Root: info.RootID, Open: []string{}}
	if t.HPath, err = env.Kernel.GetHPathByID(ctx, info.RootID); err != nil {
		return nil, fmt.Errorf("read the path of document %s: %w", info.RootID, err)
	}
	nbs, err := env.Kernel.ListNotebooks(ctx)
	if err != nil {
		return nil, err
	}
	for _, nb := range nbs {
		if !nb.Closed {
			t.Open = append(t.Open, nb.ID)
		}
		if nb.Encrypted {
			t.Encrypted = append(t.Encrypted, nb.ID)
		}
	}
	if slices.Contains(t.Open, t.Box) {
		conf, err := env.Kernel.GetNotebookConf(ctx, t.Box)
		if err != nil {
			return nil, err
		}
		t.NBBox, t.NBPath = conf.Conf.DocCreateSaveBox, conf.Conf.DocCreateSavePath
	}
	conf, err := env.Kernel.GetConf(ctx)
	if err != nil {
		return nil, err
	}
	var c struct {
		FileTree struct {
			DocCreateSaveBox  string `json:"docCreateSaveBox"`
			DocCreateSavePath string `json:"docCreateSavePath"`
		} `json:"fileTree"`
	}
	if err := json.Unmarshal(conf.Conf, &c); err != nil {
		return nil, fmt.Errorf("read the workspace's settings: %w", err)
	}
	t.ConfBox, t.ConfPath = c.FileTree.DocCreateSaveBox, c.FileTree.DocCreateSavePath
	return t, nil
}

// location is resolveNewItemSaveConfig: the notebook and path template,
// and whether they were inherited from the settings.
func (t *docTarget) location(loc *siyuan.AVNewItemSaveLocation) (box, tpl string, inherited bool, err error) {
	open := func(id string) bool { return slices.Contains(t.Open, id) }
	if loc != nil {
		box = loc.BoxID
		if box == "" {
			box = t.Box
		}
		if !open(box) {
			return "", "", false, failure.Invalid("the template saves its document in notebook %s, which is not open", box)
		}
		return box, loc.PathTemplate, false, t.sameIfEncrypted(box)
	}
	box, tpl = t.Box, t.ConfPath
	if t.NBBox != "" || t.NBPath != "" {
		box, tpl = t.NBBox, t.NBPath
	}
	if box == "" {
		box = t.ConfBox
	}
	if box == "" || !open(box) {
		box = t.Box
	}
	if tpl == "" {
		tpl = t.ConfPath
	}
	return box, tpl, true, t.sameIfEncrypted(box)
}

func (t *docTarget) sameIfEncrypted(box string) error {
	if slices.Contains(t.Encrypted, t.Box) && box != t.Box {
		return failure.Invalid("a document of an item of a database in an encrypted notebook must stay in that notebook")
	}
	return nil
}

// place is resolveAttributeViewNewItemTemplate's document part: the
// path template rendered, the title and the human path.
func (t *docTarget) place(ctx context.Context, env *tools.Env, tpl *siyuan.AVNewItemTemplate, primary string) (docPlace, error) {
	box, pathTpl, inherited, err := t.location(tpl.SaveLocation)
	if err != nil {
		return docPlace{}, err
	}
	rendered, err := renderPrimary(ctx, env, pathTpl)
	if err != nil {
		return docPlace{}, failure.Invalid("template %s: its save path does not render: %v", tpl.ID, tools.KernelError(err))
	}
	rendered = trimSpaceInPath(rendered)
	if box != t.Box && rendered != "" && !strings.HasPrefix(rendered, "/") {
		rendered = "/" + rendered
	}
	title := markup.NormalizeTitle(primary)
	if title == "" {
		title = titleFromPath(rendered)
	}
	if title == "" {
		return docPlace{}, failure.Invalid("template %s renders an empty title (primary key and save path): give it a primaryKeyTemplate", tpl.ID)
	}
	parentTpl := parentPathTemplate(rendered)
	base, parentID := "/", ""
	if box == t.Box && !strings.HasPrefix(parentTpl, "/") {
		base, parentID = t.HPath, t.Root
	}
	parent := path.Clean(path.Join(base, parentTpl))
	if parent == "." || parent == "" {
		parent = "/"
	}
	if !strings.HasPrefix(parent, "/") {
		parent = "/" + parent
	}
	if inherited && box != t.Box {
		parentID = ""
	}
	return docPlace{Box: box, HPath: path.Join(parent, title), ParentID: parentID, Title: title}, nil
}

// trimSpaceInPath trims every part of a path, as SiYuan's TrimSpaceInPath.
func trimSpaceInPath(p string) string {
	parts := strings.Split(strings.TrimSpace(p), "/")
	for i, s := range parts {
		parts[i] = strings.TrimSpace(s)
	}
	return strings.Join(parts, "/")
}

// parentPathTemplate is newItemParentPathTemplate: the rendered path
// without its last part (a path ending in "/" is all parent).
func parentPathTemplate(rendered string) string {
	if rendered == "" || strings.HasSuffix(rendered, "/") {
		return rendered
	}
	abs := strings.HasPrefix(rendered, "/")
	segs := strings.FieldsFunc(rendered, func(r rune) bool { return r == '/' })
	if len(segs) <= 1 {
		if abs {
			return "/"
		}
		return ""
	}
	parent := strings.Join(segs[:len(segs)-1], "/")
	if abs {
		parent = "/" + parent
	}
	return parent
}

// titleFromPath is newItemTitleFromPath: the path's last part as a title.
func titleFromPath(rendered string) string {
	if rendered == "" || strings.HasSuffix(rendered, "/") {
		return ""
	}
	return markup.NormalizeTitle(path.Base(rendered))
}

// docSteps are the document's steps of a document-bound item: make it
// with the reserved id, then set the template's icon. For a detached
// item they are done before they start.
func docSteps() []tools.Step[templateItemArgs] {
	return []tools.Step[templateItemArgs]{
		{Name: idDoc,
			Do: func(ctx context.Context, env *tools.Env, a templateItemArgs, ids map[string]string) (map[string]string, error) {
				if ids[idDoc] == "" {
					return nil, nil
				}
				st, err := readTemplateItem(ctx, env, a)
				if err != nil {
					return nil, tools.Refuse(err)
				}
				if err := checkTemplateItem(a, st); err != nil {
					return nil, tools.Refuse(err)
				}
				if _, err := env.Kernel.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: st.place.Box, Path: st.place.HPath,
					ParentID: st.place.ParentID, ID: ids[idDoc]}); err != nil {
					return nil, tools.WriteFailure(err, false)
				}
				return map[string]string{"title": digestText(st.place.Title), "primary": st.place.Title}, nil
			},
			Present: func(ctx context.Context, env *tools.Env, _ templateItemArgs, ids map[string]string) (bool, error) {
				if ids[idDoc] == "" {
					return true, nil
				}
				return docPresent(ctx, env, ids[idDoc])
			},
		},
		contentStep(),
		attrsStep(),
		{Name: "icon", Redo: true, // setting an attribute again changes nothing
			Do: func(ctx context.Context, env *tools.Env, a templateItemArgs, ids map[string]string) (map[string]string, error) {
				if ids[idDoc] == "" || ids["icon"] == "" {
					return nil, nil
				}
				if err := env.Kernel.SetBlockAttrs(ctx, ids[idDoc], map[string]string{"icon": ids["icon"]}); err != nil {
					return nil, tools.WriteFailure(err, false)
				}
				return nil, nil
			},
			Present: func(ctx context.Context, env *tools.Env, _ templateItemArgs, ids map[string]string) (bool, error) {
				if ids[idDoc] == "" || ids["icon"] == "" {
					return true, nil
				}
				return tools.Poll(ctx, func() (bool, error) {
					attrs, err := env.Kernel.GetBlockAttrs(ctx, ids[idDoc])
					return err == nil && attrs["icon"] == ids["icon"], err
				})
			},
		},
	}
}

// docPresent is whether the kernel shows a block (the document).
func docPresent(ctx context.Context, env *tools.Env, id string) (bool, error) {
	return tools.Poll(ctx, func() (bool, error) { return env.Kernel.CheckBlockExist(ctx, id) })
}

// docMade requires the document made: in its notebook, with the
// template's icon when it has one.
func docMade(ctx context.Context, env *tools.Env, doc, box, icon string) error {
	info, err := env.Kernel.GetBlockInfo(ctx, doc)
	if err != nil {
		return fmt.Errorf("read the new document %s: %w", doc, err)
	}
	if info.RootID != doc || (box != "" && info.Box != box) {
		return fmt.Errorf("document %s is not a document of notebook %s", doc, box)
	}
	if icon != "" {
		attrs, err := env.Kernel.GetBlockAttrs(ctx, doc)
		if err != nil {
			return err
		}
		if attrs["icon"] != icon {
			return fmt.Errorf("document %s has the icon %q, want %q", doc, attrs["icon"], icon)
		}
	}
	return nil
}

// contentTpl is a document template's content template: hashed (its
// path and the digest of its bytes), and, for the check and the steps,
// its source, the attributes SiYuan copies from it and why it cannot be
// rendered.
type contentTpl struct {
	Path   string `json:"path"` // templates/<rel>
	SHA256 string `json:"sha256"`
	src    string
	attrs  map[string]string
	err    error
}

// contentAttr is whether SiYuan copies a template's document attribute
// onto the new document.
func contentAttr(k string) bool {
	switch k {
	case "name", "alias", "bookmark", "memo", "icon":
		return true
	}
	return strings.HasPrefix(k, "custom-")
}

// contentPath is resolveNewItemContentTemplatePath's check of the
// path, on the kernel's own rules: relative to data/templates, never
// climbing out of it, never absolute.
func contentPath(given string) (string, error) {
	p := strings.TrimSpace(given)
	c := path.Clean(strings.ReplaceAll(p, `\`, "/"))
	if p == "" || c == "." || c == ".." || strings.HasPrefix(c, "/") || strings.HasPrefix(c, "../") || (len(c) > 1 && c[1] == ':') {
		return "", failure.Invalid("contentTemplatePath %q: SiYuan takes a path relative to data/templates, like meeting.md (invalid content template path)", given)
	}
	return "templates/" + c, nil
}

// readContentTpl reads and checks a content template.
func readContentTpl(ctx context.Context, env *tools.Env, given string) (*contentTpl, error) {
	rel, err := contentPath(given)
	if err != nil {
		return &contentTpl{Path: given, err: err}, nil
	}
	c := &contentTpl{Path: rel}
	src, err := tplfile.Read(ctx, env, rel)
	var fe *failure.Error
	if errors.As(err, &fe) {
		c.err = fe
		return c, nil
	}
	if err != nil {
		return nil, err
	}
	c.src, c.SHA256 = src, digestText(src)
	if c.err = tplguard.Check(ctx, src, tplguard.File); c.err != nil {
		return c, nil
	}
	if c.err = tplfile.CheckRefs(ctx, env, src); c.err != nil {
		return c, nil
	}
	docAttrs, ok := markup.DocAttrs(src)
	if !ok {
		c.err = failure.Invalid("content template %s: its document attributes ({: ... type=\"doc\"}) do not parse as SiYuan parses them (the first must be id)", rel)
		return c, nil
	}
	c.attrs = map[string]string{}
	for k, v := range docAttrs {
		if !contentAttr(k) {
			continue
		}
		if strings.Contains(v, tplguard.File[0]) {
			c.err = failure.Invalid("content template %s: its document attribute %s holds template actions, which SiYuan renders but no API call shows rendered; give it a fixed value", rel, k)
			return c, nil
		}
		c.attrs[k] = v
	}
	return c, nil
}

// firstBlockID is the id of the first block of rendered block DOM ("":
// none).
func firstBlockID(dom string) string {
	const attr = `data-node-id="`
	i := strings.Index(dom, attr)
	if i < 0 {
		return ""
	}
	rest := dom[i+len(attr):]
	j := strings.IndexByte(rest, '"')
	if j < 0 {
		return ""
	}
	return rest[:j]
}

// contentStep fills the document from the content template: rendered
// for the document from a private copy of the checked bytes, the first
// block renamed to the reserved id (every mention of its id: a template
// referring to its own first block keeps doing so), appended with the
// removal of the document's first block in one transaction. A template
// that renders nothing leaves the document as made, as SiYuan does.
func contentStep() tools.Step[templateItemArgs] {
	return tools.Step[templateItemArgs]{Name: "content",
		Do: func(ctx context.Context, env *tools.Env, a templateItemArgs, ids map[string]string) (map[string]string, error) {
			if ids[idDoc] == "" || ids[idFirst] == "" {
				return nil, nil
			}
			st, err := readTemplateItem(ctx, env, a)
			if err != nil {
				return nil, tools.Refuse(err)
			}
			if err := checkTemplateItem(a, st); err != nil {
				return nil, tools.Refuse(err)
			}
			c := st.Content
			if c == nil {
				return nil, tools.Refuse(failure.New(failure.StateChanged, "template %s no longer has a content template", a.Template))
			}
			abs, err := tplfile.Locate(ctx, env, c.Path)
			if err != nil {
				return nil, tools.Refuse(err)
			}
			dom, err := tplfile.Render(ctx, env, ids[idDoc], c.Path, abs, c.src, false)
			if err != nil {
				return nil, tools.Refuse(fmt.Errorf("render the content template %s: %w", c.Path, err))
			}
			if err := tplfile.CheckRefs(ctx, env, dom); err != nil {
				return nil, tools.Refuse(err)
			}
			first := firstBlockID(dom)
			if first == "" {
				return map[string]string{"content": "empty"}, nil
			}
			dom = strings.ReplaceAll(dom, first, ids[idFirst])
			kids, err := env.Kernel.GetChildBlocks(ctx, ids[idDoc])
			if err != nil {
				return nil, tools.Refuse(err)
			}
			ops := []siyuan.Operation{{Action: "appendInsert", Data: dom, ParentID: ids[idDoc]}}
			if len(kids) > 0 {
				ops = append(ops, siyuan.Operation{Action: "delete", ID: kids[0].ID})
			}
			if _, err := env.Kernel.Transactions(ctx, []siyuan.Transaction{{DoOperations: ops}}); err != nil {
				return nil, tools.WriteFailure(err, false)
			}
			return nil, nil
		},
		Present: func(ctx context.Context, env *tools.Env, _ templateItemArgs, ids map[string]string) (bool, error) {
			if ids[idDoc] == "" || ids[idFirst] == "" || ids["content"] == "empty" {
				return true, nil
			}
			return docPresent(ctx, env, ids[idFirst])
		},
	}
}

// attrsStep copies the content template's document attributes onto the
// document (after the content, as SiYuan; the item template's icon comes
// after). Its digest is learned for the readback.
func attrsStep() tools.Step[templateItemArgs] {
	return tools.Step[templateItemArgs]{Name: "attrs", Redo: true, // setting attributes again changes nothing
		Do: func(ctx context.Context, env *tools.Env, a templateItemArgs, ids map[string]string) (map[string]string, error) {
			if ids[idDoc] == "" || ids[idFirst] == "" || ids["content"] == "empty" {
				return nil, nil
			}
			st, err := readTemplateItem(ctx, env, a)
			if err != nil {
				return nil, tools.Refuse(err)
			}
			if st.Content == nil || st.Content.err != nil {
				return nil, tools.Refuse(failure.New(failure.StateChanged, "template %s's content template changed", a.Template))
			}
			attrs := contentAttrsSet(st.Content.attrs, ids["icon"])
			if len(attrs) == 0 {
				return nil, nil
			}
			if err := env.Kernel.SetBlockAttrs(ctx, ids[idDoc], attrs); err != nil {
				return nil, tools.WriteFailure(err, false)
			}
			return map[string]string{"attrs": attrsDigest(attrs)}, nil
		},
		// The digest the step learned says what it set; without it (sent,
		// never confirmed) the step is sent again, which is harmless.
		Present: func(ctx context.Context, env *tools.Env, _ templateItemArgs, ids map[string]string) (bool, error) {
			if ids[idDoc] == "" || ids[idFirst] == "" || ids["content"] == "empty" || ids["attrKeys"] == "" {
				return true, nil
			}
			if ids["attrs"] == "" {
				return false, nil
			}
			return tools.Poll(ctx, func() (bool, error) {
				return attrsHeld(ctx, env, ids[idDoc], strings.Fields(ids["attrKeys"]), ids["attrs"])
			})
		},
	}
}

// contentAttrsSet is the attributes the attrs step sets: the template's,
// but its icon when the item template sets its own (set after it).
func contentAttrsSet(attrs map[string]string, icon string) map[string]string {
	out := make(map[string]string, len(attrs))
	for k, v := range attrs {
		if k == "icon" && icon != "" {
			continue
		}
		out[k] = v
	}
	return out
}

// attrsDigest is a digest of attributes, in key order.
func attrsDigest(attrs map[string]string) string {
	keys := make([]string, 0, len(attrs))
	for k := range attrs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "\x00" + attrs[k] + "\x00")
	}
	return digestText(b.String())
}

// contentMade requires the content template's blocks in the document
// (its first block under the reserved id) and its attributes as set.
func contentMade(ctx context.Context, env *tools.Env, doc, first string, keys []string, digest string) error {
	if first != "" {
		info, err := env.Kernel.GetBlockInfo(ctx, first)
		if err != nil {
			return fmt.Errorf("read the content template's first block %s: %w", first, err)
		}
		if info.RootID != doc {
			return fmt.Errorf("the content template's first block %s is not in document %s", first, doc)
		}
	}
	if digest == "" {
		return nil
	}
	held, err := attrsHeld(ctx, env, doc, keys, digest)
	if err != nil {
		return err
	}
	if !held {
		return fmt.Errorf("document %s does not hold the content template's attributes %v", doc, keys)
	}
	return nil
}

// attrsHeld is whether the document's attributes named by keys have the
// digest the attrs step learned.
func attrsHeld(ctx context.Context, env *tools.Env, doc string, keys []string, digest string) (bool, error) {
	got, err := env.Kernel.GetBlockAttrs(ctx, doc)
	if err != nil {
		return false, err
	}
	set := map[string]string{}
	for _, k := range keys {
		set[k] = got[k]
	}
	return attrsDigest(set) == digest, nil
}
