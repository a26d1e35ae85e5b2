package siyuan

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
)

const (
	nb  = "20240101120000-aaaaaaa"
	doc = "20240102120000-bbbbbbb"
	blk = "20240103120000-ccccccc"
)

func intp(i int) *int { return &i }

// apiCase is one typed method: what it must send and what it must make of
// the kernel's data.
type apiCase struct {
	name     string
	call     func(ctx context.Context, c *Client) (any, error)
	path     string
	wantReq  string // expected request JSON (compared structurally)
	data     string // data field of the fake reply
	want     any
	wantKind CallKind
}

func apiCases() []apiCase {
	txData := `[{"timestamp":0,"doOperations":[{"action":"insert","data":"<div data-node-id=\"` + blk + `\"></div>","id":"` + blk + `","parentID":"` + doc + `"}],"undoOperations":null}]`
	txWant := []Transaction{{DoOperations: []Operation{{Action: "insert", Data: `<div data-node-id="` + blk + `"></div>`, ID: blk, ParentID: doc}}}}
	return append(append(append(append(avAPICases(), dailyAPICases()...), sysinfoAPICases()...), repoAPICases()...), []apiCase{
		// System
		{"Version", func(ctx context.Context, c *Client) (any, error) { return c.Version(ctx) },
			endpoint.Version, `{}`, `"3.7.3"`, "3.7.3", Read},
		{"BootProgress", func(ctx context.Context, c *Client) (any, error) { return c.BootProgress(ctx) },
			endpoint.BootProgress, `{}`, `{"progress":100,"details":"Finishing boot..."}`, BootProgress{Progress: 100, Details: "Finishing boot..."}, Read},
		{"CurrentTime", func(ctx context.Context, c *Client) (any, error) { return c.CurrentTime(ctx) },
			endpoint.CurrentTime, `{}`, `1767225600123`, int64(1767225600123), Read},

		// Notebooks
		{"ListNotebooks", func(ctx context.Context, c *Client) (any, error) { return c.ListNotebooks(ctx) },
			endpoint.LsNotebooks, `{}`, `{"notebooks":[{"id":"` + nb + `","name":"N","icon":"1f4d4","sort":1,"sortMode":15,"closed":false,"subFileCount":2,"encrypted":false,"unlocked":false}],"boxDocEnabled":true}`,
			[]Notebook{{ID: nb, Name: "N", Icon: "1f4d4", Sort: 1, SortMode: 15, SubFileCount: 2}}, Read},
		{"CreateNotebook", func(ctx context.Context, c *Client) (any, error) { return c.CreateNotebook(ctx, "N") },
			endpoint.CreateNotebook, `{"name":"N"}`, `{"notebook":{"id":"` + nb + `","name":"N"}}`, Notebook{ID: nb, Name: "N"}, Write},
		{"OpenNotebook", func(ctx context.Context, c *Client) (any, error) { return nil, c.OpenNotebook(ctx, nb) },
			endpoint.OpenNotebook, `{"notebook":"` + nb + `"}`, `null`, nil, Write},
		{"CloseNotebook", func(ctx context.Context, c *Client) (any, error) { return nil, c.CloseNotebook(ctx, nb) },
			endpoint.CloseNotebook, `{"notebook":"` + nb + `"}`, `null`, nil, Write},
		{"RenameNotebook", func(ctx context.Context, c *Client) (any, error) { return nil, c.RenameNotebook(ctx, nb, "M") },
			endpoint.RenameNotebook, `{"notebook":"` + nb + `","name":"M"}`, `null`, nil, Write},
		{"RemoveNotebook", func(ctx context.Context, c *Client) (any, error) { return nil, c.RemoveNotebook(ctx, nb) },
			endpoint.RemoveNotebook, `{"notebook":"` + nb + `"}`, `null`, nil, Write},
		{"GetNotebookConf", func(ctx context.Context, c *Client) (any, error) { return c.GetNotebookConf(ctx, nb) },
			endpoint.GetNotebookConf, `{"notebook":"` + nb + `"}`, `{"box":"` + nb + `","name":"N","conf":{"name":"N","sortMode":6,"dailyNoteSavePath":"/daily","boxCrypt":null}}`,
			NotebookConf{Box: nb, Name: "N", Conf: BoxConf{Name: "N", SortMode: 6, DailyNoteSavePath: "/daily", BoxCrypt: json.RawMessage("null")}}, Read},
		{"SetNotebookConf", func(ctx context.Context, c *Client) (any, error) {
			return c.SetNotebookConf(ctx, nb, BoxConf{Name: "N", SortMode: 6, BoxCrypt: json.RawMessage(`{"spec":1}`)})
		},
			endpoint.SetNotebookConf,
			`{"notebook":"` + nb + `","conf":{"name":"N","sort":0,"icon":"","closed":false,"refCreateSaveBox":"","refCreateSavePath":"","docCreateSaveBox":"","docCreateSavePath":"","dailyNoteSavePath":"","dailyNoteTemplatePath":"","sortMode":6,"encrypted":false}}`,
			`{"name":"N","sortMode":6}`, BoxConf{Name: "N", SortMode: 6}, Write},
		{"SetNotebookIcon", func(ctx context.Context, c *Client) (any, error) { return nil, c.SetNotebookIcon(ctx, nb, "1f4d4") },
			endpoint.SetNotebookIcon, `{"notebook":"` + nb + `","icon":"1f4d4"}`, `null`, nil, Write},

		// File tree
		{"CreateDocWithMd", func(ctx context.Context, c *Client) (any, error) {
			return c.CreateDocWithMd(ctx, CreateDocRequest{Notebook: nb, Path: "/A/B", Markdown: "# x"})
		}, endpoint.CreateDocWithMd, `{"notebook":"` + nb + `","path":"/A/B","markdown":"# x"}`, `"` + doc + `"`, doc, Write},
		{"CreateDocWithMd all fields", func(ctx context.Context, c *Client) (any, error) {
			return c.CreateDocWithMd(ctx, CreateDocRequest{Notebook: nb, Path: "/A", Markdown: "", ParentID: doc, ID: blk, Tags: "a,b"})
		}, endpoint.CreateDocWithMd, `{"notebook":"` + nb + `","path":"/A","markdown":"","parentID":"` + doc + `","id":"` + blk + `","tags":"a,b"}`, `"` + blk + `"`, blk, Write},
		{"RenameDocByID", func(ctx context.Context, c *Client) (any, error) { return nil, c.RenameDocByID(ctx, doc, "T") },
			endpoint.RenameDocByID, `{"id":"` + doc + `","title":"T"}`, `null`, nil, Write},
		{"RemoveDocByID", func(ctx context.Context, c *Client) (any, error) { return nil, c.RemoveDocByID(ctx, doc) },
			endpoint.RemoveDocByID, `{"id":"` + doc + `"}`, `null`, nil, Write},
		{"MoveDocsByID", func(ctx context.Context, c *Client) (any, error) { return nil, c.MoveDocsByID(ctx, []string{doc}, nb) },
			endpoint.MoveDocsByID, `{"fromIDs":["` + doc + `"],"toID":"` + nb + `"}`, `null`, nil, Write},
		{"GetHPathByID", func(ctx context.Context, c *Client) (any, error) { return c.GetHPathByID(ctx, blk) },
			endpoint.GetHPathByID, `{"id":"` + blk + `"}`, `"/A/B"`, "/A/B", Read},
		{"GetPathByID", func(ctx context.Context, c *Client) (any, error) { return c.GetPathByID(ctx, blk) },
			endpoint.GetPathByID, `{"id":"` + blk + `"}`, `{"path":"/` + doc + `.sy","notebook":"` + nb + `"}`, DocPath{Path: "/" + doc + ".sy", Notebook: nb}, Read},
		{"GetIDsByHPath", func(ctx context.Context, c *Client) (any, error) { return c.GetIDsByHPath(ctx, nb, "/A") },
			endpoint.GetIDsByHPath, `{"notebook":"` + nb + `","path":"/A"}`, `["` + doc + `"]`, []string{doc}, Read},
		{"GetIDsByHPath none", func(ctx context.Context, c *Client) (any, error) { return c.GetIDsByHPath(ctx, nb, "/Z") },
			endpoint.GetIDsByHPath, `{"notebook":"` + nb + `","path":"/Z"}`, `[]`, []string{}, Read},
		{"ListDocsByPath", func(ctx context.Context, c *Client) (any, error) {
			return c.ListDocsByPath(ctx, ListDocsRequest{Notebook: nb, Path: "/", Sort: intp(6), MaxListCount: intp(0), ShowHidden: true})
		}, endpoint.ListDocsByPath, `{"notebook":"` + nb + `","path":"/","sort":6,"maxListCount":0,"showHidden":true,"ignoreMaxListHint":true}`,
			`{"box":"` + nb + `","path":"/","files":[{"path":"/` + doc + `.sy","name":"B","id":"` + doc + `","subFileCount":1,"mtime":5}]}`,
			DocList{Box: nb, Path: "/", Files: []DocFile{{Path: "/" + doc + ".sy", Name: "B", ID: doc, SubFileCount: 1, Mtime: 5}}}, Read},
		{"ListDocsByPath defaults", func(ctx context.Context, c *Client) (any, error) {
			return c.ListDocsByPath(ctx, ListDocsRequest{Notebook: nb, Path: "/"})
		}, endpoint.ListDocsByPath, `{"notebook":"` + nb + `","path":"/","ignoreMaxListHint":true}`,
			`{"box":"` + nb + `","path":"/","files":null}`, DocList{Box: nb, Path: "/", Files: []DocFile{}}, Read},
		{"ChangeSort", func(ctx context.Context, c *Client) (any, error) {
			return nil, c.ChangeSort(ctx, nb, []string{"/a.sy", "/b.sy"})
		},
			endpoint.ChangeSort, `{"notebook":"` + nb + `","paths":["/a.sy","/b.sy"]}`, `null`, nil, Write},

		// Blocks
		{"InsertBlock", func(ctx context.Context, c *Client) (any, error) {
			return c.InsertBlock(ctx, InsertBlockRequest{DataType: "markdown", Data: "x", PreviousID: blk})
		}, endpoint.InsertBlock, `{"dataType":"markdown","data":"x","previousID":"` + blk + `"}`, txData, txWant, Write},
		{"PrependBlock", func(ctx context.Context, c *Client) (any, error) { return c.PrependBlock(ctx, "markdown", "x", doc) },
			endpoint.PrependBlock, `{"dataType":"markdown","data":"x","parentID":"` + doc + `"}`, txData, txWant, Write},
		{"AppendBlock", func(ctx context.Context, c *Client) (any, error) {
			return c.AppendBlock(ctx, "dom", "<div></div>", doc)
		},
			endpoint.AppendBlock, `{"dataType":"dom","data":"<div></div>","parentID":"` + doc + `"}`, txData, txWant, Write},
		{"UpdateBlock", func(ctx context.Context, c *Client) (any, error) { return c.UpdateBlock(ctx, blk, "markdown", "y") },
			endpoint.UpdateBlock, `{"dataType":"markdown","data":"y","id":"` + blk + `"}`, txData, txWant, Write},
		{"DeleteBlock", func(ctx context.Context, c *Client) (any, error) { return c.DeleteBlock(ctx, blk) },
			endpoint.DeleteBlock, `{"id":"` + blk + `"}`, `[{"doOperations":[{"action":"delete","id":"` + blk + `"}]}]`,
			[]Transaction{{DoOperations: []Operation{{Action: "delete", ID: blk}}}}, Write},
		{"MoveBlock", func(ctx context.Context, c *Client) (any, error) { return nil, c.MoveBlock(ctx, blk, "", doc) },
			endpoint.MoveBlock, `{"id":"` + blk + `","parentID":"` + doc + `"}`, `null`, nil, Write},
		{"FoldBlock", func(ctx context.Context, c *Client) (any, error) { return nil, c.FoldBlock(ctx, blk) },
			endpoint.FoldBlock, `{"id":"` + blk + `"}`, `null`, nil, Write},
		{"UnfoldBlock", func(ctx context.Context, c *Client) (any, error) { return nil, c.UnfoldBlock(ctx, blk) },
			endpoint.UnfoldBlock, `{"id":"` + blk + `"}`, `null`, nil, Write},
		{"GetBlockKramdown", func(ctx context.Context, c *Client) (any, error) { return c.GetBlockKramdown(ctx, blk) },
			endpoint.GetBlockKramdown, `{"id":"` + blk + `"}`, `{"id":"` + blk + `","kramdown":"x\n{: id=\"` + blk + `\"}"}`,
			BlockKramdown{ID: blk, Kramdown: "x\n{: id=\"" + blk + "\"}"}, Read},
		{"GetBlockKramdowns", func(ctx context.Context, c *Client) (any, error) { return c.GetBlockKramdowns(ctx, []string{blk}) },
			endpoint.GetBlockKramdowns, `{"ids":["` + blk + `"]}`, `{"` + blk + `":"x"}`, map[string]string{blk: "x"}, Read},
		{"GetChildBlocks", func(ctx context.Context, c *Client) (any, error) { return c.GetChildBlocks(ctx, doc) },
			endpoint.GetChildBlocks, `{"id":"` + doc + `"}`, `[{"id":"` + blk + `","type":"h","subType":"h1","content":"T","markdown":"# T"}]`,
			[]ChildBlock{{ID: blk, Type: "h", SubType: "h1", Content: "T", Markdown: "# T"}}, Read},
		{"GetBlockDOM", func(ctx context.Context, c *Client) (any, error) { return c.GetBlockDOM(ctx, blk) },
			endpoint.GetBlockDOM, `{"id":"` + blk + `"}`, `{"id":"` + blk + `","dom":"<div></div>"}`, BlockDOM{ID: blk, DOM: "<div></div>"}, Read},
		{"GetBlockDOMs", func(ctx context.Context, c *Client) (any, error) { return c.GetBlockDOMs(ctx, []string{blk}) },
			endpoint.GetBlockDOMs, `{"ids":["` + blk + `"]}`, `{"` + blk + `":"<div></div>"}`, map[string]string{blk: "<div></div>"}, Read},
		{"GetBlockInfo", func(ctx context.Context, c *Client) (any, error) { return c.GetBlockInfo(ctx, blk) },
			endpoint.GetBlockInfo, `{"id":"` + blk + `"}`,
			`{"box":"` + nb + `","path":"/` + doc + `.sy","rootID":"` + doc + `","rootTitle":"B","rootTitleEmpty":false,"rootChildID":"` + blk + `","rootIcon":""}`,
			BlockInfo{Box: nb, Path: "/" + doc + ".sy", RootID: doc, RootTitle: "B", RootChildID: blk}, Read},
		{"GetDocInfo", func(ctx context.Context, c *Client) (any, error) { return c.GetDocInfo(ctx, doc) },
			endpoint.GetDocInfo, `{"id":"` + doc + `"}`,
			`{"id":"` + doc + `","rootID":"` + doc + `","name":"B","refCount":2,"subFileCount":0,"refIDs":["` + blk + `"],"ial":{"title":"B"},"icon":"","attrViews":[{"id":"av","name":"DB"}]}`,
			DocInfo{ID: doc, RootID: doc, Name: "B", RefCount: 2, RefIDs: []string{blk}, IAL: map[string]string{"title": "B"}, AttrViews: []AttrView{{ID: "av", Name: "DB"}}}, Read},
		{"CheckBlockExist", func(ctx context.Context, c *Client) (any, error) { return c.CheckBlockExist(ctx, blk) },
			endpoint.CheckBlockExist, `{"id":"` + blk + `"}`, `true`, true, Read},

		// Attributes
		{"SetBlockAttrs", func(ctx context.Context, c *Client) (any, error) {
			return nil, c.SetBlockAttrs(ctx, blk, map[string]string{"custom-a": "1", "memo": ""})
		}, endpoint.SetBlockAttrs, `{"id":"` + blk + `","attrs":{"custom-a":"1","memo":""}}`, `null`, nil, Write},
		{"SetBlockAttrs nil map", func(ctx context.Context, c *Client) (any, error) { return nil, c.SetBlockAttrs(ctx, blk, nil) },
			endpoint.SetBlockAttrs, `{"id":"` + blk + `","attrs":{}}`, `null`, nil, Write},
		{"GetBlockAttrs", func(ctx context.Context, c *Client) (any, error) { return c.GetBlockAttrs(ctx, blk) },
			endpoint.GetBlockAttrs, `{"id":"` + blk + `"}`, `{"id":"` + blk + `","type":"doc"}`, map[string]string{"id": blk, "type": "doc"}, Read},
		{"BatchGetBlockAttrs", func(ctx context.Context, c *Client) (any, error) { return c.BatchGetBlockAttrs(ctx, []string{blk}) },
			endpoint.BatchGetBlockAttrs, `{"ids":["` + blk + `"]}`, `{"` + blk + `":{"id":"` + blk + `"}}`,
			map[string]map[string]string{blk: {"id": blk}}, Read},

		// SQL and search
		{"QuerySQL", func(ctx context.Context, c *Client) (any, error) {
			return c.QuerySQL(ctx, "SELECT id FROM blocks LIMIT 1")
		},
			endpoint.QuerySQL, `{"stmt":"SELECT id FROM blocks LIMIT 1","mode":"readonly"}`, `[{"id":"` + blk + `","length":3}]`,
			[]map[string]any{{"id": blk, "length": float64(3)}}, Read},
		{"QuerySQL null is no rows", func(ctx context.Context, c *Client) (any, error) { return c.QuerySQL(ctx, "SELECT 1 WHERE 0") },
			endpoint.QuerySQL, `{"stmt":"SELECT 1 WHERE 0","mode":"readonly"}`, `null`, []map[string]any{}, Read},
		{"FlushTransaction", func(ctx context.Context, c *Client) (any, error) { return nil, c.FlushTransaction(ctx) },
			endpoint.FlushTransaction, `{}`, `null`, nil, Read},
		{"FullTextSearchBlock", func(ctx context.Context, c *Client) (any, error) {
			return c.FullTextSearchBlock(ctx, FullTextSearchRequest{Query: "x", Page: 2, PageSize: 10, Paths: []string{nb}, Method: 0})
		}, endpoint.FullTextSearchBlock, `{"query":"x","page":2,"pageSize":10,"paths":["` + nb + `"],"method":0,"orderBy":0,"groupBy":0}`,
			`{"blocks":[{"id":"` + blk + `","rootID":"` + doc + `","content":"<mark>x</mark>","hPath":"/B","ial":{"id":"` + blk + `"},"refs":null,"children":null}],"matchedBlockCount":1,"matchedRootCount":1,"pageCount":1,"docMode":false}`,
			FullTextSearchResult{Blocks: []Block{{ID: blk, RootID: doc, Content: "<mark>x</mark>", HPath: "/B", IAL: map[string]string{"id": blk}}},
				MatchedBlockCount: 1, MatchedRootCount: 1, PageCount: 1}, Read},
		{"FullTextSearchBlock SQL method is attempted once", func(ctx context.Context, c *Client) (any, error) {
			return c.FullTextSearchBlock(ctx, FullTextSearchRequest{Query: "SELECT * FROM blocks", Method: 2})
		}, endpoint.FullTextSearchBlock, `{"query":"SELECT * FROM blocks","method":2,"orderBy":0,"groupBy":0}`,
			`{"blocks":[],"matchedBlockCount":0,"matchedRootCount":0,"pageCount":0}`,
			FullTextSearchResult{Blocks: []Block{}}, Write},

		// Files and export
		{"RemoveFile", func(ctx context.Context, c *Client) (any, error) { return nil, c.RemoveFile(ctx, "/data/x.txt") },
			endpoint.RemoveFile, `{"path":"/data/x.txt"}`, `null`, nil, Write},
		{"ReadDir", func(ctx context.Context, c *Client) (any, error) { return c.ReadDir(ctx, "/data") },
			endpoint.ReadDir, `{"path":"/data"}`, `[{"name":"assets","isDir":true,"isSymlink":false,"updated":1700000000}]`,
			[]DirEntry{{Name: "assets", IsDir: true, Updated: 1700000000}}, Read},
		{"ExportResources", func(ctx context.Context, c *Client) (any, error) {
			return c.ExportResources(ctx, []string{"/data/assets"}, "bundle")
		}, endpoint.ExportResources, `{"paths":["/data/assets"],"name":"bundle"}`, `{"path":"temp/export/bundle.zip"}`, "temp/export/bundle.zip", Write},
		{"ExportMdContent", func(ctx context.Context, c *Client) (any, error) { return c.ExportMdContent(ctx, doc) },
			endpoint.ExportMdContent, `{"id":"` + doc + `","yfm":false}`, `{"hPath":"/B","content":"# B\n"}`, MdContent{HPath: "/B", Content: "# B\n"}, Read},

		// Notifications and transactions
		{"PushMsg", func(ctx context.Context, c *Client) (any, error) { return c.PushMsg(ctx, "hi", 3000) },
			endpoint.PushMsg, `{"msg":"hi","timeout":3000}`, `{"id":"m1"}`, "m1", Write},
		{"PushErrMsg default timeout", func(ctx context.Context, c *Client) (any, error) { return c.PushErrMsg(ctx, "bad", 0) },
			endpoint.PushErrMsg, `{"msg":"bad"}`, `{"id":"m2"}`, "m2", Write},
	}...)
}

// TestTypedMethods checks every typed method's endpoint, request JSON,
// result decoding and read/write class (a 503 makes reads retry 3 times and
// writes fail after one attempt).
func TestTypedMethods(t *testing.T) {
	for _, tc := range apiCases() {
		t.Run(tc.name, func(t *testing.T) {
			fk := newFakeKernel(t, func(w http.ResponseWriter, _ *http.Request, _ seen) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{"code":0,"msg":"","data":`+tc.data+`}`)
			})
			c := newTestClient(t, fk.URL)
			got, err := tc.call(context.Background(), c)
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			if tc.want != nil && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("result\n got %#v\nwant %#v", got, tc.want)
			}
			s := fk.last(t)
			if s.Path != tc.path {
				t.Errorf("path = %s, want %s", s.Path, tc.path)
			}
			assertJSONEqual(t, s.Body, tc.wantReq)

			// Class check: the same call against a kernel that answers 503.
			unavailable := newFakeKernel(t, func(w http.ResponseWriter, _ *http.Request, _ seen) {
				w.WriteHeader(http.StatusServiceUnavailable)
			})
			_, err = tc.call(context.Background(), newTestClient(t, unavailable.URL))
			wantAttempts := int32(3)
			if tc.wantKind == Write {
				wantAttempts = 1
				if !IsOutcomeUnknown(err) {
					t.Errorf("write on 503: err = %v, want OutcomeUnknown", err)
				}
			}
			if n := unavailable.hits.Load(); n != wantAttempts {
				t.Errorf("on 503: %d attempts, want %d (%v)", n, wantAttempts, tc.wantKind)
			}
		})
	}
}

func assertJSONEqual(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("request body %q is not JSON: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad test expectation %q: %v", want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("request body\n got %s\nwant %s", got, want)
	}
}

// TestNullDataOnDataEndpoints: endpoints that must return data turn the
// kernel's panic reply {code:0,data:null} into *NullDataError.
func TestNullDataOnDataEndpoints(t *testing.T) {
	fk := newFakeKernel(t, replyOK(nil))
	c := newTestClient(t, fk.URL)
	for _, tc := range apiCases() {
		if tc.data == "null" || strings.HasPrefix(tc.name, "QuerySQL") {
			continue // null is the success reply (or "no rows") there
		}
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.call(context.Background(), c)
			var ne *NullDataError
			if !errors.As(err, &ne) || ne.Endpoint != tc.path {
				t.Fatalf("err = %v, want *NullDataError for %s", err, tc.path)
			}
		})
	}
}

func TestTypedMethodsValidateLocally(t *testing.T) {
	fk := newFakeKernel(t, replyOK(nil))
	c := newTestClient(t, fk.URL)
	ctx := context.Background()
	calls := map[string]func() error{
		"OpenNotebook empty":      func() error { return c.OpenNotebook(ctx, "") },
		"CreateDocWithMd no path": func() error { _, err := c.CreateDocWithMd(ctx, CreateDocRequest{Notebook: nb}); return err },
		"MoveDocsByID no ids":     func() error { return c.MoveDocsByID(ctx, nil, nb) },
		"MoveDocsByID empty id":   func() error { return c.MoveDocsByID(ctx, []string{""}, nb) },
		"InsertBlock no anchor":   func() error { _, err := c.InsertBlock(ctx, InsertBlockRequest{DataType: "markdown"}); return err },
		"InsertBlock bad dataType": func() error {
			_, err := c.InsertBlock(ctx, InsertBlockRequest{DataType: "md", ParentID: doc})
			return err
		},
		"AppendBlock no parent": func() error { _, err := c.AppendBlock(ctx, "markdown", "x", " "); return err },
		"MoveBlock no target":   func() error { return c.MoveBlock(ctx, blk, "", "") },
		"GetBlockDOMs no ids":   func() error { _, err := c.GetBlockDOMs(ctx, nil); return err },
		"QuerySQL empty":        func() error { _, err := c.QuerySQL(ctx, ""); return err },
		"GetFile empty":         func() error { _, _, err := c.GetFile(ctx, ""); return err },
		"PutFile no body":       func() error { return c.PutFile(ctx, PutFileRequest{Path: "/data/x"}) },
		"PutFile newline":       func() error { return c.PutFile(ctx, PutFileRequest{Path: "/data/x\r\nX: y", IsDir: true}) },
		"UploadAsset no files":  func() error { _, err := c.UploadAsset(ctx, AssetUploadRequest{}); return err },
		"UploadAsset bad name": func() error {
			_, err := c.UploadAsset(ctx, AssetUploadRequest{Files: []UploadFile{{Name: "a\nb", Body: strings.NewReader("")}}})
			return err
		},
		"ExportResources no paths": func() error { _, err := c.ExportResources(ctx, nil, ""); return err },
		"PushMsg empty":            func() error { _, err := c.PushMsg(ctx, " ", 0); return err },
		"Transactions none":        func() error { _, err := c.Transactions(ctx, nil); return err },
	}
	for name, call := range calls {
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

func TestWriteRepliesMissingNewIDAreUnknown(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		data any
		call func(c *Client) error
	}{
		{"CreateDocWithMd empty id", "", func(c *Client) error {
			_, err := c.CreateDocWithMd(ctx, CreateDocRequest{Notebook: nb, Path: "/A"})
			return err
		}},
		{"CreateNotebook without notebook", map[string]any{}, func(c *Client) error { _, err := c.CreateNotebook(ctx, "N"); return err }},
		{"ExportResources without path", map[string]any{"path": ""}, func(c *Client) error {
			_, err := c.ExportResources(ctx, []string{"/data"}, "")
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fk := newFakeKernel(t, replyOK(tt.data))
			if err := tt.call(newTestClient(t, fk.URL)); !IsOutcomeUnknown(err) {
				t.Fatalf("err = %v, want OutcomeUnknown", err)
			}
		})
	}
}

func TestTransactionsSendsReqID(t *testing.T) {
	fk := newFakeKernel(t, func(w http.ResponseWriter, _ *http.Request, s seen) {
		var req struct {
			Transactions []Transaction `json:"transactions"`
		}
		_ = json.Unmarshal(s.Body, &req)
		req.Transactions[0].DoOperations[0].ID = blk // the kernel fills IDs in
		replyJSON(w, 0, "", req.Transactions)
	})
	c := newTestClient(t, fk.URL)
	out, err := c.Transactions(context.Background(), []Transaction{{DoOperations: []Operation{{Action: "insert", Data: "<div></div>", ParentID: doc}}}})
	if err != nil || len(out) != 1 || out[0].DoOperations[0].ID != blk {
		t.Fatalf("Transactions = %+v, %v", out, err)
	}
	var sent map[string]any
	_ = json.Unmarshal(fk.last(t).Body, &sent)
	if id, ok := sent["reqId"].(float64); !ok || id < 1.7e12 {
		t.Fatalf("reqId = %v, want current time in ms", sent["reqId"])
	}
	op := sent["transactions"].([]any)[0].(map[string]any)["doOperations"].([]any)[0].(map[string]any)
	if op["action"] != "insert" || op["parentID"] != doc || op["data"] != "<div></div>" {
		t.Fatalf("operation sent as %v", op)
	}
	if n := fk.hits.Load(); n != 1 {
		t.Fatalf("%d attempts", n)
	}
}

func TestKindOfClassification(t *testing.T) {
	reads := []string{endpoint.Version, endpoint.BootProgress, endpoint.CurrentTime, endpoint.LsNotebooks, endpoint.GetNotebookConf, endpoint.GetHPathByID,
		endpoint.GetPathByID, endpoint.GetIDsByHPath, endpoint.ListDocsByPath, endpoint.GetBlockKramdown, endpoint.GetBlockKramdowns, endpoint.GetChildBlocks,
		endpoint.GetBlockDOM, endpoint.GetBlockDOMs, endpoint.GetBlockInfo, endpoint.GetDocInfo, endpoint.CheckBlockExist, endpoint.GetBlockAttrs,
		endpoint.BatchGetBlockAttrs, endpoint.QuerySQL, endpoint.FlushTransaction, endpoint.FullTextSearchBlock, endpoint.GetFile, endpoint.ReadDir, endpoint.ExportMdContent,
		endpoint.GetUnusedAssets, endpoint.GetDocAssets, endpoint.GetDocImageAssets, endpoint.GetImageOCRText, endpoint.SearchAsset, endpoint.SearchTemplate}
	writes := []string{endpoint.CreateNotebook, endpoint.OpenNotebook, endpoint.CloseNotebook, endpoint.RenameNotebook, endpoint.RemoveNotebook,
		endpoint.SetNotebookConf, endpoint.SetNotebookIcon, endpoint.CreateDocWithMd, endpoint.RenameDocByID, endpoint.RemoveDocByID, endpoint.MoveDocsByID,
		endpoint.ChangeSort, endpoint.InsertBlock, endpoint.PrependBlock, endpoint.AppendBlock, endpoint.UpdateBlock, endpoint.DeleteBlock, endpoint.MoveBlock,
		endpoint.FoldBlock, endpoint.UnfoldBlock, endpoint.SetBlockAttrs, endpoint.UploadAsset, endpoint.PutFile, endpoint.RemoveFile, endpoint.ExportResources,
		endpoint.PushMsg, endpoint.PushErrMsg, endpoint.Transactions, endpoint.RenameAsset, endpoint.RemoveUnusedAsset, endpoint.RemoveUnusedAssets,
		endpoint.RemoveTemplate, endpoint.DocSaveAsTemplate, endpoint.RenderTemplate, endpoint.RenderSprig, "/api/not/listed"}
	for _, ep := range reads {
		if kindOf(ep) != Read {
			t.Errorf("%s should be a read", ep)
		}
	}
	for _, ep := range writes {
		if kindOf(ep) != Write {
			t.Errorf("%s should be a write", ep)
		}
	}
}
