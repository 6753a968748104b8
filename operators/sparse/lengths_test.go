package sparse

import (
	"math"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// refSegments is Caffe2's segment reduction written out in float64: rows
// are the table rows each position reads, lens the segment sizes.
func refSegments(data []float64, block int, rows []int, lens []int, w []float64, kind string) []float64 {
	out := make([]float64, len(lens)*block)
	pos := 0
	for m, l := range lens {
		for j := 0; j < block; j++ {
			acc := 0.0
			if kind == "Max" && l > 0 {
				acc = math.Inf(-1)
			}
			for k := pos; k < pos+l; k++ {
				v := data[rows[k]*block+j]
				switch kind {
				case "WeightedSum":
					acc += w[k] * v
				case "Max":
					acc = math.Max(acc, v)
				default:
					acc += v
				}
			}
			if kind == "Mean" && l > 0 {
				acc /= float64(l)
			}
			out[m*block+j] = acc
		}
		pos += l
	}
	return out
}

func TestSparseLengthsForward(t *testing.T) {
	data := table(5, 3)
	idx := []int{4, 0, 4, 2, 1, 3}
	lens := []int{2, 0, 3, 1}
	w := []float64{0.5, -1, 2, 0.25, 3, -0.75}
	seq := []int{0, 1, 2, 3, 4}
	dense := table(6, 3)
	for _, c := range []struct {
		op   *netdef.OperatorDef
		in   []*blob.Tensor
		want []float64
	}{
		{netdef.NewOperator("SparseLengthsSum", []string{"D", "I", "L"}, []string{"Y"}),
			[]*blob.Tensor{data, i64(4, 0, 4, 2, 1, 3), i32(2, 0, 3, 1)},
			refSegments(data.AsFloat64s(), 3, idx, lens, nil, "Sum")},
		{netdef.NewOperator("SparseLengthsMean", []string{"D", "I", "L"}, []string{"Y"}),
			[]*blob.Tensor{data, i32(4, 0, 4, 2, 1, 3), i32(2, 0, 3, 1)},
			refSegments(data.AsFloat64s(), 3, idx, lens, nil, "Mean")},
		{netdef.NewOperator("SparseLengthsWeightedSum", []string{"D", "W", "I", "L"}, []string{"Y"}),
			[]*blob.Tensor{data, optest.F32(w, 6), i64(4, 0, 4, 2, 1, 3), i64(2, 0, 3, 1)},
			refSegments(data.AsFloat64s(), 3, idx, lens, widen(w), "WeightedSum")},
		{netdef.NewOperator("LengthsSum", []string{"D", "L"}, []string{"Y"}),
			[]*blob.Tensor{dense, i32(2, 0, 3, 1)}, refSegments(dense.AsFloat64s(), 3, []int{0, 1, 2, 3, 4, 5}, lens, nil, "Sum")},
		{netdef.NewOperator("LengthsMean", []string{"D", "L"}, []string{"Y"}),
			[]*blob.Tensor{dense, i32(2, 0, 3, 1)}, refSegments(dense.AsFloat64s(), 3, []int{0, 1, 2, 3, 4, 5}, lens, nil, "Mean")},
		{netdef.NewOperator("LengthsMax", []string{"D", "L"}, []string{"Y"}),
			[]*blob.Tensor{dense, i32(2, 0, 3, 1)}, refSegments(dense.AsFloat64s(), 3, []int{0, 1, 2, 3, 4, 5}, lens, nil, "Max")},
		{netdef.NewOperator("LengthsWeightedSum", []string{"D", "W", "L"}, []string{"Y"}),
			[]*blob.Tensor{dense, optest.F32(w, 6), i32(2, 0, 3, 1)}, refSegments(dense.AsFloat64s(), 3, []int{0, 1, 2, 3, 4, 5}, lens, widen(w), "WeightedSum")},
		{netdef.NewOperator("LengthsSum", []string{"D", "L"}, []string{"Y"}),
			[]*blob.Tensor{table(5, 3), i32(2, 0, 3)}, refSegments(table(5, 3).AsFloat64s(), 3, seq, []int{2, 0, 3}, nil, "Sum")},
	} {
		out := optest.MustRunOp(t, c.op, c.in...)
		if got := out[0].Dims(); got[0] != len(c.want)/3 || got[1] != 3 {
			t.Fatalf("%s: shape %v", c.op.GetType(), got)
		}
		optest.CheckClose(t, c.op.GetType(), out[0].AsFloat64s(), c.want, 1e-5)
	}
}

func widen(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(float32(x))
	}
	return out
}

func TestSparseLengthsGradients(t *testing.T) {
	data := table(5, 3)
	w := optest.F32([]float64{0.5, -1, 2, 0.25, 3, -0.75}, 6)
	idx, lens := i64(4, 0, 4, 2, 1, 3), i32(2, 0, 3, 1)
	op := netdef.NewOperator
	checkSparseGradient(t, op("SparseLengthsSum", []string{"D", "I", "L"}, []string{"Y"}), []*blob.Tensor{data, idx, lens}, 0, 1)
	checkSparseGradient(t, op("SparseLengthsMean", []string{"D", "I", "L"}, []string{"Y"}), []*blob.Tensor{data, idx, lens}, 0, 1)
	checkSparseGradient(t, op("SparseLengthsWeightedSum", []string{"D", "W", "I", "L"}, []string{"Y"}), []*blob.Tensor{data, w, idx, lens}, 0, 2)
	wg := op("SparseLengthsWeightedSum", []string{"D", "W", "I", "L"}, []string{"Y"}, netdef.ArgInt("grad_on_weights", 1))
	checkSparseGradient(t, wg, []*blob.Tensor{data, w, idx, lens}, 0, 2)
	if _, err := optest.CheckGradient(wg, []*blob.Tensor{data, w, idx, lens}, 1, optest.GradientCheck{}); err != nil {
		t.Fatal(err)
	}

	dense := table(6, 3)
	for _, c := range []struct {
		op  *netdef.OperatorDef
		in  []*blob.Tensor
		wrt []int
	}{
		{op("LengthsSum", []string{"D", "L"}, []string{"Y"}), []*blob.Tensor{dense, lens}, []int{0}},
		{op("LengthsMean", []string{"D", "L"}, []string{"Y"}), []*blob.Tensor{dense, lens}, []int{0}},
		{op("LengthsMax", []string{"D", "L"}, []string{"Y"}), []*blob.Tensor{dense, lens}, []int{0}},
		{op("LengthsWeightedSum", []string{"D", "W", "L"}, []string{"Y"}), []*blob.Tensor{dense, w, lens}, []int{0}},
		{op("LengthsWeightedSum", []string{"D", "W", "L"}, []string{"Y"}, netdef.ArgInt("grad_on_weights", 1)), []*blob.Tensor{dense, w, lens}, []int{0, 1}},
	} {
		for _, i := range c.wrt {
			if _, err := optest.CheckGradient(c.op, c.in, i, optest.GradientCheck{}); err != nil {
				t.Fatalf("%s input %d: %v", c.op.GetType(), i, err)
			}
		}
	}
}

// TestGradientDefs pins the gradient operators to Caffe2's names and
// inputs.
func TestGradientDefs(t *testing.T) {
	for _, c := range []struct {
		fwd  *netdef.OperatorDef
		want string
	}{
		{netdef.NewOperator("SparseLengthsSum", []string{"D", "I", "L"}, []string{"Y"}), "SparseLengthsIndicesInGradientSumGradient(Y_grad, L, I)"},
		{netdef.NewOperator("SparseLengthsMean", []string{"D", "I", "L"}, []string{"Y"}), "SparseLengthsMeanGradient(Y_grad, L)"},
		{netdef.NewOperator("SparseLengthsWeightedSum", []string{"D", "W", "I", "L"}, []string{"Y"}), "SparseLengthsWeightedSumGradient(W, Y_grad, L)"},
		{netdef.NewOperator("SparseLengthsWeightedSum", []string{"D", "W", "I", "L"}, []string{"Y"}, netdef.ArgInt("grad_on_weights", 1)),
			"SparseLengthsWeightedSumWithMainInputGradient(W, Y_grad, L, D, I)"},
		{netdef.NewOperator("LengthsSum", []string{"D", "L"}, []string{"Y"}), "LengthsIndicesInGradientSumGradient(Y_grad, L, D)"},
		{netdef.NewOperator("LengthsMax", []string{"D", "L"}, []string{"Y"}), "LengthsMaxWithMainInputAndForwardOutputGradient(Y, Y_grad, L, D)"},
		{netdef.NewOperator("LengthsWeightedSum", []string{"D", "W", "L"}, []string{"Y"}), "LengthsWeightedSumGradient(W, Y_grad, L)"},
		{netdef.NewOperator("SparseToDense", []string{"I", "V", "D"}, []string{"Y"}), "Gather(Y_grad, I)"},
	} {
		gd, err := operators.GetGradientDefs(c.fwd, optest.DenseGradients(c.fwd))
		if err != nil {
			t.Fatal(err)
		}
		g := gd.Ops[0]
		if got := g.GetType() + "(" + strings.Join(g.Input, ", ") + ")"; got != c.want {
			t.Errorf("%s: gradient %s, want %s", c.fwd.GetType(), got, c.want)
		}
	}
}

func TestSegmentErrors(t *testing.T) {
	op := netdef.NewOperator
	for _, c := range []struct {
		op   *netdef.OperatorDef
		in   []*blob.Tensor
		want string
	}{
		{op("SparseLengthsSum", []string{"D", "I", "L"}, []string{"Y"}), []*blob.Tensor{table(3, 2), i64(0, 3), i32(2)}, "out of range"},
		{op("SparseLengthsSum", []string{"D", "I", "L"}, []string{"Y"}), []*blob.Tensor{table(3, 2), i64(0, 1), i32(3)}, "adds up to 3"},
		{op("SparseLengthsSum", []string{"D", "I", "L"}, []string{"Y"}), []*blob.Tensor{table(3, 2), i64(0, 1), i32(3, -1)}, "must be >= 0"},
		{op("SparseLengthsWeightedSum", []string{"D", "W", "I", "L"}, []string{"Y"}), []*blob.Tensor{table(3, 2), f32(1), i64(0, 1), i32(2)}, "WEIGHTS"},
		{op("LengthsSum", []string{"D", "L"}, []string{"Y"}), []*blob.Tensor{table(3, 2), i32(2)}, "has 3 rows"},
		{op("SparseToDense", []string{"I", "V"}, []string{"Y"}), []*blob.Tensor{i32(0, -1), table(2, 2)}, "out of range"},
		{op("SparseToDense", []string{"I", "V", "D"}, []string{"Y"}), []*blob.Tensor{i32(0, 2), table(2, 2), table(2, 1)}, "out of range"},
	} {
		_, err := optest.RunOp(c.op, c.in...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.op.GetType(), err, c.want)
		}
	}
}

func TestSparseToDense(t *testing.T) {
	op := netdef.NewOperator("SparseToDense", []string{"I", "V"}, []string{"Y"})
	out := optest.MustRunOp(t, op, i64(3, 0, 3), optest.F32([]float64{1, 2, 3, 4, 5, 6}, 3, 2))
	if d := out[0].Dims(); len(d) != 2 || d[0] != 4 || d[1] != 2 {
		t.Fatalf("shape %v, want [4 2]", d)
	}
	optest.CheckClose(t, "SparseToDense", out[0].AsFloat64s(), []float64{3, 4, 0, 0, 0, 0, 6, 8}, 0)
	op = netdef.NewOperator("SparseToDense", []string{"I", "V", "D"}, []string{"Y"})
	out = optest.MustRunOp(t, op, i32(1, 1), blob.MustFromSlice([]int32{2, 5}, 2), table(3, 1))
	if got := blob.Data[int32](out[0]); len(got) != 3 || got[0] != 0 || got[1] != 7 || got[2] != 0 {
		t.Fatalf("INT32 SparseToDense = %v, want [0 7 0]", got)
	}
	if _, err := optest.CheckGradient(op, []*blob.Tensor{i32(1, 2, 1), table(3, 2), table(4, 1)}, 1, optest.GradientCheck{}); err != nil {
		t.Fatal(err)
	}
}
