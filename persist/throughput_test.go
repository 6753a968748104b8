//go:build linux

package persist

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strconv"
	"testing"
	"time"

	"github.com/caffe2go/caffe2go/blob"
	"golang.org/x/sys/unix"
)

// BenchmarkCheckpointVsDisk measures durable checkpoint saves and cold
// loads of float32 parameter sets of 16 MiB, 256 MiB and 1 GiB next to the
// disk's raw sequential bandwidth, measured in the same iteration with dd
// on the same file system:
//
//   - dd-write: dd if=/dev/zero of=F bs=1M count=N conv=fsync;
//   - save: SaveCheckpoint, synced to disk before it returns;
//   - dd-read: F dropped from the page cache (posix_fadvise DONTNEED, which
//     needs no privileges and touches no other file), then
//     dd if=F of=/dev/null bs=1M;
//   - load: the store closed and reopened (as by a new process), its files
//     dropped from the page cache the same way, then LoadCheckpoint into a
//     new workspace, with the Go heap holding the memory of an earlier
//     load (freed), as in a process that loads again;
//   - load-fresh: the same, but with all free memory returned to the system
//     first (debug.FreeOSMemory), as in a process's first load: the new
//     tensors' memory then faults in page by page while it is read into;
//   - touch: the time to fault in as much fresh memory, writing one byte per
//     page, for reference: on a virtual machine it can cost as much as the
//     read.
//
// Each iteration replaces the checkpoint saved two iterations before (ids
// 0 and 1 alternate), whose data file the store removes in the background;
// that removal is waited for outside the timings, as the truncation of
// dd's file is outside dd's. The rates are dd's own timings and the wall
// time of the calls, summed
// over the iterations; the ratios (save/dd-write, load/dd-read,
// load-fresh/dd-read) compare measurements taken side by side, in
// alternating order, so that other load on the machine affects both sides
// alike. Run with -benchtime=Nx to choose the repetitions.
func BenchmarkCheckpointVsDisk(b *testing.B) {
	if _, err := exec.LookPath("dd"); err != nil {
		b.Skip("dd is not on PATH")
	}
	for _, mb := range []int{16, 256, 1024} {
		b.Run(fmt.Sprintf("%dMB", mb), func(b *testing.B) {
			dir := b.TempDir()
			ws, names := benchParams(mb << 20)
			raw := filepath.Join(dir, "raw")
			storeDir := filepath.Join(dir, "store")
			s, err := Open(storeDir)
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = s.Close() }()
			var ddW, ddR, save, load, loadFresh, touch time.Duration
			// reopen closes and reopens the store and drops its files from
			// the page cache.
			reopen := func() {
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
				if s, err = Open(storeDir); err != nil {
					b.Fatal(err)
				}
				if err := dropFromPageCache(storeDir); err != nil {
					b.Fatal(err)
				}
			}
			timeLoad := func(id int64) time.Duration {
				out := newStWS()
				t0 := time.Now()
				if err := s.LoadCheckpoint(out, id); err != nil {
					b.Fatal(err)
				}
				return time.Since(t0)
			}
			b.ResetTimer()
			for i := range b.N {
				id := int64(i % 2)
				for k := range 2 {
					if k == i%2 {
						d, err := ddWrite(raw, mb)
						if err != nil {
							b.Fatal(err)
						}
						ddW += d
						continue
					}
					t0 := time.Now()
					if err := s.SaveCheckpoint(ws, id, names); err != nil {
						b.Fatal(err)
					}
					save += time.Since(t0)
					// The replaced checkpoint's data file is removed in the
					// background; it must not slow what is timed next.
					s.removals.Wait()
				}
				for k := range 2 {
					if k == i%2 {
						d, err := ddRead(raw)
						if err != nil {
							b.Fatal(err)
						}
						ddR += d
						continue
					}
					reopen()
					debug.FreeOSMemory()
					loadFresh += timeLoad(id)
					reopen()
					runtime.GC() // the load's tensors are garbage: their memory is reused
					load += timeLoad(id)
				}
				debug.FreeOSMemory()
				t0 := time.Now()
				mem := make([]byte, mb<<20)
				for k := 0; k < len(mem); k += 4096 {
					mem[k] = 1
				}
				touch += time.Since(t0)
				runtime.KeepAlive(mem)
			}
			b.StopTimer()
			bytes := float64(b.N) * float64(mb<<20) / 1e6
			b.ReportMetric(bytes/ddW.Seconds(), "dd-write-MB/s")
			b.ReportMetric(bytes/save.Seconds(), "save-MB/s")
			b.ReportMetric(ddW.Seconds()/save.Seconds(), "save/dd")
			b.ReportMetric(bytes/ddR.Seconds(), "dd-read-MB/s")
			b.ReportMetric(bytes/load.Seconds(), "load-MB/s")
			b.ReportMetric(ddR.Seconds()/load.Seconds(), "load/dd")
			b.ReportMetric(bytes/loadFresh.Seconds(), "load-fresh-MB/s")
			b.ReportMetric(ddR.Seconds()/loadFresh.Seconds(), "load-fresh/dd")
			b.ReportMetric(bytes/touch.Seconds(), "touch-MB/s")
		})
	}
}

// benchParams returns a workspace holding total bytes of float32
// parameters shaped like a model's: 16 weight matrices taking nearly all of
// it and 16 biases of 1024 elements.
func benchParams(total int) (*stWS, []string) {
	ws := newStWS()
	var names []string
	const layers, bias = 16, 1024
	per := (total/4 - layers*bias) / layers
	for l := range layers {
		w := make([]float32, per)
		for k := range w {
			w[k] = float32(k%1000)*0.001 + float32(l)
		}
		ws.set(fmt.Sprintf("fc%d_w", l), blob.MustFromSlice(w))
		ws.set(fmt.Sprintf("fc%d_b", l), blob.MustFromSlice(make([]float32, bias)))
		names = append(names, fmt.Sprintf("fc%d_w", l), fmt.Sprintf("fc%d_b", l))
	}
	return ws, names
}

// ddSeconds is dd's report of its own elapsed time.
var ddSeconds = regexp.MustCompile(`copied, ([0-9.e+-]+) s`)

// runDD runs dd with args and returns the time it reports.
func runDD(args ...string) (time.Duration, error) {
	out, err := exec.Command("dd", args...).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("dd %v: %v: %s", args, err, out)
	}
	m := ddSeconds.FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("dd %v: no timing in its output %q", args, out)
	}
	sec, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		return 0, fmt.Errorf("dd %v: timing %q: %v", args, m[1], err)
	}
	return time.Duration(sec * float64(time.Second)), nil
}

// ddWrite writes mb MiB of zeros to path with dd, synced.
func ddWrite(path string, mb int) (time.Duration, error) {
	return runDD("if=/dev/zero", "of="+path, "bs=1M", "count="+strconv.Itoa(mb), "conv=fsync")
}

// ddRead drops path from the page cache and reads it with dd.
func ddRead(path string) (time.Duration, error) {
	if err := dropFileFromPageCache(path); err != nil {
		return 0, err
	}
	return runDD("if="+path, "of=/dev/null", "bs=1M")
}

// dropFromPageCache drops every file under dir from the page cache.
func dropFromPageCache(dir string) error {
	return filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		return dropFileFromPageCache(path)
	})
}

// dropFileFromPageCache writes back and then drops one file's cached pages
// (pages some process has mapped stay).
func dropFileFromPageCache(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return err
	}
	return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}
