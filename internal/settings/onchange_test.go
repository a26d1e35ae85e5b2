package settings

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// TestOnChangeFollowsTheCache: a cached store ages its cache by its own
// clock, and tells OnChange when the cache takes a configuration whose
// access differs from the last: not for a rewrite of the same content, nor
// for a change of the texts alone (they decide no access).
func TestOnChangeFollowsTheCache(t *testing.T) {
	c := kernel(t)
	ctx := context.Background()
	const ttl = time.Minute
	s := NewCachedStore(c, ttl)
	var mu sync.Mutex
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	s.SetClock(func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
	age := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	heard := make(chan struct{}, 16)
	s.OnChange(func() { heard <- struct{}{} })
	// The first configuration the cache takes is news too.
	if p, err := s.Policy(ctx); err != nil || p.Level(nb1) != tools.LevelRead {
		t.Fatalf("default: %v", err)
	}
	wait := func(what string) {
		t.Helper()
		select {
		case <-heard:
		case <-time.After(10 * time.Second): // a guard against a hang, not a measure
			t.Fatalf("%s: OnChange was not called", what)
		}
	}
	wait("the first load")
	for _, step := range []struct {
		name       string
		file, body string
		level      tools.Level
		news       bool
	}{
		{"a permission changed", PermissionsFile, `{"` + nb1 + `": "rw"}`, tools.LevelWrite, true},
		{"the same content written again", PermissionsFile, `{"` + nb1 + `": "rw"}`, tools.LevelWrite, false},
		{"a tool switched", ToolsFile, `{"fs":{"enabled":true}}`, tools.LevelWrite, true},
		{"only the user rules changed", ToolsFile, `{"fs":{"enabled":true},"userRulesText":"be brief"}`, tools.LevelWrite, false},
		{"a permission changed back", PermissionsFile, `{}`, tools.LevelRead, true},
	} {
		put(t, c, step.file, step.body)
		s.cacheMu.Lock()
		announced := s.announced
		s.cacheMu.Unlock()
		age(ttl / 4) // within the ttl's first half: the cache answers, nothing is read
		if cachedVersion(t, s) != announced {
			t.Fatalf("%s: the cache changed before it aged out", step.name)
		}
		age(ttl) // past the ttl at once: the next Policy reads, on this goroutine
		p, err := s.Policy(ctx)
		if err != nil || p.Level(nb1) != step.level {
			t.Fatalf("%s: level %v (%v), want %v", step.name, p.Level(nb1), err, step.level)
		}
		s.cacheMu.Lock()
		changed := s.announced != announced
		s.cacheMu.Unlock()
		if changed != step.news {
			t.Fatalf("%s: announced a change: %v, want %v", step.name, changed, step.news)
		}
		if step.news {
			wait(step.name)
		}
	}
}

// cachedVersion is the access version of the configuration s answers with.
func cachedVersion(t *testing.T, s *Store) string {
	t.Helper()
	c, err := s.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c.Version()
}
