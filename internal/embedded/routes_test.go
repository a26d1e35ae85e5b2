package embedded

import (
	"slices"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
)

// TestRoutesAreTheEndpointTable: the kernel serves exactly the endpoints
// of the one endpoint table the client calls by, and serialises exactly
// those the table classes as writes.
func TestRoutesAreTheEndpointTable(t *testing.T) {
	routes := (&Kernel{}).allRoutes()
	table := endpoint.Paths()
	for _, p := range table {
		if _, ok := routes[p]; !ok {
			t.Errorf("%s is in the endpoint table but the embedded kernel does not serve it", p)
		}
	}
	for p, rt := range routes {
		c, ok := endpoint.ClassOf(p)
		if !ok || !slices.Contains(table, p) {
			t.Errorf("the embedded kernel serves %s, which is not in the endpoint table", p)
			continue
		}
		if rt.write != (c == endpoint.Write) {
			t.Errorf("%s: serialised as a write = %v, but its class is %s", p, rt.write, c)
		}
		if (rt.json == nil) == (rt.raw == nil) {
			t.Errorf("%s: a route has exactly one of a JSON and a raw handler", p)
		}
	}
}
