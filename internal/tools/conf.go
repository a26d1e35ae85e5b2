package tools

import (
	"context"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// SiYuan's configuration (system.conf) and each notebook's (notebook
// get_conf, and the states of the writes that change it) name notebooks:
// where a new document or the document a reference creates is saved (a
// notebook's id in a ...SaveBox field and, in the ...SavePath beside it,
// a path of that notebook's documents by their titles), a default
// notebook. While a notebook is hidden from agents those read as "": its
// id, and the path of a save box it is.

// WithheldLayout stands in for SiYuan's window layout while a notebook is
// hidden from agents.
const WithheldLayout = "(withheld while a notebook is hidden from agents: the layout names the documents open in SiYuan)"

const (
	saveBox  = "SaveBox"
	savePath = "SavePath"
)

// HiddenNotebooks are the notebooks the call may not see: those SiYuan
// lists that the policy hides, and every notebook the policy names at
// none (listed or not: SiYuan may leave out a notebook whose
// configuration it cannot read for a moment). Without a hidden notebook it
// is empty and nothing is looked up.
func HiddenNotebooks(ctx context.Context, env *Env) (map[string]bool, error) {
	p := PolicyFrom(ctx)
	hidden := map[string]bool{}
	if p == nil || !p.Hides() {
		return hidden, nil
	}
	for id, l := range p.Notebooks {
		if l == LevelNone {
			hidden[id] = true
		}
	}
	nbs, err := env.Kernel.ListNotebooks(ctx)
	if err != nil {
		return nil, KernelError(err)
	}
	for _, n := range nbs {
		if !p.Visible(n.ID) {
			hidden[n.ID] = true
		}
	}
	return hidden, nil
}

// VeilConf is SiYuan's configuration (decoded JSON) as the call may see
// it while a notebook is hidden: the window layout (uiLayout: the open
// documents, with their titles) is withheld, a save path whose save box
// is a hidden notebook reads as "", and every string that is a hidden
// notebook's id reads as "". Without a hidden notebook conf is unchanged;
// otherwise it is changed in place.
func VeilConf(ctx context.Context, env *Env, conf any) (any, error) {
	if !Hiding(ctx) {
		return conf, nil
	}
	hidden, err := HiddenNotebooks(ctx, env)
	if err != nil {
		return nil, err
	}
	if m, ok := conf.(map[string]any); ok {
		if _, has := m["uiLayout"]; has {
			m["uiLayout"] = WithheldLayout
		}
	}
	hiddenBox := func(id string) bool { return id != "" && (hidden[id] || !Visible(ctx, id)) }
	return veilConfValue(conf, hidden, hiddenBox), nil
}

// veilConfValue blanks, anywhere in v, the save boxes hiddenBox tells
// and their save paths, and every string that is one of the hidden ids.
func veilConfValue(v any, hidden map[string]bool, hiddenBox func(string) bool) any {
	switch x := v.(type) {
	case string:
		if hidden[x] {
			return ""
		}
	case map[string]any:
		for k, box := range x {
			if id, ok := box.(string); ok && strings.HasSuffix(k, saveBox) && hiddenBox(id) {
				x[k] = ""
				if p := strings.TrimSuffix(k, saveBox) + savePath; x[p] != nil {
					x[p] = ""
				}
			}
		}
		for k, e := range x {
			x[k] = veilConfValue(e, hidden, hiddenBox)
		}
	case []any:
		for i, e := range x {
			x[i] = veilConfValue(e, hidden, hiddenBox)
		}
	}
	return v
}

// VeilBoxConf is a notebook's configuration as the call may see it: a
// save box that is a notebook the call may not see reads as "", and so
// does the save path beside it.
func VeilBoxConf(ctx context.Context, c siyuan.BoxConf) siyuan.BoxConf {
	if !Hiding(ctx) {
		return c
	}
	for _, f := range []struct{ box, path *string }{
		{&c.RefCreateSaveBox, &c.RefCreateSavePath},
		{&c.DocCreateSaveBox, &c.DocCreateSavePath},
	} {
		if *f.box != "" && !Visible(ctx, *f.box) {
			*f.box, *f.path = "", ""
		}
	}
	return c
}
