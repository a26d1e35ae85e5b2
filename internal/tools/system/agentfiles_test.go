package system

import (
	"testing"
	"time"
)

func TestMemoryStatus(t *testing.T) {
	now := time.Date(2026, 12, 8, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct{ text, at, want string }{
		{"", "2026-12-08T11:00:00Z", "missing"},
		{"  \n", "", "missing"},
		{"notes", "2026-12-08T11:00:00Z", "fresh"},
		{"notes", "2026-12-01T12:00:00Z", "fresh"},
		{"notes", "2026-12-01T11:59:59Z", "stale"},
		{"notes", "", "stale"},
		{"notes", "yesterday", "stale"},
	} {
		if got := memoryStatus(tc.text, tc.at, now); got != tc.want || memoryAdvice[got] == "" {
			t.Errorf("memoryStatus(%q, %q) = %s, want %s", tc.text, tc.at, got, tc.want)
		}
	}
}
