package siyuan

import (
	"context"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
)

// QuerySQL runs one read-only statement (SELECT or WITH) against the SQL
// index and returns its rows. It sends mode "readonly" so the kernel refuses
// anything else, which is what makes retrying it safe. The index lags writes
// by up to ~3 s: call FlushTransaction first when freshness matters. The
// kernel adds LIMIT 64 when the statement has none, so give your own.
func (c *Client) QuerySQL(ctx context.Context, stmt string) ([]map[string]any, error) {
	rows, err := c.querySQL(ctx, stmt)
	if err == nil && rows == nil {
		// data:null is a legitimate "no rows" on some kernel paths (and a few
		// failing statements are also reported that way), so it is not an error.
		rows = []map[string]any{}
	}
	return rows, err
}

// querySQL sends stmt in readonly mode; a data:null answer is nil rows.
func (c *Client) querySQL(ctx context.Context, stmt string) ([]map[string]any, error) {
	if err := need(endpoint.QuerySQL, "stmt", stmt); err != nil {
		return nil, err
	}
	req := struct {
		Stmt string `json:"stmt"`
		Mode string `json:"mode"`
	}{stmt, "readonly"}
	var rows []map[string]any
	if err := c.call(ctx, endpoint.QuerySQL, kindOf(endpoint.QuerySQL), req, &rows, true); err != nil {
		return nil, err
	}
	return rows, nil
}

// QuerySQLStrict is QuerySQL for answers something is decided on (which
// notebooks a call touches): SiYuan 3.7.3 answers data:null, not an error,
// to a statement it cannot run (any ESCAPE clause, for one), while a query
// that matches nothing answers []; null is refused here, never read as no rows.
func (c *Client) QuerySQLStrict(ctx context.Context, stmt string) ([]map[string]any, error) {
	rows, err := c.querySQL(ctx, stmt)
	if err == nil && rows == nil {
		return nil, &APIError{Endpoint: endpoint.QuerySQL, Code: 0, Msg: "the kernel answered data:null: it could not run the statement"}
	}
	return rows, err
}

// FlushTransaction waits for the kernel's transaction queue to drain and
// flushes the SQL index, so that QuerySQL and FullTextSearchBlock see
// earlier writes. It only waits, so it is classified as a read and retried.
func (c *Client) FlushTransaction(ctx context.Context) error {
	return c.invoke(ctx, endpoint.FlushTransaction, nil, nil)
}

// FullTextSearchBlock searches blocks (from the lagging SQL index). With
// Method 2 the query is a raw SQL statement that the kernel does not check
// for read-only-ness, so that form is attempted once like a write.
func (c *Client) FullTextSearchBlock(ctx context.Context, req FullTextSearchRequest) (FullTextSearchResult, error) {
	var res FullTextSearchResult
	kind := kindOf(endpoint.FullTextSearchBlock)
	if req.Method == 2 {
		kind = Write
	}
	if err := c.call(ctx, endpoint.FullTextSearchBlock, kind, req, &res, false); err != nil {
		return FullTextSearchResult{}, err
	}
	if res.Blocks == nil {
		res.Blocks = []Block{}
	}
	return res, nil
}
