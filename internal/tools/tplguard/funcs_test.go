package tplguard

import (
	"bufio"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/Masterminds/sprig/v3"
)

// siyuanMap reads testdata/siyuan-template-funcs.txt: the sprig version
// SiYuan pins, the names it removes from sprig's map and the ones it adds,
// each with the class its source gives it.
func siyuanMap(t *testing.T) (version string, removed, added map[string]Class) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "siyuan-template-funcs.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	classes := map[string]Class{"pure": Pure, "index": Index, "host": Host}
	removed, added = map[string]Class{}, map[string]Class{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		switch {
		case len(fields) == 0 || strings.HasPrefix(fields[0], "#"):
		case fields[0] == "sprig":
			version = fields[1]
		case fields[0] == "removed":
			removed[fields[1]] = classes[fields[2]]
		default:
			c, ok := classes[fields[1]]
			if !ok {
				t.Fatalf("testdata: %q has no class", sc.Text())
			}
			added[fields[0]] = c
		}
	}
	return version, removed, added
}

// TestFuncsAreSiYuansMap: every function SiYuan registers for templates
// is classified, with the class its source gives it; a name the
// classification has that the map lacks fails too, so the two stay equal.
// A sprig function implemented by the os, net or syscall packages must be
// Host, and the sprig this module builds with must be the one SiYuan pins
// (another version may add functions nobody classified).
func TestFuncsAreSiYuansMap(t *testing.T) {
	version, removed, added := siyuanMap(t)
	mod, err := os.ReadFile(filepath.Join("..", "..", "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mod), "github.com/Masterminds/sprig/v3 "+version+"\n") {
		t.Fatalf("go.mod's sprig is not %s, the version SiYuan 3.7.3 pins: classify the new version's functions first", version)
	}
	want := map[string]Class{}
	for _, b := range strings.Fields(builtins) {
		want[b] = Pure
	}
	for name, fn := range sprig.TxtFuncMap() {
		want[name] = Pure
		impl := runtime.FuncForPC(reflect.ValueOf(fn).Pointer()).Name()
		for _, pkg := range []string{"os.", "net.", "syscall.", "io/ioutil.", "os/exec."} {
			if strings.HasPrefix(impl, pkg) && removed[name] != Host {
				t.Errorf("sprig's %s is %s, which reaches the host: classify it Host", name, impl)
			}
		}
	}
	for name, c := range removed {
		if _, ok := want[name]; !ok {
			t.Errorf("SiYuan removes %s, which sprig %s does not have", name, version)
		}
		want[name] = c // still refused, should a template name it
	}
	for name, c := range added {
		want[name] = c
	}
	for name, c := range want {
		if Funcs[name] != c {
			t.Errorf("%s is %v here, %v in SiYuan's map", name, Funcs[name], c)
		}
	}
	for name := range Funcs {
		if _, ok := want[name]; !ok {
			t.Errorf("%s is classified but SiYuan's map has no such function", name)
		}
	}
	for name := range SQLRunners {
		if Funcs[name] != Index {
			t.Errorf("%s runs SQL but is not Index", name)
		}
	}
}
