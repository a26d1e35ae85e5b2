package contract

// Export of a database block, as SiYuan 3.7.3 writes it (captured from a
// real kernel): exportMdContent turns the block into a Markdown table of
// its view, a row per item in the view's order, a cell per column.

import (
	"bytes"
	"image"
	"image/png"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/testvars"
)

// checkExportMdDatabase: a database with a column of each type, a bound
// and two detached rows and a relation to a second database, exported in
// its document and alone. Block and text cells escape Markdown markers and
// pipes, numbers show their format, dates and times their local text,
// select options their names, URLs and files become links, images images,
// a checked box √, relations and rollups their contents joined with ", ",
// and the line number counts the rows.
func checkExportMdDatabase(t *testing.T, s *suite) {
	a, paras := s.newDB(t, "bound *row* | pipe")
	b, _ := s.newDB(t)
	ids := func(n int) []string {
		var out []string
		for range n {
			out = append(out, freshID())
		}
		return out
	}
	k := ids(16)
	text, num, date, span, ms, url, cb, tpl, rel, roll, mail, phone, line, files, created, bnum := k[0], k[1], k[2], k[3], k[4], k[5], k[6], k[7], k[8], k[9], k[10], k[11], k[12], k[13], k[14], k[15]
	back := freshID()
	s.addCols(t, a, [3]string{text, "Text", "text"}, [3]string{num, "Num", "number"}, [3]string{date, "Date", "date"},
		[3]string{span, "Span", "date"}, [3]string{ms, "Tags", "mSelect"}, [3]string{url, "URL", "url"}, [3]string{cb, "Done", "checkbox"},
		[3]string{tpl, "Tpl", "template"}, [3]string{rel, "Rel", "relation"}, [3]string{roll, "Roll", "rollup"},
		[3]string{mail, "Mail", "email"}, [3]string{phone, "Phone", "phone"}, [3]string{line, "No", "lineNumber"},
		[3]string{files, "Files", "mAsset"}, [3]string{created, "Created", "created"})
	s.addCols(t, b, [3]string{bnum, "BNum", "number"})
	s.tx(t, siyuan.SetAttrViewNameOp(a.av, "Export"), siyuan.SetAttrViewNameOp(b.av, "Other"),
		siyuan.UpdateAttrViewColNumberFormatOp(a.av, num, "commas"),
		siyuan.UpdateAttrViewColTemplateOp(a.av, tpl, `.action{.Text}/.action{.Num}`),
		siyuan.UpdateAttrViewColRelationOp(a.av, rel, "Rel", b.av, true, back, "Back"),
		siyuan.UpdateAttrViewColRollupOp(a.av, roll, rel, bnum, "Sum"))
	items := ids(3)
	bItems := ids(2)
	s.tx(t, siyuan.InsertAttrViewBlockOp(a.av, a.block, []siyuan.AVSrc{{ItemID: items[0], ID: paras[0]},
		{ItemID: items[1], Detached: true, Content: "de|tached *x*"}, {ItemID: items[2], Detached: true}}, ""),
		siyuan.InsertAttrViewBlockOp(b.av, b.block, []siyuan.AVSrc{{ItemID: bItems[0], Detached: true, Content: "B0"},
			{ItemID: bItems[1], Detached: true, Content: "B|1"}}, ""))
	s.setCells(t, b, [3]string{bnum, bItems[0], `{"number":{"content":1.5,"isNotEmpty":true}}`},
		[3]string{bnum, bItems[1], `{"number":{"content":2,"isNotEmpty":true}}`})
	tall := "assets/" + path.Base(s.upload(t, "/"+s.box+"/assets/", "tall.png", tallPNG(t)))
	s.setCells(t, a,
		[3]string{text, items[0], `{"text":{"content":"some *text* | with _marks_"}}`},
		[3]string{num, items[0], `{"number":{"content":1234.5,"isNotEmpty":true}}`},
		[3]string{date, items[0], `{"date":{"content":1764547200000,"isNotEmpty":true,"isNotTime":true}}`},
		[3]string{span, items[0], `{"date":{"content":1764590400000,"isNotEmpty":true,"content2":1764676800000,"isNotEmpty2":true,"hasEndDate":true}}`},
		[3]string{a.sel, items[0], `{"mSelect":[{"content":"Todo","color":"4"}]}`},
		[3]string{ms, items[0], `{"mSelect":[{"content":"x","color":"1"},{"content":"y","color":"2"}]}`},
		[3]string{url, items[0], `{"url":{"content":"https://example.com"}}`},
		[3]string{cb, items[0], `{"checkbox":{"checked":true}}`},
		[3]string{rel, items[0], `{"relation":{"blockIDs":["` + bItems[0] + `","` + bItems[1] + `"]}}`},
		[3]string{mail, items[0], `{"email":{"content":"a@example.com"}}`},
		[3]string{phone, items[0], `{"phone":{"content":"+1 555"}}`},
		[3]string{files, items[0], `{"mAsset":[{"type":"image","name":"pic","content":"assets/none.png"},{"type":"image","name":"tall","content":"` + tall + `"},{"type":"file","name":"doc","content":"https://example.com/x.pdf"},{"type":"file","name":"","content":"assets/f.txt"}]}`},
		[3]string{num, items[1], `{"number":{"content":-2,"isNotEmpty":true}}`},
		[3]string{text, items[1], `{"text":{"content":"two\nlines"}}`})
	local := func(id string) string {
		tm, err := time.ParseInLocation("20060102150405", id[:14], time.Local)
		must(t, "parse "+id, err)
		return tm.Format("2006-01-02 15:04")
	}
	day := func(ms int64) string { return time.UnixMilli(ms).Format("2006-01-02") }
	minute := func(ms int64) string { return time.UnixMilli(ms).Format("2006-01-02 15:04") }
	hpath, err := s.c.GetHPathByID(t.Context(), a.doc)
	must(t, "GetHPathByID", err)
	vars := []string{"{title}", strings.TrimPrefix(hpath, "/"), "{c0}", local(paras[0]), "{c1}", local(items[1]), "{c2}", local(items[2]),
		"{d0}", day(1764547200000), "{s0}", minute(1764590400000), "{s1}", minute(1764676800000)}
	repl := strings.NewReplacer(append(vars, "{tall}", tall)...)
	for _, c := range []struct {
		name, id string
		args     map[string]any
		want     string
	}{
		{"the document", a.doc, nil, exportDBDoc},
		{"the database block", a.block, nil, exportDBBlock},
		{"images as tags", a.block, map[string]any{"imgTag": true}, exportDBImgTag},
	} {
		got := s.exportMd(t, c.id, c.args)
		if testvars.AVGolden.On(t) {
			t.Logf("%s:\n%s", c.name, got)
		}
		if want := repl.Replace(c.want); got != want {
			t.Errorf("export of %s:\n got %q\nwant %q", c.name, got, want)
		}
	}
}

// What SiYuan 3.7.3 exported for checkExportMdDatabase ({title} the
// document's title, {c0}… the local creation times of the rows, {d0} {s0}
// {s1} the dates' local text, {tall} the tall image).
const (
	exportDBHead = "# {title}\n\n" + `|Primary Key|Select|Text|Num|Date|Span|Tags|URL|Done|Tpl|Rel|Roll|Mail|Phone|No|Files|Created|
| -----------------| ------| -------------------------------| -------| ----------| ------------------------------------| ----| --------------------------------------| ----| ----------------------------------| --------| ----| -------------| ------| --| -------------------------------------------------------------------------------------------------------------------| ----------------|
|bound row \| pipe|Todo|some \*text\* \| with \_marks\_|1,234.5|{d0}|{s0} → {s1}|x y|[https://example.com](https://example.com)|√|some *text* \| with _marks_/1234.5|B0, B\|1|3.5|a@example.com|+1 555|1|`
	exportDBTail = `|{c0}|
|de\|tached \*x\*||two lines|-2||||||two lines/-2||0|||2||{c1}|
||||||||||/&lt;no value&gt;||0|||3||{c2}|
`
	exportDBBlock = exportDBHead + "![pic](assets/none.png) ![tall]({tall}) [doc](https://example.com/x.pdf) [assets/f.txt](assets/f.txt)" + exportDBTail
	exportDBDoc   = exportDBBlock + "\nbound *row* | pipe\n"
	// With images as tags, the style SiYuan gives an image in a cell
	// shows (the size it works out for a tall one never does).
	exportDBImgTag = exportDBHead + `<img alt="pic" src="assets/none.png" style="max-height: 128px;" /> <img alt="tall" src="{tall}" style="max-height: 128px;" /> [doc](https://example.com/x.pdf) [assets/f.txt](assets/f.txt)` + exportDBTail
)

// tallPNG is a 10×300 image: SiYuan's export sizes an image in a database
// cell taller than 128 pixels.
func tallPNG(t *testing.T) []byte {
	var b bytes.Buffer
	must(t, "encode PNG", png.Encode(&b, image.NewGray(image.Rect(0, 0, 10, 300))))
	return b.Bytes()
}
