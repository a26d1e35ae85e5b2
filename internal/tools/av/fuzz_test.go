package av

import (
	"encoding/json"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// FuzzCreationArguments: any arguments to the creating and relation
// actions, run as a preflight, answer a result or a coded refusal that
// wrote nothing; never a panic, never an uncoded error.
func FuzzCreationArguments(f *testing.F) {
	s := tooltest.NewStrict(f, false, testTools)
	db := s.MkDatabase(f, s.Doc)
	for _, seed := range []string{
		`{"action":"create","parentID":"` + s.Doc + `","columns":[{"name":"A","type":"text"}],"primaryKeyTexts":["x"]}`,
		`{"action":"create","previousID":"` + s.Blocks[0] + `","name":"N","columns":[{"name":1}]}`,
		`{"action":"create","parentID":"` + s.Doc + `","columns":"x"}`,
		`{"action":"render","blockID":"` + s.Doc + `","createIfNotExist":true}`,
		`{"action":"render","id":"` + db.AV + `","createIfNotExist":true}`,
		`{"action":"duplicate","avID":"` + db.AV + `","previousID":"bad"}`,
		`{"action":"add_column","avID":"` + db.AV + `","keyName":"R","keyType":"relation","relationAvID":"` + db.AV + `"}`,
		`{"action":"add_column","avID":"` + db.AV + `","keyName":"R","keyType":"rollup","rollupRelationKeyID":"` + db.Select + `","rollupKeyID":"` + db.Primary + `"}`,
		`{"action":"set_cells","avID":"` + db.AV + `","rowID":"` + db.Select + `","columnID":"` + db.Select + `","values":[1,2]}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var args map[string]any
		if json.Unmarshal([]byte(raw), &args) != nil || args == nil {
			return
		}
		args["validateOnly"] = true
		if _, e := s.Call(t, "av", args); e != nil {
			if e.Code == "" || e.Message == "" {
				t.Fatalf("%s: uncoded error %+v", raw, e)
			}
			if e.WriteAttempted != nil && *e.WriteAttempted {
				t.Fatalf("%s: a preflight says it wrote: %+v", raw, e)
			}
		}
	})
}
