package main

import (
	"fmt"
	"strings"
	"testing"
)

const procNetTCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1A96 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0000000000000000 100 0 0 10 0
   1: 00000000:8CE6 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2 1 0000000000000000 100 0 0 10 0
   2: 0100007F:1A96 0100007F:D2F0 01 00000000:00000000 00:00000000 00000000     0        0 3 1 0000000000000000 20 4 30 10 -1
   3: 0200A8C0:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4 1 0000000000000000 100 0 0 10 0
   4: 0100007F:0000 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 5 1 0000000000000000 100 0 0 10 0
`

const procNetTCP6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 6 1 0000000000000000 100 0 0 10 0
   1: 00000000000000000000000000000000:0050 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 7 1 0000000000000000 100 0 0 10 0
   2: 0000000000000000FFFF00000100007F:2710 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 8 1 0000000000000000 100 0 0 10 0
   3: 20010DB8000000000000000000000001:0BB8 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 9 1 0000000000000000 100 0 0 10 0
`

func TestParseProcNetTCP(t *testing.T) {
	tests := []struct {
		name, in string
		want     []int
	}{
		// 127.0.0.1:6806 and 0.0.0.0:36070 listen; an established socket,
		// a LAN address and port 0 do not count.
		{"tcp", procNetTCP, []int{6806, 36070}},
		// ::1, ::, ::ffff:127.0.0.1; not a global address.
		{"tcp6", procNetTCP6, []int{8080, 80, 10000}},
		{"empty", "", nil},
		{"header only", "  sl  local_address\n", nil},
		{"garbage", "x\n0: zz:zz 0 0A\n1: 0100007F:GGGG 0 0A\n2: 0100007F 0 0A\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseProcNetTCP(strings.NewReader(tt.in)); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func FuzzParseProcNetTCP(f *testing.F) {
	f.Add(procNetTCP)
	f.Add(procNetTCP6)
	f.Fuzz(func(t *testing.T, in string) {
		for _, p := range parseProcNetTCP(strings.NewReader(in)) {
			if p < 1 || p > 65535 {
				t.Fatalf("port %d", p)
			}
		}
	})
}

func TestParsePortRange(t *testing.T) {
	tests := []struct {
		in     string
		lo, hi int
		err    bool
	}{
		{"6806-6906", 6806, 6906, false}, {"6806", 6806, 6806, false}, {" 1 - 2 ", 1, 2, false},
		{"0-10", 0, 0, true}, {"10-5", 0, 0, true}, {"1-65536", 0, 0, true}, {"1-5000", 0, 0, true}, {"a-b", 0, 0, true}, {"", 0, 0, true},
	}
	for _, tt := range tests {
		lo, hi, err := parsePortRange(tt.in)
		if (err != nil) != tt.err || lo != tt.lo || hi != tt.hi {
			t.Errorf("parsePortRange(%q) = %d %d %v", tt.in, lo, hi, err)
		}
	}
}
