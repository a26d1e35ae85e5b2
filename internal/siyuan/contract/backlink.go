package contract

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The checks of the backlink panel's endpoints, /api/ref/getBacklink2,
// getBacklinkDoc and getBackmentionDoc. Titles and anchors are random words
// so that mentions come only from the check's own documents.

var backlinkChecks = []check{
	{"ref_backlinks_and_mentions", checkBacklinks},
}

// apiData posts body and returns the data of a code 0 answer.
func (s *suite) apiData(t *testing.T, endpoint string, body any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(body)
	must(t, "marshal", err)
	r := s.rawJSON(t, endpoint, string(b))
	var env struct {
		Code int             `json:"code"`
		Data json.RawMessage `json:"data"`
	}
	if r.status != http.StatusOK || json.Unmarshal(r.body, &env) != nil || env.Code != 0 {
		t.Fatalf("%s %s: HTTP %d %s", endpoint, b, r.status, r.body)
	}
	return env.Data
}

var tsAttrRe = regexp.MustCompile(`updated="\d{14}"`)

// normBacklinkDOM names the given ids and blanks the rest and the timestamps.
func normBacklinkDOM(dom string, names map[string]string) string {
	for id, n := range names {
		dom = strings.ReplaceAll(dom, id, n)
	}
	return tsAttrRe.ReplaceAllString(nodeIDAnyRe.ReplaceAllString(dom, "ID"), `updated="TS"`)
}

var nodeIDAnyRe = regexp.MustCompile(`\d{14}-[a-z0-9]{7}`)

func checkBacklinks(t *testing.T, s *suite) {
	w := randWord(8)
	title, a1 := "zz"+w, "aa"+randWord(6)
	// Every anchor is a random word too: anchors are mention keywords.
	an := func() string { return "an" + randWord(6) }
	aHead := an()
	tgt := s.newDocAt(t, "/"+title, "# Target Head\n\n"+title+" para")
	head := s.childIDs(t, tgt)[0]
	src1 := s.newDocAt(t, "/src1-"+w, "see (("+tgt+" '"+a1+"')) here\n\n- item refs (("+head+" '"+aHead+"'))\n\nmention "+title+" text plain")
	child := s.newDocAt(t, "/src1-"+w+"/child-"+w, "child links (("+tgt+" \""+an()+"\"))")
	s3 := s.newDocAt(t, "/s3-"+w, "# H1 in s3\n\nunder heading (("+tgt+" '"+an()+"'))\n\n- outer\n  - nested (("+tgt+" '"+an()+"'))\n\n> quote (("+tgt+" '"+an()+"'))\n\n## Head (("+tgt+" '"+an()+"')) two\n\nbelow\n\n"+strings.ToUpper(title)+" again and "+a1+" too")
	s.flush(t)

	type path struct {
		ID, Box, Name, HPath, Type, NodeType, SubType string
		Depth, Count                                  int
		Folded                                        bool
		Updated, Created                              string
	}
	var bl2 struct {
		Backlinks, Backmentions      []path
		LinkRefsCount, MentionsCount int
		Box, K, Mk                   string
	}
	must(t, "decode getBacklink2", json.Unmarshal(s.apiData(t, "/api/ref/getBacklink2", map[string]any{"id": tgt, "k": "", "mk": "", "sort": "4", "mSort": "4"}), &bl2))
	type idCount struct {
		id    string
		count int
	}
	ic := func(ps []path) []idCount {
		var out []idCount
		for _, p := range ps {
			out = append(out, idCount{p.ID, p.Count})
		}
		return out
	}
	// A document's backlinks take in refs to its blocks; a paragraph in a
	// list item, quote, super block or callout is shown by its container.
	if got, want := ic(bl2.Backlinks), []idCount{{child, 1}, {s3, 4}, {src1, 2}}; !slices.Equal(got, want) || bl2.LinkRefsCount != 7 {
		t.Fatalf("backlinks %v (%d refs), want %v (7)", got, bl2.LinkRefsCount, want)
	}
	if got, want := ic(bl2.Backmentions), []idCount{{s3, 1}, {src1, 1}}; !slices.Equal(got, want) || bl2.MentionsCount != 2 {
		t.Fatalf("backmentions %v (%d), want %v (2)", got, bl2.MentionsCount, want)
	}
	p := bl2.Backlinks[2]
	if p.Box != s.box || p.Name != "src1-"+w || p.HPath != s.boxName+"/src1-"+w || p.Type != "backlink" || p.NodeType != "NodeDocument" ||
		p.SubType != "" || p.Depth != 0 || p.Folded || p.Created != src1[:14] || len(p.Updated) != 14 || bl2.Box != s.box {
		t.Fatalf("backlink document %+v", p)
	}
	var onlyDirect struct{ LinkRefsCount int }
	must(t, "decode", json.Unmarshal(s.apiData(t, "/api/ref/getBacklink2", map[string]any{"id": tgt, "k": "", "mk": "", "containChildren": false}), &onlyDirect))
	if onlyDirect.LinkRefsCount != 6 {
		t.Fatalf("without children: %d refs, want 6", onlyDirect.LinkRefsCount)
	}

	type entry struct {
		DOM        string `json:"dom"`
		BlockPaths []struct {
			ID, Name, Type, SubType string
		} `json:"blockPaths"`
		Expand bool `json:"expand"`
	}
	var doc struct {
		Backlinks []entry
		Keywords  []string
	}
	must(t, "decode getBacklinkDoc", json.Unmarshal(s.apiData(t, "/api/ref/getBacklinkDoc", map[string]any{"defID": tgt, "refTreeID": src1, "keyword": ""}), &doc))
	names := map[string]string{tgt: "T", head: "H"}
	want := []string{
		`<div data-node-id="ID" data-node-index="1" data-type="NodeParagraph" class="p" updated="TS"><div contenteditable="true" spellcheck="false">see <span data-type="block-ref" data-subtype="d" data-id="T">` + a1 + `</span> here</div><div class="protyle-attr" contenteditable="false">` + "\u200b" + `</div></div>`,
		`<div data-marker="*" data-subtype="u" data-node-id="ID" data-type="NodeListItem" class="li" updated="TS"><div class="protyle-action" draggable="true"><svg><use xlink:href="#iconDot"></use></svg></div><div data-node-id="ID" data-type="NodeParagraph" class="p" updated="TS"><div contenteditable="true" spellcheck="false">item refs <span data-type="block-ref" data-subtype="d" data-id="H">` + aHead + `</span></div><div class="protyle-attr" contenteditable="false">` + "\u200b" + `</div></div><div class="protyle-attr" contenteditable="false">` + "\u200b" + `</div></div>`,
	}
	if len(doc.Backlinks) != 2 || doc.Keywords == nil || len(doc.Keywords) != 0 {
		t.Fatalf("getBacklinkDoc = %+v", doc)
	}
	for i, e := range doc.Backlinks {
		if got := normBacklinkDOM(e.DOM, names); got != want[i] || !e.Expand || len(e.BlockPaths) != 0 {
			t.Fatalf("backlink %d: expand %v paths %v\n got %s\nwant %s", i, e.Expand, e.BlockPaths, got, want[i])
		}
	}
	must(t, "decode getBacklinkDoc", json.Unmarshal(s.apiData(t, "/api/ref/getBacklinkDoc", map[string]any{"defID": tgt, "refTreeID": s3, "keyword": ""}), &doc))
	// Breadcrumbs show past the document and the block alone; a heading
	// whose text is more than refs starts folded.
	var crumbs [][]string
	var expands []bool
	for _, e := range doc.Backlinks {
		var c []string
		for _, p := range e.BlockPaths {
			c = append(c, p.Name)
		}
		crumbs, expands = append(crumbs, c), append(expands, e.Expand)
	}
	d := s.boxName + "/s3-" + w
	if wantC := [][]string{{d, "H1 in s3", ""}, {d, "H1 in s3", "outer", ""}, {d, "H1 in s3", ""}, nil}; !slices.EqualFunc(crumbs, wantC, slices.Equal) ||
		!slices.Equal(expands, []bool{true, true, true, false}) {
		t.Fatalf("s3 backlinks: crumbs %q expand %v", crumbs, expands)
	}

	var men struct {
		Backmentions []entry
		Keywords     []string
	}
	must(t, "decode getBackmentionDoc", json.Unmarshal(s.apiData(t, "/api/ref/getBackmentionDoc", map[string]any{"defID": tgt, "refTreeID": s3, "keyword": ""}), &men))
	slices.Sort(men.Keywords)
	if wantK := []string{strings.ToUpper(title), a1, title}; len(men.Backmentions) != 1 || !slices.Equal(men.Keywords, wantK) {
		t.Fatalf("getBackmentionDoc: %d entries, keywords %q, want 1 and %q", len(men.Backmentions), men.Keywords, wantK)
	}
	wantM := `<div data-node-id="ID" data-node-index="1" data-type="NodeParagraph" class="p" updated="TS"><div contenteditable="true" spellcheck="false"><span data-type="search-mark">` + strings.ToUpper(title) + `</span> again and <span data-type="search-mark">` + a1 + `</span> too</div><div class="protyle-attr" contenteditable="false">` + "\u200b" + `</div></div>`
	if got := normBacklinkDOM(men.Backmentions[0].DOM, names); got != wantM {
		t.Fatalf("backmention DOM\n got %s\nwant %s", got, wantM)
	}
	// An unknown block: empty lists, the filter's words as they are.
	wantEnvelopeData(t, "getBacklinkDoc of an unknown block", s.apiData(t, "/api/ref/getBacklinkDoc", map[string]any{"defID": unknownID, "refTreeID": s3, "keyword": ""}), `{"backlinks":[],"keywords":[]}`)
	wantEnvelopeData(t, "getBackmentionDoc of an unknown block", s.apiData(t, "/api/ref/getBackmentionDoc", map[string]any{"defID": unknownID, "refTreeID": s3, "keyword": ""}), `{"backmentions":[],"keywords":null}`)
	wantEnvelopeData(t, "getBacklink2 of an unknown block", s.apiData(t, "/api/ref/getBacklink2", map[string]any{"id": unknownID, "k": "", "mk": ""}), `{"backlinks":[],"backmentions":[],"box":"","k":"","linkRefsCount":0,"mentionsCount":0,"mk":""}`)
	wantEnvelopeData(t, "getBacklink2 without an id", s.apiData(t, "/api/ref/getBacklink2", map[string]any{}), `null`)
}

// wantEnvelopeData compares data as JSON values.
func wantEnvelopeData(t *testing.T, what string, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	if json.Unmarshal(got, &g) != nil || json.Unmarshal([]byte(want), &w) != nil {
		t.Fatalf("%s: %s", what, got)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Fatalf("%s: %s, want %s", what, gb, wb)
	}
}
