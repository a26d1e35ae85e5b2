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
		{"SELECT * FROM blocks NATURAL JOIN attributes", true, ""},
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
	} {
		_, err := checkSQL(tt.stmt)
		if tt.ok != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.why) {
			t.Errorf("checkSQL(%q) = %v, want ok=%v (%s)", tt.stmt, err, tt.ok, tt.why)
		}
	}
}

// FuzzCheckSQL: the guard never panics, and whatever it admits is one
// statement that starts with SELECT or WITH and names no RECURSIVE and no
// refused function.
func FuzzCheckSQL(f *testing.F) {
	for _, s := range []string{
		"SELECT 1", "WITH c AS (SELECT 1) SELECT * FROM c", "SELECT * FROM blocks a JOIN b ON a.x=b.y",
		"SELECT ';' FROM t -- x", "SELECT [a]]b] FROM \"q\"\"q\"", "/* unterminated", "'unterminated", "WITH a(", "SELECT ((",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, stmt string) {
		out, err := checkSQL(stmt)
		if err != nil {
			return
		}
		toks := lexSQL(out)
		if len(toks) == 0 || toks[0].text != "SELECT" && toks[0].text != "WITH" {
			t.Fatalf("admitted %q, which does not start with SELECT or WITH", stmt)
		}
		for i, tk := range toks {
			if tk.kind == 'p' && tk.text == ";" {
				t.Fatalf("admitted %q with a statement separator", stmt)
			}
			if tk.kind == 'w' && (tk.text == "RECURSIVE" || refusedFunctions[tk.text] && i+1 < len(toks) && toks[i+1].text == "(") {
				t.Fatalf("admitted %q naming %s", stmt, tk.text)
			}
		}
	})
}
