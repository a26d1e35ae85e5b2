// Package feedback is the feedback tool: an agent's report of what worked
// badly or could be better, posted once to the endpoint the person
// configured (sisyphus config feedback URL). Only the report's own fields
// are sent: no configuration, environment, token or workspace content.
package feedback

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// Timeout bounds one submission, connection to answer. The submission runs
// in the write lane, so every write queued behind it waits this long at
// most: a slow or silent endpoint costs the others five seconds, and the
// agent an outcome_unknown (the report is never sent twice).
const Timeout = 5 * time.Second

// Report is what is posted, as JSON: the business arguments, nothing
// more. Its fields declare the arguments and their limits (upstream's).
type Report struct {
	Description string `json:"description" arg:"description" help:"the feedback, ideally as an issue body: ## Summary, ## What happened, ## Expected behavior, ## Steps or context, ## Impact, ## Suggested fix" required:"" maxLen:"4000"`
	Impact      string `json:"impact,omitempty" arg:"impact" help:"one or two sentences on the impact (the workflow affected, the risk, the confusion)" maxLen:"1000"`
	Suggestion  string `json:"suggestion,omitempty" arg:"suggestion" help:"one direct improvement, without repeating the description" maxLen:"1000"`
	Agent       string `json:"agent,omitempty" arg:"agent" help:"the agent product and model, e.g. Claude Desktop / Claude Sonnet 4.5" maxLen:"200"`
	Source      string `json:"source,omitempty" arg:"source" help:"a short label of where the feedback comes from" maxLen:"100"`
}

// Tool returns the feedback tool.
func Tool() *tools.Tool {
	return &tools.Tool{
		Name:  "feedback",
		Title: "Feedback",
		Description: "Send plain-text, GitHub-issue-style feedback about this server (bugs, confusing behaviour, rough workflows) " +
			"to the endpoint the person configured; an external effect, sent once.",
		Actions: []*tools.Action{submit.Action()},
	}
}

// trim trims the report's text; a description of spaces is none.
func (r *Report) trim() error {
	for _, f := range []*string{&r.Description, &r.Impact, &r.Suggestion, &r.Agent, &r.Source} {
		*f = strings.TrimSpace(*f)
	}
	if r.Description == "" {
		return failure.Invalid("argument %q must not be empty", "description")
	}
	return nil
}

var submit = tools.Write[Report, struct{}]{
	Name:    "submit",
	Summary: "post feedback once to the configured endpoint (an external effect: no preflight, no strict guarantee); nothing is sent when none is configured",
	Example: map[string]any{"description": "## Summary\nfs.ls on a notebook with 5,000 documents took 40 s.\n\n## Expected behavior\nA page of results within a second.",
		"impact": "Browsing large notebooks is impractical.", "agent": "Claude Desktop / Claude Sonnet 4.5"},
	Policy:   strict.WritePolicy{Class: strict.External},
	Timeout:  Timeout,
	Scope:    tools.Scope[Report]{None: true},
	Validate: (*Report).trim,
	Execute: func(ctx context.Context, env *tools.Env, r Report, _ struct{}) (tools.Payload, error) {
		endpoint := ""
		if p := tools.PolicyFrom(ctx); p != nil {
			endpoint = p.FeedbackURL
		}
		if endpoint == "" {
			e := failure.New(failure.NotConfigured, "no feedback endpoint is configured, so nothing was sent")
			e.Action = "ask the person to set one with: sisyphus config feedback <http or https URL>; until then, tell them the feedback directly"
			return nil, strict.Reject(e)
		}
		status, err := Post(ctx, endpoint, r)
		if err != nil {
			return nil, err
		}
		return tools.Payload{"submitted": true, "status": status, "fields": r.sent()}, nil
	},
}

// sent lists the fields the report carried.
func (r Report) sent() []string {
	out := []string{"description"}
	for _, f := range []struct{ n, v string }{{"impact", r.Impact}, {"suggestion", r.Suggestion}, {"agent", r.Agent}, {"source", r.Source}} {
		if f.v != "" {
			out = append(out, f.n)
		}
	}
	return out
}

// Post sends the report once as JSON and returns the HTTP status. A
// connection that never opened, or a 4xx answer, is a refusal (nothing
// was taken); a failure after the request went out, or a 5xx, leaves the
// outcome unknown. Redirects are not followed.
func Post(ctx context.Context, endpoint string, r Report) (int, error) {
	body, err := json.Marshal(r)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return 0, strict.Reject(failure.Invalid("the configured feedback endpoint is not a usable URL; nothing was sent"))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "sisyphus-feedback")
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := hc.Do(req)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			return 0, strict.Reject(failure.Wrap(failure.Rejected, err, "the feedback endpoint could not be reached; nothing was sent"))
		}
		return 0, failure.Wrap(failure.OutcomeUnknown, err, "the feedback was sent but no answer came back (%s); it will not be sent again", reason(err)).Attempted(true)
	}
	defer res.Body.Close()
	io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	switch {
	case res.StatusCode >= 200 && res.StatusCode < 300:
		return res.StatusCode, nil
	case res.StatusCode >= 500:
		return 0, failure.New(failure.OutcomeUnknown, "the feedback endpoint answered HTTP %d: it may or may not have kept the feedback; it will not be sent again", res.StatusCode).Attempted(true)
	}
	return 0, strict.Reject(failure.New(failure.Rejected, "the feedback endpoint refused the feedback with HTTP %d", res.StatusCode))
}

func reason(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("no answer within %s", Timeout)
	}
	return "the connection broke"
}
