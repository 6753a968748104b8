package persist

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// FuzzStoreDir damages copies of the fixture stores (closed or killed) as
// the input says, then opens, loads, checks and repairs them: no input may
// crash, hang or exhaust memory, or lose a checkpoint silently (load it
// with other content, or miss it without an error) before Repair, nor,
// when one file is damaged, after Repair (damage to several files can
// destroy both copies of a checkpoint, the one in badger's files and the
// one in its data file, leaving no trace of it). An input that deletes
// every file leaves a directory no different from a new store's, and is
// not checked.
//
// The input's first byte picks the fixture; then every 8 bytes are one
// change: a file (by index in the sorted list of the store's files), a
// kind (truncate, flip, zero, delete, append, overwrite), an offset
// (little-endian uint32, scaled to the file's content), a length and a
// byte value.
func FuzzStoreDir(f *testing.F) {
	f.Add([]byte{0})
	f.Add([]byte{1, 0, 1, 0, 0, 0, 0x80, 4, 0xff})                         // flip a byte of the first file
	f.Add([]byte{0, 2, 0, 0, 0, 0, 0x80, 0, 0})                            // truncate a file in the middle
	f.Add([]byte{1, 3, 3, 0, 0, 0, 0, 0, 0})                               // delete a file
	f.Add([]byte{1, 4, 2, 0xff, 0xff, 0, 0, 64, 0})                        // zero a range
	f.Add([]byte{0, 5, 4, 0, 0, 0, 0, 200, 0x41})                          // append garbage
	f.Add([]byte{1, 1, 5, 3, 0, 0, 0, 8, 0xff, 6, 1, 0, 0, 0, 0x40, 1, 1}) // two changes
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 {
			return
		}
		state, n := "closed", fxClosedSaves
		if in[0]&1 == 1 {
			state, n = "killed", len(fxSaves)
		}
		dir := filepath.Join(t.TempDir(), "store")
		if err := copyDir(fxDir(t, state), dir); err != nil {
			t.Fatal(err)
		}
		var files []string
		_ = filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
			if err == nil && info.Mode().IsRegular() {
				files = append(files, path)
			}
			return nil
		})
		sort.Strings(files)
		damaged := map[string]bool{}
		for ops := in[1:]; len(ops) >= 8 && len(files) > 0; ops = ops[8:] {
			path := files[int(ops[0])%len(files)]
			fuzzDamage(path, ops[1:8])
			damaged[path] = true
		}
		if !hasFiles(dir) {
			// Every file was deleted: nothing is left that could tell
			// this directory from a new, empty store.
			return
		}
		ok, reported, err := fxCheck(dir, n, true)
		if err != nil {
			t.Fatalf("before Repair: %v", err)
		}
		if len(ok)+len(reported) != len(fxExpected(n)) {
			t.Fatalf("before Repair: %d checkpoints loaded and %d reported, of %d", len(ok), len(reported), len(fxExpected(n)))
		}
		if _, err := Check(dir); err != nil {
			t.Logf("Check: %v", err)
		}
		r, err := Repair(dir)
		if err != nil {
			return // reported
		}
		if _, _, err := fxCheck(dir, n, false, r.LostCheckpoints...); err != nil && len(damaged) == 1 {
			t.Fatalf("after Repair: %v\n%s", err, r)
		}
	})
}

// hasFiles reports whether a regular file is left anywhere under dir.
func hasFiles(dir string) bool {
	found := false
	_ = filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	return found
}

// fuzzDamage changes the file at path as op (7 bytes) says.
func fuzzDamage(path string, op []byte) {
	content := contentSize(path)
	off := int64(binary.LittleEndian.Uint32(op[1:])) % (content + 1)
	length, value := int(op[5]), op[6]
	switch op[0] % 6 {
	case 0:
		_ = os.Truncate(path, off)
	case 1:
		_ = patchFile(path, off, func(b []byte) { b[0] ^= value | 1 }, 1)
	case 2:
		_ = patchFile(path, off, func(b []byte) { clear(b) }, length+1)
	case 3:
		_ = os.Remove(path)
	case 4:
		if f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0); err == nil {
			b := make([]byte, length+1)
			for i := range b {
				b[i] = value + byte(i)
			}
			_, _ = f.Write(b)
			f.Close()
		}
	case 5:
		_ = patchFile(path, off, func(b []byte) {
			for i := range b {
				b[i] = value ^ byte(i*31)
			}
		}, length+1)
	}
}
