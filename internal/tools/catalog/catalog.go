// Package catalog is the one place that lists every tool Sisyphus serves.
package catalog

import (
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/av"
	"github.com/sisyphus-go/sisyphus/internal/tools/block"
	"github.com/sisyphus-go/sisyphus/internal/tools/document"
	"github.com/sisyphus-go/sisyphus/internal/tools/extension"
	"github.com/sisyphus-go/sisyphus/internal/tools/feedback"
	"github.com/sisyphus-go/sisyphus/internal/tools/file"
	"github.com/sisyphus-go/sisyphus/internal/tools/flashcard"
	"github.com/sisyphus-go/sisyphus/internal/tools/fs"
	"github.com/sisyphus-go/sisyphus/internal/tools/mascot"
	"github.com/sisyphus-go/sisyphus/internal/tools/notebook"
	"github.com/sisyphus-go/sisyphus/internal/tools/search"
	"github.com/sisyphus-go/sisyphus/internal/tools/system"
	"github.com/sisyphus-go/sisyphus/internal/tools/tag"
	"github.com/sisyphus-go/sisyphus/internal/tools/timeline"
)

// All returns every tool, in the order tools/list shows them. Each call
// builds new values: a registry owns its tools.
func All() []*tools.Tool {
	return []*tools.Tool{
		notebook.Tool(),
		document.Tool(),
		block.Tool(),
		search.Tool(),
		system.Tool(),
		fs.Tool(),
		file.Tool(),
		av.Tool(),
		tag.Tool(),
		timeline.Tool(),
		flashcard.Tool(),
		extension.Tool(),
		feedback.Tool(),
		mascot.Tool(),
	}
}

// NewRegistry returns the registry of every tool bound to env.
func NewRegistry(env *tools.Env) (*tools.Registry, error) {
	return tools.NewRegistry(env, All()...)
}
