package fill

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
)

var (
	argF      = netdef.ArgFloat
	argI      = netdef.ArgInt
	argInts   = netdef.ArgInts
	argFloats = netdef.ArgFloats
)

func op(typ string, in []string, args ...*netdef.Argument) *netdef.OperatorDef {
	return netdef.NewOperator(typ, in, []string{"Y"}, args...)
}

// run1 runs def on inputs and returns its output.
func run1(t *testing.T, def *netdef.OperatorDef, inputs ...*blob.Tensor) *blob.Tensor {
	t.Helper()
	return optest.MustRunOp(t, def, inputs...)[0]
}

func TestConstantFill(t *testing.T) {
	x23 := blob.MustFromSlice(make([]float32, 6), 2, 3)
	tests := []struct {
		name   string
		def    *netdef.OperatorDef
		inputs []*blob.Tensor
		dtype  blob.DataType
		shape  []int
		value  any // one element of the expected type
	}{
		{"shape arg", op("ConstantFill", nil, argInts("shape", 2, 3), argF("value", 1.5)), nil, blob.Float32, []int{2, 3}, float32(1.5)},
		{"no shape is a scalar", op("ConstantFill", nil, argF("value", 2)), nil, blob.Float32, []int{}, float32(2)},
		{"defaults", op("ConstantFill", nil, argInts("shape", 4)), nil, blob.Float32, []int{4}, float32(0)},
		{"empty shape dim", op("ConstantFill", nil, argInts("shape", 0, 3)), nil, blob.Float32, []int{0, 3}, float32(0)},
		{"input shape", op("ConstantFill", []string{"X"}, argF("value", 3)), []*blob.Tensor{x23}, blob.Float32, []int{2, 3}, float32(3)},
		{"input shape + extra_shape", op("ConstantFill", []string{"X"}, argInts("extra_shape", 4, 1), argF("value", -1)), []*blob.Tensor{x23}, blob.Float32, []int{2, 3, 4, 1}, float32(-1)},
		{"input_as_shape int64", op("ConstantFill", []string{"X"}, argI("input_as_shape", 1), argF("value", 7)), []*blob.Tensor{blob.MustFromSlice([]int64{3, 2})}, blob.Float32, []int{3, 2}, float32(7)},
		{"input_as_shape int32 + extra_shape", op("ConstantFill", []string{"X"}, argI("input_as_shape", 1), argInts("extra_shape", 5)), []*blob.Tensor{blob.MustFromSlice([]int32{1, 2})}, blob.Float32, []int{1, 2, 5}, float32(0)},
		{"in place", netdef.NewOperator("ConstantFill", []string{"Y"}, []string{"Y"}, argF("value", 4)), []*blob.Tensor{x23}, blob.Float32, []int{2, 3}, float32(4)},
		{"int value infers INT64", op("ConstantFill", nil, argInts("shape", 2), argI("value", 9)), nil, blob.Int64, []int{2}, int64(9)},
		{"INT32", op("ConstantFill", nil, argInts("shape", 2), argI("dtype", 2), argI("value", 7)), nil, blob.Int32, []int{2}, int32(7)},
		{"INT32 from a float value", op("ConstantFill", nil, argInts("shape", 2), argI("dtype", 2), argF("value", 3)), nil, blob.Int32, []int{2}, int32(3)},
		{"INT64", op("ConstantFill", nil, argInts("shape", 1, 2), argI("dtype", 10), argI("value", 1<<40)), nil, blob.Int64, []int{1, 2}, int64(1 << 40)},
		{"BOOL", op("ConstantFill", nil, argInts("shape", 3), argI("dtype", 5), argI("value", 1)), nil, blob.Bool, []int{3}, true},
		{"DOUBLE", op("ConstantFill", nil, argInts("shape", 3), argI("dtype", 13), argF("value", 2.5)), nil, blob.Float64, []int{3}, 2.5},
		{"INT8", op("ConstantFill", nil, argInts("shape", 2), argI("dtype", 7), argI("value", -3)), nil, blob.Int8, []int{2}, int8(-3)},
		{"INT16", op("ConstantFill", nil, argInts("shape", 2), argI("dtype", 9), argI("value", -300)), nil, blob.Int16, []int{2}, int16(-300)},
		{"UINT8", op("ConstantFill", nil, argInts("shape", 2), argI("dtype", 6), argI("value", 200)), nil, blob.Uint8, []int{2}, uint8(200)},
		{"UINT16", op("ConstantFill", nil, argInts("shape", 2), argI("dtype", 8), argI("value", 60000)), nil, blob.Uint16, []int{2}, uint16(60000)},
		{"STRING", op("ConstantFill", nil, argInts("shape", 2), argI("dtype", 4), netdef.ArgString("value", "ab")), nil, blob.String, []int{2}, "ab"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			y := run1(t, tc.def, tc.inputs...)
			if y.DataType() != tc.dtype || !reflect.DeepEqual(y.Dims(), tc.shape) {
				t.Fatalf("got %v, want %v %v", y, tc.dtype, tc.shape)
			}
			data := reflect.ValueOf(y.Raw())
			for i := 0; i < data.Len(); i++ {
				if got := data.Index(i).Interface(); got != tc.value {
					t.Fatalf("element %d = %v, want %v", i, got, tc.value)
				}
			}
		})
	}
}

func TestFillErrors(t *testing.T) {
	x := blob.MustFromSlice([]float32{1, 2})
	tests := []struct {
		name   string
		def    *netdef.OperatorDef
		inputs []*blob.Tensor
		want   string
	}{
		{"shape with an input", op("ConstantFill", []string{"X"}, argInts("shape", 2)), []*blob.Tensor{x}, "cannot set the shape argument"},
		{"extra_shape without input", op("ConstantFill", nil, argInts("extra_shape", 2)), nil, "extra_shape"},
		{"input_as_shape without input", op("GaussianFill", nil, argI("input_as_shape", 1)), nil, "no input"},
		{"scalar shape", op("ConstantFill", nil, argI("shape", 3)), nil, "scalar"},
		{"negative shape", op("XavierFill", nil, argInts("shape", 2, -1)), nil, "negative"},
		{"undefined dtype", op("ConstantFill", nil, argI("dtype", 0)), nil, "undefined"},
		{"FLOAT16 dtype", op("ConstantFill", nil, argI("dtype", 12)), nil, "unexpected 'dtype'"},
		{"string value without dtype", op("ConstantFill", nil, netdef.ArgString("value", "a")), nil, "unexpected type"},
		{"input_as_shape 2-D", op("ConstantFill", []string{"X"}, argI("input_as_shape", 1)), []*blob.Tensor{blob.MustFromSlice([]int64{1, 2}, 1, 2)}, "1-D"},
		{"input_as_shape empty", op("ConstantFill", []string{"X"}, argI("input_as_shape", 1)), []*blob.Tensor{blob.MustFromSlice([]int64{})}, "non-empty"},
		{"input_as_shape float", op("ConstantFill", []string{"X"}, argI("input_as_shape", 1)), []*blob.Tensor{x}, "int64"},
		{"input_as_shape negative", op("ConstantFill", []string{"X"}, argI("input_as_shape", 1)), []*blob.Tensor{blob.MustFromSlice([]int64{2, -2})}, "negative"},
		{"uniform min >= max", op("UniformFill", nil, argF("min", 1), argF("max", 1)), nil, "bigger than min"},
		{"uniform int min >= max", op("UniformIntFill", nil, argI("min", 5), argI("max", 2)), nil, "bigger than min"},
		{"uniform 2 inputs", op("UniformFill", []string{"X", "lo"}), []*blob.Tensor{x, blob.Scalar[float32](0)}, "not an allowed input count"},
		{"uniform min arg and blob", op("UniformFill", []string{"X", "lo", "hi"}, argF("min", 0)), []*blob.Tensor{x, blob.Scalar[float32](0), blob.Scalar[float32](1)}, "min or max arguments"},
		{"uniform min blob not scalar", op("UniformFill", []string{"X", "lo", "hi"}), []*blob.Tensor{x, x, blob.Scalar[float32](1)}, "scalar"},
		{"uniform int min blob float", op("UniformIntFill", []string{"X", "lo", "hi"}), []*blob.Tensor{x, blob.Scalar[float32](0), blob.Scalar[int32](1)}, "INT32"},
		{"gaussian negative std", op("GaussianFill", nil, argF("std", -1)), nil, "non-negative"},
		{"xavier 0-d", op("XavierFill", nil), nil, "at least 1 dimension"},
		{"msra 1-D", op("MSRAFill", nil, argInts("shape", 4)), nil, "at least 2 dimensions"},
		{"given size mismatch", op("GivenTensorFill", nil, argInts("shape", 2, 2), argFloats("values", 1, 2, 3)), nil, "4 elements but 3 values"},
		{"given size mismatch at run", op("GivenTensorIntFill", []string{"X"}, argInts("values", 1, 2, 3)), []*blob.Tensor{x}, "2 elements but 3 values"},
		{"given unknown dtype name", op("GivenTensorFill", nil, netdef.ArgString("dtype", "COMPLEX")), nil, "unknown data type"},
		{"given unsupported dtype", op("GivenTensorFill", nil, argI("dtype", 12)), nil, "unexpected 'dtype'"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := optest.RunOp(tc.def, tc.inputs...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestGivenTensorFill(t *testing.T) {
	x := blob.MustFromSlice(make([]float32, 4), 2, 2)
	tests := []struct {
		name   string
		def    *netdef.OperatorDef
		inputs []*blob.Tensor
		want   *blob.Tensor
	}{
		{"float", op("GivenTensorFill", nil, argInts("shape", 2, 2), argFloats("values", 1, -2, 3.5, 4)), nil,
			blob.MustFromSlice([]float32{1, -2, 3.5, 4}, 2, 2)},
		{"float from input shape", op("GivenTensorFill", []string{"X"}, argFloats("values", 4, 3, 2, 1)), []*blob.Tensor{x},
			blob.MustFromSlice([]float32{4, 3, 2, 1}, 2, 2)},
		{"float scalar", op("GivenTensorFill", nil, argFloats("values", 6)), nil, blob.Scalar[float32](6)},
		{"float empty", op("GivenTensorFill", nil, argInts("shape", 0)), nil, blob.MustFromSlice([]float32{})},
		{"float with dtype INT32", op("GivenTensorFill", nil, argInts("shape", 3), argI("dtype", 2), argInts("values", 1, 2, 3)), nil,
			blob.MustFromSlice([]int32{1, 2, 3})},
		{"float with dtype name DOUBLE", op("GivenTensorFill", nil, argInts("shape", 2), netdef.ArgString("dtype", "double"), argFloats("values", 0.5, 1.5)), nil,
			blob.MustFromSlice([]float64{0.5, 1.5})},
		{"float with dtype UINT16", op("GivenTensorFill", nil, argInts("shape", 2), argI("dtype", 8), argInts("values", 1, 65535)), nil,
			blob.MustFromSlice([]uint16{1, 65535})},
		{"double", op("GivenTensorDoubleFill", nil, argInts("shape", 3), argFloats("values", 0.25, -1, 8)), nil,
			blob.MustFromSlice([]float64{0.25, -1, 8})},
		{"bool", op("GivenTensorBoolFill", nil, argInts("shape", 3), argInts("values", 1, 0, 1)), nil,
			blob.MustFromSlice([]bool{true, false, true})},
		{"int16", op("GivenTensorInt16Fill", nil, argInts("shape", 2), argInts("values", -7, 300)), nil,
			blob.MustFromSlice([]int16{-7, 300})},
		{"int", op("GivenTensorIntFill", nil, argInts("shape", 1, 3), argInts("values", 5, -6, 7)), nil,
			blob.MustFromSlice([]int32{5, -6, 7}, 1, 3)},
		{"int64", op("GivenTensorInt64Fill", nil, argInts("shape", 2), argInts("values", 1<<40, -1)), nil,
			blob.MustFromSlice([]int64{1 << 40, -1})},
		{"string", op("GivenTensorStringFill", nil, argInts("shape", 2), netdef.ArgStrings("values", "a", "bc")), nil,
			blob.MustFromSlice([]string{"a", "bc"})},
		{"in place", netdef.NewOperator("GivenTensorIntFill", []string{"Y"}, []string{"Y"}, argInts("values", 1, 2, 3, 4)), []*blob.Tensor{x},
			blob.MustFromSlice([]int32{1, 2, 3, 4}, 2, 2)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			y := run1(t, tc.def, tc.inputs...)
			if y.DataType() != tc.want.DataType() || !reflect.DeepEqual(y.Dims(), tc.want.Dims()) || !reflect.DeepEqual(y.Raw(), tc.want.Raw()) {
				t.Fatalf("got %v %v, want %v %v", y, y.Raw(), tc.want, tc.want.Raw())
			}
		})
	}
}

func TestRangeFill(t *testing.T) {
	y := run1(t, op("RangeFill", nil, argInts("shape", 2, 3)))
	if want := []float32{0, 1, 2, 3, 4, 5}; !reflect.DeepEqual(blob.Data[float32](y), want) || !reflect.DeepEqual(y.Dims(), []int{2, 3}) {
		t.Fatalf("got %v %v, want %v", y, blob.Data[float32](y), want)
	}
}

// moments returns the mean and the (population) standard deviation.
func moments(v []float64) (mean, std float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	for _, x := range v {
		std += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(std / float64(len(v)))
}

func TestRandomFillStatistics(t *testing.T) {
	const n = 200000
	tests := []struct {
		name       string
		def        *netdef.OperatorDef
		dtype      blob.DataType
		shape      []int
		lo, hi     float64 // bounds every sample must respect (inclusive)
		mean, std  float64
		meanTol    float64
		stdTol     float64
		allIntsSet bool // every integer in [lo, hi] must appear
	}{
		{name: "UniformFill default", def: op("UniformFill", nil, argInts("shape", n)), dtype: blob.Float32, shape: []int{n},
			lo: 0, hi: math.Nextafter(1, 0), mean: 0.5, std: 1 / math.Sqrt(12), meanTol: 0.005, stdTol: 0.003},
		{name: "UniformFill [-2, 3)", def: op("UniformFill", nil, argInts("shape", 400, 500), argF("min", -2), argF("max", 3)), dtype: blob.Float32, shape: []int{400, 500},
			lo: -2, hi: math.Nextafter(3, 0), mean: 0.5, std: 5 / math.Sqrt(12), meanTol: 0.02, stdTol: 0.01},
		{name: "UniformIntFill [-3, 4]", def: op("UniformIntFill", nil, argInts("shape", n), argI("min", -3), argI("max", 4)), dtype: blob.Int32, shape: []int{n},
			lo: -3, hi: 4, mean: 0.5, std: math.Sqrt((64 - 1) / 12.0), meanTol: 0.02, stdTol: 0.02, allIntsSet: true},
		{name: "GaussianFill N(1, 2²)", def: op("GaussianFill", nil, argInts("shape", n), argF("mean", 1), argF("std", 2)), dtype: blob.Float32, shape: []int{n},
			lo: math.Inf(-1), hi: math.Inf(1), mean: 1, std: 2, meanTol: 0.02, stdTol: 0.02},
		{name: "GaussianFill input shape", def: op("GaussianFill", []string{"X"}, argInts("extra_shape", 1000)), dtype: blob.Float32, shape: []int{200, 1000},
			lo: math.Inf(-1), hi: math.Inf(1), mean: 0, std: 1, meanTol: 0.01, stdTol: 0.01},
		// fan_in = size/dim0 = 250, bound √(3/250).
		{name: "XavierFill", def: op("XavierFill", nil, argInts("shape", 800, 50, 5)), dtype: blob.Float32, shape: []int{800, 50, 5},
			lo: -math.Sqrt(3.0 / 250), hi: math.Sqrt(3.0 / 250), mean: 0, std: math.Sqrt(3.0/250) / math.Sqrt(3), meanTol: 0.001, stdTol: 0.001},
		// fan_out = size/dim1 = 40·3·3 = 360, σ = √(2/360).
		{name: "MSRAFill", def: op("MSRAFill", nil, argInts("shape", 40, 600, 3, 3)), dtype: blob.Float32, shape: []int{40, 600, 3, 3},
			lo: math.Inf(-1), hi: math.Inf(1), mean: 0, std: math.Sqrt(2.0 / 360), meanTol: 0.001, stdTol: 0.001},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var inputs []*blob.Tensor
			if len(tc.def.Input) == 1 {
				inputs = append(inputs, blob.MustFromSlice(make([]float32, 200), 200))
			}
			y := run1(t, optest.Seeded(tc.def, 1234), inputs...)
			if y.DataType() != tc.dtype || !reflect.DeepEqual(y.Dims(), tc.shape) {
				t.Fatalf("got %v, want %v %v", y, tc.dtype, tc.shape)
			}
			v := y.AsFloat64s()
			seen := map[float64]bool{}
			for i, x := range v {
				if x < tc.lo || x > tc.hi || math.IsNaN(x) {
					t.Fatalf("sample %d = %v outside [%v, %v]", i, x, tc.lo, tc.hi)
				}
				seen[x] = true
			}
			if tc.allIntsSet && len(seen) != int(tc.hi-tc.lo)+1 {
				t.Errorf("saw %d distinct values, want every integer in [%v, %v]", len(seen), tc.lo, tc.hi)
			}
			mean, std := moments(v)
			if math.Abs(mean-tc.mean) > tc.meanTol || math.Abs(std-tc.std) > tc.stdTol {
				t.Errorf("mean %v std %v, want %v±%v and %v±%v", mean, std, tc.mean, tc.meanTol, tc.std, tc.stdTol)
			}
		})
	}
}

func TestUniformFillBoundInputs(t *testing.T) {
	shape := blob.MustFromSlice([]int64{1000}, 1)
	y := run1(t, op("UniformFill", []string{"S", "lo", "hi"}, argI("input_as_shape", 1)), shape, blob.Scalar[float32](5), blob.Scalar[float32](6))
	for _, v := range blob.Data[float32](y) {
		if v < 5 || v >= 6 {
			t.Fatalf("sample %v outside [5, 6)", v)
		}
	}
	yi := run1(t, op("UniformIntFill", []string{"S", "lo", "hi"}, argI("input_as_shape", 1)), shape, blob.Scalar[int32](2), blob.Scalar[int32](2))
	for _, v := range blob.Data[int32](yi) {
		if v != 2 {
			t.Fatalf("sample %v, want 2 with min = max = 2", v)
		}
	}
	// min > max empties the first dimension.
	x := blob.MustFromSlice(make([]float32, 6), 3, 2)
	empty := run1(t, op("UniformFill", []string{"X", "lo", "hi"}), x, blob.Scalar[float32](1), blob.Scalar[float32](0))
	if !reflect.DeepEqual(empty.Dims(), []int{0, 2}) {
		t.Fatalf("shape %v, want [0 2]", empty.Dims())
	}
}

func TestRandomFillSeeds(t *testing.T) {
	for _, typ := range []string{"UniformFill", "UniformIntFill", "GaussianFill", "XavierFill", "MSRAFill"} {
		t.Run(typ, func(t *testing.T) {
			def := func(seed uint32) *netdef.OperatorDef {
				return optest.Seeded(op(typ, nil, argInts("shape", 16, 8), argI("min", -100), argI("max", 100)), seed)
			}
			a, b, c := run1(t, def(7)), run1(t, def(7)), run1(t, def(8))
			if !reflect.DeepEqual(a.Raw(), b.Raw()) {
				t.Errorf("the same random_seed gave different values")
			}
			if reflect.DeepEqual(a.Raw(), c.Raw()) {
				t.Errorf("different random_seeds gave the same values")
			}
			// A second run of the same operator draws new values.
			w := optest.NewWorkspace()
			o, err := operators.Create(def(7), w, 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := o.Run(); err != nil {
				t.Fatal(err)
			}
			first := w.Tensor("Y").Clone()
			if !reflect.DeepEqual(first.Raw(), a.Raw()) {
				t.Errorf("first run differs from a fresh operator with the same seed")
			}
			if err := o.Run(); err != nil {
				t.Fatal(err)
			}
			if reflect.DeepEqual(first.Raw(), w.Tensor("Y").Raw()) {
				t.Errorf("the second run repeated the first run's values")
			}
		})
	}
}

// TestFillSteadyStateAllocs checks that a fill operator run again on an
// output of the right size allocates nothing.
func TestFillSteadyStateAllocs(t *testing.T) {
	x := blob.MustFromSlice(make([]float32, 12), 3, 4)
	dims := blob.MustFromSlice([]int64{3, 4})
	tests := []struct {
		def    *netdef.OperatorDef
		inputs []*blob.Tensor
	}{
		{op("ConstantFill", nil, argInts("shape", 3, 4), argF("value", 1)), nil},
		{op("ConstantFill", []string{"X"}, argInts("extra_shape", 2), argI("dtype", 10)), []*blob.Tensor{x}},
		{op("ConstantFill", []string{"X"}, argI("input_as_shape", 1)), []*blob.Tensor{dims}},
		{op("ConstantFill", nil, argInts("shape", 3), argI("dtype", 4), netdef.ArgString("value", "s")), nil},
		{op("UniformFill", nil, argInts("shape", 3, 4)), nil},
		{op("UniformFill", []string{"X", "lo", "hi"}), []*blob.Tensor{x, blob.Scalar[float32](0), blob.Scalar[float32](2)}},
		{op("UniformIntFill", nil, argInts("shape", 3, 4), argI("max", 9)), nil},
		{op("GaussianFill", []string{"X"}), []*blob.Tensor{x}},
		{op("XavierFill", nil, argInts("shape", 3, 4)), nil},
		{op("MSRAFill", nil, argInts("shape", 3, 4)), nil},
		{op("RangeFill", nil, argInts("shape", 3, 4)), nil},
		{op("GivenTensorFill", nil, argInts("shape", 2), argFloats("values", 1, 2)), nil},
		{op("GivenTensorStringFill", []string{"X"}, netdef.ArgStrings("values", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l")), []*blob.Tensor{x}},
	}
	for _, tc := range tests {
		t.Run(tc.def.GetType(), func(t *testing.T) { optest.AssertNoAllocs(t, tc.def, tc.inputs...) })
	}
}

func TestFillHasNoGradient(t *testing.T) {
	for _, typ := range []string{"ConstantFill", "UniformFill", "UniformIntFill", "GaussianFill", "XavierFill", "MSRAFill", "RangeFill",
		"GivenTensorFill", "GivenTensorDoubleFill", "GivenTensorBoolFill", "GivenTensorInt16Fill", "GivenTensorIntFill", "GivenTensorInt64Fill", "GivenTensorStringFill"} {
		def := op(typ, []string{"X"})
		gd, err := operators.GetGradientDefs(def, []operators.Gradient{operators.Dense("Y_grad")})
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		if len(gd.Ops) != 0 || !gd.InputGrad[0].IsNone() {
			t.Errorf("%s: gradient %v, want none", typ, gd)
		}
	}
}

func benchmarkFill(b *testing.B, def *netdef.OperatorDef) { optest.Benchmark(b, optest.Steady(b, def)) }

func BenchmarkConstantFill(b *testing.B) {
	benchmarkFill(b, op("ConstantFill", nil, argInts("shape", 256, 1024), argF("value", 1)))
}

func BenchmarkUniformFill(b *testing.B) {
	benchmarkFill(b, op("UniformFill", nil, argInts("shape", 256, 1024)))
}

func BenchmarkGaussianFill(b *testing.B) {
	benchmarkFill(b, op("GaussianFill", nil, argInts("shape", 256, 1024)))
}

func BenchmarkXavierFill(b *testing.B) {
	benchmarkFill(b, op("XavierFill", nil, argInts("shape", 256, 1024)))
}

func BenchmarkGivenTensorFill(b *testing.B) {
	benchmarkFill(b, op("GivenTensorFill", nil, argInts("shape", 256, 1024), argFloats("values", make([]float32, 256*1024)...)))
}

// TestFillOverBudget: a shape the memory budget refuses, from any source,
// is an error naming the output and the source.
func TestFillOverBudget(t *testing.T) {
	old := blob.SetMemoryBudget(64 << 20)
	defer blob.SetMemoryBudget(old)
	x := blob.MustFromSlice([]float32{1, 2})
	tests := []struct {
		name   string
		def    *netdef.OperatorDef
		inputs []*blob.Tensor
		want   string
	}{
		{"shape argument", op("ConstantFill", nil, argInts("shape", 1<<20, 1<<10)), nil,
			`output "Y", shaped by the shape argument: blob: shape [1048576 1024] of FLOAT: needs 4.0 GiB, over the memory budget of 64.0 MiB`},
		{"input_as_shape", op("GaussianFill", []string{"X"}, argI("input_as_shape", 1)), []*blob.Tensor{blob.MustFromSlice([]int64{1 << 40})},
			`output "Y", shaped by the values of input "X" (input_as_shape): blob: shape [1099511627776] of FLOAT: needs 4.0 TiB`},
		{"extra_shape", op("UniformFill", []string{"X"}, argInts("extra_shape", 1<<30)), []*blob.Tensor{x},
			`output "Y", shaped by the dims of input "X" and extra_shape [1073741824]: blob: shape [2 1073741824] of FLOAT: needs 8.0 GiB`},
		{"int64 dtype", op("ConstantFill", nil, argInts("shape", 1<<24), argI("dtype", int64(netdef.TensorProto_INT64))), nil,
			"shape [16777216] of INT64: needs 128.0 MiB"},
	}
	for _, tc := range tests {
		_, err := optest.RunOp(tc.def, tc.inputs...)
		if !errors.Is(err, blob.ErrOverBudget) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one over the budget containing %q", tc.name, err, tc.want)
		}
	}
}
