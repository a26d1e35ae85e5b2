package file

import (
	"bytes"
	"context"
	"encoding/base64"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// noise is n bytes a ZIP cannot compress.
func noise(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// TestExportResourcesDelivery: upstream 0.6.8's delivery. download answers
// a manifest and embeds nothing; inline embeds the ZIP up to 512 KiB.
func TestExportResourcesDelivery(t *testing.T) {
	s := newFixture(t)
	data := []byte("asset bytes for delivery")
	asset := s.upload(t, "pic.png", data)
	big := s.upload(t, "big.bin", noise(inlineMaxBytes+1024))
	out := filepath.Join(t.TempDir(), "bundle.zip")

	for _, c := range []struct {
		name string
		args map[string]any
		// want: the delivery answered ("" none), and the manifest's dest
		// (download) or nothing.
		want, dest string
	}{
		{"omitted", map[string]any{}, "", ""},
		{"download", map[string]any{"delivery": "download"}, "download", "bundle.zip"},
		{"download with outputPath", map[string]any{"delivery": "download", "outputPath": out}, "download", out},
		{"inline", map[string]any{"delivery": "inline"}, "inline", ""},
	} {
		args := map[string]any{"action": "export_resources", "paths": []string{asset}, "name": "bundle"}
		for k, v := range c.args {
			args[k] = v
		}
		res := s.OK(t, "file", args)
		zp, _ := res["path"].(string)
		zipped, ok := s.read(t, "/"+zp)
		if !ok {
			t.Fatalf("%s: no ZIP at %s", c.name, zp)
		}
		if d, _ := res["delivery"].(string); d != c.want {
			t.Fatalf("%s: delivery %v", c.name, res)
		}
		files, _ := res["files"].([]any)
		switch c.want {
		case "download":
			f := files[0].(map[string]any)
			if len(files) != 1 || f["kernelPath"] != "/"+zp || f["dest"] != c.dest || res["dataBase64"] != nil {
				t.Fatalf("%s: manifest %v", c.name, res)
			}
		case "inline":
			got, err := base64.StdEncoding.DecodeString(res["dataBase64"].(string))
			if err != nil || !bytes.Equal(got, zipped) || res["sha256"] != sum(zipped) || res["bytes"] != float64(len(zipped)) || files != nil {
				t.Fatalf("%s: inline %v (%v)", c.name, res, err)
			}
			if e, ok := entry(s.zipEntries(t, "/"+zp), "/"+base(asset)); !ok || !bytes.Equal(e, data) {
				t.Fatalf("%s: the embedded ZIP lacks the asset", c.name)
			}
		default:
			if files != nil || res["dataBase64"] != nil {
				t.Fatalf("%s: %v", c.name, res)
			}
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("the authority saved the ZIP itself")
	}

	// At a front, download without outputPath and inline save nothing and
	// ask nothing: the manifest or the bytes reach the caller.
	dir := t.TempDir()
	fr := s.front(t, nil, dir)
	for _, d := range []string{"download", "inline"} {
		args := map[string]any{"action": "export_resources", "paths": []string{asset}, "delivery": d}
		if _, pending, err := fr.r.ToConfirm(context.Background(), "file", tools.Input{Raw: mustJSON(t, args)}); pending || err != nil {
			t.Fatalf("%s at a front asks for confirmation: %v", d, err)
		}
		res, e := fr.unconfirmed(t, args)
		if e != nil || res["delivery"] != d || (res["files"] != nil) != (d == "download") || (res["dataBase64"] != nil) != (d == "inline") {
			t.Fatalf("%s at a front: %v %v", d, res, e)
		}
	}
	if names, _ := os.ReadDir(dir); len(names) != 0 {
		t.Fatalf("the front saved %v", names)
	}

	// A ZIP above the inline limit: refused with its size, nothing embedded.
	e := s.WantErr(t, "file", map[string]any{"action": "export_resources", "paths": []string{big}, "delivery": "inline"}, failure.ResultTooLarge)
	if size, _ := e.Details["size"].(int); size <= inlineMaxBytes || !strings.Contains(e.Message, "bytes") || e.Details["limit"] != inlineMaxBytes {
		t.Fatalf("over the inline limit: %+v", e)
	}
	for _, bad := range []map[string]any{
		{"delivery": "inline", "outputPath": out},
		{"delivery": "email"},
		{"delivery": true},
	} {
		bad["action"], bad["paths"] = "export_resources", []string{asset}
		wantAttemptedFalse(t, s.WantErr(t, "file", bad, failure.InvalidArguments))
	}
}

// TestExtractDocDelivery: download is extract_doc's manifest; inline
// embeds the assets and saves nothing on the person's machine.
func TestExtractDocDelivery(t *testing.T) {
	s := newFixture(t)
	data := []byte("image for the inline extract")
	asset := s.upload(t, "shot.png", data)
	s.link(t, asset)
	s.link(t, "assets/gone-20260101000000-abcdefg.png") // linked, not there

	down := s.OK(t, "file", map[string]any{"action": "extract_doc", "id": s.Doc, "delivery": "download"})
	if down["delivery"] != "download" || len(down["files"].([]any)) != 2 || down["assets"] != nil {
		t.Fatalf("download: %v", down)
	}
	in := s.OK(t, "file", map[string]any{"action": "extract_doc", "id": s.Doc, "delivery": "inline"})
	assets, _ := in["assets"].([]any)
	if in["delivery"] != "inline" || in["files"] != nil || len(assets) != 1 || !strings.Contains(in["markdown"].(string), asset) || in["markdownFile"] != "Doc.md" {
		t.Fatalf("inline: %v", in)
	}
	a := assets[0].(map[string]any)
	got, err := base64.StdEncoding.DecodeString(a["dataBase64"].(string))
	if err != nil || !bytes.Equal(got, data) || a["path"] != asset || a["sha256"] != sum(data) || a["bytes"] != float64(len(data)) {
		t.Fatalf("inline asset: %v", a)
	}
	if m, _ := in["missing"].([]any); len(m) != 1 || m[0] != "assets/gone-20260101000000-abcdefg.png" {
		t.Fatalf("missing: %v", in["missing"])
	}

	// At a front, inline needs no destination and no confirmation, and
	// saves nothing.
	dir := t.TempDir()
	fr := s.front(t, nil, dir)
	args := map[string]any{"action": "extract_doc", "id": s.Doc, "delivery": "inline"}
	if _, pending, err := fr.r.ToConfirm(context.Background(), "file", tools.Input{Raw: mustJSON(t, args)}); pending || err != nil {
		t.Fatalf("an inline extract asks for confirmation: %v", err)
	}
	if res, e := fr.unconfirmed(t, args); e != nil || len(res["assets"].([]any)) != 1 {
		t.Fatalf("inline at the front: %v %v", res, e)
	}
	if names, _ := os.ReadDir(dir); len(names) != 0 {
		t.Fatalf("an inline extract saved %v", names)
	}

	// Assets above the inline limit: refused with their size.
	s.link(t, s.upload(t, "big.bin", noise(inlineMaxBytes)))
	e := s.WantErr(t, "file", args, failure.ResultTooLarge)
	wantAttemptedFalse(t, e)
	if size, _ := e.Details["size"].(int); size <= inlineMaxBytes || !strings.Contains(e.Message, "big") {
		t.Fatalf("over the inline limit: %+v", e)
	}
	for _, bad := range []map[string]any{
		{"delivery": "inline", "outputDir": dir},
		{"delivery": "Inline"},
	} {
		bad["action"], bad["id"] = "extract_doc", s.Doc
		wantAttemptedFalse(t, s.WantErr(t, "file", bad, failure.InvalidArguments))
	}
}
