package reduce

import (
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// naiveArg returns the index of the first largest (smallest) element of
// each lane along axis, with the output shape.
func naiveArg(x []float64, dims []int, axis int, largest, keep bool) ([]int64, []int) {
	kept := append([]int(nil), dims...)
	kept[axis] = 1
	best := make([]int64, prod(kept))
	bestV := make([]float64, len(best))
	seen := make([]bool, len(best))
	for f, v := range x {
		idx := unravel(f, dims)
		k := idx[axis]
		idx[axis] = 0
		b := ravel(idx, kept)
		if !seen[b] || (largest && v > bestV[b]) || (!largest && v < bestV[b]) {
			seen[b], best[b], bestV[b] = true, int64(k), v
		}
	}
	out := kept
	if !keep {
		out = append(append([]int{}, dims[:axis]...), dims[axis+1:]...)
	}
	return best, out
}

func TestArgMaxMin(t *testing.T) {
	dims := []int{3, 4, 5}
	x := distinct(60, 2)
	for i := 0; i < 60; i += 7 { // some ties
		x[i] = x[(i+5)%60]
	}
	for _, typ := range []string{"ArgMax", "ArgMin"} {
		for _, axis := range []int{0, 1, 2, -1, -3} {
			for _, keep := range []bool{true, false} {
				def := netdef.NewOperator(typ, []string{"X"}, []string{"I"}, netdef.ArgInt("axis", int64(axis)), netdef.ArgBool("keepdims", keep))
				a := axis
				if a < 0 {
					a += 3
				}
				want, wantDims := naiveArg(optest.F32(x).AsFloat64s(), dims, a, typ == "ArgMax", keep)
				for _, in := range []*blob.Tensor{optest.F32(x, dims...), blob.MustFromSlice(optest.F32(x).AsFloat64s(), dims...)} {
					out, err := optest.RunOp(def, in)
					if err != nil {
						t.Fatal(err)
					}
					if out[0].DataType() != blob.Int64 {
						t.Fatalf("%s: output type %v", typ, out[0].DataType())
					}
					checkDims(t, def.String(), out[0].Dims(), wantDims)
					got := blob.Data[int64](out[0])
					for i := range want {
						if got[i] != want[i] {
							t.Fatalf("%s axis %d: index %d is %d, want %d", typ, axis, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
	out, err := optest.RunOp(netdef.NewOperator("ArgMin", []string{"X"}, []string{"I"}), blob.MustFromSlice([]int32{4, 1, 1, 7, 9, 0}, 2, 3))
	if err != nil {
		t.Fatal(err)
	}
	if got := blob.Data[int64](out[0]); got[0] != 1 || got[1] != 2 {
		t.Errorf("int32 ArgMin = %v, want [1 2]", got)
	}
	checkDims(t, "int32 ArgMin", out[0].Dims(), []int{2, 1})
}

func TestArgErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		def  *netdef.OperatorDef
		in   *blob.Tensor
	}{
		{"axis", netdef.NewOperator("ArgMax", []string{"X"}, []string{"I"}, netdef.ArgInt("axis", 2)), optest.F32(distinct(4, 1), 2, 2)},
		{"scalar", netdef.NewOperator("ArgMin", []string{"X"}, []string{"I"}), blob.Scalar[float32](1)},
		{"empty axis", netdef.NewOperator("ArgMax", []string{"X"}, []string{"I"}), optest.F32(nil, 2, 0)},
		{"bool", netdef.NewOperator("ArgMax", []string{"X"}, []string{"I"}), blob.MustFromSlice([]bool{true})},
	} {
		if _, err := optest.RunOp(tc.def, tc.in); err == nil || !strings.Contains(err.Error(), `"X"`) {
			t.Errorf("%s: error %v, want one naming \"X\"", tc.name, err)
		}
	}
	for _, typ := range []string{"ArgMax", "ArgMin"} {
		def := netdef.NewOperator(typ, []string{"X"}, []string{"I"})
		if _, err := operators.GetGradientDefs(def, optest.DenseGradients(def)); err == nil {
			t.Errorf("%s gradient allowed, want it forbidden", typ)
		}
	}
}

// TestArgOnEmpty: an empty X gives an empty Y at once, however large the
// dims beside its 0 (the kernel looped over them, and sized its scratch by
// them).
func TestArgOnEmpty(t *testing.T) {
	for _, tc := range []struct {
		typ  string
		axis int64
		dims []int
		want []int
	}{
		{"ArgMax", -2, []int{7, 3, 1 << 31, 0}, []int{7, 3, 1, 0}},
		{"ArgMin", 1, []int{7, 1 << 40, 4, 0}, []int{7, 1, 4, 0}},
		{"ArgMax", 1, []int{0, 5, 1 << 40}, []int{0, 1, 1 << 40}},
		{"ArgMin", 0, []int{0, 3}, nil}, // an empty axis of a non-empty rest: an error
	} {
		x, err := blob.New(blob.Float32, tc.dims...)
		if err != nil {
			t.Fatal(err)
		}
		out, err := optest.RunOp(netdef.NewOperator(tc.typ, []string{"X"}, []string{"I"}, netdef.ArgInt("axis", tc.axis)), x)
		if tc.want == nil {
			if err == nil || !strings.Contains(err.Error(), "axis 0 is empty") {
				t.Errorf("%s %v: error %v, want the empty axis named", tc.typ, tc.dims, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %v: %v", tc.typ, tc.dims, err)
			continue
		}
		checkDims(t, tc.typ, out[0].Dims(), tc.want)
	}
}
