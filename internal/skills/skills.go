// Package skills renders the scenario skills Sisyphus gives agents (how to
// browse, edit, search, use databases, files, tags and flashcards, the
// timeline, and how to stay safe) from one source with the action table:
// each skill is a Markdown template whose calls, actions and arguments are
// typed references checked against the tools' declarations when it is
// rendered, so a renamed or removed action or argument fails the
// rendering, and with it the tests and the golden files under skills/.
//
// The same bytes are served through the skills extension, as resources
// and prompts (package authority), and installed into a client's skills
// folder (sisyphus skill install).
package skills

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"text/template"

	"github.com/sisyphus-go/sisyphus/internal/tools"
)

//go:embed src/*.md
var sources embed.FS

// source is one skill's declaration: its name, what it is for (the
// frontmatter description a client shows before loading it), the tools it
// needs (left out when one is not registered) and its template.
type source struct {
	name, description string
	requires          []string
	file              string
}

// sourceList lists the skills in the order they are served.
var sourceList = []source{
	{name: "siyuan-index", file: "index.md",
		description: "Start here when working with SiYuan notes through Sisyphus: which tool does what, the strict write flow (preflight, then commit with the issued credentials), permissions and confirmation, and which other skill to load for a task."},
	{name: "siyuan-browse-read", file: "browse-read.md",
		description: "Find and read SiYuan notebooks, documents and blocks through Sisyphus: list notebooks and the document tree, resolve paths and ids, read documents in windows of whole blocks, outlines, attributes and backlinks."},
	{name: "siyuan-create-edit", file: "create-edit.md",
		description: "Create and change SiYuan documents and blocks through Sisyphus's strict writes: create documents, append, insert, update and replace text in blocks, move and rename, with preflight, commit and readback."},
	{name: "siyuan-search-query", file: "search-query.md",
		description: "Search SiYuan notes through Sisyphus: full-text and semantic search, name and alias anchors, read-only SQL over the index, backlinks and invalid references, and confirmed find-and-replace."},
	{name: "siyuan-database", file: "database.md",
		description: "Work with SiYuan databases (attribute views) through Sisyphus: find and render them, read columns and rows, create databases, add rows, set cells and shape views with strict writes."},
	{name: "siyuan-files-export", file: "files-export.md",
		description: "Handle SiYuan files through Sisyphus: assets (upload, rename, delete, unused ones), templates, images a document shows, and exports to Markdown or ZIP, with what touches the person's computer and how it is confirmed."},
	{name: "siyuan-tags-flashcards", file: "tags-flashcards.md",
		description: "Use SiYuan tags and flashcards through Sisyphus: list and search tags, rename or remove a tag everywhere, list due cards and decks, review cards with a rating, make and remove cards."},
	{name: "siyuan-timeline", file: "timeline.md", requires: []string{"timeline"},
		description: "Use a SiYuan document's timeline through Sisyphus: list its saved versions, save one, compare a version with the current document, and roll a document or one block back after the person confirms."},
	{name: "siyuan-safety", file: "safety.md",
		description: "Stay safe with SiYuan through Sisyphus: what every error code means and what to do next, replaying a write by its requestId, outcome_unknown, dangerous actions and the person's confirmation, permissions and hidden notebooks."},
}

// Skill is one rendered skill.
type Skill struct {
	Name        string // its directory name and frontmatter name
	Description string
	Body        []byte // SKILL.md: frontmatter, then the Markdown
}

// Digest is the body's digest as the skills extension publishes it.
func (s Skill) Digest() string {
	sum := sha256.Sum256(s.Body)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Prompt is the name of the skill's prompt: siyuan_<name without siyuan->
// with underscores.
func (s Skill) Prompt() string {
	return "siyuan_" + strings.ReplaceAll(strings.TrimPrefix(s.Name, "siyuan-"), "-", "_")
}

// Render renders every skill whose tools are among ts, checking every
// reference to an action or argument against their declarations.
func Render(ts []*tools.Tool) ([]Skill, error) {
	byName := byName(ts)
	var out []Skill
	for _, src := range sourceList {
		if slices.ContainsFunc(src.requires, func(n string) bool { return byName[n] == nil }) {
			continue
		}
		body, err := render(src, byName)
		if err != nil {
			return nil, fmt.Errorf("skill %s: %w", src.name, err)
		}
		out = append(out, Skill{Name: src.name, Description: src.description, Body: body})
	}
	return out, nil
}

// Page is a help page: Markdown checked against the action table like
// the skills.
type Page struct {
	Name, Title, Description string
	Body                     []byte
}

// pageList are the help pages written here (others are made at read
// time from the configuration: the tool overview, the person's rules).
var pageList = []struct{ name, title, description, file string }{
	{"strict-writes", "How writes work", "The strict write flow: preflight, commit with the issued credentials, replay, outcome_unknown, confirmation.", "help-strict-writes.md"},
	{"document-paths", "Document paths", "Ids, storage paths and human paths of SiYuan documents, and the fs tool's paths.", "help-document-paths.md"},
}

// Pages renders the help pages against ts.
func Pages(ts []*tools.Tool) ([]Page, error) {
	m := byName(ts)
	var out []Page
	for _, p := range pageList {
		text, err := sources.ReadFile("src/" + p.file)
		if err != nil {
			return nil, err
		}
		body, err := renderText(p.file, string(text), m)
		if err != nil {
			return nil, fmt.Errorf("help page %s: %w", p.name, err)
		}
		out = append(out, Page{Name: p.name, Title: p.title, Description: p.description, Body: body})
	}
	return out, nil
}

// Index is the Markdown index of the skills (siyuan://skills/index).
func Index(sk []Skill) []byte {
	var b bytes.Buffer
	b.WriteString("# Sisyphus skills\n\nScenario guides for working with SiYuan through Sisyphus. Each is served as the\n" +
		"skill `skill://<name>/SKILL.md` (skills extension), the resource `siyuan://skills/<name>`\n" +
		"and the prompt named below; `sisyphus skill install` copies them into a client's skills folder.\n\n")
	for _, s := range sk {
		fmt.Fprintf(&b, "- **%s** (prompt `%s`, %s): %s\n", s.Name, s.Prompt(), s.Digest(), s.Description)
	}
	return b.Bytes()
}

func byName(ts []*tools.Tool) map[string]*tools.Tool {
	m := map[string]*tools.Tool{}
	for _, t := range ts {
		m[t.Name] = t
	}
	return m
}

func render(src source, byName map[string]*tools.Tool) ([]byte, error) {
	text, err := sources.ReadFile("src/" + src.file)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	// The frontmatter's strings are JSON strings: valid YAML, and read
	// back as the very values the skills extension publishes.
	fmt.Fprintf(&b, "---\nname: %s\ndescription: %s\n---\n\n", src.name, strconv.Quote(src.description))
	body, err := renderText(src.file, string(text), byName)
	if err != nil {
		return nil, err
	}
	b.Write(body)
	return b.Bytes(), nil
}

// renderText executes one skill's template against the tools.
func renderText(name, text string, byName map[string]*tools.Tool) ([]byte, error) {
	action := func(tool, name string) (*tools.Action, error) {
		t := byName[tool]
		if t == nil {
			return nil, fmt.Errorf("no tool %q", tool)
		}
		if name == "help" {
			return nil, nil
		}
		for _, a := range t.Actions {
			if a.Name == name {
				return a, nil
			}
		}
		return nil, fmt.Errorf("tool %s has no action %q", tool, name)
	}
	funcs := template.FuncMap{
		// has reports whether a tool is registered (optional tools).
		"has": func(tool string) bool { return byName[tool] != nil },
		// tool names a tool: `tool`.
		"tool": func(tool string) (string, error) {
			if byName[tool] == nil {
				return "", fmt.Errorf("no tool %q", tool)
			}
			return "`" + tool + "`", nil
		},
		// act names an action: `tool action`.
		"act": func(tool, name string) (string, error) {
			if _, err := action(tool, name); err != nil {
				return "", err
			}
			return "`" + tool + " " + name + "`", nil
		},
		// arg names arguments an action takes: `a`, `b`.
		"arg": func(tool, name string, args ...string) (string, error) {
			a, err := action(tool, name)
			if err != nil {
				return "", err
			}
			var out []string
			for _, n := range args {
				if a == nil || !a.Takes(n) {
					return "", fmt.Errorf("%s %s takes no argument %q", tool, name, n)
				}
				out = append(out, "`"+n+"`")
			}
			return strings.Join(out, ", "), nil
		},
		// call shows one complete call, `tool {"action":…,…}`, whose
		// arguments must bind as the action declares them.
		"call": func(tool, name, args string) (string, error) {
			a, err := action(tool, name)
			if err != nil {
				return "", err
			}
			var buf bytes.Buffer
			if err := json.Compact(&buf, []byte(args)); err != nil || !bytes.HasPrefix(buf.Bytes(), []byte("{")) {
				return "", fmt.Errorf("%s %s: arguments %s are not a JSON object", tool, name, args)
			}
			inner := strings.TrimSuffix(strings.TrimPrefix(buf.String(), "{"), "}")
			call := `{"action":` + strconv.Quote(name)
			if inner != "" {
				call += "," + inner
			}
			call += "}"
			if a != nil {
				var fields map[string]json.RawMessage
				if err := json.Unmarshal([]byte(call), &fields); err != nil {
					return "", err
				}
				for k := range fields {
					if k != "action" && !a.Takes(k) {
						return "", fmt.Errorf("%s %s takes no argument %q", tool, name, k)
					}
				}
				if _, err := a.ParseArgs(json.RawMessage(call)); err != nil {
					return "", fmt.Errorf("%s %s: %s does not bind: %w", tool, name, call, err)
				}
			}
			return tool + " " + call, nil
		},
		// describe is one action's line from the table: its summary,
		// and whether a person confirms it and whether it is off by default.
		"describe": func(tool, name string) (string, error) {
			a, err := action(tool, name)
			if err != nil || a == nil {
				return "", fmt.Errorf("describe %s %s: %v", tool, name, err)
			}
			var marks []string
			if a.Dangerous {
				marks = append(marks, "a person confirms it")
			}
			if a.OffByDefault {
				marks = append(marks, "off until the person enables it")
			}
			line := "`" + tool + " " + name + "`"
			if a.Summary != "" {
				line += ": " + a.Summary
			}
			if len(marks) > 0 {
				line += " (" + strings.Join(marks, "; ") + ")"
			}
			return line, nil
		},
		// dangerous lists the actions a person must confirm, from the
		// table; offByDefault those off until the configuration enables them.
		"dangerous": func() string { return listActions(byName, func(a *tools.Action) bool { return a.Dangerous }) },
		"offByDefault": func() string {
			return listActions(byName, func(a *tools.Action) bool { return a.OffByDefault })
		},
	}
	tpl, err := template.New(name).Option("missingkey=error").Funcs(funcs).Parse(text)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := tpl.Execute(&b, nil); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// listActions lists "tool action" of every action keep selects, tool by
// tool in the catalog's order.
func listActions(byName map[string]*tools.Tool, keep func(*tools.Action) bool) string {
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	slices.Sort(names)
	var lines []string
	for _, n := range names {
		var acts []string
		for _, a := range byName[n].Actions {
			if keep(a) {
				acts = append(acts, a.Name)
			}
		}
		if len(acts) > 0 {
			lines = append(lines, "- `"+n+"`: "+strings.Join(acts, ", "))
		}
	}
	return strings.Join(lines, "\n")
}
