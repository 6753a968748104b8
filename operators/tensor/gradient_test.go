package tensor

import (
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// rnd returns a float32 tensor with distinct, irregular values.
func rnd(shape ...int) *blob.Tensor {
	t := seq(shape...)
	for i, v := range blob.Data[float32](t) {
		blob.Data[float32](t)[i] = 0.37*v - 1.1 + 0.05*float32(i%3)
	}
	return t
}

// TestGradientCheck compares every registered dense gradient with finite
// differences, one row per operator and differentiable input.
func TestGradientCheck(t *testing.T) {
	x, y := []string{"X"}, []string{"Y"}
	cases := []struct {
		name  string
		def   *netdef.OperatorDef
		in    []*blob.Tensor
		input int
	}{
		{"Copy", op("Copy", x, y), []*blob.Tensor{rnd(2, 3)}, 0},
		{"Alias", op("Alias", x, y), []*blob.Tensor{rnd(2, 3)}, 0},
		{"Reshape/shape", op("Reshape", x, []string{"Y", "old"}, argIs("shape", 3, -1)), []*blob.Tensor{rnd(2, 3)}, 0},
		{"Reshape/input", op("Reshape", []string{"X", "S"}, []string{"Y", "old"}), []*blob.Tensor{rnd(2, 3), i32(shp(3), 1, 0, 2)}, 0},
		{"Flatten", op("Flatten", x, y, argI("axis", 2)), []*blob.Tensor{rnd(2, 3, 2)}, 0},
		{"FlattenToVec", op("FlattenToVec", x, y), []*blob.Tensor{rnd(2, 3)}, 0},
		{"ExpandDims", op("ExpandDims", x, y, argIs("dims", 0, 2)), []*blob.Tensor{rnd(2, 3)}, 0},
		{"Squeeze", op("Squeeze", x, y, argIs("dims", 1)), []*blob.Tensor{rnd(2, 1, 3)}, 0},
		{"Concat/0", op("Concat", []string{"A", "B"}, []string{"Y", "info"}, argI("axis", 1)), []*blob.Tensor{rnd(2, 2), rnd(2, 3)}, 0},
		{"Concat/1", op("Concat", []string{"A", "B"}, []string{"Y", "info"}, argI("axis", 1)), []*blob.Tensor{rnd(2, 2), rnd(2, 3)}, 1},
		{"Concat/negative", op("Concat", []string{"A", "B"}, []string{"Y", "info"}, argI("axis", -2)), []*blob.Tensor{rnd(1, 3), rnd(2, 3)}, 1},
		{"Concat/order", op("Concat", []string{"A", "B"}, []string{"Y", "info"}, argStr("order", "NHWC")), []*blob.Tensor{rnd(1, 2, 1, 2), rnd(1, 2, 1, 1)}, 1},
		{"Concat/add_axis", op("Concat", []string{"A", "B"}, []string{"Y", "info"}, argI("axis", 1), argI("add_axis", 1)), []*blob.Tensor{rnd(2, 3), rnd(2, 3)}, 1},
		{"DepthConcat", op("DepthConcat", []string{"A", "B"}, []string{"Y", "info"}), []*blob.Tensor{rnd(2, 1), rnd(2, 2)}, 0},
		{"Split/arg", op("Split", x, []string{"A", "B"}, argI("axis", 1), argIs("split", 1, 2)), []*blob.Tensor{rnd(2, 3)}, 0},
		{"Split/input", op("Split", []string{"X", "S"}, []string{"A", "B"}, argI("axis", 0)), []*blob.Tensor{rnd(3, 2), i32(shp(2), 2, 1)}, 0},
		{"Split/equal", op("Split", x, []string{"A", "B", "C"}, argI("axis", -1)), []*blob.Tensor{rnd(2, 3)}, 0},
		{"Split/add_axis", op("Split", x, []string{"A", "B"}, argI("axis", 0), argI("add_axis", 1)), []*blob.Tensor{rnd(2, 3)}, 0},
		{"DepthSplit", op("DepthSplit", x, []string{"A", "B"}), []*blob.Tensor{rnd(2, 4)}, 0},
		{"Transpose/default", op("Transpose", x, y), []*blob.Tensor{rnd(2, 3, 2)}, 0},
		{"Transpose/axes", op("Transpose", x, y, argIs("axes", 1, 2, 0)), []*blob.Tensor{rnd(2, 3, 4)}, 0},
		{"Cast/f32-f64", op("Cast", x, y, argI("to", int64(netdef.TensorProto_DOUBLE)), argI("from_type", int64(netdef.TensorProto_FLOAT))), []*blob.Tensor{rnd(2, 2)}, 0},
		{"Cast/names", op("Cast", x, y, argStr("to", "float"), argStr("from_type", "FLOAT")), []*blob.Tensor{rnd(3)}, 0},
		{"Tile/args", op("Tile", x, y, argI("tiles", 3), argI("axis", 1)), []*blob.Tensor{rnd(2, 2, 2)}, 0},
		{"Tile/negative", op("Tile", x, y, argI("tiles", 2), argI("axis", -1)), []*blob.Tensor{rnd(2, 3)}, 0},
		{"Tile/inputs", op("Tile", []string{"X", "T", "A"}, y), []*blob.Tensor{rnd(2, 3), i32(shp(1), 2), i32(shp(1), 0)}, 0},
		{"Gather/axis1", op("Gather", []string{"D", "I"}, y, argI("axis", 1)), []*blob.Tensor{rnd(2, 3, 2), i32(shp(4), 2, 0, 2, 1)}, 0},
		{"Gather/axis-negative", op("Gather", []string{"D", "I"}, y, argI("axis", -1), argI("dense_gradient", 1)), []*blob.Tensor{rnd(2, 3), i64(shp(2, 2), 1, 1, 0, 2)}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			worst, err := optest.CheckGradient(c.def, c.in, c.input, optest.GradientCheck{})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("worst scaled error %.2g", worst)
		})
	}
}

// TestGatherSparseGradient checks Gather's default (sparse) gradient along
// axis 0: scattering the values at the indices must give the numeric
// gradient of Σ ½·y².
func TestGatherSparseGradient(t *testing.T) {
	def := op("Gather", []string{"D", "I"}, []string{"Y"})
	data, ind := rnd(4, 2), i32(shp(3), 3, 0, 3)
	gd := gradDefs(t, def, 0)
	if len(gd.Ops) != 0 {
		t.Fatalf("sparse gradient emitted operators %v", gd.Ops)
	}
	g := gd.InputGrad[0]
	if g.Indices != "I" || g.Values != "Y_grad" || g.Dense != "" {
		t.Fatalf("gradient of D = %+v, want indices I and values Y_grad", g)
	}
	y := optest.MustRunOp(t, def, data, ind)[0]
	// dL/dY = Y; scatter it into a dense gradient of D.
	dense := make([]float64, data.Size())
	for i, k := range blob.Data[int32](ind) {
		for j := 0; j < 2; j++ {
			dense[int(k)*2+j] += float64(blob.Data[float32](y)[i*2+j])
		}
	}
	loss := func(d *blob.Tensor) float64 {
		var l float64
		for _, v := range optest.MustRunOp(t, def, d, ind)[0].AsFloat64s() {
			l += 0.5 * v * v
		}
		return l
	}
	const h = 1e-3
	for k := range dense {
		p, m := data.Clone(), data.Clone()
		blob.Data[float32](p)[k] += h
		blob.Data[float32](m)[k] -= h
		num := (loss(p) - loss(m)) / (2 * h)
		if diff := num - dense[k]; diff > 5e-3 || diff < -5e-3 {
			t.Errorf("d/dD[%d]: sparse gradient gives %g, numeric %g", k, dense[k], num)
		}
	}
}
