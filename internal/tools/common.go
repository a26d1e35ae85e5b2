package tools

import (
	"regexp"

	"github.com/sisyphus-go/sisyphus/internal/strict"
)

var idRE = regexp.MustCompile(`^\d{14}-[0-9a-z]{7}$`)

// read is the policy of every read-only action.
var read = strict.Policy{Class: strict.Read}

func idParam(name, desc string, required bool) Param {
	return Param{Name: name, Type: String, Description: desc + " (a SiYuan id like 20260812120000-abcdefg)", Required: required}
}

// checkID refuses a malformed id before it reaches the kernel (SiYuan's own
// answer to some malformed ids is a misleading success).
func checkID(name, v string) error {
	if !idRE.MatchString(v) {
		return badArg("argument %q must be a SiYuan id like 20260812120000-abcdefg, got %q", name, v)
	}
	return nil
}

// page is the standard list payload.
type page struct {
	Data        any  `json:"data"`
	Total       int  `json:"total"`
	Page        int  `json:"page"`
	PageSize    int  `json:"pageSize"`
	PageCount   int  `json:"pageCount"`
	HasNextPage bool `json:"hasNextPage"`
}

var pageParams = []Param{
	{Name: "page", Type: Integer, Description: "1-based page", Default: 1, Min: intp(1)},
	{Name: "pageSize", Type: Integer, Description: "items per page", Default: 50, Min: intp(1), Max: intp(200)},
}

// paginate slices items for the page arguments; a page past the end is
// clamped to the last page.
func paginate[T any](items []T, a *Args) page {
	size := a.Int("pageSize")
	total := len(items)
	count := (total + size - 1) / size
	if count < 1 {
		count = 1
	}
	p := a.Int("page")
	if p > count {
		p = count
	}
	lo := (p - 1) * size
	hi := min(lo+size, total)
	data := items[lo:hi]
	if data == nil {
		data = []T{}
	}
	return page{Data: data, Total: total, Page: p, PageSize: size, PageCount: count, HasNextPage: p < count}
}
