package siyuan

import "strings"

// insertActions are the operation actions that carry inserted block DOM in
// Data. The kernel rewrites appendInsert/prependInsert to "insert" once the
// queue has run, but both spellings are accepted.
func isInsertAction(action string) bool {
	switch action {
	case "insert", "appendInsert", "prependInsert", "append", "prepend":
		return true
	}
	return false
}

// FirstInsertedID returns the ID of the first top-level block inserted by
// txs (as returned by InsertBlock, AppendBlock, PrependBlock, or UpdateBlock
// on a document), or "" if there is none. Only the ID the kernel filled into
// the operation counts: SiYuan answers code 0 with an empty op.ID when the
// insert failed inside its transaction queue (an unknown anchor, say), and
// the DOM it echoes then names a block that was never created.
func FirstInsertedID(txs []Transaction) string {
	for _, tx := range txs {
		for _, op := range tx.DoOperations {
			if isInsertAction(op.Action) && isNodeID(op.ID) {
				return op.ID
			}
		}
	}
	return ""
}

// InsertedIDs returns the IDs of every top-level block inserted by txs, in
// order. When markdown produces several top-level blocks the kernel reports
// only the first as the operation ID; the others are only visible as
// data-node-id attributes in the operation's DOM, which is parsed here.
func InsertedIDs(txs []Transaction) []string {
	var ids []string
	seen := map[string]bool{}
	add := func(id string) {
		if id != "" && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	for _, tx := range txs {
		for _, op := range tx.DoOperations {
			if !isInsertAction(op.Action) || !isNodeID(op.ID) {
				continue // not an insert, or one that did not happen
			}
			var fromDOM []string
			if dom, ok := op.Data.(string); ok {
				fromDOM = topLevelNodeIDs(dom)
			}
			if len(fromDOM) == 0 && isNodeID(op.ID) {
				add(op.ID)
			}
			for _, id := range fromDOM {
				add(id)
			}
		}
	}
	return ids
}

// topLevelNodeIDs extracts data-node-id from the outermost <div> elements of
// a SiYuan block DOM. Every block is a <div data-node-id=...>; nested blocks
// and block internals are divs too, so depth is tracked over div tags only.
// Text and attribute values are HTML-escaped by Lute, but quoted attribute
// values are still skipped properly in case they contain '>'.
func topLevelNodeIDs(dom string) []string {
	var ids []string
	depth := 0
	i := 0
	for i < len(dom) {
		lt := strings.IndexByte(dom[i:], '<')
		if lt < 0 {
			break
		}
		i += lt
		rest := dom[i:]
		switch {
		case strings.HasPrefix(rest, "<!--"):
			end := strings.Index(rest[4:], "-->")
			if end < 0 {
				return ids
			}
			i += 4 + end + 3
		case hasTagPrefix(rest, "</div"):
			depth = max(depth-1, 0)
			i += tagEnd(rest)
		case hasTagPrefix(rest, "<div"):
			n := tagEnd(rest)
			tag := rest[:n]
			if depth == 0 {
				if id, ok := attrValue(tag, "data-node-id"); ok && isNodeID(id) {
					ids = append(ids, id)
				}
			}
			if !strings.HasSuffix(tag, "/>") {
				depth++
			}
			i += n
		default:
			i += tagEnd(rest)
		}
	}
	return ids
}

// hasTagPrefix reports whether s starts with the tag opener p followed by a
// delimiter, so "<div" does not match "<divider".
func hasTagPrefix(s, p string) bool {
	if len(s) < len(p) || !strings.EqualFold(s[:len(p)], p) {
		return false
	}
	if len(s) == len(p) {
		return true
	}
	switch s[len(p)] {
	case ' ', '\t', '\n', '\r', '\f', '>', '/':
		return true
	}
	return false
}

// tagEnd returns the length of the tag starting at s[0]=='<', skipping quoted
// attribute values; the whole rest of s if the tag is unterminated.
func tagEnd(s string) int {
	var quote byte
	for j := 1; j < len(s); j++ {
		c := s[j]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '>':
			return j + 1
		}
	}
	return len(s)
}

// attrValue finds name="value" (or single-quoted) inside one start tag.
func attrValue(tag, name string) (string, bool) {
	for i := 0; i < len(tag); {
		j := strings.Index(tag[i:], name)
		if j < 0 {
			return "", false
		}
		k := i + j
		i = k + len(name)
		// The attribute name must stand alone (preceded by whitespace).
		if k == 0 || !isSpace(tag[k-1]) {
			continue
		}
		rest := strings.TrimLeft(tag[i:], " \t\n\r\f")
		if !strings.HasPrefix(rest, "=") {
			continue
		}
		rest = strings.TrimLeft(rest[1:], " \t\n\r\f")
		if rest == "" {
			return "", false
		}
		if q := rest[0]; q == '"' || q == '\'' {
			end := strings.IndexByte(rest[1:], q)
			if end < 0 {
				return "", false
			}
			return rest[1 : 1+end], true
		}
		end := strings.IndexAny(rest, " \t\n\r\f>")
		if end < 0 {
			end = len(rest)
		}
		return strings.TrimSuffix(rest[:end], "/"), true
	}
	return "", false
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}

// isNodeID reports whether s has SiYuan's block ID shape
// "YYYYMMDDHHMMSS-xxxxxxx" (7 lowercase letters or digits).
func isNodeID(s string) bool {
	if len(s) != 22 || s[14] != '-' {
		return false
	}
	for i := 0; i < 14; i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	for i := 15; i < 22; i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'z') {
			return false
		}
	}
	return true
}
