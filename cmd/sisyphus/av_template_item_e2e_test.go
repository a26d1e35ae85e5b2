package main

import (
	"context"
	"maps"
	"regexp"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// TestAVTemplateItemThroughTheBinary walks create_from_template through
// the binary against the embedded kernel: a template stored, one item
// made from it (preflighted, confirmed, replayed), checked in the kernel,
// a document-bound item with its document, a stale commit refused, and
// unknown ids refused at preflight.
func TestAVTemplateItemThroughTheBinary(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	s := startServeWith(t, "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", t.TempDir())
	a := connect(t, s.url, "2025-11-25")
	doc, _ := firstParagraph(a)
	avTemplateItemFlow(t, a, kernelClient(t, k.url, "tok"), doc, false)
}

// TestAVTemplateItemLive runs the same walk against a real SiYuan, in a
// notebook it creates and removes.
func TestAVTemplateItemLive(t *testing.T) {
	a, c, doc := liveDatabaseDoc(t, "avtplitem", "/Items", "first")
	avTemplateItemFlow(t, a, c, doc, true)
}

// avTemplateItemFlow walks create_from_template; live, it also has SiYuan
// make an item from the content template itself (createAttributeViewItem)
// and requires the two documents alike.
func avTemplateItemFlow(t *testing.T, a *agent, c *siyuan.Client, doc string, live bool) {
	ctx := context.Background()
	db := a.strictDo("av", map[string]any{"action": "create", "parentID": doc, "name": "Items",
		"columns":         []map[string]any{{"name": "Tags", "type": "mSelect"}, {"name": "Notes", "type": "text"}, {"name": "Due", "type": "date"}},
		"primaryKeyTexts": []string{"one"}})
	av, block := db["avID"].(string), db["blockID"].(string)
	t.Cleanup(func() { c.RemoveFile(context.Background(), "/data/storage/av/"+av+".json") })
	cols := db["columnIDs"].([]any)
	tags, notes, due := cols[0].(string), cols[1].(string), cols[2].(string)
	first := db["rowIDs"].([]any)[0].(string)
	tpl := freshNodeID()
	confirmedDo(t, a, map[string]any{"action": "set_new_item_templates", "avID": av, "blockID": block, "defaultTemplateID": "",
		"templates": []map[string]any{{"id": tpl, "name": "Task", "targetType": "detached", "primaryKeyTemplate": `Task {{ "x" | upper }}`,
			"fieldValues": map[string]any{
				tags:  map[string]any{"mode": "static", "value": map[string]any{"mSelect": []map[string]any{{"content": "c", "color": "3"}}}},
				notes: map[string]any{"mode": "static", "value": map[string]any{"text": map[string]any{"content": "hi"}}},
				due:   map[string]any{"mode": "currentTime"}}}}})

	res := confirmedDo(t, a, map[string]any{"action": "create_from_template", "avID": av, "blockID": block, "templateID": tpl, "previousID": first})
	item, _ := res["itemID"].(string)
	v, err := c.GetAttributeView(ctx, av)
	if err != nil || v == nil {
		t.Fatalf("GetAttributeView: %v", err)
	}
	if order := v.Views[0].ItemIDs; len(order) != 2 || order[1] != item {
		t.Fatalf("item %s, order %v", item, order)
	}
	got := map[string]string{}
	for _, kv := range v.KeyValues {
		for _, val := range kv.Values {
			if val == nil || val.BlockID != item {
				continue
			}
			switch {
			case val.Block != nil:
				got["pk"] = val.Block.Content
			case val.Text != nil:
				got["notes"] = val.Text.Content
			case len(val.MSelect) > 0:
				got["tags"] = val.MSelect[0].Content
			case val.Date != nil && val.Date.Content > 0:
				got["due"] = "set"
			}
		}
	}
	if got["pk"] != "Task X" || got["notes"] != "hi" || got["tags"] != "c" || got["due"] != "set" {
		t.Fatalf("item %s holds %v", item, got)
	}

	// A document target: the document made under the database's document
	// (a relative save path), titled by the rendered primary key, with
	// the template's icon, and the item bound to it. A change of the
	// templates after the preflight is state_changed.
	docTpl := freshNodeID()
	setDocTemplate := func(pk string) map[string]any {
		return map[string]any{"action": "set_new_item_templates", "avID": av, "blockID": block, "defaultTemplateID": "",
			"templates": []map[string]any{{"id": tpl, "name": "Task", "targetType": "detached", "primaryKeyTemplate": "Task"},
				{"id": docTpl, "name": "Meeting", "targetType": "document", "primaryKeyTemplate": pk, "icon": "1f4c5",
					"saveLocation": map[string]any{"pathTemplate": "meetings/"},
					"fieldValues":  map[string]any{notes: map[string]any{"mode": "static", "value": map[string]any{"text": map[string]any{"content": "agenda"}}}}}}}
	}
	confirmedDo(t, a, setDocTemplate(`Meeting {{ "x" | upper }}`))
	docArgs := map[string]any{"action": "create_from_template", "avID": av, "blockID": block, "templateID": docTpl, "confirm": true}
	staleCommit(t, a, "av", docArgs, func() { confirmedDo(t, a, setDocTemplate("Meeting Y")) })
	res = confirmedDo(t, a, map[string]any{"action": "create_from_template", "avID": av, "blockID": block, "templateID": docTpl})
	newDoc, _ := res["documentID"].(string)
	docPath, err := c.GetHPathByID(ctx, doc)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.GetHPathByID(ctx, newDoc); err != nil || got != docPath+"/meetings/Meeting Y" {
		t.Fatalf("document %s at %q (%v), want %q", newDoc, got, err, docPath+"/meetings/Meeting Y")
	}
	if attrs, err := c.GetBlockAttrs(ctx, newDoc); err != nil || attrs["icon"] != "1f4c5" {
		t.Fatalf("document attributes %v (%v)", attrs, err)
	}
	keys, err := c.GetAttributeViewKeys(ctx, newDoc)
	if err != nil || len(keys) != 1 || keys[0].AvID != av {
		t.Fatalf("the new document's databases: %+v (%v)", keys, err)
	}

	avTemplateContentFlow(t, a, c, av, block, notes, live)

	for _, bad := range []map[string]any{
		{"templateID": freshNodeID()}, {"previousID": freshNodeID()}, {"viewID": freshNodeID()}, {"groupID": freshNodeID()},
	} {
		args := map[string]any{"action": "create_from_template", "avID": av, "blockID": block, "templateID": tpl, "validateOnly": true}
		for k, v := range bad {
			args[k] = v
		}
		a.fails("av", args, "not_found")
	}
}

// avTemplateContentFlow: a document template with a content template
// fills the new document from the template file (blocks, the template's
// own document attributes, the item template's icon over the
// template's); a template file changed after the preflight is
// state_changed; an absolute content path is refused at preflight.
func avTemplateContentFlow(t *testing.T, a *agent, c *siyuan.Client, av, block, notes string, live bool) {
	ctx := context.Background()
	name := "sisyphus-content-" + freshNodeID() + ".md"
	src := "## Agenda of .action{.title}\n\n- first point\n- second point\n\n{: id=\"20200101000000-abcdefg\" title=\"Meeting\" type=\"doc\" icon=\"1f4c5\" custom-kind=\"meeting\"}\n"
	put := func(body string) {
		if err := c.PutFile(ctx, siyuan.PutFileRequest{Path: "/data/templates/" + name, Body: strings.NewReader(body)}); err != nil {
			t.Fatal(err)
		}
	}
	put(src)
	t.Cleanup(func() { c.RemoveFile(context.Background(), "/data/templates/"+name) })
	tpl, abs := freshNodeID(), freshNodeID()
	confirmedDo(t, a, map[string]any{"action": "set_new_item_templates", "avID": av, "blockID": block, "defaultTemplateID": "",
		"templates": []map[string]any{
			{"id": tpl, "name": "Meeting", "targetType": "document", "primaryKeyTemplate": "Standup", "icon": "1f4dd",
				"saveLocation": map[string]any{"pathTemplate": "content/"}, "contentTemplatePath": name,
				"fieldValues": map[string]any{notes: map[string]any{"mode": "static", "value": map[string]any{"text": map[string]any{"content": "agenda"}}}}},
			{"id": abs, "name": "Abs", "targetType": "document", "primaryKeyTemplate": "Abs", "contentTemplatePath": "/data/templates/" + name}}})
	args := map[string]any{"action": "create_from_template", "avID": av, "blockID": block, "templateID": tpl, "confirm": true}
	staleCommit(t, a, "av", args, func() { put(src + "\n") })
	res := confirmedDo(t, a, map[string]any{"action": "create_from_template", "avID": av, "blockID": block, "templateID": tpl})
	ours, _ := res["documentID"].(string)
	shape := func(doc string) (string, map[string]string) {
		t.Helper()
		kd, err := c.GetBlockKramdown(ctx, doc)
		if err != nil {
			t.Fatal(err)
		}
		attrs, err := c.GetBlockAttrs(ctx, doc)
		if err != nil {
			t.Fatal(err)
		}
		// Ids and times differ between two documents; the rest must not.
		text := regexp.MustCompile(`\{:[^}]*\}`).ReplaceAllString(kd.Kramdown, "{:}")
		delete(attrs, "id")
		delete(attrs, "updated")
		return text, attrs
	}
	text, attrs := shape(ours)
	if !strings.Contains(text, "## Agenda of Standup") || !strings.Contains(text, "second point") || strings.HasPrefix(strings.TrimSpace(text), "{:}") {
		t.Fatalf("the document from the content template holds %q", text)
	}
	if attrs["icon"] != "1f4dd" || attrs["custom-kind"] != "meeting" || attrs["title"] != "Standup" {
		t.Fatalf("document attributes %v", attrs)
	}
	a.fails("av", map[string]any{"action": "create_from_template", "avID": av, "blockID": block, "templateID": abs, "validateOnly": true}, "invalid_arguments")
	if !live {
		return
	}
	var made struct {
		ItemID  string `json:"itemID"`
		BlockID string `json:"blockID"`
	}
	if err := c.Do(ctx, "/api/av/createAttributeViewItem", map[string]any{"avID": av, "blockID": block, "templateID": tpl}, &made, siyuan.Write); err != nil {
		t.Fatalf("SiYuan's own createAttributeViewItem: %v", err)
	}
	theirs := made.BlockID
	if theirs == "" {
		t.Fatalf("SiYuan answered %+v", made)
	}
	ttext, tattrs := shape(theirs)
	if ttext != text || !maps.Equal(tattrs, attrs) {
		t.Fatalf("SiYuan made\n%q %v\nthe tool made\n%q %v", ttext, tattrs, text, attrs)
	}
}
