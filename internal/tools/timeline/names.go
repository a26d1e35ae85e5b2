package timeline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"
)

// The naming conventions are shared with upstream Sisyphus's timeline, so
// that a checkpoint made by either is listed and usable by the other: a
// node is a tag on a repository snapshot, named
// sisyphustimeline_<documentId>_<label> (sisyphustimeline_global_<label>
// for a workspace node), and a document's nodes are also indexed on the
// document, in the attribute custom-sisyphus-timeline, as a JSON array of
// {name, created, snapshotId, tag, scope}.
const (
	tagPrefix    = "sisyphustimeline"
	globalPrefix = tagPrefix + "_global_"
	indexAttr    = "custom-sisyphus-timeline"
	// labelUnits is the most UTF-16 code units a label keeps (upstream
	// cuts a JavaScript string).
	labelUnits = 48
)

// docTag is the part of a document tag after the prefix: _<id>_<label>.
var docTag = regexp.MustCompile(`^_(\d{14}-[0-9a-z]{7})_(.*)$`)

// isTimelineTag reports whether a repository tag is a timeline node's.
func isTimelineTag(tag string) bool { return strings.HasPrefix(tag, tagPrefix) }

// isGlobalTag reports whether a tag is a workspace node's.
func isGlobalTag(tag string) bool { return strings.HasPrefix(tag, globalPrefix) }

// tagDocument is the document a document node's tag names ("" for a
// global tag, an older tag without a document, or another tag).
func tagDocument(tag string) string {
	if !isTimelineTag(tag) || isGlobalTag(tag) {
		return ""
	}
	if m := docTag.FindStringSubmatch(strings.TrimPrefix(tag, tagPrefix)); m != nil {
		return m[1]
	}
	return ""
}

// tagLabel is the label part of a timeline tag (the tag itself for
// another tag).
func tagLabel(tag string) string {
	switch {
	case !isTimelineTag(tag):
		return tag
	case isGlobalTag(tag):
		return strings.TrimPrefix(tag, globalPrefix)
	}
	rest := strings.TrimPrefix(tag, tagPrefix)
	if m := docTag.FindStringSubmatch(rest); m != nil {
		return m[2]
	}
	return rest
}

// sanitizeLabel keeps the letters and digits of a node's name, at most
// labelUnits UTF-16 units of them: SiYuan refuses a tag that is not a
// valid file name, and the tag must read back as the same name.
func sanitizeLabel(name string) string {
	var b strings.Builder
	units := 0
	for _, r := range strings.TrimSpace(name) {
		if !unicode.IsLetter(r) && !unicode.IsNumber(r) {
			continue
		}
		n := 1
		if utf16.RuneLen(r) == 2 {
			n = 2
		}
		if units+n > labelUnits {
			// JavaScript's slice would keep half of a pair here; a
			// lone surrogate is no text, so the label stops before it.
			break
		}
		units += n
		b.WriteRune(r)
	}
	if b.Len() == 0 {
		return "snapshot"
	}
	return b.String()
}

// newTag is the tag of a new node: the base name, or, when a tag of that
// name exists, the base followed by the UTC time (and _2, _3… if that is
// taken too).
func newTag(name, documentID string, existing map[string]bool, now time.Time) string {
	base := globalPrefix + sanitizeLabel(name)
	if documentID != "" {
		base = tagPrefix + "_" + documentID + "_" + sanitizeLabel(name)
	}
	if !existing[base] {
		return base
	}
	cand := base + now.UTC().Format("20060102150405")
	for n := 2; existing[cand]; n++ {
		cand = base + now.UTC().Format("20060102150405") + "_" + strconv.Itoa(n)
	}
	return cand
}

// nodeRecord is one entry of a document's index, in upstream's field
// order. Raw keeps the entry as it was read, so that rewriting the index
// keeps fields this project does not know.
type nodeRecord struct {
	Name       string          `json:"name"`
	Created    int64           `json:"created"`
	SnapshotID string          `json:"snapshotId"`
	Tag        string          `json:"tag,omitempty"`
	Scope      string          `json:"scope"`
	Source     string          `json:"source,omitempty"`
	Raw        json.RawMessage `json:"-"`
}

// parseIndex reads a document's index. An empty value is an empty index;
// a value that is not an array of node records is an error (strict) or
// read as empty (lenient: a listing shows what the tags hold).
func parseIndex(v string, strict bool) ([]nodeRecord, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal([]byte(v), &raws); err != nil {
		if strict {
			return nil, fmt.Errorf("not a JSON array: %w", err)
		}
		return nil, nil
	}
	out := make([]nodeRecord, 0, len(raws))
	for i, raw := range raws {
		var probe map[string]any
		if err := json.Unmarshal(raw, &probe); err != nil || probe == nil {
			if strict {
				return nil, fmt.Errorf("entry %d is not an object", i)
			}
			continue
		}
		name, okName := probe["name"].(string)
		snap, okSnap := probe["snapshotId"].(string)
		scope, hasScope := probe["scope"]
		okScope := !hasScope || scope == "document" || scope == "global"
		if !okName || !okSnap || !okScope {
			if strict {
				return nil, fmt.Errorf("entry %d is not a node record {name, snapshotId, scope}", i)
			}
			continue
		}
		r := nodeRecord{Name: name, SnapshotID: snap, Scope: "document", Raw: raw}
		if c, ok := probe["created"].(float64); ok {
			r.Created = int64(c)
		}
		if t, ok := probe["tag"].(string); ok {
			r.Tag = t
		}
		if scope == "global" {
			r.Scope = "global"
		}
		if s, _ := probe["source"].(string); s == "legacy" {
			r.Source = s
		}
		out = append(out, r)
	}
	return out, nil
}

// formatIndex writes an index as upstream does (document entries only),
// each entry as it was read when it was read.
func formatIndex(nodes []nodeRecord) (string, error) {
	var buf bytes.Buffer
	buf.WriteByte('[')
	n := 0
	for _, r := range nodes {
		if r.Scope != "document" {
			continue
		}
		raw := r.Raw
		if raw == nil {
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false) // as JSON.stringify
			if err := enc.Encode(r); err != nil {
				return "", err
			}
			raw = bytes.TrimRight(b.Bytes(), "\n")
		}
		if n > 0 {
			buf.WriteByte(',')
		}
		buf.Write(raw)
		n++
	}
	buf.WriteByte(']')
	return buf.String(), nil
}
