package siyuan

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
)

// panickyReader is an upload's body whose Read panics, as a bug in the
// code producing it would.
type panickyReader struct{}

func (panickyReader) Read([]byte) (int, error) { panic("a bug producing the upload") }

// A panic while the multipart body is produced (in the goroutine writing
// it beside the request) fails that request with an internal_error; the
// process goes on.
func TestMultipartProducerPanicFailsTheRequest(t *testing.T) {
	fk := newFakeKernel(t, func(w http.ResponseWriter, r *http.Request, s seen) { replyJSON(w, 0, "", nil) })
	err := newTestClient(t, fk.URL).PutFile(context.Background(), PutFileRequest{Path: "/data/a", Body: panickyReader{}})
	var fe *failure.Error
	if !errors.As(err, &fe) || fe.Code != failure.Internal || failure.PanicOf(err) == nil {
		t.Fatalf("%v, want the panic as an internal_error", err)
	}
}
