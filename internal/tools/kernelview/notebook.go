package kernelview

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// ConfState is a notebook's conf without the opaque encryption parameters
// (never changed by Sisyphus), as states hash it.
func ConfState(c siyuan.BoxConf) siyuan.BoxConf {
	c.BoxCrypt = nil
	return c
}

// NotebookState is the guarded state of a notebook: its lsNotebooks entry
// (without the flashcard counts, which change with the clock) and its
// configuration.
type NotebookState struct {
	ID      string           `json:"id"`
	Missing bool             `json:"missing,omitempty"`
	Entry   *siyuan.Notebook `json:"entry,omitempty"`
	// Conf is the configuration as SiYuan holds it: what a write that
	// changes a field sends back whole. It is not hashed.
	Conf *siyuan.BoxConf `json:"-"`
	// Shown is Conf as the call may see it (tools.VeilBoxConf), what the
	// state's digest covers: a save box in a hidden notebook (and its
	// path of that notebook's titles) neither shows in the hash nor moves
	// it.
	Shown *siyuan.BoxConf `json:"conf,omitempty"`
}

// ReadNotebookState reads a notebook's entry and conf concurrently. A
// notebook absent from a successful lsNotebooks is {missing:true}; any
// failed read fails the state.
func ReadNotebookState(ctx context.Context, env *tools.Env, id string) (NotebookState, error) {
	var (
		wg          sync.WaitGroup
		nbs         []siyuan.Notebook
		conf        siyuan.NotebookConf
		lErr, cErr  error
		confMissing bool
	)
	wg.Add(2)
	go func() { defer wg.Done(); defer failure.Recover(&lErr); nbs, lErr = env.Kernel.ListNotebooks(ctx) }()
	go func() {
		defer wg.Done()
		defer failure.Recover(&cErr)
		conf, cErr = env.Kernel.GetNotebookConf(ctx, id)
		if IsNotebookNotFound(cErr) {
			confMissing, cErr = true, nil
		}
	}()
	wg.Wait()
	if lErr != nil {
		return NotebookState{}, lErr
	}
	var entry *siyuan.Notebook
	for _, n := range nbs {
		if n.ID == id {
			n.NewFlashcardCount, n.DueFlashcardCount, n.FlashcardCount = 0, 0, 0
			entry = &n
		}
	}
	if entry == nil {
		return NotebookState{ID: id, Missing: true}, nil
	}
	if cErr != nil {
		return NotebookState{}, cErr
	}
	if confMissing {
		return NotebookState{}, fmt.Errorf("notebook %s is listed but its conf is not found", id)
	}
	c := ConfState(conf.Conf)
	shown := tools.VeilBoxConf(ctx, c)
	return NotebookState{ID: id, Entry: entry, Conf: &c, Shown: &shown}, nil
}

// IsNotebookNotFound tells the kernel's "notebook not found" answer.
func IsNotebookNotFound(err error) bool {
	var api *siyuan.APIError
	return errors.As(err, &api) && strings.Contains(api.Msg, "not found")
}

// NotebookErr turns the kernel's "notebook not found" into not_found.
func NotebookErr(id string, err error) error {
	if IsNotebookNotFound(err) {
		return failure.Missing("notebook", id)
	}
	return err
}
