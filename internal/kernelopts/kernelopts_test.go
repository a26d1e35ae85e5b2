package kernelopts

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseClamps(t *testing.T) {
	tests := []struct {
		name, file string
		want       func(*Options)
		notes      []string
	}{
		{"empty file", "", nil, nil},
		{"no kernelOptions", `{"port":36806}`, nil, nil},
		{"null", `{"kernelOptions":null}`, nil, nil},
		{"in range", `{"kernelOptions":{"readMaxRequests":256,"readMaxMiB":16,"readTimeoutMs":60000,"readRetries":1,"templateMaxMiB":4}}`,
			func(o *Options) {
				o.ReadMaxRequests, o.ReadMaxMiB, o.ReadTimeoutMs, o.ReadRetries, o.TemplateMaxMiB = 256, 16, 60000, 1, 4
			}, nil},
		{"bounds exactly", `{"kernelOptions":{"readMaxRequests":16,"readMaxMiB":64,"readTimeoutMs":1000,"readRetries":0,"templateMaxMiB":32}}`,
			func(o *Options) {
				o.ReadMaxRequests, o.ReadMaxMiB, o.ReadTimeoutMs, o.ReadRetries, o.TemplateMaxMiB = 16, 64, 1000, 0, 32
			}, nil},
		{"below", `{"kernelOptions":{"readMaxRequests":1,"readMaxMiB":0,"readTimeoutMs":5,"readRetries":-2,"templateMaxMiB":-1}}`,
			func(o *Options) {
				o.ReadMaxRequests, o.ReadMaxMiB, o.ReadTimeoutMs, o.ReadRetries, o.TemplateMaxMiB = 16, 1, 1000, 0, 1
			},
			[]string{"readMaxRequests 1 is outside 16–512", "readMaxMiB 0", "readTimeoutMs 5", "readRetries -2", "templateMaxMiB -1"}},
		{"above", `{"kernelOptions":{"readMaxRequests":9999,"readMaxMiB":65,"readTimeoutMs":120001,"readRetries":4,"templateMaxMiB":33}}`,
			func(o *Options) {
				o.ReadMaxRequests, o.ReadMaxMiB, o.ReadTimeoutMs, o.ReadRetries, o.TemplateMaxMiB = 512, 64, 120000, 3, 32
			},
			[]string{"readMaxRequests 9999 is outside 16–512 or not whole: 512 applies"}},
		{"fraction floors", `{"kernelOptions":{"readMaxRequests":100.9,"readRetries":2.5}}`,
			func(o *Options) { o.ReadMaxRequests, o.ReadRetries = 100, 2 }, []string{"readMaxRequests 100.9", "readRetries 2.5"}},
		{"wrong types take the default", `{"kernelOptions":{"readMaxRequests":"300","readMaxMiB":true,"readTimeoutMs":null}}`,
			nil, []string{`readMaxRequests is not a number ("300"): 128`, "readMaxMiB is not a number (true)", "readTimeoutMs is not a number (null)"}},
		{"options not an object", `{"kernelOptions":[1]}`, nil, []string{"kernelOptions is not an object"}},
		{"origins", `{"kernelOptions":{"allowedOrigins":["https://app.example","http://127.0.0.1:5173","https://app.example","https://x.example/path","ftp://x","https://u:p@x.example",7,"https://x.example:443"]}}`,
			func(o *Options) {
				o.AllowedOrigins = []string{"https://app.example", "http://127.0.0.1:5173", "https://x.example:443"}
			},
			[]string{"https://x.example/path", "ftp://x", "https://u:p@x.example", "allowedOrigins: 7 is not"}},
		{"origins not a list", `{"kernelOptions":{"allowedOrigins":"https://a.example"}}`, nil, []string{"allowedOrigins is not a list"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := Defaults()
			if tt.want != nil {
				tt.want(&want)
			}
			got, notes, err := Parse([]byte(tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("got %+v, want %+v", got, want)
			}
			joined := strings.Join(notes, "\n")
			for _, n := range tt.notes {
				if !strings.Contains(joined, n) {
					t.Errorf("notes lack %q:\n%s", n, joined)
				}
			}
			if len(tt.notes) == 0 && len(notes) != 0 {
				t.Errorf("unexpected notes:\n%s", joined)
			}
		})
	}
}

func TestParseTooManyOrigins(t *testing.T) {
	var list []string
	for i := range MaxOrigins + 5 {
		list = append(list, fmt.Sprintf(`"https://o%d.example"`, i))
	}
	got, notes, err := Parse([]byte(`{"kernelOptions":{"allowedOrigins":[` + strings.Join(list, ",") + `]}}`))
	if err != nil || len(got.AllowedOrigins) != MaxOrigins || got.AllowedOrigins[0] != "https://o0.example" || len(notes) != 1 {
		t.Fatalf("%d origins, notes %q, %v", len(got.AllowedOrigins), notes, err)
	}
}

func TestParseNotJSON(t *testing.T) {
	if _, _, err := Parse([]byte("{nope")); err == nil {
		t.Fatal("want an error for a file that is not JSON")
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"kernelOptions":{"readMaxRequests":256,"allowedOrigins":["https://a.example"]}}`))
	f.Add([]byte(`{"kernelOptions":{"readTimeoutMs":1e300,"readRetries":-1e300}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		o, _, err := Parse(data)
		if err != nil {
			return
		}
		for _, fl := range Fields {
			if v := fl.Get(o); v < fl.Min || v > fl.Max {
				t.Fatalf("%s = %d outside %d–%d", fl.Name, v, fl.Min, fl.Max)
			}
		}
		if len(o.AllowedOrigins) > MaxOrigins {
			t.Fatalf("%d origins", len(o.AllowedOrigins))
		}
		for _, s := range o.AllowedOrigins {
			if !ValidOrigin(s) {
				t.Fatalf("invalid origin kept: %q", s)
			}
		}
	})
}
