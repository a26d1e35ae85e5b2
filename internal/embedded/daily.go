package embedded

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"text/template"
	"time"

	"github.com/88250/lute/parse"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
)

// Daily notes, as SiYuan 3.7.3's model.CreateDailyNote and the block
// endpoints that write into today's note.

const dailyNoteAttrPrefix = "custom-dailynote-"

func (k *Kernel) dailyRoutes() map[string]route {
	return map[string]route{
		endpoint.CreateDailyNote:       {json: k.createDailyNote},
		endpoint.AppendDailyNoteBlock:  {json: k.appendDailyNoteBlock},
		endpoint.PrependDailyNoteBlock: {json: k.prependDailyNoteBlock},
		endpoint.DuplicateDoc:          {json: k.duplicateDoc},
		endpoint.Heading2Doc:           {json: k.heading2Doc},
		endpoint.Doc2Heading:           {json: k.doc2Heading},
	}
}

// errNoDailyPath is SiYuan's answer for a notebook without a daily-note path.
const errNoDailyPath = "Please specify the daily note save path in the Notebook Settings"

func (k *Kernel) createDailyNote(ctx context.Context, a args) (any, error) {
	box, err := a.str("notebook")
	if err != nil {
		return nil, err
	}
	id, err := k.dailyNote(ctx, box)
	if err != nil {
		return nil, err
	}
	return map[string]any{"id": id}, nil
}

// dailyNote finds or creates today's note of a notebook (callers hold writeMu).
func (k *Kernel) dailyNote(ctx context.Context, box string) (string, error) {
	conf, err := k.readBoxConf(box)
	if errors.Is(err, errNotFound) {
		return "", errCode(1, "notebook not found")
	}
	if err != nil {
		return "", err
	}
	if conf.DailyNoteSavePath == "" || conf.DailyNoteSavePath == "/" {
		return "", errf("%s", errNoDailyPath)
	}
	now := time.Now()
	tpl, err := template.New("").Funcs(k.templateFuncs(ctx, now)).Parse(conf.DailyNoteSavePath)
	if err != nil {
		return "", templateErr(err)
	}
	var buf bytes.Buffer
	if err := tpl.Execute(&buf, nil); err != nil {
		return "", templateErr(err)
	}
	hp := trimSpaceInPath(buf.String())
	date := now.Format("20060102")
	if ids := k.docsByHPath(box, hp); len(ids) > 0 {
		// SiYuan tags the note it found with today's attribute.
		tree, err := k.loadTree(ids[0])
		if err != nil {
			return "", err
		}
		if tree.Root.IALAttr(dailyNoteAttrPrefix+date) == "" {
			tree.Root.SetIALAttr(dailyNoteAttrPrefix+date, date)
			if err := k.writeTree(tree); err != nil {
				return "", err
			}
		}
		return ids[0], nil
	}
	raw, err := k.createDocWithMd(ctx, args{"notebook": box, "path": hp, "markdown": ""})
	if err != nil {
		return "", err
	}
	id := raw.(string)
	tree, err := k.loadTree(id)
	if err != nil {
		return "", err
	}
	if conf.DailyNoteTemplatePath != "" {
		if err := k.applyDailyTemplate(ctx, tree, conf.DailyNoteTemplatePath); err != nil {
			k.log.Warn("render daily note template", "template", conf.DailyNoteTemplatePath, "err", err)
		}
	}
	tree.Root.SetIALAttr(dailyNoteAttrPrefix+date, date)
	if err := k.writeTree(tree); err != nil {
		return "", err
	}
	return id, nil
}

// applyDailyTemplate replaces the new note's empty paragraph with the
// rendered template (a missing template is skipped, as SiYuan does).
func (k *Kernel) applyDailyTemplate(ctx context.Context, tree *parse.Tree, rel string) error {
	abs := filepath.Join(k.templatesDir(), filepath.FromSlash(rel))
	if _, err := os.Stat(abs); err != nil {
		return nil
	}
	out, err := k.renderTemplate(ctx, args{"path": abs, "id": tree.ID})
	if err != nil {
		return err
	}
	dom, _ := out.(map[string]any)["content"].(string)
	if strings.TrimSpace(dom) == "" {
		return nil
	}
	sub, nodes, err := subTree(dom)
	if err != nil || sub == nil {
		return err
	}
	tree.Root.FirstChild.Unlink()
	for _, n := range nodes {
		tree.Root.AppendChild(n)
	}
	tree.Root.SetIALAttr("updated", nowStamp())
	return nil
}

// trimSpaceInPath is SiYuan's util.TrimSpaceInPath: each segment trimmed.
func trimSpaceInPath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = strings.TrimSpace(s)
	}
	return strings.Join(parts, "/")
}

func (k *Kernel) appendDailyNoteBlock(ctx context.Context, a args) (any, error) {
	return k.dailyNoteInsert(ctx, a, false)
}

func (k *Kernel) prependDailyNoteBlock(ctx context.Context, a args) (any, error) {
	return k.dailyNoteInsert(ctx, a, true)
}

func (k *Kernel) dailyNoteInsert(ctx context.Context, a args, prepend bool) (any, error) {
	if _, err := a.str("data"); err != nil {
		return nil, err
	}
	if _, err := a.str("dataType"); err != nil {
		return nil, err
	}
	box, err := a.id("notebook")
	if err != nil {
		return nil, err
	}
	data, err := blockData(a)
	if err != nil {
		return nil, err
	}
	id, err := k.dailyNote(ctx, box)
	if err != nil {
		return nil, errf("create daily note failed: %s", err.Error())
	}
	return k.pushBlock(args{"parentID": id, "dataType": "dom", "data": data}, prepend)
}
