package file

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// countUploads counts the kernel's upload requests from now on.
func (s *sfix) countUploads() *atomic.Int32 {
	var n atomic.Int32
	s.SetHook(func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/api/asset/upload" {
			n.Add(1)
		}
		return false
	})
	return &n
}

// assetsIn lists the file names in a workspace folder.
func (s *sfix) assetsIn(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := s.C.ReadDir(context.Background(), dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir {
			out = append(out, e.Name)
		}
	}
	return out
}

func TestUploadStaged(t *testing.T) {
	s := newFixture(t)
	uploads := s.countUploads()
	data := []byte("\x89PNG\r\n\x1a\nfake image bytes")
	h := s.mem().Put("diagram.png", data)
	args := map[string]any{"action": "upload_asset", "uploadSource": h}

	pre := s.Preflight(t, "file", args, "expectedSourceHash", 1)
	if pre["uploadSource"] != h || pre["sha256"] != sum(data) || pre["size"] != float64(len(data)) || pre["fileName"] != "diagram.png" || pre["replayHint"] == nil {
		t.Fatalf("preflight notes: %v", pre)
	}
	if uploads.Load() != 0 || len(s.assetsIn(t, "/data/assets")) != 0 {
		t.Fatal("a preflight uploaded")
	}
	// Commits refused before anything runs.
	s.WantErr(t, "file", args, failure.PreconditionRequired)
	s.WantErr(t, "file", tooltest.CopyArgs(args, "requestId", pre["requestId"], "expectedSourceHash", "0000"), failure.PreflightLeaseInvalid)
	// Other bytes under the same request id and credential: another call.
	other := s.mem().Put("diagram.png", []byte("other bytes"))
	e := s.WantErr(t, "file", tooltest.CommitArgs(tooltest.CopyArgs(args, "uploadSource", other), pre), failure.IdempotencyConflict)
	wantAttemptedFalse(t, e)
	if uploads.Load() != 0 {
		t.Fatal("a refused commit uploaded")
	}

	res := s.Commit(t, "file", args, pre)
	asset, _ := res["assetPath"].(string)
	if !strings.HasPrefix(asset, "assets/diagram-") || !strings.HasSuffix(asset, ".png") || res["sha256"] != sum(data) ||
		res["size"] != float64(len(data)) || res["markdown"] != "![diagram.png]("+asset+")" || res["uploadSource"] != h {
		t.Fatalf("commit: %v", res)
	}
	stored, ok := s.read(t, "/data/"+asset)
	if !ok || sum(stored) != sum(data) {
		t.Fatalf("stored %s: %q", asset, stored)
	}
	if uploads.Load() != 1 {
		t.Fatalf("%d uploads", uploads.Load())
	}

	// A replay answers the same asset without uploading again, even once the
	// staged source is gone.
	s.mem().Forget(h)
	rep := s.Replay(t, "file", args, pre, res)
	if rep["assetPath"] != asset || rep["sha256"] != sum(data) {
		t.Fatalf("replay: %v", rep)
	}
	if uploads.Load() != 1 || len(s.assetsIn(t, "/data/assets")) != 1 {
		t.Fatalf("a replay uploaded: %d uploads, %v", uploads.Load(), s.assetsIn(t, "/data/assets"))
	}
	// The lease was used: the credential does not commit a new request.
	s.WantErr(t, "file", tooltest.CopyArgs(args, "requestId", "abcd", "expectedSourceHash", pre["expectedSourceHash"]), failure.PreconditionRequired)
}

// TestAuthorityRefusesLocalPaths: a path that reaches the authority is
// never opened, whatever it names and however the call insists (confirm,
// both names, a commit): the call is refused before the gate's person is
// asked, and no asset appears.
func TestAuthorityRefusesLocalPaths(t *testing.T) {
	s := newFixture(t)
	uploads := s.countUploads()
	local := filepath.Join(t.TempDir(), "scan.pdf")
	if err := os.WriteFile(local, []byte("%PDF-1.7"), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(s.K.Dir(), "conf", "conf.json")
	h := s.mem().Put("a.png", []byte("a"))
	for _, p := range []string{conf, "/proc/self/cmdline", "/proc/self/environ", "/etc/passwd", local, "scan.pdf", "../conf/conf.json"} {
		for _, key := range []string{"localFilePath", "file"} {
			for name, extra := range map[string]map[string]any{
				"preflight":        {"validateOnly": true},
				"confirmed":        {"confirm": true},
				"with a handle":    {"uploadSource": h, "validateOnly": true},
				"a forged commit":  {"requestId": "f237", "expectedSourceHash": "c162", "confirm": true},
				"large, confirmed": {"confirmLargeFile": true, "confirm": true},
			} {
				t.Run(key+" "+p+" "+name, func(t *testing.T) {
					args := tooltest.CopyArgs(extra, "action", "upload_asset", key, p)
					e := s.WantErr(t, "file", args, failure.LocalPathRefused)
					wantAttemptedFalse(t, e)
					if !strings.Contains(e.Message, "never opens") {
						t.Fatalf("the refusal must say why: %+v", e)
					}
					raw, _ := json.Marshal(args)
					if err := s.R.Check(context.Background(), "file", tools.Input{Raw: raw}); err == nil {
						t.Fatal("Check passes a call the authority refuses: its person would be asked for nothing")
					}
				})
			}
		}
	}
	// Not a string: still a path argument, still refused.
	for _, v := range []any{5, map[string]any{"path": conf}, []string{conf}, true} {
		wantAttemptedFalse(t, s.WantErr(t, "file", map[string]any{"action": "upload_asset", "localFilePath": v, "validateOnly": true}, failure.LocalPathRefused))
	}
	if uploads.Load() != 0 || len(s.assetsIn(t, "/data/assets")) != 0 {
		t.Fatalf("a local path uploaded: %d uploads, %v", uploads.Load(), s.assetsIn(t, "/data/assets"))
	}
	// An empty path is no path: the call is the handle's.
	s.Preflight(t, "file", map[string]any{"action": "upload_asset", "uploadSource": h, "localFilePath": ""}, "expectedSourceHash", 1)
}

func TestUploadRefusals(t *testing.T) {
	s := newFixture(t)
	uploads := s.countUploads()
	h := s.mem().Put("a.png", []byte("a"))
	for name, args := range map[string]map[string]any{
		"no source":                {},
		"conf folder":              {"uploadSource": h, "assetsDirPath": "/conf/"},
		"dot dot":                  {"uploadSource": h, "assetsDirPath": "../x"},
		"climbs out of assets":     {"uploadSource": h, "assetsDirPath": "/assets/../conf"},
		"dot segment":              {"uploadSource": h, "assetsDirPath": "/assets/./x"},
		"not under assets":         {"uploadSource": h, "assetsDirPath": "/data/templates/"},
		"a notebook's folder":      {"uploadSource": h, "assetsDirPath": "data/20260101000000-abcdefg/assets"},
		"control character in dir": {"uploadSource": h, "assetsDirPath": "/assets/a\nb"},
	} {
		t.Run(name, func(t *testing.T) {
			s.InvalidAt(t, "file", tooltest.CopyArgs(args, "action", "upload_asset"), false)
		})
	}
	// A handle the authority never staged.
	e := s.WantErr(t, "file", map[string]any{"action": "upload_asset", "uploadSource": "staged:never", "validateOnly": true}, failure.UploadSourceUnknown)
	wantAttemptedFalse(t, e)
	if e.Action == "" || e.RequestID != "" {
		t.Fatalf("unknown source: %+v", e)
	}
	// A handle that expires between preflight and commit.
	args := map[string]any{"action": "upload_asset", "uploadSource": h}
	pre := s.Preflight(t, "file", args, "expectedSourceHash", 1)
	s.mem().Forget(h)
	e = s.WantErr(t, "file", tooltest.CommitArgs(args, pre), failure.UploadSourceUnknown)
	wantAttemptedFalse(t, e)
	if uploads.Load() != 0 || len(s.assetsIn(t, "/data/assets")) != 0 {
		t.Fatal("a refused upload uploaded")
	}
}

func TestUploadLargeFile(t *testing.T) {
	s := newFixture(t)
	uploads := s.countUploads()
	data := []byte("seven b")
	s.Policy = &tools.Policy{Default: tools.LevelDelete, AllActions: true, Strict: true, LargeUpload: 4}
	args := map[string]any{"action": "upload_asset", "uploadSource": s.mem().Put("big.bin", data)}

	e := s.WantErr(t, "file", tooltest.CopyArgs(args, "validateOnly", true), failure.ConfirmationRequired)
	wantAttemptedFalse(t, e)
	if e.Details["reason"] != string(failure.FileTooLarge) || e.Details["fileSizeBytes"] != int64(len(data)) ||
		e.Details["thresholdBytes"] != int64(4) || !strings.Contains(e.Action, "confirmLargeFile") || e.RequestID != "" {
		t.Fatalf("large file: %+v", e)
	}
	// With the person's agreement it uploads.
	confirmed := tooltest.CopyArgs(args, "confirmLargeFile", true)
	_, res := s.strictOK(t, confirmed, "expectedSourceHash", 1)
	if stored, ok := s.read(t, "/data/"+res["assetPath"].(string)); !ok || !bytes.Equal(stored, data) {
		t.Fatalf("stored %q", stored)
	}
	if uploads.Load() != 1 {
		t.Fatalf("%d uploads", uploads.Load())
	}
	// At the threshold exactly, no confirmation is needed.
	s.Policy.LargeUpload = int64(len(data))
	s.Preflight(t, "file", args, "expectedSourceHash", 1)

	// Without a configured threshold, 10 MiB.
	s.Policy = nil
	big := tooltest.CopyArgs(args, "uploadSource", s.mem().Put("huge.bin", make([]byte, DefaultLargeFile+1)))
	e = s.WantErr(t, "file", tooltest.CopyArgs(big, "validateOnly", true), failure.ConfirmationRequired)
	if e.Details["thresholdBytes"] != int64(DefaultLargeFile) {
		t.Fatalf("default threshold: %+v", e)
	}
	s.Preflight(t, "file", tooltest.CopyArgs(big, "confirmLargeFile", true), "expectedSourceHash", 1)
	if uploads.Load() != 1 {
		t.Fatal("a preflight uploaded")
	}
}

func TestUploadNeedsConfirmation(t *testing.T) {
	s := newFixture(t)
	uploads := s.countUploads()
	args := map[string]any{"action": "upload_asset", "uploadSource": s.mem().Put("a.png", []byte("a"))}
	s.Unconfirmed = true
	// The preflight executes nothing and needs no confirmation.
	pre := s.Preflight(t, "file", args, "expectedSourceHash", 1)
	e := s.WantErr(t, "file", tooltest.CommitArgs(args, pre), failure.ConfirmationRequired)
	wantAttemptedFalse(t, e)
	if uploads.Load() != 0 {
		t.Fatal("an unconfirmed upload ran")
	}
	s.Unconfirmed = false
	s.Commit(t, "file", args, pre)
	if uploads.Load() != 1 {
		t.Fatalf("%d uploads", uploads.Load())
	}
}

func TestUploadStrictOff(t *testing.T) {
	s := &sfix{tooltest.NewStrict(t, true, testTools)}
	data := []byte("direct")
	args := map[string]any{"action": "upload_asset", "uploadSource": s.mem().Put("d.txt", data)}
	s.WantErr(t, "file", tooltest.CopyArgs(args, "validateOnly", true), failure.StrictModeDisabled)
	res := s.OK(t, "file", args)
	if res["writeSafetyGuaranteed"] != false || res["writeAttempted"] != true {
		t.Fatalf("direct upload: %v", res)
	}
	if stored, ok := s.read(t, "/data/"+res["assetPath"].(string)); !ok || !bytes.Equal(stored, data) {
		t.Fatalf("stored %q", stored)
	}
}
