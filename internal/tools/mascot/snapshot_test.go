package mascot

import (
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

func TestToolSnapshot(t *testing.T) { tooltest.Snapshot(t, Tool()) }
