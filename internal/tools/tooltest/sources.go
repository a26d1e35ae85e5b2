package tooltest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"sync"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// MemSources are upload sources held in memory, as the authority's staging
// store holds them: Put stages bytes and returns their handle.
type MemSources struct {
	mu sync.Mutex
	m  map[string]tools.Source
	n  int
}

// Put stages data under name and returns its handle.
func (s *MemSources) Put(name string, data []byte) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]tools.Source{}
	}
	s.n++
	sum := sha256.Sum256(data)
	h := "staged:test-" + hex.EncodeToString(sum[:4]) + "-" + string(rune('a'+s.n%26))
	s.m[h] = tools.Source{Handle: h, Name: name, SHA256: hex.EncodeToString(sum[:]), Size: int64(len(data)),
		Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }}
	return h
}

// Forget drops a handle, as expiry does.
func (s *MemSources) Forget(handle string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, handle)
}

// Staged returns a staged source.
func (s *MemSources) Staged(handle string) (tools.Source, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	src, ok := s.m[handle]
	if !ok {
		return tools.Source{}, failure.New(failure.UploadSourceUnknown, "the uploadSource names no staged file").Attempted(false)
	}
	return src, nil
}
