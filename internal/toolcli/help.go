package toolcli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// Program is the command's name in help and completion.
const Program = "sisyphus"

// ToolsHelp lists the tools, for `sisyphus help`.
func ToolsHelp(w io.Writer, all []*tools.Tool) {
	fmt.Fprintf(w, "Tools (%s TOOL ACTION --flags; %s help TOOL [ACTION]):\n\n", Program, Program)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, t := range all {
		fmt.Fprintf(tw, "  %s\t%s\n", t.Name, Short(t.Description))
	}
	tw.Flush()
}

// ToolHelp is a tool's help, as {"action":"help"} answers it: its
// actions, their class and whether a person confirms them.
func ToolHelp(w io.Writer, t *tools.Tool) error {
	v, err := t.Help("")
	if err != nil {
		return err
	}
	h := asMap(v)
	desc := fmt.Sprint(h["description"])
	if before, _, ok := strings.Cut(desc, " Writes are strict: call with validateOnly"); ok {
		// The agents' instructions; the command line runs both steps.
		desc = before + " Writes are strict: the command runs the preflight, shows it, then commits."
	}
	fmt.Fprintf(w, "%s %s ACTION [--flags]\n\n%s\n\nActions:\n", Program, t.Name, desc)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, a := range asList(h["actions"]) {
		m := asMap(a)
		mark, summary := "", fmt.Sprint(m["summary"])
		if m["dangerous"] == true && !strings.Contains(summary, "confirm") {
			mark = " (asks for confirmation)"
		}
		if act, ok := t.Action(fmt.Sprint(m["action"])); ok && act.OffByDefault && !strings.Contains(summary, "off by default") {
			mark += " (off by default)"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s%s\n", m["action"], m["class"], firstSentence(fmt.Sprint(m["summary"])), mark)
	}
	tw.Flush()
	fmt.Fprintf(w, "\n%s help %s ACTION (or %s %s ACTION --help) for an action's flags.\n", Program, t.Name, Program, t.Name)
	return nil
}

// ActionHelp is an action's help, as {"action":"help","topic":ACTION}
// answers it, with its arguments spelled as flags.
func ActionHelp(w io.Writer, t *tools.Tool, a *tools.Action) error {
	v, err := t.Help(a.Name)
	if err != nil {
		return err
	}
	h := asMap(v)
	fmt.Fprintf(w, "%s %s %s [--flags]\n\n%s\nClass: %s", Program, t.Name, a.Name, h["summary"], h["class"])
	if a.OffByDefault {
		fmt.Fprint(w, " (off by default: sisyphus config enable "+t.Name+"."+a.Name+")")
	}
	fmt.Fprintln(w)
	if a.Dangerous {
		fmt.Fprintln(w, "Dangerous: asks y/N on the terminal before it runs; --yes answers yes (scripts).")
	}
	if a.IsWrite() {
		fmt.Fprintln(w, "A write: the preflight runs first and is shown, then the commit with the credentials it issued;\n--validate-only stops after the preflight.")
	}
	fmt.Fprintln(w, "\nFlags:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, p := range a.Arguments() {
		if p.Hidden() || isControl(p.Name) {
			continue
		}
		fmt.Fprintf(tw, "  --%s %s\t%s\n", FlagName(p.Name), typeWord(p), describe(p))
	}
	fmt.Fprintf(tw, "  --json\tprint the answer as JSON\n")
	if a.IsWrite() {
		fmt.Fprintf(tw, "  --validate-only\trun the preflight only: nothing is written\n")
	}
	if a.Dangerous {
		fmt.Fprintf(tw, "  --yes\tconfirm without asking (needed when stdin is not a terminal)\n")
	}
	tw.Flush()
	if ex := asMap(h["example"]); ex != nil {
		fmt.Fprintf(w, "\nExample:\n  %s\n", Example(t.Name, ex))
	}
	if wf := asMap(h["writeForm"]); wf != nil {
		fmt.Fprintf(w, "\nWrite form (%v): %v\n", wf["when"], wf["summary"])
	}
	return nil
}

// isControl: the strict control fields the command line fills in itself.
func isControl(name string) bool {
	switch name {
	case "validateOnly", "requestId", "confirm", "expectedStateHash", "expectedStructureHash", "expectedManifestHash", "expectedSourceHash", "expectedHash":
		return true
	}
	return false
}

func typeWord(p tools.Param) string {
	switch p.Type {
	case tools.Boolean:
		return ""
	case tools.Integer:
		return "N"
	case tools.Number:
		return "NUMBER"
	case tools.Strings:
		return "A,B,..."
	case tools.Object:
		return "JSON"
	case tools.Objects, tools.OneOrObjects:
		return "JSON..."
	case tools.TextOrNumber:
		return "TEXT|NUMBER"
	}
	if len(p.Enum) > 0 && len(p.Enum) <= 6 {
		return strings.Join(p.Enum, "|")
	}
	return "TEXT"
}

func describe(p tools.Param) string {
	d := p.Description
	if p.Required {
		d = "(required) " + d
	}
	if len(p.Enum) > 6 {
		d += "; one of " + strings.Join(p.Enum, ", ")
	}
	if p.Default != nil && p.Default != false {
		d += fmt.Sprintf(" [default %v]", p.Default)
	}
	return d
}

// Example is a call written as a command line.
func Example(tool string, call map[string]any) string {
	parts := []string{Program, tool, fmt.Sprint(call["action"])}
	for _, a := range exampleArgs(call) {
		if strings.HasPrefix(a, "--") {
			parts = append(parts, a)
		} else {
			parts = append(parts, shellQuote(a))
		}
	}
	return strings.Join(parts, " ")
}

// exampleArgs are a call's arguments as flags (the strict control fields
// left out: the command line fills them in).
func exampleArgs(call map[string]any) []string {
	keys := make([]string, 0, len(call))
	for k := range call {
		if k != "action" && !isControl(k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		switch v := call[k].(type) {
		case bool:
			if v {
				parts = append(parts, "--"+FlagName(k))
			} else {
				parts = append(parts, "--no-"+FlagName(k))
			}
		case string:
			parts = append(parts, "--"+FlagName(k), v)
		case float64, int:
			parts = append(parts, "--"+FlagName(k), fmt.Sprint(v))
		case []string:
			parts = append(parts, list(k, v)...)
		case []any:
			var ss []string
			for _, e := range v {
				if s, ok := e.(string); ok {
					ss = append(ss, s)
				}
			}
			if len(ss) == len(v) && len(ss) > 0 {
				parts = append(parts, list(k, ss)...)
				continue
			}
			b, _ := json.Marshal(v)
			parts = append(parts, "--"+FlagName(k)+"-json", string(b))
		default:
			b, _ := json.Marshal(v)
			parts = append(parts, "--"+FlagName(k)+"-json", string(b))
		}
	}
	return parts
}

// list is a list of strings as flags: comma-separated, or as JSON when
// one of them holds a comma.
func list(name string, l []string) []string {
	if slices.ContainsFunc(l, func(s string) bool { return strings.Contains(s, ",") }) {
		b, _ := json.Marshal(l)
		return []string{"--" + FlagName(name) + "-json", string(b)}
	}
	return []string{"--" + FlagName(name), strings.Join(l, ",")}
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i > 0 {
		return s[:i+1]
	}
	return s
}

// Short is a tool's description cut to its first clause, for a one-line
// list.
func Short(desc string) string {
	depth := 0
	for i, r := range desc {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		case ':', ';', '.':
			if depth == 0 && strings.HasPrefix(desc[i+1:], " ") {
				return desc[:i]
			}
		}
	}
	return strings.TrimSuffix(desc, ".")
}

// asMap and asList read help's answer generically (it is JSON-shaped).
func asMap(v any) map[string]any {
	if m, ok := v.(map[string]any); ok {
		return m
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	return m
}

func asList(v any) []any {
	b, _ := json.Marshal(v)
	var l []any
	json.Unmarshal(b, &l)
	return l
}
