package authority

import (
	"context"
	"crypto/subtle"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/mcp"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// PluginPrefix is the route prefix of the upstream plugin; clients written
// against it reach the same endpoints.
const PluginPrefix = "/plugin/private/siyuan-plugins-mcp-sisyphus"

// Instructions tell the model how to use the server.
const Instructions = `Sisyphus serves a SiYuan notes workspace. Start with system {"action":"bootstrap"}.
Every tool takes an "action"; {"action":"help"} lists a tool's actions and their arguments.
Read documents with document get_doc (windows of whole blocks); find things with search.
Writes Sisyphus owns are strict: preflight with validateOnly:true, then commit with the returned
requestId and credential, copied unchanged. Never invent hashes or request ids.`

// NewMCPServer returns an MCP server exposing every tool of reg.
func NewMCPServer(reg *tools.Registry, version string, log *slog.Logger) *mcp.Server {
	s := mcp.NewServer(mcp.Options{
		Name: "sisyphus", Title: "Sisyphus for SiYuan", Version: version,
		Instructions: Instructions, Logger: log,
	})
	for _, t := range reg.Tools() {
		s.AddTool(mcpTool(reg, t))
	}
	return s
}

func mcpTool(reg *tools.Registry, t *tools.Tool) mcp.Tool {
	ro := t.ReadOnly()
	ann := &mcp.ToolAnnotations{Title: t.Title, ReadOnlyHint: mcp.Bool(ro), OpenWorldHint: mcp.Bool(false),
		DestructiveHint: mcp.Bool(t.Destructive()),
		// Reads repeat freely; strict writes are idempotent per requestId.
		IdempotentHint: mcp.Bool(true)}
	name := t.Name
	return mcp.Tool{
		Name: name, Title: t.Title, Description: t.Description,
		InputSchema: t.InputSchema(), Annotations: ann,
		Handler: func(ctx context.Context, req *mcp.CallRequest) (*mcp.CallResult, error) {
			v, err := reg.Call(ctx, name, req.Arguments)
			if err != nil {
				var te *tools.Error
				if !errors.As(err, &te) {
					te = &tools.Error{Code: "internal_error", Message: "internal error", Cause: err}
				}
				return mcp.ErrorResult(te.Result()), nil
			}
			return mcp.StructuredResult(v), nil
		},
	}
}

// HTTPConfig configures the authority's HTTP routes.
type HTTPConfig struct {
	// Token is the bearer token every request must carry.
	Token string
	// AllowedOrigins and AllowedHosts are passed to the MCP endpoint.
	AllowedOrigins, AllowedHosts []string
	Logger                       *slog.Logger
}

// Handler serves /mcp (and the same under PluginPrefix) behind the bearer token.
func Handler(srv *mcp.Server, cfg HTTPConfig) http.Handler {
	auth := func(r *http.Request) (string, bool) {
		h := r.Header.Get("Authorization")
		tok, ok := strings.CutPrefix(h, "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(cfg.Token)) != 1 {
			return "", false
		}
		// One principal per token; sessions, streams and request states are bound to it.
		return "bearer", true
	}
	mcpH := srv.HTTPHandler(mcp.HTTPOptions{Authenticate: auth, AllowedOrigins: cfg.AllowedOrigins, AllowedHosts: cfg.AllowedHosts})
	mux := http.NewServeMux()
	for _, prefix := range []string{"", PluginPrefix} {
		mux.Handle(prefix+"/mcp", mcpH)
	}
	return mux
}
