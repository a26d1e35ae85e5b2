package tools

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
)

type color string

func (color) ArgEnum() []string { return []string{"red", "blue"} }

type declaredArgs struct {
	ID     string   `arg:"id" help:"the block" id:"" required:""`
	Parent string   `arg:"parentID" help:"the parent" id:""`
	IDs    []string `arg:"ids" help:"more blocks" id:""`
	Mode   string   `arg:"mode" help:"how" enum:"markdown,dom" default:"markdown"`
	Color  color    `arg:"color" help:"which"`
	Count  *int     `arg:"count" help:"how many" min:"1" max:"9"`
	Flag   *bool    `arg:"flag" help:"a flag"`
	Attrs  map[string]any
	Items  []map[string]any `arg:"items" help:"edits" oneOrMore:""`
	Secret bool             `arg:"secret" hidden:""`
	Paging
	internal string // not an argument
}

func bindDeclared(t *testing.T, raw string) (declaredArgs, error) {
	t.Helper()
	params, parse, err := declared[declaredArgs](nil)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &fields); err != nil {
		t.Fatal(err)
	}
	args, err := bind("x", params, fields)
	if err != nil {
		return declaredArgs{}, err
	}
	v, err := parse(args)
	if err != nil {
		return declaredArgs{}, err
	}
	return v.(declaredArgs), nil
}

// TestDeclaredParams: the schema and help of an action come from its
// argument type's fields, in their order, embedded ones included.
func TestDeclaredParams(t *testing.T) {
	params, _, err := declared[declaredArgs](nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range params {
		names = append(names, p.Name)
	}
	if got := strings.Join(names, " "); got != "id parentID ids mode color count flag items secret page pageSize" {
		t.Fatalf("params %s", got)
	}
	id, ids, mode, color, count, items, secret, page := params[0], params[2], params[3], params[4], params[5], params[7], params[8], params[9]
	switch {
	case id.Type != String || !id.Required || id.Format != FormatID || !strings.Contains(id.Description, "SiYuan id like"):
		t.Errorf("id: %+v", id)
	case ids.Type != Strings || ids.Format != FormatID:
		t.Errorf("ids: %+v", ids)
	case !reflect.DeepEqual(mode.Enum, []string{"markdown", "dom"}) || mode.Default != "markdown":
		t.Errorf("mode: %+v", mode)
	case !reflect.DeepEqual(color.Enum, []string{"red", "blue"}):
		t.Errorf("color: %+v", color)
	case count.Type != Integer || *count.Min != 1 || *count.Max != 9:
		t.Errorf("count: %+v", count)
	case items.Type != OneOrObjects:
		t.Errorf("items: %+v", items)
	case !secret.hidden:
		t.Errorf("secret: %+v", secret)
	case page.Default != 1 || *page.Min != 1:
		t.Errorf("page: %+v", page)
	}
}

func TestDeclaredBinding(t *testing.T) {
	got, err := bindDeclared(t, `{"id":"20260812120000-abcdefg","parentID":"","ids":["20260812120000-bbbbbbb"],"color":"blue","count":3,"flag":false,"items":{"a":1},"pageSize":7}`)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case got.ID != "20260812120000-abcdefg" || got.Parent != "" || len(got.IDs) != 1 || got.Color != "blue":
		t.Errorf("strings: %+v", got)
	case got.Count == nil || *got.Count != 3 || got.Flag == nil || *got.Flag:
		t.Errorf("pointers: %+v", got)
	case len(got.Items) != 1 || got.Mode != "markdown" || got.Page != 1 || got.PageSize != 7:
		t.Errorf("items, defaults, paging: %+v", got)
	}
	got, err = bindDeclared(t, `{"id":"20260812120000-abcdefg"}`)
	if err != nil || got.Count != nil || got.Flag != nil || got.internal != "" || got.Attrs != nil {
		t.Errorf("absent pointers are nil: %+v %v", got, err)
	}
}

// TestDeclaredRefusals: what a declaration says is checked when the
// arguments bind, before anything runs.
func TestDeclaredRefusals(t *testing.T) {
	for _, tt := range []struct{ raw, want string }{
		{`{}`, `missing argument "id"`},
		{`{"id":""}`, `argument "id" must be a SiYuan id`},
		{`{"id":"20260812120000-ABCDEFG"}`, `argument "id" must be a SiYuan id`},
		{`{"id":"20260812120000-abcdefg","parentID":"../x"}`, `argument "parentID" must be a SiYuan id`},
		{`{"id":"20260812120000-abcdefg","ids":["20260812120000-abcdefg","x"]}`, `argument "ids[1]" must be a SiYuan id like 20260812120000-abcdefg, got "x"`},
		{`{"id":"20260812120000-abcdefg","color":"green"}`, `argument "color" must be one of red, blue`},
		{`{"id":"20260812120000-abcdefg","count":10}`, `argument "count" must be between 1 and 9`},
		{`{"id":"20260812120000-abcdefg","Attrs":{}}`, `does not take Attrs`},
		{`{"id":"20260812120000-abcdefg","internal":"x"}`, `does not take internal`},
	} {
		_, err := bindDeclared(t, tt.raw)
		var fe *failure.Error
		if !errors.As(err, &fe) || fe.Code != failure.InvalidArguments || !strings.Contains(fe.Message, tt.want) {
			t.Errorf("%s: %v, want invalid_arguments %q", tt.raw, err, tt.want)
		}
	}
}

// TestValidateRunsOnTheBoundValue: what tags cannot say is refused, or
// completed, on the typed value.
func TestValidateRunsOnTheBoundValue(t *testing.T) {
	type args struct {
		ID  string   `arg:"id" id:""`
		IDs []string `arg:"ids" id:""`
	}
	_, parse, err := declared(func(a *args) error {
		if (a.ID == "") == (len(a.IDs) == 0) {
			return failure.Invalid("pass exactly one of id or ids")
		}
		if a.ID != "" {
			a.IDs = []string{a.ID}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	v, err := parse(&boundArgs{values: map[string]any{"id": "20260812120000-abcdefg"}})
	if err != nil || !reflect.DeepEqual(v.(args).IDs, []string{"20260812120000-abcdefg"}) {
		t.Errorf("completed: %+v %v", v, err)
	}
	if _, err := parse(&boundArgs{values: map[string]any{}}); err == nil {
		t.Error("refused nothing")
	}
}

// TestDeclarationMistakes: a declaration that cannot be served is refused
// when the registry is built, not met by a call.
func TestDeclarationMistakes(t *testing.T) {
	type twice struct {
		A string `arg:"a"`
		B string `arg:"a"`
	}
	type badType struct {
		A float32 `arg:"a"`
	}
	type badDefault struct {
		N int `arg:"n" default:"many"`
	}
	type badEnum struct {
		N int `arg:"n" enum:"a,b"`
	}
	type badID struct {
		N int `arg:"n" id:""`
	}
	type requiredDefault struct {
		S string `arg:"s" required:"" default:"x"`
	}
	type plain struct{ A string }
	for name, err := range map[string]error{
		"twice":            declErr[twice](nil),
		"type":             declErr[badType](nil),
		"default":          declErr[badDefault](nil),
		"enum":             declErr[badEnum](nil),
		"id":               declErr[badID](nil),
		"required default": declErr[requiredDefault](nil),
		// Fields without tags would bind nothing, silently.
		"undeclared fields": declErr[plain](nil),
		"not a struct":      declErr[string](nil),
	} {
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// The registry refuses such an action.
	act := Read[twice]{Name: "r", Scope: Scope[twice]{None: true}, Run: func(context.Context, *Env, twice) (any, error) { return nil, nil }}.Action()
	if _, err := NewRegistry(&Env{}, &Tool{Name: "t", Actions: []*Action{act}}); err == nil || !strings.Contains(err.Error(), "declared twice") {
		t.Errorf("registry: %v", err)
	}
}

func declErr[A any](validate func(*A) error) error {
	_, _, err := declared(validate)
	return err
}

// TestNoArgs: an action without arguments takes none, and refuses one.
func TestNoArgs(t *testing.T) {
	params, parse, err := declared[NoArgs](nil)
	if err != nil || len(params) != 0 {
		t.Fatalf("%v %v", params, err)
	}
	if _, err := bind("x", params, map[string]json.RawMessage{"a": []byte("1")}); err == nil {
		t.Error("an argument was taken")
	}
	if v, err := parse(&boundArgs{}); err != nil || v != (NoArgs{}) {
		t.Errorf("%v %v", v, err)
	}
}
