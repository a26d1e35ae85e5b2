package embedded

import (
	"context"
	"strings"

	"github.com/88250/lute/html"
	"github.com/88250/lute/parse"
)

// validAttrName mirrors SiYuan: a lower-case letter, then letters, digits, - or _.
func validAttrName(name string) bool {
	if name == "" || name[0] < 'a' || name[0] > 'z' {
		return false
	}
	for i := 1; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func (k *Kernel) setBlockAttrs(ctx context.Context, a args) (any, error) {
	id, err := a.id("id")
	if err != nil {
		return nil, err
	}
	attrs, err := a.obj("attrs")
	if err != nil {
		return nil, err
	}
	values := map[string]string{}
	for name, v := range attrs {
		if v == nil { // null removes, as in SiYuan
			values[name] = ""
			continue
		}
		s, ok := v.(string)
		if !ok {
			return nil, errf("the value of attr [%s] must be a string", name)
		}
		values[name] = s
	}
	tree, node, err := k.loadTreeOf(id)
	if err != nil {
		return nil, errf("tree not found")
	}
	cur := parse.IAL2MapUnEsc(node.KramdownIAL)
	for name, value := range values {
		lower := strings.ToLower(name)
		if !validAttrName(lower) {
			return nil, errf("invalid attribute name [%s] of block [%s]", name, id)
		}
		if lower == "data-task" {
			return nil, errf("setting or removing [data-task] attribute is not allowed via this interface")
		}
		if lower == "id" || lower == "updated" && value == "" {
			continue
		}
		value = strings.TrimSpace(value)
		if lower == "tags" {
			var tags []string
			seen := map[string]bool{}
			for _, t := range strings.Split(value, ",") {
				if t = strings.TrimSpace(t); t != "" && !seen[t] {
					seen[t] = true
					tags = append(tags, t)
				}
			}
			value = strings.Join(tags, ",")
		}
		if value == "" {
			delete(cur, name)
			delete(cur, lower)
			continue
		}
		delete(cur, name)
		cur[lower] = html.EscapeAttrVal(value)
	}
	if tree.ID == tree.Box {
		cur["custom-hidden"] = "true"
	}
	node.KramdownIAL = parse.Map2IAL(cur)
	if err := k.writeTree(tree); err != nil {
		return nil, err
	}
	if tree.ID == tree.Box && node == tree.Root {
		if icon, ok := values["icon"]; ok {
			if c, err := k.readBoxConf(tree.Box); err == nil {
				c.Icon = icon
				if err := k.writeBoxConf(tree.Box, c); err != nil {
					return nil, err
				}
			}
		}
	}
	return nil, nil
}

func (k *Kernel) attrsOf(id string) (map[string]string, bool) {
	_, node, err := k.viewOf(id)
	if err != nil {
		return nil, false
	}
	m := parse.IAL2Map(node.KramdownIAL)
	k.mu.RLock()
	if old, stale := k.staleTitles[id]; stale {
		m["title"] = old // SiYuan's cache lags a rename until the next flush
	}
	k.mu.RUnlock()
	return m, true
}

func (k *Kernel) getBlockAttrs(ctx context.Context, a args) (any, error) {
	id, err := a.id("id")
	if err != nil {
		return nil, err
	}
	m, ok := k.attrsOf(id)
	if !ok {
		return map[string]string{}, nil
	}
	return m, nil
}

func (k *Kernel) batchGetBlockAttrs(ctx context.Context, a args) (any, error) {
	ids, err := a.strList("ids")
	if err != nil {
		return nil, err
	}
	ret := map[string]map[string]string{}
	for _, id := range ids {
		if m, ok := k.attrsOf(id); ok {
			ret[id] = m // unknown ids are left out, as in SiYuan
		}
	}
	return ret, nil
}
