package embedded

import (
	"strings"
	"testing"
)

func TestPossiblyImage(t *testing.T) {
	for _, tc := range []struct {
		path string
		want bool
	}{
		{"assets/a-1.png", true},
		{"assets/a-1.JPEG", true},
		{"assets/report.pdf", false},
		{"https://example.com/pic", true},
		{"assets/noext", false},
		{"https://example.com/x.txt", false},
	} {
		if got := possiblyImage(tc.path); got != tc.want {
			t.Errorf("possiblyImage(%q) = %v, want %v", tc.path, got, tc.want)
		}
	}
}

func TestMoveCardField(t *testing.T) {
	for _, tc := range []struct {
		key, previous, want string
	}{
		{"c", "", "c a b"},
		{"a", "b", "b a c"},
		{"a", "c", "b c a"},
		{"a", "gone", "a b c"},
		{"gone", "a", "a b c"},
	} {
		v := newCardView("gallery")
		for _, id := range []string{"a", "b", "c"} {
			appendViewField(v, id, false)
		}
		moveCardField(v, tc.key, tc.previous)
		if got := strings.Join(viewFieldIDs(v), " "); got != tc.want {
			t.Errorf("move %s after %q: %s, want %s", tc.key, tc.previous, got, tc.want)
		}
	}
}
