package search

import (
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
)

// The SQL guard decides whether a query_sql statement may be sent. SiYuan
// runs /api/query/sql on its SQLite index with no deadline, and nothing
// outside SiYuan can interrupt it: a statement that does not end keeps a
// kernel core busy until SiYuan restarts. So the guard admits one read-only
// SELECT (or WITH ... SELECT) and refuses, before anything is sent, what
// can run without bound:
//
//   - recursive common table expressions (with or without RECURSIVE: in
//     SQLite a CTE that names itself, or a later CTE, recurses);
//   - cross joins of tables (a comma between table sources, CROSS JOIN, or
//     a JOIN without ON or USING), whose rows grow with the product of the
//     tables; table-valued functions such as json_each may be joined so;
//   - functions that allocate without bound (randomblob, zeroblob, printf,
//     format) or reach outside the index (load_extension, readfile,
//     writefile).
//
// Other statements end. Sisyphus's read deadline bounds how long it waits;
// the embedded kernel also interrupts the statement then.

// sqlToken is one lexical token of a statement.
type sqlToken struct {
	kind byte   // 'w' word, 'q' quoted identifier, 's' string, 'n' number, 'p' punctuation
	text string // a word upper-cased; punctuation as is
}

// lexSQL splits a statement into tokens, dropping comments and blanks. An
// unterminated string, identifier or comment runs to the end of the input.
func lexSQL(s string) []sqlToken {
	var out []sqlToken
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				i = len(s)
			} else {
				i += j + 4
			}
		case c == '\'' || c == '"' || c == '`' || c == '[':
			end := c
			if c == '[' {
				end = ']'
			}
			j := i + 1
			for j < len(s) {
				if s[j] == end {
					if end != ']' && j+1 < len(s) && s[j+1] == end { // doubled quote
						j += 2
						continue
					}
					break
				}
				j++
			}
			kind := byte('q')
			if c == '\'' {
				kind = 's'
			}
			text := s[i:min(j+1, len(s))]
			if kind == 'q' {
				text = strings.ToUpper(strings.Trim(text, "\"`[]"))
			}
			out = append(out, sqlToken{kind, text})
			i = j + 1
		case isWordByte(c):
			j := i
			for j < len(s) && (isWordByte(s[j]) || s[j] >= '0' && s[j] <= '9' || s[j] == '$') {
				j++
			}
			out = append(out, sqlToken{'w', strings.ToUpper(s[i:j])})
			i = j
		case c >= '0' && c <= '9':
			j := i
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.' || s[j] == 'e' || s[j] == 'E' || s[j] == 'x' || s[j] == 'X' ||
				s[j] >= 'a' && s[j] <= 'f' || s[j] >= 'A' && s[j] <= 'F') {
				j++
			}
			out = append(out, sqlToken{'n', s[i:j]})
			i = j
		default:
			out = append(out, sqlToken{'p', s[i : i+1]})
			i++
		}
	}
	return out
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
}

// refusedFunctions allocate without bound or reach outside the index.
var refusedFunctions = map[string]bool{
	"RANDOMBLOB": true, "ZEROBLOB": true, "PRINTF": true, "FORMAT": true,
	"LOAD_EXTENSION": true, "READFILE": true, "WRITEFILE": true, "EDIT": true, "FTS3_TOKENIZER": true,
}

// The guard's own work grows with the statement's size times its nesting,
// so both are capped far above what a query of the index needs.
const (
	maxSQLBytes = 64 << 10
	maxSQLDepth = 64
)

// clauseEnd are the words that end a FROM clause.
var clauseEnd = map[string]bool{
	"WHERE": true, "GROUP": true, "HAVING": true, "ORDER": true, "LIMIT": true, "WINDOW": true,
	"UNION": true, "INTERSECT": true, "EXCEPT": true, "RETURNING": true,
}

func sqlRefuse(format string, a ...any) error {
	e := failure.Invalid("query_sql: "+format, a...)
	e.Action = "rewrite the statement (one SELECT, JOIN ... ON instead of cross joins, no recursive WITH), or use search.fulltext"
	return e
}

// checkSQL reports whether a statement may be sent to the kernel, and
// returns it without a trailing semicolon.
func checkSQL(stmt string) (string, error) {
	stmt = strings.TrimSpace(stmt)
	if len(stmt) > maxSQLBytes {
		return "", sqlRefuse("the statement is %d bytes; at most %d are accepted", len(stmt), maxSQLBytes)
	}
	toks := lexSQL(stmt)
	// A trailing semicolon is allowed; any other ends a statement early.
	for len(toks) > 0 && toks[len(toks)-1].kind == 'p' && toks[len(toks)-1].text == ";" {
		toks = toks[:len(toks)-1]
		stmt = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(stmt), ";"))
	}
	if len(toks) == 0 || toks[0].kind != 'w' || toks[0].text != "SELECT" && toks[0].text != "WITH" {
		return "", failure.Invalid("only a single SELECT or WITH statement is allowed")
	}
	depth := 0
	for i, t := range toks {
		switch {
		case t.kind == 'p' && t.text == ";":
			return "", failure.Invalid("only a single statement is allowed")
		case t.kind == 'p' && t.text == "(":
			if depth++; depth > maxSQLDepth {
				return "", sqlRefuse("parentheses nest more than %d deep", maxSQLDepth)
			}
		case t.kind == 'p' && t.text == ")":
			if depth--; depth < 0 {
				return "", sqlRefuse("unbalanced parentheses")
			}
		case t.kind == 'w' && t.text == "RECURSIVE":
			return "", sqlRefuse("recursive common table expressions are refused: SiYuan cannot bound or interrupt them")
		case t.kind == 'w' && refusedFunctions[t.text] && i+1 < len(toks) && toks[i+1].text == "(":
			return "", sqlRefuse("the function %s is refused: it can allocate without bound or reach outside the index", strings.ToLower(t.text))
		case t.kind == 'w' && t.text == "WITH":
			if err := checkCTEs(toks, i+1); err != nil {
				return "", err
			}
		}
	}
	if depth != 0 {
		return "", sqlRefuse("unbalanced parentheses")
	}
	if err := checkScope(toks, 0, len(toks), nil); err != nil {
		return "", err
	}
	return stmt, nil
}

// matching returns the index of the parenthesis closing the one at open.
func matching(toks []sqlToken, open int) int {
	depth := 0
	for i := open; i < len(toks); i++ {
		if toks[i].kind == 'p' {
			switch toks[i].text {
			case "(":
				depth++
			case ")":
				if depth--; depth == 0 {
					return i
				}
			}
		}
	}
	return len(toks)
}

func isName(t sqlToken) bool { return t.kind == 'w' || t.kind == 'q' }

// checkCTEs refuses a WITH clause (starting at toks[i]) in which a common
// table expression names itself or one defined after it: in SQLite either
// recurses.
func checkCTEs(toks []sqlToken, i int) error {
	type cte struct {
		name     string
		from, to int // its body's tokens
	}
	var ctes []cte
	if i < len(toks) && toks[i].text == "RECURSIVE" {
		return sqlRefuse("recursive common table expressions are refused: SiYuan cannot bound or interrupt them")
	}
	for i < len(toks) && isName(toks[i]) {
		name := toks[i].text
		i++
		if i < len(toks) && toks[i].text == "(" { // column list
			i = matching(toks, i) + 1
		}
		if i >= len(toks) || toks[i].text != "AS" {
			return sqlRefuse("cannot read the WITH clause")
		}
		i++
		for i < len(toks) && (toks[i].text == "NOT" || toks[i].text == "MATERIALIZED") {
			i++
		}
		if i >= len(toks) || toks[i].text != "(" {
			return sqlRefuse("cannot read the WITH clause")
		}
		end := matching(toks, i)
		ctes = append(ctes, cte{name, i + 1, end})
		i = end + 1
		if i >= len(toks) || toks[i].text != "," {
			break
		}
		i++
	}
	for k, c := range ctes {
		for _, later := range ctes[k:] {
			for _, t := range toks[c.from:min(c.to, len(toks))] {
				if isName(t) && t.text == later.name {
					return sqlRefuse("the common table expression %s refers to %s: in SQLite that recurses, and recursion is refused (SiYuan cannot bound or interrupt it)",
						strings.ToLower(c.name), strings.ToLower(later.name))
				}
			}
		}
	}
	return nil
}
