package persist

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/dgraph-io/badger/v4"
)

var stAllTypes = []blob.DataType{
	blob.Float16, blob.Float32, blob.Float64, blob.Bool, blob.Int8, blob.Int16,
	blob.Int32, blob.Int64, blob.Uint8, blob.Uint16, blob.String,
}

// stRandomTensor fills a tensor with random bit patterns: floats include NaNs
// with payloads, infinities, subnormals and −0, so only a bit-exact round
// trip passes.
func stRandomTensor(r *rand.Rand, dtype blob.DataType, shape ...int) *blob.Tensor {
	t, err := blob.New(dtype, shape...)
	if err != nil {
		panic(err)
	}
	switch dtype {
	case blob.String:
		d := blob.Data[string](t)
		for i := range d {
			b := make([]byte, r.IntN(40))
			for k := range b {
				b[k] = byte(r.Uint32())
			}
			d[i] = string(b)
		}
	case blob.Bool:
		d := blob.Data[bool](t)
		for i := range d {
			d[i] = r.IntN(2) == 1
		}
	default:
		raw, err := tensorBytes(t)
		if err != nil {
			panic(err)
		}
		for i := 0; i < len(raw); i += 8 {
			var w [8]byte
			binary.LittleEndian.PutUint64(w[:], r.Uint64())
			copy(raw[i:], w[:])
		}
	}
	return t
}

// stSameTensor fails the test unless got is want bit for bit, with the same
// type, shape and device.
func stSameTensor(t *testing.T, what string, got, want *blob.Tensor) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: no tensor", what)
	}
	if got.DataType() != want.DataType() || !slices.Equal(got.Shape(), want.Shape()) {
		t.Fatalf("%s: got %v %v, want %v %v", what, got.DataType(), got.Shape(), want.DataType(), want.Shape())
	}
	gt, gi := deviceOf(got)
	wt, wi := deviceOf(want)
	if gt != wt || gi != wi {
		t.Fatalf("%s: device %d:%d, want %d:%d", what, gt, gi, wt, wi)
	}
	if want.DataType() == blob.String {
		if !slices.Equal(blob.Data[string](got), blob.Data[string](want)) {
			t.Fatalf("%s: strings differ", what)
		}
		return
	}
	gb, _ := tensorBytes(got)
	wb, _ := tensorBytes(want)
	if !bytes.Equal(gb, wb) {
		t.Fatalf("%s: data differs", what)
	}
}

var stShapes = [][]int{{}, {0}, {2, 0, 3}, {1}, {7}, {3, 4, 5}, {33, 31}}

func TestCheckpointRoundTripEveryType(t *testing.T) {
	for _, staged := range []bool{false, true} {
		for _, chunk := range []int{DefaultChunkBytes, 16} {
			for _, dtype := range stAllTypes {
				t.Run(fmt.Sprintf("staged=%v/chunk=%d/%v", staged, chunk, dtype), func(t *testing.T) {
					s, err := OpenInMemory()
					if err != nil {
						t.Fatal(err)
					}
					defer s.Close()
					s.stage = staged
					r := rand.New(rand.NewPCG(uint64(dtype), uint64(chunk)))
					ws := newStWS()
					var names []string
					want := map[string]*blob.Tensor{}
					for i, shape := range stShapes {
						name := fmt.Sprintf("t%d", i)
						want[name] = stRandomTensor(r, dtype, shape...)
						ws.set(name, want[name].Clone())
						names = append(names, name)
					}
					if err := s.SaveCheckpoint(ws, 3, names, ChunkBytes(chunk)); err != nil {
						t.Fatal(err)
					}
					out := newStWS()
					if err := s.LoadCheckpoint(out, 3); err != nil {
						t.Fatal(err)
					}
					for _, name := range names {
						stSameTensor(t, name, out.GetBlob(name).Tensor(), want[name])
					}
					m, err := s.Checkpoint(3)
					if err != nil {
						t.Fatal(err)
					}
					for i, info := range m.Blobs {
						w := want[names[i]]
						if info.Name != names[i] || info.Kind != KindTensor || info.DataType != dtype ||
							!slices.Equal(info.Shape, w.Shape()) || info.Bytes != int64(w.NBytes()) || info.Chunks < 1 {
							t.Errorf("manifest entry %+v does not describe %v", info, w)
						}
						if chunk == 16 && dtype != blob.String && w.NBytes() > 16 && info.Chunks < 2 {
							t.Errorf("%s: %d bytes in %d chunk(s) of 16 bytes", info.Name, w.NBytes(), info.Chunks)
						}
					}
				})
			}
		}
	}
}

func TestCheckpointChunkedTensors(t *testing.T) {
	s := openStStore(t)
	r := rand.New(rand.NewPCG(1, 2))
	ws := newStWS()
	big := stRandomTensor(r, blob.Float32, 3, 1_000_000) // 12 MB: three 4 MiB chunks
	strs := stRandomTensor(r, blob.String, 5000)         // ~100 KB of strings
	ws.set("big", big)
	ws.set("strs", strs)
	if err := s.SaveCheckpoint(ws, 1, []string{"big", "strs"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveCheckpoint(ws, 2, []string{"strs"}, ChunkBytes(10_000)); err != nil {
		t.Fatal(err)
	}
	m, err := s.Checkpoint(1)
	if err != nil {
		t.Fatal(err)
	}
	if m.Blobs[0].Chunks != 3 || m.Blobs[1].Chunks != 1 || m.TotalBytes() != int64(big.NBytes()+strs.NBytes()) {
		t.Errorf("manifest %+v: want 3 and 1 chunks", m.Blobs)
	}
	m2, _ := s.Checkpoint(2)
	if c := m2.Blobs[0].Chunks; c < 9 {
		t.Errorf("strings in 10 kB chunks: %d chunks", c)
	}
	for _, id := range []int64{1, 2} {
		out := newStWS()
		if err := s.LoadCheckpoint(out, id); err != nil {
			t.Fatal(err)
		}
		if id == 1 {
			stSameTensor(t, "big", out.GetBlob("big").Tensor(), big)
		}
		stSameTensor(t, "strs", out.GetBlob("strs").Tensor(), strs)
	}
}

func TestInMemoryLargeTensor(t *testing.T) {
	s, err := OpenInMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	x, err := blob.New(blob.Float32, 5, 1_000_000) // 20 MB: more than one in-memory transaction
	if err != nil {
		t.Fatal(err)
	}
	for i, d := 0, blob.Data[float32](x); i < len(d); i++ {
		d[i] = float32(i) * 0.25
	}
	ws := newStWS()
	ws.set("x", x)
	if err := s.SaveCheckpoint(ws, 1, []string{"x"}); err != nil {
		t.Fatal(err)
	}
	m, err := s.Checkpoint(1)
	if err != nil {
		t.Fatal(err)
	}
	if want := (x.NBytes() + inMemoryChunkBytes - 1) / inMemoryChunkBytes; m.Blobs[0].Chunks != want {
		t.Errorf("%d chunks, want %d (capped at 512 KiB per record in memory)", m.Blobs[0].Chunks, want)
	}
	out := newStWS()
	if err := s.LoadCheckpoint(out, 1); err != nil {
		t.Fatal(err)
	}
	stSameTensor(t, "x", out.GetBlob("x").Tensor(), x)
}

// stCounter is blob content with a registered serializer.
type stCounter struct{ n int64 }

func (*stCounter) BlobTypeName() string { return "persist_test.stCounter" }

type stCounterSerializer struct{}

func (stCounterSerializer) Serialize(name string, v any) (*netdef.BlobProto, error) {
	return &netdef.BlobProto{Content: []byte(strconv.FormatInt(v.(*stCounter).n, 10))}, nil
}

func (stCounterSerializer) Deserialize(p *netdef.BlobProto, b *blob.Blob) error {
	n, err := strconv.ParseInt(string(p.Content), 10, 64)
	if err != nil {
		return err
	}
	b.Set(&stCounter{n})
	return nil
}

func init() { blob.MustRegisterBlobSerializer("persist_test.stCounter", stCounterSerializer{}) }

func TestCheckpointOtherContent(t *testing.T) {
	s := openStStore(t)
	ws := newStWS()
	long := bytes.Repeat([]byte("0123456789\x00\xff"), 1000)
	ws.set("plain", []byte("Hello, world! I have special \x00 symbols \x01!"))
	ws.set("empty", []byte{})
	ws.set("long", long)
	ws.set("count", &stCounter{-42})
	gpu := blob.MustFromSlice([]float32{1, 2, 3})
	gpu.SetDevice(netdef.NewDeviceOption(netdef.CUDA, 3))
	ws.set("gpu", gpu)
	names := []string{"plain", "empty", "long", "count", "gpu"}
	if err := s.SaveCheckpoint(ws, 0, names, ChunkBytes(1000), Iteration(1234)); err != nil {
		t.Fatal(err)
	}
	out := newStWS()
	out.set("plain", blob.MustFromSlice([]int32{9})) // replaced, type and all
	if err := s.LoadCheckpoint(out, 0); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"plain", "empty", "long"} {
		got, ok := out.GetBlob(name).Bytes()
		want, _ := ws.GetBlob(name).Bytes()
		if !ok || !bytes.Equal(got, want) {
			t.Errorf("%s: got %q (%v)", name, got, ok)
		}
	}
	if c, ok := out.GetBlob("count").Get().(*stCounter); !ok || c.n != -42 {
		t.Errorf("count: got %v", out.GetBlob("count").Get())
	}
	stSameTensor(t, "gpu", out.GetBlob("gpu").Tensor(), gpu)
	m, err := s.Checkpoint(0)
	if err != nil {
		t.Fatal(err)
	}
	if m.ID != 0 || m.Iteration != 1234 || time.Since(m.Time) > time.Minute || m.Blobs[2].Chunks != 12 ||
		m.Blobs[3].Kind != KindSerialized || m.Blobs[0].Kind != KindBytes || m.Blobs[4].DeviceType != netdef.CUDA || m.Blobs[4].DeviceID != 3 {
		t.Errorf("manifest %+v", m)
	}
}

func TestCheckpointBadArguments(t *testing.T) {
	s := openStStore(t)
	ws := newStWS()
	ws.set("a", blob.MustFromSlice([]float32{1}))
	ws.set("empty", nil)
	ws.set("chan", make(chan int))
	cases := []struct {
		name  string
		ws    *stWS
		id    int64
		blobs []string
		opts  []CheckpointOption
		want  string
	}{
		{"negative id", ws, -1, []string{"a"}, nil, "negative"},
		{"duplicate", ws, 1, []string{"a", "a"}, nil, `"a" is listed twice`},
		{"empty name", ws, 1, []string{""}, nil, "empty"},
		{"missing blob", ws, 1, []string{"a", "nope"}, nil, `no blob "nope"`},
		{"empty blob", ws, 1, []string{"empty"}, nil, `"empty" is empty`},
		{"no serializer", ws, 1, []string{"chan"}, nil, `"chan" holds chan int`},
		{"chunk size", ws, 1, []string{"a"}, []CheckpointOption{ChunkBytes(0)}, "chunk size"},
		{"nil workspace", nil, 1, []string{"a"}, nil, "nil workspace"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var err error
			if c.ws == nil {
				err = s.SaveCheckpoint(nil, c.id, c.blobs, c.opts...)
			} else {
				err = s.SaveCheckpoint(c.ws, c.id, c.blobs, c.opts...)
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), s.Path()) {
				t.Fatalf("got %v, want an error containing %q and the store path", err, c.want)
			}
		})
	}
	if ms, err := s.Checkpoints(); err != nil || len(ms) != 0 {
		t.Errorf("failed saves left checkpoints: %v %v", ms, err)
	}
	// An empty blob list is a valid (empty) checkpoint.
	if err := s.SaveCheckpoint(ws, 5, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.LoadCheckpoint(newStWS(), 5); err != nil {
		t.Fatal(err)
	}
}

func TestCheckpointMissing(t *testing.T) {
	s := openStStore(t)
	if _, ok, err := s.LatestCheckpoint(); ok || err != nil {
		t.Fatalf("LatestCheckpoint of an empty store: %v %v", ok, err)
	}
	ws := newStWS()
	ws.set("w", blob.MustFromSlice([]float32{1, 2}))
	for _, id := range []int64{3, 10, 7} {
		if err := s.SaveCheckpoint(ws, id, []string{"w"}); err != nil {
			t.Fatal(err)
		}
	}
	err := s.LoadCheckpoint(ws, 42)
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "checkpoint 42") || !strings.Contains(err.Error(), "3, 7, 10") {
		t.Errorf("LoadCheckpoint(42) = %v", err)
	}
	if _, err := s.Checkpoint(42); !errors.Is(err, ErrNotFound) {
		t.Errorf("Checkpoint(42) = %v", err)
	}
	if err := s.DeleteCheckpoint(42); !errors.Is(err, ErrNotFound) {
		t.Errorf("DeleteCheckpoint(42) = %v", err)
	}
	if id, ok, err := s.LatestCheckpoint(); id != 10 || !ok || err != nil {
		t.Errorf("LatestCheckpoint = %d %v %v, want 10", id, ok, err)
	}
	if err := s.DeleteCheckpoint(10); err != nil {
		t.Fatal(err)
	}
	if id, _, _ := s.LatestCheckpoint(); id != 7 {
		t.Errorf("after deleting 10, latest = %d", id)
	}
	if n := stCountKeys(t, s, ckptIDPrefix(10)); n != 0 {
		t.Errorf("%d keys of checkpoint 10 left", n)
	}
}

func stCountKeys(t *testing.T, s *Store, prefix string) int {
	t.Helper()
	keys, err := s.keysUnder(prefix)
	if err != nil {
		t.Fatal(err)
	}
	return len(keys)
}

// stDamageCase changes the stored checkpoint 2 (blobs "a", chunked, and "b").
type stDamageCase struct {
	name          string
	damage        func(t *testing.T, s *Store, m *manifestWire)
	manifestBroke bool
	want          string
}

func TestCheckpointCorruption(t *testing.T) {
	rec := func(m *manifestWire, name string, c int) string { return recordKey(m.ID, m.Gen, name, c) }
	cases := []stDamageCase{
		{name: "flipped record byte", want: `blob "a"`, damage: func(t *testing.T, s *Store, m *manifestWire) {
			k := rec(m, "a", 1)
			v := stReadRaw(t, s, k)
			stWriteRaw(t, s, k, stFlipByte(v, len(v)-3))
		}},
		{name: "flipped record header", want: `blob "a"`, damage: func(t *testing.T, s *Store, m *manifestWire) {
			k := rec(m, "a", 0)
			stWriteRaw(t, s, k, stFlipByte(stReadRaw(t, s, k), 3))
		}},
		{name: "truncated record", want: `blob "b"`, damage: func(t *testing.T, s *Store, m *manifestWire) {
			k := rec(m, "b", 0)
			v := stReadRaw(t, s, k)
			stWriteRaw(t, s, k, v[:len(v)/2])
		}},
		{name: "empty record", want: `blob "b"`, damage: func(t *testing.T, s *Store, m *manifestWire) {
			stWriteRaw(t, s, rec(m, "b", 0), []byte{})
		}},
		{name: "missing record", want: "missing", damage: func(t *testing.T, s *Store, m *manifestWire) {
			stWriteRaw(t, s, rec(m, "a", 2), nil)
		}},
		{name: "swapped chunks", want: "chunk 0", damage: func(t *testing.T, s *Store, m *manifestWire) {
			v0, v1 := stReadRaw(t, s, rec(m, "a", 0)), stReadRaw(t, s, rec(m, "a", 1))
			stWriteRaw(t, s, rec(m, "a", 0), v1)
			stWriteRaw(t, s, rec(m, "a", 1), v0)
		}},
		{name: "record of another blob", want: `blob "b"`, damage: func(t *testing.T, s *Store, m *manifestWire) {
			stWriteRaw(t, s, rec(m, "b", 0), stReadRaw(t, s, rec(m, "a", 0)))
		}},
		{name: "flipped manifest byte", manifestBroke: true, want: "manifest", damage: func(t *testing.T, s *Store, m *manifestWire) {
			k := manifestKey(2)
			v := stReadRaw(t, s, k)
			stWriteRaw(t, s, k, stFlipByte(v, len(v)/2))
		}},
		{name: "truncated manifest", manifestBroke: true, want: "manifest", damage: func(t *testing.T, s *Store, m *manifestWire) {
			k := manifestKey(2)
			v := stReadRaw(t, s, k)
			stWriteRaw(t, s, k, v[:len(v)-1])
		}},
		{name: "garbage manifest", manifestBroke: true, want: "manifest", damage: func(t *testing.T, s *Store, m *manifestWire) {
			stWriteRaw(t, s, manifestKey(2), []byte{0xc1, 0xc1, 0xc1})
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := openStStore(t)
			r := rand.New(rand.NewPCG(5, 6))
			ws := newStWS()
			a1 := stRandomTensor(r, blob.Float64, 100)
			a2, b2 := stRandomTensor(r, blob.Float32, 30, 10), stRandomTensor(r, blob.Int16, 5)
			ws.set("a", a1)
			if err := s.SaveCheckpoint(ws, 1, []string{"a"}); err != nil {
				t.Fatal(err)
			}
			ws.set("a", a2)
			ws.set("b", b2)
			if err := s.SaveCheckpoint(ws, 2, []string{"a", "b"}, ChunkBytes(400)); err != nil {
				t.Fatal(err)
			}
			var m *manifestWire
			if err := s.db.View(func(txn *badger.Txn) (err error) { m, err = readManifest(txn, 2); return err }); err != nil {
				t.Fatal(err)
			}
			c.damage(t, s, m)

			out := newStWS()
			sentinel := blob.MustFromSlice([]float32{7})
			out.set("a", sentinel)
			err := s.LoadCheckpoint(out, 2)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "checkpoint 2") ||
				!strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), s.Path()) {
				t.Fatalf("LoadCheckpoint = %v; want ErrCorrupt naming the store, checkpoint 2 and %s", err, c.want)
			}
			if out.GetBlob("a").Tensor() != sentinel || out.GetBlob("b") != nil {
				t.Fatal("a failed load changed the workspace")
			}
			latest, _, err := s.LatestCheckpoint()
			if err != nil {
				t.Fatal(err)
			}
			ms, err := s.Checkpoints()
			if err != nil {
				t.Fatal(err)
			}
			if c.manifestBroke {
				if latest != 1 || len(ms) != 1 {
					t.Errorf("with checkpoint 2's manifest damaged: latest %d, %d listed", latest, len(ms))
				}
				if _, err := s.Checkpoint(2); !errors.Is(err, ErrCorrupt) {
					t.Errorf("Checkpoint(2) = %v, want ErrCorrupt", err)
				}
			} else if latest != 2 || len(ms) != 2 {
				t.Errorf("latest %d, %d listed", latest, len(ms))
			}
			// Nothing else is lost and the store still works.
			if err := s.LoadCheckpoint(out, 1); err != nil {
				t.Fatal(err)
			}
			stSameTensor(t, "a", out.GetBlob("a").Tensor(), a1)
			if err := s.SaveCheckpoint(ws, 3, []string{"a", "b"}); err != nil {
				t.Fatal(err)
			}
			if err := s.LoadCheckpoint(out, 3); err != nil {
				t.Fatal(err)
			}
			stSameTensor(t, "b", out.GetBlob("b").Tensor(), b2)
			if err := s.DeleteCheckpoint(2); err != nil {
				t.Fatal(err)
			}
			if n := stCountKeys(t, s, ckptIDPrefix(2)); n != 0 {
				t.Errorf("%d keys of the deleted checkpoint left", n)
			}
		})
	}
}

func TestKeepLast(t *testing.T) {
	s := openStStore(t)
	ws := newStWS()
	for id := int64(1); id <= 7; id++ {
		ws.set("w", blob.MustFromSlice([]int64{id}))
		if err := s.SaveCheckpoint(ws, id, []string{"w"}, NoSync()); err != nil {
			t.Fatal(err)
		}
	}
	ids := func() []int64 {
		ms, err := s.Checkpoints()
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for _, m := range ms {
			out = append(out, m.ID)
		}
		return out
	}
	steps := []struct {
		k    int
		want []int64
	}{
		{10, []int64{1, 2, 3, 4, 5, 6, 7}},
		{7, []int64{1, 2, 3, 4, 5, 6, 7}},
		{3, []int64{5, 6, 7}},
		{3, []int64{5, 6, 7}},
		{1, []int64{7}},
	}
	for _, st := range steps {
		if err := s.KeepLast(st.k); err != nil {
			t.Fatal(err)
		}
		if got := ids(); !slices.Equal(got, st.want) {
			t.Fatalf("KeepLast(%d): %v, want %v", st.k, got, st.want)
		}
	}
	if n := stCountKeys(t, s, ckptPrefix); n != 2 { // one record and one manifest
		t.Errorf("%d keys left under %s, want 2", n, ckptPrefix)
	}
	out := newStWS()
	if err := s.LoadCheckpoint(out, 7); err != nil || blob.Data[int64](out.GetBlob("w").Tensor())[0] != 7 {
		t.Fatalf("checkpoint 7 after pruning: %v", err)
	}
	// A damaged newest manifest does not count among the kept ones.
	for id := int64(8); id <= 10; id++ {
		if err := s.SaveCheckpoint(ws, id, []string{"w"}, NoSync()); err != nil {
			t.Fatal(err)
		}
	}
	stWriteRaw(t, s, manifestKey(10), []byte("x"))
	if err := s.KeepLast(2); err != nil {
		t.Fatal(err)
	}
	if got := ids(); !slices.Equal(got, []int64{8, 9}) {
		t.Errorf("KeepLast(2) with 10 damaged: %v, want [8 9]", got)
	}
	if _, err := s.Checkpoint(10); !errors.Is(err, ErrCorrupt) {
		t.Errorf("damaged checkpoint 10 should remain for inspection: %v", err)
	}
	if err := s.KeepLast(-1); err == nil {
		t.Error("KeepLast(-1) succeeded")
	}
	if err := s.KeepLast(0); err != nil {
		t.Fatal(err)
	}
	if n := stCountKeys(t, s, ckptPrefix); n != 0 {
		t.Errorf("KeepLast(0) left %d keys", n)
	}
}

func TestCheckpointOverwriteAndSweep(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ws := newStWS()
	ws.set("w", blob.MustFromSlice([]float32{1, 2, 3}))
	if err := s.SaveCheckpoint(ws, 5, []string{"w"}); err != nil {
		t.Fatal(err)
	}
	ws.set("w", blob.MustFromSlice([]int8{4, 5}, 1, 2))
	ws.set("v", []byte("v"))
	if err := s.SaveCheckpoint(ws, 5, []string{"w", "v"}); err != nil {
		t.Fatal(err)
	}
	if n := stCountKeys(t, s, ckptIDPrefix(5)); n != 3 {
		t.Errorf("after overwriting: %d keys, want 2 records and a manifest", n)
	}
	out := newStWS()
	if err := s.LoadCheckpoint(out, 5); err != nil {
		t.Fatal(err)
	}
	stSameTensor(t, "w", out.GetBlob("w").Tensor(), blob.MustFromSlice([]int8{4, 5}, 1, 2))

	// Leftovers of interrupted saves: records with no manifest, and records
	// of a stale generation next to a manifest.
	m, err := s.Checkpoint(5)
	if err != nil {
		t.Fatal(err)
	}
	stWriteRaw(t, s, recordKey(9, 0xabc, "w", 0), []byte("half a save"))
	stWriteRaw(t, s, recordKey(9, 0xabc, "w", 1), []byte("half a save"))
	stWriteRaw(t, s, recordKey(5, 0xdef, "w", 0), []byte("stale"))
	stWriteRaw(t, s, ckptPrefix+"unrelated", []byte("kept"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(dir); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n := stCountKeys(t, s, ckptIDPrefix(9)); n != 0 {
		t.Errorf("Open left %d records of an unfinished save", n)
	}
	if n := stCountKeys(t, s, ckptIDPrefix(5)); n != 3 {
		t.Errorf("Open left %d keys under checkpoint 5, want 3", n)
	}
	if n := stCountKeys(t, s, ckptPrefix+"unrelated"); n != 1 {
		t.Error("Open removed a key it does not own")
	}
	m2, err := s.Checkpoint(5)
	if err != nil || m2.Iteration != m.Iteration || len(m2.Blobs) != 2 {
		t.Fatalf("checkpoint 5 after reopening: %+v %v", m2, err)
	}
	if err := s.LoadCheckpoint(out, 5); err != nil {
		t.Fatal(err)
	}
}

// TestCheckpointTooBigForOneTransaction saves more small records than one
// badger transaction takes, so the save falls back to the staged path; and
// a staged save with tiny transactions.
func TestCheckpointTooBigForOneTransaction(t *testing.T) {
	s := openStStore(t)
	r := rand.New(rand.NewPCG(3, 4))
	ws := newStWS()
	var names []string
	for i := 0; i < 1500; i++ { // 1500 × 8 KiB inline values > badger's ~9.6 MB batch limit
		name := fmt.Sprintf("p%04d", i)
		ws.set(name, stRandomTensor(r, blob.Float64, 1024))
		names = append(names, name)
	}
	if err := s.SaveCheckpoint(ws, 1, names, NoSync()); err != nil {
		t.Fatal(err)
	}
	s.stagedBytes = 100_000
	if err := s.SaveCheckpoint(ws, 2, names[:100], ChunkBytes(3000)); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{1, 2} {
		out := newStWS()
		if err := s.LoadCheckpoint(out, id); err != nil {
			t.Fatal(err)
		}
		m, _ := s.Checkpoint(id)
		for _, info := range m.Blobs {
			stSameTensor(t, info.Name, out.GetBlob(info.Name).Tensor(), ws.GetBlob(info.Name).Tensor())
		}
	}
}

// BenchmarkCheckpoint measures durable (fsynced) saves and verified loads of
// float32 parameter sets: 10 tensors making up 10 MB, 16 MB and 256 MB.
func BenchmarkCheckpoint(b *testing.B) {
	for _, total := range []int{10 << 20, 16 << 20, 256 << 20} {
		ws := newStWS()
		var names []string
		for i := 0; i < 10; i++ {
			n := total / 10 / 4
			d := make([]float32, n)
			for k := range d {
				d[k] = float32(k) * 0.5
			}
			name := fmt.Sprintf("param%d", i)
			ws.set(name, blob.MustFromSlice(d))
			names = append(names, name)
		}
		label := fmt.Sprintf("%dMB", total>>20)
		s, err := Open(filepath.Join(b.TempDir(), "store"))
		if err != nil {
			b.Fatal(err)
		}
		b.Run("save/"+label, func(b *testing.B) {
			b.SetBytes(int64(total))
			for i := 0; i < b.N; i++ {
				if err := s.SaveCheckpoint(ws, int64(i%3), names); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("load/"+label, func(b *testing.B) {
			b.SetBytes(int64(total))
			out := newStWS()
			for i := 0; i < b.N; i++ {
				if err := s.LoadCheckpoint(out, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
		s.Close()
	}
}
