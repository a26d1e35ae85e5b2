package embedded

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/djherbis/times"
)

// 13, 4096 and 12047 bytes are sizes statAsset was seen to show on SiYuan
// 3.7.3; the others follow the same rule (under 10 bytes plain, else
// rounded up to two decimals).
func TestIBytesCeil(t *testing.T) {
	for s, want := range map[uint64]string{9: "9 B", 13: "13 B", 4096: "4 KiB", 12047: "11.77 KiB", 1025: "1.01 KiB"} {
		if got := iBytesCeil(s); got != want {
			t.Errorf("iBytesCeil(%d) = %q, want %q", s, got, want)
		}
	}
}

// TestStatAssetCreatedIsBirthTime: created is when the file was made, not
// when it was last changed, wherever the filesystem keeps a birth time.
func TestStatAssetCreatedIsBirthTime(t *testing.T) {
	e := openEnv(t, t.TempDir())
	p := filepath.Join(e.k.dataDir, "assets", "born.txt")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.Local)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	_, body := e.raw("POST", "/api/asset/statAsset", "Token tok", `{"path":"assets/born.txt"}`)
	var got struct {
		Data struct{ Created, Updated int64 } `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	ts, err := times.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	want := old.UnixMilli()
	if ts.HasBirthTime() {
		want = ts.BirthTime().UnixMilli()
	}
	if got.Data.Updated != old.UnixMilli() || got.Data.Created != want {
		t.Fatalf("statAsset = %s; want created %d (birth time kept: %v), updated %d", body, want, ts.HasBirthTime(), old.UnixMilli())
	}
}
