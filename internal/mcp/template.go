package mcp

import (
	"fmt"
	"strings"
)

// parseTemplate splits an RFC 6570 level-1 template into literal pieces and
// "{var}" pieces.
func parseTemplate(t string) ([]string, error) {
	var segs []string
	for len(t) > 0 {
		i := strings.IndexByte(t, '{')
		if i < 0 {
			segs = append(segs, t)
			break
		}
		if i > 0 {
			segs = append(segs, t[:i])
		}
		j := strings.IndexByte(t[i:], '}')
		if j < 0 {
			return nil, fmt.Errorf("unterminated variable in URI template %q", t)
		}
		name := t[i+1 : i+j]
		if name == "" || strings.ContainsAny(name, "{/?#") {
			return nil, fmt.Errorf("bad variable %q in URI template", name)
		}
		if len(segs) > 0 && strings.HasPrefix(segs[len(segs)-1], "{") {
			return nil, fmt.Errorf("adjacent variables in URI template %q", t)
		}
		segs = append(segs, "{"+name+"}")
		t = t[i+j+1:]
	}
	return segs, nil
}

// matchTemplate matches uri against parsed segments; each variable matches
// one or more characters other than '/', '?' and '#'.
func matchTemplate(segs []string, uri string) (map[string]string, bool) {
	vars := map[string]string{}
	for i, seg := range segs {
		if !strings.HasPrefix(seg, "{") {
			if !strings.HasPrefix(uri, seg) {
				return nil, false
			}
			uri = uri[len(seg):]
			continue
		}
		end := strings.IndexAny(uri, "/?#")
		if end < 0 {
			end = len(uri)
		}
		if i+1 < len(segs) {
			next := segs[i+1]
			k := strings.Index(uri[:end], next)
			if k >= 0 {
				end = k
			} else if !strings.HasPrefix(uri[end:], next) {
				return nil, false
			}
		}
		if end == 0 {
			return nil, false
		}
		vars[seg[1:len(seg)-1]] = uri[:end]
		uri = uri[end:]
	}
	return vars, uri == ""
}
