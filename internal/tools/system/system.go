// Package system is the system tool: what this server is, the SiYuan it
// serves (versions, clock, configuration and network masked, installed
// packages, snippets, plugin storage read in a sandbox), how writes are
// kept safe (bootstrap), notifications and the sync trigger.
package system

import (
	"context"
	"strings"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// Tool returns the system tool.
func Tool() *tools.Tool {
	return &tools.Tool{
		Name:  "system",
		Title: "System",
		Description: "What this server is, the SiYuan it serves, and how writes are kept safe (call bootstrap first); " +
			"SiYuan's configuration, network, packages, snippets and plugin storage, always with secrets masked; " +
			"notify and perform_sync are external effects, without the strict guarantee.",
		Actions: []*tools.Action{
			versionAction("get_version", "SiYuan's and Sisyphus's versions"),
			versionAction("version", "the same as get_version (kept as an alias)"),
			tools.Read[tools.NoArgs]{
				Name: "bootstrap", Summary: "onboarding: server, notebooks (with your permission in each), tools and the write-safety protocol",
				Scope: tools.Scope[tools.NoArgs]{Global: true},
				Run:   bootstrap,
			}.Action(),
			notify.Action(),
			currentTime.Action(),
			changelog.Action(),
			confAction.Action(),
			network.Action(),
			workspaceInfo.Action(),
			auditEnvironment.Action(),
			listPackages.Action(),
			getPlugin.Action(),
			listSnippets.Action(),
			listPluginStorage.Action(),
			readPluginStorage.Action(),
			performSync.Action(),
		},
	}
}

func bootstrap(ctx context.Context, env *tools.Env, _ tools.NoArgs) (any, error) {
	v, err := env.Kernel.Version(ctx)
	if err != nil {
		return nil, err
	}
	nbs, err := env.Kernel.ListNotebooks(ctx)
	if err != nil {
		return nil, err
	}
	type nb struct {
		ID         string `json:"id"`
		Name       string `json:"name"`
		Closed     bool   `json:"closed"`
		Permission string `json:"permission"`
	}
	notebooks := make([]nb, 0, len(nbs))
	for _, n := range nbs {
		if !tools.Visible(ctx, n.ID) {
			continue // hidden from agents
		}
		notebooks = append(notebooks, nb{n.ID, n.Name, n.Closed, tools.LevelOf(ctx, n.ID).String()})
	}
	// The enabled write actions by protocol, from the registry itself.
	var names, guarded, additive, external, dangerous []string
	for _, t := range env.Tools() {
		if !tools.ToolEnabled(ctx, t) {
			continue
		}
		names = append(names, t.Name)
		for _, a := range t.Actions {
			if !tools.ActionEnabled(ctx, t, a) {
				continue
			}
			full := t.Name + "." + a.Name
			if a.Dangerous {
				dangerous = append(dangerous, full)
			}
			switch a.Policy.Class {
			case strict.Mutation:
				guarded = append(guarded, full+" ("+string(a.Policy.Precondition)+")")
			case strict.Additive:
				additive = append(additive, full)
			case strict.External:
				external = append(external, full)
			}
			if w, _ := a.WriteForm(); w != nil && w.Policy.Class == strict.Additive {
				additive = append(additive, full+" ("+a.WriteCondition()+")")
			}
		}
	}
	return map[string]any{
		"agentFiles":    agentFiles(ctx, env),
		"schemaVersion": 1,
		"server":        map[string]any{"name": "sisyphus", "version": env.Version},
		"siyuan":        map[string]any{"version": v},
		"notebooks":     notebooks,
		"writeSafety": map[string]any{
			"protocol": "preflight-lease-v1",
			"mutationSteps": []string{
				"call the write with validateOnly:true and the same arguments: it reads, hashes the target and returns requestId plus a credential field named like the write parameter (e.g. expectedStateHash)",
				"repeat the call without validateOnly, copying requestId and the credential unchanged",
				"on state_changed: read the target again before deciding to write; on outcome_unknown: inspect the target, never retry with a new requestId",
			},
			"invariant":     "every write Sisyphus owns is attempted once, after comparing full SHA-256 digests of the target against a fresh read",
			"strictMode":    env.StrictOn(ctx),
			"guarded":       guarded,
			"requestIdOnly": additive,
			"external":      external,
		},
		"tools": names,
		"permissions": map[string]any{
			"levels":  "none (hidden), r (read), rw (read and write), rwd (read, write and delete); a notebook without an entry is r",
			"changes": "only the person who runs Sisyphus changes permissions and switches (sisyphus config, or the settings page)",
		},
		"confirmation": map[string]any{
			"dangerous": dangerous,
			"rule": "before a dangerous action, describe it to the person and wait for explicit approval; a client with form elicitation shows them a form, " +
				"a client without it passes confirm:true only after the approval",
			"localFiles": "through stdio, sisyphus call or serve --authority, a call that reads a file of the person's computer (file.upload_asset with localFilePath, " +
				"its preflight too) or saves one there (file.export_resources with outputPath, file.extract_doc) works only inside the folders the person allowed " +
				"and is confirmed the same way: show the person the path the confirmation names before passing confirm:true",
		},
		"nextCalls": []map[string]any{
			{"tool": "notebook", "arguments": map[string]any{"action": "list"}},
			{"tool": "document", "arguments": map[string]any{"action": "get_child_docs", "notebook": "<notebook id>"}},
			{"tool": "document", "arguments": map[string]any{"action": "get_doc", "id": "<document id>"}},
		},
	}, nil
}

type notifyArgs struct {
	Msg     string `arg:"msg" help:"the message" required:""`
	Level   string `arg:"level" help:"info or error" enum:"info,error" default:"info"`
	Timeout int    `arg:"timeout" help:"milliseconds on screen" default:"7000" min:"0" max:"600000"`
}

var notify = tools.Write[notifyArgs, struct{}]{
	Name: "notify", Summary: "show a message in SiYuan's UI (an external effect: no preflight, no strict guarantee)",
	Example: map[string]any{"msg": "The weekly summary is ready", "timeout": 5000},
	Policy:  strict.WritePolicy{Class: strict.External},
	// SiYuan pushes the message and answers at once.
	Timeout: 10 * time.Second,
	Scope:   tools.Scope[notifyArgs]{None: true},
	Validate: func(n *notifyArgs) error {
		if strings.TrimSpace(n.Msg) == "" {
			return failure.Invalid("argument \"msg\" must not be empty")
		}
		return nil
	},
	Execute: func(ctx context.Context, env *tools.Env, a notifyArgs, _ struct{}) (tools.Payload, error) {
		push := env.Kernel.PushMsg
		if a.Level == "error" {
			push = env.Kernel.PushErrMsg
		}
		id, err := push(ctx, a.Msg, a.Timeout)
		if err != nil {
			return nil, tools.WriteFailure(err, false)
		}
		return tools.Payload{"id": id}, nil
	},
}
