package system

import (
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

func TestExternalNotify(t *testing.T) {
	s := newStrictFixture(t, false)
	args := map[string]any{"action": "notify", "msg": "hello from an agent"}
	if e := s.WantErr(t, "system", tooltest.CopyArgs(args, "validateOnly", true), failure.PreflightUnavailable); *e.WriteAttempted {
		t.Fatal("a refused preflight attempted a write")
	}
	if n := len(s.K.Messages()); n != 0 {
		t.Fatalf("a refused preflight pushed %d messages", n)
	}
	res := s.OK(t, "system", args)
	if res["writeSafetyGuaranteed"] != false || res["writeAttempted"] != true || res["id"] == "" {
		t.Fatalf("notify: %v", res)
	}
	if msgs := s.K.Messages(); len(msgs) != 1 || msgs[0].Text != "hello from an agent" {
		t.Fatalf("messages: %+v", msgs)
	}
	if _, ok := tooltest.Schema(t, s.R, "system")["properties"].(map[string]any)["validateOnly"]; ok {
		t.Fatal("an external action must not advertise validateOnly")
	}
}

func testTools() []*tools.Tool { return []*tools.Tool{Tool()} }

// sfix is a strict fixture with this package's helpers.
type sfix struct{ *tooltest.Fixture }

func newStrictFixture(t *testing.T, strictOff bool) *sfix {
	return &sfix{tooltest.NewStrict(t, strictOff, testTools)}
}
