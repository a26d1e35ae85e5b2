package markup

import "github.com/sisyphus-go/sisyphus/internal/failure"

// TextEdit is one exact text edit, as fs.replace and block.replace take
// it: replace Old (never empty) with New, once (Old must occur once) or,
// with ReplaceAll, every occurrence.
type TextEdit struct {
	Old, New   string
	ReplaceAll bool
}

// ParseEdit reads edit #i+1 of an edit argument: an object of old (a
// non-empty string), new (a string, may be empty) and replace_all (or
// replaceAll, a boolean). Any other field is refused, so a misspelt one
// cannot pass silently.
func ParseEdit(i int, m map[string]any) (TextEdit, error) {
	var e TextEdit
	old, ok := m["old"].(string)
	if !ok || old == "" {
		return e, failure.Invalid("edit #%d needs old, a non-empty string", i+1)
	}
	repl, ok := m["new"].(string)
	if !ok {
		return e, failure.Invalid("edit #%d needs new, a string (may be empty)", i+1)
	}
	e.Old, e.New = old, repl
	for _, k := range []string{"replace_all", "replaceAll"} {
		switch v := m[k].(type) {
		case nil:
		case bool:
			e.ReplaceAll = e.ReplaceAll || v
		default:
			return e, failure.Invalid("edit #%d: %s must be a boolean", i+1, k)
		}
	}
	for k := range m {
		switch k {
		case "old", "new", "replace_all", "replaceAll":
		default:
			return e, failure.Invalid("edit #%d has an unknown field %q (old, new, replace_all)", i+1, k)
		}
	}
	return e, nil
}
