package persist

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestOpenVerifiesFiles damages the fixture stores' files in the ways that
// made badger crash the process, lose tables or drop log entries, and
// checks that Open refuses each with an error wrapping ErrCorrupt that
// names the file, and deletes no data file.
func TestOpenVerifiesFiles(t *testing.T) {
	for _, state := range []string{"closed", "killed"} {
		n := len(fxSaves)
		if state == "closed" {
			n = fxClosedSaves
		}
		t.Run(state+"/intact", func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "store")
			if err := copyDir(fxDir(t, state), dir); err != nil {
				t.Fatal(err)
			}
			ok, reported, err := fxCheck(dir, n, true)
			if err != nil || len(reported) > 0 || len(ok) != len(fxExpected(n)) {
				t.Fatalf("intact store: loaded %v, errors for %v, %v", ok, reported, err)
			}
		})
	}
	tests := []struct {
		state, file string // file: a name, or a glob
		damage      func(data []byte) []byte
		delete      bool
	}{
		{state: "closed", file: "*.sst", damage: func(b []byte) []byte { b[len(b)/3] ^= 0x10; return b }},
		{state: "closed", file: "*.sst", damage: func(b []byte) []byte { return b[:len(b)-100] }},
		{state: "closed", file: "*.sst", damage: func(b []byte) []byte { return b[:len(b)/2] }},
		{state: "closed", file: "MANIFEST", delete: true},
		{state: "closed", file: "MANIFEST", damage: func(b []byte) []byte { return b[:8] }},
		{state: "killed", file: "*.mem", damage: func(b []byte) []byte { clear(b[30:200]); return b }},
		{state: "killed", file: "*.mem", damage: func(b []byte) []byte { b[100] ^= 1; return b }},
		{state: "killed", file: "*.mem", damage: func(b []byte) []byte { b[3] ^= 1; return b }},
		{state: "killed", file: "*.vlog", damage: func(b []byte) []byte { b[5] ^= 1; return b }},
		{state: "killed", file: "KEYREGISTRY", damage: func(b []byte) []byte { b[len(b)-1] ^= 1; return b }},
		{state: "killed", file: "DISCARD", damage: func(b []byte) []byte { return b[:1000] }},
	}
	for _, tc := range tests {
		t.Run(tc.state+"/"+tc.file, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "store")
			if err := copyDir(fxDir(t, tc.state), dir); err != nil {
				t.Fatal(err)
			}
			matches, _ := filepath.Glob(filepath.Join(dir, tc.file))
			if len(matches) == 0 {
				t.Fatalf("the %s fixture has no %s", tc.state, tc.file)
			}
			path := matches[0]
			if tc.delete {
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
			} else {
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, tc.damage(b), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			before := dataFileNames(dir)
			s, err := Open(dir)
			if err == nil {
				s.Close()
				t.Fatalf("Open of a store with a damaged %s succeeded", filepath.Base(path))
			}
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), filepath.Base(path)) {
				t.Fatalf("Open: %v; want an error wrapping ErrCorrupt naming %s", err, filepath.Base(path))
			}
			if after := dataFileNames(dir); !slices.Equal(after, before) {
				t.Fatalf("data files before Open %q, after %q", before, after)
			}
		})
	}
}

// TestFailedOpensRelease opens damaged stores again and again (as a
// workspace retrying would): before Open verified the files, each failed
// badger.Open left goroutines and about 21 MB of memtables behind (40
// opens: 80 goroutines and 840 MB with a damaged value-log header).
func TestFailedOpensRelease(t *testing.T) {
	for _, tc := range []struct {
		file string
		off  int64
	}{{"000002.vlog", 3}, {"*.mem", 3}, {"MANIFEST", 10}, {"000001.sst", 10}} {
		t.Run(tc.file, func(t *testing.T) {
			dir, _ := fxStore(t, "killed")
			fxDamage(t, dir, tc.file, func(path string) error { return patchFile(path, tc.off, func(b []byte) { b[0] ^= 1 }, 1) })
			if _, err := Open(dir); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Open: %v, want ErrCorrupt", err)
			}
			goroutines, heap := settle()
			for range 20 {
				if s, err := Open(dir); err == nil {
					s.Close()
					t.Fatal("Open of the damaged store succeeded")
				}
			}
			g, h := settle()
			if g > goroutines || h > heap+16<<20 {
				t.Errorf("20 failed opens: goroutines %d → %d, heap %d MB → %d MB", goroutines, g, heap>>20, h>>20)
			}
		})
	}
}

// settle collects garbage and returns the number of goroutines and the
// bytes of live heap.
func settle() (goroutines int, heap uint64) {
	var ms runtime.MemStats
	for range 3 {
		runtime.GC()
		time.Sleep(20 * time.Millisecond)
	}
	runtime.ReadMemStats(&ms)
	return runtime.NumGoroutine(), ms.HeapAlloc
}

// TestKeyRegistryLengthsAreChecked appends a data-key entry that claims 4
// GiB to KEYREGISTRY: badger would allocate that much before reading it;
// Open refuses the store without.
func TestKeyRegistryLengthsAreChecked(t *testing.T) {
	dir, _ := fxStore(t, "closed")
	f, err := os.OpenFile(filepath.Join(dir, "KEYREGISTRY"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte{0xff, 0xff, 0xff, 0xf0, 1, 2, 3, 4, 5}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = Open(dir)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "KEYREGISTRY") {
		t.Fatalf("Open: %v; want ErrCorrupt naming KEYREGISTRY", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 256<<20 {
		t.Fatalf("Open allocated %d MB", n>>20)
	}
}
