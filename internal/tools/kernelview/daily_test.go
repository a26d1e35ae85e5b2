package kernelview

import "testing"

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
