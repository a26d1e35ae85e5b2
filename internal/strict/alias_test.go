package strict

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/canon"
)

// digestWith returns a full digest whose hex starts with prefix, padded with
// the filler digit.
func digestWith(prefix string, filler byte) string {
	return canon.Prefix + prefix + strings.Repeat(string(filler), 64-len(prefix))
}

func TestParseCredential(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"8ac2", "8ac2"},
		{"8AC2", "8ac2"},
		{"sha256:v1:8ac2", "8ac2"},
		{"SHA256:V1:8Ac2", "8ac2"},
		{strings.Repeat("F", 64), strings.Repeat("f", 64)},
		{"sha256:v1:" + strings.Repeat("0", 64), strings.Repeat("0", 64)},
		{"8ac", ""},
		{"", ""},
		{"sha256:v1:", ""},
		{"sha256:v1:8ac", ""},
		{strings.Repeat("a", 65), ""},
		{"8acg", ""},
		{"sha256:v2:8ac2", ""},
		{" 8ac2", ""},
		{"sha256:8ac2", ""},
	}
	for _, tt := range tests {
		got, err := ParseCredential(tt.in)
		if tt.want == "" {
			if !errors.Is(err, ErrMalformedCredential) {
				t.Errorf("ParseCredential(%q) = %q, %v; want ErrMalformedCredential", tt.in, got, err)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("ParseCredential(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestAliasCollisionsGrowPastOtherDigests(t *testing.T) {
	p := NewAliasPool()
	a := digestWith("abcd", '0')   // abcd0000…
	b := digestWith("abcd0", '1')  // abcd0111…: collides with a on 4 and 5 digits
	c := digestWith("abcd01", '2') // collides with a on 6
	d := digestWith("abcd1", '3')  // its 5-digit prefix is free
	e := digestWith("abce", '4')

	steps := []struct {
		digest, want string
	}{
		{a, "abcd"},
		{b, "abcd0"},
		{c, "abcd01"},
		{d, "abcd1"},
		{e, "abce"},
		{a, "abcd"}, // reused, never reassigned
		{b, "abcd0"},
		{c, "abcd01"},
	}
	for i, s := range steps {
		if got := p.Alias(s.digest); got != s.want {
			t.Fatalf("step %d: Alias(%s) = %q, want %q", i, s.digest, got, s.want)
		}
	}
	if p.Len() != 5 {
		t.Fatalf("Len = %d, want 5", p.Len())
	}

	resolve := []struct {
		cred, want string
	}{
		{"abcd", a},
		{"ABCD", a},
		{"sha256:v1:abcd", a},
		{"abcd0", b},
		{"abcd01", c},
		{"abcd1", d},
		{"abce", e},
		{a[len(canon.Prefix):], a}, // full hex of a registered digest
		{strings.ToUpper(b[len(canon.Prefix):]), b},
		{c, c},
		{"abcd00", ""},  // a prefix of a's digits, but not an alias
		{"abcd000", ""}, // longer prefix of a: no prefix search
		{"abc", ""},     // too short
		{"abcf", ""},    // unknown
		{strings.Repeat("9", 64), ""},
		{"abcd0z", ""},
	}
	for _, r := range resolve {
		got, ok := resolveStr(p, r.cred)
		if r.want == "" {
			if ok {
				t.Errorf("Resolve(%q) = %s, want not found", r.cred, got)
			}
			continue
		}
		if !ok || got != r.want {
			t.Errorf("Resolve(%q) = %s, %v; want %s", r.cred, got, ok, r.want)
		}
	}
}

func TestAliasFullLengthCollision(t *testing.T) {
	// Two digests equal in their first 63 digits: the second needs all 64.
	p := NewAliasPool()
	a := canon.Prefix + strings.Repeat("7", 63) + "0"
	b := canon.Prefix + strings.Repeat("7", 63) + "1"
	if got := p.Alias(a); got != "7777" {
		t.Fatalf("Alias(a) = %q", got)
	}
	want := 5
	for n := 5; n < 64; n++ { // register every intermediate prefix of a's digits as someone's alias
		x := canon.Prefix + strings.Repeat("7", n) + strings.Repeat("8", 64-n)
		if got := p.Alias(x); len(got) != want {
			t.Fatalf("Alias(%d sevens) = %q, want length %d", n, got, want)
		}
		want++
	}
	got := p.Alias(b)
	if got != b[len(canon.Prefix):] {
		t.Fatalf("Alias(b) = %q, want its full 64 digits", got)
	}
	if d, ok := resolveStr(p, got); !ok || d != b {
		t.Fatalf("Resolve(full b) = %s, %v", d, ok)
	}
}

func TestAliasRejectsNonDigests(t *testing.T) {
	p := NewAliasPool()
	for _, s := range []string{"", "abcd", "sha256:v1:abcd", strings.ToUpper(digestWith("ab", 'c'))} {
		if got := p.Alias(s); got != "" {
			t.Errorf("Alias(%q) = %q, want \"\"", s, got)
		}
	}
	if p.Len() != 0 {
		t.Fatalf("Len = %d", p.Len())
	}
}

func TestAliasRealDigests(t *testing.T) {
	p := NewAliasPool()
	seen := map[string]string{}
	for i := 0; i < 20000; i++ {
		d, err := canon.Digest(map[string]any{"n": i})
		if err != nil {
			t.Fatal(err)
		}
		a := p.Alias(d)
		if len(a) < MinAliasLen || !strings.HasPrefix(d[len(canon.Prefix):], a) {
			t.Fatalf("alias %q of %s", a, d)
		}
		if prev, dup := seen[a]; dup && prev != d {
			t.Fatalf("alias %q given to %s and %s", a, prev, d)
		}
		seen[a] = d
	}
	// 20,000 digests in a 65,536 space collide on 4 digits thousands of times.
	long := 0
	for a := range seen {
		if len(a) > MinAliasLen {
			long++
		}
	}
	if long == 0 {
		t.Fatal("no alias grew past 4 digits")
	}
	for a, d := range seen {
		if got, ok := resolveStr(p, a); !ok || got != d {
			t.Fatalf("Resolve(%q) = %s, %v; want %s", a, got, ok, d)
		}
	}
}

func TestAliasConcurrent(t *testing.T) {
	p := NewAliasPool()
	const workers, per = 8, 500
	digests := make([]string, per)
	for i := range digests {
		// Half of them share the prefix "0000" to force growth under contention.
		prefix := fmt.Sprintf("%04x", i)
		if i%2 == 0 {
			prefix = "0000" + fmt.Sprintf("%04x", i)
		}
		digests[i] = digestWith(prefix, 'e')
	}
	results := make([][]string, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := make([]string, per)
			for j := range digests {
				k := (j + w*61) % per // different orders per worker
				out[k] = p.Alias(digests[k])
				if d, ok := resolveStr(p, out[k]); !ok || d != digests[k] {
					t.Errorf("Resolve(%q) = %s, %v", out[k], d, ok)
				}
			}
			results[w] = out
		}()
	}
	wg.Wait()
	owner := map[string]string{}
	for w := range results {
		for k, a := range results[w] {
			if a != results[0][k] {
				t.Fatalf("digest %d got alias %q and %q", k, a, results[0][k])
			}
			if o, ok := owner[a]; ok && o != digests[k] {
				t.Fatalf("alias %q held by two digests", a)
			}
			owner[a] = digests[k]
		}
	}
	if p.Len() != per {
		t.Fatalf("Len = %d, want %d", p.Len(), per)
	}
}
