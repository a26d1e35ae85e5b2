package embedded

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// TestAnswersDecodeIntoClientTypes decodes this kernel's answers into the
// types the client decodes them into (the wire types, under their siyuan
// names), rejecting unknown keys at any depth and requiring every field the
// type always writes. Struct answers cannot drift from the client, but the
// answers SiYuan builds as maps, and so this kernel too, can: a key added,
// renamed or dropped there fails here.
func TestAnswersDecodeIntoClientTypes(t *testing.T) {
	e := ixOpen(t)
	box := e.box()
	doc := e.doc(box, "/Wire", "# H\n\npara wire\n\n- item")
	e.doc(box, "/Wire/Sub", "child para wire")
	d2h := e.doc(box, "/WireD2H", "moved")
	var kids []siyuan.ChildBlock
	e.ok("/api/block/getChildBlocks", map[string]any{"id": doc}, &kids)
	blk := kids[1].ID
	var nb struct {
		Notebook siyuan.Notebook `json:"notebook"`
	}
	e.ok("/api/notebook/createNotebook", map[string]any{"name": "Wire"}, &nb)
	e.flush()
	// A template, for searchTemplate and render.
	tpl := filepath.Join(e.k.Dir(), "data", "templates", "wire.md")
	if err := os.WriteFile(tpl, []byte("# .action{.title}"), 0o644); err != nil {
		t.Fatal(err)
	}
	// An unused asset in data/assets, for getUnusedAssets and searchAsset.
	if err := os.WriteFile(filepath.Join(e.k.Dir(), "data", "assets", "wire-20200101000000-abcdefg.txt"), []byte("w"), 0o644); err != nil {
		t.Fatal(err)
	}

	type lsNotebooks struct {
		Notebooks     []siyuan.Notebook `json:"notebooks"`
		BoxDocEnabled bool              `json:"boxDocEnabled"` // not read by the client
	}
	txs := new([]siyuan.Transaction)
	av := newAVFixture(t, e)
	tests := []struct {
		endpoint string
		body     map[string]any
		into     any
	}{
		{"/api/system/bootProgress", map[string]any{}, new(siyuan.BootProgress)},
		{"/api/notebook/lsNotebooks", map[string]any{}, new(lsNotebooks)},
		{"/api/notebook/createNotebook", map[string]any{"name": "Other"}, new(struct {
			Notebook siyuan.Notebook `json:"notebook"`
		})},
		{"/api/notebook/getNotebookConf", map[string]any{"notebook": nb.Notebook.ID}, new(siyuan.NotebookConf)},
		{"/api/notebook/setNotebookConf", map[string]any{"notebook": nb.Notebook.ID, "conf": map[string]any{"sortMode": 6}}, new(siyuan.BoxConf)},
		{"/api/filetree/getPathByID", map[string]any{"id": doc}, new(siyuan.DocPath)},
		{"/api/filetree/listDocsByPath", map[string]any{"notebook": box, "path": "/"}, new(siyuan.DocList)},
		{"/api/block/getBlockKramdown", map[string]any{"id": blk}, new(siyuan.BlockKramdown)},
		{"/api/block/getChildBlocks", map[string]any{"id": doc}, new([]siyuan.ChildBlock)},
		{"/api/block/getBlockDOM", map[string]any{"id": blk}, new(siyuan.BlockDOM)},
		{"/api/block/getBlockInfo", map[string]any{"id": blk}, new(siyuan.BlockInfo)},
		{"/api/block/getDocInfo", map[string]any{"id": doc}, new(siyuan.DocInfo)},
		{"/api/block/getBlockBreadcrumb", map[string]any{"id": blk}, new([]siyuan.BlockPath)},
		{"/api/block/getBlocksWordCount", map[string]any{"ids": []string{doc}}, new(siyuan.WordCount)},
		{"/api/block/getRecentUpdatedBlocks", map[string]any{}, new([]siyuan.Block)},
		{"/api/block/getDocsInfo", map[string]any{"ids": []string{doc}, "refCount": true, "av": true}, new([]siyuan.DocInfo)},
		{"/api/filetree/searchDocs", map[string]any{"k": "wire"}, new([]siyuan.DocSearchHit)},
		{"/api/filetree/getDoc", map[string]any{"id": doc}, new(siyuan.Doc)},
		{"/api/outline/getDocOutline", map[string]any{"id": doc}, new([]siyuan.OutlinePath)},
		{"/api/search/fullTextSearchBlock", map[string]any{"query": "wire"}, new(siyuan.FullTextSearchResult)},
		{"/api/search/fullTextSearchBlock", map[string]any{"query": "wire", "groupBy": 1}, new(siyuan.FullTextSearchResult)},
		{"/api/file/readDir", map[string]any{"path": "/data/" + box}, new([]siyuan.DirEntry)},
		{"/api/export/exportMdContent", map[string]any{"id": doc}, new(siyuan.MdContent)},
		{"/api/asset/getUnusedAssets", map[string]any{}, new([]siyuan.UnusedAsset)},
		{"/api/search/searchAsset", map[string]any{"k": ""}, new([]siyuan.AssetSearchResult)},
		{"/api/search/searchTemplate", map[string]any{"k": "wire"}, new(wire.TemplateSearch)},
		{"/api/template/render", map[string]any{"id": doc, "path": tpl}, new(siyuan.RenderedTemplate)},
		{"/api/filetree/createDailyNote", map[string]any{"notebook": nb.Notebook.ID}, new(siyuan.DailyNote)},
		{"/api/filetree/duplicateDoc", map[string]any{"id": doc}, new(siyuan.DuplicatedDoc)},
		{"/api/filetree/doc2Heading", map[string]any{"srcID": d2h, "targetID": blk, "after": false}, new(siyuan.Doc2Heading)},
		{"/api/riff/addRiffCards", map[string]any{"deckID": siyuan.BuiltinDeckID, "blockIDs": []string{blk}}, new(any)},
		{"/api/sqlite/flushTransaction", map[string]any{}, new(any)},
		{"/api/riff/getRiffDueCards", map[string]any{"deckID": siyuan.BuiltinDeckID}, new(siyuan.DueCards)},
		{"/api/block/insertBlock", map[string]any{"dataType": "markdown", "data": "ins", "previousID": blk}, txs},
		{"/api/block/appendBlock", map[string]any{"dataType": "markdown", "data": "app", "parentID": doc}, txs},
		{"/api/block/prependBlock", map[string]any{"dataType": "markdown", "data": "pre", "parentID": doc}, txs},
		{"/api/block/updateBlock", map[string]any{"dataType": "markdown", "data": "upd", "id": blk}, txs},
		{"/api/transactions", map[string]any{"reqId": 1, "transactions": []map[string]any{{"doOperations": []map[string]any{
			{"action": "update", "id": blk, "data": `<div data-node-id="` + blk + `" data-type="NodeParagraph" class="p"><div contenteditable="true" spellcheck="false">tx</div><div class="protyle-attr" contenteditable="false"></div></div>`}}}}}, txs},
		{"/api/block/updateBlock", map[string]any{"dataType": "markdown", "data": "whole", "id": doc}, txs},
		{"/api/block/deleteBlock", map[string]any{"id": kids[0].ID}, txs},
		{"/api/av/renderAttributeView", map[string]any{"id": av.av, "blockID": av.block}, new(siyuan.AVRender)},
		{"/api/av/renderAttributeView", map[string]any{"id": av.b}, new(siyuan.AVRender)},
		{"/api/av/getAttributeView", map[string]any{"id": av.av}, new(struct {
			AV *siyuan.AttributeView `json:"av"`
		})},
		{"/api/av/getAttributeViewKeys", map[string]any{"id": av.para}, new([]siyuan.AVBlockKeys)},
		{"/api/av/getAttributeViewKeysByAvID", map[string]any{"avID": av.av}, new([]siyuan.AVKey)},
		{"/api/av/getAttributeViewFilterSort", map[string]any{"id": av.av, "blockID": av.block}, new(siyuan.AVFilterSort)},
		{"/api/av/searchAttributeView", map[string]any{"keyword": "Fixture"}, new(struct {
			Results []siyuan.AVSearchResult `json:"results"`
		})},
		{"/api/av/getAttributeViewPrimaryKeyValues", map[string]any{"id": av.av}, new(siyuan.AVPrimaryKeyValues)},
		{"/api/av/getMirrorDatabaseBlocks", map[string]any{"avID": av.av}, new(struct {
			RefDefs []siyuan.AVRefDefs `json:"refDefs"`
		})},
		{"/api/av/setAttributeViewBlockAttr", map[string]any{"avID": av.av, "keyID": av.text, "itemID": av.rows[1], "value": map[string]any{"text": map[string]any{"content": "x"}}}, new(struct {
			Value *siyuan.AVValue `json:"value"`
		})},
		{"/api/av/duplicateAttributeViewBlock", map[string]any{"avID": av.av}, new(siyuan.AVDuplicate)},
	}
	seen := map[reflect.Type]bool{}
	for _, tc := range tests {
		status, _, raw := e.raw(tc.endpoint, tc.body)
		var env wire.Result
		if status != http.StatusOK || strictDecode(raw, &env) != nil || env.Code != 0 {
			t.Fatalf("%s: HTTP %d %s", tc.endpoint, status, raw)
		}
		checkShape(t, tc.endpoint, reflect.TypeOf(env), anyJSON(t, raw), seen)
		var data struct {
			Data json.RawMessage `json:"data"`
		}
		_ = json.Unmarshal(raw, &data)
		into := reflect.New(reflect.TypeOf(tc.into).Elem()).Interface()
		if err := strictDecode(data.Data, into); err != nil {
			t.Errorf("%s: %v in %s", tc.endpoint, err, data.Data)
			continue
		}
		checkShape(t, tc.endpoint, reflect.TypeOf(into), anyJSON(t, data.Data), seen)
	}
	up := e.multipart("/api/asset/upload", ixPart{name: "assetsDirPath", value: "/assets/"}, ixPart{name: "file[]", file: "a.txt", data: []byte("findme in the asset")})
	var res siyuan.AssetUploadResult
	if up.Code != 0 || strictDecode(up.Data, &res) != nil {
		t.Fatalf("upload: %+v", up)
	}
	checkShape(t, "upload", reflect.TypeOf(res), anyJSON(t, up.Data), seen)
	status, _, raw := e.raw("/api/search/fullTextSearchAssetContent", map[string]any{"query": "findme"})
	var found struct {
		Data siyuan.AssetContentResult `json:"data"`
	}
	if status != http.StatusOK || json.Unmarshal(raw, &found) != nil || len(found.Data.AssetContents) == 0 {
		t.Fatalf("fullTextSearchAssetContent: HTTP %d %s", status, raw)
	}
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	_ = json.Unmarshal(raw, &env)
	checkShape(t, "fullTextSearchAssetContent", reflect.TypeOf(found.Data), anyJSON(t, env.Data), seen)

	// The data repository: a key, two snapshots (a document added
	// between), a tag, their diff and the added document's file.
	repo := func(ep string, body map[string]any, into any) {
		t.Helper()
		status, _, raw := e.raw(ep, body)
		var env struct {
			Code int             `json:"code"`
			Data json.RawMessage `json:"data"`
		}
		if status != http.StatusOK || json.Unmarshal(raw, &env) != nil || env.Code != 0 {
			t.Fatalf("%s: HTTP %d %s", ep, status, raw)
		}
		if into == nil {
			return
		}
		if err := strictDecode(env.Data, into); err != nil {
			t.Fatalf("%s: %v in %s", ep, err, env.Data)
		}
		checkShape(t, ep, reflect.TypeOf(into), anyJSON(t, env.Data), seen)
	}
	repo("/api/repo/initRepoKey", map[string]any{}, new(wire.RepoKey))
	var before, after siyuan.RepoSnapshotsPage
	repo("/api/repo/getRepoSnapshots", map[string]any{"page": 1}, &before)
	e.doc(box, "/WireRepo", "repo wire")
	e.flush()
	repo("/api/repo/createSnapshot", map[string]any{"memo": "wire"}, nil)
	repo("/api/repo/getRepoSnapshots", map[string]any{"page": 1}, &after)
	repo("/api/repo/tagSnapshot", map[string]any{"id": after.Snapshots[0].ID, "name": "wire"}, nil)
	repo("/api/repo/getRepoTagSnapshots", map[string]any{}, new(wire.RepoTagSnapshots))
	var diff siyuan.RepoDiff
	repo("/api/repo/diffRepoSnapshots", map[string]any{"left": before.Snapshots[0].ID, "right": after.Snapshots[0].ID}, &diff)
	if len(diff.AddsLeft) == 0 {
		t.Fatalf("the diff adds nothing: %+v", diff)
	}
	repo("/api/repo/openRepoSnapshotFile", map[string]any{"id": diff.AddsLeft[0].FileID}, new(siyuan.RepoSnapshotFile))

	// Every wire type must have been met in an answer, so that a new one
	// is checked too. AttrView (getDocInfo's databases), a date or time
	// column's settings and sort rules need what this kernel has no
	// operation for.
	unmet := map[string]bool{"AttrView": true, "AVDateConf": true, "AVIncludeTime": true, "AVViewSort": true}
	for _, name := range wireTypeNames(t) {
		if !seen[wireType(name)] && !unmet[name] {
			t.Errorf("no answer checked wire.%s", name)
		}
	}
}

// TestBoxCryptAlwaysWritten: SiYuan always writes boxCrypt, null for a plain
// notebook, and wire.BoxConf omits a nil one, so this kernel must never
// leave it nil (see wire.BoxConf).
func TestBoxCryptAlwaysWritten(t *testing.T) {
	e := ixOpen(t)
	box := e.box()
	for _, tc := range []struct {
		endpoint string
		body     map[string]any
	}{
		{"/api/notebook/getNotebookConf", map[string]any{"notebook": box}},
		{"/api/notebook/setNotebookConf", map[string]any{"notebook": box, "conf": map[string]any{"icon": "1f4d4"}}},
		{"/api/notebook/setNotebookConf", map[string]any{"notebook": box, "conf": map[string]any{"boxCrypt": map[string]any{"spec": 1}}}},
	} {
		if _, _, raw := e.raw(tc.endpoint, tc.body); !bytes.Contains(raw, []byte(`"boxCrypt":null`)) {
			t.Errorf("%s %v: %s", tc.endpoint, tc.body, raw)
		}
	}
	conf, err := os.ReadFile(filepath.Join(e.k.Dir(), "data", box, ".siyuan", "conf.json"))
	if err != nil || !bytes.Contains(conf, []byte(`"boxCrypt": null`)) {
		t.Errorf("conf.json: %s %v", conf, err)
	}
}

func strictDecode(data []byte, into any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(into)
}

func anyJSON(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// checkShape reports the fields of typ that v lacks, at any depth, unless
// tagged omitempty; unknown keys are left to DisallowUnknownFields. It
// records the struct types it met in seen.
func checkShape(t *testing.T, at string, typ reflect.Type, v any, seen map[reflect.Type]bool) {
	t.Helper()
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if v == nil || typ == rawMessageType {
		return
	}
	switch typ.Kind() {
	case reflect.Struct:
		seen[typ] = true
		obj, _ := v.(map[string]any)
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" {
				name = f.Name
			}
			x, ok := obj[name]
			if !ok {
				if !strings.Contains(opts, "omitempty") {
					t.Errorf("%s: %s lacks %q", at, typ, name)
				}
				continue
			}
			checkShape(t, at+"."+name, f.Type, x, seen)
		}
	case reflect.Slice:
		arr, _ := v.([]any)
		for i, x := range arr {
			checkShape(t, fmt.Sprintf("%s[%d]", at, i), typ.Elem(), x, seen)
		}
	case reflect.Map:
		m, _ := v.(map[string]any)
		for k, x := range m {
			checkShape(t, at+"."+k, typ.Elem(), x, seen)
		}
	}
}

// wireTypeNames lists the types package wire declares, from its source.
func wireTypeNames(t *testing.T) []string {
	t.Helper()
	dir := filepath.Join("..", "siyuan", "wire")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	fset := token.NewFileSet()
	for _, en := range entries {
		if !strings.HasSuffix(en.Name(), ".go") || strings.HasSuffix(en.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, en.Name()), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.TYPE {
				for _, s := range g.Specs {
					names = append(names, s.(*ast.TypeSpec).Name.Name)
				}
			}
		}
	}
	if len(names) == 0 {
		t.Fatal("no types found in package wire")
	}
	return names
}

// wireType maps a wire type's name to its reflect.Type.
func wireType(name string) reflect.Type {
	for _, v := range []any{
		wire.Result{}, wire.BootProgress{}, wire.Notebook{}, wire.BoxConf{}, wire.NotebookConf{}, wire.DocPath{},
		wire.DocList{}, wire.DocFile{}, wire.Transaction{}, wire.Operation{}, wire.BlockKramdown{}, wire.ChildBlock{},
		wire.BlockDOM{}, wire.BlockInfo{}, wire.DocInfo{}, wire.AttrView{}, wire.FullTextSearchResult{},
		wire.AssetUploadResult{}, wire.DirEntry{}, wire.MdContent{},
		wire.UnusedAsset{}, wire.AssetSearchResult{}, wire.TemplateSearch{}, wire.TemplateSearchResult{}, wire.RenderedTemplate{},
		wire.AttributeView{}, wire.AVKeyValues{}, wire.AVKey{}, wire.AVSelectOption{}, wire.AVRelation{}, wire.AVRollup{},
		wire.AVRollupCalc{}, wire.AVDateConf{}, wire.AVIncludeTime{}, wire.AVView{}, wire.AVViewFilter{}, wire.AVViewSort{},
		wire.AVLayoutTable{}, wire.AVViewColumn{}, wire.AVValue{}, wire.AVValueBlock{}, wire.AVValueContent{},
		wire.AVValueNumber{}, wire.AVValueDate{}, wire.AVValueSelect{}, wire.AVValueAsset{}, wire.AVValueTime{},
		wire.AVValueCheckbox{}, wire.AVValueRelation{}, wire.AVValueRollup{}, wire.AVRender{}, wire.AVViewData{},
		wire.AVTable{}, wire.AVColumn{}, wire.AVRow{}, wire.AVCell{}, wire.AVBlockKeys{}, wire.AVFilterSort{},
		wire.AVSearchResult{}, wire.AVPrimaryKeyValues{}, wire.AVRefDefs{}, wire.AVDuplicate{},
		wire.DailyNote{}, wire.DuplicatedDoc{}, wire.Doc2Heading{},
		wire.BlockPath{}, wire.BlockStat{}, wire.WordCount{}, wire.Block{}, wire.DocSearchHit{}, wire.Doc{}, wire.OutlinePath{}, wire.DueCard{}, wire.AssetContent{},
		wire.RepoSnapshot{}, wire.RepoTypeCount{}, wire.RepoSnapshotsPage{}, wire.RepoTagSnapshots{}, wire.RepoDiffFile{},
		wire.RepoDiffIndex{}, wire.RepoDiff{}, wire.RepoSnapshotFile{}, wire.RepoKey{},
	} {
		if typ := reflect.TypeOf(v); typ.Name() == name {
			return typ
		}
	}
	return nil
}
