package siyuan

import "context"

// The UI nudges: SiYuan 3.7.3 queues a push to every open window about
// 200 ms later and answers at once. None changes data; each answers code 0
// even for an id it does not know.

// ReloadProtyle asks open editors of the document rootID (and documents
// embedding or referencing it) to reload.
func (c *Client) ReloadProtyle(ctx context.Context, rootID string) error {
	if err := need(epReloadProtyle, "id", rootID); err != nil {
		return err
	}
	return c.invoke(ctx, epReloadProtyle, idArg{rootID}, nil)
}

// ReloadFiletree asks the document trees to reload.
func (c *Client) ReloadFiletree(ctx context.Context) error {
	return c.invoke(ctx, epReloadFiletree, struct{}{}, nil)
}

// ReloadTag asks the tag panels to reload.
func (c *Client) ReloadTag(ctx context.Context) error {
	return c.invoke(ctx, epReloadTag, struct{}{}, nil)
}

// ReloadAttributeView asks open editors showing the database avID to
// render it again.
func (c *Client) ReloadAttributeView(ctx context.Context, avID string) error {
	if err := need(epReloadAttributeView, "id", avID); err != nil {
		return err
	}
	return c.invoke(ctx, epReloadAttributeView, idArg{avID}, nil)
}
