package siyuan

import (
	"context"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
)

// The UI nudges: SiYuan 3.7.3 queues a push to every open window about
// 200 ms later and answers at once. None changes data; each answers code 0
// even for an id it does not know.

// ReloadProtyle asks open editors of the document rootID (and documents
// embedding or referencing it) to reload.
func (c *Client) ReloadProtyle(ctx context.Context, rootID string) error {
	if err := need(endpoint.ReloadProtyle, "id", rootID); err != nil {
		return err
	}
	return c.invoke(ctx, endpoint.ReloadProtyle, idArg{rootID}, nil)
}

// ReloadFiletree asks the document trees to reload.
func (c *Client) ReloadFiletree(ctx context.Context) error {
	return c.invoke(ctx, endpoint.ReloadFiletree, struct{}{}, nil)
}

// ReloadTag asks the tag panels to reload.
func (c *Client) ReloadTag(ctx context.Context) error {
	return c.invoke(ctx, endpoint.ReloadTag, struct{}{}, nil)
}

// ReloadAttributeView asks open editors showing the database avID to
// render it again.
func (c *Client) ReloadAttributeView(ctx context.Context, avID string) error {
	if err := need(endpoint.ReloadAttributeView, "id", avID); err != nil {
		return err
	}
	return c.invoke(ctx, endpoint.ReloadAttributeView, idArg{avID}, nil)
}
