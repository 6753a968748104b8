package sparse

import (
	"math"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
	_ "github.com/caffe2go/caffe2go/operators/tensor" // Gather, SparseToDense's gradient
)

//go:generate python3 testdata/gen_quant.py

func i32(v ...int32) *blob.Tensor { return blob.MustFromSlice(v, len(v)) }
func i64(v ...int64) *blob.Tensor { return blob.MustFromSlice(v, len(v)) }
func f32(v ...float32) *blob.Tensor {
	return blob.MustFromSlice(v, len(v))
}

// table returns a [rows, cols] FLOAT tensor of distinct values.
func table(rows, cols int) *blob.Tensor {
	v := make([]float64, rows*cols)
	for i := range v {
		v[i] = math.Sin(float64(3*i+1)) * 2
	}
	return optest.F32(v, rows, cols)
}

// loss is Σ ½·y² over op's FLOAT outputs.
func loss(t *testing.T, def *netdef.OperatorDef, in []*blob.Tensor) float64 {
	t.Helper()
	out := optest.MustRunOp(t, def, in...)
	var l float64
	for _, y := range out {
		if y.DataType() == blob.Float32 {
			for _, v := range y.AsFloat64s() {
				l += 0.5 * v * v
			}
		}
	}
	return l
}

// checkSparseGradient runs def's gradient operators with dOUTPUT = OUTPUT
// (the gradient of Σ ½·y²), checks that input wrt gets a gradient slice
// whose indices are the operator's input indicesIn, adds its values up
// into a dense gradient and compares that with central differences.
func checkSparseGradient(t *testing.T, def *netdef.OperatorDef, in []*blob.Tensor, wrt, indicesIn int) {
	t.Helper()
	w := optest.NewWorkspace()
	for i, x := range in {
		w.Feed(def.Input[i], x)
	}
	if err := w.Run(def); err != nil {
		t.Fatal(err)
	}
	gradOut := make([]operators.Gradient, len(def.Output))
	for i, o := range def.Output {
		w.Feed(o+"_seed", w.Tensor(o))
		gradOut[i] = operators.Dense(o + "_seed")
	}
	gd, err := operators.GetGradientDefs(def, gradOut)
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range gd.Ops {
		if err := w.Run(op); err != nil {
			t.Fatal(err)
		}
	}
	g := gd.InputGrad[wrt]
	if !g.IsSparse() || g.Indices != def.Input[indicesIn] {
		t.Fatalf("%s: gradient of input %d is %+v, want a slice indexed by %q", def.GetType(), wrt, g, def.Input[indicesIn])
	}
	idx, vals := w.Tensor(g.Indices).AsFloat64s(), w.Tensor(g.Values).AsFloat64s()
	x := in[wrt]
	block := x.Size() / x.Dim(0)
	if len(vals) != len(idx)*block {
		t.Fatalf("%s: %d gradient values for %d indices of rows of %d", def.GetType(), len(vals), len(idx), block)
	}
	dense := make([]float64, x.Size())
	for k, r := range idx {
		for j := 0; j < block; j++ {
			dense[int(r)*block+j] += vals[k*block+j]
		}
	}
	const step = 1e-3
	for k := range dense {
		perturb := func(d float32) float64 {
			c := x.Clone()
			blob.Data[float32](c)[k] += d
			p := append([]*blob.Tensor{}, in...)
			p[wrt] = c
			return loss(t, def, p)
		}
		num := (perturb(step) - perturb(-step)) / (2 * step)
		if math.Abs(num-dense[k]) > 5e-3*math.Max(1, math.Abs(num)) {
			t.Fatalf("%s: d/d%s[%d]: analytic %g, numeric %g", def.GetType(), def.Input[wrt], k, dense[k], num)
		}
	}
}
