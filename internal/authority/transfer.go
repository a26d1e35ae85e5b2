package authority

import (
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/netguard"
	"github.com/sisyphus-go/sisyphus/internal/transfer"
)

// Do sends req to the authority this front delegates to, for file transfer
// (transfer.Authority): req.URL holds only a path ("/transfer/upload"); Do
// puts the pinned authority's base URL in front of it and the bearer token,
// instance and workspace pins on it, as Delegate does. An authority that
// cannot be reached or refuses the token answers
// write_coordinator_unavailable, another instance write_coordinator_changed;
// any other answer is returned for the caller to read and close. Nothing is
// retried: a transfer is never restarted behind the caller's back.
func (d *Delegator) Do(req *http.Request) (*http.Response, error) {
	t, err := d.resolve()
	if err != nil {
		d.ev.unavailable.Add(1)
		return nil, err
	}
	u, err := url.Parse(t.base + req.URL.RequestURI())
	if err != nil {
		return nil, unavailable("bad authority URL %q", t.base)
	}
	out := req.Clone(req.Context())
	out.URL, out.Host, out.RequestURI = u, "", ""
	d.headers(out, t)
	resp, err := d.hc.Do(out)
	if err != nil {
		if cerr := req.Context().Err(); cerr != nil {
			return nil, fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, cerr)
		}
		return nil, d.afterConnectFailure(t, err)
	}
	if err := d.checkIdentity(t, resp); err != nil {
		resp.Body.Close()
		return nil, err
	}
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		resp.Body.Close()
		d.ev.unavailable.Add(1)
		return nil, d.refusedToken(t.base, resp.StatusCode)
	case http.StatusConflict:
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		return nil, d.conflict(t, data)
	}
	return resp, nil
}

// stagingRoutes serves /transfer/upload and /transfer/lookup from the
// authority's store, behind the bearer token (the admin token is refused
// there as on every agent's route; identity has already checked
// the Origin, the Host and the pins). A front has no store: it answers 404
// not_authority, because the staged bytes must live where upload_asset
// runs, and a front's own callers stage through its Stager instead.
func (rt *routes) stagingRoutes(mux *http.ServeMux, prefixes []string) {
	serve := func(h func(*transfer.Store, http.ResponseWriter, *http.Request)) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if _, ok := rt.auth(r); !ok {
				unauthorized(w)
				return
			}
			if rt.cfg.Staging == nil {
				errorReply(w, http.StatusNotFound, failure.NotAuthority, "this server is a front: stage files at its write authority, which keeps the bytes upload_asset writes")
				return
			}
			if rt.cfg.UploadBodyTimeout > 0 {
				// A file of up to 10 MiB may take longer than another
				// request's body; the guard still cuts one that stalls or
				// trickles, which frees its staging slot.
				netguard.SetBodyTimeout(r, rt.cfg.UploadBodyTimeout)
			}
			h(rt.cfg.Staging, w, r)
		}
	}
	for _, prefix := range prefixes {
		mux.Handle(prefix+transfer.UploadPath, rt.agentsOnly(serve((*transfer.Store).ServeUpload)))
		mux.Handle(prefix+transfer.LookupPath, rt.agentsOnly(serve((*transfer.Store).ServeLookup)))
	}
}
