package reduce

import (
	"math"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// reference reductions over a group of values.
var refReducers = map[string]func([]float64) float64{
	"ReduceSum": func(v []float64) float64 {
		s := 0.0
		for _, x := range v {
			s += x
		}
		return s
	},
	"ReduceMean": func(v []float64) float64 {
		s := 0.0
		for _, x := range v {
			s += x
		}
		return s / float64(len(v))
	},
	"ReduceMax": func(v []float64) float64 {
		m := math.Inf(-1)
		for _, x := range v {
			m = math.Max(m, x)
		}
		return m
	},
	"ReduceMin": func(v []float64) float64 {
		m := math.Inf(1)
		for _, x := range v {
			m = math.Min(m, x)
		}
		return m
	},
	"ReduceL1": func(v []float64) float64 {
		s := 0.0
		for _, x := range v {
			s += math.Abs(x)
		}
		return s
	},
	"ReduceL2": func(v []float64) float64 {
		s := 0.0
		for _, x := range v {
			s += x * x
		}
		return math.Sqrt(s)
	},
}

// naiveReduce groups the elements of x by their index with the reduced axes
// zeroed and reduces each group with f.
func naiveReduce(x []float64, dims []int, axes []int, keep bool, f func([]float64) float64) ([]float64, []int) {
	red := make([]bool, len(dims))
	for d := range red {
		red[d] = len(axes) == 0
	}
	for _, a := range axes {
		if a < 0 {
			a += len(dims)
		}
		red[a] = true
	}
	kept := make([]int, len(dims)) // dims with the reduced axes set to 1
	var out []int
	for d, n := range dims {
		kept[d] = n
		if red[d] {
			kept[d] = 1
		}
		if !red[d] || keep {
			out = append(out, kept[d])
		}
	}
	groups := make([][]float64, prod(kept))
	for f := range x {
		idx := unravel(f, dims)
		for d := range idx {
			if red[d] {
				idx[d] = 0
			}
		}
		k := ravel(idx, kept)
		groups[k] = append(groups[k], x[f])
	}
	y := make([]float64, len(groups))
	for k, g := range groups {
		y[k] = f(g)
	}
	if out == nil {
		out = []int{}
	}
	return y, out
}

var reduceShapes = []struct {
	dims []int
	axes []int
}{
	{[]int{2, 3, 4}, []int{0}},
	{[]int{2, 3, 4}, []int{1}},
	{[]int{2, 3, 4}, []int{2}},
	{[]int{2, 3, 4}, []int{-1}},
	{[]int{2, 3, 4}, []int{0, 2}},
	{[]int{2, 3, 4}, []int{2, 0}},
	{[]int{2, 3, 4}, []int{1, 2}},
	{[]int{2, 3, 4}, nil},
	{[]int{3, 1, 5, 2}, []int{0, 3}},
	{[]int{3, 1, 5, 2}, []int{1, 2}},
	{[]int{6}, []int{0}},
	{[]int{2, 0, 3}, []int{1}},
	{[]int{}, nil},
}

func axesArg(axes []int) []*netdef.Argument {
	if axes == nil {
		return nil
	}
	a := make([]int64, len(axes))
	for i, v := range axes {
		a[i] = int64(v)
	}
	return []*netdef.Argument{netdef.ArgInts("axes", a...)}
}

func TestReduceAxes(t *testing.T) {
	for typ, f := range refReducers {
		for _, sh := range reduceShapes {
			for _, keep := range []bool{true, false} {
				if prod(sh.dims) == 0 && (typ == "ReduceMax" || typ == "ReduceMin" || typ == "ReduceMean") {
					continue // no reference value for an empty max, min or mean
				}
				x := distinct(prod(sh.dims), 1)
				args := append(axesArg(sh.axes), netdef.ArgBool("keepdims", keep))
				def := netdef.NewOperator(typ, []string{"X"}, []string{"Y"}, args...)
				out, err := optest.RunOp(def, optest.F32(x, sh.dims...))
				if err != nil {
					t.Fatalf("%s %v axes %v: %v", typ, sh.dims, sh.axes, err)
				}
				want, wantDims := naiveReduce(optest.F32(x, sh.dims...).AsFloat64s(), sh.dims, sh.axes, keep, f)
				what := typ + " " + def.String()
				checkDims(t, what, out[0].Dims(), wantDims)
				optest.CheckClose(t, what, out[0].AsFloat64s(), want, 1e-5)
				if out[0].DataType() != blob.Float32 {
					t.Errorf("%s: output type %v", what, out[0].DataType())
				}
			}
		}
	}
}

func TestReduceIntAndDouble(t *testing.T) {
	x := []int32{5, -3, 9, 2, 7, 7}
	for _, tc := range []struct {
		typ  string
		want []int32
	}{
		{"ReduceSum", []int32{11, 16}},
		{"ReduceMax", []int32{9, 7}},
		{"ReduceMin", []int32{-3, 2}},
	} {
		def := netdef.NewOperator(tc.typ, []string{"X"}, []string{"Y"}, netdef.ArgInts("axes", 1), netdef.ArgInt("keepdims", 0))
		out, err := optest.RunOp(def, blob.MustFromSlice(x, 2, 3))
		if err != nil {
			t.Fatal(err)
		}
		if got := blob.Data[int32](out[0]); len(got) != 2 || got[0] != tc.want[0] || got[1] != tc.want[1] {
			t.Errorf("%s int32 = %v, want %v", tc.typ, got, tc.want)
		}
		out, err = optest.RunOp(def, blob.MustFromSlice([]int64{5, -3, 9, 2, 7, 7}, 2, 3))
		if err != nil {
			t.Fatal(err)
		}
		if got := blob.Data[int64](out[0]); got[0] != int64(tc.want[0]) || got[1] != int64(tc.want[1]) {
			t.Errorf("%s int64 = %v, want %v", tc.typ, got, tc.want)
		}
	}
	def := netdef.NewOperator("ReduceMean", []string{"X"}, []string{"Y"}, netdef.ArgInts("axes", 0))
	out, err := optest.RunOp(def, blob.MustFromSlice([]float64{1, 2, 4, 8}, 2, 2))
	if err != nil {
		t.Fatal(err)
	}
	optest.CheckClose(t, "ReduceMean float64", out[0].AsFloat64s(), []float64{2.5, 5}, 0)
	checkDims(t, "ReduceMean float64", out[0].Dims(), []int{1, 2})
}

func TestReduceGradientDefs(t *testing.T) {
	for typ := range refReducers {
		def := netdef.NewOperator(typ, []string{"in"}, []string{"out"}, netdef.ArgInts("axes", 1))
		checkGradientDef(t, def, optest.GradOp(typ+"Gradient", []string{"out_grad", "in", "out"}, []string{"in_grad"}, netdef.ArgInts("axes", 1)))
	}
}

func TestReduceGradients(t *testing.T) {
	var cases []gradientCase
	for typ := range refReducers {
		for _, sh := range []struct {
			dims []int
			axes []int
			keep bool
		}{
			{[]int{2, 3, 4}, []int{1}, true},
			{[]int{2, 3, 4}, []int{0, 2}, false},
			{[]int{2, 3, 4}, nil, false},
			{[]int{4, 5}, []int{-1}, true},
		} {
			args := append(axesArg(sh.axes), netdef.ArgBool("keepdims", sh.keep))
			cases = append(cases, gradientCase{
				name:   typ,
				def:    netdef.NewOperator(typ, []string{"X"}, []string{"Y"}, args...),
				inputs: []*blob.Tensor{optest.F32(distinct(prod(sh.dims), 3), sh.dims...)},
			})
		}
	}
	runGradientChecks(t, cases)
}

func TestReduceMaxGradientTies(t *testing.T) {
	def := netdef.NewOperator("ReduceMaxGradient", []string{"dY", "X", "Y"}, []string{"dX"}, netdef.ArgInts("axes", 1))
	out, err := optest.RunOp(def, optest.F32([]float64{10, 20}, 2, 1), optest.F32([]float64{1, 3, 3, 2, 0, 2}, 2, 3), optest.F32([]float64{3, 2}, 2, 1))
	if err != nil {
		t.Fatal(err)
	}
	optest.CheckClose(t, "dX", out[0].AsFloat64s(), []float64{0, 10, 10, 20, 0, 20}, 0)
}

func TestReduceErrors(t *testing.T) {
	x := optest.F32(distinct(6, 1), 2, 3)
	for _, tc := range []struct {
		name   string
		def    *netdef.OperatorDef
		inputs []*blob.Tensor
		want   string
	}{
		{"axis range", netdef.NewOperator("ReduceSum", []string{"X"}, []string{"Y"}, netdef.ArgInts("axes", 2)), []*blob.Tensor{x}, `"X"`},
		{"negative axis range", netdef.NewOperator("ReduceSum", []string{"X"}, []string{"Y"}, netdef.ArgInts("axes", -3)), []*blob.Tensor{x}, "-3"},
		{"duplicate axis", netdef.NewOperator("ReduceMax", []string{"X"}, []string{"Y"}, netdef.ArgInts("axes", 1, -1)), []*blob.Tensor{x}, "twice"},
		{"int mean", netdef.NewOperator("ReduceMean", []string{"X"}, []string{"Y"}), []*blob.Tensor{blob.MustFromSlice([]int32{1, 2})}, `"X"`},
		{"string sum", netdef.NewOperator("ReduceSum", []string{"X"}, []string{"Y"}), []*blob.Tensor{blob.MustFromSlice([]string{"a"})}, `"X"`},
		{"gradient dY size", netdef.NewOperator("ReduceSumGradient", []string{"dY", "X", "Y"}, []string{"dX"}, netdef.ArgInts("axes", 1)),
			[]*blob.Tensor{optest.F32([]float64{1, 2, 3}), x, optest.F32([]float64{1, 2})}, `"dY"`},
		{"gradient Y size", netdef.NewOperator("ReduceMaxGradient", []string{"dY", "X", "Y"}, []string{"dX"}, netdef.ArgInts("axes", 1)),
			[]*blob.Tensor{optest.F32([]float64{1, 2}), x, optest.F32([]float64{1})}, `"Y"`},
		{"gradient type", netdef.NewOperator("ReduceSumGradient", []string{"dY", "X", "Y"}, []string{"dX"}, netdef.ArgInts("axes", 1)),
			[]*blob.Tensor{blob.MustFromSlice([]float64{1, 2}), x, optest.F32([]float64{1, 2})}, `"X"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := optest.RunOp(tc.def, tc.inputs...)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.def.GetType()) {
				t.Errorf("error %v, want one naming %s and %s", err, tc.def.GetType(), tc.want)
			}
		})
	}
}

func TestReduceGradientTypes(t *testing.T) {
	// ReduceSumGradient on int32 and ReduceMinGradient on float64.
	def := netdef.NewOperator("ReduceSumGradient", []string{"dY", "X", "Y"}, []string{"dX"}, netdef.ArgInts("axes", 0))
	out, err := optest.RunOp(def, blob.MustFromSlice([]int32{4, 5}, 1, 2), blob.MustFromSlice([]int32{1, 2, 3, 4}, 2, 2), blob.MustFromSlice([]int32{4, 6}, 1, 2))
	if err != nil {
		t.Fatal(err)
	}
	optest.CheckClose(t, "int32 dX", out[0].AsFloat64s(), []float64{4, 5, 4, 5}, 0)
	def = netdef.NewOperator("ReduceMinGradient", []string{"dY", "X", "Y"}, []string{"dX"}, netdef.ArgInts("axes", 1), netdef.ArgInt("keepdims", 0))
	out, err = optest.RunOp(def, blob.MustFromSlice([]float64{7, 8}), blob.MustFromSlice([]float64{1, 2, 4, 3}, 2, 2), blob.MustFromSlice([]float64{1, 3}))
	if err != nil {
		t.Fatal(err)
	}
	optest.CheckClose(t, "float64 dX", out[0].AsFloat64s(), []float64{7, 0, 0, 8}, 0)
	if out[0].DataType() != blob.Float64 {
		t.Errorf("dX type %v", out[0].DataType())
	}
}
