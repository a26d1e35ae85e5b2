package embedded

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"text/template"
	"text/template/parse"
	"time"

	"github.com/88250/lute/html"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// Template columns, as kernel/sql/av.go renders them last, after
// relations and rollups: the key's .action{…} template over the row's
// values by column name, with the bound block's attributes (id, updated,
// custom attributes…), created/updated as times, <Name>_raw the raw value
// and id_mod/id_mod_raw the same by key ID. Template columns that use
// other template columns are rendered after them.

// fillTemplates renders every template cell; the last error is returned
// (the cells of a broken template are empty) for the kernel's message.
func (r *avRenderer) fillTemplates(av *wire.AttributeView, t *wire.AVTable, ials map[string]map[string]string) error {
	hasTemplate := false
	for _, kv := range av.KeyValues {
		if kv.Key.Type == wire.AVKeyTemplate {
			hasTemplate = true
			break
		}
	}
	if !hasTemplate {
		return nil
	}
	items, _ := avItems(av)
	funcs := r.k.templateFuncs(r.ctx, time.Now())
	type compiled struct {
		tpl *template.Template
		err error
	}
	cache := map[string]compiled{}
	var lastErr error
	for _, key := range templateKeysInOrder(av, funcs) {
		for _, row := range t.Rows {
			v := rowValue(row, key.ID)
			if v == nil || v.Template == nil {
				continue
			}
			src := v.Template.Content
			c, ok := cache[src]
			if !ok {
				tpl, err := template.New("").Delims(".action{", "}").Funcs(funcs).Parse(src)
				c = compiled{tpl, err}
				cache[src] = c
			}
			var content string
			err := c.err
			if err == nil {
				ial := map[string]string{}
				if bv := rowBlockValue(row); bv != nil && bv.Block != nil {
					for k, val := range ials[bv.Block.ID] {
						ial[k] = val
					}
				}
				content, err = executeTemplateCell(c.tpl, ial, items[row.ID])
			}
			if err != nil {
				lastErr = fmt.Errorf("database [%s] template field [%s] rendering failed: %w", avName(av), key.Name, err)
			}
			v.Template.Content = content
			items[row.ID] = append(items[row.ID], &wire.AVKeyValues{Key: key, Values: []*wire.AVValue{v}})
		}
	}
	return lastErr
}

// executeTemplateCell is executeTemplateField: "<no value>" alone is
// empty, and a result with an unclosed HTML tag is escaped whole.
func executeTemplateCell(tpl *template.Template, ial map[string]string, kvs []*wire.AVKeyValues) (string, error) {
	bv := blockValueIn(kvs)
	if ial["id"] == "" && bv != nil {
		if bv.Block != nil {
			ial["id"] = bv.Block.ID
		}
		if ial["id"] == "" {
			ial["id"] = bv.BlockID
		}
	}
	if ial["updated"] == "" && bv != nil && bv.Block != nil {
		ial["updated"] = time.UnixMilli(bv.Block.Updated).Format("20060102150405")
	}
	data := map[string]any{}
	for k, val := range ial {
		data[k] = val
	}
	if len(ial) > 0 {
		data["created"] = templateCreated(ial["id"])
		if tm, err := time.ParseInLocation("20060102150405", ial["updated"], time.Local); err == nil {
			data["updated"] = tm
		} else {
			data["updated"] = time.Now()
		}
	}
	idMod, idModRaw := map[string]any{}, map[string]any{}
	data["id_mod"], data["id_mod_raw"] = idMod, idModRaw
	for _, kv := range kvs {
		if len(kv.Values) == 0 {
			continue
		}
		v, name := kv.Values[0], kv.Key.Name
		switch v.Type {
		case wire.AVKeyNumber:
			if v.Number != nil && v.Number.IsNotEmpty {
				data[name] = v.Number.Content
			}
		case wire.AVKeyDate:
			if v.Date != nil {
				if v.Date.IsNotEmpty {
					data[name] = time.UnixMilli(v.Date.Content)
				}
				if v.Date.IsNotEmpty2 {
					data[name+"_end"] = time.UnixMilli(v.Date.Content2)
				}
			}
		case wire.AVKeyRollup:
			if v.Rollup != nil && len(v.Rollup.Contents) > 0 {
				var nums []float64
				var texts []string
				for _, c := range v.Rollup.Contents {
					switch {
					case c.Type == wire.AVKeyNumber && c.Number != nil:
						nums = append(nums, c.Number.Content)
					case c.Type == wire.AVKeyMSelect:
						for _, o := range c.MSelect {
							texts = append(texts, o.Content)
						}
					default:
						texts = append(texts, valueString(c, true))
					}
				}
				if len(nums) > 0 {
					data[name] = nums
				} else {
					data[name] = texts
				}
			}
		case wire.AVKeyRelation:
			if v.Relation != nil && len(v.Relation.Contents) > 0 {
				var texts []string
				for _, c := range v.Relation.Contents {
					texts = append(texts, valueString(c, true))
				}
				data[name] = texts
			}
		case wire.AVKeyBlock:
			data[name+"_created"] = time.Now()
			data["entryUpdated"] = time.Now()
			if v.Block != nil {
				data["entryCreated"] = time.UnixMilli(v.Block.Created)
				data["entryUpdated"] = time.UnixMilli(v.Block.Updated)
			}
			data[name] = valueString(v, true)
		case wire.AVKeyMSelect:
			data[name+"_str"] = valueString(v, true)
			var texts []string
			for _, o := range v.MSelect {
				texts = append(texts, o.Content)
			}
			data[name] = texts
		default:
			data[name] = valueString(v, true)
		}
		data[name+"_raw"] = v
		idMod[kv.Key.ID] = data[name]
		idModRaw[kv.Key.ID] = v
	}
	var buf bytes.Buffer
	if err := tpl.Execute(&buf, data); err != nil {
		return "", err
	}
	ret := buf.String()
	if ret == "<no value>" {
		return "", nil
	}
	if hasUnclosedHTMLTag(ret) && strings.TrimSpace(ret) != "" {
		ret = html.EscapeString(ret)
	}
	return ret, nil
}

// templateCreated is the .created of a template: the time of the row's ID,
// with an out-of-range minute or second set to zero, else now.
func templateCreated(id string) time.Time {
	s := id
	if len(s) >= 14 {
		s = s[:14]
	}
	tm, err := time.ParseInLocation("20060102150405", s, time.Local)
	if err == nil {
		return tm
	}
	switch msg := err.Error(); {
	case strings.Contains(msg, "minute out of range") && len(s) >= 10:
		s = s[:10] + "0000"
	case strings.Contains(msg, "second out of range") && len(s) >= 12:
		s = s[:12] + "00"
	}
	if tm, err = time.ParseInLocation("20060102150405", s, time.Local); err == nil {
		return tm
	}
	return time.Now()
}

var (
	htmlCommentRe = regexp.MustCompile(`<!--[\s\S]*?-->`)
	htmlTagRe     = regexp.MustCompile(`<(/?)([a-zA-Z0-9]+)[^>]*?>`)
	htmlVoidTags  = map[string]bool{"br": true, "img": true, "hr": true, "input": true, "meta": true, "link": true}
)

// hasUnclosedHTMLTag is util.HasUnclosedHtmlTag: an unclosed comment, or
// tags that do not nest and close ("<no value>" is an unclosed tag).
func hasUnclosedHTMLTag(s string) bool {
	for rest := s; ; {
		start := strings.Index(rest, "<!--")
		if start < 0 {
			break
		}
		end := strings.Index(rest[start+4:], "-->")
		if end < 0 {
			return true
		}
		rest = rest[start+4+end+3:]
	}
	s = htmlCommentRe.ReplaceAllString(s, "")
	var stack []string
	for _, m := range htmlTagRe.FindAllStringSubmatch(s, -1) {
		tag := strings.ToLower(m[2])
		if htmlVoidTags[tag] {
			continue
		}
		if m[1] != "/" {
			stack = append(stack, tag)
			continue
		}
		if len(stack) == 0 || stack[len(stack)-1] != tag {
			return true
		}
		stack = stack[:len(stack)-1]
	}
	return len(stack) != 0
}

// templateKeysInOrder is GetTemplateKeysByResolutionOrder: template keys
// whose template names no unresolved template key first (at most seven
// passes; an unparsable template counts as resolved).
func templateKeysInOrder(av *wire.AttributeView, funcs template.FuncMap) []*wire.AVKey {
	ret := []*wire.AVKey{}
	resolved := map[string]bool{}
	for range 7 {
		count := 0
		for _, kv := range av.KeyValues {
			if kv.Key.Type != wire.AVKeyTemplate {
				continue
			}
			count++
			vars, err := templateVars(kv.Key.Template, funcs)
			if err != nil {
				resolved[kv.Key.ID] = true
				ret = append(ret, kv.Key)
				continue
			}
			ok := true
			for _, other := range av.KeyValues {
				if vars[other.Key.Name] && other.Key.Type == wire.AVKeyTemplate && !resolved[other.Key.ID] {
					ok = false
					break
				}
			}
			if ok {
				resolved[kv.Key.ID] = true
				ret = append(ret, kv.Key)
			}
		}
		if len(resolved) == count {
			break
		}
	}
	return ret
}

// templateVars are the names a template reads (.Name, $x, index . "Name").
func templateVars(src string, funcs template.FuncMap) (map[string]bool, error) {
	tpl, err := template.New("").Delims(".action{", "}").Funcs(funcs).Parse(src)
	if err != nil {
		return nil, err
	}
	vars := map[string]bool{}
	var walk func(n parse.Node)
	walk = func(n parse.Node) {
		switch n := n.(type) {
		case *parse.ListNode:
			if n == nil {
				return
			}
			for _, c := range n.Nodes {
				walk(c)
			}
		case *parse.ActionNode:
			walk(n.Pipe)
		case *parse.PipeNode:
			if n == nil {
				return
			}
			for _, c := range n.Cmds {
				walk(c)
			}
		case *parse.CommandNode:
			for _, a := range n.Args {
				walk(a)
			}
			if len(n.Args) >= 3 && n.Args[0].Type() == parse.NodeIdentifier && n.Args[1].Type() == parse.NodeDot &&
				n.Args[2].Type() == parse.NodeString {
				vars[n.Args[2].(*parse.StringNode).Text] = true
			}
		case *parse.FieldNode:
			if len(n.Ident) > 0 {
				vars[n.Ident[0]] = true
			}
		case *parse.VariableNode:
			if len(n.Ident) > 0 {
				vars[n.Ident[0]] = true
			}
		}
	}
	if tpl.Tree != nil {
		walk(tpl.Tree.Root)
	}
	return vars, nil
}
