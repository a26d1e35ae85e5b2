package contract

// Templates: Markdown files under data/templates/ (a folder is a group),
// found with searchTemplate, rendered with render (a file, .action{…}
// delimiters, block DOM out) and renderSprig (a string, {{…}}, text out),
// written from a document with docSaveAsTemplate and removed with
// removeTemplate. The suite's templates are data/templates/
// sisyphus-contract-<tag>… (files and one group folder), removed at the
// end; a user's templates are never read beyond a search for the suite's
// own names.

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// templateName is the suite's name for a template (file or group).
func (s *suite) templateName(what string) string { return "sisyphus-contract-" + s.tag + "-" + what }

// putTemplate writes data/templates/<rel> and removes it when the check ends.
func (s *suite) putTemplate(t *testing.T, rel, body string) {
	t.Helper()
	s.put(t, "/data/templates/"+rel, []byte(body))
	top, _, _ := strings.Cut(rel, "/")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.c.RemoveFile(ctx, "/data/templates/"+top); err != nil && !errors.Is(err, siyuan.ErrFileNotFound) {
			t.Errorf("cleanup: RemoveFile(/data/templates/%s): %v", top, err)
		}
	})
}

// templatePath is the absolute path of data/templates/<rel> on the
// kernel's machine, found by a search for it.
func (s *suite) templatePath(t *testing.T, rel string) string {
	t.Helper()
	res, err := s.c.SearchTemplate(t.Context(), s.tag)
	must(t, "SearchTemplate", err)
	for _, r := range res {
		if r.RelativePath == rel {
			return r.Path
		}
	}
	t.Fatalf("SearchTemplate(%s) = %+v, want %s", s.tag, res, rel)
	return ""
}

var (
	domIDRe = regexp.MustCompile(`\d{14}-[0-9a-z]{7}`)
	domTSRe = regexp.MustCompile(`updated="\d{14}"`)
)

// normDOM replaces block ids by ID and updated times by TS.
func normDOM(dom string) string {
	return domTSRe.ReplaceAllString(domIDRe.ReplaceAllString(dom, "ID"), `updated="TS"`)
}

// checkTemplateSearch: which files searchTemplate lists, in which order,
// with which fields.
func checkTemplateSearch(t *testing.T, s *suite) {
	group := s.templateName("group")
	top := s.templateName("top")
	s.putTemplate(t, top+".md", "top")
	s.putTemplate(t, top+"-upper.MD", "upper")
	s.putTemplate(t, top+"-notes.txt", "not a template")
	s.putTemplate(t, group+"/daily.md", "daily")
	s.putTemplate(t, group+"/sub/weekly.md", "weekly")
	s.putTemplate(t, group+"/README.md", "readme")
	s.putTemplate(t, group+"/.hidden.md", "hidden")
	s.putTemplate(t, group+"/.dot/inner.md", "hidden folder")
	res, err := s.c.SearchTemplate(t.Context(), s.tag)
	must(t, "SearchTemplate", err)
	type row struct{ rel, content string }
	var got []row
	for _, r := range res {
		got = append(got, row{r.RelativePath, r.Content})
		if !strings.HasSuffix(strings.ReplaceAll(r.Path, `\`, "/"), "/data/templates/"+r.RelativePath) {
			t.Fatalf("template %+v: path is not <workspace>/data/templates/<relativePath>", r)
		}
	}
	m := func(s string) string { return "<mark>" + s + "</mark>" }
	pre := "sisyphus-contract-"
	// The order is by the Jaro-Winkler score of the file name against each
	// word, which depends on the random tag here: compared sorted.
	want := []row{
		{group + "/daily.md", "/" + pre + m(s.tag) + "-group/daily"},
		{group + "/sub/weekly.md", "/" + pre + m(s.tag) + "-group/sub/weekly"},
		{top + "-upper.MD", pre + m(s.tag) + "-top-upper.MD"}, // .MD is a template, its name keeps .MD
		{top + ".md", pre + m(s.tag) + "-top"},
	}
	slices.SortFunc(got, func(a, b row) int { return strings.Compare(a.rel, b.rel) })
	if !slices.Equal(got, want) {
		t.Fatalf("SearchTemplate(%s)\n got %q\nwant %q", s.tag, got, want)
	}
	// Every word must match; a group's name counts for its templates.
	res, err = s.c.SearchTemplate(t.Context(), "  weekly   "+s.tag+"-group ")
	must(t, "SearchTemplate of two words", err)
	if len(res) != 1 || res[0].RelativePath != group+"/sub/weekly.md" ||
		res[0].Content != "/"+pre+m(s.tag+"-group")+"/sub/"+m("weekly") {
		t.Fatalf("SearchTemplate of two words = %+v", res)
	}
	// A file name close to the word ranks first: "daily.md" before a long
	// name that also contains "daily" (the workspace's own templates
	// named daily are left out of the comparison).
	s.putTemplate(t, top+"-daily-notes-of-the-week.md", "long")
	res, err = s.c.SearchTemplate(t.Context(), "daily")
	must(t, "SearchTemplate daily", err)
	var daily []string
	for _, r := range res {
		if strings.Contains(r.RelativePath, s.tag) {
			daily = append(daily, r.RelativePath)
		}
	}
	if w := []string{group + "/daily.md", top + "-daily-notes-of-the-week.md"}; !slices.Equal(daily, w) {
		t.Fatalf("SearchTemplate(daily) orders the suite's templates %q, want %q", daily, w)
	}
	// Case-insensitive; the highlight keeps the file's case.
	res, err = s.c.SearchTemplate(t.Context(), strings.ToUpper(s.tag+"-TOP-UPPER"))
	must(t, "SearchTemplate in upper case", err)
	if len(res) != 1 || res[0].Content != pre+m(s.tag+"-top-upper")+".MD" {
		t.Fatalf("SearchTemplate in upper case = %+v", res)
	}
	// The answer echoes k.
	r := s.rawJSON(t, "/api/search/searchTemplate", `{"k":"nothing-`+s.tag+`"}`)
	if want := `{"code":0,"msg":"","data":{"k":"nothing-` + s.tag + `","templates":[]}}`; r.status != http.StatusOK || string(r.body) != want {
		t.Fatalf("searchTemplate of nothing: HTTP %d %s, want %s", r.status, r.body, want)
	}
	wantEnvelope(t, "searchTemplate without k", s.rawJSONAny(t, "/api/search/searchTemplate", `{}`), http.StatusOK, 0, "", 1)
}

// checkTemplateRender: render runs a template file for a block and answers
// block DOM with new ids.
func checkTemplateRender(t *testing.T, s *suite) {
	title := "tmpl-" + randWord(6) + " & <x>"
	doc := s.newDoc(t, title, "first para")
	para := s.children(t, doc)[0].ID
	group := s.templateName("render")
	s.putTemplate(t, group+"/basic.md", strings.Join([]string{
		"# .action{.title}",
		"id .action{.id} name [.action{.name}] alias [.action{.alias}]",
		`.action{upper "abc"} .action{trim "  x  "} .action{repeat 3 "ab"} .action{add 1 2} .action{now | date "2006" | len}`,
		"- item\n- [ ] task",
		"> quote .action{.title | lower}",
	}, "\n\n")+"\n")
	s.putTemplate(t, group+"/loop.md", `.action{range $i, $e := (list "x" "y")}- .action{$e}`+"\n"+`.action{end}`)
	s.putTemplate(t, group+"/sql.md", `.action{$r := querySQL (printf "SELECT id FROM blocks WHERE id = '%s' LIMIT 1" .id)}.action{len $r} .action{(index $r 0).id}`+"\n\nhpath .action{getHPathByID .id}\n")
	s.putTemplate(t, group+"/bad.md", "bad .action{if}")
	s.putTemplate(t, group+"/exec.md", `exec .action{index "ab" 5}`)
	s.putTemplate(t, group+"/empty.md", "")
	basic := s.templatePath(t, group+"/basic.md")
	dir := strings.TrimSuffix(basic, "/basic.md")
	ws := basic[:strings.LastIndex(basic, "/data/templates/")]
	s.flush(t)

	p := func(id, text string) string {
		return `<div data-node-id="ID" data-node-index="` + id + `" data-type="NodeParagraph" class="p" updated="TS"><div contenteditable="true" spellcheck="false">` +
			text + `</div><div class="protyle-attr" contenteditable="false">` + "\u200b" + `</div></div>`
	}
	esc := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace
	attr := `<div class="protyle-attr" contenteditable="false">` + "\u200b" + `</div>`
	li := func(text string) string {
		return `<div data-marker="*" data-subtype="u" data-node-id="ID" data-type="NodeListItem" class="li" updated="TS"><div class="protyle-action" draggable="true"><svg><use xlink:href="#iconDot"></use></svg></div>` +
			`<div data-node-id="ID" data-type="NodeParagraph" class="p" updated="TS"><div contenteditable="true" spellcheck="false">` + text + `</div>` + attr + `</div>` + attr + `</div>`
	}
	for _, tc := range []struct {
		name, id, want string
	}{
		{"basic.md", doc, `<div data-subtype="h1" data-node-id="ID" data-node-index="1" data-type="NodeHeading" class="h1" updated="TS"><div contenteditable="true" spellcheck="false">` + esc(title) + `</div>` + attr + `</div>` +
			p("2", "id ID name [] alias []") + p("3", "ABC x ababab 3 4") +
			`<div data-subtype="u" data-node-id="ID" data-node-index="4" data-type="NodeList" class="list" updated="TS">` + li("item") + attr + `</div>` +
			// A task item after a bullet item starts a new list.
			`<div data-subtype="t" data-node-id="ID" data-node-index="5" data-type="NodeList" class="list" updated="TS">` +
			`<div data-marker="*" data-subtype="t" data-task=" " data-node-id="ID" data-type="NodeListItem" class="li" updated="TS"><div class="protyle-action protyle-action--task" draggable="true"><svg><use xlink:href="#iconUncheck"></use></svg></div>` +
			`<div data-node-id="ID" data-type="NodeParagraph" class="p" updated="TS"><div contenteditable="true" spellcheck="false">task</div>` + attr + `</div>` + attr + `</div>` + attr + `</div>` +
			`<div data-node-id="ID" data-node-index="6" data-type="NodeBlockquote" class="bq" updated="TS"><div data-node-id="ID" data-type="NodeParagraph" class="p" updated="TS"><div contenteditable="true" spellcheck="false">quote ` +
			esc(strings.ToLower(title)) + `</div>` + attr + `</div>` + attr + `</div>`},
		// A block: .title is its name (none here).
		{"basic.md", para, `<div data-subtype="h1" data-node-id="ID" data-node-index="1" data-type="NodeHeading" class="h1" updated="TS"><div contenteditable="true" spellcheck="false"></div>` + attr + `</div>`},
		{"loop.md", doc, `<div data-subtype="u" data-node-id="ID" data-node-index="1" data-type="NodeList" class="list" updated="TS">` + li("x") + li("y") + attr + `</div>`},
		{"sql.md", doc, p("1", "1 ID") + p("2", "hpath /"+esc(title))},
		{"empty.md", doc, p("1", "")},
	} {
		dom, err := s.c.RenderTemplate(t.Context(), tc.id, dir+"/"+tc.name, false)
		must(t, "RenderTemplate "+tc.name, err)
		got := normDOM(dom)
		if tc.name == "basic.md" && tc.id == para {
			got, _, _ = strings.Cut(got, `<div data-node-id="ID" data-node-index="2"`)
		}
		if got != tc.want {
			i := 0
			for i < len(got) && i < len(tc.want) && got[i] == tc.want[i] {
				i++
			}
			t.Fatalf("RenderTemplate(%s, %s) differs at byte %d:\n got …%q\nwant …%q", tc.name, tc.id, i, got[max(0, i-80):], tc.want[max(0, i-80):])
		}
		if tc.name == "basic.md" && tc.id == doc && (strings.Contains(dom, doc+`"`) || !strings.Contains(dom, "id "+doc)) {
			t.Fatalf("RenderTemplate: the blocks must get new ids, .id must be the block's: %s", dom)
		}
	}
	// Any file of the workspace renders, outside data/templates too (a
	// folder of temp/ neither indexed nor synced): the same DOM for the
	// same bytes. file.render has SiYuan render such a copy of the
	// template it checked.
	copyDir := "/temp/" + s.templateName("copy")
	s.put(t, copyDir+"/loop.md", []byte(`.action{range $i, $e := (list "x" "y")}- .action{$e}`+"\n"+`.action{end}`))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.c.RemoveFile(ctx, copyDir); err != nil && !errors.Is(err, siyuan.ErrFileNotFound) {
			t.Errorf("cleanup: RemoveFile(%s): %v", copyDir, err)
		}
	})
	fromTemplates, err := s.c.RenderTemplate(t.Context(), doc, dir+"/loop.md", true)
	must(t, "RenderTemplate loop.md", err)
	fromCopy, err := s.c.RenderTemplate(t.Context(), doc, ws+copyDir+"/loop.md", true)
	must(t, "RenderTemplate of a copy under temp/", err)
	if normDOM(fromCopy) != normDOM(fromTemplates) {
		t.Fatalf("RenderTemplate of a copy under temp/:\n got %q\nwant %q", normDOM(fromCopy), normDOM(fromTemplates))
	}
	// Preview renders the same; the answer echoes the path.
	r := s.rawJSON(t, "/api/template/render", `{"id":"`+doc+`","path":"`+dir+`/loop.md","preview":true}`)
	if !strings.HasPrefix(string(r.body), `{"code":0,"msg":"","data":{"content":"`) || !strings.HasSuffix(string(r.body), `","path":"`+dir+`/loop.md"}}`) {
		t.Fatalf("render with preview: %s", r.body)
	}
	// Errors: code -1, messages HTML-escaped.
	for _, tc := range []struct {
		id, path, msg string
	}{
		{doc, dir + "/none.md", "open " + dir + "/none.md: no such file or directory"},
		{doc, dir, "read " + dir + ": is a directory"},
		{doc, "data/templates/" + group + "/basic.md", "Path [data/templates/" + group + "/basic.md] is not in workspace"},
		{doc, ws + "/../x.md", "Path [" + ws + "/../x.md] is not in workspace"},
		{doc, ws, "Path [" + ws + "] is not in workspace"},
		{unknownID, basic, "tree not found"},
		{"not-an-id", basic, "invalid ID argument"},
		{doc, dir + "/bad.md", "Parse template failed: template: :1: missing value for if"},
		{doc, dir + "/exec.md", "Parse template failed: template: :1:13: executing &#34;&#34; at &lt;index &#34;ab&#34; 5&gt;: error calling index: index out of range: 5"},
	} {
		_, err := s.c.RenderTemplate(t.Context(), tc.id, tc.path, false)
		wantAPIError(t, "RenderTemplate("+tc.id+", "+tc.path+")", err, -1, tc.msg)
	}
	wantEnvelope(t, "render without path", s.rawJSONAny(t, "/api/template/render", `{"id":"`+doc+`"}`), http.StatusOK, 0, "", 1)
	wantEnvelope(t, "render without id", s.rawJSONAny(t, "/api/template/render", `{"path":"`+basic+`"}`), http.StatusOK, 0, "", 1)
}

// checkTemplateRenderSprig: renderSprig renders {{…}} with sprig and
// SiYuan's functions and no data.
func checkTemplateRenderSprig(t *testing.T, s *suite) {
	for tpl, want := range map[string]string{
		`{{upper "hi"}} {{ add 1 2 }} {{ list 1 2 | join "," }} {{ "a b" | title }} {{ b64enc "hi" }} {{ dict "a" 1 | toJson }}`:                                                           `HI 3 1,2 A B aGk= {"a":1}`,
		`{{ pow 2 10 }} {{ log 1000 10 }} {{ FormatFloat "#,###.##" 1234.5678 }} {{ runeCount "ab 中文" }} {{ wordCount "ab cd 中文" }}`:                                                       `1024 2 1,234.57 4 4`,
		`{{ markdown2text "**b** _i_" }}|{{ markdown2content "**b** _i_" }}`:                                                                                                               `b i|b i`,
		`{{ $d := toDate "2006-01-02" "2024-12-30" }}{{ Weekday $d }} {{ ISOWeek $d }} {{ ISOYear $d }} {{ ISOMonth $d }} {{ WeekdayCN $d }} {{ (ISOWeekDate 7 $d).Format "2006-01-02" }}`: `1 1 2025 1 一 2025-01-05`,
		`{{ (parseTime "2024-03-07 10:11").Format "2006-01-02 15:04" }}`:                                                                                                                   `2024-03-07 10:11`,
		`{{ querySQL "SELECT 1 AS one" }} {{ getBlock "` + unknownID + `" }}`:                                                                                                              `[map[one:1]] <nil>`,
		`{{ len (querySpans "SELECT * FROM spans WHERE id = 'none'") }} {{ statBlock "` + unknownID + `" }} {{ countif (list 1 2 3) "gt" 1 }} {{ countif (list "2" 0.5) "le" 1 }}`:         `0 <nil> 2 1`,
		`{{ .title }}|<b>{{ "<i>" }}</b> & 'q'|.action{upper "x"}`:                                                                                                                         `<no value>|<b><i></b> & 'q'|.action{upper "x"}`,
		``: ``,
	} {
		got, err := s.c.RenderSprig(t.Context(), tpl)
		must(t, "RenderSprig "+tpl, err)
		if got != want {
			t.Fatalf("RenderSprig(%s) = %q, want %q", tpl, got, want)
		}
	}
	if got, err := s.c.RenderSprig(t.Context(), `{{ now | date "2006-01-02" }}`); err != nil || got != time.Now().Format("2006-01-02") && got != time.Now().Add(-time.Minute).Format("2006-01-02") {
		t.Fatalf("RenderSprig(now) = %q, %v; want today", got, err)
	}
	for tpl, msg := range map[string]string{
		`{{ env "HOME" }}`:          `Parse template failed: template: :1: function &#34;env&#34; not defined`,
		`{{ expandenv "$HOME" }}`:   `Parse template failed: template: :1: function &#34;expandenv&#34; not defined`,
		`{{ getHostByName "x" }}`:   `Parse template failed: template: :1: function &#34;getHostByName&#34; not defined`,
		`{{ if }}`:                  `Parse template failed: template: :1: missing value for if`,
		`{{ index "ab" 5 }}`:        `Parse template failed: template: :1:3: executing &#34;&#34; at &lt;index &#34;ab&#34; 5&gt;: error calling index: index out of range: 5`,
		`x {{ fail "boom & <b>" }}`: `Parse template failed: template: :1:5: executing &#34;&#34; at &lt;fail &#34;boom &amp; &lt;b&gt;&#34;&gt;: error calling fail: boom &amp; &lt;b&gt;`,
	} {
		_, err := s.c.RenderSprig(t.Context(), tpl)
		wantAPIError(t, "RenderSprig("+tpl+")", err, -1, msg)
	}
	wantEnvelope(t, "renderSprig without template", s.rawJSONAny(t, "/api/template/renderSprig", `{}`), http.StatusOK, 0, "", 1)
}

// checkDocSaveAsTemplate: docSaveAsTemplate writes a document as a
// template; an existing name is code 1 unless overwrite.
func checkDocSaveAsTemplate(t *testing.T, s *suite) {
	doc := s.newDoc(t, "save-"+randWord(6), "## Sub\n\npara **b** `code \"q\"`\n\n- a\n\n```siyuan-template\n.action{.title}\n```")
	kids := s.children(t, doc)
	name := s.templateName("saved")
	t.Cleanup(func() {
		for _, f := range []string{name + ".md", s.templateName("a_b") + ".md"} {
			_ = s.c.RemoveFile(context.Background(), "/data/templates/"+f)
		}
	})
	must(t, "DocSaveAsTemplate", s.c.DocSaveAsTemplate(t.Context(), doc, name, false))
	got, _ := s.get(t, "/data/templates/"+name+".md")
	li := s.children(t, kids[2].ID)[0].ID
	liPara := s.children(t, li)[0].ID
	// Inline marks are written as SiYuan's <span data-type> (a zero-width
	// space after a closing one), code quotes unescaped, template code
	// blocks as their text.
	want := "## Sub\n{: id=\"" + kids[0].ID + "\"}\n\npara <span data-type=\"strong\">b</span> <span data-type=\"code\">code \"q\"</span>\u200b\n{: id=\"" + kids[1].ID + "\"}\n\n" +
		"- {: id=\"" + li + "\"}a\n  {: id=\"" + liPara + "\"}\n{: id=\"" + kids[2].ID + "\"}\n\n" +
		".action{.title}\n{: id=\"" + kids[3].ID + "\"}\n\n{: id=\"" + doc + "\" title=\"" + s.docTitle(t, doc) + "\" type=\"doc\"}"
	if string(got) != want {
		t.Fatalf("saved template\n got %q\nwant %q", got, want)
	}
	// The name exists: code 1, empty message, the file kept.
	err := s.c.DocSaveAsTemplate(t.Context(), kids[1].ID, name, false)
	wantAPIError(t, "DocSaveAsTemplate of an existing name", err, 1, "")
	if !errors.Is(err, siyuan.ErrTemplateExists) {
		t.Fatalf("errors.Is(%v, ErrTemplateExists) is false", err)
	}
	wantEnvelope(t, "raw docSaveAsTemplate of an existing name",
		s.rawJSON(t, "/api/template/docSaveAsTemplate", `{"id":"`+doc+`","name":"`+name+`","overwrite":false}`), http.StatusOK, 1, "", 1)
	if again, _ := s.get(t, "/data/templates/"+name+".md"); string(again) != want {
		t.Fatalf("the refused save changed the template: %q", again)
	}
	// overwrite replaces it; a block saves just that block.
	must(t, "DocSaveAsTemplate overwrite", s.c.DocSaveAsTemplate(t.Context(), kids[1].ID, name, true))
	got, _ = s.get(t, "/data/templates/"+name+".md")
	// SiYuan puts the block in a new tree: its IAL comes out twice, once
	// with a new root id and an updated time, then with the document's title.
	blockRe := regexp.MustCompile(`^` + regexp.QuoteMeta("para <span data-type=\"strong\">b</span> <span data-type=\"code\">code \"q\"</span>\u200b\n{: id=\""+kids[1].ID+"\"}\n\n\n") +
		`\{: id="(\d{14}-[0-9a-z]{7})" updated="\d{14}" type="doc"\}\n\n\{: id="(\d{14}-[0-9a-z]{7})" title="` + regexp.QuoteMeta(s.docTitle(t, doc)) + `" type="doc"\}$`)
	if m := blockRe.FindStringSubmatch(string(got)); m == nil || m[1] != m[2] || m[1] == doc {
		t.Fatalf("saved block template %q, want %s", got, blockRe)
	}
	// The name is a file name: a slash becomes "_".
	must(t, "DocSaveAsTemplate with a slash", s.c.DocSaveAsTemplate(t.Context(), doc, "sisyphus-contract-"+s.tag+"-a/b", false))
	if !s.pathExists(t, "/data/templates/"+s.templateName("a_b")+".md") {
		t.Fatalf("DocSaveAsTemplate with a slash did not write %s.md", s.templateName("a_b"))
	}
	// An unknown block: code 0 and nothing written.
	ghost := s.templateName("ghost")
	wantEnvelope(t, "docSaveAsTemplate of an unknown block",
		s.rawJSON(t, "/api/template/docSaveAsTemplate", `{"id":"`+unknownID+`","name":"`+ghost+`","overwrite":false}`), http.StatusOK, 0, "", 1)
	if s.pathExists(t, "/data/templates/"+ghost+".md") {
		t.Fatal("docSaveAsTemplate of an unknown block wrote a template")
	}
	if err := s.c.DocSaveAsTemplate(t.Context(), "not-an-id", ghost, false); !errors.Is(err, siyuan.ErrInvalidArgument) {
		t.Fatalf("DocSaveAsTemplate(not-an-id): %v, want ErrInvalidArgument", err)
	}
	wantEnvelope(t, "docSaveAsTemplate without overwrite", s.rawJSONAny(t, "/api/template/docSaveAsTemplate", `{"id":"`+doc+`","name":"`+ghost+`"}`), http.StatusOK, 0, "", 1)
	if s.pathExists(t, "/data/templates/"+ghost+".md") {
		t.Fatal("docSaveAsTemplate without overwrite wrote a template")
	}
}

// docTitle is a document's title attribute as stored.
func (s *suite) docTitle(t *testing.T, id string) string {
	t.Helper()
	return s.attrs(t, id)["title"]
}

// checkRemoveTemplate: removeTemplate removes files and folders and
// answers code 0 whether or not anything was there.
func checkRemoveTemplate(t *testing.T, s *suite) {
	group := s.templateName("remove")
	file := s.templateName("remove-file")
	s.putTemplate(t, group+"/a.md", "a")
	s.putTemplate(t, group+"/sub/b.md", "b")
	s.putTemplate(t, file+".md", "f")
	abs := s.templatePath(t, file+".md")
	must(t, "RemoveTemplate file", s.c.RemoveTemplate(t.Context(), abs))
	s.getMissing(t, "removed template", "/data/templates/"+file+".md")
	must(t, "RemoveTemplate of the removed file", s.c.RemoveTemplate(t.Context(), abs))
	dir := strings.TrimSuffix(s.templatePath(t, group+"/a.md"), "/a.md")
	must(t, "RemoveTemplate group", s.c.RemoveTemplate(t.Context(), dir))
	if s.pathExists(t, "/data/templates/"+group) {
		t.Fatalf("RemoveTemplate(%s) left the folder", dir)
	}
	wantEnvelope(t, "removeTemplate of a missing path", s.rawJSON(t, "/api/search/removeTemplate", pathBody(dir+"/none.md")), http.StatusOK, 0, "", 1)
	wantEnvelope(t, "removeTemplate without path", s.rawJSONAny(t, "/api/search/removeTemplate", `{}`), http.StatusOK, 0, "", 1)
	// The client refuses what is not a template path.
	ws := dir[:strings.LastIndex(dir, "/data/templates/")]
	for _, p := range []string{"", "data/templates/x.md", "/tmp/x", ws, ws + "/data/templates", ws + "/data/templates/", ws + "/data/templates/../conf", ws + "/data/templates/./x", " " + abs} {
		if err := s.c.RemoveTemplate(t.Context(), p); !errors.Is(err, siyuan.ErrInvalidArgument) {
			t.Fatalf("RemoveTemplate(%q): %v, want ErrInvalidArgument", p, err)
		}
	}
}
