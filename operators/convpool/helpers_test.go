package convpool

import (
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
)

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0xc0417)) }

func numel(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// randTensor returns a tensor of dtype with values uniform in [-1, 1)
// (float32-representable, so that both types see the same values).
func randTensor(r *rand.Rand, dtype blob.DataType, shape ...int) *blob.Tensor {
	v := make([]float64, numel(shape))
	for i := range v {
		v[i] = float64(float32(2*r.Float64() - 1))
	}
	return tensorOf(dtype, v, shape...)
}

// tensorOf builds a tensor of dtype (Float32 or Float64) from values.
func tensorOf(dtype blob.DataType, vals []float64, shape ...int) *blob.Tensor {
	if dtype == blob.Float64 {
		return blob.MustFromSlice(slices.Clone(vals), shape...)
	}
	return optest.F32(vals, shape...)
}

// as returns t converted to dtype.
func as(t *blob.Tensor, dtype blob.DataType) *blob.Tensor {
	return tensorOf(dtype, t.AsFloat64s(), t.Dims()...)
}

// golden reads testdata/golden/<name>.npy.
func golden(t testing.TB, name string) *blob.Tensor {
	t.Helper()
	g, err := optest.ReadNPY(filepath.Join("testdata", "golden", name+".npy"))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// moveAxis returns t with axis from moved to position to (the others keep
// their order).
func moveAxis(t *blob.Tensor, from, to int) *blob.Tensor {
	dims := t.Dims()
	var perm []int // output axis i is source axis perm[i]
	for i := range dims {
		if i != from {
			perm = append(perm, i)
		}
	}
	perm = slices.Insert(perm, to, from)
	stride := make([]int, len(dims))
	st := 1
	for i := len(dims) - 1; i >= 0; i-- {
		stride[i] = st
		st *= dims[i]
	}
	out := make([]int, len(dims))
	for i, p := range perm {
		out[i] = dims[p]
	}
	src := t.AsFloat64s()
	dst := make([]float64, len(src))
	for k := range dst {
		rem, s := k, 0
		for i := len(out) - 1; i >= 0; i-- {
			s += (rem % out[i]) * stride[perm[i]]
			rem /= out[i]
		}
		dst[k] = src[s]
	}
	return tensorOf(t.DataType(), dst, out...)
}

// toNHWC moves the channel axis (1) last; toNCHW moves it back.
func toNHWC(t *blob.Tensor) *blob.Tensor { return moveAxis(t, 1, t.NumDims()-1) }
func toNCHW(t *blob.Tensor) *blob.Tensor { return moveAxis(t, t.NumDims()-1, 1) }

// runGrad runs def on inputs, then its registered gradient operators with
// dY as the gradient of output 0, in one workspace. It returns Y and the
// gradient of every input (nil where there is none).
func runGrad(t testing.TB, def *netdef.OperatorDef, inputs []*blob.Tensor, dy *blob.Tensor) (*blob.Tensor, []*blob.Tensor) {
	t.Helper()
	w := optest.NewWorkspace()
	for i, x := range inputs {
		w.Feed(def.Input[i], x)
	}
	if err := w.Run(def); err != nil {
		t.Fatal(err)
	}
	gname := def.Output[0] + "_seed_grad"
	w.Feed(gname, dy)
	gout := make([]operators.Gradient, len(def.Output))
	gout[0] = operators.Dense(gname)
	gd, err := operators.GetGradientDefs(def, gout)
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range gd.Ops {
		if err := w.Run(op); err != nil {
			t.Fatal(err)
		}
	}
	grads := make([]*blob.Tensor, len(inputs))
	for i, g := range gd.InputGrad {
		if g.Dense != "" {
			grads[i] = w.Tensor(g.Dense)
		}
	}
	return w.Tensor(def.Output[0]), grads
}

// checkTensor compares got with want (shape and values).
func checkTensor(t testing.TB, what string, got, want *blob.Tensor, tol float64) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: no tensor", what)
	}
	if !slices.Equal(got.Dims(), want.Dims()) {
		t.Fatalf("%s: shape %v, want %v", what, got.Dims(), want.Dims())
	}
	optest.CheckClose(t, what, got.AsFloat64s(), want.AsFloat64s(), tol)
}

func op(typ string, in, out []string, args ...*netdef.Argument) *netdef.OperatorDef {
	return netdef.NewOperator(typ, in, out, args...)
}

func ai(name string, v int64) *netdef.Argument     { return netdef.ArgInt(name, v) }
func ais(name string, v ...int64) *netdef.Argument { return netdef.ArgInts(name, v...) }
func astr(name, v string) *netdef.Argument         { return netdef.ArgString(name, v) }
func af(name string, v float32) *netdef.Argument   { return netdef.ArgFloat(name, v) }
