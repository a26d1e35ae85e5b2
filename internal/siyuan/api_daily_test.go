package siyuan

import (
	"context"
	"errors"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
)

// dailyAPICases are the daily-note and document-structure methods.
func dailyAPICases() []apiCase {
	txData := `[{"timestamp":0,"doOperations":[{"action":"insert","data":"<div data-node-id=\"` + blk + `\"></div>","id":"` + blk + `","parentID":"` + doc + `"}],"undoOperations":null}]`
	txWant := []Transaction{{DoOperations: []Operation{{Action: "insert", Data: `<div data-node-id="` + blk + `"></div>`, ID: blk, ParentID: doc}}}}
	return []apiCase{
		{"CreateDailyNote", func(ctx context.Context, c *Client) (any, error) { return c.CreateDailyNote(ctx, nb, "") },
			endpoint.CreateDailyNote, `{"notebook":"` + nb + `"}`, `{"id":"` + doc + `"}`, doc, Write},
		{"CreateDailyNote app", func(ctx context.Context, c *Client) (any, error) { return c.CreateDailyNote(ctx, nb, "app1") },
			endpoint.CreateDailyNote, `{"notebook":"` + nb + `","app":"app1"}`, `{"id":"` + doc + `"}`, doc, Write},
		{"AppendDailyNoteBlock", func(ctx context.Context, c *Client) (any, error) {
			return c.AppendDailyNoteBlock(ctx, nb, "markdown", "x")
		}, endpoint.AppendDailyNoteBlock, `{"notebook":"` + nb + `","dataType":"markdown","data":"x"}`, txData, txWant, Write},
		{"PrependDailyNoteBlock", func(ctx context.Context, c *Client) (any, error) {
			return c.PrependDailyNoteBlock(ctx, nb, "dom", "<div></div>")
		}, endpoint.PrependDailyNoteBlock, `{"notebook":"` + nb + `","dataType":"dom","data":"<div></div>"}`, txData, txWant, Write},
		{"DuplicateDoc", func(ctx context.Context, c *Client) (any, error) { return c.DuplicateDoc(ctx, doc) },
			endpoint.DuplicateDoc, `{"id":"` + doc + `"}`, `{"id":"` + blk + `","notebook":"` + nb + `","path":"/` + blk + `.sy","hPath":"/B  (Duplicated 2024-01-03 12:00:00)"}`,
			DuplicatedDoc{ID: blk, Notebook: nb, Path: "/" + blk + ".sy", HPath: "/B  (Duplicated 2024-01-03 12:00:00)"}, Write},
		{"Heading2Doc", func(ctx context.Context, c *Client) (any, error) {
			return nil, c.Heading2Doc(ctx, Heading2DocRequest{HeadingID: blk, TargetNotebook: nb, TargetPath: "/"})
		}, endpoint.Heading2Doc, `{"srcHeadingID":"` + blk + `","targetNoteBook":"` + nb + `","targetPath":"/"}`, `null`, nil, Write},
		{"Heading2Doc previous", func(ctx context.Context, c *Client) (any, error) {
			return nil, c.Heading2Doc(ctx, Heading2DocRequest{HeadingID: blk, TargetNotebook: nb, PreviousPath: "/" + doc + ".sy"})
		}, endpoint.Heading2Doc, `{"srcHeadingID":"` + blk + `","targetNoteBook":"` + nb + `","previousPath":"/` + doc + `.sy"}`, `null`, nil, Write},
		{"Doc2Heading", func(ctx context.Context, c *Client) (any, error) { return c.Doc2Heading(ctx, doc, blk, true) },
			endpoint.Doc2Heading, `{"srcID":"` + doc + `","targetID":"` + blk + `","after":true}`, `{"srcTreeBox":"` + nb + `","srcTreePath":"/` + doc + `.sy"}`,
			Doc2Heading{SrcTreeBox: nb, SrcTreePath: "/" + doc + ".sy"}, Write},
	}
}

// TestDailyArgumentsRefusedLocally: an empty required argument is refused
// before anything is sent (SiYuan would answer {code:0,data:null} from a
// panic, or act on the empty value).
func TestDailyArgumentsRefusedLocally(t *testing.T) {
	c, err := New(Config{BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for name, call := range map[string]func() error{
		"CreateDailyNote":      func() error { _, err := c.CreateDailyNote(ctx, " ", ""); return err },
		"AppendDailyNoteBlock": func() error { _, err := c.AppendDailyNoteBlock(ctx, "", "markdown", "x"); return err },
		"PrependDailyNoteBlock dataType": func() error {
			_, err := c.PrependDailyNoteBlock(ctx, nb, "html", "x")
			return err
		},
		"DuplicateDoc": func() error { _, err := c.DuplicateDoc(ctx, ""); return err },
		"Heading2Doc":  func() error { return c.Heading2Doc(ctx, Heading2DocRequest{HeadingID: blk}) },
		"Doc2Heading":  func() error { _, err := c.Doc2Heading(ctx, doc, "", false); return err },
	} {
		if err := call(); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s: %v, want a local invalid-argument error", name, err)
		}
	}
}
