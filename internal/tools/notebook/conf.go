package notebook

import (
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools/markup"
	"github.com/sisyphus-go/sisyphus/internal/tools/tplguard"
)

// settableConf are the notebook conf fields set_conf accepts, with their
// JSON types. closed is changed with set_open_state; encryption never.
var settableConf = map[string]string{
	"name": "string", "sort": "number", "icon": "string", "sortMode": "number",
	"refCreateSaveBox": "string", "refCreateSavePath": "string", "docCreateSaveBox": "string", "docCreateSavePath": "string",
	"dailyNoteSavePath": "string", "dailyNoteTemplatePath": "string",
}

func confPatch(patch map[string]any) (map[string]any, error) {
	if len(patch) == 0 {
		return nil, failure.Invalid("conf must name at least one field")
	}
	for k, v := range patch {
		kind, ok := settableConf[k]
		if !ok {
			if k == "closed" {
				return nil, failure.Invalid("conf.closed is changed with set_open_state")
			}
			return nil, failure.Invalid("conf.%s cannot be set (settable: name, icon, sort, sortMode, refCreateSaveBox, refCreateSavePath, docCreateSaveBox, docCreateSavePath, dailyNoteSavePath, dailyNoteTemplatePath)", k)
		}
		switch kind {
		case "string":
			if _, ok := v.(string); !ok {
				return nil, failure.Invalid("conf.%s must be a string", k)
			}
		case "number":
			f, ok := v.(float64)
			if !ok || f != float64(int(f)) {
				return nil, failure.Invalid("conf.%s must be an integer", k)
			}
			if k == "sortMode" && (f < 0 || f > 15) {
				return nil, failure.Invalid("conf.sortMode must be 0..15")
			}
		}
	}
	if n, ok := patch["name"].(string); ok && markup.NormalizeTitle(n) == "" {
		return nil, failure.Invalid("conf.name must not be empty")
	}
	if p, ok := patch["dailyNoteSavePath"].(string); ok && strings.TrimSpace(p) == "/" {
		return nil, failure.Invalid("conf.dailyNoteSavePath cannot be /")
	}
	// SiYuan renders the save paths as sprig templates when a document or
	// a daily note is created, for the person too and whatever is hidden
	// then: only pure functions (no index, environment or network).
	for _, k := range []string{"refCreateSavePath", "docCreateSavePath", "dailyNoteSavePath"} {
		if p, ok := patch[k].(string); ok {
			if err := tplguard.CheckPure(p, tplguard.Sprig); err != nil {
				return nil, failure.Prefixed(err, "conf."+k+": ")
			}
		}
	}
	if p, ok := patch["dailyNoteTemplatePath"].(string); ok {
		if err := tplguard.CheckTemplatePath("conf.dailyNoteTemplatePath", p); err != nil {
			return nil, err
		}
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
		return got == markup.NormalizeTitle(s)
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
