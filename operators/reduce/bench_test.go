package reduce

import (
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// steadyOps builds the reduction operators (and some gradients) over a
// b×m×n float32 input X, each already run once.
func steadyOps(t testing.TB, b, m, n int) map[string]operators.Operator {
	w := optest.NewWorkspace()
	x := distinct(b*m*n, 1)
	w.Feed("X", optest.F32(x, b, m, n))
	w.Feed("L", blob.MustFromSlice(make([]int32, b*m)))
	for i := range blob.Data[int32](w.Tensor("L")) {
		blob.Data[int32](w.Tensor("L"))[i] = int32(i % (n + 1))
	}
	defs := []struct {
		name string
		def  *netdef.OperatorDef
	}{
		{"ReduceSum", netdef.NewOperator("ReduceSum", []string{"X"}, []string{"S"}, netdef.ArgInts("axes", 1))},
		{"ReduceMean", netdef.NewOperator("ReduceMean", []string{"X"}, []string{"M"}, netdef.ArgInts("axes", 0, 2))},
		{"ReduceMax", netdef.NewOperator("ReduceMax", []string{"X"}, []string{"Mx"}, netdef.ArgInts("axes", 2))},
		{"ReduceMaxGradient", netdef.NewOperator("ReduceMaxGradient", []string{"Mx", "X", "Mx"}, []string{"dX1"}, netdef.ArgInts("axes", 2))},
		{"ReduceL2", netdef.NewOperator("ReduceL2", []string{"X"}, []string{"L2"})},
		{"ReduceFrontSum", netdef.NewOperator("ReduceFrontSum", []string{"X"}, []string{"F"})},
		{"ReduceFrontMeanGradient", netdef.NewOperator("ReduceFrontMeanGradient", []string{"F", "X"}, []string{"dX2"})},
		{"ReduceBackMax", netdef.NewOperator("ReduceBackMax", []string{"X", "L"}, []string{"B"})},
		{"ReduceBackMaxGradient", netdef.NewOperator("ReduceBackMaxGradient", []string{"B", "X", "B", "L"}, []string{"dX3"})},
		{"SumElements", netdef.NewOperator("SumElements", []string{"X"}, []string{"E"})},
		{"SumSqrElements", netdef.NewOperator("SumSqrElements", []string{"X"}, []string{"E2"})},
		{"SumElementsGradient", netdef.NewOperator("SumElementsGradient", []string{"X", "E"}, []string{"dX4"})},
		{"RowwiseMax", netdef.NewOperator("RowwiseMax", []string{"X"}, []string{"R"})},
		{"ColwiseMax", netdef.NewOperator("ColwiseMax", []string{"X"}, []string{"C"})},
		{"ColwiseMaxGradient", netdef.NewOperator("ColwiseMaxGradient", []string{"X", "C", "C"}, []string{"dX5"})},
		{"ArgMax", netdef.NewOperator("ArgMax", []string{"X"}, []string{"A"}, netdef.ArgInt("axis", 1))},
		{"TopK", netdef.NewOperator("TopK", []string{"X"}, []string{"V", "I", "FI"}, netdef.ArgInt("k", 5))},
		{"TopKGradient", netdef.NewOperator("TopKGradient", []string{"V", "I", "X"}, []string{"dX6"}, netdef.ArgInt("k", 5))},
	}
	ops := map[string]operators.Operator{}
	for _, d := range defs {
		op, err := operators.Create(d.def, w, -1)
		if err != nil {
			t.Fatalf("%s: %v", d.name, err)
		}
		if err := op.Run(); err != nil {
			t.Fatalf("%s: %v", d.name, err)
		}
		ops[d.name] = op
	}
	return ops
}

func TestReductionsDoNotAllocate(t *testing.T) {
	for name, op := range steadyOps(t, 2, 6, 8) {
		t.Run(name, func(t *testing.T) { optest.AssertOpNoAllocs(t, op) })
	}
}

func benchOp(b *testing.B, name string) { optest.Benchmark(b, steadyOps(b, 16, 64, 256)[name]) }

func BenchmarkReduceSumMiddleAxis(b *testing.B)  { benchOp(b, "ReduceSum") }
func BenchmarkReduceMeanOuterAxes(b *testing.B)  { benchOp(b, "ReduceMean") }
func BenchmarkReduceMaxGradient(b *testing.B)    { benchOp(b, "ReduceMaxGradient") }
func BenchmarkReduceFrontSum(b *testing.B)       { benchOp(b, "ReduceFrontSum") }
func BenchmarkReduceBackMaxLengths(b *testing.B) { benchOp(b, "ReduceBackMax") }
func BenchmarkSumSqrElements(b *testing.B)       { benchOp(b, "SumSqrElements") }
func BenchmarkArgMax(b *testing.B)               { benchOp(b, "ArgMax") }
func BenchmarkTopK(b *testing.B)                 { benchOp(b, "TopK") }
