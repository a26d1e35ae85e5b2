package tools

import (
	"encoding/json"
	"slices"

	"github.com/sisyphus-go/sisyphus/internal/strict"
)

// What the command line (sisyphus TOOL ACTION --flags) reads of the
// declarations: the same arguments, help and did-you-mean the MCP schema
// and the registry use, so that a flag is an argument by construction.

// Arguments are every argument a call of the action takes with strict
// writes on, in declaration order: its own, those of the write it may
// become (av.render with createIfNotExist), then the control fields.
// Hidden ones (upstream's spellings) are included: see Param.Hidden.
func (a *Action) Arguments() []Param {
	ps := a.params(true)
	if a.writeForm != nil {
		for _, p := range a.writeForm.params(true) {
			if !slices.ContainsFunc(ps, func(q Param) bool { return q.Name == p.Name }) {
				ps = append(ps, p)
			}
		}
	}
	return ps
}

// Hidden reports whether the argument is accepted but not advertised (an
// upstream spelling of another).
func (p Param) Hidden() bool { return p.hidden }

// IsWrite reports whether a call of the action may write: a write, or a
// read with a write form.
func (a *Action) IsWrite() bool { return a.Policy.Class != strict.Read || a.writeForm != nil }

// Help is what {"action":"help","topic":topic} answers with every action
// enabled and strict writes on: the tool's actions ("" topic), or one
// action's arguments. The configuration in force may disable some; a call
// of one is refused as the agent's would be.
func (t *Tool) Help(topic string) (any, error) {
	fields := map[string]json.RawMessage{}
	if topic != "" {
		b, _ := json.Marshal(topic)
		fields["topic"] = b
	}
	return t.help(Unrestricted(), true, fields)
}

// NearestParam is the declared argument an unknown name probably meant
// ("" when none is close), as the registry suggests it.
func NearestParam(name string, params []Param) string { return nearest(name, params) }
