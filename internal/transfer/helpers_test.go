package transfer

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
)

// serverAuthority is an Authority over a test server: what Delegator.Do
// does, less the pins and the token.
type serverAuthority struct {
	url  string
	hits map[string]*atomic.Int64
}

func (a *serverAuthority) Do(req *http.Request) (*http.Response, error) {
	u, err := url.Parse(a.url + req.URL.RequestURI())
	if err != nil {
		return nil, err
	}
	out := req.Clone(req.Context())
	out.URL, out.RequestURI = u, ""
	if c := a.hits[req.URL.Path]; c != nil {
		c.Add(1)
	}
	return http.DefaultClient.Do(out)
}

// stagingServer serves a store's routes, each wrapped by wrap (nil: as is).
func stagingServer(t testing.TB, s *Store, wrap func(path string, h http.HandlerFunc) http.HandlerFunc) *serverAuthority {
	t.Helper()
	mux := http.NewServeMux()
	a := &serverAuthority{hits: map[string]*atomic.Int64{UploadPath: {}, LookupPath: {}}}
	for path, h := range map[string]http.HandlerFunc{UploadPath: s.ServeUpload, LookupPath: s.ServeLookup} {
		if wrap != nil {
			h = wrap(path, h)
		}
		mux.Handle(path, h)
	}
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	a.url = hs.URL
	return a
}
