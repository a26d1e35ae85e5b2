package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

func TestEveryActionIsClassified(t *testing.T) {
	f := tooltest.New(t, testTools)
	for _, tool := range f.R.Tools() {
		for _, a := range tool.Actions {
			if err := a.Policy.Validate(); err != nil {
				t.Errorf("%s.%s: %v", tool.Name, a.Name, err)
			}
		}
	}
}

// TestExternalEffectsAreBounded: every external effect holds the write lane
// for a bounded time, and the ones that wait on something slow or foreign
// for less than the default.
func TestExternalEffectsAreBounded(t *testing.T) {
	want := map[string]time.Duration{
		"feedback.submit": 5 * time.Second, "system.notify": 10 * time.Second, "system.perform_sync": tools.DefaultExternalTimeout,
		"file.export_resources": 2 * time.Minute, "file.extract_doc": 2 * time.Minute,
	}
	f := tooltest.New(t, testTools)
	seen := 0
	for _, tool := range f.R.Tools() {
		for _, a := range tool.Actions {
			name := tool.Name + "." + a.Name
			if a.Policy.Class != strict.External {
				if a.Timeout != 0 {
					t.Errorf("%s is not an external effect but has a timeout", name)
				}
				continue
			}
			seen++
			if a.Timeout <= 0 || a.Timeout > 2*time.Minute {
				t.Errorf("%s holds the write lane up to %v", name, a.Timeout)
			}
			if d, ok := want[name]; ok && a.Timeout != d {
				t.Errorf("%s: timeout %v, want %v", name, a.Timeout, d)
			}
		}
	}
	if seen < len(want) {
		t.Errorf("only %d external effects found", seen)
	}
}

func TestSchemas(t *testing.T) {
	f := tooltest.New(t, testTools)
	all := tools.View{Policy: tools.Unrestricted(), Strict: true}
	for _, tool := range f.R.Tools() {
		s := tool.InputSchema(all)
		props := s["properties"].(map[string]any)
		enum := props["action"].(map[string]any)["enum"].([]string)
		if enum[0] != "help" || len(enum) != len(tool.Actions)+1 {
			t.Errorf("%s: action enum %v", tool.Name, enum)
		}
		if s["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
			t.Errorf("%s: not a 2020-12 schema", tool.Name)
		}
		if _, err := json.Marshal(s); err != nil {
			t.Errorf("%s: schema does not encode: %v", tool.Name, err)
		}
		reads := tool.Dynamic == nil // discovered actions may have effects
		for _, a := range tool.Actions {
			reads = reads && a.Policy.Class == strict.Read
		}
		if ro := tool.Annotations(all).ReadOnly; ro != reads {
			t.Errorf("%s: readOnlyHint = %v", tool.Name, ro)
		}
		// An argument several actions share takes, in the one schema,
		// every value each of them takes (get_doc's mode and
		// ensure_link_targets' mode): a client checking calls against it
		// must not refuse one.
		for _, a := range tool.Actions {
			forms := []*tools.Action{a}
			if w, _ := a.WriteForm(); w != nil {
				forms = append(forms, w)
			}
			for _, f := range forms {
				for _, p := range f.Params {
					prop, _ := props[p.Name].(map[string]any)
					published, limited := prop["enum"].([]string)
					if !limited {
						continue
					}
					if len(p.Enum) == 0 {
						t.Errorf("%s.%s: %s takes any value, the schema only %v", tool.Name, a.Name, p.Name, published)
					}
					for _, v := range p.Enum {
						if !slices.Contains(published, v) {
							t.Errorf("%s.%s: %s takes %q, the schema only %v", tool.Name, a.Name, p.Name, v, published)
						}
					}
				}
			}
		}
	}
}

func TestErrors(t *testing.T) {
	f := tooltest.New(t, testTools)
	tests := []struct {
		tool string
		args any
		code failure.Code
		msg  string
	}{
		{"nope", map[string]any{"action": "list"}, failure.UnknownTool, "unknown tool"},
		{"notebook", map[string]any{}, failure.InvalidArguments, `missing argument "action"`},
		{"notebook", map[string]any{"action": 7}, failure.InvalidArguments, `"action" must be a string`},
		{"notebook", map[string]any{"action": "explode"}, failure.UnknownAction, `no action "explode"`},
		{"notebook", []int{1}, failure.InvalidArguments, "arguments must be a JSON object"},
		{"notebook", map[string]any{"action": "help", "topic": "nope"}, failure.UnknownHelpTopic, `no action "nope"`},
		{"notebook", map[string]any{"action": "list", "extra": 1}, failure.InvalidArguments, "does not take extra"},
		{"notebook", map[string]any{"action": "get_conf"}, failure.InvalidArguments, `missing argument "notebook"`},
		{"notebook", map[string]any{"action": "get_conf", "notebook": 12}, failure.InvalidArguments, `"notebook" must be a string`},
		{"notebook", map[string]any{"action": "get_conf", "notebook": "nope"}, failure.InvalidArguments, "must be a SiYuan id"},
		{"notebook", map[string]any{"action": "get_conf", "notebook": "20200101000000-aaaaaaa"}, failure.NotFound, "notebook 20200101000000-aaaaaaa not found"},
		{"block", map[string]any{"action": "get_kramdown", "id": "20200101000000-aaaaaaa"}, failure.NotFound, "block 20200101000000-aaaaaaa not found"},
		{"block", map[string]any{"action": "get_children", "id": "x", "pageSize": 1000}, failure.InvalidArguments, "between 1 and 200"},
		{"block", map[string]any{"action": "get_children", "id": "x", "page": 1.5}, failure.InvalidArguments, "must be an integer"},
		{"search", map[string]any{"action": "fulltext", "query": "x", "method": 4}, failure.InvalidArguments, "between 0 and 3"},
		{"search", map[string]any{"action": "fulltext", "query": "x", "methodName": "fuzzy"}, failure.InvalidArguments, "must be one of keyword, query, query_syntax, sql, regex"},
		{"search", map[string]any{"action": "fulltext", "query": "DELETE FROM blocks", "method": 2}, failure.InvalidArguments, "only a single SELECT"},
		{"search", map[string]any{"action": "check_anchor", "candidates": []string{"a,b,c,d,e,f", "g,h,i,j,k"}, "candidateKind": "alias"}, failure.InvalidArguments, "at most 10 tokens"},
		{"search", map[string]any{"action": "query_sql"}, failure.InvalidArguments, "or its alias \"sql\""},
		{"search", map[string]any{"action": "fulltext", "query": "  "}, failure.InvalidArguments, "must not be empty"},
		{"search", map[string]any{"action": "query_sql", "stmt": "DELETE FROM blocks"}, failure.InvalidArguments, "only a single SELECT"},
		{"search", map[string]any{"action": "query_sql", "stmt": "SELECT 1; DELETE FROM blocks"}, failure.InvalidArguments, "single statement"},
		{"search", map[string]any{"action": "query_sql", "stmt": "SELECT nope FROM nothing"}, failure.KernelError, "SiYuan answered code"},
		{"document", map[string]any{"action": "lookup"}, failure.InvalidArguments, "exactly one of"},
		{"document", map[string]any{"action": "lookup", "hpath": "/Nope", "notebook": "NB"}, failure.NotFound, "not found"},
		{"document", map[string]any{"action": "get_doc", "id": "BLOCK"}, failure.InvalidArguments, "not a document"},
		{"document", map[string]any{"action": "get_child_docs"}, failure.InvalidArguments, "either id"},
		{"document", map[string]any{"action": "list_tree", "notebook": "NB", "path": "/x"}, failure.InvalidArguments, "storage path"},
	}
	for _, tt := range tests {
		name := fmt.Sprintf("%s %v", tt.tool, tt.args)
		t.Run(name, func(t *testing.T) {
			raw, _ := json.Marshal(tt.args)
			raw = []byte(strings.ReplaceAll(strings.ReplaceAll(string(raw), "NB", f.NB), "BLOCK", f.Blocks[1]))
			_, err := f.R.Call(context.Background(), tt.tool, raw)
			var te *failure.Error
			if !errors.As(err, &te) {
				t.Fatalf("want a tools error, got %v", err)
			}
			if te.Code != tt.code || !strings.Contains(te.Message, tt.msg) {
				t.Fatalf("got %s %q, want %s containing %q", te.Code, te.Message, tt.code, tt.msg)
			}
			// Arguments the MCP layer decoded already are refused alike.
			var fields map[string]json.RawMessage
			if json.Unmarshal(raw, &fields) == nil {
				_, err := f.R.CallInput(context.Background(), tt.tool, tools.Input{Raw: raw, Fields: fields})
				var de *failure.Error
				if !errors.As(err, &de) || de.Code != te.Code || de.Message != te.Message {
					t.Fatalf("decoded arguments: %v, want %s %q", err, te.Code, te.Message)
				}
			}
		})
	}
}

// TestCallInputDecoded: a call whose arguments come decoded answers as the
// same call from its raw arguments, a read, a preflight and a commit alike,
// and Pending says the same of a dangerous one.
func TestCallInputDecoded(t *testing.T) {
	f := tooltest.NewStrict(t, false, testTools)
	ctx := context.Background()
	decoded := func(raw json.RawMessage) tools.Input {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil {
			t.Fatal(err)
		}
		return tools.Input{Raw: raw, Fields: fields}
	}
	read := json.RawMessage(`{"action":"get_kramdown","id":"` + f.Blocks[1] + `"}`)
	want, err := f.R.Call(ctx, "block", read)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := f.R.CallInput(ctx, "block", decoded(read)); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded read = %v, %v; want %v", got, err, want)
	}
	pre := json.RawMessage(`{"action":"update","id":"` + f.Blocks[1] + `","data":"decoded once","validateOnly":true}`)
	v, err := f.R.CallInput(ctx, "block", decoded(pre))
	if err != nil {
		t.Fatal(err)
	}
	p := v.(map[string]any)
	args := map[string]any{"action": "update", "id": f.Blocks[1], "data": "decoded once", "requestId": p["requestId"]}
	field := p["preconditionField"].(string)
	args[field] = p[field]
	commit, _ := json.Marshal(args)
	if res, err := f.R.CallInput(ctx, "block", decoded(commit)); err != nil || res.(map[string]any)["status"] != "committed" {
		t.Fatalf("decoded commit = %v, %v", res, err)
	}
	del := json.RawMessage(`{"action":"delete","id":"` + f.Blocks[1] + `"}`)
	pr, okRaw := f.R.Pending("block", tools.Input{Raw: del})
	pd, okDec := f.R.Pending("block", decoded(del))
	if !okRaw || !okDec || !reflect.DeepEqual(pr, pd) {
		t.Fatalf("Pending: raw %v %+v, decoded %v %+v", okRaw, pr, okDec, pd)
	}
}

func TestHelp(t *testing.T) {
	f := tooltest.New(t, testTools)
	for _, tool := range f.R.Tools() {
		h := f.OK(t, tool.Name, map[string]any{"action": "help"})
		if len(h["actions"].([]any)) != len(tool.Actions) {
			t.Errorf("%s help lists %v", tool.Name, h["actions"])
		}
		for _, a := range tool.Actions {
			ht := f.OK(t, tool.Name, map[string]any{"action": "help", "topic": a.Name})
			if ht["class"] != a.Policy.Class.String() || ht["example"].(map[string]any)["action"] != a.Name {
				t.Errorf("%s.%s help: %v", tool.Name, a.Name, ht)
			}
		}
	}
}

func TestVersionAndBootstrap(t *testing.T) {
	f := tooltest.New(t, testTools)
	v := f.OK(t, "system", map[string]any{"action": "version"})
	if v["siyuan"] != "3.7.3" || v["sisyphus"] != "test" {
		t.Fatalf("version: %v", v)
	}
	b := f.OK(t, "system", map[string]any{"action": "bootstrap"})
	ws := b["writeSafety"].(map[string]any)
	if len(b["notebooks"].([]any)) != 2 || ws["protocol"] != "preflight-lease-v1" || ws["strictMode"] != true {
		t.Fatalf("bootstrap: %v", b)
	}
	g := fmt.Sprint(ws["guarded"])
	if !strings.Contains(g, "block.update (expectedStateHash)") || !strings.Contains(fmt.Sprint(ws["requestIdOnly"]), "block.append") ||
		!strings.Contains(fmt.Sprint(ws["external"]), "system.notify") || strings.Contains(g, "get_kramdown") {
		t.Fatalf("bootstrap write catalogue: %v", ws)
	}
}

func testTools() []*tools.Tool { return All() }

func TestStrictSchemaAdvertisesControlFields(t *testing.T) {
	s := tooltest.NewStrict(t, false, testTools)
	props := tooltest.Schema(t, s.R, "block")["properties"].(map[string]any)
	d := props["expectedStateHash"].(map[string]any)["description"].(string)
	if !strings.Contains(d, "update") || strings.Contains(d, "append") || strings.Contains(d, "get_kramdown") {
		t.Fatalf("expectedStateHash must name exactly the guarded actions: %s", d)
	}
	r := props["requestId"].(map[string]any)["description"].(string)
	if !strings.HasSuffix(r, "(every write)") || strings.Contains(r, "get_kramdown") {
		t.Fatalf("requestId must name the strict writes only: %s", r)
	}
	m := tooltest.Schema(t, s.R, "search")["properties"].(map[string]any)["expectedManifestHash"].(map[string]any)["description"].(string)
	if !strings.HasSuffix(m, "(every write)") || strings.Contains(m, "fulltext") { // find_replace is its one write
		t.Fatalf("expectedManifestHash must name search's one write only: %s", m)
	}
}

// TestStrictRacingAgents: agents racing on one block, each preflighting and
// committing; per state exactly one commit wins, the rest see state_changed.

// FuzzToolArguments sends arbitrary argument objects to every tool: an
// agent's input must come back as a result or a typed *failure.Error, never a panic
// or an untyped failure. Writes run against a registry without a
// coordinator, so nothing is ever written.
func FuzzToolArguments(f *testing.F) {
	fx := tooltest.New(f, testTools)
	r, err := tools.NewRegistry(&tools.Env{Kernel: fx.C}, All()...)
	if err != nil {
		f.Fatal(err)
	}
	names := []string{"notebook", "document", "block", "fs", "search", "system"}
	for _, s := range []string{
		`{"action":"help"}`, `{"action":"get_doc","id":"` + fx.Doc + `","blockLimit":2}`,
		`{"action":"update","id":"` + fx.Blocks[0] + `","data":"x","validateOnly":true}`,
		`{"action":"query_sql","stmt":"SELECT 1"}`, `{"action":"ls","path":"/Tools"}`, `[]`, `{"action":null}`,
		`{"action":"update","items":[{"id":1}]}`, `{"action":"fulltext","query":"zebra","paths":[1]}`,
	} {
		f.Add(uint8(0), s)
		f.Add(uint8(2), s)
	}
	f.Fuzz(func(t *testing.T, which uint8, args string) {
		v, err := r.Call(context.Background(), names[int(which)%len(names)], json.RawMessage(args))
		tooltest.WantAnswer(t, args, v, err)
	})
}

// TestEveryWriteRefusesAtPreflight: every write action's preflight refuses
// what a read can know is wrong (a target, parent or anchor that does not
// exist, a name that does not fit) with the code a commit would give,
// executes nothing and issues no request id. Adding a write action without
// a case here fails the test.
func TestEveryWriteRefusesAtPreflight(t *testing.T) {
	s := tooltest.NewStrict(t, false, testTools)
	const gone = "20200101000000-aaaaaaa"
	doc, blk := s.Doc, s.Blocks[0]
	cases := map[string]struct {
		args map[string]any
		code failure.Code
	}{
		"notebook.create":              {map[string]any{"name": " / "}, failure.InvalidArguments},
		"notebook.rename":              {map[string]any{"notebook": gone, "name": "x"}, failure.NotFound},
		"notebook.remove":              {map[string]any{"notebook": gone}, failure.NotFound},
		"notebook.set_conf":            {map[string]any{"notebook": gone, "conf": map[string]any{"name": "x"}}, failure.NotFound},
		"notebook.set_open_state":      {map[string]any{"notebook": gone, "opened": false}, failure.NotFound},
		"notebook.set_permission":      {map[string]any{"notebook": gone, "permission": "rw"}, failure.NotFound},
		"notebook.set_icon":            {map[string]any{"notebook": gone, "icon": "1f4d4"}, failure.NotFound},
		"document.create":              {map[string]any{"notebook": gone, "path": "/x"}, failure.NotFound},
		"document.rename":              {map[string]any{"id": gone, "title": "x"}, failure.NotFound},
		"document.remove":              {map[string]any{"id": gone}, failure.NotFound},
		"document.move":                {map[string]any{"fromIDs": []string{gone}, "toID": doc}, failure.NotFound},
		"document.reorder":             {map[string]any{"parentID": gone, "orderedIDs": []string{}}, failure.NotFound},
		"document.set_child_sort_mode": {map[string]any{"id": gone, "sortMode": 6}, failure.NotFound},
		"document.create_daily_note":   {map[string]any{"notebook": gone}, failure.NotFound},
		"document.duplicate":           {map[string]any{"id": gone}, failure.NotFound},
		"document.heading_to_doc":      {map[string]any{"headingID": gone, "targetNotebook": s.NB}, failure.NotFound},
		"document.doc_to_heading":      {map[string]any{"srcID": gone, "targetID": blk}, failure.NotFound},
		"document.set_attr":            {map[string]any{"id": gone, "attrs": map[string]any{"icon": "1f4d4"}}, failure.NotFound},
		"block.update":                 {map[string]any{"id": gone, "data": "x"}, failure.NotFound},
		"block.set_attrs":              {map[string]any{"id": gone, "attrs": map[string]any{"custom-x": "1"}}, failure.NotFound},
		"block.delete":                 {map[string]any{"id": gone}, failure.NotFound},
		"block.set_fold_state":         {map[string]any{"id": gone, "folded": true}, failure.NotFound},
		"block.append":                 {map[string]any{"parentID": gone, "data": "x"}, failure.NotFound},
		"block.prepend":                {map[string]any{"parentID": gone, "data": "x"}, failure.NotFound},
		"block.insert":                 {map[string]any{"previousID": gone, "data": "x"}, failure.NotFound},
		"block.move":                   {map[string]any{"id": gone, "previousID": blk}, failure.NotFound},
		"block.replace":                {map[string]any{"id": gone, "old": "a", "new": "b"}, failure.NotFound},
		"block.add_to_daily_note":      {map[string]any{"notebook": gone, "data": "x", "position": "append"}, failure.NotFound},
		"block.transfer_references":    {map[string]any{"fromID": gone, "toID": blk}, failure.NotFound},
		"fs.write":                     {map[string]any{"path": "/NoSuchNotebook/x", "content": "x"}, failure.NotFound},
		"fs.rm":                        {map[string]any{"path": "/Strict/Nothing"}, failure.NotFound},
		"fs.mv":                        {map[string]any{"from": "/Strict/Nothing", "to": "/Strict/Else"}, failure.NotFound},
		"fs.reorder":                   {map[string]any{"path": "/Strict/Nothing", "orderedPaths": []string{}}, failure.NotFound},
		"fs.replace":                   {map[string]any{"path": "/Strict/Nothing", "old": "a", "new": "b"}, failure.NotFound},
		"file.upload_asset":            {map[string]any{"uploadSource": "staged:gone"}, failure.UploadSourceUnknown},
		"file.create_template":         {map[string]any{"path": "t.md", "content": strings.Repeat("x", tools.DefaultTemplateBytes+1)}, failure.InvalidArguments},
		"file.update_template":         {map[string]any{"path": "none.md", "content": "x"}, failure.NotFound},
		"file.delete_template":         {map[string]any{"path": "none.md"}, failure.NotFound},
		"file.save_doc_as_template":    {map[string]any{"id": gone, "name": "T"}, failure.NotFound},
		"file.export_resources":        {map[string]any{"paths": []string{"data/../conf"}}, failure.InvalidArguments},
		"file.extract_doc":             {map[string]any{"id": gone}, failure.NotFound},
		"file.remove_unused_assets":    {map[string]any{}, failure.NotFound},
		"file.rename_asset":            {map[string]any{"oldPath": "assets/none.png", "newName": "y"}, failure.NotFound},
		"file.delete_asset":            {map[string]any{"path": "assets/none.png"}, failure.NotFound},
		"system.notify":                {map[string]any{"msg": " "}, failure.InvalidArguments},
		"av.create":                    {map[string]any{"parentID": gone}, failure.NotFound},
		"av.duplicate":                 {map[string]any{"avID": gone}, failure.NotFound},
		"av.rename":                    {map[string]any{"avID": gone, "name": "x"}, failure.NotFound},
		"av.add_column":                {map[string]any{"avID": gone, "keyName": "x", "keyType": "text"}, failure.NotFound},
		"av.add_rows":                  {map[string]any{"avID": gone, "primaryKeyTexts": []string{"x"}}, failure.NotFound},
		"av.set_cells":                 {map[string]any{"avID": gone, "rowID": gone, "columnID": gone, "value": "x"}, failure.NotFound},
		"av.remove_rows":               {map[string]any{"avID": gone, "srcIDs": []string{gone}}, failure.NotFound},
		"av.remove_column":             {map[string]any{"avID": gone, "keyID": gone}, failure.NotFound},
		"av.add_view":                  {map[string]any{"avID": gone, "blockID": gone, "viewID": gone, "layout": "table", "name": "x"}, failure.NotFound},
		"av.set_filters":               {map[string]any{"avID": gone, "blockID": gone, "viewID": gone, "filters": []any{}}, failure.NotFound},
		"av.set_sorts":                 {map[string]any{"avID": gone, "blockID": gone, "viewID": gone, "sorts": []any{}}, failure.NotFound},
		"av.set_group":                 {map[string]any{"avID": gone, "blockID": gone, "viewID": gone, "group": map[string]any{"field": "", "method": 0, "order": 0, "hideEmpty": false}}, failure.NotFound},
		"av.set_column_visibility":     {map[string]any{"avID": gone, "blockID": gone, "viewID": gone, "keyID": gone, "hidden": true}, failure.NotFound},
		"av.set_column_order":          {map[string]any{"avID": gone, "blockID": gone, "viewID": gone, "keyIDs": []string{gone}}, failure.NotFound},
		"av.set_column_options":        {map[string]any{"avID": gone, "keyID": gone, "options": []map[string]any{}}, failure.NotFound},
		"av.duplicate_rows":            {map[string]any{"avID": gone, "sourceRowIDs": []string{gone}}, failure.NotFound},
		"av.set_new_item_templates":    {map[string]any{"avID": gone, "blockID": gone, "templates": []map[string]any{}}, failure.NotFound},
		"av.create_from_template":      {map[string]any{"avID": gone, "blockID": gone, "templateID": gone}, failure.NotFound},
		"system.perform_sync":          {map[string]any{"upload": true}, failure.InvalidArguments},
		"feedback.submit":              {map[string]any{"description": " "}, failure.InvalidArguments},
		"mascot.buy":                   {map[string]any{"item_id": "caviar"}, failure.NotFound},
		"tag.rename":                   {map[string]any{"oldLabel": "nosuchtag", "newLabel": "x"}, failure.NotFound},
		"tag.remove":                   {map[string]any{"label": "nosuchtag"}, failure.NotFound},
		"timeline.create_node":         {map[string]any{"name": "n", "scope": "document", "documentId": gone}, failure.NotFound},
		"timeline.delete_node":         {map[string]any{"documentId": gone, "tag": "sisyphustimeline_" + gone + "_n"}, failure.NotFound},
		"timeline.rollback_document":   {map[string]any{"documentId": gone, "tag": "sisyphustimeline_" + gone + "_n"}, failure.NotFound},
		"timeline.rollback_block":      {map[string]any{"documentId": gone, "tag": "sisyphustimeline_" + gone + "_n", "changeKey": "k"}, failure.NotFound},
		"flashcard.review_card":        {map[string]any{"deckID": gone, "cardID": gone, "rating": 3}, failure.NotFound},
		"flashcard.create_card":        {map[string]any{"deckID": "", "blockIDs": []string{gone}}, failure.NotFound},
		"flashcard.remove_card":        {map[string]any{"deckID": "", "blockIDs": []string{gone}}, failure.NotFound},
		"search.find_replace":          {map[string]any{"k": "x", "r": "y", "ids": []string{gone}}, failure.NotFound},
		"av.configure_two_way_relation": {map[string]any{"avID": gone, "blockID": gone, "keyID": gone, "destinationAvID": gone, "backRelationKeyID": blk,
			"sourceName": "s", "destinationName": "d"}, failure.NotFound},
		"av.configure_rollup": {map[string]any{"avID": gone, "blockID": gone, "keyID": gone, "relationKeyID": gone, "destinationKeyID": gone,
			"calc": map[string]any{"operator": "Sum"}}, failure.NotFound},
		"av.set_relation": {map[string]any{"avID": gone, "blockID": gone, "itemID": gone, "keyID": gone, "relatedItemIDs": []string{}}, failure.NotFound},
	}
	before := s.Text(t, doc)
	for _, tool := range s.R.Tools() {
		for _, a := range tool.Actions {
			if a.Policy.Class == strict.Read {
				continue
			}
			name := tool.Name + "." + a.Name
			c, ok := cases[name]
			if !ok {
				t.Errorf("%s is a write without a preflight refusal case here", name)
				continue
			}
			args := tooltest.CopyArgs(c.args, "action", a.Name, "validateOnly", true)
			if a.Policy.Class == strict.External {
				delete(args, "validateOnly")
			}
			e := s.WantErr(t, tool.Name, args, c.code)
			if e.WriteAttempted == nil || *e.WriteAttempted || e.RequestID != "" {
				t.Errorf("%s: refused preflight %+v", name, e)
			}
			delete(cases, name)
		}
	}
	for name := range cases {
		t.Errorf("case %s names no write action", name)
	}
	if after := s.Text(t, doc); after != before {
		t.Fatal("a refused preflight changed the document")
	}
}

// TestHelpExamplesAreValid: every action's help example is a complete
// call that binds and parses: run as is (writes as their preflight), it is
// never refused as invalid_arguments (a placeholder id may be not_found).
func TestHelpExamplesAreValid(t *testing.T) {
	s := tooltest.NewStrict(t, false, testTools)
	for _, tool := range s.R.Tools() {
		for _, a := range tool.Actions {
			h := s.OK(t, tool.Name, map[string]any{"action": "help", "topic": a.Name})
			ex := h["example"].(map[string]any)
			if a.Policy.Class != strict.Read && a.Policy.Class != strict.External && ex["validateOnly"] != true {
				t.Errorf("%s.%s: the example of a strict write is its preflight (validateOnly:true): %v", tool.Name, a.Name, ex)
			}
			if len(ex) < 2 && len(a.Params) > 0 {
				t.Errorf("%s.%s: the example names no argument: %v", tool.Name, a.Name, ex)
			}
			if a.Policy.Class == strict.External {
				continue // running it would have an effect
			}
			if _, err := s.Call(t, tool.Name, ex); err != nil && err.Code == failure.InvalidArguments {
				t.Errorf("%s.%s: its example %v is refused: %s", tool.Name, a.Name, ex, err.Message)
			}
		}
	}
}
