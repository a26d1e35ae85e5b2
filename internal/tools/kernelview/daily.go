package kernelview

import (
	"context"
	"fmt"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// DailyAttrPrefix starts the attribute SiYuan stamps on a daily note
// (custom-dailynote-YYYYMMDD="YYYYMMDD").
const DailyAttrPrefix = "custom-dailynote-"

// DailyTarget is what a daily-note write needs of its notebook: that it
// exists, is open, and says where daily notes go.
type DailyTarget struct {
	Notebook string `json:"notebook"`
	Missing  bool   `json:"missing,omitempty"`
	Closed   bool   `json:"closed,omitempty"`
	SavePath string `json:"dailyNoteSavePath,omitempty"`
	Template string `json:"dailyNoteTemplatePath,omitempty"`
}

// ReadDailyTarget reads a notebook's entry and daily-note settings.
func ReadDailyTarget(ctx context.Context, env *tools.Env, notebook string) (DailyTarget, error) {
	st, err := ReadNotebookState(ctx, env, notebook)
	if err != nil {
		return DailyTarget{}, err
	}
	if st.Missing {
		return DailyTarget{Notebook: notebook, Missing: true}, nil
	}
	return DailyTarget{Notebook: notebook, Closed: st.Entry.Closed, SavePath: st.Conf.DailyNoteSavePath,
		Template: st.Conf.DailyNoteTemplatePath}, nil
}

// Check refuses what SiYuan would refuse: a missing or closed notebook, or
// one without a daily-note save path.
func (d DailyTarget) Check() error {
	switch {
	case d.Missing:
		return failure.Missing("notebook", d.Notebook)
	case d.Closed:
		return failure.Invalid("notebook %s is closed: open it first (notebook set_open_state)", d.Notebook)
	case d.SavePath == "" || d.SavePath == "/":
		e := failure.Invalid("notebook %s has no daily-note save path (its dailyNoteSavePath is %q)", d.Notebook, d.SavePath)
		e.Action = "set the notebook's daily-note save path (notebook set_conf or SiYuan's notebook settings), then preflight again"
		return e
	}
	return nil
}

// DailyNoteAt describes a daily note as a readback sees it: where it lives
// and the date attribute SiYuan stamped on it.
type DailyNoteAt struct {
	ID       string `json:"id"`
	Notebook string `json:"notebook"`
	Path     string `json:"path"`
	HPath    string `json:"hpath"`
	Date     string `json:"date"`
}

// ReadDailyNote reads where a document lives and the daily-note date
// attribute it carries ("" when none). The date is read from the
// document's kramdown: SiYuan writes it into the tree of a note it found,
// while getBlockAttrs keeps serving the cached attributes without it.
func ReadDailyNote(ctx context.Context, env *tools.Env, id string) (DailyNoteAt, error) {
	p, err := env.Kernel.GetPathByID(ctx, id)
	if err != nil {
		return DailyNoteAt{}, err
	}
	kd, err := env.Kernel.GetBlockKramdown(ctx, id)
	if err != nil {
		return DailyNoteAt{}, err
	}
	hp, err := env.Kernel.GetHPathByID(ctx, id)
	if err != nil {
		return DailyNoteAt{}, err
	}
	return DailyNoteAt{ID: id, Notebook: p.Notebook, Path: p.Path, HPath: hp, Date: dailyDate(kd.Kramdown)}, nil
}

// Of requires the note to be a daily note: a document of the notebook
// with the date attribute.
func (d DailyNoteAt) Of(notebook string) error {
	switch {
	case d.Notebook != notebook || !strings.HasSuffix(d.Path, "/"+d.ID+".sy"):
		return fmt.Errorf("daily note %s is at %s in notebook %s, not a document of notebook %s", d.ID, d.Path, d.Notebook, notebook)
	case d.Date == "":
		return fmt.Errorf("document %s has no %s attribute", d.ID, DailyAttrPrefix+"YYYYMMDD")
	}
	return nil
}

// dailyDate finds the newest custom-dailynote-YYYYMMDD date in the
// document's own IAL (its kramdown's last line).
func dailyDate(kramdown string) string {
	ial := kramdown
	if i := strings.LastIndex(kramdown, "\n{:"); i >= 0 {
		ial = kramdown[i+1:]
	}
	best := ""
	for rest := ial; ; {
		i := strings.Index(rest, DailyAttrPrefix)
		if i < 0 {
			break
		}
		rest = rest[i+len(DailyAttrPrefix):]
		if len(rest) >= 8 && isDigits(rest[:8]) && rest[:8] > best {
			best = rest[:8]
		}
	}
	return best
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}
