package persist_test

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
	"github.com/caffe2go/caffe2go/persist"
	"github.com/caffe2go/caffe2go/persist/dbtest"
)

// newWS returns a map workspace whose root folder is a fresh temp dir.
func newWS(t testing.TB) *optest.Workspace {
	w := optest.NewWorkspace()
	w.Root = t.TempDir()
	return w
}

// runOp creates def in w and runs it once, calling Run directly so that a
// panic fails the test instead of becoming an error.
func runOp(w operators.Workspace, def *netdef.OperatorDef) error {
	op, err := operators.Create(def, w, -1)
	if err != nil {
		return err
	}
	return op.Run()
}

func mustRun(t testing.TB, w operators.Workspace, def *netdef.OperatorDef) {
	t.Helper()
	if err := runOp(w, def); err != nil {
		t.Fatal(err)
	}
}

// wantErr runs def and checks that it fails with an error containing every
// one of wants.
func wantErr(t testing.TB, w operators.Workspace, def *netdef.OperatorDef, wants ...string) {
	t.Helper()
	err := runOp(w, def)
	if err == nil {
		t.Fatalf("%s %v: no error, want one containing %q", def.GetType(), def.GetArg(), wants)
	}
	for _, want := range wants {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: error %q does not contain %q", def.GetType(), err, want)
		}
	}
}

func saveDef(dbType, db string, inputs []string, args ...*netdef.Argument) *netdef.OperatorDef {
	return netdef.NewOperator("Save", inputs, nil, append([]*netdef.Argument{
		netdef.ArgString("db", db), netdef.ArgString("db_type", dbType)}, args...)...)
}

func loadDef(dbType, db string, outputs []string, args ...*netdef.Argument) *netdef.OperatorDef {
	return netdef.NewOperator("Load", nil, outputs, append([]*netdef.Argument{
		netdef.ArgString("db", db), netdef.ArgString("db_type", dbType)}, args...)...)
}

// sameTensor compares type, dims and elements bit for bit (floats by their
// bits, so NaN, -0 and infinities must survive).
func sameTensor(a, b *blob.Tensor) bool {
	if a.DataType() != b.DataType() || !slices.Equal(a.Dims(), b.Dims()) {
		return false
	}
	switch a.DataType() {
	case blob.Float32:
		return slices.EqualFunc(blob.Data[float32](a), blob.Data[float32](b), func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
	case blob.Float64:
		return slices.EqualFunc(blob.Data[float64](a), blob.Data[float64](b), func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
	case blob.Float16:
		return slices.Equal(blob.Data[blob.Half](a), blob.Data[blob.Half](b))
	case blob.Int8:
		return slices.Equal(blob.Data[int8](a), blob.Data[int8](b))
	case blob.Int16:
		return slices.Equal(blob.Data[int16](a), blob.Data[int16](b))
	case blob.Int32:
		return slices.Equal(blob.Data[int32](a), blob.Data[int32](b))
	case blob.Int64:
		return slices.Equal(blob.Data[int64](a), blob.Data[int64](b))
	case blob.Uint8:
		return slices.Equal(blob.Data[uint8](a), blob.Data[uint8](b))
	case blob.Uint16:
		return slices.Equal(blob.Data[uint16](a), blob.Data[uint16](b))
	case blob.Bool:
		return slices.Equal(blob.Data[bool](a), blob.Data[bool](b))
	case blob.String:
		return slices.Equal(blob.Data[string](a), blob.Data[string](b))
	}
	return false
}

// dtypeTensors returns one tensor per element type and shape: every dtype
// with a 2×3 shape, a scalar, and zero-size shapes [0] and [3, 0, 2].
func dtypeTensors() map[string]*blob.Tensor {
	nan := float32(math.NaN())
	m := map[string]*blob.Tensor{
		"f32":  blob.MustFromSlice([]float32{1.5, -0, nan, float32(math.Inf(-1)), math.MaxFloat32, math.SmallestNonzeroFloat32}, 2, 3),
		"f64":  blob.MustFromSlice([]float64{1.25, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.MaxFloat64, -math.SmallestNonzeroFloat64}, 2, 3),
		"f16":  blob.MustFromSlice([]blob.Half{0x3c00, 0x8000, 0x7e00, 0xfc00, 0x7bff, 1}, 2, 3),
		"i8":   blob.MustFromSlice([]int8{-128, -1, 0, 1, 127, 5}, 2, 3),
		"i16":  blob.MustFromSlice([]int16{-32768, -1, 0, 1, 32767, 5}, 2, 3),
		"i32":  blob.MustFromSlice([]int32{math.MinInt32, -1, 0, 1, math.MaxInt32, 5}, 2, 3),
		"i64":  blob.MustFromSlice([]int64{math.MinInt64, -1, 0, 1, math.MaxInt64, 5}, 2, 3),
		"u8":   blob.MustFromSlice([]uint8{0, 1, 127, 128, 255, 5}, 2, 3),
		"u16":  blob.MustFromSlice([]uint16{0, 1, 32767, 32768, 65535, 5}, 2, 3),
		"bool": blob.MustFromSlice([]bool{true, false, true, true, false, false}, 2, 3),
		"str":  blob.MustFromSlice([]string{"", "a", "hé", "\x00\xff", strings.Repeat("x", 300), "z"}, 2, 3),
		"sc":   blob.Scalar(int64(42)),
	}
	for _, dt := range []blob.DataType{blob.Float32, blob.Float64, blob.Float16, blob.Int8, blob.Int16, blob.Int32, blob.Int64, blob.Uint8, blob.Uint16, blob.Bool, blob.String} {
		for _, shape := range [][]int{{0}, {3, 0, 2}} {
			t, err := blob.New(dt, shape...)
			if err != nil {
				panic(err)
			}
			m[fmt.Sprintf("empty_%v_%d", dt, len(shape))] = t
		}
	}
	return m
}

func TestSaveLoadEveryDTypeAndZeroSize(t *testing.T) {
	tensors := dtypeTensors()
	names := make([]string, 0, len(tensors))
	for n := range tensors {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, typ := range persist.DBTypes() {
		t.Run(typ, func(t *testing.T) {
			w := newWS(t)
			for _, n := range names {
				w.Feed(n, tensors[n])
			}
			w.CreateBlob("bytes").Set([]byte("raw \x00 bytes"))
			w.CreateBlob("nobytes").Set([]byte{})
			all := append(slices.Clone(names), "bytes", "nobytes")
			mustRun(t, w, saveDef(typ, "ckpt", all))

			fresh := optest.NewWorkspace()
			fresh.Root = w.Root
			mustRun(t, fresh, loadDef(typ, "ckpt", all))
			for _, n := range names {
				if got := fresh.Tensor(n); got == nil || !sameTensor(got, tensors[n]) {
					t.Errorf("%s: loaded %v, saved %v", n, got, tensors[n])
				}
			}
			for _, n := range []string{"bytes", "nobytes"} {
				got, ok := fresh.Blobs[n].Bytes()
				want, _ := w.Blobs[n].Bytes()
				if !ok || !bytes.Equal(got, want) {
					t.Errorf("%s: loaded %q, saved %q", n, got, want)
				}
			}
			// load_all into another workspace finds the same blobs.
			other := optest.NewWorkspace()
			other.Root = w.Root
			mustRun(t, other, loadDef(typ, "ckpt", nil, netdef.ArgInt("load_all", 1)))
			if len(other.Blobs) != len(all) {
				t.Errorf("load_all made %d blobs, want %d", len(other.Blobs), len(all))
			}
		})
	}
}

func TestSaveMiniDBDecodes(t *testing.T) {
	w := newWS(t)
	w.Feed("fc_w", blob.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3))
	w.Feed("iter", blob.MustFromSlice([]int64{7}, 1))
	w.CreateBlob("my_string").Set([]byte("hello"))
	mustRun(t, w, saveDef("minidb", "m.minidb", []string{"fc_w", "iter", "my_string"}))
	recs, err := dbtest.ReadAll("minidb", filepath.Join(w.Root, "m.minidb"))
	if err != nil {
		t.Fatal(err)
	}
	keys := []string{}
	for _, r := range recs {
		keys = append(keys, r.Key)
	}
	if want := []string{"fc_w#%0", "iter#%0", "my_string"}; !slices.Equal(keys, want) {
		t.Fatalf("keys %q, want %q (input order)", keys, want)
	}
	protocPath, protocErr := exec.LookPath("protoc")
	for _, r := range recs {
		var bp netdef.BlobProto
		if err := proto.Unmarshal(r.Value, &bp); err != nil {
			t.Fatalf("%s: %v", r.Key, err)
		}
		name := blob.BlobNameFromKey(r.Key)
		if bp.GetName() != name {
			t.Errorf("%s: BlobProto name %q", r.Key, bp.GetName())
		}
		switch name {
		case "fc_w":
			tp := bp.GetTensor()
			if bp.GetType() != "Tensor" || !slices.Equal(tp.GetDims(), []int64{2, 3}) || tp.GetDataType() != netdef.TensorProto_FLOAT ||
				!slices.Equal(tp.GetFloatData(), []float32{1, 2, 3, 4, 5, 6}) || tp.GetSegment().GetBegin() != 0 || tp.GetSegment().GetEnd() != 6 || tp.GetName() != "fc_w" {
				t.Errorf("fc_w record: %v", &bp)
			}
		case "iter":
			if !slices.Equal(bp.GetTensor().GetInt64Data(), []int64{7}) || bp.GetTensor().GetDataType() != netdef.TensorProto_INT64 {
				t.Errorf("iter record: %v", &bp)
			}
		case "my_string":
			if bp.GetType() != "std::string" || string(bp.GetContent()) != "hello" {
				t.Errorf("my_string record: %v", &bp)
			}
		}
		if protocErr != nil {
			continue
		}
		cmd := exec.Command(protocPath, "--decode=caffe2.BlobProto", "-I", "../netdef", "caffe2.proto")
		cmd.Stdin = bytes.NewReader(r.Value)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("protoc --decode of %s: %v\n%s", r.Key, err, out)
		}
		if !strings.Contains(string(out), fmt.Sprintf("name: %q", name)) {
			t.Errorf("protoc output for %s lacks the name:\n%s", r.Key, out)
		}
		if name == "fc_w" && (!strings.Contains(string(out), "dims: 2") || !strings.Contains(string(out), "float_data: 6") || !strings.Contains(string(out), `type: "Tensor"`)) {
			t.Errorf("protoc output for fc_w:\n%s", out)
		}
	}
	if protocErr != nil {
		t.Log("protoc not on PATH: decoded with proto.Unmarshal only")
	}
}

// handTensor encodes a FLOAT TensorProto field by field (no generated
// code): dims, data_type, packed float_data, name and, when seg is non-nil,
// the segment.
func handTensor(name string, dims []int64, data []float32, seg []int64) []byte {
	var b []byte
	for _, d := range dims {
		b = protowire.AppendTag(b, 1, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(d))
	}
	b = protowire.AppendTag(b, 2, protowire.VarintType)
	b = protowire.AppendVarint(b, 1) // FLOAT
	var packed []byte
	for _, f := range data {
		packed = protowire.AppendFixed32(packed, math.Float32bits(f))
	}
	b = protowire.AppendTag(b, 3, protowire.BytesType)
	b = protowire.AppendBytes(b, packed)
	b = protowire.AppendTag(b, 7, protowire.BytesType)
	b = protowire.AppendString(b, name)
	if seg != nil {
		var s []byte
		s = protowire.AppendTag(s, 1, protowire.VarintType)
		s = protowire.AppendVarint(s, uint64(seg[0]))
		s = protowire.AppendTag(s, 2, protowire.VarintType)
		s = protowire.AppendVarint(s, uint64(seg[1]))
		b = protowire.AppendTag(b, 11, protowire.BytesType)
		b = protowire.AppendBytes(b, s)
	}
	return b
}

// handBlob encodes a BlobProto{name, type, tensor | content}.
func handBlob(name, typ string, tensor, content []byte) []byte {
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendString(b, name)
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendString(b, typ)
	if tensor != nil {
		b = protowire.AppendTag(b, 3, protowire.BytesType)
		b = protowire.AppendBytes(b, tensor)
	}
	if content != nil {
		b = protowire.AppendTag(b, 4, protowire.BytesType)
		b = protowire.AppendBytes(b, content)
	}
	return b
}

func TestLoadHandBuiltMiniDB(t *testing.T) {
	w := newWS(t)
	// A 2×3 tensor in two chunks stored in reverse order, an unchunked one
	// without a segment, and a string blob.
	dbtest.WriteAll(t, "minidb", filepath.Join(w.Root, "hand.minidb"), persist.ModeNew,
		dbtest.Record{Key: "w#%1", Value: handBlob("w", "Tensor", handTensor("w", []int64{2, 3}, []float32{4, 5, 6}, []int64{3, 6}), nil)},
		dbtest.Record{Key: "b", Value: handBlob("b", "Tensor", handTensor("b", []int64{2}, []float32{-1, 1}, nil), nil)},
		dbtest.Record{Key: "w#%0", Value: handBlob("w", "Tensor", handTensor("w", []int64{2, 3}, []float32{1, 2, 3}, []int64{0, 3}), nil)},
		dbtest.Record{Key: "note", Value: handBlob("note", "std::string", nil, []byte("caffe2"))},
	)
	mustRun(t, w, loadDef("minidb", "hand.minidb", []string{"w", "b", "note"}))
	if got := w.Tensor("w"); !sameTensor(got, blob.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)) {
		t.Errorf("w = %v %v", got, blob.Data[float32](got))
	}
	if got := w.Tensor("b"); !sameTensor(got, blob.MustFromSlice([]float32{-1, 1}, 2)) {
		t.Errorf("b = %v", got)
	}
	if s, _ := w.Blobs["note"].Bytes(); string(s) != "caffe2" {
		t.Errorf("note = %q", s)
	}
}

func TestSaveLoadNameRules(t *testing.T) {
	for _, typ := range persist.DBTypes() {
		t.Run(typ, func(t *testing.T) {
			w := newWS(t)
			wv := blob.MustFromSlice([]float32{1, 2}, 2)
			bv := blob.MustFromSlice([]float32{3}, 1)
			xv := blob.MustFromSlice([]int32{4}, 1)
			w.Feed("gpu_0/w", wv)
			w.Feed("gpu_0/b", bv)
			w.Feed("x", xv)
			in := []string{"gpu_0/w", "gpu_0/b", "x"}
			mustRun(t, w, saveDef(typ, "stripped", in, netdef.ArgString("strip_prefix", "gpu_0/")))
			mustRun(t, w, saveDef(typ, "full", in))
			mustRun(t, w, saveDef(typ, "over", in, netdef.ArgStrings("blob_name_overrides", "A", "B", "C")))
			recs, err := dbtest.ReadAll(typ, filepath.Join(w.Root, "stripped"))
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, r := range recs {
				keys = append(keys, r.Key)
			}
			slices.Sort(keys)
			if !slices.Equal(keys, []string{"b#%0", "w#%0", "x#%0"}) {
				t.Fatalf("strip_prefix keys %q", keys)
			}

			for _, tc := range []struct {
				name    string
				db      string
				outputs []string
				args    []*netdef.Argument
				want    map[string]*blob.Tensor
				err     string
			}{
				{"plain", "stripped", []string{"w", "b"}, nil, map[string]*blob.Tensor{"w": wv, "b": bv}, ""},
				{"add_prefix", "stripped", []string{"gpu_1/w"}, []*netdef.Argument{netdef.ArgString("add_prefix", "gpu_1/")}, map[string]*blob.Tensor{"gpu_1/w": wv}, ""},
				{"strip_prefix", "full", []string{"w", "x"}, []*netdef.Argument{netdef.ArgString("strip_prefix", "gpu_0/")}, map[string]*blob.Tensor{"w": wv, "x": xv}, ""},
				{"strip and add", "full", []string{"gpu_3/b"}, []*netdef.Argument{netdef.ArgString("strip_prefix", "gpu_0/"), netdef.ArgString("add_prefix", "gpu_3/")}, map[string]*blob.Tensor{"gpu_3/b": bv}, ""},
				{"source_blob_names", "stripped", []string{"myw", "myx"}, []*netdef.Argument{netdef.ArgStrings("source_blob_names", "w", "x")}, map[string]*blob.Tensor{"myw": wv, "myx": xv}, ""},
				{"overrides", "over", []string{"A", "C"}, nil, map[string]*blob.Tensor{"A": wv, "C": xv}, ""},
				{"load_all", "stripped", nil, []*netdef.Argument{netdef.ArgInt("load_all", 1), netdef.ArgString("add_prefix", "p/")}, map[string]*blob.Tensor{"p/w": wv, "p/b": bv, "p/x": xv}, ""},
				{"incomplete", "stripped", []string{"w", "nope"}, nil, nil, "Expected to load 2 blobs, got 1 only. Failed to load blob: nope"},
				{"allow_incomplete", "stripped", []string{"w", "nope"}, []*netdef.Argument{netdef.ArgInt("allow_incomplete", 1)}, map[string]*blob.Tensor{"w": wv}, ""},
				{"no match without strip", "full", []string{"w"}, nil, nil, "Expected to load 1 blobs, got 0 only"},
			} {
				fresh := optest.NewWorkspace()
				fresh.Root = w.Root
				def := loadDef(typ, tc.db, tc.outputs, tc.args...)
				if tc.err != "" {
					wantErr(t, fresh, def, tc.err)
					continue
				}
				if err := runOp(fresh, def); err != nil {
					t.Errorf("%s: %v", tc.name, err)
					continue
				}
				for n, want := range tc.want {
					if got := fresh.Tensor(n); got == nil || !sameTensor(got, want) {
						t.Errorf("%s: %s = %v, want %v", tc.name, n, got, want)
					}
				}
				if tc.name == "load_all" && len(fresh.Blobs) != 3 {
					t.Errorf("load_all created %d blobs: %v", len(fresh.Blobs), fresh.Blobs)
				}
			}
		})
	}
}

func TestSaveLoadArgumentErrors(t *testing.T) {
	w := newWS(t)
	w.Feed("gpu_0/w", blob.MustFromSlice([]float32{1}, 1))
	w.Feed("gpu_1/w", blob.MustFromSlice([]float32{2}, 1))
	w.Feed("a", blob.MustFromSlice([]float32{2}, 1))
	w.CreateBlob("empty")
	for _, tc := range []struct {
		name string
		def  *netdef.OperatorDef
		want string
	}{
		{"save without db", netdef.NewOperator("Save", []string{"a"}, nil), "Must specify a db name."},
		{"save empty db_type", saveDef("", "x", []string{"a"}), "Must specify a db type."},
		{"save unknown db_type", saveDef("leveldb", "x", []string{"a"}), `unknown DB type "leveldb"`},
		{"save overrides count", saveDef("minidb", "x", []string{"a"}, netdef.ArgStrings("blob_name_overrides", "p", "q")), "Number of blobs and blob_name_overrides mismatch."},
		{"save strip and overrides", saveDef("minidb", "x", []string{"a"}, netdef.ArgStrings("blob_name_overrides", "p"), netdef.ArgString("strip_prefix", "a")), "strip_prefix and blob_name_overrides are mutually exclusive."},
		{"save duplicate after strip", saveDef("minidb", "x", []string{"gpu_0/w", "gpu_1/w"}, netdef.ArgString("strip_prefix", "/")), "Duplicated input: w"},
		{"save separator in name", saveDef("minidb", "x", []string{"a"}, netdef.ArgStrings("blob_name_overrides", "a#%b")), "chunk separator"},
		{"save empty blob", saveDef("minidb", "x", []string{"empty"}), "No known serializer for nullptr"},
		{"save bad chunk_size", saveDef("minidb", "x", []string{"a"}, netdef.ArgInt("chunk_size", -7)), "invalid chunk_size -7"},
		{"save unwritable", saveDef("minidb", "no/such/dir/x", []string{"a"}), "Cannot open db for writing: " + filepath.Join(w.Root, "no/such/dir/x")},
		{"load without db", netdef.NewOperator("Load", nil, []string{"a"}), "Must specify a db name."},
		{"load empty in dbs", netdef.NewOperator("Load", nil, []string{"a"}, netdef.ArgStrings("dbs", "x", "")), "Db name should not be empty."},
		{"load duplicate dbs", netdef.NewOperator("Load", nil, []string{"a"}, netdef.ArgStrings("dbs", "x", "x")), "Duplicated db name: x"},
		{"load source count", loadDef("minidb", "x", []string{"a"}, netdef.ArgStrings("source_blob_names", "p", "q")), "Number of output blobs and source_blob_names mismatch."},
		{"load strip and source", loadDef("minidb", "x", []string{"a"}, netdef.ArgStrings("source_blob_names", "p"), netdef.ArgString("strip_prefix", "z")), "strip_prefix and source_blob_names are mutually exclusive."},
		{"load_all and source", loadDef("minidb", "x", []string{"a"}, netdef.ArgStrings("source_blob_names", "p"), netdef.ArgInt("load_all", 1)), "cannot load_all_ while using source_blob_names."},
		{"load duplicate source", loadDef("minidb", "x", []string{"a", "b"}, netdef.ArgStrings("source_blob_names", "p", "p")), "Duplicated source blob name: p"},
		{"load missing db", loadDef("badger", "missing", []string{"a"}), "Cannot open db for reading: " + filepath.Join(w.Root, "missing")},
		{"load wrong db_type case", loadDef("MINIDB", "x", []string{"a"}), `unknown DB type "MINIDB"`},
		{"load DBReader input that is not one", netdef.NewOperator("Load", []string{"a"}, []string{"b"}), "not a DBReader"},
	} {
		t.Run(tc.name, func(t *testing.T) { wantErr(t, w, tc.def, tc.want) })
	}
	// The unknown-type error lists the known types.
	err := runOp(w, loadDef("lmdb", "x", []string{"a"}))
	if err == nil || !strings.Contains(err.Error(), "known types: MiniDB, badger, minidb") {
		t.Errorf("unknown type error %v must list the known types", err)
	}
}

func TestSaveLoadChunks(t *testing.T) {
	w := newWS(t)
	ten := blob.MustFromSlice([]float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 2, 5)
	w.Feed("w", ten)
	for _, tc := range []struct {
		chunk int64
		keys  []string
	}{
		{4, []string{"w#%0", "w#%1", "w#%2"}},
		{5, []string{"w#%0", "w#%1"}},
		{0, []string{"w#%0"}}, // no chunking
		{-1, []string{"w#%0"}},
	} {
		for _, typ := range persist.DBTypes() {
			db := fmt.Sprintf("chunk%d_%s", tc.chunk, typ)
			mustRun(t, w, saveDef(typ, db, []string{"w"}, netdef.ArgInt("chunk_size", tc.chunk)))
			recs, err := dbtest.ReadAll(typ, filepath.Join(w.Root, db))
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, r := range recs {
				keys = append(keys, r.Key)
			}
			if !slices.Equal(keys, tc.keys) {
				t.Errorf("%s chunk_size %d: keys %q, want %q", typ, tc.chunk, keys, tc.keys)
			}
			fresh := optest.NewWorkspace()
			fresh.Root = w.Root
			mustRun(t, fresh, loadDef(typ, db, []string{"w"}))
			if !sameTensor(fresh.Tensor("w"), ten) {
				t.Errorf("%s chunk_size %d: loaded %v", typ, tc.chunk, blob.Data[float32](fresh.Tensor("w")))
			}
		}
	}
	// Chunks in any order: reverse the records of the 3-chunk minidb.
	recs, err := dbtest.ReadAll("minidb", filepath.Join(w.Root, "chunk4_minidb"))
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(recs)
	dbtest.WriteAll(t, "minidb", filepath.Join(w.Root, "reversed"), persist.ModeNew, recs...)
	fresh := optest.NewWorkspace()
	fresh.Root = w.Root
	mustRun(t, fresh, loadDef("minidb", "reversed", []string{"w"}))
	if !sameTensor(fresh.Tensor("w"), ten) {
		t.Errorf("reversed chunks: loaded %v", blob.Data[float32](fresh.Tensor("w")))
	}
}

func TestSaveLoadAboveDefaultChunkSize(t *testing.T) {
	n := blob.DefaultChunkSize + 3
	data := make([]float32, n)
	for i := range data {
		data[i] = float32(i)*0.5 - 7
	}
	w := newWS(t)
	w.Feed("big", blob.MustFromSlice(data, n))
	mustRun(t, w, saveDef("minidb", "big.minidb", []string{"big"}))
	recs, err := dbtest.ReadAll("minidb", filepath.Join(w.Root, "big.minidb"))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].Key != "big#%0" || recs[1].Key != "big#%1" {
		t.Fatalf("records: %d, first key %q", len(recs), recs[0].Key)
	}
	var second netdef.BlobProto
	if err := proto.Unmarshal(recs[1].Value, &second); err != nil {
		t.Fatal(err)
	}
	if s := second.GetTensor().GetSegment(); s.GetBegin() != int64(blob.DefaultChunkSize) || s.GetEnd() != int64(n) {
		t.Errorf("second chunk segment %v", s)
	}
	fresh := optest.NewWorkspace()
	fresh.Root = w.Root
	mustRun(t, fresh, loadDef("minidb", "big.minidb", []string{"big"}))
	if !sameTensor(fresh.Tensor("big"), w.Tensor("big")) {
		t.Error("the 1,000,003-element tensor did not round-trip")
	}
}

func TestLoadBadRecords(t *testing.T) {
	w := newWS(t)
	w.Feed("w", blob.MustFromSlice([]float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 10))
	w.Feed("v", blob.MustFromSlice([]float32{1}, 1))
	mustRun(t, w, saveDef("minidb", "good", []string{"w"}, netdef.ArgInt("chunk_size", 4)))
	mustRun(t, w, saveDef("minidb", "other", []string{"w"}))
	mustRun(t, w, saveDef("badger", "goodb", []string{"w"}))
	mustRun(t, w, saveDef("minidb", "v", []string{"v"}))
	good, _ := os.ReadFile(filepath.Join(w.Root, "good"))
	recs, err := dbtest.ReadAll("minidb", filepath.Join(w.Root, "good"))
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte) string {
		os.WriteFile(filepath.Join(w.Root, name), data, 0o644)
		return name
	}
	// writeRecs writes recs, in this order, into the minidb name.
	writeRecs := func(name string, recs ...dbtest.Record) string {
		dbtest.WriteAll(t, "minidb", filepath.Join(w.Root, name), persist.ModeNew, recs...)
		return name
	}
	// The good DB with the value of its second record overwritten.
	corrupt := []dbtest.Record{recs[0], {Key: recs[1].Key, Value: bytes.Repeat([]byte{0xff}, len(recs[1].Value))}, recs[2]}
	str := dbtest.Record{Key: "s", Value: handBlob("s", "std::string", nil, []byte("x"))}
	for _, tc := range []struct {
		name    string
		def     *netdef.OperatorDef
		outputs []string
		want    []string
	}{
		{"truncated", loadDef("minidb", write("trunc", good[:len(good)-3]), []string{"w"}), nil, []string{"truncated record at offset", "trunc"}},
		{"corrupted", loadDef("minidb", writeRecs("corrupt", corrupt...), []string{"w"}), nil, []string{"Couldn't parse Proto", `key "w#%1"`}},
		{"missing chunk", loadDef("minidb", writeRecs("gap", recs[0], recs[2]), []string{"w"}), nil, []string{"Data size mismatch for blob w. Expected: 10 Read: 6"}},
		{"extra chunk", loadDef("minidb", writeRecs("extra", recs[0], recs[1], recs[2], recs[1]), []string{"w"}, netdef.ArgInt("load_all", 1)), nil, []string{"Found an extra part for an already filled tensor: w"}},
		{"parts too big", loadDef("minidb", writeRecs("big", recs[0], dbtest.Record{Key: "w#%1", Value: handBlob("w", "Tensor", handTensor("w", []int64{10}, []float32{1, 2, 3, 4, 5, 6, 7, 8}, []int64{2, 10}), nil)}), []string{"w"}), nil, []string{"Tensor parts are bigger than target size for tensor: w"}},
		{"no segment", loadDef("minidb", writeRecs("noseg", recs[0], dbtest.Record{Key: "w#%1", Value: handBlob("w", "Tensor", handTensor("w", []int64{10}, make([]float32, 10), nil), nil)}), []string{"w"}), nil, []string{"Partial tensor must have a segment: w"}},
		{"chunk dims differ", loadDef("minidb", writeRecs("dims", recs[0], dbtest.Record{Key: "w#%1", Value: handBlob("w", "Tensor", handTensor("w", []int64{2, 5}, []float32{1}, []int64{4, 5}), nil)}), []string{"w"}), nil, []string{"chunk of tensor w"}},
		{"field size", loadDef("minidb", writeRecs("field", dbtest.Record{Key: "w#%0", Value: handBlob("w", "Tensor", handTensor("w", []int64{3}, []float32{1, 2}, []int64{0, 3}), nil)}), []string{"w"}), nil, []string{"Incorrect proto field size"}},
		{"string twice", loadDef("minidb", writeRecs("str2", str, str), []string{"s"}, netdef.ArgInt("load_all", 1)), nil, []string{"Blob duplicated: s"}},
		{"duplicate across dbs", netdef.NewOperator("Load", nil, []string{"w"}, netdef.ArgStrings("dbs", "good", "other"), netdef.ArgString("db_type", "minidb"), netdef.ArgInt("allow_incomplete", 1)), nil, []string{"Duplicate Key w is found!"}},
		{"duplicate across dbs, load_all", netdef.NewOperator("Load", nil, nil, netdef.ArgStrings("dbs", "v", "good", "other"), netdef.ArgString("db_type", "minidb"), netdef.ArgInt("load_all", 1)), nil, []string{"Duplicate Key w is found!"}},
		{"minidb read as badger", loadDef("badger", "good", []string{"w"}), nil, []string{"Cannot open db for reading", "not a directory"}},
		{"badger read as minidb", loadDef("minidb", "goodb", []string{"w"}), nil, []string{"Cannot open file", "is a directory"}},
		{"garbage file", loadDef("minidb", write("garbage", []byte("this is not a minidb file at all")), []string{"w"}), nil, []string{"minidb", "garbage"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fresh := optest.NewWorkspace()
			fresh.Root = w.Root
			wantErr(t, fresh, tc.def, tc.want...)
			// The good DBs still load afterwards.
			mustRun(t, fresh, loadDef("minidb", "good", []string{"w"}))
			mustRun(t, fresh, loadDef("badger", "goodb", []string{"w"}))
			if !sameTensor(fresh.Tensor("w"), w.Tensor("w")) {
				t.Fatal("the good DB no longer loads the same tensor")
			}
		})
	}
}

func TestLoadMultipleDBs(t *testing.T) {
	for _, typ := range persist.DBTypes() {
		w := newWS(t)
		w.Feed("a", blob.MustFromSlice([]float32{1}, 1))
		w.Feed("b", blob.MustFromSlice([]int32{2}, 1))
		mustRun(t, w, saveDef(typ, "da", []string{"a"}))
		mustRun(t, w, saveDef(typ, "db", []string{"b"}))
		fresh := optest.NewWorkspace()
		fresh.Root = w.Root
		mustRun(t, fresh, netdef.NewOperator("Load", nil, []string{"a", "b"}, netdef.ArgStrings("dbs", "da", "db"), netdef.ArgString("db_type", typ)))
		if !sameTensor(fresh.Tensor("a"), w.Tensor("a")) || !sameTensor(fresh.Tensor("b"), w.Tensor("b")) {
			t.Errorf("%s: loading from two DBs", typ)
		}
	}
}

func TestLoadKeepDevice(t *testing.T) {
	w := newWS(t)
	gpu := blob.MustFromSlice([]float32{1, 2}, 2)
	gpu.SetDevice(netdef.NewDeviceOption(netdef.CUDA, 1))
	w.CreateBlob("g").Set(gpu)
	mustRun(t, w, saveDef("minidb", "dev", []string{"g"}))
	for _, keep := range []int64{0, 1} {
		fresh := optest.NewWorkspace()
		fresh.Root = w.Root
		mustRun(t, fresh, loadDef("minidb", "dev", []string{"g"}, netdef.ArgInt("keep_device", keep)))
		d := fresh.Tensor("g").Device()
		if keep == 0 && d != nil {
			t.Errorf("keep_device=0: the tensor stays on %v, want the CPU", d)
		}
		if keep == 1 && (d.Type() != netdef.CUDA || d.GetDeviceId() != 1) {
			t.Errorf("keep_device=1: device %v, want CUDA 1", d)
		}
	}
}

func TestSavePaths(t *testing.T) {
	w := newWS(t)
	w.Feed("a", blob.MustFromSlice([]float32{1}, 1))
	mustRun(t, w, saveDef("minidb", "rel.minidb", []string{"a"}))
	if _, err := os.Stat(filepath.Join(w.Root, "rel.minidb")); err != nil {
		t.Errorf("relative path must resolve against the root folder: %v", err)
	}
	abs := filepath.Join(t.TempDir(), "abs.minidb")
	mustRun(t, w, saveDef("minidb", abs, []string{"a"}, netdef.ArgInt("absolute_path", 1)))
	mustRun(t, w, saveDef("minidb", abs+"2", []string{"a"}))
	for _, p := range []string{abs, abs + "2"} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("absolute path %s: %v", p, err)
		}
	}
	// Badger is the default db_type.
	mustRun(t, w, netdef.NewOperator("Save", []string{"a"}, nil, netdef.ArgString("db", "dflt")))
	if !persist.DBExists("badger", filepath.Join(w.Root, "dflt")) {
		t.Error("the default db_type must be badger")
	}
	fresh := optest.NewWorkspace()
	fresh.Root = w.Root
	mustRun(t, fresh, netdef.NewOperator("Load", nil, []string{"a"}, netdef.ArgString("db", "dflt")))
}

func TestDBExistsOp(t *testing.T) {
	w := newWS(t)
	w.Feed("a", blob.MustFromSlice([]float32{1}, 1))
	mustRun(t, w, saveDef("minidb", "m", []string{"a"}))
	mustRun(t, w, saveDef("badger", "b", []string{"a"}))
	for _, tc := range []struct {
		typ, name string
		want      bool
	}{
		{"minidb", "m", true}, {"badger", "b", true}, {"minidb", "nope", false}, {"badger", "nope", false},
		{"badger", "m", false}, {"minidb", "b", false}, {"", "m", false},
	} {
		def := netdef.NewOperator("DBExists", nil, []string{"e"}, netdef.ArgString("db_name", tc.name))
		if tc.typ != "" {
			def.Arg = append(def.Arg, netdef.ArgString("db_type", tc.typ))
		}
		mustRun(t, w, def)
		e := w.Tensor("e")
		if e.DataType() != blob.Bool || e.NumDims() != 0 || blob.Data[bool](e)[0] != tc.want {
			t.Errorf("DBExists(%s, %s) = %v %v, want scalar %v", tc.typ, tc.name, e, blob.Data[bool](e), tc.want)
		}
	}
	wantErr(t, w, netdef.NewOperator("DBExists", nil, []string{"e"}), "db_name")
}

func TestCheckpointOp(t *testing.T) {
	for _, typ := range []string{"Checkpoint", "Snapshot"} {
		w := newWS(t)
		w.Feed("w", blob.MustFromSlice([]float32{1, 2}, 2))
		w.Feed("iter", blob.MustFromSlice([]int64{0}, 1))
		def := netdef.NewOperator(typ, []string{"iter", "w"}, nil, netdef.ArgString("db", "ckpt_%05lld.db"),
			netdef.ArgInt("every", 2), netdef.ArgString("db_type", "minidb"))
		op, err := operators.Create(def, w, -1)
		if err != nil {
			t.Fatal(err)
		}
		for i := range int64(5) {
			blob.Data[int64](w.Tensor("iter"))[0] = i
			blob.Data[float32](w.Tensor("w"))[0] = float32(i)
			if err := op.Run(); err != nil {
				t.Fatal(err)
			}
		}
		entries, _ := os.ReadDir(w.Root)
		var files []string
		for _, e := range entries {
			files = append(files, e.Name())
		}
		if want := []string{"ckpt_00000.db", "ckpt_00002.db", "ckpt_00004.db"}; !slices.Equal(files, want) {
			t.Fatalf("%s wrote %q, want %q", typ, files, want)
		}
		fresh := optest.NewWorkspace()
		fresh.Root = w.Root
		mustRun(t, fresh, loadDef("minidb", "ckpt_00002.db", []string{"iter", "w"}))
		if blob.Data[int64](fresh.Tensor("iter"))[0] != 2 || blob.Data[float32](fresh.Tensor("w"))[0] != 2 {
			t.Errorf("%s: checkpoint 2 holds iter %v, w %v", typ, blob.Data[int64](fresh.Tensor("iter")), blob.Data[float32](fresh.Tensor("w")))
		}
	}
	w := newWS(t)
	w.Feed("f", blob.MustFromSlice([]float32{1}, 1))
	w.Feed("e", blob.MustFromSlice([]int64{}, 0))
	for _, tc := range []struct {
		def  *netdef.OperatorDef
		want string
	}{
		{netdef.NewOperator("Checkpoint", []string{"f"}, nil), "Must specify a checkpoint file pattern."},
		{netdef.NewOperator("Checkpoint", []string{"f"}, nil, netdef.ArgString("db", "c%d"), netdef.ArgInt("every", 0)), "every=0"},
		{netdef.NewOperator("Checkpoint", []string{"f"}, nil, netdef.ArgString("db", "c%s")), "unsupported conversion"},
		{netdef.NewOperator("Checkpoint", []string{"f"}, nil, netdef.ArgString("db", "c%d_%d")), "more than one conversion"},
		{netdef.NewOperator("Checkpoint", []string{"f"}, nil, netdef.ArgString("db", "c%d")), "want INT64"},
		{netdef.NewOperator("Checkpoint", []string{"e"}, nil, netdef.ArgString("db", "c%d")), "is empty"},
	} {
		wantErr(t, w, tc.def, tc.want)
	}
}

// BenchmarkSaveLoad saves and loads one 64 MiB float32 tensor (67 chunks
// of the default size) per DB type; the MB/s count the tensor's bytes.
func BenchmarkSaveLoad(b *testing.B) {
	const n = 16 << 20
	data := make([]float32, n)
	for i := range data {
		data[i] = float32(i)
	}
	for _, typ := range persist.DBTypes() {
		w := newWS(b)
		w.Feed("p", blob.MustFromSlice(data, n))
		b.Run("save/"+typ, func(b *testing.B) {
			op, err := operators.Create(saveDef(typ, "bench", []string{"p"}), w, -1)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(4 * n)
			for range b.N {
				if err := op.Run(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("load/"+typ, func(b *testing.B) {
			op, err := operators.Create(loadDef(typ, "bench", []string{"p"}), w, -1)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(4 * n)
			for range b.N {
				if err := op.Run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
