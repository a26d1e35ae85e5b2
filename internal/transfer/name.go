package transfer

import (
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sisyphus-go/sisyphus/internal/failure"
)

// HeaderFileName carries the percent-encoded file name of a raw upload.
const HeaderFileName = "X-Sisyphus-File-Name"

// MaxNameBytes is the longest file name staging takes, in UTF-8 bytes (what
// common file systems allow for one name).
const MaxNameBytes = 255

// ParseFileName decodes the X-Sisyphus-File-Name header (percent-encoding,
// as encodeURIComponent or url.PathEscape writes it; "+" stays "+") and
// checks the name with CheckFileName.
func ParseFileName(header string) (string, error) {
	if strings.TrimSpace(header) == "" {
		return "", failure.New(failure.InvalidRequest, "the %s header is required: the percent-encoded file name", HeaderFileName)
	}
	name, err := url.PathUnescape(header)
	if err != nil {
		return "", failure.Wrap(failure.InvalidRequest, err, "the %s header is not valid percent-encoding", HeaderFileName)
	}
	return name, CheckFileName(name)
}

// CheckFileName refuses what cannot be one file's name: empty or blank,
// "." or "..", a path separator, a control character, invalid UTF-8, or
// more than MaxNameBytes bytes.
func CheckFileName(name string) error {
	bad := func(why string) error {
		return failure.New(failure.InvalidRequest, "the file name %s", why)
	}
	switch {
	case strings.TrimSpace(name) == "":
		return bad("is empty")
	case !utf8.ValidString(name):
		return bad("is not valid UTF-8")
	case len(name) > MaxNameBytes:
		return bad("is longer than 255 bytes")
	case name == "." || name == "..":
		return bad("must not be . or ..")
	case strings.ContainsAny(name, `/\`):
		return bad("must not contain a path separator (/ or \\): give the file's own name")
	case strings.ContainsFunc(name, unicode.IsControl):
		return bad("must not contain control characters")
	}
	return nil
}
