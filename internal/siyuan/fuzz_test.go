package siyuan

import (
	"encoding/json"
	"testing"
)

// FuzzDecodeEnvelope feeds arbitrary reply bodies through the envelope
// decoder and the typed data decoding the client performs: nothing may panic,
// and an accepted envelope must round-trip its code.
func FuzzDecodeEnvelope(f *testing.F) {
	for _, seed := range []string{
		`{"code":0,"msg":"","data":"3.7.3"}`,
		`{"code":-1,"msg":"invalid ID argument","data":{"closeTimeout":5000}}`,
		`{"code":0,"msg":"","data":null}`,
		`{"code":0}`,
		`{"code":3,"msg":"indexing","data":"wait"}`,
		`{"code":0,"data":[{"timestamp":1,"doOperations":[{"action":"insert","data":"<div data-node-id=\"20240101120000-aaaaaaa\"></div>"}]}]}`,
		`{"code":0,"data":{"notebooks":[{"id":"x"}]}}`,
		`{}`, `[]`, `null`, ``, `{"code":1e400}`, `{"code":0,"msg":5}`, `<html></html>`, "\xff\xfe",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		env, err := decodeEnvelope(body)
		if err != nil {
			return
		}
		if env.Data != nil && isJSONNull(env.Data) {
			t.Fatalf("null data not normalised: %q", env.Data)
		}
		again, err := json.Marshal(map[string]any{"code": env.Code, "msg": env.Msg})
		if err != nil {
			t.Fatal(err)
		}
		if env2, err := decodeEnvelope(again); err != nil || env2.Code != env.Code || env2.Msg != env.Msg {
			t.Fatalf("round trip of %q failed: %+v %v", body, env2, err)
		}
		if env.Data == nil {
			return
		}
		// Decoding into the shapes the typed methods use must fail cleanly.
		var (
			s    string
			txs  []Transaction
			rows []map[string]any
			res  FullTextSearchResult
			nbs  struct {
				Notebooks []Notebook `json:"notebooks"`
			}
		)
		for _, out := range []any{&s, &txs, &rows, &res, &nbs} {
			_ = json.Unmarshal(env.Data, out)
		}
		_ = InsertedIDs(txs)
		_ = FirstInsertedID(txs)
	})
}

// FuzzTopLevelNodeIDs checks the block DOM scanner on arbitrary input: no
// panics, and every returned ID has the NodeID shape.
func FuzzTopLevelNodeIDs(f *testing.F) {
	f.Add(`<div data-node-id="20240101120000-aaaaaaa"><div></div></div>`)
	f.Add(`<div title='>' data-node-id=20240101120000-aaaaaaa/>`)
	f.Add(`<!--`)
	f.Add(`<div data-node-id=`)
	f.Fuzz(func(t *testing.T, dom string) {
		for _, id := range topLevelNodeIDs(dom) {
			if !isNodeID(id) {
				t.Fatalf("returned %q from %q", id, dom)
			}
		}
	})
}
