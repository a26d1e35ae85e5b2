package kernelview

import (
	"errors"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
)

// A panic reading one of several blocks, in the goroutine ReadEach runs it
// in, is the call's internal_error, not the end of the process.
func TestReadEachAnswersPanics(t *testing.T) {
	ids := []string{"20260101000000-aaaaaaa", "20260101000000-bbbbbbb", "20260101000000-ccccccc"}
	_, err := ReadEach(ids, func(id string) (int, error) {
		if id == ids[1] {
			panic("a bug reading " + id)
		}
		return 1, nil
	})
	var fe *failure.Error
	if !errors.As(err, &fe) || fe.Code != failure.Internal || failure.PanicOf(err) == nil {
		t.Fatalf("%v, want the panic as an internal_error", err)
	}
}
