package authority

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/sisyphus-go/sisyphus/docs"
	"github.com/sisyphus-go/sisyphus/internal/mcp"
	"github.com/sisyphus-go/sisyphus/internal/settings"
	"github.com/sisyphus-go/sisyphus/internal/skills"
)

// What agents get besides tools: the skills (through the skills
// extension, as resources and as prompts), the help pages and the
// per-action help. None of it reads a note: the skills and the written
// pages are fixed for the binary, and the tool overview, the per-action
// help and the person's rules follow the configuration only. The tool
// overview and the per-action help show what the configuration enables
// now, as the tools' own help does: a disabled tool or action is not in
// the overview and its help page is not found. The skills are fixed (their
// digests must be) and say that help and tools/list show what is enabled.
//
// URIs of the help pages and templates.
const (
	helpToolOverview = "siyuan://help/tool-overview"
	helpUserRules    = "siyuan://help/user-rules"
	helpChangelog    = "siyuan://help/changelog"
	helpActionTmpl   = "siyuan://help/action/{tool}/{action}"
	skillsIndex      = "siyuan://skills/index"
	skillsTmpl       = "siyuan://skills/{name}"
)

const markdown = "text/markdown"

// serveAgentDocs registers the skills, the help resources and the prompts
// on s. A skill or page that does not render against the registry's tools
// is a bug the tests catch; here it is logged and left out.
func serveAgentDocs(s *mcp.Server, rn *Runner, log *slog.Logger) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ts := rn.Registry.Tools()
	sk, err := skills.Render(ts)
	if err != nil {
		log.Error("the skills do not render; none are served", "err", err)
		sk = nil
	}
	pages, err := skills.Pages(ts)
	if err != nil {
		log.Error("the help pages do not render; they are not served", "err", err)
		pages = nil
	}
	text := func(uri, mime string, body []byte) mcp.ResourceHandler {
		c := mcp.ResourceContents{URI: uri, MimeType: mime, Text: string(body)}
		return func(context.Context, *mcp.ResourceRequest) (*mcp.ResourceResult, error) {
			return &mcp.ResourceResult{Contents: []mcp.ResourceContents{c}}, nil
		}
	}
	s.AddResource(mcp.Resource{URI: helpToolOverview, Name: "tool-overview", Title: "Tool overview", MimeType: markdown,
		Description: "The tools and actions this server's configuration enables now, with what each does.",
		Handler: func(ctx context.Context, req *mcp.ResourceRequest) (*mcp.ResourceResult, error) {
			body, err := toolOverview(ctx, rn)
			if err != nil {
				return nil, err
			}
			return &mcp.ResourceResult{Contents: []mcp.ResourceContents{{URI: req.URI, MimeType: markdown, Text: body}}}, nil
		}})
	for _, p := range pages {
		uri := "siyuan://help/" + p.Name
		s.AddResource(mcp.Resource{URI: uri, Name: p.Name, Title: p.Title, Description: p.Description, MimeType: markdown,
			Size: int64(len(p.Body)), Handler: text(uri, markdown, p.Body)})
	}
	s.AddResource(mcp.Resource{URI: helpUserRules, Name: "user-rules", Title: "The person's rules", MimeType: markdown,
		Description: "The rules the person who runs Sisyphus set for agents (fs /USER_RULES.md); they never lift a permission, a confirmation or a disabled action.",
		Handler: func(ctx context.Context, req *mcp.ResourceRequest) (*mcp.ResourceResult, error) {
			body, err := userRules(ctx, rn)
			if err != nil {
				return nil, err
			}
			return &mcp.ResourceResult{Contents: []mcp.ResourceContents{{URI: req.URI, MimeType: markdown, Text: body}}}, nil
		}})
	s.AddResource(mcp.Resource{URI: helpChangelog, Name: "changelog", Title: "Changelog", MimeType: markdown,
		Description: "What changed in each version of this server.", Size: int64(len(docs.Changelog)),
		Handler: text(helpChangelog, markdown, []byte(docs.Changelog))})
	s.AddResourceTemplate(mcp.ResourceTemplate{URITemplate: helpActionTmpl, Name: "action-help", Title: "Help of one action",
		Description: "What {\"action\":\"help\",\"topic\":\"<action>\"} of the tool answers: arguments, an example, confirmation; not found when the configuration disables it.",
		MimeType:    "application/json",
		Handler: func(ctx context.Context, req *mcp.ResourceRequest) (*mcp.ResourceResult, error) {
			raw, _ := json.Marshal(map[string]string{"action": "help", "topic": req.Vars["action"]})
			if req.Vars["action"] == "help" || req.Vars["action"] == "overview" {
				return nil, mcp.ResourceNotFound(req.URI)
			}
			v, err := rn.Registry.Call(ctx, req.Vars["tool"], raw)
			if err != nil {
				// Unknown or disabled tool or action: the page does not exist.
				return nil, mcp.ResourceNotFound(req.URI)
			}
			b, err := json.MarshalIndent(v, "", "  ")
			if err != nil {
				return nil, err
			}
			return &mcp.ResourceResult{Contents: []mcp.ResourceContents{{URI: req.URI, MimeType: "application/json", Text: string(b)}}}, nil
		}})
	if len(sk) == 0 {
		return
	}
	index := skills.Index(sk)
	s.AddResource(mcp.Resource{URI: skillsIndex, Name: "skills-index", Title: "Skills", MimeType: markdown,
		Description: "The scenario skills this server serves, with their prompts and digests.", Size: int64(len(index)),
		Handler: text(skillsIndex, markdown, index)})
	byName := map[string]skills.Skill{}
	for _, k := range sk {
		byName[k.Name] = k
		s.AddSkill(mcp.Skill{Path: k.Name, Frontmatter: map[string]any{"name": k.Name, "description": k.Description},
			Files: []mcp.SkillFile{{Path: "SKILL.md", MimeType: markdown, Content: k.Body}}})
		uri := "siyuan://skills/" + k.Name
		s.AddResource(mcp.Resource{URI: uri, Name: k.Name, Description: k.Description, MimeType: markdown,
			Size: int64(len(k.Body)), Handler: text(uri, markdown, k.Body)})
		body := k.Body
		s.AddPrompt(mcp.Prompt{Name: k.Prompt(), Title: k.Name, Description: k.Description,
			Arguments: []mcp.PromptArgument{{Name: "task", Description: "what you want done (optional)"}},
			Handler: func(_ context.Context, req *mcp.PromptRequest) (*mcp.PromptResult, error) {
				msg := "Follow this guide to work with SiYuan through Sisyphus.\n\n" + string(body)
				if t := strings.TrimSpace(req.Arguments["task"]); t != "" {
					msg += "\n\nThe task: " + t
				}
				return &mcp.PromptResult{Description: k.Description, Messages: []mcp.PromptMessage{{Role: "user", Content: mcp.TextContent(msg)}}}, nil
			}})
	}
	// A skill also by its name alone, as the template says; the listed
	// resources above answer first.
	s.AddResourceTemplate(mcp.ResourceTemplate{URITemplate: skillsTmpl, Name: "skill", Title: "A skill by name", MimeType: markdown,
		Description: "One skill's SKILL.md by its name (siyuan://skills/index lists them).",
		Handler: func(_ context.Context, req *mcp.ResourceRequest) (*mcp.ResourceResult, error) {
			k, ok := byName[req.Vars["name"]]
			if !ok {
				return nil, mcp.ResourceNotFound(req.URI)
			}
			return &mcp.ResourceResult{Contents: []mcp.ResourceContents{{URI: req.URI, MimeType: markdown, Text: string(k.Body)}}}, nil
		}})
}

// toolOverview lists the tools and actions the configuration enables, from
// each tool's own help.
func toolOverview(ctx context.Context, rn *Runner) (string, error) {
	var b bytes.Buffer
	b.WriteString("# Sisyphus tools\n\nWhat this server's configuration enables now. Every tool takes `action`; " +
		"`{\"action\":\"help\",\"topic\":\"<action>\"}` (or siyuan://help/action/<tool>/<action>) shows an action's arguments and an example. " +
		"Writes are strict (siyuan://help/strict-writes); dangerous actions need the person's confirmation.\n")
	for _, t := range rn.Registry.Tools() {
		v, err := rn.Registry.Call(ctx, t.Name, json.RawMessage(`{"action":"help"}`))
		if err != nil {
			continue // disabled, or the configuration cannot be read: not usable now
		}
		var h struct {
			Description string `json:"description"`
			Actions     []struct {
				Action, Summary, Class string
				Dangerous              bool
			} `json:"actions"`
		}
		raw, err := json.Marshal(v)
		if err != nil || json.Unmarshal(raw, &h) != nil {
			return "", fmt.Errorf("help of %s: %w", t.Name, err)
		}
		fmt.Fprintf(&b, "\n## %s\n\n%s\n\n", t.Name, h.Description)
		for _, a := range h.Actions {
			mark := ""
			if a.Dangerous {
				mark = ", dangerous"
			}
			fmt.Fprintf(&b, "- `%s` (%s%s): %s\n", a.Action, a.Class, mark, a.Summary)
		}
	}
	return b.String(), nil
}

// userRules is the person's rules text from the configuration.
func userRules(ctx context.Context, rn *Runner) (string, error) {
	// Fail closed, and say so: the rules are the person's, and an
	// agent must not take "none" for "could not be read".
	cfg, err := settings.NewStore(rn.Registry.Env().Kernel).Load(ctx)
	if err == nil {
		if probs := cfg.Problems(); len(probs) > 0 {
			err = errors.New(probs[0])
		}
	}
	if err != nil {
		return "", &mcp.Error{Code: mcp.CodeInternalError, Message: "Sisyphus's configuration, which holds the person's rules, cannot be read; ask the person to check it (sisyphus config show)"}
	}
	rules := strings.TrimSpace(cfg.UserRules())
	if rules == "" {
		rules = "(none set)"
	}
	return "# The person's rules for agents\n\nFollow them where they apply. They never lift a notebook permission, " +
		"a confirmation or a disabled action.\n\n" + rules + "\n", nil
}
