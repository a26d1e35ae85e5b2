package settingsui

import (
	"html/template"
	"time"
)

// levels are the notebook permissions, weakest first, with what each lets
// agents do.
var levels = []struct{ Name, Words string }{
	{"none", "hidden from agents"},
	{"r", "read"},
	{"rw", "read and write"},
	{"rwd", "read, write and delete"},
}

// outcomes say in words what each ledger status means.
var outcomes = map[string]string{
	"committed":              "written and verified",
	"no_change":              "nothing needed changing",
	"executing":              "outcome unknown: left executing, never retried",
	"failed_before_dispatch": "refused before sending: nothing written",
	"issued":                 "preflight only",
}

var funcs = template.FuncMap{
	"levels": func() any { return levels },
	"levelWords": func(l string) string {
		for _, v := range levels {
			if v.Name == l {
				return v.Words
			}
		}
		return l
	},
	"outcome": func(status string) string {
		if w, ok := outcomes[status]; ok {
			return w
		}
		return status
	},
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05")
	},
	"dash": func(s string) string {
		if s == "" {
			return "—"
		}
		return s
	},
	"onoff": func(on bool) string {
		if on {
			return "on"
		}
		return "off"
	},
}
