package persist

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"

	"github.com/caffe2go/caffe2go/blob"
)

// stDataFiles returns the data files of checkpoint id in s's data directory.
func stDataFiles(t *testing.T, s *Store, id int64) []string {
	t.Helper()
	s.removals.Wait()
	files, err := s.dataFiles()
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range files[id] {
		paths = append(paths, filepath.Join(s.path, dataDirName, f.name()))
	}
	return paths
}

// TestCheckpointDataFile checks where a checkpoint's payloads go (big ones
// into the save's data file, small ones and STRING tensors into records)
// and that the file follows the checkpoint: replaced by a new save of the
// same id, removed with it, and removed by Open when no manifest names it.
func TestCheckpointDataFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	ws := newStWS()
	big := stRandomTensor(r, blob.Float32, 300, 100) // 120,000 bytes
	small := stRandomTensor(r, blob.Int32, 10)
	strs := stRandomTensor(r, blob.String, 40_000)
	ws.set("big", big)
	ws.set("small", small)
	ws.set("strs", strs)
	ws.set("bytes", make([]byte, dataFileMinBytes))
	if err := s.SaveCheckpoint(ws, 1, []string{"big", "small", "strs", "bytes"}); err != nil {
		t.Fatal(err)
	}
	m, err := s.Checkpoint(1)
	if err != nil {
		t.Fatal(err)
	}
	wantInFile := map[string]bool{"big": true, "small": false, "strs": false, "bytes": true}
	for _, b := range m.Blobs {
		if b.InDataFile != wantInFile[b.Name] {
			t.Errorf("blob %q (%d bytes): InDataFile %v, want %v", b.Name, b.Bytes, b.InDataFile, wantInFile[b.Name])
		}
	}
	first := stDataFiles(t, s, 1)
	if len(first) != 1 {
		t.Fatalf("checkpoint 1 has data files %v, want one", first)
	}

	// A new save of the same id replaces the file.
	big2 := stRandomTensor(r, blob.Float32, 300, 100)
	ws.set("big", big2)
	if err := s.SaveCheckpoint(ws, 1, []string{"big", "small"}); err != nil {
		t.Fatal(err)
	}
	second := stDataFiles(t, s, 1)
	if len(second) != 1 || second[0] == first[0] {
		t.Fatalf("after the second save: data files %v (first save's %v)", second, first)
	}
	out := newStWS()
	if err := s.LoadCheckpoint(out, 1); err != nil {
		t.Fatal(err)
	}
	stSameTensor(t, "big", out.GetBlob("big").Tensor(), big2)
	stSameTensor(t, "small", out.GetBlob("small").Tensor(), small)

	// The files of a save killed before its manifest (.pending), of a
	// delete killed before its removal (.deleted) and an older build's
	// file no manifest names go at Open; the checkpoint's own file stays.
	orphans := map[string][]byte{
		dataFileNameIn(7, 0xabc, statePending): dataHeader(7, 0xabc),
		dataFileNameIn(8, 0xabc, stateDeleted): dataHeader(8, 0xabc),
		dataFileNameIn(9, 0xabc, stateData):    dataHeaderV(9, 0xabc, 1),
	}
	for name, content := range orphans {
		if err := os.WriteFile(filepath.Join(dir, dataDirName, name), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(dir); err != nil {
		t.Fatal(err)
	}
	for name := range orphans {
		if _, err := os.Stat(filepath.Join(dir, dataDirName, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("orphan data file %s after Open: %v", name, err)
		}
	}
	if got := stDataFiles(t, s, 1); len(got) != 1 || got[0] != second[0] {
		t.Errorf("after Open: data files %v, want %v", got, second)
	}

	// A committed file no manifest names is a commit badger lost: Open
	// refuses the store and keeps the file.
	lost := filepath.Join(dir, dataDirName, dataFileName(10, 0xabc))
	if err := os.WriteFile(lost, dataHeader(10, 0xabc), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), filepath.Base(lost)) {
		t.Fatalf("Open with a committed data file no manifest names: %v", err)
	}
	if _, err := os.Stat(lost); err != nil {
		t.Fatalf("the data file of the lost commit: %v", err)
	}
	if err := os.Remove(lost); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(dir); err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	if err := s.DeleteCheckpoint(1); err != nil {
		t.Fatal(err)
	}
	if got := stDataFiles(t, s, 1); len(got) != 0 {
		t.Errorf("after DeleteCheckpoint: data files %v", got)
	}
}

// TestCheckpointDataFileDamage damages the data file of the latest
// checkpoint in every way a disk or a person can: each load fails with
// ErrCorrupt naming the checkpoint and what is wrong, leaves the workspace
// alone, and the earlier checkpoint and the store stay usable.
func TestCheckpointDataFileDamage(t *testing.T) {
	rewrite := func(f func([]byte) []byte) func(t *testing.T, path string) {
		return func(t *testing.T, path string) {
			v, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, f(v), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	cases := []struct {
		name   string
		want   string
		damage func(t *testing.T, path string)
	}{
		{"flipped payload byte", `blob "w" chunk 1: checksum mismatch`, rewrite(func(v []byte) []byte {
			return stFlipByte(v, dataAlign+stDamageChunk+5)
		})},
		{"flipped last payload byte", "checksum mismatch", rewrite(func(v []byte) []byte { return stFlipByte(v, dataAlign+8*20_000-1) })},
		{"truncated", "bytes, the manifest says", rewrite(func(v []byte) []byte { return v[:dataAlign+8*20_000-1] })},
		{"header of another checkpoint", "header", rewrite(func(v []byte) []byte {
			return append(dataHeader(1, 42), v[dataHeaderSize:]...)
		})},
		{"missing", "missing", func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := openStStore(t)
			r := rand.New(rand.NewPCG(3, 4))
			ws := newStWS()
			w1 := stRandomTensor(r, blob.Float64, 20_000)
			ws.set("w", w1)
			if err := s.SaveCheckpoint(ws, 1, []string{"w"}); err != nil {
				t.Fatal(err)
			}
			ws.set("w", stRandomTensor(r, blob.Float64, 20_000))
			if err := s.SaveCheckpoint(ws, 2, []string{"w"}, ChunkBytes(stDamageChunk)); err != nil {
				t.Fatal(err)
			}
			paths := stDataFiles(t, s, 2)
			if len(paths) != 1 {
				t.Fatalf("checkpoint 2 has data files %v", paths)
			}
			c.damage(t, paths[0])

			out := newStWS()
			sentinel := blob.MustFromSlice([]float32{7})
			out.set("w", sentinel)
			err := s.LoadCheckpoint(out, 2)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "checkpoint 2") || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("LoadCheckpoint = %v; want ErrCorrupt naming checkpoint 2 and %q", err, c.want)
			}
			if out.GetBlob("w").Tensor() != sentinel {
				t.Fatal("a failed load changed the workspace")
			}
			if err := s.LoadCheckpoint(out, 1); err != nil {
				t.Fatal(err)
			}
			stSameTensor(t, "w", out.GetBlob("w").Tensor(), w1)
			if err := s.DeleteCheckpoint(2); err != nil {
				t.Fatal(err)
			}
			if err := s.SaveCheckpoint(ws, 2, []string{"w"}); err != nil {
				t.Fatal(err)
			}
			if err := s.LoadCheckpoint(out, 2); err != nil {
				t.Fatal(err)
			}
			stSameTensor(t, "w", out.GetBlob("w").Tensor(), ws.GetBlob("w").Tensor())
		})
	}
}

// stDamageChunk is the piece size of the damaged checkpoints: 160,000
// bytes of payload in three pieces.
const stDamageChunk = 64 << 10

// TestDataFileManifestValidation checks that a manifest placing a blob
// TestDataFileTrailer checks the copy of a save's records and manifest at
// the end of its data file: it is what the save stored in badger, and
// damage to it does not fail a load (which reads the payloads only).
func TestDataFileTrailer(t *testing.T) {
	s := openStStore(t)
	r := rand.New(rand.NewPCG(5, 6))
	ws := newStWS()
	ws.set("big", stRandomTensor(r, blob.Float64, 20_000))
	ws.set("small", stRandomTensor(r, blob.Int32, 3, 5))
	ws.set("b", []byte("bytes"))
	if err := s.SaveCheckpoint(ws, 4, []string{"big", "small", "b"}); err != nil {
		t.Fatal(err)
	}
	var m *manifestWire
	if err := s.db.View(func(txn *badger.Txn) (err error) { m, err = readManifest(txn, 4); return err }); err != nil {
		t.Fatal(err)
	}
	path := stDataFiles(t, s, 4)[0]
	tr, err := readDataTrailer(path, 4, m.Gen)
	if err != nil {
		t.Fatal(err)
	}
	if got := stReadRaw(t, s, manifestKey(4)); string(tr.manifest) != string(got) {
		t.Error("the trailer's manifest is not the one in badger")
	}
	want := []string{recordKey(4, m.Gen, "small", 0), recordKey(4, m.Gen, "b", 0)}
	if !slices.Equal(tr.keys, want) {
		t.Fatalf("the trailer holds the records %q, want %q", tr.keys, want)
	}
	for i, k := range tr.keys {
		if got := stReadRaw(t, s, k); string(tr.values[i]) != string(got) {
			t.Errorf("record %q in the trailer differs from badger's", k)
		}
	}
	if _, err := readDataTrailer(path, 4, m.Gen+1); err == nil {
		t.Error("readDataTrailer of another generation succeeded")
	}
	for _, damage := range []func([]byte) []byte{
		func(v []byte) []byte { return stFlipByte(v, len(v)-1) },
		func(v []byte) []byte { return v[:len(v)-10] },
		func(v []byte) []byte { return append(v, 1, 2, 3) },
	} {
		v, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, damage(slices.Clone(v)), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := readDataTrailer(path, 4, m.Gen); err == nil {
			t.Error("readDataTrailer of a damaged trailer succeeded")
		}
		out := newStWS()
		if err := s.LoadCheckpoint(out, 4); err != nil {
			t.Fatalf("LoadCheckpoint with a damaged trailer: %v", err)
		}
		stSameTensor(t, "big", out.GetBlob("big").Tensor(), ws.GetBlob("big").Tensor())
		if err := os.WriteFile(path, v, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// outside its data file is refused before anything is read or allocated.
func TestDataFileManifestValidation(t *testing.T) {
	s := openStStore(t)
	ws := newStWS()
	ws.set("w", stRandomTensor(rand.New(rand.NewPCG(1, 1)), blob.Float32, 50_000))
	if err := s.SaveCheckpoint(ws, 1, []string{"w"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		edit func(m *manifestWire)
	}{
		{"offset past the end", func(m *manifestWire) { m.Blobs[0].Offset = m.DataBytes }},
		{"offset in the header", func(m *manifestWire) { m.Blobs[0].Offset = 8 }},
		{"wrong piece count", func(m *manifestWire) { m.Blobs[0].Chunks++ }},
		{"no data file", func(m *manifestWire) { m.DataBytes = 0 }},
		{"zero piece size", func(m *manifestWire) { m.ChunkBytes = 0 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			var m *manifestWire
			if err := s.db.View(func(txn *badger.Txn) (err error) { m, err = readManifest(txn, 1); return err }); err != nil {
				t.Fatal(err)
			}
			c.edit(m)
			if err := m.validate(1); err == nil {
				t.Fatalf("validate accepted %+v", m)
			}
		})
	}
}
