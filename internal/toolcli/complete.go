package toolcli

import (
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// Complete is what the shell offers for the next word of `sisyphus TOOL
// args... toComplete`: the tool's actions first, then the action's flags,
// or the values of the enumerated argument the previous flag names.
func Complete(t *tools.Tool, args []string, toComplete string) []string {
	if len(args) == 0 {
		var out []string
		for _, n := range t.ActionNames() {
			if strings.HasPrefix(n, toComplete) {
				out = append(out, n)
			}
		}
		return out
	}
	a, ok := t.Action(args[0])
	if !ok {
		return nil
	}
	params := a.Arguments()
	if last := args[len(args)-1]; len(args) > 1 && strings.HasPrefix(last, "--") && !strings.Contains(last, "=") && !strings.HasPrefix(toComplete, "-") {
		if p, ok := Lookup(params, last[2:]); ok && len(p.Enum) > 0 {
			var out []string
			for _, e := range p.Enum {
				if strings.HasPrefix(e, toComplete) {
					out = append(out, e)
				}
			}
			return out
		}
	}
	if !strings.HasPrefix(toComplete, "-") {
		return nil
	}
	var out []string
	for _, f := range Flags(a) {
		if strings.HasPrefix(f, toComplete) {
			out = append(out, f)
		}
	}
	return out
}

// Flags are the flags an action takes, as help spells them.
func Flags(a *tools.Action) []string {
	var out []string
	for _, p := range a.Arguments() {
		if p.Hidden() || isControl(p.Name) {
			continue
		}
		out = append(out, "--"+FlagName(p.Name))
		if p.Type == tools.Boolean {
			out = append(out, "--no-"+FlagName(p.Name))
		}
	}
	out = append(out, "--json", "--help")
	if a.IsWrite() {
		out = append(out, "--validate-only")
	}
	if a.Dangerous {
		out = append(out, "--yes")
	}
	return out
}
