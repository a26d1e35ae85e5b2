package embedded

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func TestHumanBytes(t *testing.T) {
	// As humanize.BytesCustomCeil(n, 2) prints them (4437 captured from
	// SiYuan 3.7.3's hInstallSize).
	for n, want := range map[int64]string{0: "0 B", 999: "999 B", 1000: "1 kB", 4437: "4.44 kB", 1500000: "1.5 MB", 2_000_000_000: "2 GB"} {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestOverlay(t *testing.T) {
	dst := map[string]any{"a": map[string]any{"x": 1, "y": 2}, "b": 3}
	overlay(dst, map[string]any{"a": map[string]any{"y": 9, "z": 8}, "b": map[string]any{"n": 1}, "c": "new"})
	got, _ := json.Marshal(dst)
	if string(got) != `{"a":{"x":1,"y":9,"z":8},"b":{"n":1},"c":"new"}` {
		t.Errorf("overlay: %s", got)
	}
}

// TestGetConfFromTheWorkspace: what conf/conf.json stores is laid over the
// template, the access code masked as SiYuan masks it, the token the API
// token, the paths blank.
func TestGetConfFromTheWorkspace(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "conf"), 0o755); err != nil {
		t.Fatal(err)
	}
	stored := `{"api":{"token":"tok"},"accessAuthCode":"4321","sync":{"enabled":true,"stat":"synced","s3":{"secretKey":"k"}},` +
		`"userData":"u","system":{"workspaceDir":"/secret/path"}}`
	if err := os.WriteFile(filepath.Join(dir, "conf", "conf.json"), []byte(stored), 0o600); err != nil {
		t.Fatal(err)
	}
	e := openEnv(t, dir)
	cf, err := e.c.GetConf(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		API            map[string]any `json:"api"`
		AccessAuthCode string         `json:"accessAuthCode"`
		UserData       string         `json:"userData"`
		Sync           struct {
			Enabled bool           `json:"enabled"`
			Stat    string         `json:"stat"`
			S3      map[string]any `json:"s3"`
		} `json:"sync"`
		System map[string]any `json:"system"`
	}
	if err := json.Unmarshal(cf.Conf, &c); err != nil {
		t.Fatal(err)
	}
	if c.API["token"] != "tok" || c.AccessAuthCode != maskedAccessAuthCode || c.UserData != "" || !c.Sync.Enabled || c.Sync.Stat != "synced" ||
		c.Sync.S3["secretKey"] != "k" || c.Sync.S3["bucket"] != "" || c.System["workspaceDir"] != "" || c.System["kernelVersion"] != Version || !cf.Start {
		t.Errorf("conf: %+v start %v", c, cf.Start)
	}
	w, err := e.c.GetWorkspaceInfo(context.Background())
	if err != nil || w.WorkspaceDir != e.k.Dir() {
		t.Errorf("workspace info %+v %v", w, err)
	}
}
