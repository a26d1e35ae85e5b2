package transfer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkStageHash measures staging throughput: the body read into the
// one buffer it is kept in and hashed on the way (raw), and the JSON form
// (base64 decoded by encoding/json, then hashed).
func BenchmarkStageHash(b *testing.B) {
	for _, size := range []int{1 << 20, 10 << 20} {
		data := bytes.Repeat([]byte("0123456789abcdef"), size/16)
		b.Run("raw/"+strconv.Itoa(size>>20)+"MiB", func(b *testing.B) {
			s := NewStore(Config{})
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Stage(context.Background(), "a.bin", bytes.NewReader(data), int64(size)); err != nil {
					b.Fatal(err)
				}
			}
		})
		body, _ := json.Marshal(map[string]any{"fileName": "a.bin", "dataBase64": base64.StdEncoding.EncodeToString(data)})
		b.Run("json/"+strconv.Itoa(size>>20)+"MiB", func(b *testing.B) {
			s := NewStore(Config{})
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, UploadPath, bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				w := httptest.NewRecorder()
				s.ServeUpload(w, req)
				if w.Code != 200 {
					b.Fatal(w.Body.String())
				}
			}
		})
	}
}

// vmRSS is the process's resident set in bytes (0 where /proc is absent).
func vmRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// BenchmarkDownload512MiB streams 512 MiB (the limit) from a local server
// through the kernel client to disk, and reports how much the resident set
// and the Go heap grew while it ran: the download must stay flat.
func BenchmarkDownload512MiB(b *testing.B) {
	const size = DefaultMaxDownloadBytes
	c := zeroServer(b, size)
	dir := b.TempDir()
	b.SetBytes(size)
	var rssGrowth, heapGrowth, sysGrowth int64
	i := 0
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		rss0, peak := vmRSS(), int64(0)
		var heapPeak uint64
		d := &Downloader{Kernel: c, Progress: func(p Progress) {
			if p.Done%(16<<20) < 1<<20 { // about every 16 MiB
				peak = max(peak, vmRSS())
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				heapPeak = max(heapPeak, m.HeapInuse)
			}
		}}
		dst := filepath.Join(dir, "out"+strconv.Itoa(i)+".zip")
		i++
		res, err := d.Download(context.Background(), File{KernelPath: "/temp/export/big.zip"}, dst)
		if err != nil || res.Size != size {
			b.Fatalf("%+v %v", res, err)
		}
		runtime.ReadMemStats(&after)
		peak = max(peak, vmRSS())
		rssGrowth = max(rssGrowth, peak-rss0)
		heapGrowth = max(heapGrowth, int64(heapPeak)-int64(before.HeapInuse))
		sysGrowth = max(sysGrowth, int64(after.Sys)-int64(before.Sys))
		os.Remove(dst)
	}
	b.ReportMetric(float64(rssGrowth)/(1<<20), "rss-growth-MiB")
	b.ReportMetric(float64(heapGrowth)/(1<<20), "heap-growth-MiB")
	b.ReportMetric(float64(sysGrowth)/(1<<20), "sys-growth-MiB")
}
