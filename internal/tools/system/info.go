package system

import (
	"context"
	"strings"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// The small reads (versions, the kernel's clock, the proxy, the workspace
// location) and the sync trigger.

func versionAction(name, summary string) *tools.Action {
	return tools.Read[tools.NoArgs]{
		Name: name, Summary: summary,
		Scope: tools.Scope[tools.NoArgs]{None: true},
		Run: func(ctx context.Context, env *tools.Env, _ tools.NoArgs) (any, error) {
			v, err := env.Kernel.Version(ctx)
			if err != nil {
				return nil, err
			}
			return map[string]any{"version": v, "siyuan": v, "sisyphus": env.Version}, nil
		},
	}.Action()
}

var currentTime = tools.Read[tools.NoArgs]{
	Name: "get_current_time", Summary: "the SiYuan kernel's clock: milliseconds since the epoch and ISO 8601 (UTC)",
	Scope: tools.Scope[tools.NoArgs]{None: true},
	Run: func(ctx context.Context, env *tools.Env, _ tools.NoArgs) (any, error) {
		ms, err := env.Kernel.CurrentTime(ctx)
		if err != nil {
			return nil, err
		}
		return map[string]any{"currentTime": ms, "iso": time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")}, nil
	},
}

var network = tools.Read[tools.NoArgs]{
	Name: "network", Summary: "SiYuan's network proxy (scheme, host, port), with any credentials in it masked",
	Scope: tools.Scope[tools.NoArgs]{None: true},
	Run: func(ctx context.Context, env *tools.Env, _ tools.NoArgs) (any, error) {
		p, err := env.Kernel.GetNetwork(ctx)
		if err != nil {
			return nil, err
		}
		return networkAnswer(p), nil
	},
}

// networkAnswer masks the proxy: a host may carry user:password@.
func networkAnswer(p siyuan.NetworkProxy) map[string]any {
	host, redacted := maskHost(p.Host)
	return map[string]any{
		"proxy":      map[string]any{"scheme": p.Scheme, "host": host, "port": p.Port},
		"configured": p.Scheme != "" || p.Host != "",
		"redacted":   redacted,
	}
}

// maskHost removes the userinfo of a host ("user:pw@proxy" or a URL).
func maskHost(h string) (string, bool) {
	if i := strings.LastIndexByte(h, '@'); i >= 0 {
		return Redacted + h[i:], true
	}
	return RedactText(h)
}

var workspaceInfo = tools.Read[tools.NoArgs]{
	Name:    "workspace_info",
	Summary: "the absolute path of SiYuan's workspace on its machine, and SiYuan's version (dangerous: the path names the person's account; off by default)",
	Scope:   tools.Scope[tools.NoArgs]{None: true}, Dangerous: true, OffByDefault: true,
	Run: func(ctx context.Context, env *tools.Env, _ tools.NoArgs) (any, error) {
		w, err := env.Kernel.GetWorkspaceInfo(ctx)
		if err != nil {
			return nil, err
		}
		return map[string]any{"workspaceDir": w.WorkspaceDir, "siyuanVer": w.SiyuanVer}, nil
	},
}

// syncState is what the configuration says of sync before the trigger.
type syncState struct {
	Enabled  bool
	Provider string
	Stat     string
}

var performSync = tools.Write[tools.NoArgs, syncState]{
	Name: "perform_sync",
	Summary: "start SiYuan's cloud sync now (an external effect on the local and the remote data: sent once, no preflight, no strict guarantee; " +
		"dangerous: confirmed by the person)",
	Policy:    strict.WritePolicy{Class: strict.External},
	Dangerous: true,
	Example:   map[string]any{},
	Scope:     tools.Scope[tools.NoArgs]{None: true},
	// State reads whether sync is on, so that the answer can say a sync
	// with sync off did nothing (SiYuan answers success either way).
	State: func(ctx context.Context, env *tools.Env, _ tools.NoArgs) (syncState, error) {
		root, err := maskedConf(ctx, env)
		if err != nil {
			return syncState{}, err
		}
		conf, _ := root["conf"].(map[string]any)
		s, _ := conf["sync"].(map[string]any)
		st := syncState{}
		st.Enabled, _ = s["enabled"].(bool)
		st.Stat, _ = s["stat"].(string)
		if p, ok := s["provider"]; ok {
			st.Provider = providerName(p)
		}
		return st, nil
	},
	Execute: func(ctx context.Context, env *tools.Env, _ tools.NoArgs, st syncState) (tools.Payload, error) {
		if err := env.Kernel.PerformSync(ctx); err != nil {
			return nil, tools.WriteFailure(err, false)
		}
		p := tools.Payload{"requested": true, "syncEnabled": st.Enabled, "provider": st.Provider}
		if !st.Enabled {
			p["note"] = "sync is not enabled in SiYuan, so it did nothing (SiYuan answers success either way): " + st.Stat
		} else {
			// SiYuan's performSync runs the whole sync before it answers.
			p["note"] = "SiYuan ran the sync and answered when it ended; its outcome shows in SiYuan (a sync that outlasts this action's time in the write lane answers outcome_unknown while SiYuan goes on)"
		}
		return p, nil
	},
}

// providerName names conf.sync.provider (0 SiYuan cloud, 2 S3, 3 WebDAV,
// 4 local folder).
func providerName(v any) string {
	switch s := toString(v); s {
	case "0":
		return "siyuan"
	case "2":
		return "s3"
	case "3":
		return "webdav"
	case "4":
		return "local"
	default:
		return s
	}
}
