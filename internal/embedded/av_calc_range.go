package embedded

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// The "Range" of dates, created and updated times: the span from the
// earliest to the latest, in words as SiYuan 3.7.3's HumanizeRelTime
// writes it in English (go-humanize's CustomRelTime with SiYuan's
// magnitudes and no label). Up to an hour SiYuan counts minutes with its
// hours wording: 30 minutes is "30 hours", as 3.7.3 answers.

// Go-humanize's spans: a month of 30 days, a year of 12 months.
const (
	relDay      = 24 * time.Hour
	relWeek     = 7 * relDay
	relMonth    = 30 * relDay
	relYear     = 12 * relMonth
	relLongTime = 37 * relYear
)

// relMagnitude is a span below D, written by format (a %d counts the
// span in divBy units).
type relMagnitude struct {
	d      time.Duration
	format string
	divBy  time.Duration
}

// relMagnitudes are humanizeTimeMagnitudes with the English words.
func relMagnitudes() []relMagnitude {
	return []relMagnitude{
		{time.Second, "now", time.Second},
		{2 * time.Second, "1 second", 1},
		{time.Minute, "%d seconds", time.Second},
		{2 * time.Minute, "1 minute", 1},
		{time.Hour, "%d hours", time.Minute},
		{2 * time.Hour, "1 hour", 1},
		{relDay, "%d hours", time.Hour},
		{2 * relDay, "1 day", 1},
		{relWeek, "%d days", relDay},
		{2 * relWeek, "1 week", 1},
		{relMonth, "%d weeks", relWeek},
		{2 * relMonth, "1 month", 1},
		{relYear, "%d months", relMonth},
		{23 * relMonth, "1 year", 1},
		{2 * relYear, "2 years", 1},
		{relLongTime, "%d years", relYear},
		{1<<63 - 1, "a long while", 1},
	}
}

// humanizeRelTime is the span between a and b in words.
func humanizeRelTime(a, b time.Time) string {
	diff := b.Sub(a)
	if a.After(b) {
		diff = a.Sub(b)
	}
	mags := relMagnitudes()
	n := sort.Search(len(mags), func(i int) bool { return mags[i].d > diff })
	n = min(n, len(mags)-1)
	m := mags[n]
	if strings.Contains(m.format, "%d") {
		return fmt.Sprintf(m.format, diff/m.divBy)
	}
	return m.format
}

// calcDateRange is Range over a date column: the earliest and latest
// dates, isNotTime and hasEndDate of the last cell that moved either
// (nil without dates).
func calcDateRange(cells []*wire.AVValue) *wire.AVValue {
	var earliest, latest int64
	var isNotTime, hasEndDate bool
	for _, v := range cells {
		if v == nil || v.Date == nil || !v.Date.IsNotEmpty {
			continue
		}
		d := v.Date
		if earliest == 0 || earliest > d.Content {
			earliest, isNotTime, hasEndDate = d.Content, d.IsNotTime, d.HasEndDate
		}
		if latest == 0 || latest < d.Content {
			latest, isNotTime, hasEndDate = d.Content, d.IsNotTime, d.HasEndDate
		}
	}
	if earliest == 0 || latest == 0 {
		return nil
	}
	// NewFormattedValueDate in the duration format: both ends "not
	// empty", the words for the span as the formatted content.
	return &wire.AVValue{Date: &wire.AVValueDate{Content: earliest, IsNotEmpty: true, HasEndDate: hasEndDate,
		IsNotTime: isNotTime, Content2: latest, IsNotEmpty2: true,
		FormattedContent: humanizeRelTime(time.UnixMilli(earliest), time.UnixMilli(latest))}}
}

// calcTimeRange is Range over a created or updated column (an updated
// time counts when not empty); the result has the span in words.
func calcTimeRange(typ string, cells []*wire.AVValue) *wire.AVValue {
	var earliest, latest int64
	for _, v := range cells {
		t := calcTime(typ, v)
		if t == nil || (typ == wire.AVKeyUpdated && !t.IsNotEmpty) {
			continue
		}
		if earliest == 0 || earliest > t.Content {
			earliest = t.Content
		}
		if latest == 0 || latest < t.Content {
			latest = t.Content
		}
	}
	if earliest == 0 || latest == 0 {
		return nil
	}
	t := &wire.AVValueTime{Content: earliest, Content2: latest,
		FormattedContent: humanizeRelTime(time.UnixMilli(earliest), time.UnixMilli(latest))}
	if typ == wire.AVKeyUpdated {
		return &wire.AVValue{Updated: t}
	}
	return &wire.AVValue{Created: t}
}
