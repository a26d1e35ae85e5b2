package settings

import (
	"context"
	"encoding/json"
	"regexp"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

const (
	lsNotebooks = "/api/notebook/lsNotebooks"
	querySQL    = "/api/query/sql"
)

// TestGoneNotebookHidesNothing: a notebook the person hid and then removed
// in SiYuan leaves its "none" entry behind; it hides nothing, so what
// cannot be filtered by notebook is not refused for its sake. Its level
// stays none (whatever a lookup places there is refused), and the person's
// view still shows the entry.
func TestGoneNotebookHidesNothing(t *testing.T) {
	ctx := context.Background()
	c := kernel(t)
	const gone = "20251231000000-zzzzzzz"
	put(t, c, PermissionsFile, `{"`+gone+`": "none", "`+nb1+`": "rw"}`)
	s := NewStore(c)
	p, err := s.Policy(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p.Hides() || !p.Gone[gone] || p.Level(gone) != tools.LevelNone || p.Visible(gone) || p.Level(nb1) != tools.LevelWrite {
		t.Fatalf("a removed notebook's none entry: %+v", p)
	}
	cfg, err := s.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Levels()[gone] != tools.LevelNone {
		t.Fatal("the stored entry is the person's: it stays in the view")
	}
	if !cfg.Policy().Hides() {
		t.Fatal("without asking the kernel, every none entry hides")
	}
	put(t, c, PermissionsFile, `{"`+gone+`": "none", "`+nb2+`": "none"}`)
	if p, _ := NewStore(c).Policy(ctx); !p.Hides() || p.Level(nb2) != tools.LevelNone || p.Gone[nb2] {
		t.Fatalf("an existing hidden notebook still hides: %+v", p)
	}
}

// TestOmittedNotebookStillHides: SiYuan's lsNotebooks leaves out a
// notebook whose .siyuan/conf.json it cannot parse (a sync or a crash left
// it half-written) while its blocks stay in the index. Hidden, it keeps
// hiding: an agent gets neither SQL nor its level. Only once it is removed
// for good (not listed, nothing indexed) does it hide nothing.
func TestOmittedNotebookStillHides(t *testing.T) {
	ctx := context.Background()
	c := kernel(t)
	vault, err := c.CreateNotebook(ctx, "Vault")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: vault.ID, Path: "/Salary", Markdown: "salary secret\n"}); err != nil {
		t.Fatal(err)
	}
	if err := c.FlushTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	put(t, c, PermissionsFile, `{"`+vault.ID+`": "none"}`)
	conf := "/data/" + vault.ID + "/.siyuan/conf.json"
	good := get(t, c, conf)
	put(t, c, conf, `{"name": "Vau`) // half-written
	nbs, err := c.ListNotebooks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nbs {
		if n.ID == vault.ID {
			t.Fatal("the kernel lists a notebook whose conf.json cannot be parsed: the test shows nothing")
		}
	}
	p, err := NewStore(c).Policy(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Hides() || p.Gone[vault.ID] || p.Visible(vault.ID) {
		t.Fatalf("a hidden notebook lsNotebooks leaves out for a while: %+v", p)
	}

	put(t, c, conf, good)
	if err := c.RemoveNotebook(ctx, vault.ID); err != nil {
		t.Fatal(err)
	}
	if err := c.FlushTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	p, err = NewStore(c).Policy(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p.Hides() || !p.Gone[vault.ID] || p.Visible(vault.ID) {
		t.Fatalf("a hidden notebook removed for good: %+v", p)
	}
}

// TestGoneCosts: finding which hidden notebooks are gone costs nothing
// while no notebook is hidden, nothing to a store that only loads the
// files (the virtual files, a permission's state), and otherwise one
// lsNotebooks per period (a query of the index only for a hidden notebook
// it does not list), shared by the calls of that period, however many
// arrive at once.
func TestGoneCosts(t *testing.T) {
	ctx := context.Background()
	c, n := countedKernel(t)
	now := time.Date(2026, 8, 12, 12, 0, 0, 0, time.UTC)
	s := NewStore(c)
	s.clock = func() time.Time { return now }
	asked := func(want map[string]int) {
		t.Helper()
		got := n.take()
		for _, p := range []string{lsNotebooks, querySQL} {
			if got[p] != want[p] {
				t.Fatalf("%s asked %d times, want %d (%v)", p, got[p], want[p], got)
			}
		}
	}
	policy := func() *tools.Policy {
		t.Helper()
		p, err := s.Policy(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}

	put(t, c, PermissionsFile, `{"`+nb1+`": "r", "`+nb2+`": "rw"}`)
	n.take()
	policy()
	asked(nil)

	put(t, c, PermissionsFile, `{"`+nb1+`": "none", "`+nb2+`": "none"}`)
	n.take()
	if _, err := s.Load(ctx); err != nil {
		t.Fatal(err)
	}
	asked(nil)
	if p := policy(); !p.Hides() || len(p.Gone) != 0 {
		t.Fatalf("hidden notebooks that exist: %+v", p)
	}
	asked(map[string]int{lsNotebooks: 1})
	policy()
	asked(nil)

	now = now.Add(verdictFor)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() { defer wg.Done(); s.Policy(ctx) }()
	}
	wg.Wait()
	asked(map[string]int{lsNotebooks: 1})

	const gone = "20251231000000-zzzzzzz"
	put(t, c, PermissionsFile, `{"`+nb1+`": "none", "`+gone+`": "none"}`)
	n.take()
	if p := policy(); !p.Hides() || !p.Gone[gone] || len(p.Gone) != 1 {
		t.Fatalf("one hidden notebook gone: %+v", p)
	}
	asked(map[string]int{lsNotebooks: 1, querySQL: 1})
	policy()
	asked(nil)

	// A kernel that cannot say leaves every notebook hiding, and the next
	// call asks again.
	now = now.Add(verdictFor)
	n.failing(lsNotebooks, true)
	if p := policy(); !p.Hides() || len(p.Gone) != 0 {
		t.Fatalf("lsNotebooks failing: %+v", p)
	}
	n.failing(lsNotebooks, false)
	n.take()
	if p := policy(); !p.Gone[gone] {
		t.Fatalf("asked again: %+v", p)
	}
	asked(map[string]int{lsNotebooks: 1, querySQL: 1})
	now = now.Add(verdictFor)
	n.failing(querySQL, true)
	if p := policy(); !p.Hides() || len(p.Gone) != 0 {
		t.Fatalf("the index failing: %+v", p)
	}
}

// FuzzGone: whatever notebook ids the person's file hides, finding which
// are gone never fails the policy, puts into SQL only a checked id in the
// project's own statement, leaves hiding every notebook SiYuan lists, and
// keeps every entry none.
func FuzzGone(f *testing.F) {
	c, n := countedKernel(f)
	f.Add(nb1)
	f.Add("20251231000000-zzzzzzz")
	f.Add("x' OR 1=1 --")
	f.Add("")
	f.Add("20251231000000-zzzzzz'")
	stmt := regexp.MustCompile(`^\{"stmt":"SELECT box FROM blocks WHERE box = '\d{14}-[0-9a-z]{7}' LIMIT 1"`)
	f.Fuzz(func(t *testing.T, id string) {
		if !utf8.ValidString(id) {
			return // JSON stores another key
		}
		ctx := context.Background()
		raw, _ := json.Marshal(map[string]string{id: "none", nb2: "none"})
		put(t, c, PermissionsFile, string(raw))
		n.take()
		p, err := NewStore(c).Policy(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range n.queries() {
			if !stmt.MatchString(q) {
				t.Fatalf("SQL sent: %s", q)
			}
		}
		if p.Level(id) != tools.LevelNone || p.Level(nb2) != tools.LevelNone || p.Gone[nb2] || !p.Hides() {
			t.Fatalf("%q: %+v", id, p)
		}
		if id == nb1 && p.Gone[id] {
			t.Fatalf("a notebook SiYuan lists is gone: %+v", p)
		}
	})
}
