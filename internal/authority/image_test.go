package authority

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// TestReadImageOverMCP: file.read_image answers its metadata as text and
// structuredContent, then the image as an MCP image block with the bytes
// base64-encoded and the type the bytes show.
func TestReadImageOverMCP(t *testing.T) {
	url, c := newAuthority(t)
	ctx := context.Background()
	png := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{1, 2, 3}, 100)...)
	up, err := c.UploadAsset(ctx, siyuan.AssetUploadRequest{AssetsDirPath: "/assets/", Files: []siyuan.UploadFile{{Name: "q.png", Body: bytes.NewReader(png)}}})
	if err != nil || up.SuccMap["q.png"] == "" {
		t.Fatalf("upload: %v %+v", err, up)
	}
	asset := up.SuccMap["q.png"]
	nbs, _ := c.ListNotebooks(ctx)
	doc, err := c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: nbs[0].ID, Path: "/Pictured", Markdown: "![q](" + asset + ")"})
	if err != nil {
		t.Fatal(err)
	}
	_, res := rpc(t, url+"/mcp", "t", "tools/call", "file", map[string]any{"name": "file", "arguments": map[string]any{"action": "read_image", "path": asset, "id": doc}})
	if res["isError"] == true {
		t.Fatalf("read_image: %v", res)
	}
	content, _ := res["content"].([]any)
	if len(content) != 2 {
		t.Fatalf("content %v", res)
	}
	text, img := content[0].(map[string]any), content[1].(map[string]any)
	var meta map[string]any
	if text["type"] != "text" || json.Unmarshal([]byte(text["text"].(string)), &meta) != nil || meta["path"] != asset || meta["mimeType"] != "image/png" {
		t.Fatalf("text block %v", text)
	}
	if sc, _ := res["structuredContent"].(map[string]any); sc["bytes"] != float64(len(png)) || sc["documentID"] != doc || sc["data"] != nil {
		t.Fatalf("structuredContent %v", res["structuredContent"])
	}
	data, err := base64.StdEncoding.DecodeString(img["data"].(string))
	if img["type"] != "image" || img["mimeType"] != "image/png" || err != nil || !bytes.Equal(data, png) {
		t.Fatalf("image block %v (%v)", img, err)
	}

	// A refusal is an error result without an image.
	_, res = rpc(t, url+"/mcp", "t", "tools/call", "file", map[string]any{"name": "file", "arguments": map[string]any{"action": "read_image", "path": "assets/other.png", "id": doc}})
	if content, _ := res["content"].([]any); res["isError"] != true || len(content) != 1 {
		t.Fatalf("refusal %v", res)
	}
}
