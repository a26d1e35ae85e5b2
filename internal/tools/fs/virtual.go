package fs

import (
	"context"
	"fmt"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/canon"
	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/settings"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/kernelview"
)

// The virtual root files, as upstream has them: /AGENTS.md is the agents'
// memory and /USER_RULES.md the person's rules. Both live in Sisyphus's
// configuration (mcpToolsConfig, read through the kernel), not in a
// notebook, so every process serving the workspace (authority, fronts,
// stdio) reads the same text, and no notebook permission applies to them.
// Agents may read, write, replace in and clear (rm) the memory, but not
// move it; the rules are read-only to agents (sisyphus config user-rules
// sets them).
//
// The names are reserved at the root: /AGENTS.md is always the memory, and a
// notebook literally named AGENTS.md or USER_RULES.md is shadowed in fs (ls
// and tree list it marked shadowed, with its id; paths under it are refused;
// search skips it); the notebook and document tools still reach it by id.
const (
	memoryFile = "/AGENTS.md"
	rulesFile  = "/USER_RULES.md"
)

// virtualFiles maps a root segment to the virtual file it names.
var virtualFiles = map[string]string{"AGENTS.md": memoryFile, "USER_RULES.md": rulesFile}

// shadowed reports whether a notebook's name is a virtual file's.
func shadowed(name string) bool { return virtualFiles[name] != "" }

// readVirtual reads a virtual file's text now (and, for the memory, when it
// was last set). A configuration that cannot be used fails closed.
func readVirtual(ctx context.Context, env *tools.Env, v string) (text, updatedAt string, err error) {
	cfg, err := settings.NewStore(env.Kernel).Load(ctx)
	if err != nil {
		return "", "", err
	}
	if probs := cfg.Problems(); len(probs) > 0 {
		return "", "", failure.New(failure.ConfigUnavailable, "Sisyphus's configuration, which holds %s, cannot be read: %s", v, probs[0])
	}
	if v == memoryFile {
		return cfg.AgentMemory(), cfg.AgentMemoryUpdatedAt(), nil
	}
	return cfg.UserRules(), "", nil
}

// virtualState is the state of a virtual file: the digest of its text (an
// empty text is Missing, as a document path without a document).
func virtualState(ctx context.Context, env *tools.Env, v string) (docState, error) {
	text, _, err := readVirtual(ctx, env, v)
	if err != nil {
		return docState{}, err
	}
	return docState{Path: v, Virtual: true, Missing: text == "", TextHash: canon.DigestBytes([]byte(text)), text: text}, nil
}

// readOnly refuses a write of the user rules.
func readOnly(v string) error {
	e := failure.New(failure.PermissionDenied, "%s is read-only: it holds the person's rules for agents; nothing was written", v)
	e.Action = "ask the person to change it with `sisyphus config user-rules`; keep your own notes in " + memoryFile
	return e.Attempted(false)
}

// checkText refuses a memory text the configuration would not take.
func checkText(text string) error {
	if len(text) > settings.MaxTextBytes {
		return failure.Invalid("%s may hold at most %d bytes; this text has %d: nothing was written", memoryFile, settings.MaxTextBytes, len(text))
	}
	return nil
}

// setMemory stores the memory text (written once; the store reads it back).
func setMemory(ctx context.Context, env *tools.Env, text string) (tools.Payload, error) {
	_, err := settings.NewStore(env.Kernel).Apply(ctx, settings.Change{AgentMemory: &text})
	if env.ConfigChanged != nil {
		env.ConfigChanged() // whatever came of it: read the configuration again
	}
	if err != nil {
		return nil, tools.WriteFailure(err, false)
	}
	return tools.Payload{"path": memoryFile, "virtual": true, "bytes": len(text)}, nil
}

// memoryReadback requires the memory to read back exactly want.
func memoryReadback(ctx context.Context, env *tools.Env, want string) (docState, error) {
	st, err := virtualState(ctx, env, memoryFile)
	if err != nil {
		return st, err
	}
	if st.text != want {
		return st, fmt.Errorf("%s does not read back the text written (%d bytes, want %d)", memoryFile, len(st.text), len(want))
	}
	return st, nil
}

// virtualEntries are the virtual files as ls lists them at /.
func virtualEntries() []entry {
	return []entry{{Name: "AGENTS.md", Path: memoryFile, Virtual: true}, {Name: "USER_RULES.md", Path: rulesFile, Virtual: true, ReadOnly: true}}
}

// textBlocks splits a text into Markdown blocks at blank lines outside
// fenced code, for windows over a virtual file.
func textBlocks(text string) []string {
	var out, cur []string
	fence := ""
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.Join(cur, "\n"))
			cur = nil
		}
	}
	for _, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		t := strings.TrimSpace(line)
		switch {
		case fence != "" && strings.HasPrefix(t, fence):
			fence = ""
		case fence == "" && (strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")):
			fence = t[:3]
		case fence == "" && t == "":
			flush()
			continue
		}
		cur = append(cur, line)
	}
	flush()
	return out
}

// readVirtualFile is fs.read of a virtual file: the same window fields as
// a document's, over its text's blocks.
func readVirtualFile(ctx context.Context, env *tools.Env, v string, w kernelview.Window) (map[string]any, error) {
	text, updated, err := readVirtual(ctx, env, v)
	if err != nil {
		return nil, err
	}
	blocks := textBlocks(text)
	total, i, tokens, over := len(blocks), w.BlockStart, 0, false
	var parts []string
	for ; i < total && len(parts) < w.BlockLimit; i++ {
		t := kernelview.EstimateTokens(blocks[i])
		if len(parts) > 0 && tokens+t > w.TokenBudget {
			break
		}
		over = over || len(parts) == 0 && t > w.TokenBudget
		tokens += t
		parts = append(parts, blocks[i])
	}
	ret := map[string]any{"path": v, "virtual": true, "content": strings.Join(parts, "\n\n"), "blockStart": w.BlockStart,
		"returnedBlocks": len(parts), "totalBlocks": total, "estimatedTokens": tokens, "truncated": i < total, "hasNextWindow": i < total,
		"readOnly": v == rulesFile}
	if v == memoryFile {
		ret["updatedAt"] = nil
		if updated != "" {
			ret["updatedAt"] = updated
		}
	}
	if over {
		ret["budgetExceeded"] = true
	}
	w.Tool, w.Address = "fs", map[string]any{"action": "read", "path": v}
	kernelview.CoverWindow(ctx, ret, w, v, w.BlockStart, len(parts), total)
	return ret, nil
}
