package toolcli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// textFields name the answers' Markdown or kramdown bodies: an answer
// holding one is shown as that text.
var textFields = []string{"content", "markdown", "kramdown"}

// Render writes an answer for a person: a Markdown or kramdown body as
// plain text, a list of flat objects as a table, anything else as
// indented keys and values. A tool error is its code, message and what to
// do.
func Render(w io.Writer, answer json.RawMessage) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(answer))
	dec.UseNumber() // ids, hashes and times as sent, not as floats
	if err := dec.Decode(&v); err != nil {
		w.Write(answer)
		fmt.Fprintln(w)
		return
	}
	m, isMap := v.(map[string]any)
	if isMap {
		if e, ok := m["error"].(map[string]any); ok {
			fmt.Fprintf(w, "error %v: %v\n", e["code"], e["message"])
			if a, ok := e["action"].(string); ok && a != "" {
				fmt.Fprintf(w, "what to do: %s\n", a)
			}
			return
		}
		for _, f := range textFields {
			if s, ok := m[f].(string); ok {
				fmt.Fprint(w, s)
				if !strings.HasSuffix(s, "\n") {
					fmt.Fprintln(w)
				}
				return
			}
		}
	}
	writeValue(w, v, 0)
}

// writeValue writes v indented by depth levels.
func writeValue(w io.Writer, v any, depth int) {
	ind := strings.Repeat("  ", depth)
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
		var nested []string
		for _, k := range keys {
			if isScalar(x[k]) {
				fmt.Fprintf(tw, "%s%s:\t%s\n", ind, k, scalar(x[k]))
			} else {
				nested = append(nested, k)
			}
		}
		tw.Flush()
		for _, k := range nested {
			if l, ok := x[k].([]any); ok && len(l) == 0 {
				fmt.Fprintf(w, "%s%s: (none)\n", ind, k)
				continue
			}
			fmt.Fprintf(w, "%s%s:\n", ind, k)
			writeValue(w, x[k], depth+1)
		}
	case []any:
		if cols := tableColumns(x); cols != nil {
			writeTable(w, ind, cols, x)
			return
		}
		for _, e := range x {
			if isScalar(e) {
				fmt.Fprintf(w, "%s- %s\n", ind, scalar(e))
				continue
			}
			fmt.Fprintf(w, "%s-\n", ind)
			writeValue(w, e, depth+1)
		}
	default:
		fmt.Fprintf(w, "%s%s\n", ind, scalar(x))
	}
}

// tableColumns are the keys of a list of objects whose values are all
// scalars (in the first object's key order, sorted), nil when the list is
// not such a table.
func tableColumns(l []any) []string {
	if len(l) == 0 {
		return nil
	}
	seen := map[string]bool{}
	var cols []string
	for _, e := range l {
		m, ok := e.(map[string]any)
		if !ok {
			return nil
		}
		for k, v := range m {
			if !isScalar(v) {
				return nil
			}
			if !seen[k] {
				seen[k] = true
				cols = append(cols, k)
			}
		}
	}
	sort.Slice(cols, func(i, j int) bool {
		return colRank(cols[i]) < colRank(cols[j]) || colRank(cols[i]) == colRank(cols[j]) && cols[i] < cols[j]
	})
	return cols
}

// colRank puts the columns a person looks for first.
func colRank(c string) int {
	switch c {
	case "id":
		return 0
	case "name", "title", "hpath":
		return 1
	}
	return 2
}

func writeTable(w io.Writer, ind string, cols []string, rows []any) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s%s\n", ind, strings.ToUpper(strings.Join(cols, "\t")))
	for _, r := range rows {
		m := r.(map[string]any)
		cells := make([]string, len(cols))
		for i, c := range cols {
			if v, ok := m[c]; ok {
				cells[i] = oneLine(scalar(v))
			}
		}
		fmt.Fprintf(tw, "%s%s\n", ind, strings.Join(cells, "\t"))
	}
	tw.Flush()
}

func isScalar(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return false
	}
	return true
}

func scalar(v any) string {
	switch x := v.(type) {
	case nil:
		return "-"
	case string:
		return x
	}
	return fmt.Sprint(v)
}

// oneLine keeps a table cell on its row.
func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ⏎ ")
	if r := []rune(s); len(r) > 60 {
		return string(r[:59]) + "…"
	}
	return s
}
