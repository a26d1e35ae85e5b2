package embedded

import "testing"

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
