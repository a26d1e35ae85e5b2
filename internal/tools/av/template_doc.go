package av

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/markup"
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
// A template with a content template (contentTemplatePath) is refused at
// preflight: SiYuan renders that file into the document's tree directly,
// which no API call reproduces exactly (the template's own attributes
// would be lost). So is a title that renders empty, which SiYuan
// replaces by "Untitled" marked as empty.

const idDoc = "doc"

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
