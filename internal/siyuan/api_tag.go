package siyuan

import (
	"context"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
)

// Tags, as SiYuan 3.7.3 indexes them: the spans table of the SQL index
// holds one row per inline #label# (type "textmark tag", on the leaf block
// that holds it) and per label of a document's tags attribute (type "tag",
// on the document). A label with slashes ("a/b") is nested: getTag shows
// it under "a". The tag endpoints flush the index first.

// Tag is one entry of GetTag's tree. Name is the last segment of the
// label and Label the whole one, both HTML-escaped ("a&amp;b"); Count is
// the number of spans of exactly this label (0 for a parent that only has
// nested tags); Children is nil without nested tags.
type Tag struct {
	Name     string `json:"name"`
	Label    string `json:"label"`
	Children []Tag  `json:"children"`
	Type     string `json:"type"`
	Depth    int    `json:"depth"`
	Count    int    `json:"count"`
}

// GetTagRequest is /api/tag/getTag's arguments. Sort is a sort mode
// (0 name, 1 name descending, 4/5 natural, 7/8 count; others natural);
// SiYuan also stores it as the user's tag sort setting.
type GetTagRequest struct {
	Sort              int    `json:"sort"`
	IgnoreMaxListHint bool   `json:"ignoreMaxListHint"`
	App               string `json:"app,omitempty"`
}

// GetTag lists every tag of the workspace as a tree.
func (c *Client) GetTag(ctx context.Context, req GetTagRequest) ([]Tag, error) {
	var out []Tag
	if err := c.call(ctx, endpoint.GetTag, kindOf(endpoint.GetTag), req, &out, true); err != nil {
		return nil, err
	}
	if out == nil {
		out = []Tag{}
	}
	return out, nil
}

// SearchTag lists the labels that contain every space-separated word of
// k, case-insensitively for ASCII, sorted, at most 64 (SiYuan's search
// limit); the words are marked with <mark> in the HTML-escaped label. An
// empty k lists every label.
func (c *Client) SearchTag(ctx context.Context, k string) ([]string, error) {
	var out struct {
		Tags []string `json:"tags"`
		K    string   `json:"k"`
	}
	if err := c.invoke(ctx, endpoint.SearchTag, struct {
		K string `json:"k"`
	}{k}, &out); err != nil {
		return nil, err
	}
	if out.Tags == nil {
		out.Tags = []string{}
	}
	return out.Tags, nil
}

// RenameTag renames a label wherever it is used, and the labels nested
// under it ("old/x" becomes "new/x"). The new label is trimmed of slashes
// and spaces; one with a Markdown marker (# * _ [ ] ! \ ` < > & ~ $ { } ( )
// = ^ or a newline) is refused with code -1 when it is all ASCII (SiYuan
// checks no other). A label no block uses, or the same label, changes
// nothing and answers success.
func (c *Client) RenameTag(ctx context.Context, oldLabel, newLabel string) error {
	return c.invoke(ctx, endpoint.RenameTag, struct {
		OldLabel string `json:"oldLabel"`
		NewLabel string `json:"newLabel"`
	}{oldLabel, newLabel}, nil)
}

// RemoveTag removes a label wherever it is used: its inline #label# marks
// go (with their text) and it leaves documents' tags attributes. Nested
// labels ("label/x") stay. An unused label answers success.
func (c *Client) RemoveTag(ctx context.Context, label string) error {
	return c.invoke(ctx, endpoint.RemoveTag, struct {
		Label string `json:"label"`
	}{label}, nil)
}
