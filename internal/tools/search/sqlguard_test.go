package search

import (
	"strings"
	"testing"
)

func TestCheckSQL(t *testing.T) {
	for _, tt := range []struct {
		stmt string
		ok   bool
		why  string
	}{
		{"SELECT id FROM blocks WHERE type='h'", true, ""},
		{"  select * from blocks;  ", true, ""},
		{"/* c */ WITH h AS (SELECT id FROM blocks) SELECT count(*) FROM h", true, ""},
		{"WITH a AS (SELECT 1 AS x), b AS (SELECT x FROM a) SELECT * FROM b", true, ""},
		{"SELECT b.id FROM blocks b JOIN refs r ON r.block_id = b.id LEFT JOIN blocks d ON d.id = r.def_block_id", true, ""},
		{"SELECT * FROM blocks NATURAL JOIN attributes", false, "NATURAL JOIN"},
		{"SELECT b.* FROM blocks b JOIN attributes a ON a.block_id = b.id WHERE a.name = 'custom-x'", true, ""},
		{"SELECT b.* FROM attributes a INNER JOIN blocks b ON (b.id == a.block_id) AND a.name LIKE 'custom-%'", true, ""},
		{"SELECT b.* FROM blocks b LEFT OUTER JOIN refs AS r ON r.value BETWEEN 'a' AND 'b' AND b.id = r.def_block_id", true, ""},
		{"SELECT count(*) FROM blocks a JOIN blocks b ON 1=1", false, "JOIN b needs a key condition"},
		{"SELECT count(*) FROM blocks a JOIN blocks b ON a.id = b.id OR 1=1", false, "key condition"},
		{"SELECT count(*) FROM blocks a JOIN blocks b ON a.root_id = b.root_id", false, "key condition"},
		{"SELECT count(*) FROM blocks a JOIN blocks b ON a.id = a.id", false, "key condition"},
		{"SELECT count(*) FROM blocks a JOIN blocks b ON a.id != b.id", false, "key condition"},
		{"SELECT count(*) FROM blocks a JOIN blocks b ON b.id = b.parent_id JOIN blocks c ON c.id = a.id", false, "JOIN b needs"},
		{"SELECT count(*) FROM blocks a JOIN blocks b ON a.id = b.parent_id JOIN blocks c ON a.id = b.id", false, "JOIN c needs"},
		{"SELECT count(*) FROM blocks a JOIN blocks b USING (root_id)", false, "must include id"},
		{"SELECT count(*) FROM blocks a JOIN (SELECT * FROM blocks) ON 1=1", false, "JOIN (subquery)"},
		{"SELECT count(*) FROM blocks a JOIN (SELECT id FROM blocks) s ON s.id = a.parent_id", true, ""},
		{"SELECT count(*) FROM blocks a JOIN blocks \"b\" ON \"b\".\"id\" = a.parent_id", true, ""},
		{"SELECT * FROM blocks WHERE id IN (SELECT block_id FROM attributes WHERE name = 'custom-x')", true, ""},
		{"SELECT * FROM blocks b WHERE EXISTS (SELECT 1 FROM refs r WHERE r.def_block_id = b.id)", true, ""},
		{"SELECT b.id, (SELECT value FROM attributes a WHERE a.block_id = b.id AND a.name = 'custom-x') FROM blocks b", true, ""},
		{"SELECT (SELECT count(*) FROM blocks b2 WHERE b2.content < b1.content) FROM blocks b1", false, "outer b1"},
		{"SELECT * FROM blocks b1 WHERE EXISTS (SELECT 1 FROM blocks b2 WHERE b2.root_id = b1.root_id)", false, "outer b1"},
		{"SELECT * FROM blocks b1 WHERE EXISTS (SELECT 1 FROM blocks b2 WHERE b2.id = b1.parent_id OR 1=1)", false, "outer b1"},
		{"SELECT * FROM blocks b1 WHERE EXISTS (SELECT 1 FROM blocks b2 WHERE b2.id = b1.parent_id AND b2.content < b1.content)", true, ""},
		{"SELECT * FROM blocks WHERE id IN (SELECT b.id FROM blocks b JOIN blocks c ON 1 = 1)", false, "key condition"},
		{"WITH x AS (SELECT * FROM blocks a JOIN blocks b ON a.box = b.box) SELECT count(*) FROM x", false, "key condition"},
		{"SELECT * FROM blocks b JOIN refs r USING (id)", true, ""},
		{"SELECT j.value FROM blocks b, json_each(b.ial) j", true, ""},
		{"SELECT * FROM blocks WHERE content = 'a; b -- c /* d'", true, ""},
		{"SELECT * FROM blocks WHERE id IN (SELECT block_id FROM refs, refs2)", false, "comma joins"},
		{"SELECT \"FROM\", [recursive] FROM blocks", true, ""},
		{"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c", false, "recursive"},
		{"WITH c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c", false, "refers to c"},
		{"WITH b AS (SELECT x FROM a), a AS (SELECT x FROM b) SELECT * FROM a", false, "refers to a"},
		{"SELECT * FROM (WITH \"c\" AS (SELECT * FROM c) SELECT * FROM c)", false, "refers to c"},
		{"SELECT count(*) FROM blocks a, blocks b", false, "comma joins"},
		{"SELECT count(*) FROM blocks a JOIN blocks b", false, "without ON"},
		{"SELECT count(*) FROM blocks a CROSS JOIN blocks b", false, "CROSS JOIN"},
		{"SELECT randomblob(1000000000)", false, "randomblob"},
		{"SELECT printf('%.*c', 1000000000, 'x')", false, "printf"},
		{"DELETE FROM blocks", false, "single SELECT"},
		{"SELECT 1; DELETE FROM blocks", false, "single statement"},
		{"SELECT (1", false, "parentheses"},
		{"", false, "single SELECT"},
		{"SELECT " + strings.Repeat("(", 65) + "1" + strings.Repeat(")", 65), false, "nest more than 64"},
		{"SELECT " + strings.Repeat("(", 64) + "1" + strings.Repeat(")", 64), true, ""},
		{"SELECT '" + strings.Repeat("x", 64<<10) + "'", false, "at most 65536"},
	} {
		_, err := checkSQL(tt.stmt)
		if tt.ok != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.why) {
			t.Errorf("checkSQL(%q) = %v, want ok=%v (%s)", tt.stmt, err, tt.ok, tt.why)
		}
	}
}

// FuzzCheckSQL: the guard never panics, and whatever it admits is one
// statement that starts with SELECT or WITH, names no RECURSIVE, CROSS,
// NATURAL and no refused function, and is admitted again unchanged.
func FuzzCheckSQL(f *testing.F) {
	for _, s := range []string{
		"SELECT 1", "WITH c AS (SELECT 1) SELECT * FROM c", "SELECT * FROM blocks a JOIN b ON a.x=b.y", "SELECT * FROM blocks a JOIN b ON b.id = a.x AND a.y BETWEEN 1 AND 2",
		"SELECT * FROM t a WHERE EXISTS (SELECT 1 FROM u b WHERE b.id = a.x)", "SELECT * FROM t a JOIN u USING (id)",
		"SELECT ';' FROM t -- x", "SELECT [a]]b] FROM \"q\"\"q\"", "/* unterminated", "'unterminated", "WITH a(", "SELECT ((",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, stmt string) {
		out, err := checkSQL(stmt)
		if err != nil {
			return
		}
		if again, err := checkSQL(out); err != nil || again != out {
			t.Fatalf("admitted %q as %q, which it then judges %q, %v", stmt, out, again, err)
		}
		toks := lexSQL(out)
		if len(toks) == 0 || toks[0].text != "SELECT" && toks[0].text != "WITH" {
			t.Fatalf("admitted %q, which does not start with SELECT or WITH", stmt)
		}
		for i, tk := range toks {
			if tk.kind == 'p' && tk.text == ";" {
				t.Fatalf("admitted %q with a statement separator", stmt)
			}
			if tk.kind == 'w' && (tk.text == "RECURSIVE" || tk.text == "CROSS" || tk.text == "NATURAL" || refusedFunctions[tk.text] && i+1 < len(toks) && toks[i+1].text == "(") {
				t.Fatalf("admitted %q naming %s", stmt, tk.text)
			}
		}
	})
}
