package authority

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/mascotstore"
	"github.com/sisyphus-go/sisyphus/internal/settings"
	"github.com/sisyphus-go/sisyphus/internal/tools/mascot"
)

// TestMascotAccounting: which calls the runner counts, and what its books
// hold of them.
func TestMascotAccounting(t *testing.T) {
	ctx := context.Background()
	_, c, svc := newAuthorityWith(t, nil)
	store := svc.Runner.Mascot
	for _, tc := range []struct {
		name, tool, args string
		earns            int64
		isError          bool
		line             string // the analytics line's tool/action/status/code, "" none
	}{
		{"a read earns", "system", `{"action":"get_version"}`, 1, false, "system get_version success "},
		{"upstream's spelling, under its declared name", "system", `{"action":"get-version"}`, 1, false, "system get_version success "},
		{"help earns", "block", `{"action":"help"}`, 1, false, "block help success "},
		{"a failed call earns nothing", "block", `{"action":"get_kramdown","id":"20990101000000-zzzzzzz"}`, 0, true, "block get_kramdown error not_found"},
		{"the mascot's own calls earn nothing", "mascot", `{"action":"get_balance"}`, 0, false, "mascot get_balance success "},
		{"an action no tool declares is not counted", "system", `{"action":"my secret note"}`, 0, true, ""},
		{"a tool that does not exist is not counted", "nosuch", `{"action":"x"}`, 0, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, err := store.Stats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			res, err := svc.Runner.Run(ctx, Call{Tool: tc.tool, Args: json.RawMessage(tc.args), Principal: "p", Caller: "c"})
			if err != nil || res.IsError != tc.isError {
				t.Fatalf("%v %+v", err, res)
			}
			after, err := store.Stats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if after.TotalCalls-before.TotalCalls != tc.earns || after.Balance-before.Balance != tc.earns {
				t.Fatalf("earned %d, want %d", after.TotalCalls-before.TotalCalls, tc.earns)
			}
			if err := store.Settle(ctx); err != nil {
				t.Fatal(err)
			}
			files := mascot.KernelFiles{Kernel: c}
			data, _, err := files.Read(ctx, mascotstore.AnalyticsPath)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(string(data)), "\n")
			var last mascotstore.Record
			json.Unmarshal([]byte(lines[len(lines)-1]), &last)
			got := last.Tool + " " + last.Action + " " + last.Status + " " + last.ErrorCode
			if tc.line != "" && got != tc.line {
				t.Fatalf("analytics line %q, want %q", got, tc.line)
			}
			if strings.Contains(string(data), "secret") || strings.Contains(string(data), "nosuch") {
				t.Fatalf("analytics hold a name no tool declares: %s", data)
			}
		})
	}

	// Switched off: nothing counted, nothing written.
	off := false
	if _, err := svc.Apply(ctx, PrincipalAdmin, settings.Change{Tool: "mascot", Enabled: &off}); err != nil {
		t.Fatal(err)
	}
	before := store.BalanceWrites()
	res, _ := svc.Runner.Run(ctx, Call{Tool: "system", Args: json.RawMessage(`{"action":"get_version"}`), Principal: "p", Caller: "c"})
	if res.IsError || store.BalanceWrites() != before {
		t.Fatalf("counted while off: %+v", res)
	}
}
