package authority

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/sisyphus-go/sisyphus/internal/admission"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// ToolPermissions is the permission source of a process without
// per-principal permissions yet: everything is allowed, and the snapshot's
// version is a digest of the tool configuration (names, actions, schemas),
// so that a task result recorded under another configuration answers
// access_changed. Per-principal permissions plug in here, loaded per call
// when it starts executing.
func ToolPermissions(reg *tools.Registry) admission.Permissions {
	h := sha256.New()
	for _, t := range reg.Tools() {
		b, _ := json.Marshal(map[string]any{"name": t.Name, "actions": t.ActionNames(), "schema": t.InputSchema()})
		h.Write(b)
	}
	version := "tools:" + hex.EncodeToString(h.Sum(nil)[:8])
	return func(context.Context, string) (admission.Snapshot, error) {
		return admission.Snapshot{Version: version}, nil
	}
}
