package embedded

import (
	"context"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/mdexport"
)

// spinBlockDOM is SiYuan's /api/lute/spinBlockDOM: the DOM parsed and
// rendered again by a Lute engine configured as the kernel's (an updated
// stamp from the block ID, the editor's attributes); what Lute cannot
// parse as a block becomes a paragraph of its text. Served with the
// databases: a new database block's DOM is spun before it is inserted.
func (k *Kernel) spinBlockDOM(ctx context.Context, a args) (any, error) {
	dom, err := a.field("dom", false)
	if err != nil {
		return nil, err
	}
	return map[string]any{"dom": mdexport.NewLute().SpinBlockDOM(dom)}, nil
}
