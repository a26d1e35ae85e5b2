package kernelview

import (
	"strings"
	"testing"
)

func TestDailyDateParsing(t *testing.T) {
	for _, c := range []struct{ kd, want string }{
		{"{: custom-dailynote-20261201=\"20261201\" id=\"x\"}", "20261201"},
		{"para\n{: id=\"a\"}\n\n{: custom-dailynote-20261130=\"20261130\" custom-dailynote-20261201=\"20261201\"}", "20261201"},
		{"custom-dailynote-20261201 in text\n{: id=\"a\"}\n\n{: id=\"d\" title=\"x\"}", ""},
		{"{: custom-dailynote-2026=\"2026\"}", ""},
		{"", ""},
	} {
		if got := dailyDate(c.kd); got != c.want {
			t.Errorf("dailyDate(%q) = %q, want %q", c.kd, got, c.want)
		}
	}
}

// FuzzDailyDate: any kramdown the kernel answers yields no date or an
// eight-digit one found in it.
func FuzzDailyDate(f *testing.F) {
	f.Add("{: custom-dailynote-20261201=\"20261201\" id=\"x\"}")
	f.Add("a\n{: id=\"b\"}\n\n{: custom-dailynote-")
	f.Add("\n{:custom-dailynote-99999999")
	f.Fuzz(func(t *testing.T, kd string) {
		d := dailyDate(kd)
		if d != "" && (len(d) != 8 || !isDigits(d) || !strings.Contains(kd, DailyAttrPrefix+d)) {
			t.Fatalf("dailyDate(%q) = %q", kd, d)
		}
	})
}
