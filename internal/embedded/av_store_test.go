package embedded

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// spec5 is a database file in SiYuan 3.7.3's own layout and encoding (a
// bound and a detached row, a select, a number, a relation, a rollup and a
// template key), written by hand after the files the real kernel writes.
func spec5(t testing.TB) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "av", "spec5.json"))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSpace(data)
}

// TestAVFileRoundTrip: a file read and written again is byte for byte the
// kernel's: the wire types have its fields, tags and order.
func TestAVFileRoundTrip(t *testing.T) {
	in := spec5(t)
	av, err := parseAV(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := encodeAV(av)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, in) {
		t.Fatalf("re-encoded file differs:\n got %s\nwant %s", out, in)
	}
}

func TestParseAV(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		err      error
		check    func(t *testing.T, av *wire.AttributeView)
	}{
		{name: "spec too new", in: `{"spec":6,"id":"20260101120000-avaaaaa"}`, err: errAVSpecTooNew},
		{name: "not JSON", in: `{"spec":`},
		{name: "wrong type", in: `{"spec":"5"}`},
		{name: "null keys, values and views dropped", in: `{"spec":5,"id":"20260101120000-avaaaaa","keyValues":[null,{"key":null},{"key":{"id":"k","type":"text"},"values":[null,{"id":"v"}]}],"views":[null,{"id":"v1","type":"table","table":{"columns":[null,{"id":"k"}]},"filters":[null],"sorts":[null]}]}`,
			check: func(t *testing.T, av *wire.AttributeView) {
				if len(av.KeyValues) != 1 || len(av.KeyValues[0].Values) != 1 || len(av.Views) != 1 ||
					len(av.Views[0].Table.Columns) != 1 || len(av.Views[0].Filters) != 0 || len(av.Views[0].Sorts) != 0 {
					t.Fatalf("parsed %+v", av)
				}
			}},
		{name: "unknown layouts kept raw", in: `{"spec":5,"id":"20260101120000-avaaaaa","views":[{"id":"v","type":"gallery","gallery":{"cardFields":[{"id":"k"}],"x":1}}]}`,
			check: func(t *testing.T, av *wire.AttributeView) {
				if string(av.Views[0].Gallery) != `{"cardFields":[{"id":"k"}],"x":1}` {
					t.Fatalf("gallery = %s", av.Views[0].Gallery)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			av, err := parseAV([]byte(tc.in))
			if tc.check == nil {
				if err == nil || tc.err != nil && !errors.Is(err, tc.err) {
					t.Fatalf("parseAV(%s) = %v, want error %v", tc.in, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, av)
		})
	}
}

// TestEncodeAV: SaveAttributeView's normalisation.
func TestEncodeAV(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"duplicate rows of an item dropped, first kept",
			`{"spec":5,"id":"20260101120000-avaaaaa","keyValues":[{"key":{"id":"k","type":"block"},"values":[{"id":"a","blockID":"i"},{"id":"b","blockID":"i"},{"id":"c","blockID":"j"}]}],"views":[]}`,
			`"values":[{"id":"a","blockID":"i"},{"id":"c","blockID":"j"}]`},
		{"item order without duplicates, page size at least 1",
			`{"spec":5,"id":"20260101120000-avaaaaa","views":[{"id":"v","type":"table","itemIds":["a","b","a"],"pageSize":0}]}`,
			`"pageSize":50,"type":"table","itemIds":["a","b"]`},
		{"spec 4 filters wrapped in an and group",
			`{"spec":4,"id":"20260101120000-avaaaaa","views":[{"id":"v","type":"table","filters":[{"column":"k","operator":"=","value":null}]}]}`,
			`"spec":5,`},
		{"spec 4 filters wrapped in an and group (filters)",
			`{"spec":4,"id":"20260101120000-avaaaaa","views":[{"id":"v","type":"table","filters":[{"column":"k","operator":"=","value":null}]}]}`,
			`"filters":[{"column":"","operator":"","value":null,"combination":"and","filters":[{"column":"k","operator":"=","value":null}]}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			av, err := parseAV([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			out, err := encodeAV(av)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(out), tc.want) {
				t.Fatalf("encoded %s\nwant it to contain %s", out, tc.want)
			}
		})
	}
	if _, err := encodeAV(&wire.AttributeView{ID: "bad"}); !errors.Is(err, errAVInvalidID) {
		t.Fatalf("encode with a bad id: %v", err)
	}
}

// TestSaveAVSkipsSameBytes: saving what the file holds does not write it.
func TestSaveAVSkipsSameBytes(t *testing.T) {
	k := &Kernel{dataDir: t.TempDir()}
	av, err := parseAV(spec5(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := k.saveAV(av); err != nil {
		t.Fatal(err)
	}
	p := k.avPath(av.ID)
	before, _ := os.Stat(p)
	if err := os.Chmod(p, 0o444); err != nil {
		t.Fatal(err)
	}
	if err := k.saveAV(av); err != nil {
		t.Fatalf("saving the same bytes wrote the file: %v", err)
	}
	after, _ := os.Stat(p)
	if !after.ModTime().Equal(before.ModTime()) {
		t.Fatal("the file was rewritten")
	}
	if _, err := k.readAV("20200101000000-nothere"); !errors.Is(err, errAVViewNotFound) {
		t.Fatalf("missing file: %v", err)
	}
	if _, err := k.readAV("nope"); !errors.Is(err, errAVInvalidID) {
		t.Fatalf("malformed id: %v", err)
	}
}

// FuzzParseAV: any file content is parsed or refused without a panic, and
// a parsed database encodes to a file that parses to the same database.
func FuzzParseAV(f *testing.F) {
	f.Add(spec5(f))
	for _, s := range []string{`{}`, `null`, `{"spec":5,"id":"20260101120000-avaaaaa","keyValues":[{"key":{"id":"k","type":"block"},"values":[{"blockID":"i","block":null}]}]}`,
		`{"views":[{"type":"table","table":null,"filters":[{"filters":[{"filters":[null]}]}]}]}`, `[1,2]`, `{"spec":99}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		av, err := parseAV(data)
		if err != nil {
			return
		}
		av.ID = "20260101120000-avaaaaa"
		out, err := encodeAV(av)
		if err != nil {
			t.Fatalf("encode a parsed database: %v", err)
		}
		again, err := parseAV(out)
		if err != nil {
			t.Fatalf("re-parse %s: %v", out, err)
		}
		out2, _ := encodeAV(again)
		if !bytes.Equal(out, out2) {
			t.Fatalf("not stable:\n%s\n%s", out, out2)
		}
		var m any
		if json.Unmarshal(out, &m) != nil {
			t.Fatalf("invalid JSON written: %s", out)
		}
	})
}
