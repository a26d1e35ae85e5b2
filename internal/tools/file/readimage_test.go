package file

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// pngBytes is a file whose first bytes say PNG, n bytes long.
func pngBytes(n int) []byte {
	b := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{7}, max(n-8, 0))...)
	return b[:max(n, 8)]
}

// meter is a read budget for a test: it counts what the client charges
// and says what is left.
type meter struct {
	calls, bytes       atomic.Int64
	maxCalls, maxBytes int64
}

func (m *meter) ChargeCall(string) error             { m.calls.Add(1); return nil }
func (m *meter) ChargeBytes(_ string, n int64) error { m.bytes.Add(n); return nil }
func (m *meter) Left() (int64, int64) {
	return m.maxCalls - m.calls.Load(), m.maxBytes - m.bytes.Load()
}

// callRaw runs a call as the registry answers it (not through JSON), under
// the fixture's policy and, when m is set, metered by m.
func (s *sfix) callRaw(t *testing.T, m siyuan.ReadMeter, args map[string]any) (any, error) {
	t.Helper()
	raw, _ := json.Marshal(args)
	ctx := context.Background()
	if s.Policy != nil {
		ctx = tools.WithPolicy(ctx, s.Policy)
	}
	if m != nil {
		ctx = siyuan.WithReadMeter(ctx, m)
	}
	return s.R.Call(ctx, "file", raw)
}

func TestReadImage(t *testing.T) {
	s := newFixture(t)
	ctx := context.Background()
	png := pngBytes(300)
	img := s.upload(t, "shot one.png", png)
	jpeg := s.upload(t, "photo.jpg", append([]byte{0xff, 0xd8, 0xff, 0xe0}, "jfif"...))
	webp := s.upload(t, "w.webp", []byte("RIFF\x10\x00\x00\x00WEBPVP8 "))
	gif := s.upload(t, "g.gif", []byte("GIF89a\x01\x00"))
	svg := s.upload(t, "v.svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`))
	fake := s.upload(t, "fake.png", []byte("not an image at all"))
	unlinked := s.upload(t, "unlinked.png", pngBytes(40))
	for _, a := range []string{img, jpeg, webp, gif, svg, fake} {
		s.link(t, a)
	}
	nbs, err := s.C.ListNotebooks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var nbName string
	for _, n := range nbs {
		if n.ID == s.NB {
			nbName = n.Name
		}
	}

	for _, c := range []struct {
		name string
		args map[string]any
		mime string
		data []byte
	}{
		{"by id", map[string]any{"path": img, "id": s.Doc}, "image/png", png},
		{"by a block of the document", map[string]any{"path": img, "id": s.Blocks[0]}, "image/png", png},
		{"by documentPath", map[string]any{"path": img, "documentPath": "/" + nbName + "/Doc"}, "image/png", png},
		{"/assets spelling", map[string]any{"path": "/" + img, "id": s.Doc}, "image/png", png},
		{"data/assets spelling", map[string]any{"path": "/data/" + img + "?t=1#x", "id": s.Doc}, "image/png", png},
		{"percent-encoded as a link writes it", map[string]any{"path": strings.ReplaceAll(img, " ", "%20"), "id": s.Doc}, "image/png", png},
		{"jpeg", map[string]any{"path": jpeg, "id": s.Doc}, "image/jpeg", nil},
		{"webp", map[string]any{"path": webp, "id": s.Doc}, "image/webp", nil},
		{"gif", map[string]any{"path": gif, "id": s.Doc}, "image/gif", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			v, err := s.callRaw(t, nil, tooltest.CopyArgs(c.args, "action", "read_image"))
			if err != nil {
				t.Fatal(err)
			}
			im, ok := v.(*tools.Image)
			if !ok {
				t.Fatalf("answer %T, want *tools.Image", v)
			}
			if im.MimeType != c.mime || im.Meta["mimeType"] != c.mime || im.Meta["bytes"] != len(im.Data) || im.Meta["delivery"] != "mcp_image" {
				t.Fatalf("image %s: %v", im.MimeType, im.Meta)
			}
			if c.data != nil && (!bytes.Equal(im.Data, c.data) || im.Meta["sha256"] != sum(c.data) || im.Meta["path"] != img) {
				t.Fatalf("image bytes or metadata differ: %v", im.Meta)
			}
			// As JSON (a CLI's output, a task's record) it is its
			// metadata, never the bytes.
			if m := tooltest.AsJSON(t, v); m["data"] != nil || m["mimeType"] != c.mime {
				t.Fatalf("JSON form %v", m)
			}
		})
	}

	for _, c := range []struct {
		name string
		args map[string]any
		code failure.Code
		want string
	}{
		{"not linked by the document", map[string]any{"path": unlinked, "id": s.Doc}, failure.InvalidArguments, "shows no image"},
		{"svg", map[string]any{"path": svg, "id": s.Doc}, failure.InvalidArguments, "SVG is not read"},
		{"not an image", map[string]any{"path": fake, "id": s.Doc}, failure.InvalidArguments, "not a PNG"},
		{"dot dot", map[string]any{"path": "assets/../conf/conf.json", "id": s.Doc}, failure.InvalidArguments, ". or .."},
		{"encoded dot dot", map[string]any{"path": "assets/a%2F..%2F..%2Fconf.json", "id": s.Doc}, failure.InvalidArguments, ". or .."},
		{"outside assets", map[string]any{"path": "/data/" + s.NB + "/" + s.Doc + ".sy", "id": s.Doc}, failure.InvalidArguments, "must start with assets/"},
		{"bare name", map[string]any{"path": "x.png", "id": s.Doc}, failure.InvalidArguments, "must start with assets/"},
		{"absolute host path", map[string]any{"path": "/etc/passwd", "id": s.Doc}, failure.InvalidArguments, "must start with assets/"},
		{"windows path", map[string]any{"path": `C:\x\assets\a.png`, "id": s.Doc}, failure.InvalidArguments, "forward slashes"},
		{"file URL", map[string]any{"path": "file:///data/assets/a.png", "id": s.Doc}, failure.InvalidArguments, "not a URL"},
		{"http URL", map[string]any{"path": "https://example.com/assets/a.png", "id": s.Doc}, failure.InvalidArguments, "not a URL"},
		{"folder", map[string]any{"path": "assets/", "id": s.Doc}, failure.InvalidArguments, "not a folder"},
		{"no document", map[string]any{"path": img}, failure.InvalidArguments, "id (a document id) or documentPath"},
		{"both documents", map[string]any{"path": img, "id": s.Doc, "documentPath": "/" + nbName + "/Doc"}, failure.InvalidArguments, "not both"},
		{"no path", map[string]any{"id": s.Doc}, failure.InvalidArguments, "path"},
		{"unknown document", map[string]any{"path": img, "id": tooltest.NewID()}, failure.NotFound, ""},
		{"unknown document path", map[string]any{"path": img, "documentPath": "/" + nbName + "/Nope"}, failure.NotFound, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := s.WantErr(t, "file", tooltest.CopyArgs(c.args, "action", "read_image"), c.code)
			if !strings.Contains(e.Message, c.want) {
				t.Fatalf("message %q lacks %q", e.Message, c.want)
			}
		})
	}

	// The read budget: an image larger than what is left is refused
	// before it is read whole, and the meter is never driven past it.
	t.Run("budget", func(t *testing.T) {
		m := &meter{maxCalls: 128, maxBytes: 4096}
		big := s.upload(t, "big.png", pngBytes(64<<10))
		s.link(t, big)
		_, err := s.callRaw(t, m, map[string]any{"action": "read_image", "path": big, "id": s.Doc})
		var fe *failure.Error
		if !errors.As(err, &fe) || fe.Code != failure.ReadBudgetExceeded || !strings.Contains(fe.Message, big) {
			t.Fatalf("an image over the budget: %v", err)
		}
		if m.bytes.Load() > m.maxBytes {
			t.Fatalf("read %d bytes of a budget of %d", m.bytes.Load(), m.maxBytes)
		}
		// The same image within the budget is read.
		m = &meter{maxCalls: 128, maxBytes: 1 << 20}
		if v, err := s.callRaw(t, m, map[string]any{"action": "read_image", "path": big, "id": s.Doc}); err != nil || len(v.(*tools.Image).Data) != 64<<10 {
			t.Fatalf("an image within the budget: %v", err)
		}
	})

	// A hidden notebook's document shows nothing, by id or by path, and
	// an image it links is not read.
	t.Run("hidden notebook", func(t *testing.T) {
		defer func() { s.Policy = nil }()
		s.Policy = &tools.Policy{Default: tools.LevelDelete, Notebooks: map[string]tools.Level{s.NB: tools.LevelNone}, AllActions: true, Strict: true}
		s.WantMissing(t, "file", map[string]any{"action": "read_image", "path": img, "id": s.Doc}, map[string]string{s.Doc: tooltest.NewID()})
		s.WantErr(t, "file", map[string]any{"action": "read_image", "path": img, "documentPath": "/" + nbName + "/Doc"}, failure.NotFound)
	})
}

func TestImageMIME(t *testing.T) {
	for _, c := range []struct {
		data string
		want string
	}{
		{"\x89PNG\r\n\x1a\nrest", "image/png"},
		{"\xff\xd8\xff\xdb", "image/jpeg"},
		{"GIF87a", "image/gif"},
		{"GIF89a...", "image/gif"},
		{"RIFF\x00\x00\x00\x00WEBPVP8L", "image/webp"},
		{"RIFF\x00\x00\x00\x00WAVEfmt ", ""},
		{"<svg xmlns='http://www.w3.org/2000/svg'/>", ""},
		{"<?xml version='1.0'?><svg/>", ""},
		{"\x89PNG", ""},
		{"", ""},
		{"BM", ""},
	} {
		if got := imageMIME([]byte(c.data)); got != c.want {
			t.Errorf("imageMIME(%q) = %q, want %q", c.data, got, c.want)
		}
	}
}
