package optim

import (
	"math"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// sparseCase is a 3×2 parameter updated through rows 2, 0 and 2 again.
var (
	sparseParam  = []float64{1, 2, 3, 4, 5, 6}
	sparseValues = []float64{0.5, -1, 2, 0.25, -0.75, 1.5}
	sparseRows   = []int{2, 0, 2}
)

// indexTensors returns sparseRows as int32 and as int64 tensors.
func indexTensors() map[string]*blob.Tensor {
	i32 := make([]int32, len(sparseRows))
	i64 := make([]int64, len(sparseRows))
	for k, r := range sparseRows {
		i32[k], i64[k] = int32(r), int64(r)
	}
	return map[string]*blob.Tensor{"int32": blob.MustFromSlice(i32), "int64": blob.MustFromSlice(i64)}
}

// eachRow calls f(k, row, j) for element j of every (index, row) pair in
// order, the order in which Caffe2's kernels update.
func eachRow(f func(k, row, j int)) {
	for k, r := range sparseRows {
		for j := 0; j < 2; j++ {
			f(k, r, j)
		}
	}
}

func TestScatterWeightedSum(t *testing.T) {
	for name, idx := range indexTensors() {
		t.Run(name, func(t *testing.T) {
			x2 := []float64{1, 1, 1, 1, 1, 1}
			def := netdef.NewOperator("ScatterWeightedSum", []string{"x0", "w0", "i", "x1", "w1", "x2", "w2"}, []string{"x0"})
			out := optest.MustRunOp(t, def, optest.F32(sparseParam, 3, 2), optest.F32([]float64{0.5}), idx,
				optest.F32(sparseValues, 3, 2), optest.F32([]float64{-0.1}), optest.F32(x2, 3, 2), optest.F32([]float64{2}))
			want := append([]float64(nil), sparseParam...)
			for _, r := range sparseRows { // w0 scales a row once per occurrence
				want[2*r] *= 0.5
				want[2*r+1] *= 0.5
			}
			eachRow(func(k, r, j int) { want[2*r+j] += float64(float32(-0.1))*float64(float32(sparseValues[2*k+j])) + 2 })
			optest.CheckClose(t, "x0", out[0].AsFloat64s(), want, 1e-6)
		})
	}
	// The SGD form: weight_0 = 1 leaves the other rows alone.
	def := netdef.NewOperator("ScatterWeightedSum", []string{"p", "one", "i", "v", "lr"}, []string{"p"})
	out := optest.MustRunOp(t, def, blob.MustFromSlice([]float64{1, 2, 3}), blob.MustFromSlice([]float64{1}),
		blob.MustFromSlice([]int64{1}), blob.MustFromSlice([]float64{10}), blob.MustFromSlice([]float64{-0.5}))
	optest.CheckClose(t, "sgd form", out[0].AsFloat64s(), []float64{1, -3, 3}, 0)
}

func TestSparseMomentumSGDUpdate(t *testing.T) {
	for _, nesterov := range []bool{false, true} {
		for name, idx := range indexTensors() {
			mu, lr := float64(float32(0.9)), float64(float32(-0.1))
			param := widen(sparseParam)
			mom := []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6}
			g := widen(sparseValues)
			def := netdef.NewOperator("SparseMomentumSGDUpdate", []string{"g", "m", "lr", "p", "i"}, []string{"g_out", "m", "p"},
				netdef.ArgFloat("momentum", float32(mu)), netdef.ArgBool("nesterov", nesterov))
			out := optest.MustRunOp(t, def, optest.F32(g, 3, 2), optest.F32(mom, 3, 2), optest.F32([]float64{lr}),
				optest.F32(param, 3, 2), idx)
			adj := make([]float64, len(g))
			eachRow(func(k, r, j int) {
				a, m := momentumRef([]float64{g[2*k+j]}, []float64{mom[2*r+j]}, lr, mu, nesterov)
				adj[2*k+j], mom[2*r+j] = a[0], m[0]
				param[2*r+j] -= a[0]
			})
			what := name
			if nesterov {
				what += " nesterov"
			}
			optest.CheckClose(t, what+" adjusted grad", out[0].AsFloat64s(), adj, 1e-6)
			optest.CheckClose(t, what+" momentum", out[1].AsFloat64s(), mom, 1e-6)
			optest.CheckClose(t, what+" param", out[2].AsFloat64s(), param, 1e-6)
		}
	}
}

func TestSparseAdagrad(t *testing.T) {
	for name, idx := range indexTensors() {
		const eps, lr = 1e-3, 0.1
		param := widen(sparseParam)
		h := []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6}
		g := widen(sparseValues)
		def := netdef.NewOperator("SparseAdagrad", []string{"p", "h", "i", "g", "lr"}, []string{"p", "h"}, netdef.ArgFloat("epsilon", eps))
		out := optest.MustRunOp(t, def, optest.F32(param, 3, 2), optest.F32(h, 3, 2), idx, optest.F32(g, 3, 2), optest.F32([]float64{lr}))
		h = widen(h)
		eachRow(func(k, r, j int) {
			gi := g[2*k+j]
			h[2*r+j] += gi * gi
			param[2*r+j] += float64(float32(lr)) * gi / (math.Sqrt(h[2*r+j]) + float64(float32(eps)))
		})
		optest.CheckClose(t, name+" param", out[0].AsFloat64s(), param, 1e-5)
		optest.CheckClose(t, name+" moment", out[1].AsFloat64s(), h, 1e-5)
	}
}

func TestSparseAdam(t *testing.T) {
	for name, idx := range indexTensors() {
		b1, b2, eps := float64(float32(0.9)), float64(float32(0.999)), float64(float32(1e-5))
		lr := float64(float32(-0.01))
		param := widen(sparseParam)
		m1 := []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6}
		m2 := []float64{0.01, 0.02, 0.03, 0.04, 0.05, 0.06}
		g := widen(sparseValues)
		def := netdef.NewOperator("SparseAdam", []string{"p", "m1", "m2", "i", "g", "lr", "it"}, []string{"p", "m1", "m2"})
		out := optest.MustRunOp(t, def, optest.F32(param, 3, 2), optest.F32(m1, 3, 2), optest.F32(m2, 3, 2), idx,
			optest.F32(g, 3, 2), optest.F32([]float64{lr}), blob.MustFromSlice([]int64{4}))
		m1, m2 = widen(m1), widen(m2)
		eachRow(func(k, r, j int) {
			np, nm1, nm2, _ := adamRef([]float64{param[2*r+j]}, []float64{g[2*k+j]}, []float64{m1[2*r+j]}, []float64{m2[2*r+j]}, lr, b1, b2, eps, 4)
			param[2*r+j], m1[2*r+j], m2[2*r+j] = np[0], nm1[0], nm2[0]
		})
		optest.CheckClose(t, name+" param", out[0].AsFloat64s(), param, 1e-5)
		optest.CheckClose(t, name+" moment_1", out[1].AsFloat64s(), m1, 1e-5)
		optest.CheckClose(t, name+" moment_2", out[2].AsFloat64s(), m2, 1e-5)
	}
}

func TestSparseUpdateErrors(t *testing.T) {
	p := optest.F32(sparseParam, 3, 2)
	v := optest.F32(sparseValues, 3, 2)
	v4 := optest.F32([]float64{1, 2, 3, 4}, 2, 2)
	lr := optest.F32([]float64{0.1})
	idx := blob.MustFromSlice([]int64{0, 1, 2})
	far := blob.MustFromSlice([]int64{0, 3, 1})
	neg := blob.MustFromSlice([]int32{0, -1, 1})
	fidx := blob.MustFromSlice([]float32{0, 1, 2})
	it := blob.MustFromSlice([]int64{0})
	sws := netdef.NewOperator("ScatterWeightedSum", []string{"p", "one", "i", "v", "lr"}, []string{"p"})
	msgd := netdef.NewOperator("SparseMomentumSGDUpdate", []string{"g", "m", "lr", "p", "i"}, []string{"g", "m", "p"})
	adagrad := netdef.NewOperator("SparseAdagrad", []string{"p", "h", "i", "g", "lr"}, []string{"p", "h"})
	adam := netdef.NewOperator("SparseAdam", []string{"p", "m1", "m2", "i", "g", "lr", "it"}, []string{"p", "m1", "m2"})
	for _, tc := range []struct {
		name   string
		def    *netdef.OperatorDef
		inputs []*blob.Tensor
		want   string
	}{
		{"scatter index range", sws, []*blob.Tensor{p, lr, far, v, lr}, `"i"`},
		{"scatter values size", sws, []*blob.Tensor{p, lr, idx, v4, lr}, `"v"`},
		{"scatter weight size", sws, []*blob.Tensor{p, v, idx, v, lr}, `"one"`},
		{"momentum negative index", msgd, []*blob.Tensor{v, p, lr, p, neg}, `"i"`},
		{"momentum float index", msgd, []*blob.Tensor{v, p, lr, p, fidx}, `"i"`},
		{"momentum state size", msgd, []*blob.Tensor{v, v4, lr, p, idx}, `"m"`},
		{"adagrad values size", adagrad, []*blob.Tensor{p, p, idx, v4, lr}, `"g"`},
		{"adagrad lr size", adagrad, []*blob.Tensor{p, p, idx, v, v}, `"lr"`},
		{"adam index range", adam, []*blob.Tensor{p, p, p, far, v, lr, it}, `"i"`},
		{"adam iter type", adam, []*blob.Tensor{p, p, p, idx, v, lr, lr}, `"it"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := optest.RunOp(tc.def, tc.inputs...); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one naming %s", err, tc.want)
			}
		})
	}
}
