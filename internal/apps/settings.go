package apps

// Switch is one App's entry in mcpToolsConfig.mcpApps: {enabled, actions}
// (package settings reads it). Enabled is nil and an action absent when
// the configuration does not set them: then they are on (upstream's
// default).
type Switch struct {
	Enabled *bool
	Actions map[string]bool
}

// Settings are the Apps' switches by key.
type Settings map[string]Switch

// On reports whether the App is switched on.
func (s Settings) On(key string) bool {
	sw, ok := s[key]
	return !ok || sw.Enabled == nil || *sw.Enabled
}

// ActionOn reports whether the App and its action are switched on.
func (s Settings) ActionOn(key, action string) bool {
	return s.On(key) && s.ActionSwitch(key, action)
}

// ActionSwitch is the action's own switch, whatever the App's says (what
// a person sees beside the App's switch).
func (s Settings) ActionSwitch(key, action string) bool {
	v, ok := s[key].Actions[action]
	return !ok || v
}

// Enabled lists a's actions that are switched on, in a's order.
func (s Settings) Enabled(a App) []string {
	out := []string{}
	for _, act := range a.Actions {
		if s.ActionOn(a.Key, act) {
			out = append(out, act)
		}
	}
	return out
}
