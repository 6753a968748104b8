package math

import (
	"fmt"
	"math"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

var abc = [][]string{{"A", "B"}, {"C"}}

func TestBinaryHandComputed(t *testing.T) {
	bc := netdef.ArgInt("broadcast", 1)
	cases := []struct {
		name  string
		def   *netdef.OperatorDef
		a, b  *blob.Tensor
		shape []int
		want  []float64
	}{
		{"Add", op("Add", abc[0], abc[1]), f32([]int{2, 2}, 1, 2, 3, 4), f32([]int{2, 2}, 5, 6, 7, 8), []int{2, 2}, []float64{6, 8, 10, 12}},
		{"Sub", op("Sub", abc[0], abc[1]), f32([]int{2, 2}, 10, 12, 4, 14), f32([]int{2, 2}, 5, 16, 1, 19), []int{2, 2}, []float64{5, -4, 3, -5}},
		{"Mul", op("Mul", abc[0], abc[1]), f32([]int{2, 2}, 1, 2, 3, 4), f32([]int{2, 2}, 5, 6, 7, 8), []int{2, 2}, []float64{5, 12, 21, 32}},
		{"Div/float", op("Div", abc[0], abc[1]), f32([]int{3}, 1, -3, 7), f32([]int{3}, 2, 4, -0.5), []int{3}, []float64{0.5, -0.75, -14}},
		{"Div/int32", op("Div", abc[0], abc[1]), blob.MustFromSlice([]int32{18, 8, 2, 9}, 2, 2), blob.MustFromSlice([]int32{9, 2, 3, 2}, 2, 2), []int{2, 2}, []float64{2, 4, 0, 4}},
		{"Sub/int64", op("Sub", abc[0], abc[1]), blob.MustFromSlice([]int64{1 << 40, 5}), blob.MustFromSlice([]int64{1, 7}), []int{2}, []float64{1<<40 - 1, -2}},
		{"Mul/float64", op("Mul", abc[0], abc[1]), f64([]int{2}, 1.5, -2), f64([]int{2}, 4, 0.25), []int{2}, []float64{6, -0.5}},
		{"Add/0-d", op("Add", abc[0], abc[1]), blob.Scalar[float32](2), blob.Scalar[float32](3), []int{}, []float64{5}},
		// Legacy broadcast (broadcast=1).
		{"legacy/suffix", op("Add", abc[0], abc[1], bc), f32([]int{2, 3}, 1, 2, 3, 4, 5, 6), f32([]int{3}, 10, 20, 30), []int{2, 3}, []float64{11, 22, 33, 14, 25, 36}},
		{"legacy/axis0", op("Add", abc[0], abc[1], bc, netdef.ArgInt("axis", 0)), f32([]int{2, 3}, 1, 2, 3, 4, 5, 6), f32([]int{2}, 10, 20), []int{2, 3}, []float64{11, 12, 13, 24, 25, 26}},
		{"legacy/axis_str", op("Mul", abc[0], abc[1], bc, netdef.ArgString("axis_str", "C")), f32([]int{1, 2, 2}, 1, 2, 3, 4), f32([]int{2}, 10, 100), []int{1, 2, 2}, []float64{10, 20, 300, 400}},
		{"legacy/axis_str_nhwc", op("Sub", abc[0], abc[1], bc, netdef.ArgString("axis_str", "C"), netdef.ArgString("order", "NHWC")), f32([]int{1, 1, 2, 2}, 1, 2, 3, 4), f32([]int{2}, 1, 2), []int{1, 1, 2, 2}, []float64{0, 0, 2, 2}},
		{"legacy/scalar", op("Mul", abc[0], abc[1], bc), f32([]int{2, 2}, 1, 2, 3, 4), f32([]int{1}, 2), []int{2, 2}, []float64{2, 4, 6, 8}},
		{"legacy/scalar_more_dims", op("Sub", abc[0], abc[1], bc), f32([]int{3}, 1, 2, 3), f32([]int{1, 1, 1, 1}, 1), []int{3}, []float64{0, 1, 2}},
		{"legacy/trailing_ones", op("Add", abc[0], abc[1], bc), f32([]int{2, 3, 2}, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1), f32([]int{3, 1}, 10, 20, 30), []int{2, 3, 2}, []float64{10, 10, 20, 20, 30, 30, 11, 11, 21, 21, 31, 31}},
		{"legacy/div_int", op("Div", abc[0], abc[1], bc), blob.MustFromSlice([]int32{7, -7, 9, 10}, 2, 2), blob.MustFromSlice([]int32{2, 3}), []int{2, 2}, []float64{3, -2, 4, 3}},
		{"legacy/broadcast0_is_numpy", op("Add", abc[0], abc[1], netdef.ArgInt("broadcast", 0)), f32([]int{2, 1}, 1, 2), f32([]int{3}, 10, 20, 30), []int{2, 3}, []float64{11, 21, 31, 12, 22, 32}},
		// NumPy broadcast (no broadcast argument).
		{"numpy/row", op("Add", abc[0], abc[1]), f32([]int{2, 3}, 1, 2, 3, 4, 5, 6), f32([]int{3}, 10, 20, 30), []int{2, 3}, []float64{11, 22, 33, 14, 25, 36}},
		{"numpy/A_broadcast", op("Sub", abc[0], abc[1]), f32([]int{3}, 10, 20, 30), f32([]int{2, 3}, 1, 2, 3, 4, 5, 6), []int{2, 3}, []float64{9, 18, 27, 6, 15, 24}},
		{"numpy/outer", op("Mul", abc[0], abc[1]), f32([]int{2, 1}, 1, 2), f32([]int{1, 3}, 1, 10, 100), []int{2, 3}, []float64{1, 10, 100, 2, 20, 200}},
		{"numpy/scalar_A", op("Div", abc[0], abc[1]), blob.Scalar[float32](12), f32([]int{2, 2}, 1, 2, 3, 4), []int{2, 2}, []float64{12, 6, 4, 3}},
		{"numpy/empty", op("Add", abc[0], abc[1]), f32([]int{0, 3}), f32([]int{3}, 1, 2, 3), []int{0, 3}, []float64{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := optest.MustRunOp(t, c.def, c.a, c.b)
			checkTensor(t, "C", out[0], c.shape, c.want, 1e-6)
			if out[0].DataType() != c.a.DataType() {
				t.Errorf("type %v, want %v", out[0].DataType(), c.a.DataType())
			}
		})
	}
}

// legacyAsNumpy returns B's shape padded with trailing 1s so that it
// right-aligns with A's dimensions at axis.
func legacyAsNumpy(as, bs []int, axis int) []int {
	if axis == -1 {
		return bs
	}
	out := append([]int{}, bs...)
	for i := axis + len(bs); i < len(as); i++ {
		out = append(out, 1)
	}
	return out
}

func TestBinaryAgainstReference(t *testing.T) {
	r := newRand()
	fns := map[string]func(x, y float64) float64{
		"Add": func(x, y float64) float64 { return x + y },
		"Sub": func(x, y float64) float64 { return x - y },
		"Mul": func(x, y float64) float64 { return x * y },
		"Div": func(x, y float64) float64 { return x / y },
	}
	numpy := [][2][]int{
		{{2, 3, 4}, {2, 3, 4}}, {{2, 3, 4}, {4}}, {{2, 3, 4}, {3, 1}}, {{2, 1, 4}, {3, 1}},
		{{1, 5}, {4, 1}}, {{4}, {3, 2, 4}}, {{2, 1, 3, 1}, {1, 4, 1, 5}}, {{}, {3}}, {{1}, {1, 1}},
	}
	legacy := []struct {
		as, bs []int
		axis   int
	}{
		{[]int{2, 3, 4, 5}, []int{5}, -1}, {[]int{2, 3, 4, 5}, []int{4, 5}, -1}, {[]int{2, 3, 4, 5}, []int{3, 4}, 1},
		{[]int{2, 3, 4, 5}, []int{2}, 0}, {[]int{2, 3, 4, 5}, []int{1, 3, 1}, 0}, {[]int{2, 3, 4, 5}, []int{2, 3, 4, 5}, -1},
	}
	for typ, f := range fns {
		for _, s := range numpy {
			a, b := randAway(r, -2, 2, 0.1, s[0]...), randAway(r, -2, 2, 0.1, s[1]...)
			out := optest.MustRunOp(t, op(typ, abc[0], abc[1]), a, b)
			var p plan
			if !p.broadcastShape(s[0], s[1]) {
				t.Fatalf("%v %v not broadcastable", s[0], s[1])
			}
			want := refBroadcast(a.AsFloat64s(), b.AsFloat64s(), s[0], s[1], p.out, f)
			checkTensor(t, fmt.Sprintf("%s%v%v", typ, s[0], s[1]), out[0], p.out, want, 1e-5)
		}
		for _, s := range legacy {
			a, b := randAway(r, -2, 2, 0.1, s.as...), randAway(r, -2, 2, 0.1, s.bs...)
			def := op(typ, abc[0], abc[1], netdef.ArgInt("broadcast", 1), netdef.ArgInt("axis", int64(s.axis)))
			out := optest.MustRunOp(t, def, a, b)
			want := refBroadcast(a.AsFloat64s(), b.AsFloat64s(), s.as, legacyAsNumpy(s.as, s.bs, s.axis), s.as, f)
			checkTensor(t, fmt.Sprintf("%s%v%v@%d", typ, s.as, s.bs, s.axis), out[0], s.as, want, 1e-5)
		}
	}
}

func TestBinaryInPlace(t *testing.T) {
	cases := []struct {
		name    string
		def     *netdef.OperatorDef
		a, b    *blob.Tensor
		outName string
		shape   []int
		want    []float64
	}{
		{"A", op("Add", []string{"A", "B"}, []string{"A"}), f32([]int{2}, 1, 2), f32([]int{2}, 10, 20), "A", []int{2}, []float64{11, 22}},
		{"B", op("Mul", []string{"A", "B"}, []string{"B"}), f32([]int{2}, 3, 4), f32([]int{2}, 10, 20), "B", []int{2}, []float64{30, 80}},
		{"B_numpy_broadcast_A", op("Sub", []string{"A", "B"}, []string{"B"}), f32([]int{2}, 3, 4), f32([]int{2, 2}, 1, 1, 2, 2), "B", []int{2, 2}, []float64{2, 3, 1, 2}},
		{"A_legacy", op("Div", []string{"A", "B"}, []string{"A"}, netdef.ArgInt("broadcast", 1)), f32([]int{2, 2}, 2, 4, 6, 8), f32([]int{2}, 2, 4), "A", []int{2, 2}, []float64{1, 1, 3, 2}},
		{"same_blob", op("Mul", []string{"A", "A"}, []string{"A"}), f32([]int{3}, 1, 2, 3), nil, "A", []int{3}, []float64{1, 4, 9}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := optest.NewWorkspace()
			w.Feed("A", c.a)
			if c.b != nil {
				w.Feed("B", c.b)
			}
			if err := w.Run(c.def); err != nil {
				t.Fatal(err)
			}
			checkTensor(t, c.outName, w.Tensor(c.outName), c.shape, c.want, 1e-6)
		})
	}
}

func TestBinaryErrors(t *testing.T) {
	bc := netdef.ArgInt("broadcast", 1)
	cases := []struct {
		name  string
		def   *netdef.OperatorDef
		a, b  *blob.Tensor
		frags []string
	}{
		{"mismatch", op("Add", []string{"X", "Y"}, abc[1]), f32([]int{2, 3}, 1, 2, 3, 4, 5, 6), f32([]int{3, 2}, 1, 2, 3, 4, 5, 6),
			[]string{"Dimension mismatch - did you forget to set broadcast=1?", `"X"`, `"Y"`, "[2 3]", "[3 2]"}},
		{"mismatch_int", op("Mul", []string{"X", "Y"}, abc[1]), blob.MustFromSlice([]int32{1, 2}), blob.MustFromSlice([]int32{1, 2, 3}),
			[]string{"Dimension mismatch", `"X"`, `"Y"`, "[2]", "[3]"}},
		{"legacy_block", op("Sub", []string{"X", "Y"}, abc[1], bc), f32([]int{2, 3}, 1, 2, 3, 4, 5, 6), f32([]int{2}, 1, 2),
			[]string{"broadcast dimension mismatch", `"X"`, `"Y"`, "[2 3]", "[2]"}},
		{"legacy_more_dims", op("Add", []string{"X", "Y"}, abc[1], bc), f32([]int{3}, 1, 2, 3), f32([]int{2, 3}, 1, 2, 3, 4, 5, 6),
			[]string{"no more dimensions", `"X"`, `"Y"`}},
		{"legacy_axis_range", op("Add", []string{"X", "Y"}, abc[1], bc, netdef.ArgInt("axis", 2)), f32([]int{2, 3}, 1, 2, 3, 4, 5, 6), f32([]int{3}, 1, 2, 3),
			[]string{"axis", `"X"`}},
		{"legacy_middle_one", op("Add", []string{"X", "Y"}, abc[1], bc), f32([]int{2, 3, 2}, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12), f32([]int{2, 1, 2}, 1, 2, 3, 4),
			[]string{"broadcast dimension mismatch", `"Y"`}},
		{"types", op("Add", []string{"X", "Y"}, abc[1]), f32([]int{1}, 1), f64([]int{1}, 1),
			[]string{`"X"`, `"Y"`, "FLOAT", "DOUBLE"}},
		{"unsupported", op("Add", []string{"X", "Y"}, abc[1]), blob.MustFromSlice([]bool{true}), blob.MustFromSlice([]bool{true}),
			[]string{`"X"`, "BOOL"}},
		{"int_div_zero", op("Div", []string{"X", "Y"}, abc[1]), blob.MustFromSlice([]int64{1, 2}), blob.MustFromSlice([]int64{1, 0}),
			[]string{"division by zero", `"Y"`}},
		{"axis_without_broadcast", op("Add", []string{"X", "Y"}, abc[1], netdef.ArgInt("axis", 0)), f32([]int{1}, 1), f32([]int{1}, 1),
			[]string{"do not specify axis"}},
		{"axis_and_axis_str", op("Add", []string{"X", "Y"}, abc[1], bc, netdef.ArgInt("axis", 0), netdef.ArgString("axis_str", "C")), f32([]int{1}, 1), f32([]int{1}, 1),
			[]string{"axis_str"}},
		{"bad_axis_str", op("Add", []string{"X", "Y"}, abc[1], bc, netdef.ArgString("axis_str", "Q")), f32([]int{1}, 1), f32([]int{1}, 1),
			[]string{`"Q"`, `"NCHW"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantErrContains(t, runErr(t, c.def, c.a, c.b), c.frags...)
		})
	}
}

func TestBinaryInPlaceErrors(t *testing.T) {
	cases := []struct {
		name  string
		def   *netdef.OperatorDef
		a, b  *blob.Tensor
		frags []string
	}{
		{"legacy_B", op("Add", []string{"A", "B"}, []string{"B"}, netdef.ArgInt("broadcast", 1)), f32([]int{2}, 1, 2), f32([]int{2}, 1, 2),
			[]string{"in-place", `"B"`}},
		{"numpy_A_grows", op("Add", []string{"A", "B"}, []string{"A"}), f32([]int{2}, 1, 2), f32([]int{3, 2}, 1, 2, 3, 4, 5, 6),
			[]string{`"A"`, "[2]", "[3 2]"}},
		{"div_B_schema", op("Div", []string{"A", "B"}, []string{"B"}), f32([]int{2}, 1, 2), f32([]int{2}, 1, 2),
			[]string{"in place"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := optest.NewWorkspace()
			w.Feed("A", c.a)
			w.Feed("B", c.b)
			err := w.Run(c.def)
			if err == nil {
				t.Fatal("want an error")
			}
			wantErrContains(t, err, c.frags...)
		})
	}
}

// refReduce is a naive SumReduceLike reference: B's shape right-aligned
// against A's after padding bs as given.
func refReduce(a []float64, as, bs []int) []float64 {
	n := 1
	for _, d := range bs {
		n *= d
	}
	out := make([]float64, n)
	for k, v := range a {
		out[flatIn(unravel(k, as), bs)] += v
	}
	return out
}

func TestSumReduceLike(t *testing.T) {
	r := newRand()
	cases := []struct {
		name     string
		as, bs   []int
		args     []*netdef.Argument
		refShape []int // bs as it right-aligns with as
	}{
		{"suffix", []int{2, 3, 4}, []int{3, 4}, nil, nil},
		{"axis", []int{2, 3, 4}, []int{3}, []*netdef.Argument{netdef.ArgInt("axis", 1)}, []int{3, 1}},
		{"axis0", []int{2, 3, 4}, []int{2, 3}, []*netdef.Argument{netdef.ArgInt("axis", 0)}, []int{2, 3, 1}},
		{"axis_str", []int{2, 3, 2, 2}, []int{3}, []*netdef.Argument{netdef.ArgString("axis_str", "C"), netdef.ArgString("order", "NCHW")}, []int{3, 1, 1}},
		{"scalar", []int{2, 3}, []int{1}, nil, nil},
		{"scalar_more_dims", []int{3}, []int{1, 1, 1}, nil, []int{1}},
		{"trailing_one", []int{2, 3, 4}, []int{3, 1}, nil, nil},
		{"numpy_middle_one", []int{2, 3, 4}, []int{2, 1, 4}, nil, nil},
		{"same", []int{2, 3}, []int{2, 3}, nil, nil},
		{"broadcast_arg_ignored", []int{4, 2}, []int{2}, []*netdef.Argument{netdef.ArgInt("broadcast", 1)}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := randT(r, -1, 1, c.as...)
			b := randT(r, -1, 1, c.bs...)
			out := optest.MustRunOp(t, op("SumReduceLike", []string{"A", "B"}, []string{"C"}, c.args...), a, b)
			rs := c.refShape
			if rs == nil {
				rs = c.bs
			}
			checkTensor(t, "C", out[0], c.bs, refReduce(a.AsFloat64s(), c.as, rs), 1e-5)
		})
	}
	t.Run("0-d", func(t *testing.T) {
		out := optest.MustRunOp(t, op("SumReduceLike", []string{"A", "B"}, []string{"C"}), f64([]int{2, 2}, 1, 2, 3, 4.5), blob.Scalar[float32](0))
		checkTensor(t, "C", out[0], []int{}, []float64{10.5}, 1e-12)
		if out[0].DataType() != blob.Float64 {
			t.Errorf("type %v, want A's DOUBLE", out[0].DataType())
		}
	})
	t.Run("hand", func(t *testing.T) {
		out := optest.MustRunOp(t, op("SumReduceLike", []string{"A", "B"}, []string{"C"}), f32([]int{2, 3}, 1, 2, 3, 4, 5, 6), f32([]int{3}, 0, 0, 0))
		checkTensor(t, "C", out[0], []int{3}, []float64{5, 7, 9}, 1e-6)
	})
	errs := []struct {
		name   string
		as, bs []int
		args   []*netdef.Argument
		frags  []string
	}{
		{"not_broadcast", []int{2, 3}, []int{2}, nil, []string{`"A"`, `"B"`, "[2 3]", "[2]"}},
		{"legacy", []int{2, 3}, []int{2}, []*netdef.Argument{netdef.ArgInt("axis", 1)}, []string{"broadcast dimension mismatch", `"A"`, `"B"`}},
	}
	for _, c := range errs {
		t.Run(c.name, func(t *testing.T) {
			err := runErr(t, op("SumReduceLike", []string{"A", "B"}, []string{"C"}, c.args...), randT(r, 0, 1, c.as...), randT(r, 0, 1, c.bs...))
			wantErrContains(t, err, c.frags...)
		})
	}
}

func TestDivGradientOp(t *testing.T) {
	out := optest.MustRunOp(t, op("DivGradient", []string{"B", "C", "dC"}, []string{"dA", "dB"}),
		f32([]int{2}, 2, 4), f32([]int{2}, 3, 5), f32([]int{2}, 1, 2))
	checkTensor(t, "dA", out[0], []int{2}, []float64{0.5, 0.5}, 1e-6)
	checkTensor(t, "dB", out[1], []int{2}, []float64{-1.5, -2.5}, 1e-6)
	err := runErr(t, op("DivGradient", []string{"B", "C", "dC"}, []string{"dA", "dB"}),
		f32([]int{2}, 2, 4), f32([]int{2, 2}, 3, 5, 1, 1), f32([]int{2, 2}, 1, 2, 1, 1))
	wantErrContains(t, err, `"C"`, `"B"`, "broadcast")
}

func TestIntegerOverflowWraps(t *testing.T) {
	out := optest.MustRunOp(t, op("Div", abc[0], abc[1]), blob.MustFromSlice([]int32{math.MinInt32}), blob.MustFromSlice([]int32{-1}))
	if got := blob.Data[int32](out[0])[0]; got != math.MinInt32 {
		t.Errorf("MinInt32 / -1 = %d, want the wrapped %d", got, int32(math.MinInt32))
	}
}
