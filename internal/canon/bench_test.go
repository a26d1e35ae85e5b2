package canon

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

var (
	english = strings.Fields(`the agent reads a block and writes it back only when nothing changed since
		preflight lease ledger digest notebook document heading paragraph list item table code quote
		sisyphus pushes the stone uphill every morning and reads the state again before each write`)
	chinese = []string{"思源笔记", "块", "文档", "笔记本", "引用", "标签", "数据库", "属性", "内容", "同步",
		"写入", "预检", "租约", "哈希", "一致性", "重试"}
	inline = []string{"**bold**", "*em*", "`code`", "[link](https://example.com/a?b=c)", "((20260812120000-abcdefg \"ref\"))",
		"#tag#", "==mark==", "~~del~~", "\"quoted\"", "C:\\path\\file", "tab\there", "😀"}
)

// documentValue builds a deterministic SiYuan-like document tree (blocks with
// ids, types, attributes, kramdown and Markdown text in English and Chinese,
// nested lists) whose JSON is about size bytes.
func documentValue(size int) map[string]any {
	r := rand.New(rand.NewPCG(42, 7))
	seq := 0
	id := func() string {
		seq++
		return fmt.Sprintf("20260812%06d-%07x", seq%1000000, r.Uint32()&0xfffffff)
	}
	text := func() string {
		var sb strings.Builder
		n := 10 + r.IntN(120)
		zh := r.IntN(3) == 0
		for i := 0; i < n; i++ {
			switch {
			case r.IntN(12) == 0:
				sb.WriteString(inline[r.IntN(len(inline))])
			case zh:
				sb.WriteString(chinese[r.IntN(len(chinese))])
			default:
				sb.WriteString(english[r.IntN(len(english))])
			}
			if r.IntN(25) == 0 {
				sb.WriteByte('\n')
			} else if !zh {
				sb.WriteByte(' ')
			}
		}
		return sb.String()
	}
	rootID := id()
	used := 0
	var block func(parent string, depth int) map[string]any
	block = func(parent string, depth int) map[string]any {
		bid := id()
		md := text()
		types := []string{"p", "p", "p", "h", "l", "c", "t", "b"}
		typ := types[r.IntN(len(types))]
		if depth > 2 && typ == "l" {
			typ = "p"
		}
		attrs := map[string]any{"id": bid, "updated": fmt.Sprintf("2026081212%04d", r.IntN(10000))}
		if r.IntN(4) == 0 {
			attrs["custom-priority"] = fmt.Sprint(r.IntN(5))
			attrs["style"] = "color: var(--b3-font-color8);"
		}
		b := map[string]any{
			"id":       bid,
			"parentID": parent,
			"rootID":   rootID,
			"type":     typ,
			"subtype":  map[string]string{"h": "h2", "l": "u"}[typ],
			"markdown": md,
			"kramdown": md + "\n{: id=\"" + bid + "\" updated=\"" + attrs["updated"].(string) + "\"}",
			"attrs":    attrs,
			"sort":     r.IntN(100000),
			"size":     float64(len(md)) * 1.25,
			"folded":   r.IntN(10) == 0,
		}
		used += 2*len(md) + 330
		if typ == "l" {
			var items []any
			for i := 1 + r.IntN(4); i > 0 && used < size; i-- {
				items = append(items, block(bid, depth+1))
			}
			b["children"] = items
		}
		return b
	}
	var children []any
	for used < size {
		children = append(children, block(rootID, 0))
	}
	return map[string]any{
		"id":       rootID,
		"box":      "20260101000000-notebk1",
		"path":     "/" + rootID + ".sy",
		"hPath":    "/Projects/Sisyphus/Benchmark",
		"name":     "Benchmark",
		"children": children,
		"ial":      map[string]any{"id": rootID, "title": "Benchmark", "type": "doc"},
	}
}

// documentJSON is documentValue as JSON text, padded out to exactly size bytes.
func documentJSON(tb testing.TB, size int) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(documentValue(size - size/16)); err != nil {
		tb.Fatal(err)
	}
	raw := bytes.TrimSpace(buf.Bytes())
	if len(raw) > size {
		tb.Fatalf("document is %d bytes, over %d", len(raw), size)
	}
	return append(raw, bytes.Repeat([]byte{' '}, size-len(raw))...)
}

const benchSize = 8 << 20

// BenchmarkDigest8MiB hashes an 8 MiB document given as a decoded Go value
// (map[string]any), the form state readers build.
func BenchmarkDigest8MiB(b *testing.B) {
	raw := documentJSON(b, benchSize)
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := Digest(v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDigestJSON8MiB hashes the same document given as JSON text,
// parsing included.
func BenchmarkDigestJSON8MiB(b *testing.B) {
	raw := documentJSON(b, benchSize)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := DigestJSON(raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDigestSmall is a typical block state: a few hundred bytes.
func BenchmarkDigestSmall(b *testing.B) {
	v := map[string]any{
		"category": "block", "action": "update",
		"selectors": map[string]any{"id": "20260812120000-abcdefg"},
		"liveBlocks": map[string]any{"20260812120000-abcdefg": map[string]any{
			"kramdown": "Some **text** here\n{: id=\"20260812120000-abcdefg\"}",
			"attrs":    map[string]any{"id": "20260812120000-abcdefg", "custom-a": "1"},
			"info":     map[string]any{"rootID": "20260812110000-rootidd", "box": "20260101000000-notebk1", "sort": json.Number("12")},
		}},
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Digest(v); err != nil {
			b.Fatal(err)
		}
	}
}

func TestBenchDocumentIsCanonicalisable(t *testing.T) {
	raw := documentJSON(t, 1<<20)
	d1, err := DigestJSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	if d2, err := Digest(v); err != nil || d1 != d2 {
		t.Fatalf("Digest = %s, %v; DigestJSON = %s", d2, err, d1)
	}
	if d3, err := Digest(documentValue(1<<20 - 1<<20/16)); err != nil || d3 != d1 {
		t.Fatalf("Digest(original value) = %s, %v; want %s", d3, err, d1)
	}
}
