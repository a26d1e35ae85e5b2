package authority

import (
	"context"

	"github.com/sisyphus-go/sisyphus/internal/admission"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// ConfigPermissions loads, when a call starts executing, the configuration
// it runs under (notebook permissions, tool switches, strict mode): a
// change applies to the next call, and a task result recorded under another
// configuration answers access_changed.
func ConfigPermissions(load func(context.Context) (*tools.Policy, error)) admission.Permissions {
	return func(ctx context.Context, _ string) (admission.Snapshot, error) {
		p, err := load(ctx)
		if err != nil {
			return admission.Snapshot{}, err
		}
		return admission.Snapshot{Version: p.Version, Policy: p}, nil
	}
}
