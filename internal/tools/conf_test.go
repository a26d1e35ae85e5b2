package tools

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

const (
	nbShown  = "20260812120000-nbshown"
	nbHidden = "20260812120000-nbhiddn"
)

func TestVeilConfValue(t *testing.T) {
	hidden := map[string]bool{nbHidden: true}
	hiddenBox := func(id string) bool { return hidden[id] }
	for _, tt := range []struct{ in, want string }{
		// A save box in a hidden notebook, and its path of titles.
		{`{"fileTree":{"refCreateSaveBox":"` + nbHidden + `","refCreateSavePath":"/Salary/Refs","docCreateSaveBox":"` + nbShown + `","docCreateSavePath":"/Inbox",` +
			`"shorthandSaveBox":"` + nbHidden + `","shorthandSavePath":"/Quick"}}`,
			`{"fileTree":{"docCreateSaveBox":"` + nbShown + `","docCreateSavePath":"/Inbox","refCreateSaveBox":"","refCreateSavePath":"","shorthandSaveBox":"","shorthandSavePath":""}}`},
		// A box without its path beside it; a path whose box is visible.
		{`{"a":{"xSaveBox":"` + nbHidden + `"},"b":{"ySaveBox":"","ySavePath":"/Keep"}}`, `{"a":{"xSaveBox":""},"b":{"ySaveBox":"","ySavePath":"/Keep"}}`},
		// A hidden id anywhere else; lists; other strings stay.
		{`{"list":["` + nbHidden + `","` + nbShown + `",1,null],"deep":{"x":{"y":"` + nbHidden + `"}},"n":"Notes"}`,
			`{"deep":{"x":{"y":""}},"list":["","` + nbShown + `",1,null],"n":"Notes"}`},
	} {
		var v any
		if err := json.Unmarshal([]byte(tt.in), &v); err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(veilConfValue(v, hidden, hiddenBox))
		if string(got) != tt.want {
			t.Errorf("veilConfValue(%s)\n got %s\nwant %s", tt.in, got, tt.want)
		}
	}
}

func TestVeilBoxConf(t *testing.T) {
	c := siyuan.BoxConf{Name: "Plans", RefCreateSaveBox: nbHidden, RefCreateSavePath: "/Salary/Refs", DocCreateSaveBox: nbShown, DocCreateSavePath: "/Inbox",
		DailyNoteSavePath: "/daily"}
	open := WithPolicy(context.Background(), &Policy{Default: LevelRead})
	if got := VeilBoxConf(open, c); !reflect.DeepEqual(got, c) {
		t.Fatalf("with nothing hidden: %+v", got)
	}
	for name, p := range map[string]*Policy{
		"named":      {Default: LevelRead, Notebooks: map[string]Level{nbHidden: LevelNone}},
		"by default": {Default: LevelNone, Notebooks: map[string]Level{nbShown: LevelRead}},
	} {
		got := VeilBoxConf(WithPolicy(context.Background(), p), c)
		want := c
		want.RefCreateSaveBox, want.RefCreateSavePath = "", ""
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %+v", name, got)
		}
	}
}
