package localfs

import (
	"context"
	"testing"
)

// BenchmarkOpen is the rule's cost on one upload's file: the decision as
// written and resolved, the opening and the checks of the opened file.
func BenchmarkOpen(b *testing.B) {
	tr := mkTree(b)
	g := tr.guard(b)
	ctx := context.Background()
	for b.Loop() {
		f, err := g.Open(ctx, "sub/b.txt")
		if err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}

// BenchmarkDestination is the rule's cost on one export's destination.
func BenchmarkDestination(b *testing.B) {
	tr := mkTree(b)
	g := tr.guard(b)
	ctx := context.Background()
	for b.Loop() {
		if _, err := g.Destination(ctx, "new/deeper/out.zip"); err != nil {
			b.Fatal(err)
		}
	}
}
