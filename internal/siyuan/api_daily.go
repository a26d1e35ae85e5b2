package siyuan

import (
	"context"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

type (
	DailyNote     = wire.DailyNote
	DuplicatedDoc = wire.DuplicatedDoc
	Doc2Heading   = wire.Doc2Heading
)

// CreateDailyNote returns the id of today's daily note of a notebook,
// creating it at the human path the notebook's dailyNoteSavePath template
// renders to (with its dailyNoteTemplatePath body) when none exists there.
// A note found there gains the custom-dailynote-YYYYMMDD attribute. app,
// when set, names the SiYuan app the kernel's "created" event is for.
func (c *Client) CreateDailyNote(ctx context.Context, notebook, app string) (string, error) {
	if err := need(endpoint.CreateDailyNote, "notebook", notebook); err != nil {
		return "", err
	}
	var out DailyNote
	if err := c.invoke(ctx, endpoint.CreateDailyNote, struct {
		Notebook string `json:"notebook"`
		App      string `json:"app,omitempty"`
	}{notebook, app}, &out); err != nil {
		return "", err
	}
	if out.ID == "" {
		return "", missingResult(endpoint.CreateDailyNote, "id")
	}
	return out.ID, nil
}

// AppendDailyNoteBlock appends blocks to today's daily note of a notebook
// (creating the note first if needed) and returns the transactions.
func (c *Client) AppendDailyNoteBlock(ctx context.Context, notebook, dataType, data string) ([]Transaction, error) {
	return c.dailyNoteInsert(ctx, endpoint.AppendDailyNoteBlock, notebook, dataType, data)
}

// PrependDailyNoteBlock is AppendDailyNoteBlock for the note's start.
func (c *Client) PrependDailyNoteBlock(ctx context.Context, notebook, dataType, data string) ([]Transaction, error) {
	return c.dailyNoteInsert(ctx, endpoint.PrependDailyNoteBlock, notebook, dataType, data)
}

func (c *Client) dailyNoteInsert(ctx context.Context, ep, notebook, dataType, data string) ([]Transaction, error) {
	if err := checkDataType(ep, dataType); err != nil {
		return nil, err
	}
	if err := need(ep, "notebook", notebook); err != nil {
		return nil, err
	}
	req := struct {
		Notebook string `json:"notebook"`
		DataType string `json:"dataType"`
		Data     string `json:"data"`
	}{notebook, dataType, data}
	var txs []Transaction
	if err := c.invoke(ctx, ep, req, &txs); err != nil {
		return nil, err
	}
	return txs, nil
}

// DuplicateDoc copies the document holding id (sub-documents excluded) next
// to it, with new block ids and the title "<title> (Duplicated <time>)".
func (c *Client) DuplicateDoc(ctx context.Context, id string) (DuplicatedDoc, error) {
	if err := need(endpoint.DuplicateDoc, "id", id); err != nil {
		return DuplicatedDoc{}, err
	}
	var out DuplicatedDoc
	if err := c.invoke(ctx, endpoint.DuplicateDoc, idArg{id}, &out); err != nil {
		return DuplicatedDoc{}, err
	}
	if out.ID == "" {
		return DuplicatedDoc{}, missingResult(endpoint.DuplicateDoc, "id")
	}
	return out, nil
}

// Heading2DocRequest is heading2Doc's arguments. TargetPath is the storage
// path of the new document's parent ("/" for the notebook's root);
// PreviousPath, when set, places it after that sibling instead.
type Heading2DocRequest struct {
	HeadingID      string `json:"srcHeadingID"`
	TargetNotebook string `json:"targetNoteBook"` // SiYuan's spelling
	TargetPath     string `json:"targetPath,omitempty"`
	PreviousPath   string `json:"previousPath,omitempty"`
}

// Heading2Doc turns a heading and its section into a document whose id is
// the heading's. SiYuan converts any block it is given (a paragraph becomes
// an empty document titled by its text): check the type first.
func (c *Client) Heading2Doc(ctx context.Context, req Heading2DocRequest) error {
	if err := need(endpoint.Heading2Doc, "srcHeadingID", req.HeadingID, "targetNoteBook", req.TargetNotebook); err != nil {
		return err
	}
	return c.invoke(ctx, endpoint.Heading2Doc, req, nil)
}

// Doc2Heading turns a document into a heading (with the document's id) and
// its body, placed before targetID (after its section with after). SiYuan
// answers success and does nothing when targetID does not exist, and
// corrupts the target when targetID is a document: pass a block inside one.
func (c *Client) Doc2Heading(ctx context.Context, srcID, targetID string, after bool) (Doc2Heading, error) {
	if err := need(endpoint.Doc2Heading, "srcID", srcID, "targetID", targetID); err != nil {
		return Doc2Heading{}, err
	}
	req := struct {
		SrcID    string `json:"srcID"`
		TargetID string `json:"targetID"`
		After    bool   `json:"after"`
	}{srcID, targetID, after}
	var out Doc2Heading
	if err := c.invoke(ctx, endpoint.Doc2Heading, req, &out); err != nil {
		return Doc2Heading{}, err
	}
	return out, nil
}
