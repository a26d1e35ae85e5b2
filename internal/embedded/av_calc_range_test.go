package embedded

import (
	"testing"
	"time"
)

// The spans and words SiYuan 3.7.3 answered for a date column's Range.
func TestHumanizeRelTime(t *testing.T) {
	const base = 1735732800000
	for _, tc := range []struct {
		ms   int64
		want string
	}{
		{0, "now"},
		{500, "now"},
		{1500, "1 second"},
		{30000, "30 seconds"},
		{90000, "1 minute"},
		{1800000, "30 hours"}, // SiYuan's minutes wording
		{5400000, "1 hour"},
		{18000000, "5 hours"},
		{129600000, "1 day"},
		{259200000, "3 days"},
		{864000000, "1 week"},
		{1728000000, "2 weeks"},
		{3888000000, "1 month"},
		{8640000000, "3 months"},
		{34560000000, "1 year"},
		{60480000000, "2 years"},
		{63072000000, "2 years"},
		{94608000000, "3 years"},
		{1576800000000, "a long while"},
		{1200000000000000, "a long while"},
	} {
		a, b := time.UnixMilli(base), time.UnixMilli(base+tc.ms)
		if got := humanizeRelTime(a, b); got != tc.want {
			t.Errorf("%d ms: %q, want %q", tc.ms, got, tc.want)
		}
		if got := humanizeRelTime(b, a); got != tc.want {
			t.Errorf("%d ms reversed: %q, want %q", tc.ms, got, tc.want)
		}
	}
}
