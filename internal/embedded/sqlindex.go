package embedded

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/88250/lute"
	"github.com/88250/lute/ast"
	"github.com/88250/lute/html"
	"github.com/88250/lute/parse"
	"modernc.org/sqlite"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/mdexport"
	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// The SQL index mirrors SiYuan's siyuan.db: a rebuildable SQLite database in
// <workspace>/temp whose blocks table is filled from the document trees by a
// queue that is flushed every SQLFlushInterval (3 s in SiYuan). Until a flush,
// /api/query/sql and fullTextSearchBlock do not see a write; clients must
// call /api/sqlite/flushTransaction, exactly as with the real kernel.

// sqlSearchLimit is SiYuan's conf.search.limit default: the LIMIT injected
// into /api/query/sql statements that have none.
const sqlSearchLimit = 64

// Highlight marks SiYuan's FTS snippets carry before they become <mark>.
const (
	sqlMarkLeft  = "__@mark__"
	sqlMarkRight = "__mark@__"
)

const sqlBlockColumns = "id, parent_id, root_id, hash, box, path, hpath, name, alias, memo, tag, content, fcontent, markdown, length, type, subtype, ial, sort, created, updated"

// sqlSchema creates SiYuan's tables. The typed columns of blocks follow SiYuan's
// value types (length and sort are integers); spans holds the tag spans
// (tag_index.go), refs the block refs; assets and file_annotation_refs
// exist, empty, so the statements clients commonly send answer [] rather
// than "no such table".
var sqlSchema = []string{
	"CREATE TABLE blocks (id TEXT, parent_id TEXT, root_id TEXT, hash TEXT, box TEXT, path TEXT, hpath TEXT, name TEXT, alias TEXT, memo TEXT, tag TEXT, content TEXT, fcontent TEXT, markdown TEXT, length INTEGER, type TEXT, subtype TEXT, ial TEXT, sort INTEGER, created TEXT, updated TEXT)",
	"CREATE INDEX idx_blocks_id ON blocks(id)",
	"CREATE INDEX idx_blocks_parent_id ON blocks(parent_id)",
	"CREATE INDEX idx_blocks_root_id ON blocks(root_id)",
	"CREATE TABLE attributes (id TEXT, name TEXT, value TEXT, type TEXT, block_id TEXT, root_id TEXT, box TEXT, path TEXT)",
	"CREATE INDEX idx_attributes_block_id ON attributes(block_id)",
	"CREATE INDEX idx_attributes_root_id ON attributes(root_id)",
	"CREATE TABLE spans (id TEXT, block_id TEXT, root_id TEXT, box TEXT, path TEXT, content TEXT, markdown TEXT, type TEXT, ial TEXT)",
	"CREATE TABLE assets (id TEXT, block_id TEXT, root_id TEXT, box TEXT, docpath TEXT, path TEXT, name TEXT, title TEXT, hash TEXT)",
	"CREATE TABLE refs (id TEXT, def_block_id TEXT, def_block_parent_id TEXT, def_block_root_id TEXT, def_block_path TEXT, block_id TEXT, root_id TEXT, box TEXT, path TEXT, content TEXT, markdown TEXT, type TEXT)",
	"CREATE TABLE file_annotation_refs (id TEXT, file_path TEXT, annotation_id TEXT, block_id TEXT, root_id TEXT, box TEXT, path TEXT, content TEXT, type TEXT)",
}

// sqlFTSSchema is the blocks_fts mirror: an external-content FTS5 table over
// blocks, as SiYuan's, kept in step by triggers so statements that write to
// blocks through /api/query/sql cannot corrupt it. SiYuan's tokenizer is its
// own; the trigram tokenizer gives the same substring semantics for terms of
// three or more characters.
var sqlFTSSchema = []string{
	"CREATE VIRTUAL TABLE blocks_fts USING fts5(id UNINDEXED, parent_id UNINDEXED, root_id UNINDEXED, hash UNINDEXED, box UNINDEXED, path UNINDEXED, hpath UNINDEXED, name, alias, memo, tag, content, fcontent, markdown UNINDEXED, length UNINDEXED, type UNINDEXED, subtype UNINDEXED, ial, sort UNINDEXED, created UNINDEXED, updated UNINDEXED, content='blocks', content_rowid='rowid', tokenize='trigram case_sensitive 0')",
	"CREATE TRIGGER blocks_fts_ai AFTER INSERT ON blocks BEGIN INSERT INTO blocks_fts(rowid, " + sqlBlockColumns + ") VALUES (new.rowid, " + sqlPrefixed("new.") + "); END",
	"CREATE TRIGGER blocks_fts_ad AFTER DELETE ON blocks BEGIN INSERT INTO blocks_fts(blocks_fts, rowid, " + sqlBlockColumns + ") VALUES ('delete', old.rowid, " + sqlPrefixed("old.") + "); END",
	"CREATE TRIGGER blocks_fts_au AFTER UPDATE ON blocks BEGIN INSERT INTO blocks_fts(blocks_fts, rowid, " + sqlBlockColumns + ") VALUES ('delete', old.rowid, " + sqlPrefixed("old.") + "); INSERT INTO blocks_fts(rowid, " + sqlBlockColumns + ") VALUES (new.rowid, " + sqlPrefixed("new.") + "); END",
}

func sqlPrefixed(prefix string) string {
	cols := strings.Split(sqlBlockColumns, ", ")
	for i, c := range cols {
		cols[i] = prefix + c
	}
	return strings.Join(cols, ", ")
}

// sqlIndex is the lagging SQL index of one kernel.
type sqlIndex struct {
	k   *Kernel
	db  *sql.DB
	fts bool

	mu      sync.Mutex
	pending map[string]struct{} // document ids whose rows must be recomputed

	flushMu   sync.Mutex // one flush (or rebuild) at a time
	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
	closeErr  error
}

var sqlRegexpOnce sync.Once

// registerSQLRegexp installs the REGEXP function SiYuan's kernel registers on
// its connections (fullTextSearchBlock method 3 and user statements use it).
func registerSQLRegexp() {
	sqlRegexpOnce.Do(func() {
		var mu sync.Mutex
		cache := map[string]*regexp.Regexp{}
		// An error means the name is taken already in this process; the
		// function is then whatever was registered first, which is fine.
		_ = sqlite.RegisterDeterministicScalarFunction("regexp", 2, func(_ *sqlite.FunctionContext, v []driver.Value) (driver.Value, error) {
			if v[0] == nil || v[1] == nil {
				return nil, nil
			}
			pat, s := sqlValueString(v[0]), sqlValueString(v[1])
			mu.Lock()
			re, ok := cache[pat]
			if !ok {
				var err error
				if re, err = regexp.Compile(pat); err != nil {
					mu.Unlock()
					return nil, err
				}
				if len(cache) > 256 {
					clear(cache)
				}
				cache[pat] = re
			}
			mu.Unlock()
			if re.MatchString(s) {
				return int64(1), nil
			}
			return int64(0), nil
		})
	})
}

func sqlValueString(v driver.Value) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	case nil:
		return ""
	default:
		return fmt.Sprint(x)
	}
}

// openSQLIndex creates a fresh index database (the file is rebuildable, and
// rebuild fills it at Open) and starts the background flusher.
func openSQLIndex(ctx context.Context, k *Kernel, flushInterval time.Duration) (*sqlIndex, error) {
	registerSQLRegexp()
	if err := os.MkdirAll(k.tempDir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", k.tempDir, err)
	}
	p := filepath.Join(k.tempDir, "siyuan.db")
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		if err := os.Remove(p + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("reset SQL index: %w", err)
		}
	}
	if strings.ContainsRune(p, '?') {
		return nil, fmt.Errorf("SQL index: workspace path %q must not contain '?'", k.dir)
	}
	db, err := sql.Open("sqlite", p+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("open SQL index: %w", err)
	}
	s := &sqlIndex{k: k, db: db, pending: map[string]struct{}{}, stop: make(chan struct{}), done: make(chan struct{})}
	if err := s.createSchema(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if flushInterval <= 0 {
		flushInterval = 3 * time.Second
	}
	go s.loop(flushInterval)
	return s, nil
}

func (s *sqlIndex) createSchema(ctx context.Context) error {
	for _, stmt := range sqlSchema {
		if _, err := s.db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("create SQL index schema: %w", err)
		}
	}
	s.fts = true
	for _, stmt := range sqlFTSSchema {
		if _, err := s.db.ExecContext(ctx, stmt); err != nil {
			// Without FTS5 the search falls back to LIKE; blocks_fts is absent.
			s.k.log.Warn("SQL index without blocks_fts", "err", err)
			s.fts = false
			break
		}
	}
	return nil
}

func (s *sqlIndex) loop(interval time.Duration) {
	defer close(s.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			if err := s.flush(context.Background()); err != nil {
				s.k.log.Warn("SQL index flush failed", "err", err)
			}
		}
	}
}

// queueUpsert records that a document changed; its rows are recomputed from
// the stored tree at the next flush.
func (s *sqlIndex) queueUpsert(tree *parse.Tree) {
	if tree == nil || tree.ID == "" {
		return
	}
	s.mu.Lock()
	s.pending[tree.ID] = struct{}{}
	s.mu.Unlock()
}

// queueRemove records that documents are gone. A flush reloads every queued
// document and deletes the rows of those that no longer exist, so removal
// and upsert share one queue.
func (s *sqlIndex) queueRemove(rootIDs ...string) {
	s.mu.Lock()
	for _, id := range rootIDs {
		if id != "" {
			s.pending[id] = struct{}{}
		}
	}
	s.mu.Unlock()
}

// flush applies the queue in one transaction. On failure the queue is kept.
func (s *sqlIndex) flush(ctx context.Context) error {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	s.mu.Lock()
	ids := make([]string, 0, len(s.pending))
	for id := range s.pending {
		ids = append(ids, id)
	}
	s.pending = map[string]struct{}{}
	s.mu.Unlock()
	if len(ids) == 0 {
		return nil
	}
	sort.Strings(ids)
	if err := s.apply(ctx, ids, false); err != nil {
		s.queueRemove(ids...)
		return err
	}
	return nil
}

// rebuild drops every row and indexes every document of the kernel.
func (s *sqlIndex) rebuild(ctx context.Context) error {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	s.mu.Lock()
	s.pending = map[string]struct{}{}
	s.mu.Unlock()
	s.k.mu.RLock()
	ids := make([]string, 0, len(s.k.docs))
	for id := range s.k.docs {
		ids = append(ids, id)
	}
	s.k.mu.RUnlock()
	sort.Strings(ids)
	return s.apply(ctx, ids, true)
}

// close stops the flusher, flushes what is queued and closes the database.
func (s *sqlIndex) close() error {
	s.closeOnce.Do(func() {
		close(s.stop)
		<-s.done
		s.closeErr = s.flush(context.Background())
		if err := s.db.Close(); s.closeErr == nil {
			s.closeErr = err
		}
	})
	return s.closeErr
}

type sqlBlockRow struct {
	ID, ParentID, RootID, Hash, Box, Path, HPath, Name, Alias, Memo, Tag string
	Content, FContent, Markdown                                          string
	Length                                                               int
	Type, SubType, IAL                                                   string
	Sort                                                                 int
	Created, Updated                                                     string
}

type sqlAttrRow struct {
	ID, Name, Value, Type, BlockID, RootID, Box, Path string
}

type sqlDocRows struct {
	rootID string
	blocks []sqlBlockRow
	attrs  []sqlAttrRow
	spans  []sqlSpanRow
	refs   []sqlRefRow
}

// apply recomputes the rows of the given documents (all: of every document,
// after wiping the tables) in one transaction.
func (s *sqlIndex) apply(ctx context.Context, ids []string, all bool) error {
	docs := make([]sqlDocRows, 0, len(ids))
	for _, id := range ids {
		d := sqlDocRows{rootID: id}
		tree, err := s.k.loadTree(id)
		switch {
		case err == nil:
			d.blocks, d.attrs = sqlRowsOf(tree)
			d.spans = sqlTagSpansOf(tree)
			d.refs = s.k.sqlRefRowsOf(tree)
			s.k.avContentRows(d.blocks)
		case errors.Is(err, errNotFound):
		default:
			s.k.log.Warn("SQL index: unreadable document dropped from the index", "id", id, "err", err)
		}
		docs = append(docs, d)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("SQL index: begin: %w", err)
	}
	defer tx.Rollback()
	if all {
		for _, stmt := range []string{"DELETE FROM blocks", "DELETE FROM attributes", "DELETE FROM spans", "DELETE FROM refs"} {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("SQL index: %s: %w", stmt, err)
			}
		}
	}
	insBlock, err := tx.PrepareContext(ctx, "INSERT INTO blocks ("+sqlBlockColumns+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
	if err != nil {
		return fmt.Errorf("SQL index: %w", err)
	}
	defer insBlock.Close()
	insAttr, err := tx.PrepareContext(ctx, "INSERT INTO attributes (id, name, value, type, block_id, root_id, box, path) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
	if err != nil {
		return fmt.Errorf("SQL index: %w", err)
	}
	defer insAttr.Close()
	for _, d := range docs {
		if !all {
			if _, err := tx.ExecContext(ctx, "DELETE FROM blocks WHERE root_id = ?", d.rootID); err != nil {
				return fmt.Errorf("SQL index: delete %s: %w", d.rootID, err)
			}
			if _, err := tx.ExecContext(ctx, "DELETE FROM attributes WHERE root_id = ?", d.rootID); err != nil {
				return fmt.Errorf("SQL index: delete attributes %s: %w", d.rootID, err)
			}
			if _, err := tx.ExecContext(ctx, "DELETE FROM spans WHERE root_id = ?", d.rootID); err != nil {
				return fmt.Errorf("SQL index: delete spans %s: %w", d.rootID, err)
			}
		}
		for _, b := range d.blocks {
			if _, err := insBlock.ExecContext(ctx, b.ID, b.ParentID, b.RootID, b.Hash, b.Box, b.Path, b.HPath, b.Name, b.Alias,
				b.Memo, b.Tag, b.Content, b.FContent, b.Markdown, b.Length, b.Type, b.SubType, b.IAL, b.Sort, b.Created, b.Updated); err != nil {
				return fmt.Errorf("SQL index: insert %s: %w", b.ID, err)
			}
		}
		for _, a := range d.attrs {
			if _, err := insAttr.ExecContext(ctx, a.ID, a.Name, a.Value, a.Type, a.BlockID, a.RootID, a.Box, a.Path); err != nil {
				return fmt.Errorf("SQL index: insert attribute %s: %w", a.BlockID, err)
			}
		}
		for _, sp := range d.spans {
			if _, err := tx.ExecContext(ctx, "INSERT INTO spans (id, block_id, root_id, box, path, content, markdown, type, ial) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
				sp.ID, sp.BlockID, sp.RootID, sp.Box, sp.Path, sp.Content, sp.Markdown, sp.Type, sp.IAL); err != nil {
				return fmt.Errorf("SQL index: insert span %s: %w", sp.BlockID, err)
			}
		}
		if err := sqlWriteRefs(ctx, tx, d.rootID, d.refs, all); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("SQL index: commit: %w", err)
	}
	return nil
}

// sqlRowsOf derives the blocks and attributes rows of a document as SiYuan's
// buildBlockFromNode does.
func sqlRowsOf(tree *parse.Tree) (blocks []sqlBlockRow, attrs []sqlAttrRow) {
	ast.Walk(tree.Root, func(n *ast.Node, entering bool) ast.WalkStatus {
		if !entering || !n.IsBlock() || n.ID == "" || n.Type == ast.NodeKramdownBlockIAL {
			return ast.WalkContinue
		}
		blocks = append(blocks, sqlBlockOf(n, tree))
		m := parse.IAL2Map(n.KramdownIAL)
		names := make([]string, 0, len(m))
		for name := range m {
			if sqlIsAttr(name) {
				names = append(names, name)
			}
		}
		sort.Strings(names)
		for _, name := range names {
			attrs = append(attrs, sqlAttrRow{ID: ast.NewNodeID(), Name: name, Value: m[name], Type: "b",
				BlockID: n.ID, RootID: tree.Root.ID, Box: tree.Box, Path: tree.Path})
		}
		return ast.WalkContinue
	})
	return blocks, attrs
}

// sqlIsAttr is SiYuan's isAttr: the IAL entries mirrored in attributes.
func sqlIsAttr(name string) bool {
	switch name {
	case "name", "alias", "memo", "bookmark", "fold", "heading-fold", "style":
		return true
	}
	return strings.HasPrefix(name, "custom-")
}

func sqlBlockOf(n *ast.Node, tree *parse.Tree) sqlBlockRow {
	b := sqlBlockRow{
		ID: n.ID, RootID: tree.Root.ID, Box: tree.Box, Path: tree.Path, HPath: tree.HPath,
		Name:    html.UnescapeString(n.IALAttr("name")),
		Alias:   html.UnescapeString(n.IALAttr("alias")),
		Memo:    html.UnescapeString(n.IALAttr("memo")),
		Tag:     sqlTagOf(n),
		Type:    abbr(n),
		SubType: subTypeAbbr(n),
		Sort:    sqlSortOf(n),
		Created: timeFromID(n.ID),
		Updated: n.IALAttr("updated"),
	}
	if len(n.KramdownIAL) > 0 {
		b.IAL = string(parse.IAL2Tokens(n.KramdownIAL))
	}
	switch {
	case n.Type == ast.NodeDocument:
		b.Content = n.IALAttr("title")
		b.FContent = b.Content
		b.Length = utf8.RuneCountInString(b.FContent)
	case n.IsContainerBlock():
		b.Markdown = sqlMarkdown(n)
		b.Content = sqlStaticContent(n)
		b.FContent = sqlStaticContent(mdexport.FirstLeafBlock(n))
		b.Length = utf8.RuneCountInString(b.FContent)
	default:
		b.Markdown = sqlMarkdown(n)
		b.Content = sqlStaticContent(n)
		b.Length = utf8.RuneCountInString(b.Content)
	}
	if n.Type != ast.NodeDocument {
		if n.Parent != nil {
			b.ParentID = n.Parent.ID
		}
		if h := headingParent(n); h != nil {
			b.ParentID = h.ID
		}
	}
	// SiYuan strips zero-width spaces and the joiner before tag markers.
	clean := strings.NewReplacer("\u200b", "", "\u200d#", "#")
	b.Content, b.FContent, b.Markdown = clean.Replace(b.Content), clean.Replace(b.FContent), clean.Replace(b.Markdown)
	b.Hash = sqlHashOf(n, tree, b.Markdown, b.ParentID)
	return b
}

// sqlHashOf is the 7-hex content hash of a block: box, path, hpath, sorted
// IAL, markdown and parent, as SiYuan's NodeHash combines them.
func sqlHashOf(n *ast.Node, tree *parse.Tree, md, parentID string) string {
	ial := append([][]string(nil), n.KramdownIAL...)
	sort.Slice(ial, func(i, j int) bool { return ial[i][0] < ial[j][0] })
	data := tree.Box + tree.Path + tree.HPath + string(parse.IAL2Tokens(ial))
	if n.Type != ast.NodeDocument {
		data += md
	}
	sum := sha256.Sum256([]byte(data + parentID))
	return fmt.Sprintf("%x", sum)[:7]
}

// sqlMarkdown is the standard Markdown of a block (SiYuan's ExportNodeStdMd).
func sqlMarkdown(n *ast.Node) string {
	l := mdexport.NewLute()
	md, err := lute.ProtyleExportMdNodeSync(n, l.ParseOptions, l.RenderOptions)
	if err != nil {
		return ""
	}
	return md
}

// sqlSortOf is SiYuan's nSort: the search order of block types.
func sqlSortOf(n *ast.Node) int {
	switch n.Type {
	case ast.NodeDocument:
		return 0
	case ast.NodeHeading:
		return 5
	case ast.NodeParagraph, ast.NodeCodeBlock, ast.NodeMathBlock, ast.NodeTable, ast.NodeHTMLBlock:
		return 10
	case ast.NodeList, ast.NodeListItem, ast.NodeBlockquote, ast.NodeCallout:
		return 20
	case ast.NodeSuperBlock, ast.NodeAttributeView:
		return 30
	}
	return 100
}

// sqlTagOf is the tag column: a document's tags attribute, or the inline
// tags of a block (its descendants included), as "#a# #b#".
func sqlTagOf(node *ast.Node) string {
	var b strings.Builder
	if node.Type == ast.NodeDocument {
		for _, t := range strings.Split(html.UnescapeString(node.IALAttr("tags")), ",") {
			if t = strings.TrimSpace(t); t != "" {
				b.WriteString("#" + t + "# ")
			}
		}
		return strings.TrimSpace(b.String())
	}
	ast.Walk(node, func(n *ast.Node, entering bool) ast.WalkStatus {
		if entering && n.IsTextMarkType("tag") {
			b.WriteString("#" + n.Content() + "# ")
		}
		return ast.WalkContinue
	})
	return strings.TrimSpace(b.String())
}

// sqlStaticContent is the content column of a non-document block, following
// SiYuan's nodeStaticContent: container blocks open with a space, table cells
// are space-separated, link URLs follow their text, tags keep their #
// markers, and the result is not trimmed (code keeps its final newline).
func sqlStaticContent(node *ast.Node) string {
	if node == nil {
		return ""
	}
	var b strings.Builder
	lastSpace := false
	ast.Walk(node, func(n *ast.Node, entering bool) ast.WalkStatus {
		if !entering {
			return ast.WalkContinue
		}
		if n.IsContainerBlock() {
			if !lastSpace {
				b.WriteByte(' ')
				lastSpace = true
			}
			if n.Type == ast.NodeCallout {
				b.WriteString(n.CalloutType + " ")
				if n.CalloutIcon != "" && n.CalloutIconType == 0 {
					b.WriteString(n.CalloutIcon + " ")
				}
				if n.CalloutTitle != "" {
					b.WriteString(n.CalloutTitle + " ")
				}
			}
			return ast.WalkContinue
		}
		switch n.Type {
		case ast.NodeTableCell:
			if s := b.String(); s != "" && s[len(s)-1] != ' ' {
				b.WriteByte(' ')
			}
		case ast.NodeImage:
			if t := n.ChildByType(ast.NodeLinkText); t != nil {
				b.Write(t.Tokens)
				b.WriteByte(' ')
			}
			if d := n.ChildByType(ast.NodeLinkDest); d != nil {
				b.Write(d.Tokens)
				b.WriteByte(' ')
			}
			if t := n.ChildByType(ast.NodeLinkTitle); t != nil {
				b.Write(t.Tokens)
			}
			lastSpace = false
			return ast.WalkSkipChildren
		case ast.NodeLinkText, ast.NodeLinkDest:
			b.Write(n.Tokens)
			b.WriteByte(' ')
		case ast.NodeLinkTitle, ast.NodeText, ast.NodeCodeBlockCode, ast.NodeMathBlockContent, ast.NodeHTMLBlock, ast.NodeBackslashContent:
			b.Write(n.Tokens)
		case ast.NodeTextMark:
			content := n.Content()
			if n.IsTextMarkType("block-ref") {
				content = html.UnescapeString(content)
			}
			if n.IsTextMarkType("tag") {
				content = "#" + content + "#"
			}
			b.WriteString(content)
			if n.IsTextMarkType("a") {
				if n.TextMarkATitle != "" {
					b.WriteString(" " + html.UnescapeString(n.TextMarkATitle))
				}
				b.WriteString(" " + html.UnescapeString(n.TextMarkAHref))
			}
		}
		lastSpace = false
		return ast.WalkContinue
	})
	return b.String()
}

// sqlStmtInfo describes a statement as seen outside quotes and comments.
type sqlStmtInfo struct {
	first    string // first keyword, upper-cased
	limitAt  int    // offset of the last top-level LIMIT keyword, -1 when none
	end      int    // offset just past the first statement's last token
	multiple bool   // another statement follows a top-level ';'
	escape   bool   // an ESCAPE keyword (a LIKE ... ESCAPE clause), at any depth
}

// sqlScan is a small lexer: quotes (”, "", “, []), comments (--, /* */),
// parentheses depth and keywords. It never fails; unterminated quotes or
// comments run to the end, where SQLite reports the syntax error.
func sqlScan(stmt string) sqlStmtInfo {
	info := sqlStmtInfo{limitAt: -1}
	depth := 0
	terminated := false
	for i := 0; i < len(stmt); {
		c := stmt[i]
		switch {
		case c == '-' && i+1 < len(stmt) && stmt[i+1] == '-':
			j := strings.IndexByte(stmt[i:], '\n')
			if j < 0 {
				i = len(stmt)
			} else {
				i += j + 1
			}
			continue
		case c == '/' && i+1 < len(stmt) && stmt[i+1] == '*':
			j := strings.Index(stmt[i+2:], "*/")
			if j < 0 {
				i = len(stmt)
			} else {
				i += j + 4
			}
			continue
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
			continue
		}
		if terminated {
			if c == ';' {
				i++
				continue
			}
			info.multiple = true
			return info
		}
		switch {
		case c == '\'' || c == '"' || c == '`' || c == '[':
			closer := c
			if c == '[' {
				closer = ']'
			}
			j := strings.IndexByte(stmt[i+1:], closer)
			if j < 0 {
				i = len(stmt)
			} else {
				i += j + 2
			}
			info.end = i
			continue
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == ';':
			terminated = true
			i++
			continue
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i + 1
			for j < len(stmt) && (stmt[j] == '_' || stmt[j] == '$' || stmt[j] >= 'a' && stmt[j] <= 'z' || stmt[j] >= 'A' && stmt[j] <= 'Z' || stmt[j] >= '0' && stmt[j] <= '9') {
				j++
			}
			word := strings.ToUpper(stmt[i:j])
			if info.first == "" {
				info.first = word
			}
			if depth == 0 && word == "LIMIT" {
				info.limitAt = i
			}
			if word == "ESCAPE" {
				info.escape = true
			}
			i = j
			info.end = i
			continue
		}
		i++
		info.end = i
	}
	return info
}

// sqlIsQuery reports a statement SiYuan's parser treats as a SELECT (it gets
// the injected LIMIT and an empty result is []).
func sqlIsQuery(info sqlStmtInfo) bool { return info.first == "SELECT" || info.first == "WITH" }

// sqlErrMsg turns a driver error into the bare SQLite message SiYuan's
// driver reports ("no such table: x").
func sqlErrMsg(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, " ("); i > 0 && strings.HasSuffix(s, ")") {
		if _, convErr := strconv.Atoi(s[i+2 : len(s)-1]); convErr == nil {
			s = s[:i]
		}
	}
	return strings.TrimPrefix(s, "SQL logic error: ")
}

// errSQLNotReadonly is the readonly-mode refusal of a statement that writes.
var errSQLNotReadonly = errors.New("SQL statement is not read-only")

// query runs a statement the way /api/query/sql does: a LIMIT is injected
// into a query without one (when that breaks the statement, the original
// runs with its rows capped). readonly runs it on a query_only connection.
func (s *sqlIndex) query(ctx context.Context, stmt string, limit int, readonly bool) ([]map[string]any, error) {
	info := sqlScan(stmt)
	run := func(q string, max int) ([]map[string]any, error) {
		conn, err := s.db.Conn(ctx)
		if err != nil {
			return nil, err
		}
		defer conn.Close()
		if readonly {
			if _, err := conn.ExecContext(ctx, "PRAGMA query_only = 1"); err != nil {
				return nil, err
			}
			defer func() {
				if _, err := conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA query_only = 0"); err != nil {
					// Never hand a read-only connection back to the pool.
					conn.Raw(func(any) error { return driver.ErrBadConn })
				}
			}()
		}
		rows, err := conn.QueryContext(ctx, q)
		if err != nil {
			return nil, err
		}
		return sqlCollect(rows, max)
	}
	var ret []map[string]any
	var err error
	if sqlIsQuery(info) && info.limitAt < 0 {
		ret, err = run(stmt[:info.end]+"\nLIMIT "+strconv.Itoa(limit), -1)
		if err != nil {
			ret, err = run(stmt, limit)
		}
	} else {
		ret, err = run(stmt, -1)
	}
	if err != nil {
		if readonly && strings.Contains(err.Error(), "readonly database") {
			return nil, errSQLNotReadonly
		}
		return nil, err
	}
	if ret == nil && sqlIsQuery(info) {
		ret = []map[string]any{}
	}
	return ret, nil
}

// sqlCollect reads rows as column → value maps (integers int64, reals
// float64, text string, blobs []byte, NULL nil); max < 0 means all rows.
func sqlCollect(rows *sql.Rows, max int) ([]map[string]any, error) {
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var ret []map[string]any
	for rows.Next() {
		if max >= 0 && len(ret) >= max {
			break
		}
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		m := make(map[string]any, len(cols))
		for i, c := range cols {
			m[c] = vals[i]
		}
		ret = append(ret, m)
	}
	return ret, rows.Err()
}

// querySQL is /api/query/sql.
func (k *Kernel) querySQL(ctx context.Context, a args) (any, error) {
	stmt, err := a.str("stmt")
	if err != nil {
		return nil, err
	}
	if stmt = strings.TrimSpace(stmt); stmt == "" {
		return nil, errf("Field [stmt] must not be empty")
	}
	mode, err := a.optStr("mode")
	if err != nil {
		return nil, err
	}
	info := sqlScan(stmt)
	switch mode {
	case "", "readonly":
		if info.multiple {
			return nil, errf("SQL statement is not single")
		}
		if mode == "readonly" && !sqlIsQuery(info) {
			return nil, errf("SQL statement is not a read-only query")
		}
	case "multiple":
	default:
		return nil, errf("unknown [mode]")
	}
	if info.escape {
		// SiYuan 3.7.3 cannot run a LIKE ... ESCAPE clause (its statement
		// rewriting breaks it, and the raw statement's error is dropped):
		// it answers code 0 with data null, whatever the rows would be.
		return nil, nil
	}
	ret, err := k.sql.query(ctx, stmt, sqlSearchLimit, mode == "readonly")
	if errors.Is(err, errSQLNotReadonly) {
		return nil, errf("%s", err.Error())
	}
	if err != nil && mode == "readonly" {
		// SiYuan prepares a readonly statement first; its errors answer -1.
		return nil, errf("%s", sqlErrMsg(err))
	}
	if err != nil {
		return nil, errCode(1, "%s", sqlErrMsg(err))
	}
	if ret == nil {
		return nil, nil // a statement that is not a query answers null, as SiYuan's
	}
	return ret, nil
}

// flushTransaction is /api/sqlite/flushTransaction: every write of this
// kernel is applied before it answers, so only the SQL queue needs flushing.
func (k *Kernel) flushTransaction(ctx context.Context, a args) (any, error) {
	// Wait for the transaction queue first, as SiYuan does.
	k.writeMu.Lock()
	k.applyPendingLocked()
	k.writeMu.Unlock()
	if err := k.sql.flush(ctx); err != nil {
		return nil, err
	}
	return nil, nil
}

// searchNodeTypes maps the type abbreviations back to lute node type names.
var searchNodeTypes = func() map[string]string {
	m := map[string]string{"ial": "NodeKramdownBlockIAL"}
	for t, a := range typeAbbr {
		m[a] = t.String()
	}
	return m
}()

type searchArgs struct {
	query                    string
	page, pageSize           int
	method, orderBy, groupBy int
	boxes, paths             []string
	types, subTypes          map[string]bool
}

// fullTextSearchBlock is /api/search/fullTextSearchBlock over the lagging index.
func (k *Kernel) fullTextSearchBlock(ctx context.Context, a args) (any, error) {
	var sa searchArgs
	var err error
	if sa.query, err = a.optStr("query"); err != nil {
		return nil, err
	}
	if sa.page, sa.pageSize, err = a.paging(); err != nil {
		return nil, err
	}
	for key, dst := range map[string]*int{"method": &sa.method, "orderBy": &sa.orderBy, "groupBy": &sa.groupBy} {
		if *dst, err = a.optInt(key, 0); err != nil {
			return nil, err
		}
	}
	if a["paths"] != nil {
		paths, err := a.strList("paths")
		if err != nil {
			return nil, err
		}
		seenBox, seenPath := map[string]bool{}, map[string]bool{}
		for _, p := range paths {
			box := strings.TrimSpace(strings.Split(p, "/")[0])
			docPath := strings.TrimSpace(strings.TrimPrefix(p, box))
			if !searchValidBoxPath(box, docPath) {
				continue // SiYuan drops invalid entries silently
			}
			if box != "" && !seenBox[box] {
				seenBox[box] = true
				sa.boxes = append(sa.boxes, box)
			}
			if docPath != "" && !seenPath[docPath] {
				seenPath[docPath] = true
				sa.paths = append(sa.paths, docPath)
			}
		}
	}
	for key, dst := range map[string]*map[string]bool{"types": &sa.types, "subTypes": &sa.subTypes} {
		if a[key] == nil {
			continue
		}
		m, err := a.obj(key)
		if err != nil {
			return nil, err
		}
		*dst = map[string]bool{}
		for t, v := range m {
			b, ok := v.(bool)
			if !ok {
				return nil, errf("argument [%s] must map names to booleans", key)
			}
			(*dst)[t] = b
		}
	}
	blocks, matchedBlocks, matchedRoots, docMode, err := k.sql.search(ctx, &sa)
	if err != nil {
		return nil, err
	}
	if sa.groupBy == 1 {
		blocks, err = k.sql.groupByDoc(ctx, k, blocks, sa.orderBy)
		if err != nil {
			return nil, err
		}
	} else {
		for _, b := range blocks {
			if b.Type == "NodeDocument" {
				b.HPath = strings.TrimSuffix(b.HPath, path.Base(b.HPath))
			}
		}
	}
	if blocks == nil {
		blocks = []*wire.Block{}
	}
	return map[string]any{
		"blocks":            blocks,
		"matchedBlockCount": matchedBlocks,
		"matchedRootCount":  matchedRoots,
		"pageCount":         (matchedBlocks + sa.pageSize - 1) / sa.pageSize,
		"docMode":           docMode,
	}, nil
}

// searchValidBoxPath is SiYuan's IsValidSearchBoxPath: a notebook id and an
// optional path made of node ids, the last one with or without .sy.
func searchValidBoxPath(box, docPath string) bool {
	if !validID(box) {
		return false
	}
	if docPath == "" || docPath == "/" {
		return true
	}
	if !strings.HasPrefix(docPath, "/") {
		return false
	}
	segs := strings.Split(strings.TrimPrefix(docPath, "/"), "/")
	for i, seg := range segs {
		if i == len(segs)-1 {
			seg = strings.TrimSuffix(seg, ".sy")
		}
		if !validID(seg) {
			return false
		}
	}
	return true
}

// searchTypeFilter is SiYuan's buildTypeFilter with its default search types.
func searchTypeFilter(types, subTypes map[string]bool) string {
	enabled := map[string]bool{"document": true, "heading": true, "codeBlock": true, "mathBlock": true, "table": true,
		"paragraph": true, "htmlBlock": true, "databaseBlock": true}
	if types != nil {
		enabled = types
	}
	var simple, clauses []string
	for _, t := range []struct{ name, abbr string }{{"document", "d"}, {"codeBlock", "c"}, {"mathBlock", "m"}, {"table", "t"},
		{"blockquote", "b"}, {"superBlock", "s"}, {"paragraph", "p"}, {"htmlBlock", "html"}, {"embedBlock", "query_embed"},
		{"databaseBlock", "av"}, {"audioBlock", "audio"}, {"videoBlock", "video"}, {"iframeBlock", "iframe"},
		{"widgetBlock", "widget"}, {"callout", "callout"}} {
		if enabled[t.name] {
			simple = append(simple, t.abbr)
		}
	}
	pick := func(all ...string) (ret []string) {
		for _, s := range all {
			if subTypes[s] {
				ret = append(ret, s)
			}
		}
		return ret
	}
	if enabled["heading"] {
		if subs := pick("h1", "h2", "h3", "h4", "h5", "h6"); len(subs) > 0 {
			clauses = append(clauses, "(type = 'h' AND subtype IN ("+searchQuoteJoin(subs)+"))")
		} else {
			simple = append(simple, "h")
		}
	}
	var lists []string
	if enabled["list"] {
		lists = append(lists, "l")
	}
	if enabled["listItem"] {
		lists = append(lists, "i")
	}
	if len(lists) > 0 {
		if subs := pick("o", "u", "t"); len(subs) > 0 {
			clauses = append(clauses, "(type IN ("+searchQuoteJoin(lists)+") AND subtype IN ("+searchQuoteJoin(subs)+"))")
		} else {
			simple = append(simple, lists...)
		}
	}
	if len(simple) > 0 {
		clauses = append([]string{"type IN (" + searchQuoteJoin(simple) + ")"}, clauses...)
	}
	if len(clauses) == 0 {
		return "(1 = 0)"
	}
	return "(" + strings.Join(clauses, " OR ") + ")"
}

func searchQuoteJoin(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = "'" + s + "'"
	}
	return strings.Join(q, ",")
}

// searchScope is the notebook and path filter (bound arguments).
func searchScope(sa *searchArgs) (string, []any) {
	var b strings.Builder
	var args []any
	for _, group := range []struct {
		col  string
		vals []string
		like bool
	}{{"box", sa.boxes, false}, {"path", sa.paths, true}} {
		if len(group.vals) == 0 {
			continue
		}
		b.WriteString(" AND (")
		for i, v := range group.vals {
			if i > 0 {
				b.WriteString(" OR ")
			}
			if group.like {
				b.WriteString(group.col + " LIKE ?")
				args = append(args, v+"%")
			} else {
				b.WriteString(group.col + " = ?")
				args = append(args, v)
			}
		}
		b.WriteString(")")
	}
	return b.String(), args
}

// searchOrderBy is SiYuan's buildOrderBy; relevance (rank) exists only on
// blocks_fts, so the LIKE-based keyword search ranks by the default CASE.
func searchOrderBy(query string, method, orderBy int, hasRank bool) string {
	q := strings.ReplaceAll(query, "'", "''")
	switch orderBy {
	case 1:
		return "ORDER BY created ASC"
	case 2:
		return "ORDER BY created DESC"
	case 3:
		return "ORDER BY updated ASC"
	case 4:
		return "ORDER BY updated DESC"
	case 6:
		if method != 0 && method != 1 {
			return "ORDER BY sort DESC, updated DESC"
		}
		if hasRank {
			return "ORDER BY rank DESC"
		}
	case 7:
		if method != 0 && method != 1 {
			return "ORDER BY sort ASC, updated DESC"
		}
		if hasRank {
			return "ORDER BY CASE WHEN content = '" + q + "' AND type = 'd' THEN 10 WHEN content = '" + q + "' AND type = 'h' THEN 20 ELSE 65535 END ASC, rank"
		}
	}
	return "ORDER BY CASE WHEN name = '" + q + "' THEN 10 WHEN alias = '" + q + "' THEN 20 WHEN content = '" + q +
		"' AND type = 'd' THEN 30 WHEN content LIKE '%" + q + "%' AND type = 'd' THEN 40 WHEN name LIKE '%" + q +
		"%' THEN 50 WHEN alias LIKE '%" + q + "%' THEN 60 WHEN content = '" + q + "' AND type = 'h' THEN 70 WHEN content LIKE '%" +
		q + "%' AND type = 'h' THEN 80 ELSE 65535 END ASC, sort ASC, updated DESC"
}

func searchLikeArg(term string) string {
	return "%" + strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(term) + "%"
}

// search runs one of SiYuan's four search methods.
func (s *sqlIndex) search(ctx context.Context, sa *searchArgs) (blocks []*wire.Block, matchedBlocks, matchedRoots int, docMode bool, err error) {
	query := strings.TrimSpace(strings.Map(func(r rune) rune {
		if r == '\u200b' || r == '\u200c' || r == '\u200d' || r == '\ufeff' {
			return -1
		}
		return r
	}, sa.query))
	if query == "" {
		return nil, 0, 0, false, nil
	}
	typeFilter := searchTypeFilter(sa.types, sa.subTypes)
	scope, scopeArgs := searchScope(sa)
	limit := fmt.Sprintf(" LIMIT %d OFFSET %d", sa.pageSize, (sa.page-1)*sa.pageSize)
	if (sa.method == 0 || sa.method == 1) && validID(query) {
		blocks, matchedBlocks, matchedRoots, err = s.searchSQL(ctx, "SELECT * FROM blocks WHERE id = '"+query+"'", sa.page, sa.pageSize)
		return blocks, matchedBlocks, matchedRoots, false, err
	}
	switch sa.method {
	case 2:
		blocks, matchedBlocks, matchedRoots, err = s.searchSQL(ctx, query, sa.page, sa.pageSize)
		return blocks, matchedBlocks, matchedRoots, false, err
	case 3:
		re, reErr := regexp.Compile(query)
		if reErr != nil {
			return nil, 0, 0, false, nil // SiYuan pushes the error as a message and finds nothing
		}
		where := "(content REGEXP ? OR name REGEXP ? OR alias REGEXP ? OR memo REGEXP ? OR tag REGEXP ?) AND " + typeFilter + scope
		args := append([]any{query, query, query, query, query}, scopeArgs...)
		return s.searchWhere(ctx, "blocks", where, args, searchOrderBy(query, 3, sa.orderBy, false), limit,
			func(t string, _ bool) string { return searchMarkRegexp(t, re) })
	case 1:
		if s.fts {
			match := "{content name alias memo tag}:(" + query + ")"
			where := "blocks_fts MATCH ? AND " + typeFilter + scope
			args := append([]any{match}, scopeArgs...)
			blocks, matchedBlocks, matchedRoots, docMode, err = s.searchWhere(ctx, "blocks_fts", where, args,
				searchOrderBy(query, 1, sa.orderBy, true), limit, func(t string, _ bool) string { return searchMarked(t) })
			if err != nil {
				return nil, 0, 0, false, nil // a malformed query finds nothing, as in SiYuan
			}
			return blocks, matchedBlocks, matchedRoots, docMode, nil
		}
	}
	if fields := strings.Split(query, " "); len(fields) > 1 {
		return s.searchDocMode(ctx, sa, query, typeFilter, scope, scopeArgs)
	}
	where := "(content LIKE ? ESCAPE '\\' OR name LIKE ? ESCAPE '\\' OR alias LIKE ? ESCAPE '\\' OR memo LIKE ? ESCAPE '\\' OR tag LIKE ? ESCAPE '\\') AND " + typeFilter + scope
	like := searchLikeArg(query)
	args := append([]any{like, like, like, like, like}, scopeArgs...)
	return s.searchWhere(ctx, "blocks", where, args, searchOrderBy(query, 0, sa.orderBy, false), limit,
		func(t string, _ bool) string { return searchMarkTerms(t, []string{query}, -1) })
}

// searchWhere selects one page of blocks and counts all matches.
func (s *sqlIndex) searchWhere(ctx context.Context, table, where string, args []any, orderBy, limit string,
	mark func(text string, isContent bool) string) ([]*wire.Block, int, int, bool, error) {
	cols := sqlBlockColumns
	if table == "blocks_fts" {
		hl := func(i int, col string) string {
			return fmt.Sprintf("highlight(blocks_fts, %d, '%s', '%s') AS %s", i, sqlMarkLeft, sqlMarkRight, col)
		}
		cols = "id, parent_id, root_id, hash, box, path, hpath, " + hl(7, "name") + ", " + hl(8, "alias") + ", " +
			hl(9, "memo") + ", " + hl(10, "tag") + ", " + hl(11, "content") + ", fcontent, markdown, length, type, subtype, ial, sort, created, updated"
	}
	rows, err := s.db.QueryContext(ctx, "SELECT "+cols+" FROM "+table+" WHERE "+where+" "+orderBy+limit, args...)
	if err != nil {
		return nil, 0, 0, false, err
	}
	raw, err := sqlCollect(rows, -1)
	if err != nil {
		return nil, 0, 0, false, err
	}
	var blocks []*wire.Block
	for _, r := range raw {
		blocks = append(blocks, searchBlockOf(r, mark))
	}
	var matches, docs int64
	if err := s.db.QueryRowContext(ctx, "SELECT COUNT(id), COUNT(DISTINCT root_id) FROM "+table+" WHERE "+where, args...).Scan(&matches, &docs); err != nil {
		return nil, 0, 0, false, err
	}
	return blocks, int(matches), int(docs), false, nil
}

// searchDocMode is SiYuan's keyword search with several words: documents
// whose blocks together contain every word, each with its blocks that
// contain them all; paging and counts are by document.
func (s *sqlIndex) searchDocMode(ctx context.Context, sa *searchArgs, query, typeFilter, scope string, scopeArgs []any) ([]*wire.Block, int, int, bool, error) {
	var kws []string
	seen := map[string]bool{}
	for _, w := range strings.Split(query, " ") {
		if w != "" && !seen[w] {
			seen[w] = true
			kws = append(kws, w)
		}
	}
	const concat = "(content||name||alias||memo||tag)"
	allOf := func(expr string) (string, []any) {
		parts := make([]string, len(kws))
		args := make([]any, len(kws))
		for i, w := range kws {
			parts[i] = expr + " LIKE ? ESCAPE '\\'"
			args[i] = searchLikeArg(w)
		}
		return "(" + strings.Join(parts, " AND ") + ")", args
	}
	var relevance []string
	var relArgs []any
	for _, w := range kws {
		relevance = append(relevance, "(docContent LIKE ? ESCAPE '\\')")
		relArgs = append(relArgs, searchLikeArg(w))
	}
	having, havingArgs := allOf("GROUP_CONCAT" + concat)
	blockAll, blockArgs := allOf(concat)
	orderBy := searchOrderBy(query, 0, sa.orderBy, false)
	if strings.Contains(orderBy, "sort ASC, updated DESC") && strings.HasPrefix(orderBy, "ORDER BY CASE") {
		orderBy = strings.Replace(orderBy, "END ASC, ", "END ASC, blockSort DESC, ", 1)
	}
	stmt := "WITH docBlocks AS (SELECT root_id, MAX(CASE WHEN type = 'd' THEN " + concat + " END) AS docContent, MAX(updated) AS lastUpdated" +
		" FROM blocks WHERE " + typeFilter + scope + " GROUP BY root_id HAVING " + having + ")," +
		" pageDocs AS (SELECT root_id FROM docBlocks ORDER BY (" + strings.Join(relevance, " + ") + ") DESC, lastUpdated DESC" +
		fmt.Sprintf(" LIMIT %d OFFSET %d)", sa.pageSize, (sa.page-1)*sa.pageSize) +
		" SELECT " + sqlBlockColumns + ", (SELECT COUNT(root_id) FROM docBlocks) AS docs, (CASE WHEN " + blockAll + " THEN 1 ELSE 0 END) AS blockSort" +
		" FROM blocks WHERE " + typeFilter + scope +
		" AND (id IN (SELECT root_id FROM pageDocs) OR (root_id IN (SELECT root_id FROM pageDocs) AND " + blockAll + ")) " + orderBy
	var args []any
	args = append(args, scopeArgs...)
	args = append(args, havingArgs...)
	args = append(args, relArgs...)
	args = append(args, blockArgs...)
	args = append(args, scopeArgs...)
	args = append(args, blockArgs...)
	rows, err := s.db.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, 0, 0, true, err
	}
	raw, err := sqlCollect(rows, -1)
	if err != nil {
		return nil, 0, 0, true, err
	}
	var blocks []*wire.Block
	docs := 0
	for i, r := range raw {
		if i == 0 {
			if n, ok := r["docs"].(int64); ok {
				docs = int(n)
			}
		}
		blocks = append(blocks, searchBlockOf(r, func(t string, isContent bool) string {
			if isContent {
				return searchMarkTerms(t, kws, 36)
			}
			return searchMarkTerms(t, kws, 256)
		}))
	}
	return blocks, docs, docs, true, nil
}

// searchSQL is search method 2: a SELECT over blocks, paged (its own LIMIT
// is the page size when it has one) and counted.
func (s *sqlIndex) searchSQL(ctx context.Context, stmt string, page, pageSize int) ([]*wire.Block, int, int, error) {
	info := sqlScan(stmt)
	if !sqlIsQuery(info) || info.multiple {
		return nil, 0, 0, nil
	}
	body := stmt[:info.end]
	if info.limitAt >= 0 {
		limitClause := body[info.limitAt+len("LIMIT"):]
		body = body[:info.limitAt]
		fields := strings.FieldsFunc(limitClause, func(r rune) bool { return r == ' ' || r == ',' || r == '\n' || r == '\t' })
		if len(fields) > 0 {
			if n, err := strconv.Atoi(fields[0]); err == nil {
				pageSize = n
				if pageSize <= 0 {
					pageSize = 32
				}
			}
		}
	}
	rows, err := s.db.QueryContext(ctx, fmt.Sprintf("SELECT * FROM (%s) LIMIT %d OFFSET %d", body, pageSize, (page-1)*pageSize))
	if err != nil {
		return nil, 0, 0, nil // SiYuan logs the failure and finds nothing
	}
	raw, err := sqlCollect(rows, -1)
	if err != nil {
		return nil, 0, 0, nil
	}
	var blocks []*wire.Block
	for _, r := range raw {
		blocks = append(blocks, searchBlockOf(r, func(t string, _ bool) string { return searchMarked(t) }))
	}
	if len(blocks) == 0 {
		return nil, 0, 0, nil
	}
	var matches, docs int64
	if err := s.db.QueryRowContext(ctx, "SELECT COUNT(id), COUNT(DISTINCT root_id) FROM ("+body+")").Scan(&matches, &docs); err != nil {
		return blocks, len(blocks), 0, nil
	}
	return blocks, int(matches), int(docs), nil
}

// groupByDoc nests the matched blocks under their documents (groupBy 1).
func (s *sqlIndex) groupByDoc(ctx context.Context, k *Kernel, blocks []*wire.Block, orderBy int) ([]*wire.Block, error) {
	var rootIDs []string
	seen := map[string]bool{}
	contentOrder := map[string]int{}
	for _, b := range blocks {
		if seen[b.RootID] {
			continue
		}
		seen[b.RootID] = true
		rootIDs = append(rootIDs, b.RootID)
		if orderBy == 5 {
			if tree, err := k.loadTree(b.RootID); err == nil {
				i := 0
				ast.Walk(tree.Root, func(n *ast.Node, entering bool) ast.WalkStatus {
					if entering && n.IsBlock() {
						contentOrder[n.ID] = i
						i++
					}
					return ast.WalkContinue
				})
			}
		}
	}
	if len(rootIDs) == 0 {
		return nil, nil
	}
	ph := strings.TrimSuffix(strings.Repeat("?, ", len(rootIDs)), ", ")
	args := make([]any, len(rootIDs))
	for i, id := range rootIDs {
		args[i] = id
	}
	rows, err := s.db.QueryContext(ctx, "SELECT "+sqlBlockColumns+" FROM blocks WHERE id IN ("+ph+")", args...)
	if err != nil {
		return nil, err
	}
	raw, err := sqlCollect(rows, -1)
	if err != nil {
		return nil, err
	}
	byID := map[string]*wire.Block{}
	for _, r := range raw {
		b := searchBlockOf(r, func(t string, _ bool) string { return searchMarked(t) })
		byID[b.ID] = b
	}
	var roots []*wire.Block
	for _, id := range rootIDs {
		root := byID[id]
		if root == nil {
			continue
		}
		for _, b := range blocks {
			if b.RootID != id {
				continue
			}
			if orderBy == 5 {
				b.Sort = contentOrder[b.ID]
			}
			root.Children = append(root.Children, b)
		}
		c := root.Children
		switch orderBy {
		case 1:
			sort.SliceStable(c, func(i, j int) bool { return c[i].Created < c[j].Created })
		case 2:
			sort.SliceStable(c, func(i, j int) bool { return c[i].Created > c[j].Created })
		case 3:
			sort.SliceStable(c, func(i, j int) bool { return c[i].Updated < c[j].Updated })
		case 4:
			sort.SliceStable(c, func(i, j int) bool { return c[i].Updated > c[j].Updated })
		default:
			sort.SliceStable(c, func(i, j int) bool { return c[i].Sort < c[j].Sort })
		}
		roots = append(roots, root)
	}
	switch orderBy {
	case 1:
		sort.SliceStable(roots, func(i, j int) bool { return roots[i].Created < roots[j].Created })
	case 2:
		sort.SliceStable(roots, func(i, j int) bool { return roots[i].Created > roots[j].Created })
	case 3:
		sort.SliceStable(roots, func(i, j int) bool { return roots[i].Updated < roots[j].Updated })
	case 4:
		sort.SliceStable(roots, func(i, j int) bool { return roots[i].Updated > roots[j].Updated })
	case 5:
		sort.SliceStable(roots, func(i, j int) bool { return roots[i].IAL["updated"] > roots[j].IAL["updated"] })
	}
	return roots, nil
}

// searchBlockOf converts a row as SiYuan's fromSQLBlock does: content, tag,
// name, alias and memo are HTML-escaped and highlighted, fcontent and hPath
// escaped, and created/updated are left empty (SiYuan does not copy them).
func searchBlockOf(r map[string]any, mark func(text string, isContent bool) string) *wire.Block {
	str := func(k string) string { return sqlValueString(r[k]) }
	num := func(k string) int {
		switch x := r[k].(type) {
		case int64:
			return int(x)
		case float64:
			return int(x)
		case string:
			n, _ := strconv.Atoi(x)
			return n
		}
		return 0
	}
	b := &wire.Block{
		Box: str("box"), Path: str("path"), ID: str("id"), RootID: str("root_id"), ParentID: str("parent_id"),
		Content:  searchMaxContent(mark(str("content"), true), 5120),
		Tag:      mark(str("tag"), true),
		FContent: searchEscape(str("fcontent")),
		Markdown: searchMaxContent(str("markdown"), 5120),
		Type:     searchNodeTypes[str("type")],
		SubType:  str("subtype"),
		Sort:     num("sort"),
	}
	for _, f := range []struct {
		dst *string
		col string
	}{{&b.Name, "name"}, {&b.Alias, "alias"}, {&b.Memo, "memo"}} {
		if v := str(f.col); v != "" {
			*f.dst = mark(v, false)
		}
	}
	if ial := str("ial"); ial != "" {
		b.IAL = map[string]string{}
		ial = strings.TrimSuffix(strings.TrimPrefix(ial, "{:"), "}")
		for _, kv := range parse.Tokens2IAL([]byte(ial)) {
			b.IAL[kv[0]] = kv[1]
		}
	}
	b.HPath = searchMarked(str("hpath"))
	if !strings.HasPrefix(b.HPath, "/") {
		b.HPath = "/" + b.HPath
	}
	return b
}

// searchEscape is SiYuan's util.EscapeHTML: blank text is returned as is.
func searchEscape(s string) string {
	if strings.TrimSpace(s) == "" {
		return s
	}
	return html.EscapeString(s)
}

// searchMarked escapes text carrying FTS marks and turns them into <mark>.
func searchMarked(s string) string {
	s = searchEscape(s)
	return strings.ReplaceAll(strings.ReplaceAll(s, sqlMarkLeft, "<mark>"), sqlMarkRight, "</mark>")
}

// searchMarkTerms escapes text and marks every case-insensitive occurrence of
// the terms; beforeLen ≥ 0 shortens the text before the first mark to that
// many characters, with "...", as SiYuan's MarkText.
func searchMarkTerms(text string, terms []string, beforeLen int) string {
	var alts []string
	for _, t := range terms {
		if t != "" {
			alts = append(alts, regexp.QuoteMeta(searchEscape(t)))
		}
	}
	escaped := searchEscape(text)
	if len(alts) == 0 {
		return escaped
	}
	re := regexp.MustCompile("(?i)(" + strings.Join(alts, "|") + ")")
	return searchShorten(re.ReplaceAllString(escaped, "<mark>$0</mark>"), beforeLen)
}

// searchMarkRegexp escapes text and marks the matches of a regular expression.
func searchMarkRegexp(text string, re *regexp.Regexp) string {
	var b strings.Builder
	last := 0
	for _, m := range re.FindAllStringIndex(text, -1) {
		if m[0] == m[1] {
			continue
		}
		b.WriteString(sqlMarkEsc(text[last:m[0]]))
		b.WriteString("<mark>" + sqlMarkEsc(text[m[0]:m[1]]) + "</mark>")
		last = m[1]
	}
	b.WriteString(sqlMarkEsc(text[last:]))
	return b.String()
}

func sqlMarkEsc(s string) string { return html.EscapeString(s) }

func searchShorten(marked string, beforeLen int) string {
	pos := strings.Index(marked, "<mark>")
	if beforeLen < 0 || pos <= 0 {
		return marked
	}
	head := []rune(marked[:pos])
	if len(head) > beforeLen {
		return "..." + string(head[len(head)-beforeLen-1:]) + marked[pos:]
	}
	return marked
}

// searchMaxContent is SiYuan's maxContent: cut to maxLen characters.
func searchMaxContent(s string, maxLen int) string {
	if utf8.RuneCountInString(s) <= maxLen {
		return s
	}
	return string([]rune(s)[:maxLen]) + "..."
}

// blocksByID returns the indexed blocks of ids, in the order of ids (SiYuan's
// sql.GetBlocks); ids missing from the index are left out.
func (s *sqlIndex) blocksByID(ctx context.Context, ids []string) ([]map[string]any, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := s.db.QueryContext(ctx, "SELECT "+sqlBlockColumns+" FROM blocks WHERE id IN (?"+strings.Repeat(",?", len(ids)-1)+")", args...)
	if err != nil {
		return nil, err
	}
	raw, err := sqlCollect(rows, -1)
	if err != nil {
		return nil, err
	}
	byID := map[string]map[string]any{}
	for _, r := range raw {
		byID[sqlValueString(r["id"])] = r
	}
	var out []map[string]any
	for _, id := range ids {
		if r, ok := byID[id]; ok {
			out = append(out, r)
		}
	}
	return out, nil
}

// countBlocks counts the rows of blocks.
func (s *sqlIndex) countBlocks(ctx context.Context) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM blocks").Scan(&n)
	return n, err
}
