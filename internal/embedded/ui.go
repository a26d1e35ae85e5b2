package embedded

import (
	"context"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
)

// uiRoutes are SiYuan's UI nudges. The embedded kernel has no windows to
// push to, so each only answers as SiYuan 3.7.3 does: code 0 at once, also
// for an unknown or missing id (SiYuan's handler panics on a missing id
// after its deferred reply is written, so the client still sees code 0);
// reloadProtyle and reloadAttributeView parse their body, reloadFiletree
// and reloadTag never read theirs.
func (k *Kernel) uiRoutes() map[string]route {
	nudge := func(context.Context, args) (any, error) { return nil, nil }
	return map[string]route{
		endpoint.ReloadProtyle:       {json: nudge},
		endpoint.ReloadAttributeView: {json: nudge},
		endpoint.ReloadFiletree:      {json: nudge, emptyOK: true, anyBody: true},
		endpoint.ReloadTag:           {json: nudge, emptyOK: true, anyBody: true},
	}
}
