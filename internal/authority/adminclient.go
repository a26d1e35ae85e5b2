package authority

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/settings"
)

// AdminClient is the person's client of the authority's /config: the one
// `sisyphus config` uses. It finds and pins the authority as a front does
// (its URL, or the state dir's discovery record), but sends the admin
// token, never the agents' bearer token; no front, stdio or tool holds
// one.
type AdminClient struct {
	d     *Delegator
	token string
	// from names where the token was read, for the error that refuses it.
	from string
}

// NewAdminClient returns the client of the authority cfg finds (cfg.Token
// is not used), sending the admin token token, read from the file from.
func NewAdminClient(cfg DelegatorConfig, token, from string) *AdminClient {
	cfg.Token = ""
	return &AdminClient{d: NewDelegator(cfg), token: token, from: from}
}

// Config asks the authority for its configuration view (ch nil) or to make
// one change.
func (a *AdminClient) Config(ctx context.Context, ch *settings.Change) (ConfigView, error) {
	d := a.d
	t, err := d.resolve()
	if err != nil {
		return ConfigView{}, err
	}
	method, body := http.MethodGet, []byte(nil)
	if ch != nil {
		method = http.MethodPost
		body, _ = json.Marshal(ch)
	}
	req, err := http.NewRequestWithContext(ctx, method, t.base+"/config", bytes.NewReader(body))
	if err != nil {
		return ConfigView{}, unavailable("bad authority URL %q", t.base)
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	d.pins(req, t)
	if ch != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := d.hc.Do(req)
	if err != nil {
		if ch != nil {
			// A change is a mutation: a reply lost after sending is unknown.
			return ConfigView{}, failure.Wrap(failure.OutcomeUnknown, err, "the authority at %s did not answer the change; read the configuration (sisyphus config show) to learn whether it was made", t.base).Attempted(true)
		}
		return ConfigView{}, d.afterConnectFailure(t, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err := d.checkIdentity(t, resp); err != nil {
		return ConfigView{}, err
	}
	outcome := "" // what a refusal means for the change asked for
	if ch != nil {
		outcome = "; nothing was changed"
	}
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusUnauthorized:
		e := failure.New(failure.Unauthorized, "the write authority at %s refused the admin token read from %s (HTTP 401)%s", t.base, a.from, outcome)
		e.Action = "give sisyphus config the admin token of that authority: its --state-dir, or --admin-token-file naming the admin-token file of the state dir it runs on"
		return ConfigView{}, e
	case http.StatusForbidden:
		if fe, ok := failure.Parse(data); ok && fe.Code == failure.Forbidden {
			e := failure.New(failure.Forbidden, "the write authority at %s took the token read from %s for the agents' bearer token (HTTP 403)%s", t.base, a.from, outcome)
			e.Action = "give sisyphus config the admin token's file (admin-token in the authority's state dir), not the bearer token's"
			return ConfigView{}, e
		}
		fallthrough
	default:
		if fe, ok := failure.Parse(data); ok {
			return ConfigView{}, fe
		}
		return ConfigView{}, unavailable("the authority at %s answered HTTP %d", t.base, resp.StatusCode)
	}
	var v ConfigView
	if err := json.Unmarshal(data, &v); err != nil {
		return ConfigView{}, fmt.Errorf("the authority's configuration view: %w", err)
	}
	return v, nil
}
