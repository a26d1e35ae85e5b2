package tools

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// An action's arguments are declared once, as the fields of its argument
// type, the way encoding/json and kong-style command lines declare theirs:
// the field is where the value lands, its tags are the argument's name,
// help, rules and format. The schema, help, binding and validation all come
// from that one declaration, so a misspelt name cannot bind nothing
// silently, and an id format is checked where it is declared.
//
//	type childrenArgs struct {
//		ID     string `arg:"id" help:"the parent block" id:"" required:""`
//		tools.Paging
//	}
//
// Tags:
//
//	arg:"name"        the argument's JSON name (a field without it is not an argument)
//	help:"text"       its description
//	required:""       it must be given
//	id:""             a SiYuan id (a string), or SiYuan ids (a []string), checked when bound
//	enum:"a,b"        the values a string may take (or the field's type has ArgEnum)
//	default:"v"       its value when absent, read as the field's type
//	min:"n" max:"n"   bounds of an integer
//	maxLen:"n"        at most n characters in a string (the help says so)
//	hidden:""         accepted but not advertised
//	oneOrMore:""      a []map[string]any that also takes one object
//
// Field types: string, int, bool, float64 (or pointers to them, nil when
// absent), any (a string or a number, nil when absent), []string,
// map[string]any, []map[string]any, and a named string type. An
// embedded struct's arguments are its embedder's (Paging).

// Enumerated is a named string type whose values are a closed set: an
// argument of that type takes only them.
type Enumerated interface{ ArgEnum() []string }

// Format is what a string argument's value must look like, beyond its type.
type Format string

// Formats.
const (
	// FormatID is a SiYuan id such as 20260812120000-abcdefg.
	FormatID Format = "id"
)

// Paging are the standard paging arguments, embedded in an argument type.
type Paging struct {
	Page     int `arg:"page" help:"1-based page" default:"1" min:"1"`
	PageSize int `arg:"pageSize" help:"items per page" default:"50" min:"1" max:"200"`
}

// declaredField is one argument of a declared argument type: its Param and
// where its value lands.
type declaredField struct {
	param Param
	index []int // reflect.Value.FieldByIndex
	ptr   bool  // the field is a pointer: nil when absent
}

// declaration is an argument type's arguments, derived once when an
// action is built.
type declaration struct {
	fields []declaredField
}

// declare reads the arguments A declares. ok is false when A declares
// none (an action that takes no arguments).
func declare[A any]() (d *declaration, ok bool, err error) {
	t := reflect.TypeFor[A]()
	if t.Kind() != reflect.Struct {
		return nil, false, nil
	}
	d = &declaration{}
	if err := d.collect(t, nil); err != nil {
		return nil, false, err
	}
	if len(d.fields) == 0 {
		return nil, false, nil
	}
	seen := map[string]bool{}
	for _, f := range d.fields {
		if seen[f.param.Name] {
			return nil, false, fmt.Errorf("argument %q is declared twice", f.param.Name)
		}
		seen[f.param.Name] = true
	}
	return d, true, nil
}

func (d *declaration) collect(t reflect.Type, prefix []int) error {
	for i := range t.NumField() {
		sf := t.Field(i)
		index := append(append([]int(nil), prefix...), i)
		name, tagged := sf.Tag.Lookup("arg")
		if !tagged {
			if sf.Anonymous && sf.Type.Kind() == reflect.Struct {
				if err := d.collect(sf.Type, index); err != nil {
					return err
				}
			}
			continue
		}
		if !sf.IsExported() {
			return fmt.Errorf("argument %q: field %s is not exported", name, sf.Name)
		}
		f, err := fieldParam(name, sf)
		if err != nil {
			return fmt.Errorf("argument %q: %w", name, err)
		}
		f.index = index
		d.fields = append(d.fields, f)
	}
	return nil
}

var (
	anyType     = reflect.TypeFor[any]()
	anyMapType  = reflect.TypeFor[map[string]any]()
	anyMapsType = reflect.TypeFor[[]map[string]any]()
	stringsType = reflect.TypeFor[[]string]()
	enumType    = reflect.TypeFor[Enumerated]()
)

// fieldParam derives the Param a tagged field declares.
func fieldParam(name string, sf reflect.StructField) (declaredField, error) {
	tag := sf.Tag
	has := func(k string) bool { _, ok := tag.Lookup(k); return ok }
	if name == "" {
		return declaredField{}, fmt.Errorf("field %s: empty name", sf.Name)
	}
	p := Param{Name: name, Description: tag.Get("help"), Required: has("required"), hidden: has("hidden")}
	ft, ptr := sf.Type, false
	if ft.Kind() == reflect.Pointer {
		ft, ptr = ft.Elem(), true
	}
	switch {
	case ft.Kind() == reflect.String:
		p.Type = String
		if ft.Implements(enumType) {
			p.Enum = reflect.Zero(ft).Interface().(Enumerated).ArgEnum()
		}
	case ft.Kind() == reflect.Int:
		p.Type = Integer
	case ft.Kind() == reflect.Bool:
		p.Type = Boolean
	case ft.Kind() == reflect.Float64:
		p.Type = Number
	case ft == anyType && !ptr:
		p.Type = TextOrNumber
	case ptr:
		return declaredField{}, fmt.Errorf("a pointer to %s is not an argument type", ft)
	case ft == stringsType:
		p.Type = Strings
	case ft == anyMapType:
		p.Type = Object
	case ft == anyMapsType:
		p.Type = Objects
		if has("oneOrMore") {
			p.Type = OneOrObjects
		}
	default:
		return declaredField{}, fmt.Errorf("%s is not an argument type", ft)
	}
	if has("oneOrMore") && p.Type != OneOrObjects {
		return declaredField{}, fmt.Errorf("oneOrMore is for a []map[string]any")
	}
	if e, ok := tag.Lookup("enum"); ok {
		if p.Type != String || p.Enum != nil {
			return declaredField{}, fmt.Errorf("enum is for a plain string")
		}
		p.Enum = strings.Split(e, ",")
	}
	if has("id") {
		if p.Type != String && p.Type != Strings {
			return declaredField{}, fmt.Errorf("id is for a string or []string")
		}
		p.Format = FormatID
		p.Description = idHelp(p.Description, p.Type == Strings)
	}
	for _, b := range []struct {
		key string
		dst **int
	}{{"min", &p.Min}, {"max", &p.Max}} {
		if v, ok := tag.Lookup(b.key); ok {
			n, err := strconv.Atoi(v)
			if err != nil || p.Type != Integer {
				return declaredField{}, fmt.Errorf("%s must be an integer bound of an integer", b.key)
			}
			*b.dst = &n
		}
	}
	if v, ok := tag.Lookup("maxLen"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || p.Type != String {
			return declaredField{}, fmt.Errorf("maxLen must be a positive length of a string")
		}
		p.MaxLen = n
		p.Description = fmt.Sprintf("%s (at most %d characters)", p.Description, n)
	}
	if v, ok := tag.Lookup("default"); ok {
		def, err := p.decode(json.RawMessage(defaultJSON(p.Type, v)))
		if err != nil || def == nil {
			return declaredField{}, fmt.Errorf("default %q does not fit", v)
		}
		p.Default = def
	}
	if p.Required && p.Default != nil {
		return declaredField{}, fmt.Errorf("a required argument has no default")
	}
	return declaredField{param: p, ptr: ptr}, nil
}

// defaultJSON is a default tag's text as the JSON an agent would send.
func defaultJSON(t ParamType, v string) string {
	if t == String {
		b, _ := json.Marshal(v)
		return string(b)
	}
	return v
}

// The suffixes idHelp gives the description of an id argument.
const (
	idSuffix  = " (a SiYuan id like 20260812120000-abcdefg)"
	idsSuffix = " (SiYuan ids like 20260812120000-abcdefg)"
)

// idHelp is the description of an id argument.
func idHelp(desc string, many bool) string {
	if many {
		return desc + idsSuffix
	}
	return desc + idSuffix
}

// params are the declared arguments, in field order.
func (d *declaration) params() []Param {
	ps := make([]Param, len(d.fields))
	for i, f := range d.fields {
		ps[i] = f.param
	}
	return ps
}

// bindInto sets the fields of a new A from bound arguments.
func bindInto[A any](d *declaration, args *boundArgs) A {
	var out A
	v := reflect.ValueOf(&out).Elem()
	for _, f := range d.fields {
		val, ok := args.values[f.param.Name]
		if !ok {
			continue
		}
		dst := v.FieldByIndex(f.index)
		src := reflect.ValueOf(val)
		if f.ptr {
			p := reflect.New(dst.Type().Elem())
			p.Elem().Set(src.Convert(dst.Type().Elem()))
			dst.Set(p)
			continue
		}
		dst.Set(src.Convert(dst.Type()))
	}
	return out
}

// declared is how an action binds its arguments: the Params A's fields
// declare and the parse step, which binds them into a new A and runs
// validate (when set) on it. An A that declares no argument takes none:
// it must have no exported field, which would otherwise bind nothing,
// silently.
func declared[A any](validate func(*A) error) ([]Param, func(*boundArgs) (any, error), error) {
	d, ok, err := declare[A]()
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		if t := reflect.TypeFor[A](); t.Kind() != reflect.Struct || slices.ContainsFunc(reflect.VisibleFields(t), func(f reflect.StructField) bool { return f.IsExported() }) {
			return nil, nil, fmt.Errorf("%s declares no argument: tag its fields (arg:\"name\"), or take tools.NoArgs", t)
		}
		d = &declaration{}
	}
	return d.params(), func(args *boundArgs) (any, error) {
		a := bindInto[A](d, args)
		if validate != nil {
			if err := validate(&a); err != nil {
				return nil, err
			}
		}
		return a, nil
	}, nil
}

// ParseArgs binds and parses a call's arguments as the registry does
// before anything runs (strict mode on): the typed value an action's steps
// get, or the refusal the call would.
func (a *Action) ParseArgs(raw json.RawMessage) (any, error) {
	fields, err := decodeObject(raw)
	if err != nil {
		return nil, err
	}
	args, err := bind(a.Name, a.params(true), fields)
	if err != nil {
		return nil, err
	}
	return a.parse(args)
}
