package siyuan

import "github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"

// kindOf is the kind of a call to an endpoint, from its class in the one
// endpoint table: reads are retried on transient failures; writes, notices
// and anything not in the table are attempted exactly once (the safe
// default).
func kindOf(path string) CallKind {
	if c, _ := endpoint.ClassOf(path); c == endpoint.Read {
		return Read
	}
	return Write
}
