// Package kernelopts reads the kernel options a person set for the upstream
// SiYuan plugin (its mcpHttpSettings file, key kernelOptions): read budgets,
// the read deadline, read retries, the template budget and the browser
// origins allowed besides the server's own. The names, defaults and ranges
// are the plugin's, so a person moving from it keeps their settings; a value
// outside its range is clamped to it, a value of the wrong type takes the
// default, and each such correction is reported.
package kernelopts

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"strings"
)

// File is where the options live in the workspace, beside the plugin's
// other settings.
const File = "/data/storage/petal/siyuan-plugins-mcp-sisyphus/mcpHttpSettings"

// MaxOrigins is how many allowed origins are kept (the first ones).
const MaxOrigins = 32

// Options are the kernel options, after clamping.
type Options struct {
	ReadMaxRequests int      `json:"readMaxRequests"`
	ReadMaxMiB      int      `json:"readMaxMiB"`
	ReadTimeoutMs   int      `json:"readTimeoutMs"`
	ReadRetries     int      `json:"readRetries"`
	TemplateMaxMiB  int      `json:"templateMaxMiB"`
	AllowedOrigins  []string `json:"allowedOrigins"`
}

// Field is one numeric option: its name, default and range.
type Field struct {
	Name          string
	Default, Min  int
	Max           int
	get           func(*Options) *int
	Unit, Meaning string
}

// Fields are the numeric options, in the plugin's order.
var Fields = []Field{
	{"readMaxRequests", 128, 16, 512, func(o *Options) *int { return &o.ReadMaxRequests }, "", "kernel calls one read may make"},
	{"readMaxMiB", 8, 1, 64, func(o *Options) *int { return &o.ReadMaxMiB }, "MiB", "data one read may decode (an image read may take 20 MiB more)"},
	{"readTimeoutMs", 30000, 1000, 120000, func(o *Options) *int { return &o.ReadTimeoutMs }, "ms", "deadline of one read"},
	{"readRetries", 3, 0, 3, func(o *Options) *int { return &o.ReadRetries }, "", "retries of a read after a transport failure, HTTP 429 or 5xx (writes are never retried)"},
	{"templateMaxMiB", 16, 1, 32, func(o *Options) *int { return &o.TemplateMaxMiB }, "MiB", "largest template body"},
}

// Get is the value of the numeric option name in o.
func (f Field) Get(o Options) int { return *f.get(&o) }

// Defaults are the options when the file sets none.
func Defaults() Options {
	var o Options
	for _, f := range Fields {
		*f.get(&o) = f.Default
	}
	o.AllowedOrigins = []string{}
	return o
}

// Parse reads the content of the settings file. Missing options take their
// defaults; notes say what was clamped or ignored, one line each. An empty
// file is all defaults; a file that is not a JSON object is an error (the
// caller then uses the defaults and says so).
func Parse(data []byte) (o Options, notes []string, err error) {
	o = Defaults()
	if strings.TrimSpace(string(data)) == "" {
		return o, nil, nil
	}
	var file map[string]json.RawMessage
	if err := json.Unmarshal(data, &file); err != nil {
		return o, nil, fmt.Errorf("the settings file is not a JSON object: %w", err)
	}
	raw, ok := file["kernelOptions"]
	if !ok || string(raw) == "null" {
		return o, nil, nil
	}
	var opts map[string]json.RawMessage
	if err := json.Unmarshal(raw, &opts); err != nil {
		return o, []string{"kernelOptions is not an object: every option takes its default"}, nil
	}
	for _, f := range Fields {
		v, ok := opts[f.Name]
		if !ok {
			continue
		}
		var n float64
		// null decodes into a number without an error: it is not one.
		if err := json.Unmarshal(v, &n); err != nil || string(v) == "null" || math.IsNaN(n) || math.IsInf(n, 0) {
			notes = append(notes, fmt.Sprintf("%s is not a number (%s): %d, its default, applies", f.Name, clip(string(v)), f.Default))
			continue
		}
		// The plugin takes the whole part of a fraction.
		whole := math.Floor(n)
		got := int(math.Max(float64(f.Min), math.Min(float64(f.Max), whole)))
		if float64(got) != n {
			notes = append(notes, fmt.Sprintf("%s %s is outside %d–%d or not whole: %d applies", f.Name, clip(string(v)), f.Min, f.Max, got))
		}
		*f.get(&o) = got
	}
	if v, ok := opts["allowedOrigins"]; ok {
		var list []json.RawMessage
		if err := json.Unmarshal(v, &list); err != nil {
			notes = append(notes, "allowedOrigins is not a list: no origin besides the server's own is allowed")
		}
		seen := map[string]bool{}
		for _, item := range list {
			var s string
			if json.Unmarshal(item, &s) != nil || !ValidOrigin(s) {
				notes = append(notes, fmt.Sprintf("allowedOrigins: %s is not an origin like https://app.example (scheme and host only): ignored", clip(string(item))))
				continue
			}
			if seen[s] {
				continue
			}
			if len(o.AllowedOrigins) == MaxOrigins {
				notes = append(notes, fmt.Sprintf("allowedOrigins: only the first %d are kept", MaxOrigins))
				break
			}
			seen[s] = true
			o.AllowedOrigins = append(o.AllowedOrigins, s)
		}
	}
	return o, notes, nil
}

// ValidOrigin reports whether s is exactly an http or https origin: scheme
// and host (with a port when not the default one), no credentials, path,
// query or fragment.
func ValidOrigin(s string) bool {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return false
	}
	return u.Scheme+"://"+u.Host == s
}

// clip shortens a value quoted in a note.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
