package tensor

import (
	"io"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// TestSteadyStateAllocs checks that a second and later run of every
// operator allocates nothing.
func TestSteadyStateAllocs(t *testing.T) {
	saved := printStderr
	printStderr = io.Discard
	defer func() { printStderr = saved }()
	x, y := []string{"X"}, []string{"Y"}
	cases := []struct {
		name string
		def  *netdef.OperatorDef
		in   []*blob.Tensor
	}{
		{"Copy", op("Copy", x, y), []*blob.Tensor{seq(4, 4)}},
		{"CopyOnDeviceLike", op("CopyOnDeviceLike", []string{"X", "L"}, y), []*blob.Tensor{seq(4), seq(1)}},
		{"EnsureCPUOutput", op("EnsureCPUOutput", x, y), []*blob.Tensor{seq(4)}},
		{"StopGradient", op("StopGradient", x, y), []*blob.Tensor{seq(4)}},
		{"Alias", op("Alias", x, y), []*blob.Tensor{seq(2, 2)}},
		{"Reshape", op("Reshape", x, []string{"Y", "old"}, argIs("shape", 0, -1)), []*blob.Tensor{seq(2, 3, 4)}},
		{"Reshape/input", op("Reshape", []string{"X", "S"}, []string{"Y", "old"}), []*blob.Tensor{seq(2, 3, 4), i32(shp(2), 4, -1)}},
		{"Reshape/in-place", op("Reshape", x, []string{"X", "old"}, argIs("shape", -1)), []*blob.Tensor{seq(2, 3)}},
		{"Flatten", op("Flatten", x, y), []*blob.Tensor{seq(2, 3, 4)}},
		{"FlattenToVec", op("FlattenToVec", x, y), []*blob.Tensor{seq(2, 3)}},
		{"ResizeLike", op("ResizeLike", []string{"X", "L"}, y), []*blob.Tensor{seq(6), seq(2, 3)}},
		{"ExpandDims", op("ExpandDims", x, y, argIs("dims", 0, 2)), []*blob.Tensor{seq(2, 3)}},
		{"Squeeze", op("Squeeze", x, y, argIs("dims", 0)), []*blob.Tensor{seq(1, 3)}},
		{"Shape", op("Shape", x, y, argIs("axes", 1)), []*blob.Tensor{seq(1, 3)}},
		{"Concat", op("Concat", []string{"A", "B", "C"}, []string{"Y", "info"}, argI("axis", 1)), []*blob.Tensor{seq(2, 3), seq(2, 1), seq(2, 2)}},
		{"Concat/add_axis", op("Concat", []string{"A", "B"}, []string{"Y", "info"}, argI("axis", 0), argI("add_axis", 1)), []*blob.Tensor{seq(2, 3), seq(2, 3)}},
		{"Split", op("Split", x, []string{"A", "B"}, argI("axis", 1), argIs("split", 1, 3)), []*blob.Tensor{seq(2, 4)}},
		{"Split/input", op("Split", []string{"X", "S"}, []string{"A", "B"}, argI("axis", 0)), []*blob.Tensor{seq(4), i64(shp(2), 1, 3)}},
		{"Split/equal", op("Split", x, []string{"A", "B"}, argI("axis", 0)), []*blob.Tensor{seq(4, 2)}},
		{"Transpose", op("Transpose", x, y, argIs("axes", 0, 2, 1)), []*blob.Tensor{seq(2, 3, 4)}},
		{"Transpose/default", op("Transpose", x, y), []*blob.Tensor{seq(2, 3, 4)}},
		{"Cast", op("Cast", x, y, argI("to", int64(netdef.TensorProto_INT64))), []*blob.Tensor{seq(8)}},
		{"Cast/from-half", op("Cast", x, y), []*blob.Tensor{halves(shp(2), 1, 2)}},
		{"Cast/from-bool", op("Cast", x, y), []*blob.Tensor{bools(shp(2), true, false)}},
		{"Cast/to-half", op("Cast", x, y, argI("to", int64(netdef.TensorProto_FLOAT16))), []*blob.Tensor{seq(4)}},
		{"Gather", op("Gather", []string{"D", "I"}, y), []*blob.Tensor{seq(5, 3), i32(shp(2, 2), 4, 0, -1, 2)}},
		{"Gather/axis1", op("Gather", []string{"D", "I"}, y, argI("axis", 1)), []*blob.Tensor{seq(5, 3), i64(shp(2), 2, 0)}},
		{"BatchGatherGradient", op("BatchGatherGradient", []string{"D", "I", "G"}, y), []*blob.Tensor{seq(2, 3), i64(shp(2), 2, 0), seq(2, 2)}},
		{"OneHot", op("OneHot", []string{"I", "N"}, y), []*blob.Tensor{i64(shp(3), 0, 2, 1), i64(shp(), 4)}},
		{"Tile", op("Tile", x, y, argI("tiles", 3), argI("axis", 1)), []*blob.Tensor{seq(2, 2)}},
		{"Tile/inputs", op("Tile", []string{"X", "T", "A"}, y), []*blob.Tensor{seq(2, 2), i32(shp(1), 2), i64(shp(1), 0)}},
		{"TileGradient", op("TileGradient", x, y, argI("tiles", 2), argI("axis", 0)), []*blob.Tensor{seq(4, 2)}},
		{"Print", op("Print", x, nil), []*blob.Tensor{seq(3, 2)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { optest.AssertNoAllocs(t, c.def, c.in...) })
	}
}

func BenchmarkConcat(b *testing.B) {
	optest.Benchmark(b, optest.Steady(b, op("Concat", []string{"A", "B"}, []string{"Y", "info"}, argI("axis", 1)), seq(64, 128, 16), seq(64, 64, 16)))
}

func BenchmarkSplit(b *testing.B) {
	optest.Benchmark(b, optest.Steady(b, op("Split", []string{"X"}, []string{"A", "B"}, argI("axis", 1), argIs("split", 128, 64)), seq(64, 192, 16)))
}

func BenchmarkTranspose(b *testing.B) {
	optest.Benchmark(b, optest.Steady(b, op("Transpose", []string{"X"}, []string{"Y"}, argIs("axes", 0, 2, 3, 1)), seq(16, 64, 28, 28)))
}

func BenchmarkGather(b *testing.B) {
	idx := make([]int64, 512)
	for i := range idx {
		idx[i] = int64(i*7919) % 10000
	}
	optest.Benchmark(b, optest.Steady(b, op("Gather", []string{"D", "I"}, []string{"Y"}), seq(10000, 64), i64(shp(512), idx...)))
}

func BenchmarkTile(b *testing.B) {
	optest.Benchmark(b, optest.Steady(b, op("Tile", []string{"X"}, []string{"Y"}, argI("tiles", 8), argI("axis", 1)), seq(256, 1, 256)))
}

func BenchmarkTileGradient(b *testing.B) {
	optest.Benchmark(b, optest.Steady(b, op("TileGradient", []string{"X"}, []string{"Y"}, argI("tiles", 8), argI("axis", 1)), seq(256, 8, 256)))
}

func BenchmarkCast(b *testing.B) {
	optest.Benchmark(b, optest.Steady(b, op("Cast", []string{"X"}, []string{"Y"}, argI("to", int64(netdef.TensorProto_FLOAT16))), seq(256, 1024)))
}

func BenchmarkReshape(b *testing.B) {
	optest.Benchmark(b, optest.Steady(b, op("Reshape", []string{"X"}, []string{"Y", "old"}, argIs("shape", 0, -1)), seq(64, 32, 32)))
}
