package reduce

import (
	"math"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// naiveFrontBack reduces the first (front) or last n dims of x with the
// reference reducer of kind ("Sum", "Mean", "Max"); lengths, when given,
// limits each reduction to the first lengths[b] of its elements in
// row-major order of the reduced dims (n must then be 1).
func naiveFrontBack(x []float64, dims []int, front bool, n int, kind string, lengths []int32) ([]float64, []int) {
	axes := make([]int, n)
	for i := range axes {
		axes[i] = i
		if !front {
			axes[i] = len(dims) - n + i
		}
	}
	if n == 0 {
		return x, dims
	}
	if lengths == nil {
		return naiveReduce(x, dims, axes, false, refReducers["Reduce"+kind])
	}
	// With lengths (n == 1): drop the elements past each length, then reduce.
	axis := axes[0]
	kept := append([]int(nil), dims...)
	kept[axis] = 1
	groups := make([][]float64, prod(kept))
	for f := range x {
		idx := unravel(f, dims)
		pos := idx[axis]
		idx[axis] = 0
		b := ravel(idx, kept)
		if pos < int(lengths[b]) {
			groups[b] = append(groups[b], x[f])
		}
	}
	y := make([]float64, len(groups))
	for b, g := range groups {
		if len(g) > 0 || kind == "Sum" {
			y[b] = refReducers["Reduce"+kind](g)
		}
	}
	out := append(append([]int(nil), dims[:axis]...), dims[axis+1:]...)
	return y, out
}

func TestFrontBackReductions(t *testing.T) {
	dims := []int{2, 3, 4}
	x := distinct(prod(dims), 5)
	for _, side := range []string{"Front", "Back"} {
		for _, kind := range []string{"Sum", "Mean", "Max"} {
			typ := "Reduce" + side + kind
			for n := 0; n <= len(dims); n++ {
				def := netdef.NewOperator(typ, []string{"X"}, []string{"Y"}, netdef.ArgInt("num_reduce_dim", int64(n)))
				out, err := optest.RunOp(def, optest.F32(x, dims...))
				if err != nil {
					t.Fatalf("%s n=%d: %v", typ, n, err)
				}
				want, wantDims := naiveFrontBack(optest.F32(x).AsFloat64s(), dims, side == "Front", n, kind, nil)
				checkDims(t, typ, out[0].Dims(), wantDims)
				optest.CheckClose(t, typ, out[0].AsFloat64s(), want, 1e-5)
			}
			// With lengths: front reduces dim 0 (length 2), back dim 2 (length 4).
			lengths := []int32{2, 1, 0, 2, 2, 1, 1, 0, 2, 2, 1, 2}
			if side == "Back" {
				lengths = []int32{4, 0, 1, 3, 2, 4}
			}
			def := netdef.NewOperator(typ, []string{"X", "lengths"}, []string{"Y"})
			out, err := optest.RunOp(def, optest.F32(x, dims...), blob.MustFromSlice(lengths))
			if err != nil {
				t.Fatalf("%s with lengths: %v", typ, err)
			}
			want, wantDims := naiveFrontBack(optest.F32(x).AsFloat64s(), dims, side == "Front", 1, kind, lengths)
			if kind == "Max" { // empty reductions give the lowest float32
				for b, l := range lengths {
					if l == 0 {
						want[b] = -math.MaxFloat32
					}
				}
			}
			checkDims(t, typ+" with lengths", out[0].Dims(), wantDims)
			optest.CheckClose(t, typ+" with lengths", out[0].AsFloat64s(), want, 1e-5)
		}
	}
}

func TestFrontBackIntTypes(t *testing.T) {
	x := []int32{1, 2, 3, 4, 5, 6}
	for _, tc := range []struct {
		typ  string
		want []float64
	}{
		{"ReduceFrontSum", []float64{5, 7, 9}},
		{"ReduceBackSum", []float64{6, 15}},
		{"ReduceFrontMean", []float64{2, 3, 4}}, // integer division
		{"ReduceBackMean", []float64{2, 5}},
	} {
		def := netdef.NewOperator(tc.typ, []string{"X"}, []string{"Y"})
		for _, in := range []*blob.Tensor{blob.MustFromSlice(x, 2, 3), blob.MustFromSlice([]int64{1, 2, 3, 4, 5, 6}, 2, 3)} {
			out, err := optest.RunOp(def, in)
			if err != nil {
				t.Fatal(err)
			}
			if out[0].DataType() != in.DataType() {
				t.Errorf("%s: output type %v, want %v", tc.typ, out[0].DataType(), in.DataType())
			}
			optest.CheckClose(t, tc.typ, out[0].AsFloat64s(), tc.want, 0)
		}
	}
}

func TestFrontBackGradientDefs(t *testing.T) {
	for _, side := range []string{"Front", "Back"} {
		for _, kind := range []string{"Sum", "Mean", "Max"} {
			typ := "Reduce" + side + kind
			arg := netdef.ArgInt("num_reduce_dim", 1)
			in := []string{"Y_grad", "X"}
			if kind == "Max" {
				in = append(in, "Y")
			}
			checkGradientDef(t, netdef.NewOperator(typ, []string{"X"}, []string{"Y"}, arg),
				optest.GradOp(typ+"Gradient", in, []string{"X_grad"}, arg))
			checkGradientDef(t, netdef.NewOperator(typ, []string{"X", "len"}, []string{"Y"}, arg),
				optest.GradOp(typ+"Gradient", append(in, "len"), []string{"X_grad"}, arg))
		}
	}
}

func TestFrontBackGradients(t *testing.T) {
	var cases []gradientCase
	for _, side := range []string{"Front", "Back"} {
		for _, kind := range []string{"Sum", "Mean", "Max"} {
			typ := "Reduce" + side + kind
			for n := int64(0); n <= 3; n++ {
				cases = append(cases, gradientCase{
					name:   typ,
					def:    netdef.NewOperator(typ, []string{"X"}, []string{"Y"}, netdef.ArgInt("num_reduce_dim", n)),
					inputs: []*blob.Tensor{optest.F32(distinct(24, uint64(n)), 2, 3, 4)},
				})
			}
			lengths := []int32{2, 1, 0, 2, 2, 1, 1, 0, 2, 2, 1, 2}
			if side == "Back" {
				lengths = []int32{4, 0, 1, 3, 2, 4}
			}
			if kind == "Max" {
				// No empty reductions: an empty max (the lowest float)
				// would swamp the loss.
				for i, l := range lengths {
					lengths[i] = max(l, 1)
				}
			}
			cases = append(cases, gradientCase{
				name:   typ + " with lengths",
				def:    netdef.NewOperator(typ, []string{"X", "lengths"}, []string{"Y"}),
				inputs: []*blob.Tensor{optest.F32(distinct(24, 11), 2, 3, 4), blob.MustFromSlice(lengths)},
			})
		}
	}
	runGradientChecks(t, cases)
}

func TestFrontBackGradientShapeInput(t *testing.T) {
	// Older models pass the forward input's shape (int64) instead of X.
	def := netdef.NewOperator("ReduceBackMeanGradient", []string{"dY", "shape"}, []string{"dX"})
	out, err := optest.RunOp(def, optest.F32([]float64{4, 8}), blob.MustFromSlice([]int64{2, 4}))
	if err != nil {
		t.Fatal(err)
	}
	checkDims(t, "dX", out[0].Dims(), []int{2, 4})
	optest.CheckClose(t, "dX", out[0].AsFloat64s(), []float64{1, 1, 1, 1, 2, 2, 2, 2}, 0)
}

func TestFrontBackErrors(t *testing.T) {
	x := optest.F32(distinct(24, 1), 2, 3, 4)
	for _, tc := range []struct {
		name   string
		def    *netdef.OperatorDef
		inputs []*blob.Tensor
		want   string
	}{
		{"num_reduce_dim range", netdef.NewOperator("ReduceFrontSum", []string{"X"}, []string{"Y"}, netdef.ArgInt("num_reduce_dim", 4)), []*blob.Tensor{x}, "num_reduce_dim"},
		{"lengths count", netdef.NewOperator("ReduceBackSum", []string{"X", "L"}, []string{"Y"}), []*blob.Tensor{x, blob.MustFromSlice([]int32{1, 2})}, `"L"`},
		{"lengths value", netdef.NewOperator("ReduceBackMean", []string{"X", "L"}, []string{"Y"}), []*blob.Tensor{x, blob.MustFromSlice([]int32{1, 2, 3, 4, 5, 6})}, `"L"`},
		{"lengths type", netdef.NewOperator("ReduceFrontMax", []string{"X", "L"}, []string{"Y"}), []*blob.Tensor{x, blob.MustFromSlice(make([]int64, 12))}, `"L"`},
		{"lengths with two dims", netdef.NewOperator("ReduceFrontSum", []string{"X", "L"}, []string{"Y"}, netdef.ArgInt("num_reduce_dim", 2)), []*blob.Tensor{x, blob.MustFromSlice(make([]int32, 4))}, "num_reduce_dim"},
		{"int max", netdef.NewOperator("ReduceBackMax", []string{"X"}, []string{"Y"}), []*blob.Tensor{blob.MustFromSlice([]int32{1, 2})}, `"X"`},
		{"gradient dY size", netdef.NewOperator("ReduceFrontSumGradient", []string{"dY", "X"}, []string{"dX"}), []*blob.Tensor{optest.F32(distinct(5, 1)), x}, `"dY"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := optest.RunOp(tc.def, tc.inputs...)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.def.GetType()) {
				t.Errorf("error %v, want one naming %s and %s", err, tc.def.GetType(), tc.want)
			}
		})
	}
}

// TestFrontBackGradientsOnEmpty: an input with an empty dimension gives an
// empty dX, at once however many rows of no columns it has, and dY (and Y
// for max) must still have the forward output's size.
func TestFrontBackGradientsOnEmpty(t *testing.T) {
	f := func(dims ...int) *blob.Tensor {
		x, err := blob.New(blob.Float32, dims...)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	for _, tc := range []struct {
		name   string
		typ    string
		inputs []*blob.Tensor
		want   string // "": dX is like the second input
	}{
		{"back sum, no columns", "ReduceBackSumGradient", []*blob.Tensor{f(4, 3), f(4, 3, 0)}, ""},
		{"back mean, no columns", "ReduceBackMeanGradient", []*blob.Tensor{f(4, 3), f(4, 3, 0)}, ""},
		{"back max, no columns", "ReduceBackMaxGradient", []*blob.Tensor{f(4, 3), f(4, 3, 0), f(4, 3)}, ""},
		{"front sum, no rows", "ReduceFrontSumGradient", []*blob.Tensor{f(3), f(0, 3)}, ""},
		{"front max, no columns", "ReduceFrontMaxGradient", []*blob.Tensor{f(2, 0), f(3, 2, 0), f(2, 0)}, ""},
		{"front sum, 2^40 rows of no columns", "ReduceFrontSumGradient", []*blob.Tensor{f(0), f(1<<40, 0)}, ""},
		{"back mean, no rows of 2^40 columns", "ReduceBackMeanGradient", []*blob.Tensor{f(0), f(0, 1<<40)}, ""},
		{"back sum, empty dY", "ReduceBackSumGradient", []*blob.Tensor{f(4, 3, 0), f(4, 3, 0)}, `gradient input "in0" has 0 elements, want 12`},
		{"back max, empty dY", "ReduceBackMaxGradient", []*blob.Tensor{f(1, 0), f(1, 0), f(1, 0)}, `gradient input "in0" has 0 elements, want 1`},
		{"back max, empty Y", "ReduceBackMaxGradient", []*blob.Tensor{f(1), f(1, 0), f(1, 0)}, `input "in2" has 0 elements, want 1`},
	} {
		names := []string{"in0", "in1", "in2"}[:len(tc.inputs)]
		out, err := optest.RunOp(netdef.NewOperator(tc.typ, names, []string{"dX"}), tc.inputs...)
		if tc.want != "" {
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		checkDims(t, tc.name, out[0].Dims(), tc.inputs[1].Dims())
	}
}
