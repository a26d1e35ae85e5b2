package search

import (
	"slices"
	"strings"
)

// The row-growth rules of the SQL guard. A join multiplies rows unless its
// condition ties the joined table to the others through a unique key, and a
// correlated subquery runs once per outer row unless it is tied to that row
// the same way. Every SiYuan table has a unique, indexed id column, so the
// guard admits:
//
//   - JOIN t ON t.id = x.col (or t.col = x.id) as one AND-conjunct of the
//     condition, both sides qualified, or JOIN t USING (id);
//   - a subquery that names an outer table only if its WHERE has such a
//     conjunct between one of its own tables and an outer one;
//   - table-valued functions (json_each, ...), which are bounded by their
//     argument, joined any way.
//
// Everything else that multiplies rows (comma and CROSS joins, NATURAL
// joins, JOIN without a key condition, ON 1=1, untied correlation) is
// refused before it is sent.

// joinWords may follow a source in a FROM clause; none of them is an alias.
var joinWords = map[string]bool{
	"ON": true, "USING": true, "JOIN": true, "LEFT": true, "RIGHT": true, "FULL": true, "INNER": true,
	"OUTER": true, "CROSS": true, "NATURAL": true, "INDEXED": true, "NOT": true, "AS": true,
}

// source is one table source of a FROM clause.
type source struct {
	name     string // alias, else table name ("" for an unnamed subquery)
	function bool   // a table-valued function call
	joined   bool   // reached by JOIN (not by a comma)
	natural  bool
	cross    bool
	on       [2]int // tokens of its ON condition, when it has one
	using    [2]int // tokens inside USING ( ... )
}

func punct(t sqlToken, p string) bool { return t.kind == 'p' && t.text == p }

// display names a source in a message.
func (s source) display() string {
	if s.name == "" {
		return "(subquery)"
	}
	return strings.ToLower(s.name)
}

func (s source) qualified() bool { return s.on[1] > s.on[0] || s.using[1] > s.using[0] }

// startsSelect reports whether the parenthesis at toks[open] holds a query.
func startsSelect(toks []sqlToken, open int) bool {
	return open+1 < len(toks) && toks[open+1].kind == 'w' && (toks[open+1].text == "SELECT" || toks[open+1].text == "WITH" || toks[open+1].text == "VALUES")
}

// checkScope checks the query in toks[lo:hi] and, recursively, every query
// nested in it; outer are the table names visible from enclosing queries.
func checkScope(toks []sqlToken, lo, hi int, outer map[string]bool) error {
	own := map[string]bool{}
	var wheres [][2]int
	for i := lo; i < hi; i++ {
		t := toks[i]
		switch {
		case punct(t, "(") && startsSelect(toks, i):
			i = matching(toks, i)
		case t.kind == 'w' && t.text == "FROM":
			sources, end, err := fromSources(toks, i+1, hi)
			if err != nil {
				return err
			}
			for _, s := range sources {
				if s.name != "" {
					own[s.name] = true
				}
			}
			if err := checkJoins(toks, sources); err != nil {
				return err
			}
			i = end - 1
		case t.kind == 'w' && t.text == "WHERE":
			end := clauseEndAt(toks, i+1, hi)
			wheres = append(wheres, [2]int{i + 1, end})
		}
	}
	visible := make(map[string]bool, len(own)+len(outer))
	for n := range outer {
		visible[n] = true
	}
	for n := range own {
		visible[n] = true
	}
	correlated := ""
	for i := lo; i < hi; i++ {
		t := toks[i]
		if punct(t, "(") && startsSelect(toks, i) {
			end := matching(toks, i)
			if err := checkScope(toks, i+1, min(end, len(toks)), visible); err != nil {
				return err
			}
			i = end
			continue
		}
		if isName(t) && i+2 < hi && punct(toks[i+1], ".") && isName(toks[i+2]) && !own[t.text] && outer[t.text] && correlated == "" {
			correlated = t.text
		}
	}
	if correlated == "" {
		return nil
	}
	for _, w := range wheres {
		for _, c := range conjuncts(toks, w[0], w[1]) {
			if a, b, ok := keyEquality(toks, c[0], c[1]); ok && (own[a] && outer[b] && !own[b] || own[b] && outer[a] && !own[a]) {
				return nil
			}
		}
	}
	return sqlRefuse("a subquery that names the outer %s runs once per outer row; tie it to that row by an id in its WHERE (inner.id = %s.col or inner.col = %s.id)",
		strings.ToLower(correlated), strings.ToLower(correlated), strings.ToLower(correlated))
}

// clauseEndAt returns where the clause starting at toks[i] ends: at a
// clause word or a closing parenthesis at its depth, or at hi.
func clauseEndAt(toks []sqlToken, i, hi int) int {
	for ; i < hi; i++ {
		t := toks[i]
		switch {
		case punct(t, "("):
			i = matching(toks, i)
		case punct(t, ")"):
			return i
		case t.kind == 'w' && clauseEnd[t.text]:
			return i
		}
	}
	return hi
}

// fromSources reads the FROM clause starting at toks[i] and returns its
// sources and where it ends.
func fromSources(toks []sqlToken, i, hi int) ([]source, int, error) {
	end := clauseEndAt(toks, i, hi)
	var sources []source
	var cur source
	expect := true // a source comes next
	natural, cross := false, false
	for i < end {
		t := toks[i]
		switch {
		case expect && punct(t, "("):
			i = matching(toks, i) + 1
			expect = false
			i = alias(toks, i, end, &cur)
			continue
		case expect && isName(t):
			cur.name = t.text
			i++
			if i < end && punct(toks[i], "(") {
				cur.function = true
				i = matching(toks, i) + 1
			}
			expect = false
			i = alias(toks, i, end, &cur)
			continue
		case punct(t, ","):
			sources = append(sources, cur)
			cur, expect = source{}, true
		case t.kind == 'w' && t.text == "NATURAL":
			natural = true
		case t.kind == 'w' && t.text == "CROSS":
			cross = true
		case t.kind == 'w' && t.text == "JOIN":
			sources = append(sources, cur)
			cur, expect = source{joined: true, natural: natural, cross: cross}, true
			natural, cross = false, false
		case t.kind == 'w' && t.text == "ON":
			j := i + 1
			for j < end && !punct(toks[j], ",") && !(toks[j].kind == 'w' && isJoinStart(toks[j].text)) {
				if punct(toks[j], "(") {
					j = matching(toks, j)
				}
				j++
			}
			cur.on = [2]int{i + 1, min(j, end)}
			i = j
			continue
		case t.kind == 'w' && t.text == "USING":
			if i+1 < end && punct(toks[i+1], "(") {
				close := matching(toks, i+1)
				cur.using = [2]int{i + 2, min(close, end)}
				i = close + 1
				continue
			}
		case punct(t, "("):
			i = matching(toks, i)
		}
		i++
	}
	sources = append(sources, cur)
	return sources, end, nil
}

func isJoinStart(w string) bool {
	return w == "JOIN" || w == "LEFT" || w == "RIGHT" || w == "FULL" || w == "INNER" || w == "CROSS" || w == "NATURAL"
}

// alias reads an optional [AS] alias after a source ending at toks[i].
func alias(toks []sqlToken, i, end int, cur *source) int {
	if i < end && toks[i].kind == 'w' && toks[i].text == "AS" {
		i++
	}
	if i < end && isName(toks[i]) && !(toks[i].kind == 'w' && (joinWords[toks[i].text] || clauseEnd[toks[i].text])) {
		cur.name = toks[i].text
		i++
	}
	return i
}

// checkJoins refuses sources that multiply rows (see the file comment).
func checkJoins(toks []sqlToken, sources []source) error {
	for k, s := range sources {
		switch {
		case k == 0, s.function:
			continue
		case s.cross:
			return sqlRefuse("CROSS JOIN is refused: its rows grow with the product of the tables; join with ON t.id = x.col")
		case s.natural:
			return sqlRefuse("NATURAL JOIN is refused: it can match no column and become a cross join; join with ON t.id = x.col")
		case !s.joined:
			return sqlRefuse("comma joins are refused: rows grow with the product of the tables; write JOIN t ON t.id = x.col")
		case !s.qualified():
			return sqlRefuse("a JOIN without ON or USING is a cross join, and cross joins are refused: their rows grow with the product of the tables")
		}
		if s.using[1] > s.using[0] {
			if !slices.ContainsFunc(toks[s.using[0]:s.using[1]], func(t sqlToken) bool { return isName(t) && t.text == "ID" }) {
				return sqlRefuse("JOIN %s USING (...) must include id: joining on another column can multiply rows", s.display())
			}
			continue
		}
		keyed := slices.ContainsFunc(conjuncts(toks, s.on[0], s.on[1]), func(c [2]int) bool {
			a, b, ok := keyEquality(toks, c[0], c[1])
			return ok && (a == s.name || b == s.name)
		})
		if !keyed {
			n := s.display()
			return sqlRefuse("JOIN %s needs a key condition: ON %s.id = x.col or ON %s.col = x.id, as one AND-part of its condition (any other join can multiply rows without bound)", n, n, n)
		}
	}
	return nil
}

// conjuncts splits toks[lo:hi] at its top-level ANDs (the AND of a BETWEEN
// stays inside its conjunct).
func conjuncts(toks []sqlToken, lo, hi int) [][2]int {
	var out [][2]int
	start, between := lo, 0
	for i := lo; i < hi; i++ {
		t := toks[i]
		switch {
		case punct(t, "("):
			i = matching(toks, i)
		case t.kind == 'w' && t.text == "BETWEEN":
			between++
		case t.kind == 'w' && t.text == "AND" && between > 0:
			between--
		case t.kind == 'w' && t.text == "AND":
			out = append(out, [2]int{start, i})
			start = i + 1
		}
	}
	return append(out, [2]int{start, hi})
}

// keyEquality reports whether toks[lo:hi] is exactly q1.c1 = q2.c2 (in any
// parentheses) with c1 or c2 an id, and returns the two qualifiers.
func keyEquality(toks []sqlToken, lo, hi int) (q1, q2 string, ok bool) {
	hi = min(hi, len(toks))
	for hi-lo >= 2 && punct(toks[lo], "(") && matching(toks, lo) == hi-1 {
		lo, hi = lo+1, hi-1
	}
	c := toks[lo:hi]
	ref := func(c []sqlToken) (q, col string, ok bool) {
		if len(c) == 3 && isName(c[0]) && punct(c[1], ".") && isName(c[2]) {
			return c[0].text, c[2].text, true
		}
		return "", "", false
	}
	eq := len(c) - 6 // "=" or "=="
	if eq != 1 && eq != 2 || !punct(c[3], "=") || eq == 2 && !punct(c[4], "=") {
		return "", "", false
	}
	a, ca, ok1 := ref(c[:3])
	b, cb, ok2 := ref(c[3+eq:])
	if ok1 && ok2 && a != b && (ca == "ID" || cb == "ID") {
		return a, b, true
	}
	return "", "", false
}
