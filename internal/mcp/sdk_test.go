package mcp

import (
	"context"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The go-sdk client is an independent implementation: these tests drive the
// server with it pinned to each era, over real HTTP and over stdio.

type sdkObserved struct {
	elicitations atomic.Int32
	toolChanges  atomic.Int32
	progress     atomic.Int32
	logs         atomic.Int32
}

func sdkClient(obs *sdkObserved, action string) *sdk.Client {
	return sdk.NewClient(&sdk.Implementation{Name: "go-sdk-test", Version: "1.0.0"}, &sdk.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			obs.elicitations.Add(1)
			if action != "accept" {
				return &sdk.ElicitResult{Action: action}, nil
			}
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
		},
		ToolListChangedHandler:      func(context.Context, *sdk.ToolListChangedRequest) { obs.toolChanges.Add(1) },
		ProgressNotificationHandler: func(context.Context, *sdk.ProgressNotificationClientRequest) { obs.progress.Add(1) },
		//lint:ignore SA1019 the 2025-11-25 era still has logging and the server serves it; a legacy client must receive it
		LoggingMessageHandler: func(context.Context, *sdk.LoggingMessageRequest) { obs.logs.Add(1) },
	})
}

func sdkText(t *testing.T, res *sdk.CallToolResult) string {
	t.Helper()
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// exerciseSDK runs the same checks in either era.
func exerciseSDK(t *testing.T, s *Server, cs *sdk.ClientSession, obs *sdkObserved, wantEra string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	if len(tools.Tools) < 5 {
		t.Fatalf("tools: %d", len(tools.Tools))
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil {
		t.Fatalf("echo: %v", err)
	}
	sc, _ := res.StructuredContent.(map[string]any)
	if sc["era"] != wantEra {
		t.Fatalf("era = %v, want %s (%s)", sc["era"], wantEra, sdkText(t, res))
	}

	// Elicitation: a real elicitation/create (legacy) or an MRTR round trip
	// (modern), answered by the client's handler either way.
	before := obs.elicitations.Load()
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "confirm", Arguments: map[string]any{"target": "x"}})
	if err != nil {
		t.Fatalf("confirm: %v", err)
	}
	if sc, _ := res.StructuredContent.(map[string]any); sc["action"] != "accept" || obs.elicitations.Load() != before+1 {
		t.Fatalf("confirm: %s (elicitations %d)", sdkText(t, res), obs.elicitations.Load()-before)
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "twostep"})
	if err != nil || sdkText(t, res) != "accept+accept" {
		t.Fatalf("twostep: %v %v", err, res)
	}

	// Tool errors and protocol errors.
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "fail"})
	if err != nil || !res.IsError {
		t.Fatalf("fail: %v %+v", err, res)
	}
	if _, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "no_such_tool"}); err == nil {
		t.Fatal("unknown tool must be an error")
	}

	// Progress notifications reach the client.
	if _, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "progress", Meta: sdk.Meta{"progressToken": "p1"}}); err != nil {
		t.Fatalf("progress: %v", err)
	}
	waitUntil(t, func() bool { return obs.progress.Load() >= 3 }, "progress notifications")
}

func waitUntil(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestSDKClientHTTPLegacy(t *testing.T) {
	g := newGate()
	s := testServer(t, g)
	ts := newHTTPTest(t, s, HTTPOptions{StreamPollInterval: 50 * time.Millisecond})
	obs := &sdkObserved{}
	ctx := context.Background()
	cs, err := sdkClient(obs, "accept").Connect(ctx, &sdk.StreamableClientTransport{Endpoint: ts.URL, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2025-11-25" {
		t.Fatalf("negotiated %s", v)
	}
	if cs.ID() == "" {
		t.Fatal("legacy session without id")
	}
	exerciseSDK(t, s, cs, obs, "legacy")

	// Logging after setLevel.
	//lint:ignore SA1019 logging/setLevel is a 2025-11-25 method the legacy endpoint serves; this is its test
	if err := cs.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "progress"}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, func() bool { return obs.logs.Load() >= 1 }, "log message")

	// The standalone GET stream delivers list changes.
	waitUntil(t, func() bool { return obs.toolChanges.Load() >= 1 }, "initial tools/list_changed")
	n := obs.toolChanges.Load()
	s.AddTool(Tool{Name: "added_later", Handler: func(ctx context.Context, req *CallRequest) (*CallResult, error) { return nil, nil }})
	waitUntil(t, func() bool { return obs.toolChanges.Load() > n }, "tools/list_changed after AddTool")

	// Cancelling the client context sends notifications/cancelled.
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(cctx, &sdk.CallToolParams{Name: "slow"})
		done <- err
	}()
	waitFor(t, g.started, "slow start")
	cancel()
	waitFor(t, g.cancelled, "server-side cancellation")
	<-done
}

func TestSDKClientHTTPModern(t *testing.T) {
	g := newGate()
	s := testServer(t, g)
	ts := newHTTPTest(t, s, HTTPOptions{})
	obs := &sdkObserved{}
	ctx := context.Background()
	cs, err := sdkClient(obs, "accept").Connect(ctx, &sdk.StreamableClientTransport{Endpoint: ts.URL, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: ModernProtocolVersion})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "" && v != ModernProtocolVersion {
		t.Fatalf("negotiated %s", v)
	}
	exerciseSDK(t, s, cs, obs, "modern")

	// subscriptions/listen delivers list changes.
	waitUntil(t, func() bool { return s.hub.count() > 0 }, "listen stream")
	n := obs.toolChanges.Load()
	s.AddTool(Tool{Name: "added_later", Handler: func(ctx context.Context, req *CallRequest) (*CallResult, error) { return nil, nil }})
	waitUntil(t, func() bool { return obs.toolChanges.Load() > n }, "tools/list_changed on the listen stream")

	// Cancelling the client context closes the request: the handler stops.
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(cctx, &sdk.CallToolParams{Name: "slow"})
		done <- err
	}()
	waitFor(t, g.started, "slow start")
	cancel()
	waitFor(t, g.cancelled, "server-side cancellation")
	<-done
}

func TestSDKClientStdio(t *testing.T) {
	for _, tc := range []struct {
		version, era string
	}{{"2025-11-25", "legacy"}, {ModernProtocolVersion, "modern"}} {
		t.Run(tc.era, func(t *testing.T) {
			s := testServer(t, nil)
			cToSR, cToSW := io.Pipe()
			sToCR, sToCW := io.Pipe()
			served := make(chan error, 1)
			go func() {
				served <- s.ServeStdio(context.Background(), cToSR, sToCW)
				sToCW.Close()
			}()
			obs := &sdkObserved{}
			cs, err := sdkClient(obs, "accept").Connect(context.Background(), &sdk.IOTransport{Reader: sToCR, Writer: cToSW}, &sdk.ClientSessionOptions{ProtocolVersion: tc.version})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			exerciseSDK(t, s, cs, obs, tc.era)
			cs.Close()
			select {
			case err := <-served:
				if err != nil {
					t.Fatalf("ServeStdio: %v", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("ServeStdio did not end after the client closed")
			}
		})
	}
}
