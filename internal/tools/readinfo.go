package tools

import (
	"context"
	"fmt"
)

// Coverage says how much of what a read was asked for its answer holds.
const (
	CoverageComplete = "complete"
	CoveragePartial  = "partial"
	CoverageUnknown  = "unknown"
)

// ReadInfo describes what a read's answer covers: the scope it was asked
// for, whether all of it is in the answer, in what form, and what was left
// out. An agent that sees coverage other than complete knows the answer is
// not the whole thing and, from limitations, why.
type ReadInfo struct {
	Scope          string   `json:"scope"`
	Coverage       string   `json:"coverage"`
	Representation string   `json:"representation,omitempty"`
	Limitations    []string `json:"limitations,omitempty"`
}

// NextStep is one exact read-only call that continues or narrows a read:
// the next page or window with its cursor argument, or a tighter query.
type NextStep struct {
	Purpose   string         `json:"purpose"`
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments"`
}

// Cover completes a read's answer with readInfo and nextSteps when the
// answer does not hold everything its scope asked for (a page, a window, a
// row limit or hidden notebooks left something out: info.Limitations says
// what). A complete answer is left as it is, so the common answer stays
// small; coverage is then complete by construction, and an agent reads
// the absence of readInfo as "all of it". The configuration's full form
// (debug.slimResponses false, [Policy.FullReadInfo]) adds readInfo to
// complete answers too; reads call Cover whether or not they are complete.
//
// Steps that name a tool or action the call's configuration disables are
// dropped: a next step is always a call the agent may make. Every step
// must be a read; callers pass only reads.
func Cover(ctx context.Context, ret map[string]any, info ReadInfo, steps ...NextStep) {
	if info.Coverage == "" {
		info.Coverage = CoverageComplete
		if len(info.Limitations) > 0 {
			info.Coverage = CoveragePartial
		}
	}
	if p := PolicyFrom(ctx); info.Coverage == CoverageComplete && (p == nil || !p.FullReadInfo) {
		return
	}
	ret["readInfo"] = info
	out := make([]NextStep, 0, len(steps))
	for _, s := range steps {
		if stepAllowed(ctx, s) {
			out = append(out, s)
		}
	}
	if len(out) > 0 {
		ret["nextSteps"] = out
	}
}

// stepAllowed reports whether the call's policy enables the step's tool
// and action (the action is the step's "action" argument).
func stepAllowed(ctx context.Context, s NextStep) bool {
	p := PolicyFrom(ctx)
	if p == nil {
		return true
	}
	action, _ := s.Arguments["action"].(string)
	return p.NamedOn(s.Tool, action)
}

// NamedOn reports whether the configuration enables the action of the
// tool, both given by name. It is for follow-up calls named in an answer,
// which are reads: reads are on unless switched off, so an action the
// configuration does not mention is on.
func (p *Policy) NamedOn(tool, action string) bool {
	if p.AllActions {
		return true
	}
	sw := p.Tools[tool]
	if sw.Enabled != nil && !*sw.Enabled {
		return false
	}
	if v, ok := sw.Actions[action]; ok {
		return v
	}
	return true
}

// WindowLimit says, for a limitation, that n items of total were given
// from the 0-based index from.
func WindowLimit(what string, from, n, total int) string {
	if n == 0 {
		return fmt.Sprintf("no %s returned from %d; %d in all", what, from, total)
	}
	return fmt.Sprintf("only %s %d–%d of %d were returned", what, from+1, from+n, total)
}
