package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// policyAt is a policy giving the fixture's notebook one level.
func policyAt(nb string, l tools.Level) *tools.Policy {
	return &tools.Policy{Notebooks: map[string]tools.Level{nb: l}, Default: tools.LevelRead, AllActions: true, Strict: true, Version: "test:" + l.String()}
}

// TestEveryActionChecksItsNotebook: every action that touches a notebook
// is refused, before it runs (preflight included), where the notebook's
// level is below what it needs, and passes the gate at or above it. In a
// hidden notebook (none) it answers exactly what it answers for things
// that do not exist: the same call with every id, name and label of the
// hidden notebook replaced by one that names nothing gets the same answer,
// with the names swapped back.
func TestEveryActionChecksItsNotebook(t *testing.T) {
	s := tooltest.NewStrict(t, false, testTools)
	nb, doc, b0, b1 := s.NB, s.Doc, s.Blocks[0], s.Blocks[1]
	// A database shown in the document, with one detached row.
	db := s.MkDatabase(t, doc)
	row := tooltest.NewID()
	if err := s.C.AddAttributeViewBlocks(context.Background(), siyuan.AddAVBlocksRequest{AvID: db.AV, BlockID: db.Block,
		Srcs: []siyuan.AVSrc{{ItemID: row, Detached: true, Content: "row"}}}); err != nil {
		t.Fatal(err)
	}
	// A tag used in the notebook: tag.rename and tag.remove touch it.
	s.MkDoc(t, nb, "/Tagged", "tagged #gate#")
	// A card of the second block: flashcard.review_card and remove_card touch it.
	if _, err := s.C.AddRiffCards(context.Background(), siyuan.BuiltinDeckID, []string{b1}); err != nil {
		t.Fatal(err)
	}
	if err := s.C.FlushTransaction(context.Background()); err != nil {
		t.Fatal(err)
	}
	cards, err := s.C.GetRiffCards(context.Background(), siyuan.BuiltinDeckID, 1, 0)
	if err != nil || len(cards.Blocks) != 1 {
		t.Fatalf("the card: %+v %v", cards, err)
	}
	card := cards.Blocks[0].RiffCardID
	// What names something in the hidden notebook, and what names
	// nothing in its place.
	absentees := map[string]string{nb: tooltest.NewID(), doc: tooltest.NewID(), b0: tooltest.NewID(), b1: tooltest.NewID(),
		db.AV: tooltest.NewID(), db.Block: tooltest.NewID(), row: tooltest.NewID(), card: tooltest.NewID(),
		"Strict": "Absentee", "gate": "nosuchgate"}
	const (
		read  = tools.LevelRead
		write = tools.LevelWrite
		del   = tools.LevelDelete
		free  = tools.LevelNone // touches no notebook by its arguments
	)
	cases := map[string]struct {
		args map[string]any
		need tools.Level
	}{
		"notebook.list":                 {map[string]any{}, free},
		"notebook.get_conf":             {map[string]any{"notebook": nb}, read},
		"notebook.get_permissions":      {map[string]any{}, free},
		"notebook.create":               {map[string]any{"name": "N"}, free},
		"notebook.rename":               {map[string]any{"notebook": nb, "name": "R"}, write},
		"notebook.remove":               {map[string]any{"notebook": nb}, del},
		"notebook.set_conf":             {map[string]any{"notebook": nb, "conf": map[string]any{"sortMode": 6}}, write},
		"notebook.set_open_state":       {map[string]any{"notebook": nb, "opened": true}, read},
		"notebook.set_permission":       {map[string]any{"notebook": nb, "permission": "rwd"}, free},
		"notebook.set_icon":             {map[string]any{"notebook": nb, "icon": "1f4d4"}, write},
		"notebook.get_child_docs":       {map[string]any{"notebook": nb}, read},
		"document.lookup":               {map[string]any{"id": doc}, read},
		"document.get_doc":              {map[string]any{"id": doc}, read},
		"document.get_child_docs":       {map[string]any{"notebook": nb}, read},
		"document.list_tree":            {map[string]any{"notebook": nb}, read},
		"document.get_outline":          {map[string]any{"id": doc}, read},
		"document.create":               {map[string]any{"notebook": nb, "path": "/New"}, write},
		"document.rename":               {map[string]any{"id": doc, "title": "X"}, write},
		"document.remove":               {map[string]any{"id": doc}, del},
		"document.move":                 {map[string]any{"fromIDs": []string{doc}, "toID": nb}, write},
		"document.reorder":              {map[string]any{"parentID": nb, "orderedIDs": []string{doc}}, write},
		"document.set_child_sort_mode":  {map[string]any{"id": nb, "sortMode": 6}, write},
		"document.create_daily_note":    {map[string]any{"notebook": nb}, write},
		"document.duplicate":            {map[string]any{"id": doc}, write},
		"document.heading_to_doc":       {map[string]any{"headingID": b0, "targetNotebook": nb}, write},
		"document.doc_to_heading":       {map[string]any{"srcID": doc, "targetID": b0}, write},
		"document.get_child_sort_mode":  {map[string]any{"id": doc}, read},
		"document.get_child_blocks":     {map[string]any{"id": doc}, read},
		"document.set_attr":             {map[string]any{"id": doc, "attrs": map[string]any{"icon": "1f4d4"}}, write},
		"document.search_docs":          {map[string]any{"notebook": nb, "query": "Doc"}, read},
		"document.ensure_link_targets":  {map[string]any{"notebook": nb, "parentId": doc, "mode": "resolve", "targets": []any{map[string]any{"key": "k", "id": b0}}}, read},
		"block.get_kramdown":            {map[string]any{"id": b0}, read},
		"block.get_children":            {map[string]any{"id": doc}, read},
		"block.get_attrs":               {map[string]any{"id": b0}, read},
		"block.info":                    {map[string]any{"id": b0}, read},
		"block.dom":                     {map[string]any{"id": b0}, read},
		"block.update":                  {map[string]any{"id": b0, "data": "x"}, write},
		"block.set_attrs":               {map[string]any{"id": b0, "attrs": map[string]any{"custom-x": "1"}}, write},
		"block.delete":                  {map[string]any{"id": b0}, del},
		"block.set_fold_state":          {map[string]any{"id": b0, "folded": true}, write},
		"block.append":                  {map[string]any{"parentID": doc, "data": "x"}, write},
		"block.prepend":                 {map[string]any{"parentID": doc, "data": "x"}, write},
		"block.insert":                  {map[string]any{"previousID": b0, "data": "x"}, write},
		"block.move":                    {map[string]any{"id": b1, "parentID": doc}, write},
		"block.replace":                 {map[string]any{"id": b0, "old": "paragraph", "new": "p"}, write},
		"block.add_to_daily_note":       {map[string]any{"notebook": nb, "data": "x", "position": "append"}, write},
		"block.batch_kramdown":          {map[string]any{"ids": []string{b0, b1}}, free},
		"block.transfer_references":     {map[string]any{"fromID": b0, "toID": b1}, write},
		"block.breadcrumb":              {map[string]any{"id": b1}, read},
		"block.recent_updated":          {map[string]any{}, free},
		"block.word_count":              {map[string]any{"ids": []string{doc}}, read},
		"block.docs_info":               {map[string]any{"id": doc, "refCount": true}, read},
		"fs.ls":                         {map[string]any{"path": "/Strict"}, read},
		"fs.read":                       {map[string]any{"path": "/Strict/Doc"}, read},
		"fs.write":                      {map[string]any{"path": "/Strict/New", "content": "x"}, write},
		"fs.rm":                         {map[string]any{"path": "/Strict/Doc"}, del},
		"fs.mv":                         {map[string]any{"from": "/Strict/Doc", "to": "/Strict/Doc2"}, write},
		"fs.reorder":                    {map[string]any{"path": "/Strict", "orderedPaths": []string{"/Strict/Doc"}}, write},
		"fs.tree":                       {map[string]any{"path": "/Strict"}, read},
		"fs.search":                     {map[string]any{"path": "/Strict", "query": "paragraph"}, read},
		"fs.replace":                    {map[string]any{"path": "/Strict/Doc", "edit": map[string]any{"old": "paragraph", "new": "p"}}, write},
		"search.fulltext":               {map[string]any{"query": "paragraph", "paths": []string{nb}}, read},
		"search.query_sql":              {map[string]any{"stmt": "SELECT id FROM blocks LIMIT 1"}, free},
		"search.search_assets":          {map[string]any{"keyword": "png"}, free},
		"search.semantic":               {map[string]any{"query": "paragraph", "paths": []string{nb}}, read},
		"search.knowledge":              {map[string]any{"query": "paragraph", "notebooks": []string{nb}}, read},
		"search.check_anchor":           {map[string]any{"candidates": []string{"x"}, "candidateKind": "name"}, free},
		"search.list_invalid_refs":      {map[string]any{}, free},
		"search.find_replace":           {map[string]any{"k": "paragraph", "r": "p", "ids": []string{b0}}, write},
		"search.get_backlinks":          {map[string]any{"id": b0}, read},
		"search.fulltext_asset_content": {map[string]any{"query": "x"}, free},
		"search.search_refs":            {map[string]any{"id": b0, "k": "paragraph"}, read},
		"file.upload_asset":             {map[string]any{"uploadSource": "staged:unknown"}, free},
		"file.list_templates":           {map[string]any{}, free},
		"file.read_template":            {map[string]any{"path": "t.md"}, free},
		"file.create_template":          {map[string]any{"path": "t.md", "content": "x"}, free},
		"file.update_template":          {map[string]any{"path": "t.md", "content": "x"}, free},
		"file.delete_template":          {map[string]any{"path": "t.md"}, free},
		"file.save_doc_as_template":     {map[string]any{"id": doc, "name": "T"}, read},
		"file.render":                   {map[string]any{"id": doc, "path": "t.md"}, read},
		"file.export_md":                {map[string]any{"id": doc}, read},
		// A hidden notebook's folder answers as a missing one (not_found,
		// file.TestExportResourcesScope), never permission_denied.
		"file.export_resources":             {map[string]any{"paths": []string{"data/" + nb}}, free},
		"file.extract_doc":                  {map[string]any{"id": doc}, read},
		"file.list_unused_assets":           {map[string]any{}, free},
		"file.get_doc_assets":               {map[string]any{"id": doc}, read},
		"file.audit_image_refs":             {map[string]any{"id": doc, "expectedRefs": []string{"assets/x.png"}}, read},
		"file.get_image_ocr_text":           {map[string]any{"path": "assets/x.png"}, free},
		"file.read_image":                   {map[string]any{"path": "assets/x.png", "id": doc}, read},
		"file.export_markdown_snapshot":     {map[string]any{"notebookID": nb, "roots": []string{"/"}}, read},
		"file.remove_unused_assets":         {map[string]any{}, free},
		"file.rename_asset":                 {map[string]any{"oldPath": "assets/x.png", "newName": "y"}, free},
		"file.delete_asset":                 {map[string]any{"path": "assets/x.png"}, free},
		"system.version":                    {map[string]any{}, free},
		"system.bootstrap":                  {map[string]any{}, free},
		"system.notify":                     {map[string]any{"msg": "hi"}, free},
		"av.get":                            {map[string]any{"id": db.AV}, read},
		"av.render":                         {map[string]any{"avID": db.AV}, read},
		"av.get_attribute_view_keys":        {map[string]any{"avID": db.AV}, read},
		"av.get_attribute_view_filter_sort": {map[string]any{"id": db.AV}, read},
		"av.search":                         {map[string]any{"keyword": ""}, free},
		"av.get_primary_key_values":         {map[string]any{"id": db.AV}, read},
		"av.create":                         {map[string]any{"parentID": doc}, write},
		"av.duplicate":                      {map[string]any{"avID": db.AV}, write},
		"av.rename":                         {map[string]any{"avID": db.AV, "name": "R"}, write},
		"av.add_column":                     {map[string]any{"avID": db.AV, "keyName": "K", "keyType": "text"}, write},
		"av.add_rows":                       {map[string]any{"avID": db.AV, "primaryKeyTexts": []string{"new"}}, write},
		"av.set_cells":                      {map[string]any{"avID": db.AV, "rowID": row, "columnID": db.Primary, "value": "x"}, write},
		"av.remove_rows":                    {map[string]any{"avID": db.AV, "srcIDs": []string{row}}, del},
		"av.remove_column":                  {map[string]any{"avID": db.AV, "keyID": db.Select}, del},
		"av.add_view":                       {map[string]any{"avID": db.AV, "blockID": db.Block, "viewID": tooltest.NewID(), "layout": "table", "name": "V"}, write},
		"av.set_filters":                    {map[string]any{"avID": db.AV, "blockID": db.Block, "viewID": db.Block, "filters": []any{}}, write},
		"av.set_sorts":                      {map[string]any{"avID": db.AV, "blockID": db.Block, "viewID": db.Block, "sorts": []any{}}, write},
		"av.set_group":                      {map[string]any{"avID": db.AV, "blockID": db.Block, "viewID": db.Block, "group": map[string]any{"field": "", "method": 0, "order": 0, "hideEmpty": false}}, write},
		"av.set_column_visibility":          {map[string]any{"avID": db.AV, "blockID": db.Block, "viewID": db.Block, "keyID": db.Select, "hidden": true}, write},
		"av.set_column_order":               {map[string]any{"avID": db.AV, "blockID": db.Block, "viewID": db.Block, "keyIDs": []string{db.Select}}, write},
		"av.set_column_options":             {map[string]any{"avID": db.AV, "keyID": db.Select, "options": []map[string]any{{"name": "x"}}}, write},
		"av.duplicate_rows":                 {map[string]any{"avID": db.AV, "sourceRowIDs": []string{row}}, write},
		"av.set_new_item_templates":         {map[string]any{"avID": db.AV, "blockID": db.Block, "templates": []map[string]any{}}, write},
		"av.create_from_template":           {map[string]any{"avID": db.AV, "blockID": db.Block, "templateID": tooltest.NewID()}, write},
		"system.get_version":                {map[string]any{}, free},
		"system.get_current_time":           {map[string]any{}, free},
		"system.changelog":                  {map[string]any{}, free},
		"system.conf":                       {map[string]any{}, free},
		"system.network":                    {map[string]any{}, free},
		"system.workspace_info":             {map[string]any{}, free},
		"system.audit_environment":          {map[string]any{}, free},
		"system.list_packages":              {map[string]any{"kind": "plugin"}, free},
		"system.get_plugin":                 {map[string]any{"pluginName": "none"}, free},
		"system.list_snippets":              {map[string]any{}, free},
		"system.list_plugin_storage":        {map[string]any{"pluginName": "none"}, free},
		"system.read_plugin_storage":        {map[string]any{"pluginName": "none", "path": "config.json"}, free},
		"system.perform_sync":               {map[string]any{}, free},
		"feedback.submit":                   {map[string]any{"description": "x"}, free},
		"mascot.get_balance":                {map[string]any{}, free},
		"mascot.shop":                       {map[string]any{}, free},
		"mascot.buy":                        {map[string]any{"item_id": "milk"}, free},
		"tag.list":                          {map[string]any{}, free},
		"tag.rename":                        {map[string]any{"oldLabel": "gate", "newLabel": "g2"}, write},
		"tag.remove":                        {map[string]any{"label": "gate"}, del},
		"timeline.list_nodes":               {map[string]any{"scope": "document", "documentId": doc}, read},
		"timeline.create_node":              {map[string]any{"name": "gate", "scope": "document", "documentId": doc}, write},
		"timeline.compare_node":             {map[string]any{"documentId": doc, "tag": "sisyphustimeline_" + doc + "_gate"}, read},
		"timeline.delete_node":              {map[string]any{"documentId": doc, "tag": "sisyphustimeline_" + doc + "_gate"}, del},
		"timeline.rollback_document":        {map[string]any{"documentId": doc, "tag": "sisyphustimeline_" + doc + "_gate"}, del},
		"timeline.rollback_block":           {map[string]any{"documentId": doc, "tag": "sisyphustimeline_" + doc + "_gate", "changeKey": "0123456789abcdef01234567"}, del},
		"flashcard.list_cards":              {map[string]any{"scope": "notebook", "notebook": nb, "filter": "due"}, read},
		"flashcard.get_decks":               {map[string]any{}, free},
		"flashcard.get_cards":               {map[string]any{"deckID": ""}, free},
		"flashcard.review_card":             {map[string]any{"deckID": siyuan.BuiltinDeckID, "cardID": card, "rating": 3}, write},
		"flashcard.create_card":             {map[string]any{"deckID": "", "blockIDs": []string{b0}}, write},
		"flashcard.remove_card":             {map[string]any{"deckID": "", "blockIDs": []string{b1}}, del},
		"extension.list":                    {map[string]any{}, free},
		"av.configure_two_way_relation": {map[string]any{"avID": db.AV, "blockID": db.Block, "keyID": db.Select, "destinationAvID": db.AV,
			"backRelationKeyID": row, "sourceName": "S", "destinationName": "D"}, write},
		"av.configure_rollup": {map[string]any{"avID": db.AV, "blockID": db.Block, "keyID": db.Select, "relationKeyID": db.Select,
			"destinationKeyID": db.Primary, "calc": map[string]any{"operator": "Sum"}}, write},
		"av.set_relation": {map[string]any{"avID": db.AV, "blockID": db.Block, "itemID": row, "keyID": db.Select, "relatedItemIDs": []string{}}, write},
		"extension.validate_package": {map[string]any{"package": map[string]any{"type": "theme", "manifest": map[string]any{"name": "t", "modes": []any{"dark"}},
			"files": map[string]any{"theme.css": "a{}"}}}, free},
		"extension.diagnose_plugin_mcp": {map[string]any{"pluginName": "none"}, free},
	}
	// Calls that reach every notebook at once are refused while one is
	// hidden, whatever they name (a policy-only refusal).
	refusedWhileHidden := map[string]bool{"search.query_sql": true, "file.remove_unused_assets": true, "file.rename_asset": true,
		"system.list_plugin_storage": true, "system.read_plugin_storage": true}
	before := s.Text(t, doc)
	for _, tool := range s.R.Tools() {
		for _, a := range tool.Actions {
			name := tool.Name + "." + a.Name
			c, ok := cases[name]
			if !ok {
				t.Errorf("%s has no case here: every action must say what it needs of a notebook", name)
				continue
			}
			for _, level := range []tools.Level{tools.LevelNone, tools.LevelRead, tools.LevelWrite, tools.LevelDelete} {
				s.Policy = policyAt(nb, level)
				args := tooltest.CopyArgs(c.args, "action", a.Name)
				if a.Policy.Class != strict.Read && a.Policy.Class != strict.External {
					args["validateOnly"] = true // a preflight: the gate refuses it too
				}
				if name == "system.notify" {
					continue // an external effect without a preflight: checked below
				}
				if level == tools.LevelNone && c.need != free {
					hidden, missing := s.AsMissing(t, tool.Name, args, absentees)
					if hidden != missing {
						t.Errorf("%s in a hidden notebook answers\n  %s\nand for things that do not exist\n  %s", name, hidden, missing)
					}
					continue
				}
				_, err := s.Call(t, tool.Name, args)
				denied := err != nil && err.Code == failure.PermissionDenied
				switch {
				case c.need != free && level < c.need && !denied:
					t.Errorf("%s at %s: got %v, want permission_denied", name, level, err)
				case c.need != free && level < c.need:
					if err.Details["notebook"] != nb || err.Details["permission"] != level.String() || err.Details["requiredPermission"] != c.need.String() {
						t.Errorf("%s at %s: refusal details %v", name, level, err.Details)
					}
					if a.Policy.Class != strict.Read && (err.WriteAttempted == nil || *err.WriteAttempted) {
						t.Errorf("%s at %s: a refused write must say writeAttempted:false: %+v", name, level, err)
					}
				case denied && !(level == tools.LevelNone && refusedWhileHidden[name]):
					t.Errorf("%s at %s: refused although it needs %s: %v", name, level, c.need, err)
				}
			}
			delete(cases, name)
		}
	}
	for name := range cases {
		t.Errorf("case %s names no action", name)
	}
	if after := s.Text(t, doc); after != before {
		t.Fatal("a gated call changed the document")
	}
	s.Policy = policyAt(nb, tools.LevelNone)
	if _, err := s.Call(t, "system", map[string]any{"action": "notify", "msg": "hi"}); err != nil {
		t.Fatalf("notify touches no notebook: %v", err)
	}
}

// TestHiddenNotebooks: a none notebook is left out of every listing, and
// raw SQL is refused while one exists.
func TestHiddenNotebooks(t *testing.T) {
	s := tooltest.NewStrict(t, false, testTools)
	other, err := s.C.CreateNotebook(context.Background(), "Visible")
	if err != nil {
		t.Fatal(err)
	}
	s.Policy = policyAt(s.NB, tools.LevelNone)
	mentions := func(v any) bool {
		b, _ := json.Marshal(v)
		return strings.Contains(string(b), s.NB)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"notebook", map[string]any{"action": "list"}},
		{"notebook", map[string]any{"action": "get_permissions"}},
		{"system", map[string]any{"action": "bootstrap"}},
		{"fs", map[string]any{"action": "ls", "path": "/"}},
		{"search", map[string]any{"action": "fulltext", "query": "paragraph"}},
		{"block", map[string]any{"action": "batch_kramdown", "ids": []string{s.Blocks[0], s.Doc}}},
		{"block", map[string]any{"action": "recent_updated"}},
	} {
		res := s.OK(t, c.tool, c.args)
		if mentions(res) {
			t.Errorf("%s %v shows the hidden notebook: %v", c.tool, c.args["action"], res)
		}
	}
	// Asked by id, a hidden notebook's permission is a missing notebook's.
	s.WantMissing(t, "notebook", map[string]any{"action": "get_permissions", "notebook": s.NB}, map[string]string{s.NB: tooltest.NewID()})
	// So is setting it: only the person unhides a notebook.
	s.WantMissing(t, "notebook", map[string]any{"action": "set_permission", "notebook": s.NB, "permission": "rwd", "validateOnly": true}, map[string]string{s.NB: tooltest.NewID()})
	if res := s.OK(t, "notebook", map[string]any{"action": "list"}); !strings.Contains(fmt.Sprint(res), other.ID) {
		t.Fatalf("the visible notebook is missing: %v", res)
	}
	e := s.WantErr(t, "search", map[string]any{"action": "query_sql", "stmt": "SELECT id FROM blocks"}, failure.PermissionDenied)
	if !strings.Contains(e.Message, "hidden") {
		t.Fatalf("query_sql refusal: %v", e)
	}
	s.Policy = policyAt(s.NB, tools.LevelRead)
	s.OK(t, "search", map[string]any{"action": "query_sql", "stmt": "SELECT id FROM blocks LIMIT 1"})
	// Each listing shows the permission it lists under.
	for _, n := range s.OK(t, "notebook", map[string]any{"action": "list"})["notebooks"].([]any) {
		if p := n.(map[string]any)["permission"]; p != "r" {
			t.Errorf("notebook list permission %v", p)
		}
	}
}

// TestUnreadableConfigurationFailsClosed: when the configuration cannot be
// read, every call touching a notebook and every write is refused, saying
// why; the server's version still answers.
func TestUnreadableConfigurationFailsClosed(t *testing.T) {
	s := tooltest.NewStrict(t, false, testTools)
	s.Policy = &tools.Policy{Err: fmt.Errorf("notebookPermissions is not a JSON object"), Default: tools.LevelRead, Strict: true}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"notebook", map[string]any{"action": "list"}},
		{"block", map[string]any{"action": "get_kramdown", "id": s.Blocks[0]}},
		{"block", map[string]any{"action": "update", "id": s.Blocks[0], "data": "x", "validateOnly": true}},
		{"system", map[string]any{"action": "notify", "msg": "x"}},
		{"system", map[string]any{"action": "bootstrap"}},
	} {
		e := s.WantErr(t, c.tool, c.args, failure.ConfigUnavailable)
		if !strings.Contains(e.Message, "not a JSON object") {
			t.Errorf("%s %v: the refusal does not say why: %v", c.tool, c.args["action"], e)
		}
	}
	s.OK(t, "system", map[string]any{"action": "version"})
}

// TestDisabledActions: a disabled action vanishes from the schema and help
// and answers action_disabled; a tool without enabled actions is disabled.
func TestDisabledActions(t *testing.T) {
	s := tooltest.NewStrict(t, false, testTools)
	off := false
	s.Policy = &tools.Policy{Default: tools.LevelDelete, Strict: true, Version: "v", Tools: map[string]tools.Switch{
		"block":  {Actions: map[string]bool{"update": false, "delete": true}},
		"search": {Actions: map[string]bool{"fulltext": false, "query_sql": false, "search_assets": false, "semantic": false, "knowledge": false, "check_anchor": false, "list_invalid_refs": false, "find_replace": false, "get_backlinks": false, "fulltext_asset_content": false, "search_refs": false}},
		"fs":     {Enabled: &off},
	}}
	ctx := tools.WithPolicy(context.Background(), s.Policy)
	v, err := s.R.View(ctx)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := s.R.Tool("block")
	enum := block.InputSchema(v)["properties"].(map[string]any)["action"].(map[string]any)["enum"].([]string)
	if slices.Contains(enum, "update") || !slices.Contains(enum, "delete") {
		t.Fatalf("block actions %v: update is disabled, delete enabled", enum)
	}
	var visible []string
	for _, tl := range s.R.Visible(v) {
		visible = append(visible, tl.Name)
	}
	if slices.Contains(visible, "search") || slices.Contains(visible, "fs") || !slices.Contains(visible, "block") {
		t.Fatalf("visible tools %v", visible)
	}
	e := s.WantErr(t, "block", map[string]any{"action": "update", "id": s.Blocks[0], "data": "x", "validateOnly": true}, failure.ActionDisabled)
	if e.Details["action"] != "update" || e.WriteAttempted == nil || *e.WriteAttempted {
		t.Fatalf("disabled action: %+v", e)
	}
	s.WantErr(t, "block", map[string]any{"action": "help", "topic": "update"}, failure.ActionDisabled)
	help := s.OK(t, "block", map[string]any{"action": "help"})
	if strings.Contains(fmt.Sprint(help["actions"]), "action:update ") {
		t.Fatalf("help lists a disabled action: %v", help["actions"])
	}
	for _, tl := range []string{"search", "fs"} {
		e := s.WantErr(t, tl, map[string]any{"action": "help"}, failure.ActionDisabled)
		if !strings.Contains(e.Message, "the tool "+tl+" is disabled") {
			t.Errorf("%s: %v", tl, e)
		}
	}
	boot := s.OK(t, "system", map[string]any{"action": "bootstrap"})
	if tl := fmt.Sprint(boot["tools"]); strings.Contains(tl, "search") || strings.Contains(tl, "fs") {
		t.Fatalf("bootstrap lists disabled tools: %v", tl)
	}
	// The dangerous-by-default actions start disabled.
	s.Policy = &tools.Policy{Default: tools.LevelDelete, Strict: true}
	for _, n := range []string{"block.delete", "document.remove", "notebook.remove", "notebook.set_permission"} {
		tl, a, _ := strings.Cut(n, ".")
		s.WantErr(t, tl, map[string]any{"action": a, "validateOnly": true}, failure.ActionDisabled)
	}
}

// fakeConfirmer answers the form as a person would.
type fakeConfirmer struct {
	form   bool
	answer tools.FormAnswer
	asked  int
}

func (f *fakeConfirmer) CanForm() bool { return f.form }
func (f *fakeConfirmer) Form(_ context.Context, msg string, schema map[string]any) (tools.FormAnswer, error) {
	f.asked++
	return f.answer, nil
}

func TestConfirm(t *testing.T) {
	s := tooltest.NewStrict(t, false, testTools)
	yes, no := true, false
	raw := func(m map[string]any) json.RawMessage { b, _ := json.Marshal(m); return b }
	del := map[string]any{"action": "delete", "id": s.Blocks[0], "expectedStateHash": "abcd", "requestId": "abcd"}
	p, pending := s.R.Pending("block", tools.Input{Raw: raw(del)})
	if !pending || p.Tool != "block" || p.Action != "delete" || p.Args["id"] == nil || p.Args["requestId"] != nil {
		t.Fatalf("pending: %+v %v", p, pending)
	}
	for _, c := range []map[string]any{
		{"action": "delete", "id": s.Blocks[0], "validateOnly": true},
		{"action": "update", "id": s.Blocks[0], "data": "x"},
		{"action": "get_kramdown", "id": s.Blocks[0]},
	} {
		if _, pending := s.R.Pending("block", tools.Input{Raw: raw(c)}); pending {
			t.Errorf("%v needs no confirmation", c)
		}
	}
	ctx := context.Background()
	withConfirm := func(v *bool) tools.Pending {
		q := p
		q.Confirm = v
		return q
	}
	for _, c := range []struct {
		name   string
		conf   *fakeConfirmer
		p      tools.Pending
		code   failure.Code // "" : confirmed
		cancel *bool
		asked  int
	}{
		{"no form, no confirm", &fakeConfirmer{}, p, failure.ConfirmationRequired, nil, 0},
		{"no form, confirm true", &fakeConfirmer{}, withConfirm(&yes), "", nil, 0},
		{"no form, confirm false", &fakeConfirmer{}, withConfirm(&no), failure.ConfirmationDeclined, &no, 0},
		{"form accept", &fakeConfirmer{form: true, answer: tools.FormAnswer{Action: "accept", Content: map[string]any{"confirm": true}}}, p, "", nil, 1},
		{"form accept no", &fakeConfirmer{form: true, answer: tools.FormAnswer{Action: "accept", Content: map[string]any{"confirm": false}}}, p, failure.ConfirmationDeclined, &no, 1},
		{"form decline", &fakeConfirmer{form: true, answer: tools.FormAnswer{Action: "decline"}}, p, failure.ConfirmationDeclined, &no, 1},
		{"form cancel", &fakeConfirmer{form: true, answer: tools.FormAnswer{Action: "cancel"}}, p, failure.ConfirmationCancelled, &yes, 1},
		{"form without content", &fakeConfirmer{form: true, answer: tools.FormAnswer{Action: "accept"}}, p, failure.ConfirmationInvalid, &no, 1},
		{"form wrong type", &fakeConfirmer{form: true, answer: tools.FormAnswer{Action: "accept", Content: map[string]any{"confirm": "yes"}}}, p, failure.ConfirmationInvalid, &no, 1},
		{"form odd action", &fakeConfirmer{form: true, answer: tools.FormAnswer{Action: "later"}}, p, failure.ConfirmationInvalid, &no, 1},
		// With forms, confirm:true alone never passes: the form is shown.
		{"form ignores confirm", &fakeConfirmer{form: true, answer: tools.FormAnswer{Action: "decline"}}, withConfirm(&yes), failure.ConfirmationDeclined, &no, 1},
	} {
		err := tools.Confirm(ctx, c.conf, c.p)
		var fe *failure.Error
		switch {
		case c.code == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.code != "" && (!asFailure(err, &fe) || fe.Code != c.code):
			t.Errorf("%s: got %v, want %s", c.name, err, c.code)
		case c.code != "" && (fe.WriteAttempted == nil || *fe.WriteAttempted || !sameBool(fe.Cancelled, c.cancel)):
			t.Errorf("%s: %+v", c.name, fe)
		}
		if c.conf.asked != c.asked {
			t.Errorf("%s: asked %d times, want %d", c.name, c.conf.asked, c.asked)
		}
	}
	// Unasked, the registry refuses; asked and confirmed, it runs.
	s.Unconfirmed = true
	s.Policy = &tools.Policy{Default: tools.LevelDelete, AllActions: true, Strict: true}
	pre := s.OK(t, "block", map[string]any{"action": "delete", "id": s.Blocks[0], "validateOnly": true})
	commit := tooltest.CommitArgs(map[string]any{"action": "delete", "id": s.Blocks[0]}, pre)
	s.WantErr(t, "block", commit, failure.ConfirmationRequired)
	if !s.Exists(t, s.Blocks[0]) {
		t.Fatal("an unconfirmed delete ran")
	}
	s.Unconfirmed = false
	s.OK(t, "block", commit)

	// The system tool's dangerous actions: a read (workspace_info) and an
	// external effect (perform_sync); validateOnly is no way around asking.
	for _, action := range []string{"workspace_info", "perform_sync"} {
		if _, pending := s.R.Pending("system", tools.Input{Raw: raw(map[string]any{"action": action})}); !pending {
			t.Errorf("system.%s needs confirmation", action)
		}
		s.Unconfirmed = true
		s.WantErr(t, "system", map[string]any{"action": action}, failure.ConfirmationRequired)
		if res, err := s.Call(t, "system", map[string]any{"action": action, "validateOnly": true}); err == nil {
			t.Errorf("system.%s with validateOnly ran unconfirmed: %v", action, res)
		}
		s.Unconfirmed = false
		s.OK(t, "system", map[string]any{"action": action})
	}
	// tag.remove is dangerous too.
	s.MkDoc(t, s.NB, "/Tagged", "tagged #confirm#")
	s.Unconfirmed = true
	pre = s.OK(t, "tag", map[string]any{"action": "remove", "label": "confirm", "validateOnly": true})
	s.WantErr(t, "tag", tooltest.CommitArgs(map[string]any{"action": "remove", "label": "confirm"}, pre), failure.ConfirmationRequired)
	s.Unconfirmed = false
	s.OK(t, "tag", tooltest.CommitArgs(map[string]any{"action": "remove", "label": "confirm"}, pre))
	// So is flashcard.remove_card.
	if _, err := s.C.AddRiffCards(ctx, siyuan.BuiltinDeckID, []string{s.Blocks[1]}); err != nil {
		t.Fatal(err)
	}
	rm := map[string]any{"action": "remove_card", "deckID": "", "blockIDs": []string{s.Blocks[1]}}
	s.Unconfirmed = true
	pre = s.OK(t, "flashcard", tooltest.CopyArgs(rm, "validateOnly", true))
	s.WantErr(t, "flashcard", tooltest.CommitArgs(rm, pre), failure.ConfirmationRequired)
	s.Unconfirmed = false
	s.OK(t, "flashcard", tooltest.CommitArgs(rm, pre))
}

func asFailure(err error, fe **failure.Error) bool {
	e, ok := err.(*failure.Error)
	*fe = e
	return ok
}

func sameBool(a, b *bool) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// TestDeniedNamesTheNotebookAndTheGrant: a permission refusal names the
// notebook by name and id, and the command a person runs to allow the call.
func TestDeniedNamesTheNotebookAndTheGrant(t *testing.T) {
	s := tooltest.NewStrict(t, false, testTools)
	s.Policy = policyAt(s.NB, tools.LevelRead)
	e := s.WantErr(t, "block", map[string]any{"action": "update", "id": s.Blocks[0], "data": "x", "validateOnly": true}, failure.PermissionDenied)
	nbs, err := s.C.ListNotebooks(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var name string
	for _, n := range nbs {
		if n.ID == s.NB {
			name = n.Name
		}
	}
	grant := "sisyphus config permission " + s.NB + " rw"
	if name == "" || e.Details["notebookName"] != name || e.Details["grantCommand"] != grant ||
		!strings.Contains(e.Message, fmt.Sprintf("%q (%s)", name, s.NB)) || !strings.Contains(e.Action, grant) {
		t.Fatalf("refusal %+v", e)
	}
}
