package notebook

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

func TestNotebookReads(t *testing.T) {
	f := tooltest.New(t, testTools)
	list := f.OK(t, "notebook", map[string]any{"action": "list"})
	if list["total"].(float64) != 2 {
		t.Fatalf("notebooks: %v", list)
	}
	conf := f.OK(t, "notebook", map[string]any{"action": "get_conf", "notebook": f.NB})
	if conf["name"] != "Tools" {
		t.Fatalf("conf: %v", conf)
	}
}

func TestKernelFailures(t *testing.T) {
	f := tooltest.New(t, testTools)
	bad, _ := siyuan.New(siyuan.Config{BaseURL: "http://127.0.0.1:1", ReadAttempts: 1})
	r, _ := tools.NewRegistry(&tools.Env{Kernel: bad}, testTools()...)
	_, err := r.Call(context.Background(), "notebook", json.RawMessage(`{"action":"list"}`))
	var te *failure.Error
	if !errors.As(err, &te) || te.Code != failure.KernelUnreachable {
		t.Fatalf("unreachable kernel: %v", err)
	}
	wrong, _ := siyuan.New(siyuan.Config{BaseURL: f.C.BaseURL(), Token: "wrong"})
	r, _ = tools.NewRegistry(&tools.Env{Kernel: wrong}, testTools()...)
	_, err = r.Call(context.Background(), "notebook", json.RawMessage(`{"action":"list"}`))
	if !errors.As(err, &te) || te.Code != failure.KernelAuth || errors.Unwrap(te) == nil {
		t.Fatalf("wrong token: %v", err)
	}
}
