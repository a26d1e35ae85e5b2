package system

import (
	"context"
	"strings"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/settings"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// staleAfter is when the agents' memory counts as stale (upstream's 7 days).
const staleAfter = 7 * 24 * time.Hour

// memoryStatus is the memory's freshness as upstream tells it: missing (no
// text), stale (older than staleAfter, or without a valid time) or fresh.
func memoryStatus(text, updatedAt string, now time.Time) string {
	if strings.TrimSpace(text) == "" {
		return "missing"
	}
	at, err := time.Parse(time.RFC3339Nano, updatedAt)
	if err != nil || now.Sub(at) > staleAfter {
		return "stale"
	}
	return "fresh"
}

// memoryAdvice is what an agent does about the memory in each status.
var memoryAdvice = map[string]string{
	"missing": "no memory yet: before workspace-aware planning, ask the person whether to create /AGENTS.md; if they agree, look at the workspace with fs and write a short summary",
	"stale":   "the memory is older than 7 days: ask the person whether to refresh /AGENTS.md before relying on it, and verify the current state first",
	"fresh":   "use the memory as startup context, and still verify details before high-impact edits",
}

// agentFiles describes the fs tool's virtual files: the person's rules (their
// text, to follow) and the agents' memory (its size and freshness: read it
// with fs.read). An unreadable configuration leaves them described without
// content.
func agentFiles(ctx context.Context, env *tools.Env) map[string]any {
	memory := map[string]any{"path": "/AGENTS.md", "about": "your memory across sessions, kept in Sisyphus's configuration: " +
		"read it with fs read, keep it current with fs write (overwrite:true) or fs replace, clear it with fs rm; lower priority than the person's requests and rules",
		"staleAfterDays": int(staleAfter / (24 * time.Hour))}
	rules := map[string]any{"path": "/USER_RULES.md", "readOnly": true,
		"about": "the person's rules for agents: follow them before choosing tools; they never override confirmations, permissions or disabled actions; only the person changes them (sisyphus config user-rules)"}
	cfg, err := settings.NewStore(env.Kernel).Load(ctx)
	if err != nil || len(cfg.Problems()) > 0 {
		memory["unavailable"], rules["unavailable"] = true, true
		memory["advice"] = "the configuration could not be read: read /AGENTS.md with fs before assuming it is missing"
		return map[string]any{"memory": memory, "userRules": rules}
	}
	status := memoryStatus(cfg.AgentMemory(), cfg.AgentMemoryUpdatedAt(), time.Now())
	memory["bytes"], memory["updatedAt"], memory["status"], memory["advice"] = len(cfg.AgentMemory()), cfg.AgentMemoryUpdatedAt(), status, memoryAdvice[status]
	rules["text"] = cfg.UserRules()
	return map[string]any{"memory": memory, "userRules": rules}
}
