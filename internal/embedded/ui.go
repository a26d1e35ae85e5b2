package embedded

import "context"

// uiRoutes are SiYuan's UI nudges. The embedded kernel has no windows to
// push to, so each only answers as SiYuan 3.7.3 does: code 0 at once, also
// for an unknown or missing id (SiYuan's handler panics on a missing id
// after its deferred reply is written, so the client still sees code 0);
// reloadProtyle and reloadAttributeView parse their body, reloadFiletree
// and reloadTag never read theirs.
func (k *Kernel) uiRoutes() map[string]route {
	nudge := func(context.Context, args) (any, error) { return nil, nil }
	return map[string]route{
		"/api/ui/reloadProtyle":       {json: nudge},
		"/api/ui/reloadAttributeView": {json: nudge},
		"/api/ui/reloadFiletree":      {json: nudge, emptyOK: true, anyBody: true},
		"/api/ui/reloadTag":           {json: nudge, emptyOK: true, anyBody: true},
	}
}
