package siyuan

import (
	"context"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
)

// SpinBlockDOM returns a block's DOM as SiYuan's editor would hold it:
// parsed and rendered again by the kernel's Lute engine (attributes
// ordered, contenteditable, the protyle-attr part, an updated stamp
// taken from the block ID). Upstream Sisyphus inserts a new database
// block's DOM spun this way, so the editor can render the transaction it
// is sent. A DOM Lute cannot parse spins to "".
func (c *Client) SpinBlockDOM(ctx context.Context, dom string) (string, error) {
	var out struct {
		DOM string `json:"dom"`
	}
	err := c.invoke(ctx, endpoint.SpinBlockDOM, struct {
		DOM string `json:"dom"`
	}{dom}, &out)
	return out.DOM, err
}
