package siyuan

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
)

const (
	avx  = "20240104120000-ddddddd"
	keyx = "20240105120000-eeeeeee"
	item = "20240106120000-fffffff"
)

// avAPICases are the database methods, run by TestTypedMethods and
// TestNullDataOnDataEndpoints with the others.
func avAPICases() []apiCase {
	value := &AVValue{Text: &AVValueContent{Content: "x"}}
	return []apiCase{
		{"SpinBlockDOM", func(ctx context.Context, c *Client) (any, error) {
			return c.SpinBlockDOM(ctx, "<div></div>")
		}, endpoint.SpinBlockDOM, `{"dom":"\u003cdiv\u003e\u003c/div\u003e"}`, `{"dom":"spun"}`, "spun", Read},
		{"RenderAttributeView", func(ctx context.Context, c *Client) (any, error) {
			r, err := c.RenderAttributeView(ctx, RenderAVRequest{ID: avx, BlockID: blk, Page: 2, PageSize: 10, Query: "q"})
			if err != nil {
				return nil, err
			}
			return r.ID + "/" + r.View.Rows[0].ID, nil
		}, endpoint.RenderAV, `{"id":"` + avx + `","blockID":"` + blk + `","page":2,"pageSize":10,"query":"q","createIfNotExist":false}`,
			`{"id":"` + avx + `","view":{"rows":[{"id":"` + item + `","cells":[]}]}}`, avx + "/" + item, Read},
		{"RenderAttributeViewOrCreate", func(ctx context.Context, c *Client) (any, error) {
			r, err := c.RenderAttributeViewOrCreate(ctx, RenderAVRequest{ID: avx, IgnoreRows: true})
			if err != nil {
				return nil, err
			}
			return r.ViewType, nil
		}, endpoint.RenderAV, `{"id":"` + avx + `","ignoreRows":true,"createIfNotExist":true}`, `{"viewType":"table"}`, "table", Write},
		{"GetAttributeView", func(ctx context.Context, c *Client) (any, error) {
			av, err := c.GetAttributeView(ctx, avx)
			if err != nil {
				return nil, err
			}
			return av.Name, nil
		}, endpoint.GetAV, `{"id":"` + avx + `"}`, `{"av":{"spec":5,"id":"` + avx + `","name":"N"}}`, "N", Read},
		{"GetAttributeViewKeys", func(ctx context.Context, c *Client) (any, error) {
			k, err := c.GetAttributeViewKeys(ctx, blk)
			if err != nil {
				return nil, err
			}
			return k[0].KeyValues[0].Key.Name, nil
		}, endpoint.GetAVKeys, `{"id":"` + blk + `"}`, `[{"avID":"` + avx + `","keyValues":[{"key":{"name":"K"}}]}]`, "K", Read},
		{"GetAttributeViewItemKeys", func(ctx context.Context, c *Client) (any, error) {
			k, err := c.GetAttributeViewItemKeys(ctx, avx, item)
			if err != nil {
				return nil, err
			}
			return len(k), nil
		}, endpoint.GetAVKeys, `{"avID":"` + avx + `","itemID":"` + item + `"}`, `[]`, 0, Read},
		{"GetAttributeViewKeysByAvID", func(ctx context.Context, c *Client) (any, error) {
			k, err := c.GetAttributeViewKeysByAvID(ctx, avx)
			if err != nil {
				return nil, err
			}
			return k[0].Type, nil
		}, endpoint.GetAVKeysByAvID, `{"avID":"` + avx + `"}`, `[{"id":"` + keyx + `","type":"block"}]`, "block", Read},
		{"GetAttributeViewFilterSort", func(ctx context.Context, c *Client) (any, error) {
			fs, err := c.GetAttributeViewFilterSort(ctx, avx, "")
			if err != nil {
				return nil, err
			}
			return fs.Filters[0].Combination, nil
		}, endpoint.GetAVFilterSort, `{"id":"` + avx + `","blockID":""}`, `{"filters":[{"combination":"and"}],"sorts":[]}`, "and", Read},
		{"SearchAttributeView", func(ctx context.Context, c *Client) (any, error) {
			r, err := c.SearchAttributeView(ctx, "w", []string{avx})
			if err != nil {
				return nil, err
			}
			return len(r), nil
		}, endpoint.SearchAV, `{"keyword":"w","excludes":["` + avx + `"]}`, `{"results":[]}`, 0, Read},
		{"GetAttributeViewPrimaryKeyValues", func(ctx context.Context, c *Client) (any, error) {
			r, err := c.GetAttributeViewPrimaryKeyValues(ctx, AVPrimaryKeyValuesRequest{ID: avx, Keyword: "k", Page: 1, PageSize: 5})
			if err != nil {
				return nil, err
			}
			return r.Name, nil
		}, endpoint.GetAVPrimaryKeyValues, `{"id":"` + avx + `","keyword":"k","page":1,"pageSize":5}`, `{"name":"Untitled","blockIDs":[],"rows":{"key":{}}}`, "Untitled", Read},
		{"GetMirrorDatabaseBlocks", func(ctx context.Context, c *Client) (any, error) { return c.GetMirrorDatabaseBlocks(ctx, avx) },
			endpoint.GetMirrorDatabaseBlocks, `{"avID":"` + avx + `"}`, `{"refDefs":[{"refID":"` + blk + `","defIDs":[]}]}`, []string{blk}, Read},
		{"DuplicateAttributeViewBlock", func(ctx context.Context, c *Client) (any, error) { return c.DuplicateAttributeViewBlock(ctx, avx) },
			endpoint.DuplicateAVBlock, `{"avID":"` + avx + `"}`, `{"avID":"` + keyx + `","blockID":"` + blk + `"}`, AVDuplicate{AvID: keyx, BlockID: blk}, Write},
		{"AddAttributeViewBlocks", func(ctx context.Context, c *Client) (any, error) {
			return nil, c.AddAttributeViewBlocks(ctx, AddAVBlocksRequest{AvID: avx, BlockID: blk, Srcs: []AVSrc{{ItemID: item, ID: doc}, {Detached: true, Content: "c"}}})
		}, endpoint.AddAVBlocks, `{"avID":"` + avx + `","blockID":"` + blk + `","srcs":[{"itemID":"` + item + `","id":"` + doc + `","isDetached":false},{"isDetached":true,"content":"c"}]}`, `null`, nil, Write},
		{"RemoveAttributeViewBlocks", func(ctx context.Context, c *Client) (any, error) {
			return nil, c.RemoveAttributeViewBlocks(ctx, avx, []string{item})
		},
			endpoint.RemoveAVBlocks, `{"avID":"` + avx + `","srcIDs":["` + item + `"]}`, `null`, nil, Write},
		{"AddAttributeViewKey", func(ctx context.Context, c *Client) (any, error) {
			return nil, c.AddAttributeViewKey(ctx, AddAVKeyRequest{AvID: avx, KeyID: keyx, KeyName: "N", KeyType: "text"})
		}, endpoint.AddAVKey, `{"avID":"` + avx + `","keyID":"` + keyx + `","keyName":"N","keyType":"text","keyIcon":"","previousKeyID":""}`, `null`, nil, Write},
		{"RemoveAttributeViewKey", func(ctx context.Context, c *Client) (any, error) {
			return nil, c.RemoveAttributeViewKey(ctx, avx, keyx, true)
		},
			endpoint.RemoveAVKey, `{"avID":"` + avx + `","keyID":"` + keyx + `","removeRelationDest":true}`, `null`, nil, Write},
		{"SetAttributeViewBlockAttr", func(ctx context.Context, c *Client) (any, error) {
			v, err := c.SetAttributeViewBlockAttr(ctx, avx, keyx, item, value)
			if err != nil {
				return nil, err
			}
			return v.Text.Content, nil
		}, endpoint.SetAVBlockAttr, `{"avID":"` + avx + `","keyID":"` + keyx + `","itemID":"` + item + `","value":{"text":{"content":"x"}}}`,
			`{"value":{"type":"text","text":{"content":"x"}}}`, "x", Write},
		{"BatchSetAttributeViewBlockAttrs", func(ctx context.Context, c *Client) (any, error) {
			return nil, c.BatchSetAttributeViewBlockAttrs(ctx, avx, []AVCellUpdate{{KeyID: keyx, ItemID: item, Value: value}})
		}, endpoint.BatchSetAVBlockAttrs, `{"avID":"` + avx + `","values":[{"keyID":"` + keyx + `","itemID":"` + item + `","value":{"text":{"content":"x"}}}]}`, `null`, nil, Write},
	}
}

func TestAVKindOf(t *testing.T) {
	for _, ep := range []string{endpoint.RenderAV, endpoint.GetAV, endpoint.GetAVKeys, endpoint.GetAVKeysByAvID, endpoint.GetAVFilterSort, endpoint.SearchAV,
		endpoint.GetAVPrimaryKeyValues, endpoint.GetMirrorDatabaseBlocks} {
		if kindOf(ep) != Read {
			t.Errorf("%s should be a read", ep)
		}
	}
	for _, ep := range []string{endpoint.DuplicateAVBlock, endpoint.AddAVBlocks, endpoint.RemoveAVBlocks, endpoint.AddAVKey, endpoint.RemoveAVKey,
		endpoint.SetAVBlockAttr, endpoint.BatchSetAVBlockAttrs} {
		if kindOf(ep) != Write {
			t.Errorf("%s should be a write", ep)
		}
	}
}

func TestAVValidateLocally(t *testing.T) {
	fk := newFakeKernel(t, replyOK(nil))
	c := newTestClient(t, fk.URL)
	ctx := context.Background()
	for name, call := range map[string]func() error{
		"Render no id":     func() error { _, err := c.RenderAttributeView(ctx, RenderAVRequest{}); return err },
		"Create no id":     func() error { _, err := c.RenderAttributeViewOrCreate(ctx, RenderAVRequest{ID: " "}); return err },
		"GetAttributeView": func() error { _, err := c.GetAttributeView(ctx, ""); return err },
		"Keys no block":    func() error { _, err := c.GetAttributeViewKeys(ctx, ""); return err },
		"ItemKeys no item": func() error { _, err := c.GetAttributeViewItemKeys(ctx, avx, ""); return err },
		"KeysByAvID":       func() error { _, err := c.GetAttributeViewKeysByAvID(ctx, ""); return err },
		"FilterSort":       func() error { _, err := c.GetAttributeViewFilterSort(ctx, "", blk); return err },
		"PrimaryKeyValues": func() error {
			_, err := c.GetAttributeViewPrimaryKeyValues(ctx, AVPrimaryKeyValuesRequest{})
			return err
		},
		"Mirror":              func() error { _, err := c.GetMirrorDatabaseBlocks(ctx, ""); return err },
		"Duplicate":           func() error { _, err := c.DuplicateAttributeViewBlock(ctx, ""); return err },
		"AddBlocks no srcs":   func() error { return c.AddAttributeViewBlocks(ctx, AddAVBlocksRequest{AvID: avx}) },
		"RemoveBlocks no ids": func() error { return c.RemoveAttributeViewBlocks(ctx, avx, nil) },
		"AddKey no type":      func() error { return c.AddAttributeViewKey(ctx, AddAVKeyRequest{AvID: avx, KeyID: keyx}) },
		"RemoveKey no key":    func() error { return c.RemoveAttributeViewKey(ctx, avx, "", false) },
		"SetCell no value":    func() error { _, err := c.SetAttributeViewBlockAttr(ctx, avx, keyx, item, nil); return err },
		"SetCell no item":     func() error { _, err := c.SetAttributeViewBlockAttr(ctx, avx, keyx, "", &AVValue{}); return err },
		"BatchSet none":       func() error { return c.BatchSetAttributeViewBlockAttrs(ctx, avx, nil) },
		"BatchSet without item": func() error {
			return c.BatchSetAttributeViewBlockAttrs(ctx, avx, []AVCellUpdate{{KeyID: keyx, Value: &AVValue{}}})
		},
	} {
		t.Run(name, func(t *testing.T) {
			if err := call(); !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("err = %v, want ErrInvalidArgument", err)
			}
		})
	}
	if n := fk.hits.Load(); n != 0 {
		t.Fatalf("%d requests sent, want 0", n)
	}
}

// TestAVOps: the transaction operations carry the fields the kernel reads
// for each action.
func TestAVOps(t *testing.T) {
	for _, tc := range []struct {
		name string
		op   Operation
		want Operation
	}{
		{"insert database block", InsertDatabaseBlockOp(blk, avx, doc, ""), Operation{Action: "insert", ID: blk, PreviousID: doc,
			Data: `<div class="av" data-node-id="` + blk + `" data-av-id="` + avx + `" data-type="NodeAttributeView" data-av-type="table"></div>`}},
		{"insert rows", InsertAttrViewBlockOp(avx, blk, []AVSrc{{ItemID: item, ID: doc}, {Detached: true}}, keyx), Operation{Action: "insertAttrViewBlock",
			AvID: avx, BlockID: blk, PreviousID: keyx, Srcs: []map[string]any{{"itemID": item, "id": doc, "isDetached": false}, {"isDetached": true, "content": ""}}}},
		{"remove rows", RemoveAttrViewBlockOp(avx, []string{item}), Operation{Action: "removeAttrViewBlock", AvID: avx, SrcIDs: []string{item}}},
		{"add column", AddAttrViewColOp(avx, keyx, "N", "text", "i", blk), Operation{Action: "addAttrViewCol", AvID: avx, ID: keyx, Name: "N", Type: "text", Data: "i", PreviousID: blk}},
		{"remove column", RemoveAttrViewColOp(avx, keyx, true), Operation{Action: "removeAttrViewCol", AvID: avx, ID: keyx, RemoveDest: true}},
		{"set cell", UpdateAttrViewCellOp(avx, keyx, item, &AVValue{}), Operation{Action: "updateAttrViewCell", AvID: avx, KeyID: keyx, RowID: item, Data: &AVValue{}}},
		{"rename", SetAttrViewNameOp(avx, "N"), Operation{Action: "setAttrViewName", ID: avx, Data: "N"}},
		{"template", UpdateAttrViewColTemplateOp(avx, keyx, "t"), Operation{Action: "updateAttrViewColTemplate", AvID: avx, ID: keyx, Type: "template", Data: "t"}},
		{"number format", UpdateAttrViewColNumberFormatOp(avx, keyx, "USD"), Operation{Action: "updateAttrViewColNumberFormat", AvID: avx, ID: keyx, Type: "number", Format: "USD"}},
		{"relation", UpdateAttrViewColRelationOp(avx, keyx, "R", doc, true, blk, "B"), Operation{Action: "updateAttrViewColRelation", AvID: avx, ID: doc, KeyID: keyx,
			IsTwoWay: true, BackRelationKeyID: blk, Name: "B", Format: "R"}},
		{"rollup", UpdateAttrViewColRollupOp(avx, keyx, blk, doc, "Sum"), Operation{Action: "updateAttrViewColRollup", AvID: avx, ID: keyx, ParentID: blk, KeyID: doc,
			Data: map[string]any{"calc": map[string]any{"operator": "Sum"}}}},
		{"updated", DoUpdateUpdatedOp(blk, "20260101120000"), Operation{Action: "doUpdateUpdated", ID: blk, Data: "20260101120000"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := jsonOf(tc.op)
			want, _ := jsonOf(tc.want)
			if got != want {
				t.Errorf("op\n got %s\nwant %s", got, want)
			}
		})
	}
}

func jsonOf(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}
