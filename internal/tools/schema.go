package tools

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/strict"
)

// InputSchema is the JSON Schema (2020-12) of the tool's arguments under a
// view: an `action` enum of the enabled actions and the union of their
// parameters, with each parameter's description naming the actions it
// applies to.
func (t *Tool) InputSchema(v View) map[string]any {
	props := map[string]any{
		"action": map[string]any{"type": "string", "enum": t.actionNames(v.Policy),
			"description": "What to do; \"help\" lists the actions and their arguments."},
		"topic": map[string]any{"type": "string", "description": "With action \"help\": the action to describe."},
	}
	users := map[string][]string{}
	var names []string
	for _, a := range t.enabled(v.Policy) {
		forms := []*Action{a}
		if a.writeForm != nil {
			forms = append(forms, a.writeForm)
		}
		for _, f := range forms {
			for _, p := range f.params(v.Strict) {
				if p.hidden {
					continue
				}
				if _, ok := users[p.Name]; !ok {
					names = append(names, p.Name)
					props[p.Name] = p.schema()
				} else {
					widenEnum(props[p.Name].(map[string]any), p.Enum)
				}
				if !slices.Contains(users[p.Name], a.Name) {
					users[p.Name] = append(users[p.Name], a.Name)
				}
			}
		}
	}
	var all, writes []string
	for _, a := range t.enabled(v.Policy) {
		all = append(all, a.Name)
		if a.Policy.Class != strict.Read || a.writeForm != nil {
			writes = append(writes, a.Name)
		}
	}
	ids := false
	for _, n := range names {
		s := props[n].(map[string]any)
		desc, _ := s["description"].(string)
		// The id format is said once, on action, rather than on each id.
		if d, ok := strings.CutSuffix(desc, idSuffix); ok {
			desc, ids = d+" (an id)", true
		} else if d, ok := strings.CutSuffix(desc, idsSuffix); ok {
			desc, ids = d+" (ids)", true
		}
		s["description"] = strings.TrimSpace(desc + usedBy(users[n], all, writes))
	}
	if ids {
		act := props["action"].(map[string]any)
		act["description"] = act["description"].(string) + " Ids are SiYuan ids like 20260812120000-abcdefg."
	}
	return map[string]any{
		"$schema":              "https://json-schema.org/draft/2020-12/schema",
		"type":                 "object",
		"properties":           props,
		"required":             []string{"action"},
		"additionalProperties": false,
	}
}

// usedBy names the actions that take an argument, as briefly as it can
// (the schema is read by a model on every connection): nothing when every
// action takes it, "every write" when exactly the writes do, else the
// actions or, when shorter, the actions that do not.
func usedBy(users, all, writes []string) string {
	if len(users) == len(all) {
		return ""
	}
	same := func(a, b []string) bool {
		return len(a) == len(b) && !slices.ContainsFunc(a, func(x string) bool { return !slices.Contains(b, x) })
	}
	if same(users, writes) {
		return " (every write)"
	}
	list := " (actions: " + strings.Join(users, ", ") + ")"
	var others []string
	for _, a := range all {
		if !slices.Contains(users, a) {
			others = append(others, a)
		}
	}
	if but := " (all actions but " + strings.Join(others, ", ") + ")"; len(but) < len(list) {
		return but
	}
	return list
}

// widenEnum lets a schema shared by several actions take every value one
// of them takes: an argument one action enumerates (get_doc's mode) may be
// another's with other values (ensure_link_targets' mode), or with any.
func widenEnum(s map[string]any, enum []string) {
	have, ok := s["enum"].([]string)
	if !ok {
		return
	}
	if len(enum) == 0 {
		delete(s, "enum")
		return
	}
	have = slices.Clone(have) // the first user's Param holds it
	for _, v := range enum {
		if !slices.Contains(have, v) {
			have = append(have, v)
		}
	}
	s["enum"] = have
}

func (p Param) schema() map[string]any {
	s := map[string]any{"type": string(p.Type)}
	if p.Description != "" {
		s["description"] = p.Description
	}
	if p.Type == Strings {
		s["items"] = map[string]any{"type": "string"}
	}
	if p.Type == Objects {
		s["type"] = "array"
		s["items"] = map[string]any{"type": "object"}
	}
	if p.Type == TextOrNumber {
		s["type"] = []string{"string", "number"}
	}
	if p.Type == OneOrObjects {
		delete(s, "type")
		s["anyOf"] = []any{map[string]any{"type": "object"}, map[string]any{"type": "array", "items": map[string]any{"type": "object"}, "minItems": 1}}
	}
	if len(p.Enum) > 0 {
		s["enum"] = p.Enum
	}
	if p.Default != nil {
		s["default"] = p.Default
	}
	if p.Min != nil {
		s["minimum"] = *p.Min
	}
	if p.Max != nil {
		s["maximum"] = *p.Max
	}
	return s
}

// help answers {"action":"help"} with the tool's actions, or one action's
// arguments with a topic.
func (t *Tool) help(pol *Policy, strictOn bool, fields map[string]json.RawMessage) (any, error) {
	var topic string
	if v, ok := fields["topic"]; ok {
		json.Unmarshal(v, &topic)
	}
	if topic == "" || topic == "overview" {
		var actions []map[string]any
		for _, a := range t.enabled(pol) {
			entry := map[string]any{"action": a.Name, "summary": a.Summary, "class": a.Policy.Class.String()}
			if a.Dangerous {
				entry["dangerous"] = true
			}
			actions = append(actions, entry)
		}
		return map[string]any{"tool": t.Name, "description": t.Description, "actions": actions,
			"hint": "call {\"action\":\"help\",\"topic\":\"<action>\"} for an action's arguments"}, nil
	}
	a, ok := t.Action(topic)
	if !ok || !pol.ActionOn(t, a) {
		e := failure.New(failure.UnknownHelpTopic, "tool %s has no action %q", t.Name, topic)
		if ok {
			e = failure.New(failure.ActionDisabled, "%s.%s is disabled in Sisyphus's configuration", t.Name, topic)
		}
		names := t.actionNames(pol)[1:]
		e.Action = "pass one of: " + strings.Join(names, ", ")
		return nil, e.With("validActions", names)
	}
	var params []map[string]any
	for _, p := range a.params(strictOn) {
		if p.hidden {
			continue
		}
		m := p.schema()
		m["name"] = p.Name
		m["required"] = p.Required
		params = append(params, m)
	}
	if params == nil {
		params = []map[string]any{}
	}
	out := map[string]any{"tool": t.Name, "action": a.Name, "summary": a.Summary, "class": a.Policy.Class.String(),
		"arguments": params, "example": a.example()}
	for k, v := range a.HelpExtra {
		if _, taken := out[k]; !taken {
			out[k] = v
		}
	}
	switch {
	case a.Dangerous:
		out["dangerous"] = true
		out["confirmation"] = "a person must confirm this call: a client with form elicitation shows a form; " +
			"otherwise describe the call, wait for explicit approval, and pass confirm:true"
		if a.localEffects != nil {
			out["confirmation"] = out["confirmation"].(string) + "; through stdio, sisyphus call or a front, a call that reads a file of the person's computer " +
				"is confirmed even as a preflight, with the file and its size named (show the person what the confirmation_required answer names)"
		}
	case a.localEffects != nil:
		out["confirmation"] = "through stdio, sisyphus call or a front, a person must confirm this call when it saves a file on their computer, " +
			"with the destination named: a client with form elicitation shows a form; otherwise show the person the destination " +
			"the confirmation_required answer names, wait for explicit approval, and pass confirm:true"
	}
	if w := a.writeForm; w != nil {
		var wparams []map[string]any
		for _, p := range w.params(strictOn) {
			if !p.hidden {
				m := p.schema()
				m["name"], m["required"] = p.Name, p.Required
				wparams = append(wparams, m)
			}
		}
		out["writeForm"] = map[string]any{"when": a.WriteCondition(), "summary": w.Summary, "class": w.Policy.Class.String(),
			"arguments": wparams, "example": w.example()}
	}
	return out, nil
}

// example is the action's declared example, or one made of its required
// arguments.
func (a *Action) example() map[string]any {
	if a.Example != nil {
		ex := map[string]any{"action": a.Name}
		for k, v := range a.Example {
			ex[k] = v
		}
		return ex
	}
	ex := map[string]any{"action": a.Name}
	for _, p := range a.Params {
		if !p.Required {
			continue
		}
		switch p.Type {
		case Integer:
			ex[p.Name] = 1
		case Boolean:
			ex[p.Name] = true
		case Strings:
			ex[p.Name] = []string{"..."}
		case Object:
			ex[p.Name] = map[string]any{}
		default:
			if strings.HasSuffix(strings.ToLower(p.Name), "id") || p.Name == "notebook" {
				ex[p.Name] = "20260812120000-abcdefg"
			} else {
				ex[p.Name] = "..."
			}
		}
	}
	return ex
}

// Takes reports whether an agent may pass the argument name to the action
// with strict mode on, as help advertises it: its declared arguments, the
// control fields of a strict write, confirm where a person confirms, and
// the arguments of its write form. Generated documents (the skills) check
// every argument they show against it.
func (a *Action) Takes(name string) bool {
	forms := []*Action{a}
	if a.writeForm != nil {
		forms = append(forms, a.writeForm)
	}
	for _, f := range forms {
		for _, p := range f.params(true) {
			if p.Name == name && !p.hidden {
				return true
			}
		}
	}
	return false
}
