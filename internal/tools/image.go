package tools

import (
	"context"
	"encoding/json"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// Image is a read's answer that carries an image for the model to look at
// (file.read_image): the MCP layer answers it as its metadata, as text and
// structuredContent like any other answer, followed by one image content
// block of Data. Encoded as JSON (a task's record, a CLI's output, a
// preflight's answer) it is its metadata only: the bytes reach a model
// only as the image block.
type Image struct {
	// Meta is the answer's object: what the image is and where it came
	// from.
	Meta map[string]any
	// Data are the image's bytes, MimeType their type (image/png, ...).
	Data     []byte
	MimeType string
}

// MarshalJSON encodes the metadata.
func (i *Image) MarshalJSON() ([]byte, error) { return json.Marshal(i.Meta) }

// readLeft is the optional side of a read meter that says what the read
// may still use (admission's read budget has it).
type readLeft interface {
	Left() (calls, bytes int64)
}

// ReadLeft is what the call's read budget still allows: kernel calls and
// bytes of kernel replies. ok is false when the call is not metered (a
// test, a process without admission): the caller then bounds itself.
// A read that must stop before its budget is spent (a paginated export
// that gives a cursor instead of failing) asks it between kernel calls.
func ReadLeft(ctx context.Context) (calls, bytes int64, ok bool) {
	m, ok := siyuan.ReadMeterFrom(ctx).(readLeft)
	if !ok {
		return 0, 0, false
	}
	calls, bytes = m.Left()
	return calls, bytes, true
}
