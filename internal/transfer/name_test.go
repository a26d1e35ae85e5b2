package transfer

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sisyphus-go/sisyphus/internal/failure"
)

func TestParseFileName(t *testing.T) {
	for _, tt := range []struct {
		header, want string
		ok           bool
	}{
		{"photo.png", "photo.png", true},
		{"my%20photo.png", "my photo.png", true},
		{"a+b.png", "a+b.png", true}, // percent-encoding, not form encoding
		{"%E5%9B%BE%E7%89%87.png", "图片.png", true},
		{"图片.png", "图片.png", true}, // raw UTF-8 is taken as it is
		{"%2e%2e", "", false},
		{".", "", false},
		{"", "", false},
		{"   ", "", false},
		{"%20", "", false},
		{"a%2Fb.png", "", false},
		{"a%5Cb.png", "", false},
		{"../x", "", false},
		{"a%00b", "", false},
		{"a%0Ab", "", false},
		{"a%7Fb", "", false},
		{"a%C2%85b", "", false}, // U+0085, a C1 control
		{"%FF.png", "", false},  // not UTF-8
		{"bad%zz", "", false},
		{"bad%", "", false},
		{strings.Repeat("a", 255), strings.Repeat("a", 255), true},
		{strings.Repeat("a", 256), "", false},
		{strings.Repeat("%E5%9B%BE", 85), strings.Repeat("图", 85), true}, // 255 bytes
		{strings.Repeat("%E5%9B%BE", 86), "", false},
	} {
		got, err := ParseFileName(tt.header)
		if (err == nil) != tt.ok || (tt.ok && got != tt.want) {
			t.Errorf("ParseFileName(%q) = %q, %v; want %q ok=%v", tt.header, got, err, tt.want, tt.ok)
		}
		var fe *failure.Error
		if err != nil && (!errors.As(err, &fe) || fe.Code != failure.InvalidRequest) {
			t.Errorf("ParseFileName(%q): %v is not invalid_request", tt.header, err)
		}
	}
}

// FuzzParseFileName: whatever the header, a name that passes is one plain
// file name, and the percent-encoding the stager sends decodes to itself.
func FuzzParseFileName(f *testing.F) {
	for _, s := range []string{"a.png", "my%20photo.png", "%E5%9B%BE.png", "a%2Fb", "%", "%zz", "..", "\x00", strings.Repeat("x", 300)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		name, err := ParseFileName(header)
		if err != nil {
			return
		}
		if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\\x00\n\r") || !utf8.ValidString(name) || len(name) > MaxNameBytes {
			t.Fatalf("ParseFileName(%q) passed %q", header, name)
		}
		again, err := ParseFileName(url.PathEscape(name))
		if err != nil || again != name {
			t.Fatalf("round trip of %q: %q, %v", name, again, err)
		}
	})
}
