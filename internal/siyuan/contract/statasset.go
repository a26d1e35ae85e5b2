package contract

import (
	"bytes"
	"encoding/json"
	"path"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// The checks of /api/asset/statAsset: an asset's size and times, by its
// assets/ path or a file:// URL inside the workspace.

var statAssetChecks = []check{
	{"asset_stat", checkStatAsset},
}

var statTimeRe = regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$`)

func checkStatAsset(t *testing.T, s *suite) {
	dir := s.box + "/assets"
	body := []byte(strings.Repeat("x", 12047))
	u := decodeUpload(t, "upload for statAsset", s.rawUpload(t, [][2]string{{"assetsDirPath", "/" + dir + "/"}},
		upFile{"stat.txt", body}))
	stored := u.Data.SuccMap["stat.txt"]
	if stored == "" {
		t.Fatalf("upload for statAsset: succMap %v", u.Data.SuccMap)
	}
	w, err := s.c.GetWorkspaceInfo(t.Context())
	must(t, "GetWorkspaceInfo", err)
	asset := "assets/" + path.Base(stored)
	stat := func(p any) string {
		b, err := json.Marshal(map[string]any{"path": p})
		must(t, "marshal", err)
		return strings.TrimSpace(string(s.rawJSON(t, "/api/asset/statAsset", string(b)).body))
	}
	// The same answer by the asset path (a query and trailing space
	// ignored) and by a file:// URL, escaped or not.
	fileURL := "file://" + strings.ReplaceAll(w.WorkspaceDir, `\`, "/") + "/data/" + stored
	var first string
	for _, p := range []string{asset, asset + "?x=1", asset + " ", fileURL, fileURL + "?x=1", strings.Replace(fileURL, "stat", "%73tat", 1)} {
		got := stat(p)
		if first == "" {
			first = got
		} else if got != first {
			t.Fatalf("statAsset %q = %s, want %s as for %q", p, got, first, asset)
		}
	}
	var env struct {
		Code int `json:"code"`
		Data struct {
			Size     int64  `json:"size"`
			HSize    string `json:"hSize"`
			Created  int64  `json:"created"`
			Updated  int64  `json:"updated"`
			HCreated string `json:"hCreated"`
			HUpdated string `json:"hUpdated"`
		} `json:"data"`
	}
	must(t, "decode statAsset", json.Unmarshal([]byte(first), &env))
	d := env.Data
	// IEC units, two decimals rounded up: 12047 B is 11.77 KiB. A file
	// written once was created when its writing began and updated when it
	// ended: the same millisecond on an idle machine, a few apart on a
	// loaded one (a check of equality failed there).
	if env.Code != 0 || d.Size != 12047 || d.HSize != "11.77 KiB" || d.Updated <= 0 || d.Created > d.Updated || d.Updated-d.Created > 5000 ||
		!statTimeRe.MatchString(d.HUpdated) || !statTimeRe.MatchString(d.HCreated) {
		t.Fatalf("statAsset %s = %s", asset, first)
	}
	if !regexp.MustCompile(`^\{"code":0,"msg":"","data":\{"created":\d+,"hCreated":"[^"]+","hSize":"[^"]+","hUpdated":"[^"]+","size":\d+,"updated":\d+\}\}$`).MatchString(first) {
		t.Fatalf("statAsset %s = %s, want the six fields in name order", asset, first)
	}
	// Rewritten with an older modification time: updated follows it, and
	// created is the file's birth time where the filesystem keeps one (the
	// rewrite's, or the upload's), else the modification time too.
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.Local).UnixMilli()
	must(t, "putFile the asset", s.c.PutFile(t.Context(), siyuan.PutFileRequest{Path: "/data/" + stored, ModTime: old, Body: bytes.NewReader(body)}))
	must(t, "decode statAsset", json.Unmarshal([]byte(stat(asset)), &env))
	if d2 := env.Data; d2.Updated != old || d2.Created != old && d2.Created < d.Created-2000 ||
		d2.HUpdated != time.UnixMilli(old).Format("2006-01-02 15:04:05") || d2.Created == old && d2.HCreated != d2.HUpdated {
		t.Fatalf("statAsset after a rewrite with modTime %d: %+v (first %+v)", old, d2, d)
	}
	// Every refusal is code 1 without a message: a missing asset, a path
	// that is neither assets/ nor file://, a file outside the workspace.
	refused := `{"code":1,"msg":"","data":null}`
	for _, p := range []string{"assets/nope-20200101000000-zzzzzzz.txt", "/" + asset, "assets", "assets/", "", "assets/../conf/conf.json", "file:///etc/hostname"} {
		if got := stat(p); got != refused {
			t.Fatalf("statAsset %q = %s, want %s", p, got, refused)
		}
	}
	// A missing or non-string path fails SiYuan's unchecked read.
	for _, p := range []any{nil, 5} {
		if got := stat(p); got != `{"code":0,"msg":"","data":null}` {
			t.Fatalf("statAsset path %v = %s, want code 0 and data null", p, got)
		}
	}
}
