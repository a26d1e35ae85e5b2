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

func TestDailyChecks(t *testing.T) {
	const nb = "20260101000000-nbnbnbn"
	for _, c := range []struct {
		name string
		err  error
		ok   bool
	}{
		{"target ok", DailyTarget{Notebook: nb, SavePath: "/daily/{{now}}"}.Check(), true},
		{"target missing", DailyTarget{Notebook: nb, Missing: true}.Check(), false},
		{"target closed", DailyTarget{Notebook: nb, Closed: true, SavePath: "/d"}.Check(), false},
		{"target without path", DailyTarget{Notebook: nb}.Check(), false},
		{"target at root", DailyTarget{Notebook: nb, SavePath: "/"}.Check(), false},
		{"note ok", DailyNoteAt{ID: "d", Notebook: nb, Path: "/a/d.sy", Date: "20260101"}.Of(nb), true},
		{"note elsewhere", DailyNoteAt{ID: "d", Notebook: "other", Path: "/d.sy", Date: "20260101"}.Of(nb), false},
		{"note is a block", DailyNoteAt{ID: "b", Notebook: nb, Path: "/d.sy", Date: "20260101"}.Of(nb), false},
		{"note without date", DailyNoteAt{ID: "d", Notebook: nb, Path: "/d.sy"}.Of(nb), false},
	} {
		if (c.err == nil) != c.ok {
			t.Errorf("%s: %v", c.name, c.err)
		}
	}
}
