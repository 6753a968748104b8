package persist_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
	"github.com/caffe2go/caffe2go/persist"
	"github.com/caffe2go/caffe2go/persist/dbtest"
)

// writeDataset writes n records keyed %04d: a float32 [2] {i, -i}, an
// int32 scalar i and a string [1] "r<i>".
func writeDataset(t testing.TB, typ, path string, n int) {
	t.Helper()
	got, err := persist.WriteTensorProtosDB(typ, path, func(put func(string, ...*blob.Tensor) error) error {
		for i := range n {
			if err := put(fmt.Sprintf("%04d", i),
				blob.MustFromSlice([]float32{float32(i), -float32(i)}, 2),
				blob.Scalar(int32(i)),
				blob.MustFromSlice([]string{fmt.Sprintf("r%d", i)}, 1)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil || got != n {
		t.Fatalf("WriteTensorProtosDB: %d records, %v", got, err)
	}
}

func createDB(db, typ string, args ...*netdef.Argument) *netdef.OperatorDef {
	return netdef.NewOperator("CreateDB", nil, []string{"reader"}, append([]*netdef.Argument{
		netdef.ArgString("db", db), netdef.ArgString("db_type", typ)}, args...)...)
}

func dbInput(batch int64, outputs ...string) *netdef.OperatorDef {
	return netdef.NewOperator("TensorProtosDBInput", []string{"reader"}, outputs, netdef.ArgInt("batch_size", batch))
}

// labels returns the int32 output's values.
func labels(t *blob.Tensor) []int32 { return slices.Clone(blob.Data[int32](t)) }

func TestTensorProtosDBInputBatches(t *testing.T) {
	for _, typ := range persist.DBTypes() {
		t.Run(typ, func(t *testing.T) {
			w := newWS(t)
			writeDataset(t, typ, filepath.Join(w.Root, "ds"), 5)
			mustRun(t, w, createDB("ds", typ))
			op, err := operators.Create(dbInput(2, "x", "y", "s"), w, -1)
			if err != nil {
				t.Fatal(err)
			}
			for run, want := range [][]int32{{0, 1}, {2, 3}, {4, 0}, {1, 2}} {
				if err := op.Run(); err != nil {
					t.Fatal(err)
				}
				x, y, s := w.Tensor("x"), w.Tensor("y"), w.Tensor("s")
				if !slices.Equal(x.Dims(), []int{2, 2}) || !slices.Equal(y.Dims(), []int{2}) || !slices.Equal(s.Dims(), []int{2, 1}) {
					t.Fatalf("run %d: shapes %v %v %v", run, x.Dims(), y.Dims(), s.Dims())
				}
				if got := labels(y); !slices.Equal(got, want) {
					t.Fatalf("run %d: labels %v, want %v (the cursor wraps around)", run, got, want)
				}
				wantX := []float32{float32(want[0]), -float32(want[0]), float32(want[1]), -float32(want[1])}
				wantS := []string{fmt.Sprintf("r%d", want[0]), fmt.Sprintf("r%d", want[1])}
				if !slices.Equal(blob.Data[float32](x), wantX) || !slices.Equal(blob.Data[string](s), wantS) {
					t.Fatalf("run %d: x %v s %v", run, blob.Data[float32](x), blob.Data[string](s))
				}
			}
			// batch_size 0: one record, no batch dimension.
			mustRun(t, w, createDB("ds", typ))
			mustRun(t, w, dbInput(0, "x", "y", "s"))
			if x, y := w.Tensor("x"), w.Tensor("y"); !slices.Equal(x.Dims(), []int{2}) || y.NumDims() != 0 || labels(y)[0] != 0 {
				t.Fatalf("batch_size 0: %v %v", x, y)
			}
		})
	}
}

func TestTensorProtosDBInputReusesOutputs(t *testing.T) {
	w := newWS(t)
	writeDataset(t, "badger", filepath.Join(w.Root, "ds"), 64)
	mustRun(t, w, createDB("ds", "badger"))
	op, err := operators.Create(dbInput(16, "x", "y", "s"), w, -1)
	if err != nil {
		t.Fatal(err)
	}
	if err := op.Run(); err != nil {
		t.Fatal(err)
	}
	x0, y0 := &blob.Data[float32](w.Tensor("x"))[0], &blob.Data[int32](w.Tensor("y"))[0]
	allocs := testing.AllocsPerRun(10, func() {
		if err := op.Run(); err != nil {
			t.Fatal(err)
		}
	})
	if &blob.Data[float32](w.Tensor("x"))[0] != x0 || &blob.Data[int32](w.Tensor("y"))[0] != y0 {
		t.Error("TensorProtosDBInput must reuse its outputs' storage")
	}
	t.Logf("%.0f allocations per batch of 16 records (proto decoding and keys)", allocs)
}

func TestDBReaderSharding(t *testing.T) {
	w := newWS(t)
	const n, shards = 10, 3
	writeDataset(t, "badger", filepath.Join(w.Root, "ds"), n)
	seen := map[int32]int{}
	for s := range shards {
		r, err := persist.NewDBReader("badger", filepath.Join(w.Root, "ds"), persist.DBReaderOptions{NumShards: shards, ShardID: s})
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for i := s; i < n; i += shards {
			want = append(want, fmt.Sprintf("%04d", i))
		}
		want = append(want, want...) // two epochs: it wraps to the shard's start
		var got []string
		for range want {
			k, _, err := r.Read()
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, k)
		}
		if !slices.Equal(got, want) {
			t.Errorf("shard %d of %d read %v, want %v", s, shards, got, want)
		}
		for _, k := range got[:len(got)/2] {
			var i int32
			fmt.Sscanf(k, "%d", &i)
			seen[i]++
		}
		r.Close()
	}
	for i := range int32(n) {
		if seen[i] != 1 {
			t.Errorf("record %d read by %d shards, want exactly 1", i, seen[i])
		}
	}
	// The operator form, and its errors.
	mustRun(t, w, createDB("ds", "badger", netdef.ArgInt("num_shards", 2), netdef.ArgInt("shard_id", 1)))
	mustRun(t, w, dbInput(3, "x", "y", "s"))
	if got := labels(w.Tensor("y")); !slices.Equal(got, []int32{1, 3, 5}) {
		t.Errorf("shard 1 of 2: %v", got)
	}
	wantErr(t, w, createDB("ds", "badger", netdef.ArgInt("num_shards", 2), netdef.ArgInt("shard_id", 2)), "invalid sharding")
	wantErr(t, w, createDB("ds", "badger", netdef.ArgInt("num_shards", 20), netdef.ArgInt("shard_id", 12)), "Db has fewer rows than shard id")
}

func TestDBReaderShuffle(t *testing.T) {
	w := newWS(t)
	const n = 12
	path := filepath.Join(w.Root, "ds")
	writeDataset(t, "badger", path, n)
	epochs := func(seed uint64, shards, shard int) [][]string {
		r, err := persist.NewDBReader("badger", path, persist.DBReaderOptions{Shuffle: true, Seed: seed, NumShards: shards, ShardID: shard})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var out [][]string
		for range 3 {
			var e []string
			for range n / shards {
				k, v, err := r.Read()
				if err != nil {
					t.Fatal(err)
				}
				var msg netdef.TensorProtos
				if err := proto.Unmarshal(v, &msg); err != nil || fmt.Sprintf("%04d", msg.Protos[1].GetInt32Data()[0]) != k {
					t.Fatalf("record %q has the wrong value: %v", k, err)
				}
				e = append(e, k)
			}
			out = append(out, e)
		}
		return out
	}
	a := epochs(7, 1, 0)
	for i, e := range a {
		sorted := slices.Sorted(slices.Values(e))
		var all []string
		for j := range n {
			all = append(all, fmt.Sprintf("%04d", j))
		}
		if !slices.Equal(sorted, all) {
			t.Fatalf("epoch %d is not a permutation of the records: %v", i, e)
		}
	}
	if slices.Equal(a[0], a[1]) && slices.Equal(a[1], a[2]) {
		t.Error("every epoch has the same order")
	}
	if slices.Equal(a[0], slices.Sorted(slices.Values(a[0]))) {
		t.Error("the first epoch is not shuffled")
	}
	if b := epochs(7, 1, 0); !slices.Equal(slices.Concat(a...), slices.Concat(b...)) {
		t.Error("the same seed must give the same orders")
	}
	if c := epochs(8, 1, 0); slices.Equal(slices.Concat(a...), slices.Concat(c...)) {
		t.Error("another seed gave the same orders")
	}
	// Shuffled shards stay disjoint.
	s0, s1 := epochs(3, 2, 0), epochs(3, 2, 1)
	for _, k := range s0[0] {
		if slices.Contains(s1[0], k) {
			t.Errorf("record %s in both shards", k)
		}
	}
	// minidb cannot seek, so it cannot shuffle.
	writeDataset(t, "minidb", filepath.Join(w.Root, "m"), 3)
	wantErr(t, w, createDB("m", "minidb", netdef.ArgInt("shuffle", 1)), "shuffle needs a DB type whose cursor can seek")
	// The operator form with a seed.
	mustRun(t, w, createDB("ds", "badger", netdef.ArgInt("shuffle", 1), netdef.ArgInt("seed", 7)))
	mustRun(t, w, dbInput(n, "x", "y", "s"))
	var keys []string
	for _, l := range labels(w.Tensor("y")) {
		keys = append(keys, fmt.Sprintf("%04d", l))
	}
	if !slices.Equal(keys, a[0]) {
		t.Errorf("CreateDB(shuffle, seed 7) read %v, want %v", keys, a[0])
	}
}

func TestDBReaderConcurrentOps(t *testing.T) {
	w := newWS(t)
	writeDataset(t, "badger", filepath.Join(w.Root, "ds"), 40)
	mustRun(t, w, createDB("ds", "badger"))
	var mu sync.Mutex
	var got []int32
	var wg sync.WaitGroup
	for d := range 4 {
		op, err := operators.Create(dbInput(5, fmt.Sprintf("x%d", d), fmt.Sprintf("y%d", d), fmt.Sprintf("s%d", d)), w, -1)
		if err != nil {
			t.Fatal(err)
		}
		out := w.Blobs[fmt.Sprintf("y%d", d)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 2 {
				if err := op.Run(); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				got = append(got, labels(out.Tensor())...)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
	for i, l := range got {
		if l != int32(i) {
			t.Fatalf("4 readers × 2 batches of 5 read %v, want each of 0..39 once", got)
		}
	}
}

func TestTensorProtosDBInputErrors(t *testing.T) {
	w := newWS(t)
	writeDataset(t, "badger", filepath.Join(w.Root, "ds"), 3)
	// Records whose second field changes shape, and one that is not a
	// TensorProtos.
	_, err := persist.WriteTensorProtosDB("minidb", filepath.Join(w.Root, "ragged"), func(put func(string, ...*blob.Tensor) error) error {
		put("a", blob.MustFromSlice([]float32{1, 2}, 2))
		return put("b", blob.MustFromSlice([]float32{1, 2, 3}, 3))
	})
	if err != nil {
		t.Fatal(err)
	}
	dbtest.WriteAll(t, "minidb", filepath.Join(w.Root, "junk"), persist.ModeNew, dbtest.Record{Key: "a", Value: []byte{0xff, 0xff, 0xff}})
	w.Feed("notreader", blob.MustFromSlice([]float32{1}, 1))

	mustRun(t, w, createDB("ds", "badger"))
	wantErr(t, w, dbInput(1, "x", "y"), "holds 3 TensorProtos, the operator has 2 outputs")
	mustRun(t, w, createDB("ragged", "minidb"))
	wantErr(t, w, dbInput(2, "x"), `record "b"`, "dims [3]", "dims [2]")
	mustRun(t, w, createDB("junk", "minidb"))
	wantErr(t, w, dbInput(1, "x"), "not a serialized TensorProtos")
	wantErr(t, w, netdef.NewOperator("TensorProtosDBInput", []string{"notreader"}, []string{"x"}), "not a DBReader")
	wantErr(t, w, createDB("missing", "badger"), "Cannot open db", filepath.Join(w.Root, "missing"))
	wantErr(t, w, netdef.NewOperator("CreateDB", nil, []string{"r"}), "Must specify a db name.")
	wantErr(t, w, dbInput(-1, "x"), "invalid batch_size")
	// An empty DB opens but cannot be read.
	dbtest.WriteAll(t, "badger", filepath.Join(w.Root, "empty"), persist.ModeNew)
	mustRun(t, w, createDB("empty", "badger"))
	wantErr(t, w, dbInput(1, "x"), "has no records")
}

func TestDBReaderBlob(t *testing.T) {
	w := newWS(t)
	writeDataset(t, "badger", filepath.Join(w.Root, "ds"), 6)
	mustRun(t, w, createDB("ds", "badger"))
	b := w.Blobs["reader"]
	r := b.Get().(*persist.DBReader)
	if b.TypeName() != "DBReader" || r.DBType() != "badger" || r.Source() != filepath.Join(w.Root, "ds") {
		t.Fatalf("reader blob: %s %v", b.TypeName(), r)
	}
	r.Read()
	r.Read()
	data, err := blob.SerializeBlob("reader", b)
	if err != nil {
		t.Fatal(err)
	}
	var bp netdef.BlobProto
	var rp netdef.DBReaderProto
	if err := proto.Unmarshal(data, &bp); err != nil || bp.GetType() != "DBReader" || proto.Unmarshal(bp.GetContent(), &rp) != nil {
		t.Fatalf("serialized reader: %v %v", &bp, err)
	}
	if rp.GetName() != "reader" || rp.GetSource() != r.Source() || rp.GetDbType() != "badger" || rp.GetKey() != "0002" {
		t.Fatalf("DBReaderProto %v", &rp)
	}
	var nb blob.Blob
	if _, err := blob.DeserializeBlob(data, &nb); err != nil {
		t.Fatal(err)
	}
	r2 := nb.Get().(*persist.DBReader)
	defer r2.Close()
	if k, _, err := r2.Read(); err != nil || k != "0002" {
		t.Fatalf("the deserialized reader reads %q, %v; want 0002", k, err)
	}
	// Bad content.
	var bad blob.Blob
	if _, err := blob.DeserializeBlob(mustMarshal(t, &netdef.BlobProto{Name: proto.String("q"), Type: proto.String("DBReader"), Content: []byte{0xff}}), &bad); err == nil || !strings.Contains(err.Error(), "Cannot parse content into a DBReaderProto") {
		t.Errorf("bad DBReaderProto: %v", err)
	}
	missing := mustMarshal(t, &netdef.DBReaderProto{Source: proto.String(filepath.Join(w.Root, "nope")), DbType: proto.String("badger")})
	if _, err := blob.DeserializeBlob(mustMarshal(t, &netdef.BlobProto{Name: proto.String("q"), Type: proto.String("DBReader"), Content: missing}), &bad); err == nil {
		t.Error("a DBReaderProto naming a missing DB must fail")
	}

	// Save and Load a reader blob through a minidb.
	mustRun(t, w, saveDef("minidb", "readers", []string{"reader"}))
	fresh := optest.NewWorkspace()
	fresh.Root = w.Root
	mustRun(t, fresh, loadDef("minidb", "readers", []string{"reader"}))
	r3, ok := fresh.Blobs["reader"].Get().(*persist.DBReader)
	if !ok {
		t.Fatalf("loaded %s, want a DBReader", fresh.Blobs["reader"].TypeName())
	}
	r3.Close()

	// CreateDB run again reopens the same reader.
	mustRun(t, w, createDB("ds", "badger"))
	if w.Blobs["reader"].Get().(*persist.DBReader) != r {
		t.Error("CreateDB run again must reuse the reader it made")
	}
	if k, _, _ := r.Read(); k != "0000" {
		t.Errorf("the reopened reader starts at %q", k)
	}
}

func TestLoadFromDBReader(t *testing.T) {
	w := newWS(t)
	w.Feed("a", blob.MustFromSlice([]float32{1, 2}, 2))
	w.Feed("b", blob.MustFromSlice([]int64{3}, 1))
	mustRun(t, w, saveDef("badger", "params", []string{"a", "b"}))
	mustRun(t, w, createDB("params", "badger"))
	fresh := optest.NewWorkspace()
	fresh.Root = w.Root
	fresh.Blobs["reader"] = w.Blobs["reader"]
	for range 2 { // the reader is left at its start, so loading twice works
		mustRun(t, fresh, netdef.NewOperator("Load", []string{"reader"}, []string{"a", "b"}))
		if !sameTensor(fresh.Tensor("a"), w.Tensor("a")) || !sameTensor(fresh.Tensor("b"), w.Tensor("b")) {
			t.Fatal("Load from a DBReader input")
		}
	}
}

func TestTensorProtosWriter(t *testing.T) {
	dir := t.TempDir()
	w, err := persist.NewTensorProtosWriter("minidb", filepath.Join(dir, "d"))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Put("a", blob.MustFromSlice([]float32{1}, 1)); err != nil {
		t.Fatal(err)
	}
	if err := w.Put("b", &blob.Tensor{}); err == nil || !strings.Contains(err.Error(), `record "b"`) {
		t.Errorf("Put of an unusable tensor: %v", err)
	}
	if err := w.Put("", blob.MustFromSlice([]float32{1}, 1)); err == nil {
		t.Error("Put with an empty key must fail")
	}
	if w.Len() != 1 {
		t.Errorf("Len = %d", w.Len())
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Put("c", blob.MustFromSlice([]float32{1}, 1)); err == nil {
		t.Error("Put after Close must fail")
	}
	recs, _ := dbtest.ReadAll("minidb", filepath.Join(dir, "d"))
	var msg netdef.TensorProtos
	if len(recs) != 1 || proto.Unmarshal(recs[0].Value, &msg) != nil || len(msg.Protos) != 1 || msg.Protos[0].Name != nil || msg.Protos[0].Segment != nil {
		t.Fatalf("records %v, protos %v", recs, &msg)
	}
	// An error from the record function is returned and stops writing.
	n, err := persist.WriteTensorProtosDB("badger", filepath.Join(dir, "e"), func(put func(string, ...*blob.Tensor) error) error {
		put("a", blob.Scalar(float32(1)))
		return fmt.Errorf("stop")
	})
	if err == nil || err.Error() != "stop" || n != 1 {
		t.Errorf("WriteTensorProtosDB: %d, %v", n, err)
	}
	if _, err := persist.WriteTensorProtosDB("nosuch", filepath.Join(dir, "f"), nil); err == nil {
		t.Error("an unknown DB type must fail")
	}
}

func mustMarshal(t testing.TB, m proto.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// BenchmarkTensorProtosDBInput reads MNIST-shaped records (a 784-byte
// image and an int32 label) in batches of 64 from a badger DB; the MB/s
// count the tensor bytes delivered.
func BenchmarkTensorProtosDBInput(b *testing.B) {
	w := newWS(b)
	img := make([]uint8, 784)
	_, err := persist.WriteTensorProtosDB("badger", filepath.Join(w.Root, "ds"), func(put func(string, ...*blob.Tensor) error) error {
		for i := range 4096 {
			img[i%784] = uint8(i)
			if err := put(fmt.Sprintf("%08d", i), blob.MustFromSlice(img, 1, 28, 28), blob.Scalar(int32(i%10))); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	mustRun(b, w, createDB("ds", "badger"))
	op, err := operators.Create(dbInput(64, "data", "label"), w, -1)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(64 * (784 + 4))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := op.Run(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(64*b.N)/b.Elapsed().Seconds(), "records/s")
}
