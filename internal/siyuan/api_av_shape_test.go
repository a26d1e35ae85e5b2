package siyuan

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"testing"
)

// TestAttributeViewShape: the database's file gives its keys and views
// without cells; anything but a whole database of that ID in the file
// (missing, an encrypted notebook's, ciphertext, another database, half
// written) is read through getAttributeView, stripped the same way.
func TestAttributeViewShape(t *testing.T) {
	const avID = "20261206090000-abcdefg"
	const db = `{"spec":5,"id":"` + avID + `","name":"DB","keyValues":[` +
		`{"key":{"id":"20261206090001-aaaaaaa","name":"Primary Key","type":"block"},"values":[{"id":"20261206090003-ccccccc","blockID":"20261206090004-ddddddd","type":"block","block":{"content":"row"}}]},` +
		`{"key":{"id":"20261206090002-bbbbbbb","name":"Num","type":"number"},"values":[{"id":"20261206090005-eeeeeee","type":"number","number":{"content":3}}]}],` +
		`"keyIDs":null,"viewID":"20261206090006-fffffff","views":[{"id":"20261206090006-fffffff","name":"Table","type":"table","filters":[],"sorts":[{"column":"20261206090002-bbbbbbb","order":"ASC"}]}],` +
		`"newItemTemplates":[{"id":"t"}],"defaultTemplateID":"t"}`
	envelope := func(data string) string { return `{"code":0,"msg":"","data":` + data + `}` }
	for _, tc := range []struct {
		name     string
		file     func(w http.ResponseWriter) // nil: getFile not expected
		getAV    string                      // getAttributeView's data; "" when not expected
		id       string
		wantNil  bool
		wantPath []string
	}{
		{name: "from the file", id: avID,
			file:     func(w http.ResponseWriter) { io.WriteString(w, db) },
			wantPath: []string{"/api/file/getFile"}},
		{name: "no file", id: avID,
			file: func(w http.ResponseWriter) {
				w.WriteHeader(http.StatusAccepted)
				io.WriteString(w, `{"code":404,"msg":"file does not exist","data":null}`)
			},
			getAV: `{"av":` + db + `}`, wantPath: []string{"/api/file/getFile", "/api/av/getAttributeView"}},
		{name: "an encrypted notebook's", id: avID,
			file: func(w http.ResponseWriter) {
				w.WriteHeader(http.StatusAccepted)
				io.WriteString(w, `{"code":-3,"msg":"encrypted notebook","data":null}`)
			},
			getAV: `{"av":` + db + `}`, wantPath: []string{"/api/file/getFile", "/api/av/getAttributeView"}},
		{name: "ciphertext", id: avID,
			file:  func(w http.ResponseWriter) { io.WriteString(w, "\x00\x01siyuan-cipher") },
			getAV: `{"av":` + db + `}`, wantPath: []string{"/api/file/getFile", "/api/av/getAttributeView"}},
		{name: "half written", id: avID,
			file:  func(w http.ResponseWriter) { io.WriteString(w, db[:len(db)/2]) },
			getAV: `{"av":` + db + `}`, wantPath: []string{"/api/file/getFile", "/api/av/getAttributeView"}},
		{name: "another database's", id: "20261206090000-zzzzzzz",
			file:  func(w http.ResponseWriter) { io.WriteString(w, db) },
			getAV: `{"av":null}`, wantNil: true, wantPath: []string{"/api/file/getFile", "/api/av/getAttributeView"}},
		{name: "a malformed ID never names a file", id: "../../conf/conf",
			getAV: `{"av":null}`, wantNil: true, wantPath: []string{"/api/av/getAttributeView"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var paths []string
			fk := newFakeKernel(t, func(w http.ResponseWriter, r *http.Request, s seen) {
				paths = append(paths, r.URL.Path)
				switch r.URL.Path {
				case "/api/file/getFile":
					if tc.file == nil {
						t.Errorf("getFile %s", s.Body)
						return
					}
					var arg struct{ Path string }
					if json.Unmarshal(s.Body, &arg) != nil || arg.Path != "/data/storage/av/"+tc.id+".json" {
						t.Errorf("getFile %s", s.Body)
					}
					tc.file(w)
				case "/api/av/getAttributeView":
					if tc.getAV == "" {
						t.Errorf("getAttributeView not expected")
					}
					io.WriteString(w, envelope(tc.getAV))
				default:
					t.Errorf("unexpected %s", r.URL.Path)
				}
			})
			av, err := newTestClient(t, fk.URL).AttributeViewShape(context.Background(), tc.id)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(paths, tc.wantPath) {
				t.Errorf("requests %v, want %v", paths, tc.wantPath)
			}
			if tc.wantNil {
				if av != nil {
					t.Fatalf("got %+v, want nil", av)
				}
				return
			}
			if av == nil || av.ID != avID || av.Name != "DB" || av.ViewID != "20261206090006-fffffff" || len(av.Views) != 1 ||
				len(av.Views[0].Sorts) != 1 || av.NewItemTemplates != nil || av.DefaultTemplateID != "" {
				t.Fatalf("shape = %+v", av)
			}
			var keys []string
			for _, kv := range av.KeyValues {
				keys = append(keys, kv.Key.Name+":"+kv.Key.Type)
				if kv.Values != nil {
					t.Errorf("key %s has values %v", kv.Key.Name, kv.Values)
				}
			}
			if !slices.Equal(keys, []string{"Primary Key:block", "Num:number"}) {
				t.Errorf("keys %v", keys)
			}
		})
	}
}
