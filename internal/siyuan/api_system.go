package siyuan

import (
	"context"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
)

// invoke calls a JSON endpoint with its registered kind. A nil out means the
// endpoint answers data:null on success.
func (c *Client) invoke(ctx context.Context, endpoint string, req, out any) error {
	return c.call(ctx, endpoint, kindOf(endpoint), req, out, false)
}

// need rejects empty required string arguments locally (name, value pairs).
// The kernel would either reject them or, worse, panic into {code:0,data:null}.
func need(endpoint string, nameValues ...string) error {
	for i := 0; i+1 < len(nameValues); i += 2 {
		if strings.TrimSpace(nameValues[i+1]) == "" {
			return invalidArg(endpoint, "%s must not be empty", nameValues[i])
		}
	}
	return nil
}

// needIDs rejects an empty ID list or an empty element.
func needIDs(endpoint, name string, ids []string) error {
	if len(ids) == 0 {
		return invalidArg(endpoint, "%s must not be empty", name)
	}
	for i, id := range ids {
		if strings.TrimSpace(id) == "" {
			return invalidArg(endpoint, "%s[%d] must not be empty", name, i)
		}
	}
	return nil
}

// Version returns the kernel version, e.g. "3.7.3". It needs no token.
func (c *Client) Version(ctx context.Context) (string, error) {
	var v string
	err := c.invoke(ctx, endpoint.Version, nil, &v)
	return v, err
}

// BootProgress reports how far the kernel has booted. It needs no token.
func (c *Client) BootProgress(ctx context.Context) (BootProgress, error) {
	var p BootProgress
	err := c.invoke(ctx, endpoint.BootProgress, nil, &p)
	return p, err
}

// CurrentTime returns the kernel's clock in milliseconds since the epoch.
func (c *Client) CurrentTime(ctx context.Context) (int64, error) {
	var ms int64
	err := c.invoke(ctx, endpoint.CurrentTime, nil, &ms)
	return ms, err
}
