package tools

import "testing"

func TestUsedBy(t *testing.T) {
	all := []string{"get", "render", "search", "add", "remove", "rename"}
	writes := []string{"add", "remove", "rename"}
	for _, tc := range []struct {
		users []string
		want  string
	}{
		{all, ""},
		{[]string{"remove", "add", "rename"}, " (every write)"},
		{[]string{"get"}, " (actions: get)"},
		{[]string{"get", "render", "add", "remove", "rename"}, " (all actions but search)"},
		{[]string{"get", "add", "remove"}, " (actions: get, add, remove)"},
	} {
		if got := usedBy(tc.users, all, writes); got != tc.want {
			t.Errorf("usedBy(%v) = %q, want %q", tc.users, got, tc.want)
		}
	}
}
