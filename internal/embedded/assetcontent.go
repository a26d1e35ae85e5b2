package embedded

import (
	"context"
	"fmt"
	"html"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/88250/lute/ast"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// The asset content index of /api/search/fullTextSearchAssetContent and
// getAssetContent: the text of data/assets files, as SiYuan's
// TxtAssetParser reads them (UTF-8, at most 4 MiB). SiYuan indexes
// asynchronously when assets change; this kernel brings the table up to
// date before each query. Office, PDF and EPUB assets, which SiYuan parses
// with libraries this kernel does not carry, are not indexed here. The
// table lives in the blocks index's database (SiYuan keeps a database of
// its own), so /api/query/sql can see it.

const assetContentTable = "asset_contents_fts_case_insensitive"

// assetTextExts are the extensions SiYuan's TxtAssetParser takes.
const assetTextExts = " .txt .md .markdown .json .log .sql .html .xml .java .h .c .cpp .go .rs .swift .kt .py .php .js .css .ts .sh .bat .cmd .ini .yaml .rst .adoc .textile .opml .org .wiki .cs "

func isAssetText(p string) bool {
	ext := strings.ToLower(filepath.Ext(p))
	return ext != "" && strings.Contains(assetTextExts, " "+ext+" ")
}

const assetTextMax = 4 << 20

// syncAssetContents brings the table up to date with data/assets, in one
// transaction: a changed or new file gets a new row id, as SiYuan's
// reindex gives it.
func (k *Kernel) syncAssetContents(ctx context.Context) error {
	db := k.sql.db
	if _, err := db.ExecContext(ctx, "CREATE VIRTUAL TABLE IF NOT EXISTS "+assetContentTable+
		" USING fts5(id UNINDEXED, name, ext, path, size UNINDEXED, updated UNINDEXED, content, tokenize='trigram case_sensitive 0')"); err != nil {
		return fmt.Errorf("asset content index: %w", err)
	}
	type file struct {
		size, updated int64
		content       string
	}
	files := map[string]file{}
	root := filepath.Join(k.dataDir, "assets")
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !isAssetText(p) {
			return nil
		}
		info, err := d.Info()
		if err != nil || info.Size() > assetTextMax {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil || !utf8.Valid(data) {
			return nil // SiYuan leaves non-UTF-8 text out
		}
		rel, _ := filepath.Rel(root, p)
		files["assets/"+filepath.ToSlash(rel)] = file{info.Size(), info.ModTime().Unix(), string(data)}
		return nil
	})
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, "SELECT path, size, updated FROM "+assetContentTable)
	if err != nil {
		return err
	}
	have := map[string][2]int64{}
	for rows.Next() {
		var p string
		var size, updated int64
		if err := rows.Scan(&p, &size, &updated); err != nil {
			rows.Close()
			return err
		}
		have[p] = [2]int64{size, updated}
	}
	rows.Close()
	for p, st := range have {
		// A file that is gone keeps its row: SiYuan 3.7.3's watcher drops
		// the remove event of a file that no longer exists, so a removed
		// asset stays searchable until the index is rebuilt.
		if f, ok := files[p]; ok && (f.size != st[0] || f.updated != st[1]) {
			if _, err := tx.ExecContext(ctx, "DELETE FROM "+assetContentTable+" WHERE path = ?", p); err != nil {
				return err
			}
			delete(have, p)
		}
	}
	for p, f := range files {
		if _, ok := have[p]; ok {
			continue
		}
		name := assetRemoveID(filepath.Base(p))
		if _, err := tx.ExecContext(ctx, "INSERT INTO "+assetContentTable+" (id, name, ext, path, size, updated, content) VALUES (?, ?, ?, ?, ?, ?, ?)",
			ast.NewNodeID(), name, strings.ToLower(filepath.Ext(p)), p, f.size, f.updated, f.content); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// assetContentOf is SiYuan's fromSQLAssetContent: content HTML-escaped,
// its marks made <mark>.
func assetContentOf(r map[string]any) wire.AssetContent {
	num := func(k string) int64 {
		switch v := r[k].(type) {
		case int64:
			return v
		case float64:
			return int64(v)
		case string:
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
		return 0
	}
	content := html.EscapeString(sqlValueString(r["content"]))
	content = strings.ReplaceAll(strings.ReplaceAll(content, sqlMarkLeft, "<mark>"), sqlMarkRight, "</mark>")
	return wire.AssetContent{ID: sqlValueString(r["id"]), Name: sqlValueString(r["name"]), Ext: sqlValueString(r["ext"]), Path: sqlValueString(r["path"]),
		Size: num("size"), HSize: bytesCeil(uint64(num("size"))), Updated: num("updated"), Content: content}
}

// bytesCeil is the SI size with two decimals rounded up that SiYuan shows
// (go-humanize's BytesCustomCeil).
func bytesCeil(s uint64) string {
	if s < 10 {
		return fmt.Sprintf("%d B", s)
	}
	sizes := []string{"B", "kB", "MB", "GB", "TB", "PB", "EB"}
	e := math.Floor(math.Log(float64(s)) / math.Log(1000))
	val := math.Ceil(float64(s)/math.Pow(1000, e)*100) / 100
	if _, frac := math.Modf(val); frac == 0 {
		return fmt.Sprintf("%.0f %s", val, sizes[int(e)])
	}
	return strings.TrimRight(fmt.Sprintf("%.2f", val), "0") + " " + sizes[int(e)]
}

// assetQuery is SiYuan's stringQuery: the keyword as FTS phrases, one per
// space-separated word.
func assetQuery(q string) string {
	if strings.TrimSpace(q) == "" {
		return `"` + q + `"`
	}
	q = strings.ReplaceAll(strings.ReplaceAll(q, `"`, `""`), "'", "''")
	if strings.Contains(strings.TrimSpace(q), " ") {
		var parts []string
		for _, p := range strings.Split(q, " ") {
			parts = append(parts, `"`+strings.TrimSpace(p)+`"`)
		}
		return strings.TrimSpace(strings.Join(parts, " "))
	}
	return `"` + q + `"`
}

func assetTypeFilter(types map[string]bool) (string, []any) {
	if len(types) == 0 {
		return "", nil
	}
	var on []string
	for t, b := range types {
		if b {
			on = append(on, t)
		}
	}
	if len(on) == 0 {
		return " AND 1 = 0", nil
	}
	sort.Strings(on)
	args := make([]any, len(on))
	for i, t := range on {
		args[i] = t
	}
	return " AND ext IN (?" + strings.Repeat(", ?", len(on)-1) + ")", args
}

func assetOrderBy(orderBy int) string {
	switch orderBy {
	case 1:
		return "ORDER BY rank ASC"
	case 2:
		return "ORDER BY updated ASC"
	case 3:
		return "ORDER BY updated DESC"
	}
	return "ORDER BY rank DESC"
}

// fullTextSearchAssetContent is SiYuan's FullTextSearchAssetContent.
func (k *Kernel) fullTextSearchAssetContent(ctx context.Context, a args) (any, error) {
	page, size, err := a.paging()
	if err != nil {
		return nil, err
	}
	query, err := a.optStr("query")
	if err != nil {
		return nil, err
	}
	method, err := a.optInt("method", 0)
	if err != nil {
		return nil, err
	}
	orderBy, err := a.optInt("orderBy", 0)
	if err != nil {
		return nil, err
	}
	var types map[string]bool
	if a["types"] != nil {
		m, err := a.obj("types")
		if err != nil {
			return nil, err
		}
		types = map[string]bool{}
		for t, v := range m {
			b, ok := v.(bool)
			if !ok {
				return nil, errf("argument [types] must map extensions to booleans")
			}
			types[t] = b
		}
	}
	if err := k.syncAssetContents(ctx); err != nil {
		return nil, err
	}
	query = strings.TrimSpace(query)
	filter, fargs := assetTypeFilter(types)
	limit := " LIMIT " + strconv.Itoa(size) + " OFFSET " + strconv.Itoa((page-1)*size)
	var rows []map[string]any
	var matched int
	switch method {
	case 2:
		info := sqlScan(query)
		if info.multiple {
			return nil, errf("SQL statement is not single")
		}
		if !sqlIsQuery(info) {
			return nil, errf("SQL statement is not a read-only query")
		}
		// The kernel pages the statement itself; a LIMIT is added when it has none.
		if rows, err = k.sql.query(ctx, query, size, true); err != nil {
			return nil, errf("%s", sqlErrMsg(err))
		}
		if len(rows) > 0 {
			count := strings.Replace(strings.ToLower(query), "select * ", "select COUNT(path) AS `assets` ", 1)
			if res, err := k.sql.query(ctx, count, -1, true); err == nil && len(res) > 0 {
				if n, ok := res[0]["assets"].(int64); ok {
					matched = int(n)
				}
			}
		}
	case 3:
		where := "(name REGEXP ? OR content REGEXP ?)" + filter
		args := append([]any{query, query}, fargs...)
		if _, err := regexp.Compile(query); err != nil {
			break // no row matches a pattern SQLite's regexp cannot compile
		}
		if rows, err = k.assetRows(ctx, "SELECT * FROM "+assetContentTable+" WHERE "+where+" "+assetOrderBy(orderBy)+limit, args); err != nil {
			return nil, err
		}
		matched = k.assetCount(ctx, where, args)
	default:
		q := query
		if method != 1 {
			q = assetQuery(q)
		}
		where := assetContentTable + " MATCH ?" + filter
		args := append([]any{"{name content}:(" + q + ")"}, fargs...)
		cols := "id, name, ext, path, size, updated, snippet(" + assetContentTable + ", 6, '" + sqlMarkLeft + "', '" + sqlMarkRight + "', '...', 64) AS content"
		if rows, err = k.assetRows(ctx, "SELECT "+cols+" FROM "+assetContentTable+" WHERE "+where+" "+assetOrderBy(orderBy)+limit, args); err != nil {
			rows = nil // a malformed query finds nothing, as in SiYuan
		}
		matched = k.assetCount(ctx, where, args)
	}
	out := []wire.AssetContent{}
	for _, r := range rows {
		out = append(out, assetContentOf(r))
	}
	return map[string]any{"assetContents": out, "matchedAssetCount": matched, "pageCount": (matched + size - 1) / size}, nil
}

func (k *Kernel) assetRows(ctx context.Context, stmt string, args []any) ([]map[string]any, error) {
	rows, err := k.sql.db.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, err
	}
	return sqlCollect(rows, -1)
}

func (k *Kernel) assetCount(ctx context.Context, where string, args []any) int {
	var n int
	if err := k.sql.db.QueryRowContext(ctx, "SELECT COUNT(path) FROM "+assetContentTable+" WHERE "+where, args...).Scan(&n); err != nil {
		return 0
	}
	return n
}

// getAssetContent is SiYuan's GetAssetContent: one indexed asset by its row
// id, the query's matches highlighted, newlines as <br>.
func (k *Kernel) getAssetContent(ctx context.Context, a args) (any, error) {
	id, err := a.str("id")
	if err != nil {
		return nil, err
	}
	query, err := a.str("query")
	if err != nil {
		return nil, err
	}
	method, err := a.optInt("queryMethod", 0)
	if err != nil {
		return nil, err
	}
	if _, ok := a["queryMethod"]; !ok {
		return nil, errf("missing argument [queryMethod]")
	}
	if err := k.syncAssetContents(ctx); err != nil {
		return nil, err
	}
	if query != "" && method == 0 {
		query = assetQuery(query)
	}
	var found any // a JSON null, as SiYuan's nil *AssetContent
	if validID(id) {
		where, args := "id = ?", []any{id}
		if query != "" {
			where += " AND " + assetContentTable + " MATCH ?"
			args = append(args, "{name content}:("+query+")")
		}
		rows, err := k.assetRows(ctx, "SELECT id, name, ext, path, size, updated, highlight("+assetContentTable+", 6, '"+sqlMarkLeft+"', '"+sqlMarkRight+"') AS content FROM "+
			assetContentTable+" WHERE "+where+" LIMIT 1", args)
		if err == nil && len(rows) > 0 {
			c := assetContentOf(rows[0])
			c.Content = strings.ReplaceAll(c.Content, "\n", "<br>")
			found = c
		}
	}
	return map[string]any{"assetContent": found}, nil
}
