package embedded

import (
	"testing"
	"time"
)

func TestFilterText(t *testing.T) {
	for _, tc := range []struct {
		op, value, want string
		pass            bool
	}{
		{avOpEq, "Apple", "aPPLE", true},
		{avOpEq, "Apple pie", "apple", false},
		{avOpNe, "Apple", "apple", false},
		{avOpContains, "Cherry APPLE", "apple", true},
		{avOpNotContain, "banana", "apple", true},
		{avOpStarts, "Apple pie", "APP", true},
		{avOpEnds, "Apple pie", "APP", false},
		{avOpContains, "anything", "  ", true}, // a blank value passes all
		{avOpEmpty, " ", "", true},
		{avOpNotEmpty, "", "", false},
		{avOpGt, "b", "a", false}, // not a text operator
	} {
		if got := filterText(tc.op, tc.value, tc.want); got != tc.pass {
			t.Errorf("filterText(%q, %q, %q) = %v, want %v", tc.op, tc.value, tc.want, got, tc.pass)
		}
	}
}

func TestRelativeRegion(t *testing.T) {
	now := time.Date(2026, 3, 18, 15, 4, 5, 0, time.UTC) // a Wednesday
	day := func(y, m, d int) time.Time { return time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC) }
	end := func(y, m, d int) time.Time { return time.Date(y, time.Month(m), d, 23, 59, 59, 999999999, time.UTC) }
	for _, tc := range []struct {
		name       string
		d          avRelativeDate
		start, end time.Time
	}{
		{"2 days before", avRelativeDate{2, 0, -1}, day(2026, 3, 16), day(2026, 3, 18)},
		{"today", avRelativeDate{1, 0, 0}, day(2026, 3, 18), end(2026, 3, 18)},
		{"3 days after", avRelativeDate{3, 0, 1}, day(2026, 3, 21), end(2026, 3, 21)},
		{"this week", avRelativeDate{1, 1, 0}, day(2026, 3, 16), end(2026, 3, 22)},
		{"1 week before", avRelativeDate{1, 1, -1}, day(2026, 3, 9), day(2026, 3, 16)},
		{"this month", avRelativeDate{1, 2, 0}, day(2026, 3, 1), day(2026, 4, 1).Add(-time.Nanosecond)},
		{"1 month after", avRelativeDate{1, 2, 1}, day(2026, 4, 1), day(2026, 5, 1).Add(-time.Nanosecond)},
		{"2 years before", avRelativeDate{2, 3, -1}, day(2024, 1, 1), day(2026, 1, 1)},
	} {
		s, e := relativeRegion(now, &tc.d)
		if !s.Equal(tc.start) || !e.Equal(tc.end) {
			t.Errorf("%s: %v – %v, want %v – %v", tc.name, s, e, tc.start, tc.end)
		}
	}
}
