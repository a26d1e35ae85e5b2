package av

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// panicOn is a kernel transport that panics on path, as a bug in decoding
// the kernel's answer would, and passes the other requests on.
type panicOn string

func (p panicOn) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Path == string(p) {
		panic("a bug answering " + r.URL.Path)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// A panic in the read readStored runs beside its own (the blocks showing
// the database) is the call's internal_error, not the end of the process.
func TestReadStoredAnswersPanics(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"code":0,"msg":"","data":{"av":null}}`))
	}))
	t.Cleanup(srv.Close)
	kc, err := siyuan.New(siyuan.Config{BaseURL: srv.URL, Token: "t", ReadAttempts: 1,
		HTTPClient: &http.Client{Transport: panicOn("/api/av/getMirrorDatabaseBlocks")}})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = readStored(t.Context(), &tools.Env{Kernel: kc}, "20260101000000-avaaaaa")
	var fe *failure.Error
	if !errors.As(err, &fe) || fe.Code != failure.Internal || failure.PanicOf(err) == nil {
		t.Fatalf("%v, want the panic as an internal_error", err)
	}
}
