package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/jsonobj"
)

// ParamType is a JSON Schema type of an argument.
type ParamType string

// Argument types.
const (
	String  ParamType = "string"
	Integer ParamType = "integer"
	Boolean ParamType = "boolean"
	Object  ParamType = "object"
	Strings ParamType = "array" // an array of strings
	Objects ParamType = "array-of-objects"
	// OneOrObjects is an object or an array of objects (upstream's
	// fs.replace edit), bound as a list either way.
	OneOrObjects ParamType = "object-or-array-of-objects"
	// Number is a JSON number (a float64 field).
	Number ParamType = "number"
	// TextOrNumber is a string or a JSON number (an `any` field holding a
	// string or a float64): upstream's dates, ISO text or epoch
	// milliseconds.
	TextOrNumber ParamType = "string-or-number"
)

// Param declares one argument of an action; schema, help and validation all
// come from it.
type Param struct {
	Name        string
	Type        ParamType
	Description string
	Required    bool
	Enum        []string
	Default     any
	Min, Max    *int // integers only
	// Format, when set, is what a given string (or each string of an
	// array) must look like; an optional argument given as "" is absent.
	Format Format
	// MaxLen, when set, is the most characters a string may hold.
	MaxLen int
	hidden bool // accepted but not advertised
}

// boundArgs are a call's arguments, bound and type-checked against its
// parameters (defaults applied): what an action's declaration binds from,
// and the protocol arguments (validateOnly, requestId, the credential)
// the registry reads.
type boundArgs struct{ values map[string]any }

// str is a string argument ("" when absent).
func (a *boundArgs) str(name string) string { s, _ := a.values[name].(string); return s }

// flag is a boolean argument (false when absent).
func (a *boundArgs) flag(name string) bool { b, _ := a.values[name].(bool); return b }

// decodeObject parses the arguments object; keys keep their raw values.
func decodeObject(raw json.RawMessage) (map[string]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return nil, failure.Invalid("arguments must be a JSON object")
	}
	return fields, nil
}

func helpHint(action string) string { return "see {\"action\":\"help\",\"topic\":\"" + action + "\"}" }

// bind checks the arguments against params.
func bind(action string, params []Param, fields map[string]json.RawMessage) (*boundArgs, error) {
	args := &boundArgs{values: make(map[string]any, len(fields))}
	var unknown []string
	for k, v := range fields {
		if k == "action" {
			continue
		}
		// An action takes a few parameters: a scan costs less than a map
		// of them built for every call.
		i := slices.IndexFunc(params, func(p Param) bool { return p.Name == k })
		if i < 0 {
			unknown = append(unknown, k)
			continue
		}
		p := params[i]
		val, err := p.decode(v)
		if err != nil {
			e := failure.Invalid("%s", err.Error())
			e.Action = helpHint(action)
			return nil, e
		}
		if val != nil {
			args.values[k] = val
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		msg := fmt.Sprintf("action %s does not take %s", action, strings.Join(unknown, ", "))
		var meant []string
		for _, k := range unknown {
			if m := nearest(k, params); m != "" && !slices.Contains(meant, m) {
				meant = append(meant, m)
			}
		}
		if len(meant) > 0 {
			msg += " (did you mean " + strings.Join(meant, ", ") + "?)"
		}
		e := failure.Invalid("%s", msg)
		e.Action = helpHint(action)
		if len(meant) > 0 {
			e = e.With("didYouMean", meant)
		}
		return nil, e
	}
	for _, p := range params {
		if _, ok := args.values[p.Name]; !ok {
			if p.Required {
				e := failure.Invalid("missing argument %q", p.Name)
				e.Action = helpHint(action)
				return nil, e
			}
			if p.Default != nil {
				args.values[p.Name] = p.Default
			}
		}
	}
	for _, p := range params {
		if p.Format == "" {
			continue
		}
		if err := p.checkFormat(args.values[p.Name]); err != nil {
			return nil, err
		}
	}
	return args, nil
}

// checkFormat checks a bound value against the parameter's format.
func (p Param) checkFormat(v any) error {
	switch v := v.(type) {
	case string:
		if v == "" && !p.Required {
			return nil
		}
		return CheckID(p.Name, v)
	case []string:
		for i, s := range v {
			if err := CheckID(fmt.Sprintf("%s[%d]", p.Name, i), s); err != nil {
				return err
			}
		}
	}
	return nil
}

// synonyms are names agents commonly send for an argument declared under
// another name (upstream's, or another tool's): a refusal suggests the
// declared one the action takes.
var synonyms = map[string][]string{
	"blockid": {"id"}, "block_id": {"id"}, "docid": {"id"}, "documentid": {"id"}, "rootid": {"id", "rootID"},
	"content": {"data", "markdown", "content"}, "text": {"data", "markdown"}, "body": {"data", "markdown", "content"},
	"markdown": {"data", "content"}, "notebookid": {"notebook"}, "box": {"notebook"}, "boxid": {"notebook"},
	"expectedhash": {"expectedStateHash"}, "requestid": {"requestId"}, "validate": {"validateOnly"}, "dryrun": {"validateOnly"},
	"limit": {"pageSize", "maxRows"}, "keyword": {"query", "k"}, "q": {"query", "k"},
}

// nearest is the declared parameter an unknown argument name probably
// meant: the same name in another case or spelling (_ and - ignored), a
// common synonym the action takes, or one edit or two away; "" when none
// is close.
func nearest(name string, params []Param) string {
	fold := func(s string) string { return strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(s)) }
	declared := func(n string) bool {
		return slices.ContainsFunc(params, func(p Param) bool { return p.Name == n && !p.hidden })
	}
	for _, p := range params {
		if !p.hidden && fold(p.Name) == fold(name) {
			return p.Name
		}
	}
	for _, s := range synonyms[fold(name)] {
		if declared(s) {
			return s
		}
	}
	best, bestD := "", 3
	for _, p := range params {
		if p.hidden {
			continue
		}
		if d := editDistance(fold(name), fold(p.Name)); d < bestD && d <= max(1, len(p.Name)/3) {
			best, bestD = p.Name, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b (bytes: names are
// ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// textOf reads raw as json.Unmarshal into a string does (null reads as
// ""), without its reflection: every call's action is read so, several
// times on its way.
func textOf(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if string(raw) == "null" {
		return "", true
	}
	return jsonobj.String(raw)
}

func (p Param) decode(raw json.RawMessage) (any, error) {
	if string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	switch p.Type {
	case String:
		s, ok := textOf(raw)
		if !ok {
			return nil, fmt.Errorf("argument %q must be a string", p.Name)
		}
		if len(p.Enum) > 0 && !slices.Contains(p.Enum, s) {
			return nil, fmt.Errorf("argument %q must be one of %s", p.Name, strings.Join(p.Enum, ", "))
		}
		if p.MaxLen > 0 && utf8.RuneCountInString(s) > p.MaxLen {
			return nil, fmt.Errorf("argument %q is longer than %d characters", p.Name, p.MaxLen)
		}
		return s, nil
	case Integer:
		var f float64
		if err := json.Unmarshal(raw, &f); err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			return nil, fmt.Errorf("argument %q must be an integer", p.Name)
		}
		n := int(f)
		if p.Min != nil && n < *p.Min || p.Max != nil && n > *p.Max {
			return nil, fmt.Errorf("argument %q must be between %s and %s", p.Name, bound(p.Min), bound(p.Max))
		}
		return n, nil
	case Number:
		var f float64
		if err := json.Unmarshal(raw, &f); err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("argument %q must be a number", p.Name)
		}
		return f, nil
	case TextOrNumber:
		if s, ok := jsonobj.String(bytes.TrimSpace(raw)); ok {
			return s, nil
		}
		var f float64
		if err := json.Unmarshal(raw, &f); err != nil {
			return nil, fmt.Errorf("argument %q must be a string or a number", p.Name)
		}
		return f, nil
	case Boolean:
		switch string(bytes.TrimSpace(raw)) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, fmt.Errorf("argument %q must be a boolean", p.Name)
	case Strings:
		var l []string
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, fmt.Errorf("argument %q must be an array of strings", p.Name)
		}
		return l, nil
	case Object:
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil || m == nil {
			return nil, fmt.Errorf("argument %q must be an object", p.Name)
		}
		return m, nil
	case OneOrObjects:
		if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '{' {
			var m map[string]any
			if err := json.Unmarshal(raw, &m); err != nil {
				return nil, fmt.Errorf("argument %q must be an object or an array of objects", p.Name)
			}
			return []map[string]any{m}, nil
		}
		var l []map[string]any
		if err := json.Unmarshal(raw, &l); err != nil || len(l) == 0 || slices.ContainsFunc(l, func(m map[string]any) bool { return m == nil }) {
			return nil, fmt.Errorf("argument %q must be an object or a non-empty array of objects", p.Name)
		}
		return l, nil
	case Objects:
		var l []map[string]any
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, fmt.Errorf("argument %q must be an array of objects", p.Name)
		}
		for _, m := range l {
			if m == nil {
				return nil, fmt.Errorf("argument %q must be an array of objects", p.Name)
			}
		}
		return l, nil
	}
	return nil, fmt.Errorf("argument %q has an unsupported type", p.Name)
}

func bound(n *int) string {
	if n == nil {
		return "any"
	}
	return fmt.Sprint(*n)
}

var idRE = regexp.MustCompile(`^\d{14}-[0-9a-z]{7}$`)

// CheckID refuses a malformed id before it reaches the kernel (SiYuan's own
// answer to some malformed ids is a misleading success).
func CheckID(name, v string) error {
	if !idRE.MatchString(v) {
		return failure.Invalid("argument %q must be a SiYuan id like 20260812120000-abcdefg, got %q", name, v)
	}
	return nil
}

// Page is the standard list payload.
type Page struct {
	Data        any  `json:"data"`
	Total       int  `json:"total"`
	Page        int  `json:"page"`
	PageSize    int  `json:"pageSize"`
	PageCount   int  `json:"pageCount"`
	HasNextPage bool `json:"hasNextPage"`
}

// Fields returns the page's fields plus extra, as one answer object.
func (p Page) Fields(extra map[string]any) map[string]any {
	out := map[string]any{"data": p.Data, "total": p.Total, "page": p.Page, "pageSize": p.PageSize,
		"pageCount": p.PageCount, "hasNextPage": p.HasNextPage}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

// PageSlice is the 1-based page of size items of all: empty past the end,
// whatever the page number (no product of page and size is formed that
// could overflow), and empty for a page or size below 1.
func PageSlice[T any](all []T, page, size int) []T {
	if page < 1 || size < 1 || page-1 > len(all)/size {
		return all[len(all):]
	}
	from := (page - 1) * size // at most len(all)
	return all[from : from+min(size, len(all)-from)]
}

// Paginate slices items for a 1-based page of size items; a page past the
// end is clamped to the last page.
func Paginate[T any](items []T, page, size int) Page {
	total := len(items)
	count := (total + size - 1) / size
	if count < 1 {
		count = 1
	}
	if page > count {
		page = count
	}
	data := PageSlice(items, page, size)
	if data == nil {
		data = []T{}
	}
	return Page{Data: data, Total: total, Page: page, PageSize: size, PageCount: count, HasNextPage: page < count}
}

// unstorable finds, in the raw JSON arguments of a write, text that SiYuan
// would not store as sent: invalid UTF-8, a NUL character, an unpaired
// UTF-16 surrogate. JSON decoding and the kernel would each silently turn
// it into U+FFFD, and a readback would then show what was not asked.
func unstorable(raw []byte) string {
	if !utf8.Valid(raw) {
		return "bytes that are not valid UTF-8"
	}
	hex4 := func(b []byte) (rune, bool) {
		if len(b) < 4 {
			return 0, false
		}
		n, err := strconv.ParseUint(string(b[:4]), 16, 32)
		return rune(n), err == nil
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' || i+1 >= len(raw) {
			continue
		}
		if raw[i+1] != 'u' {
			i++ // another escape: skip its character
			continue
		}
		r, ok := hex4(raw[i+2:])
		if !ok {
			continue
		}
		switch {
		case r == 0:
			return "a NUL character (\\u0000)"
		case r >= 0xDC00 && r <= 0xDFFF:
			return "an unpaired UTF-16 surrogate"
		case r >= 0xD800 && r <= 0xDBFF:
			if j := i + 6; j+1 < len(raw) && raw[j] == '\\' && raw[j+1] == 'u' {
				if lo, ok := hex4(raw[j+2:]); ok && lo >= 0xDC00 && lo <= 0xDFFF {
					i = j + 5
					continue
				}
			}
			return "an unpaired UTF-16 surrogate"
		}
		i += 5
	}
	return ""
}
