package transfer

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/failure"
)

func writeFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// stagePath opens the file at p and stages it under name.
func stagePath(st *Stager, p, name string) (Staged, error) {
	f, err := os.Open(p)
	if err != nil {
		return Staged{}, err
	}
	defer f.Close()
	return st.Stage(context.Background(), f, name)
}

func TestStagerLooksUpThenStreams(t *testing.T) {
	s := NewStore(Config{})
	a := stagingServer(t, s, nil)
	st := &Stager{Authority: a}
	data := bytes.Repeat([]byte("0123456789"), 300_000) // 3 MB
	p := writeFile(t, t.TempDir(), "big photo.jpg", data)

	first, err := stagePath(st, p, "")
	if err != nil {
		t.Fatal(err)
	}
	if first.FileName != "big photo.jpg" || first.SHA256 != hexSum(data) || first.Size != int64(len(data)) {
		t.Fatalf("staged %+v", first)
	}
	snap, ok := s.Get(first.UploadSource)
	if b, _ := io.ReadAll(snap.Open()); !ok || !bytes.Equal(b, data) {
		t.Fatal("the authority holds other bytes than the file")
	}
	if a.hits[LookupPath].Load() != 1 || a.hits[UploadPath].Load() != 1 {
		t.Fatalf("hits: lookup %d upload %d", a.hits[LookupPath].Load(), a.hits[UploadPath].Load())
	}
	// Again: the lookup finds the verified snapshot and nothing is sent.
	again, err := stagePath(st, p, "")
	if err != nil || again.UploadSource != first.UploadSource {
		t.Fatalf("second stage %+v %v", again, err)
	}
	if a.hits[UploadPath].Load() != 1 {
		t.Fatal("an already staged file was uploaded again")
	}
	// Changed content: a new handle.
	os.WriteFile(p, []byte("changed"), 0o644)
	if changed, err := stagePath(st, p, ""); err != nil || changed.UploadSource == first.UploadSource {
		t.Fatalf("changed file: %+v %v", changed, err)
	}
	if stats := s.Stats(); stats.LookupHits != 1 || stats.LookupMisses != 2 || stats.Staged != 2 {
		t.Fatalf("stats %+v", stats)
	}
}

func TestStagerRefusals(t *testing.T) {
	dir := t.TempDir()
	small := writeFile(t, dir, "small.txt", []byte("hello"))
	over := writeFile(t, dir, "over.bin", bytes.Repeat([]byte{1}, 101))
	empty := writeFile(t, dir, "empty.txt", nil)
	for _, tt := range []struct {
		name     string
		store    Config
		stager   Stager
		path     string
		as       string
		code     failure.Code
		tooLarge bool
		sent     bool
	}{
		{"over the front's cap", Config{}, Stager{MaxFileBytes: 100}, over, "", failure.FileTooLarge, true, false},
		{"over the authority's cap", Config{MaxFileBytes: 100}, Stager{}, over, "", failure.FileTooLarge, true, true},
		{"a directory", Config{}, Stager{}, dir, "", failure.InvalidArguments, false, false},
		{"empty", Config{}, Stager{}, empty, "", failure.InvalidArguments, false, false},
		{"a name with a path", Config{}, Stager{}, small, "a/b.txt", failure.InvalidArguments, false, false},
		{"store full", Config{MaxEntries: 1}, Stager{}, small, "", failure.StagingFull, false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := NewStore(tt.store)
			if tt.name == "store full" {
				stage(t, s, "other", []byte("x"))
			}
			a := stagingServer(t, s, nil)
			st := tt.stager
			st.Authority = a
			_, err := stagePath(&st, tt.path, tt.as)
			var fe *failure.Error
			if codeOf(err) != tt.code || IsTooLargeToStage(err) != tt.tooLarge {
				t.Fatalf("err %v, want %s (too large %v)", err, tt.code, tt.tooLarge)
			}
			if errorsAs(err, &fe); fe.WriteAttempted == nil || *fe.WriteAttempted {
				t.Fatalf("writeAttempted not false: %+v", fe)
			}
			if sent := a.hits[UploadPath].Load() > 0; sent != tt.sent {
				t.Fatalf("upload sent: %v", sent)
			}
		})
	}
}

func errorsAs(err error, fe **failure.Error) bool {
	e, ok := err.(*failure.Error)
	*fe = e
	return ok
}

func TestStagerRetriesBusy(t *testing.T) {
	for _, tt := range []struct {
		name    string
		busy    int64
		retries int
		code    failure.Code
		sent    int64
	}{
		{"two busy answers, then staged", 2, 0, "", 3},
		{"busy past the retries", 10, 2, failure.StagingBusy, 3},
		{"no retries", 10, -1, failure.StagingBusy, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := NewStore(Config{})
			var n atomic.Int64
			a := stagingServer(t, s, func(path string, h http.HandlerFunc) http.HandlerFunc {
				return func(w http.ResponseWriter, r *http.Request) {
					if path == UploadPath && n.Add(1) <= tt.busy {
						io.Copy(io.Discard, r.Body)
						replyError(w, failure.New(failure.StagingBusy, "busy"))
						return
					}
					h(w, r)
				}
			})
			st := &Stager{Authority: a, BusyRetries: tt.retries, BusyPause: time.Millisecond}
			_, err := stagePath(st, writeFile(t, t.TempDir(), "a.txt", []byte("abc")), "")
			if codeOf(err) != tt.code || a.hits[UploadPath].Load() != tt.sent {
				t.Fatalf("err %v after %d uploads", err, a.hits[UploadPath].Load())
			}
		})
	}
}

func TestStagerTimeoutAndMismatch(t *testing.T) {
	p := writeFile(t, t.TempDir(), "a.txt", []byte("abc"))
	slow := stagingServer(t, NewStore(Config{}), func(path string, h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if path == UploadPath {
				io.Copy(io.Discard, r.Body)
				select {
				case <-r.Context().Done():
				case <-time.After(5 * time.Second):
				}
				return
			}
			h(w, r)
		}
	})
	start := time.Now()
	_, err := stagePath(&Stager{Authority: slow, Timeout: 100 * time.Millisecond}, p, "")
	if codeOf(err) != failure.TransferFailed || !strings.Contains(err.Error(), "within 100ms") || time.Since(start) > 3*time.Second {
		t.Fatalf("slow authority: %v after %s", err, time.Since(start))
	}
	liar := stagingServer(t, NewStore(Config{}), func(path string, h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if path == UploadPath {
				io.Copy(io.Discard, r.Body)
				json.NewEncoder(w).Encode(Staged{UploadSource: "staged:x", FileName: "a.txt", SHA256: hexSum([]byte("abd")), Size: 3})
				return
			}
			h(w, r)
		}
	})
	if _, err := stagePath(&Stager{Authority: liar}, p, ""); codeOf(err) != failure.TransferFailed {
		t.Fatalf("other digest at the authority: %v", err)
	}
	old := &serverAuthority{url: "http://127.0.0.1:1", hits: map[string]*atomic.Int64{}}
	if _, err := stagePath(&Stager{Authority: old}, p, ""); err == nil {
		t.Fatal("an unreachable authority staged")
	}
}
