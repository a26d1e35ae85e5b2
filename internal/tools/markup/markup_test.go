package markup

import "testing"

func TestNormalizeTitle(t *testing.T) {
	for in, want := range map[string]string{
		" a/b ": "ab", "x\ty\n": "xy", "\u00a0nb\u00a0": "nb", "z\u200bw": "zw", "e\ue000f": "ef", "👨\u200d👩": "👨\u200d👩",
	} {
		if got := NormalizeTitle(in); got != want {
			t.Errorf("NormalizeTitle(%q) = %q, want %q", in, got, want)
		}
	}
}
