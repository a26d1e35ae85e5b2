package tools

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// UIRefresh is what a committed write asks SiYuan's open windows to show
// again: the editors of the documents holding Blocks (any block id: its
// document is found), the databases AVs, the document tree, the tag panel.
type UIRefresh struct {
	Blocks   []string
	AVs      []string
	Filetree bool
	Tags     bool
}

func (u UIRefresh) empty() bool {
	return len(u.Blocks) == 0 && len(u.AVs) == 0 && !u.Filetree && !u.Tags
}

// Caps on one batch of nudges: a write of many blocks reloads at most this
// many documents (the rest are shown at the editor's next load).
const (
	maxRefreshDocs = 32
	maxRefreshAVs  = 8
	// refreshTimeout bounds one batch: a kernel that does not answer only
	// delays the next batch.
	refreshTimeout = 10 * time.Second
)

// UIRefresher sends SiYuan's UI nudges (reloadProtyle, reloadFiletree,
// reloadTag, reloadAttributeView) after committed writes. It is outside the
// write guarantee: it runs after the answer, in the background, coalescing
// what writes asked for while a batch was running, and a failure is only
// logged. Most kernel writes already reach open editors through SiYuan's own
// transaction pushes; the nudges cover what does not (the file tree after a
// document change, references and embeds showing a changed block, a
// database's other views).
type UIRefresher struct {
	kernel *siyuan.Client
	log    *slog.Logger

	mu      sync.Mutex
	pending UIRefresh
	running bool
	idle    *sync.Cond
}

// NewUIRefresher returns a refresher sending to kernel; log may be nil.
func NewUIRefresher(kernel *siyuan.Client, log *slog.Logger) *UIRefresher {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	u := &UIRefresher{kernel: kernel, log: log}
	u.idle = sync.NewCond(&u.mu)
	return u
}

// Refresh queues r and returns at once.
func (u *UIRefresher) Refresh(r UIRefresh) {
	if u == nil || r.empty() {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.pending.Blocks = appendNew(u.pending.Blocks, r.Blocks)
	u.pending.AVs = appendNew(u.pending.AVs, r.AVs)
	u.pending.Filetree = u.pending.Filetree || r.Filetree
	u.pending.Tags = u.pending.Tags || r.Tags
	if !u.running {
		u.running = true
		go u.run()
	}
}

// Wait returns once nothing is queued or being sent (tests, shutdown), or
// when ctx ends.
func (u *UIRefresher) Wait(ctx context.Context) {
	if u == nil {
		return
	}
	done := make(chan struct{})
	go func() {
		u.mu.Lock()
		for u.running {
			u.idle.Wait()
		}
		u.mu.Unlock()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// run sends batches until nothing is pending: one goroutine at most, and
// none while idle.
func (u *UIRefresher) run() {
	for {
		u.mu.Lock()
		batch := u.pending
		u.pending = UIRefresh{}
		if batch.empty() {
			u.running = false
			u.idle.Broadcast()
			u.mu.Unlock()
			return
		}
		u.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), refreshTimeout)
		u.send(ctx, batch)
		cancel()
	}
}

func (u *UIRefresher) send(ctx context.Context, b UIRefresh) {
	var docs []string
	for _, id := range b.Blocks {
		if len(docs) == maxRefreshDocs {
			break
		}
		if root := u.rootOf(ctx, id); root != "" && !slices.Contains(docs, root) {
			docs = append(docs, root)
		}
	}
	for _, d := range docs {
		u.note("reloadProtyle", u.kernel.ReloadProtyle(ctx, d))
	}
	for i, av := range b.AVs {
		if i == maxRefreshAVs {
			break
		}
		u.note("reloadAttributeView", u.kernel.ReloadAttributeView(ctx, av))
	}
	if b.Filetree {
		u.note("reloadFiletree", u.kernel.ReloadFiletree(ctx))
	}
	if b.Tags {
		u.note("reloadTag", u.kernel.ReloadTag(ctx))
	}
}

// rootOf is the document holding block id, from the block tree (a removed
// block has none: nothing to reload).
func (u *UIRefresher) rootOf(ctx context.Context, id string) string {
	loc, err := u.kernel.GetPathByID(ctx, id)
	if err != nil || loc.Path == "" {
		return ""
	}
	root := siyuan.DocIDOfPath(loc.Path)
	if CheckID("id", root) != nil {
		return ""
	}
	return root
}

func (u *UIRefresher) note(what string, err error) {
	if err != nil {
		u.log.Debug("ui refresh failed (the write is committed)", "call", what, "err", err)
	}
}

func appendNew(dst, src []string) []string {
	for _, s := range src {
		if s != "" && !slices.Contains(dst, s) {
			dst = append(dst, s)
		}
	}
	return dst
}

// refreshOf is what a committed call asks to show: the blocks it touched
// (and the one it made), the database it changed, the tree when documents
// or notebooks changed, the tags.
func refreshOf(tool string, touches []Touch, business, result map[string]any) UIRefresh {
	var r UIRefresh
	for _, t := range touches {
		if t.Block != "" {
			r.Blocks = appendNew(r.Blocks, []string{t.Block})
		}
	}
	for _, k := range []string{"id", "rootID"} {
		if s, ok := result[k].(string); ok && CheckID(k, s) == nil {
			r.Blocks = appendNew(r.Blocks, []string{s})
		}
	}
	switch tool {
	case "notebook", "document", "fs":
		r.Filetree = true
	case "tag":
		r.Tags = true
	case "av":
		for _, k := range []string{"avID", "id"} {
			if s, ok := business[k].(string); ok && CheckID(k, s) == nil {
				r.AVs = appendNew(r.AVs, []string{s})
			}
		}
	}
	return r
}
