package siyuan

import (
	"context"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
)

type pushMsgReq struct {
	Msg     string `json:"msg"`
	Timeout int    `json:"timeout,omitempty"`
}

// PushMsg shows a message in every open SiYuan UI and returns its ID.
// timeoutMs <= 0 uses the kernel default (7000 ms). Attempted once: a
// repeated notification would be visible.
func (c *Client) PushMsg(ctx context.Context, msg string, timeoutMs int) (string, error) {
	return c.push(ctx, endpoint.PushMsg, msg, timeoutMs)
}

// PushErrMsg is PushMsg styled as an error.
func (c *Client) PushErrMsg(ctx context.Context, msg string, timeoutMs int) (string, error) {
	return c.push(ctx, endpoint.PushErrMsg, msg, timeoutMs)
}

func (c *Client) push(ctx context.Context, ep, msg string, timeoutMs int) (string, error) {
	if err := need(ep, "msg", msg); err != nil {
		return "", err
	}
	var data struct {
		ID string `json:"id"`
	}
	err := c.invoke(ctx, ep, pushMsgReq{Msg: msg, Timeout: max(timeoutMs, 0)}, &data)
	return data.ID, err
}

// Transactions submits raw transactions and returns them as executed (IDs
// filled in). The request's reqId, which the kernel requires and uses as the
// transactions' timestamp and queue order, is the current time in ms. Prefer
// the typed block methods: failures inside the queue are not reported here,
// and some make the kernel exit.
func (c *Client) Transactions(ctx context.Context, txs []Transaction) ([]Transaction, error) {
	if len(txs) == 0 {
		return nil, invalidArg(endpoint.Transactions, "at least one transaction is required")
	}
	req := struct {
		Transactions []Transaction `json:"transactions"`
		ReqID        int64         `json:"reqId"`
	}{txs, time.Now().UnixMilli()}
	var out []Transaction
	if err := c.invoke(ctx, endpoint.Transactions, req, &out); err != nil {
		return nil, err
	}
	return out, nil
}
