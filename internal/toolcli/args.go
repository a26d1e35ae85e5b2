package toolcli

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// FlagName is how an argument is spelled on the command line: kebab case
// (notebookID → notebook-id, blockIDs → block-ids, replace_all →
// replace-all). The declared spelling and snake case are accepted too.
func FlagName(arg string) string {
	var b strings.Builder
	rs := []rune(arg)
	for i, r := range rs {
		switch {
		case r == '_':
			b.WriteByte('-')
		case unicode.IsUpper(r):
			if i > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1])) {
				b.WriteByte('-')
			}
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// fold is a flag name with case, '-' and '_' ignored.
func fold(s string) string {
	return strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(s))
}

// Lookup finds the argument a flag names: the declared name exactly, then
// its kebab spelling, then any spelling equal with case, '-' and '_'
// ignored. Among arguments that share a spelling (parentID and upstream's
// parentId) the advertised one wins.
func Lookup(params []tools.Param, flag string) (tools.Param, bool) {
	for _, match := range []func(tools.Param) bool{
		func(p tools.Param) bool { return p.Name == flag },
		func(p tools.Param) bool { return FlagName(p.Name) == flag && !p.Hidden() },
		func(p tools.Param) bool { return FlagName(p.Name) == flag },
		func(p tools.Param) bool { return fold(p.Name) == fold(flag) && !p.Hidden() },
		func(p tools.Param) bool { return fold(p.Name) == fold(flag) },
	} {
		if i := slices.IndexFunc(params, match); i >= 0 {
			return params[i], true
		}
	}
	return tools.Param{}, false
}

// Parse reads an action's flags into its arguments, by the argument's
// type:
//
//	string       --name value, --name=value
//	integer      checked as an integer within its bounds
//	number       checked as a number
//	boolean      --name, --name=true|false, --no-name
//	array        repeated, comma-separated, or --name-json '["a","b"]'
//	object(s)    --name-json '{...}' (repeated for a list of objects)
//
// Every value may be given as JSON with --name-json. An unknown flag is
// refused with the nearest argument's flag.
func Parse(params []tools.Param, argv []string) (map[string]any, error) {
	out := map[string]any{}
	given := map[string]bool{}
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		if !strings.HasPrefix(a, "--") || a == "--" {
			return nil, fmt.Errorf("unexpected argument %q: every argument is a flag (--name value)", a)
		}
		name, val, inline := strings.Cut(a[2:], "=")
		p, isJSON, negated, ok := resolve(params, name)
		if !ok {
			msg := fmt.Sprintf("unknown flag --%s", name)
			if n := tools.NearestParam(strings.TrimSuffix(name, "-json"), params); n != "" {
				msg += fmt.Sprintf(" (did you mean --%s?)", FlagName(n))
			}
			return nil, fmt.Errorf("%s", msg)
		}
		flag := "--" + FlagName(p.Name)
		if negated {
			if inline {
				return nil, fmt.Errorf("--no-%s takes no value", FlagName(p.Name))
			}
			val, inline = "false", true
		}
		if !inline && p.Type == tools.Boolean && !isJSON {
			val, inline = "true", true
		}
		if !inline {
			if i+1 >= len(argv) {
				return nil, fmt.Errorf("%s needs a value", flag)
			}
			i++
			val = argv[i]
		}
		repeatable := p.Type == tools.Strings || p.Type == tools.Objects || p.Type == tools.OneOrObjects
		if given[p.Name] && !repeatable {
			return nil, fmt.Errorf("%s is given twice", flag)
		}
		given[p.Name] = true
		v, err := value(p, val, isJSON)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", flag, err)
		}
		if prev, ok := out[p.Name]; ok && repeatable {
			v = append(prev.([]any), v.([]any)...)
		}
		out[p.Name] = v
	}
	return out, nil
}

// resolve finds the argument of a flag name (without its dashes): the
// name, name-json, or no-name of a boolean.
func resolve(params []tools.Param, name string) (p tools.Param, isJSON, negated, ok bool) {
	if p, ok := Lookup(params, name); ok {
		return p, false, false, true
	}
	for _, suffix := range []string{"-json", "_json", "Json", "JSON"} {
		if base, cut := strings.CutSuffix(name, suffix); cut {
			if p, ok := Lookup(params, base); ok {
				return p, true, false, true
			}
		}
	}
	for _, prefix := range []string{"no-", "no_"} {
		if base, cut := strings.CutPrefix(name, prefix); cut {
			if p, ok := Lookup(params, base); ok && p.Type == tools.Boolean {
				return p, false, true, true
			}
		}
	}
	return tools.Param{}, false, false, false
}

// value reads one flag's value as its argument's type. Lists come back
// as []any so that repeated flags add up.
func value(p tools.Param, s string, isJSON bool) (any, error) {
	if isJSON {
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			return nil, fmt.Errorf("not valid JSON: %w", err)
		}
		switch p.Type {
		case tools.Strings, tools.Objects:
			l, ok := v.([]any)
			if !ok {
				return nil, fmt.Errorf("want a JSON array")
			}
			return l, nil
		case tools.OneOrObjects:
			if l, ok := v.([]any); ok {
				return l, nil
			}
			return []any{v}, nil
		}
		return v, nil
	}
	switch p.Type {
	case tools.String:
		if len(p.Enum) > 0 && !slices.Contains(p.Enum, s) {
			return nil, fmt.Errorf("must be one of %s, got %q", strings.Join(p.Enum, ", "), s)
		}
		return s, nil
	case tools.Integer:
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("must be an integer, got %q", s)
		}
		if p.Min != nil && n < *p.Min || p.Max != nil && n > *p.Max {
			return nil, fmt.Errorf("must be between %s and %s, got %d", bound(p.Min), bound(p.Max), n)
		}
		return n, nil
	case tools.Number:
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("must be a number, got %q", s)
		}
		return f, nil
	case tools.TextOrNumber:
		if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
			return f, nil
		}
		return s, nil
	case tools.Boolean:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, fmt.Errorf("must be true or false, got %q", s)
		}
		return b, nil
	case tools.Strings:
		var l []any
		for _, part := range strings.Split(s, ",") {
			if part = strings.TrimSpace(part); part != "" {
				l = append(l, part)
			}
		}
		if l == nil {
			l = []any{}
		}
		return l, nil
	case tools.Object, tools.Objects, tools.OneOrObjects:
		// A JSON object is the only way to write one; the -json suffix
		// may be left out.
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil || m == nil {
			return nil, fmt.Errorf("want a JSON object (or use --%s-json)", FlagName(p.Name))
		}
		if p.Type == tools.Object {
			return m, nil
		}
		return []any{m}, nil
	}
	return nil, fmt.Errorf("arguments of type %s are not supported", p.Type)
}

func bound(n *int) string {
	if n == nil {
		return "any"
	}
	return strconv.Itoa(*n)
}

// TakesValue reports whether arg is a flag of an argument whose value is
// the next word (--name, not --name=value, of an argument that is not a
// boolean).
func TakesValue(params []tools.Param, arg string) bool {
	name, ok := strings.CutPrefix(arg, "--")
	if !ok || strings.Contains(name, "=") {
		return false
	}
	p, isJSON, negated, ok := resolve(params, name)
	return ok && !negated && (isJSON || p.Type != tools.Boolean)
}
