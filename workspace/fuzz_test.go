package workspace_test

import (
	"encoding/binary"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/workspace"
)

var fuzzTypes = []blob.DataType{blob.Float32, blob.Float64, blob.Float16, blob.Int8, blob.Int16, blob.Int32, blob.Int64, blob.Uint8, blob.Uint16, blob.Bool, blob.String}

// FuzzFeedBlob feeds tensors of arbitrary type and shape (including zero and
// absurd dimensions), fetches them back, and runs a few operators on them,
// under a 256 MiB memory budget. Nothing may panic: a feed either fails
// cleanly or round-trips exactly, and an operator either runs or returns an
// error that is not a recovered panic. An absurd dimension beside a 0 makes
// an empty tensor, which the operators must handle without looping over,
// or allocating for, the absurd one.
func FuzzFeedBlob(f *testing.F) {
	old := blob.SetMemoryBudget(256 << 20)
	f.Cleanup(func() { blob.SetMemoryBudget(old) })
	f.Add(byte(0), []byte{0, 255, 3}, []byte{})
	f.Add(byte(0), []byte{2, 3}, []byte("abcdefgh"))
	f.Add(byte(1), []byte{}, []byte{1, 2, 3, 4, 5, 6, 7, 8})
	f.Add(byte(9), []byte{0, 5}, []byte{})
	f.Add(byte(10), []byte{255, 255, 255, 255}, []byte{1})
	f.Add(byte(5), []byte{1, 1, 1, 1, 1, 1}, []byte{9, 9})
	f.Fuzz(func(t *testing.T, typ byte, dims []byte, payload []byte) {
		dt := fuzzTypes[int(typ)%len(fuzzTypes)]
		shape := make([]int, len(dims)%5)
		for i := range shape {
			shape[i] = int(dims[i]) % 17
			if dims[i] > 200 {
				// Past the memory budget: an error, not a crash, unless
				// another dimension is 0.
				shape[i] = 1 << 45
			}
		}
		x, err := blob.New(dt, shape...)
		if err != nil {
			return
		}
		fillFromBytes(x, payload)
		ws := workspace.New("")
		if err := ws.FeedBlob("x", x); err != nil {
			t.Fatalf("feeding a valid %v tensor: %v", x, err)
		}
		got, err := ws.FetchBlob("x")
		if err != nil {
			t.Fatal(err)
		}
		if got.DataType() != dt || !reflect.DeepEqual(got.Shape(), x.Shape()) || !sameElements(got, x) {
			t.Fatalf("round trip changed %v into %v", x, got)
		}
		_ = ws.FeedBlob("w", blob.MustFromSlice([]float32{1, 2}, 1, 2))
		_ = ws.FeedBlob("b", blob.MustFromSlice([]float32{0}, 1))
		for _, op := range []*netdef.OperatorDef{
			netdef.NewOperator("Relu", []string{"x"}, []string{"y"}),
			netdef.NewOperator("Softmax", []string{"x"}, []string{"y"}),
			netdef.NewOperator("Sum", []string{"x", "x"}, []string{"y"}),
			netdef.NewOperator("Add", []string{"x", "b"}, []string{"y"}, netdef.ArgInt("broadcast", 1)),
			netdef.NewOperator("FC", []string{"x", "w", "b"}, []string{"y"}),
			netdef.NewOperator("Concat", []string{"x", "x"}, []string{"y", "split"}, netdef.ArgInt("axis", 1)),
			netdef.NewOperator("Transpose", []string{"x"}, []string{"y"}),
			netdef.NewOperator("Reshape", []string{"x"}, []string{"y", "old"}, netdef.ArgInts("shape", -1, 2)),
			netdef.NewOperator("ReduceSum", []string{"x"}, []string{"y"}, netdef.ArgInts("axes", 0)),
			netdef.NewOperator("AveragedLoss", []string{"x"}, []string{"y"}),
			netdef.NewOperator("Cast", []string{"x"}, []string{"y"}, netdef.ArgInt("to", int64(netdef.TensorProto_FLOAT))),
			netdef.NewOperator("ArgMax", []string{"x"}, []string{"y"}, netdef.ArgInt("axis", 1)),
			netdef.NewOperator("Tile", []string{"x"}, []string{"y"}, netdef.ArgInt("tiles", 1<<40)),
			netdef.NewOperator("TopK", []string{"x"}, []string{"y", "i"}, netdef.ArgInt("k", 1<<31)),
			netdef.NewOperator("RowwiseMax", []string{"x"}, []string{"y"}),
			netdef.NewOperator("ReduceFrontSum", []string{"x"}, []string{"y"}),
			netdef.NewOperator("ExpandDims", []string{"x"}, []string{"y"}, netdef.ArgInts("dims", 0, 1<<62)),
		} {
			if err := ws.RunOperatorOnce(op); err != nil && strings.Contains(err.Error(), "panic") {
				t.Fatalf("%s on %v panicked: %v", op.GetType(), x, err)
			}
		}
	})
}

// sameElements compares elements bit for bit, so that NaNs compare equal.
func sameElements(a, b *blob.Tensor) bool {
	switch a.DataType() {
	case blob.Float32:
		x, y := blob.Data[float32](a), blob.Data[float32](b)
		for i := range x {
			if math.Float32bits(x[i]) != math.Float32bits(y[i]) {
				return false
			}
		}
		return true
	case blob.Float64:
		x, y := blob.Data[float64](a), blob.Data[float64](b)
		for i := range x {
			if math.Float64bits(x[i]) != math.Float64bits(y[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a.Raw(), b.Raw())
}

// fillFromBytes sets x's elements from payload, cycling through it.
func fillFromBytes(x *blob.Tensor, payload []byte) {
	if len(payload) == 0 {
		return
	}
	at := func(i, n int) []byte {
		buf := make([]byte, n)
		for k := range buf {
			buf[k] = payload[(i*n+k)%len(payload)]
		}
		return buf
	}
	switch x.DataType() {
	case blob.Float32:
		for i, d := 0, blob.Data[float32](x); i < len(d); i++ {
			d[i] = math.Float32frombits(binary.LittleEndian.Uint32(at(i, 4)))
		}
	case blob.Float64:
		for i, d := 0, blob.Data[float64](x); i < len(d); i++ {
			d[i] = math.Float64frombits(binary.LittleEndian.Uint64(at(i, 8)))
		}
	case blob.Int32:
		for i, d := 0, blob.Data[int32](x); i < len(d); i++ {
			d[i] = int32(binary.LittleEndian.Uint32(at(i, 4)))
		}
	case blob.Int64:
		for i, d := 0, blob.Data[int64](x); i < len(d); i++ {
			d[i] = int64(binary.LittleEndian.Uint64(at(i, 8)))
		}
	case blob.Uint8:
		for i, d := 0, blob.Data[uint8](x); i < len(d); i++ {
			d[i] = at(i, 1)[0]
		}
	case blob.Bool:
		for i, d := 0, blob.Data[bool](x); i < len(d); i++ {
			d[i] = at(i, 1)[0]&1 == 1
		}
	case blob.String:
		for i, d := 0, blob.Data[string](x); i < len(d); i++ {
			d[i] = string(at(i, 3))
		}
	}
}
