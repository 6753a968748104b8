package optim

import (
	"math"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// momentumRef is the momentum step computed in float64.
func momentumRef(g, m []float64, lr, mu float64, nesterov bool) (adj, mom []float64) {
	adj, mom = make([]float64, len(g)), make([]float64, len(g))
	for i := range g {
		if nesterov {
			mom[i] = mu*m[i] + lr*g[i]
			adj[i] = (1+mu)*mom[i] - mu*m[i]
		} else {
			adj[i] = lr*g[i] + mu*m[i]
			mom[i] = adj[i]
		}
	}
	return adj, mom
}

func TestMomentumSGDUpdateSteps(t *testing.T) {
	grads := [][]float64{{0.5, -1, 2, 0.25, -0.75, 1.5}, {-0.2, 0.4, 1, -2, 0.1, 0.3}, {1, 1, -1, 0.5, 0, -0.5}}
	for _, tc := range []struct {
		name     string
		nesterov bool
		inPlace  bool
		dtype    blob.DataType
	}{
		{"plain", false, true, blob.Float32},
		{"nesterov", true, true, blob.Float32},
		{"plain out of place", false, false, blob.Float32},
		{"nesterov float64", true, true, blob.Float64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := optest.NewWorkspace()
			mu, lr, tol := float64(float32(0.9)), 0.05, 1e-12 // momentum is a float argument
			feed := func(name string, v []float64, shape ...int) {
				w.Feed(name, blob.MustFromSlice(append([]float64(nil), v...), shape...))
			}
			exact := func(v []float64) []float64 { return v }
			if tc.dtype == blob.Float32 {
				lr, tol = float64(float32(lr)), 1e-5
				feed = func(name string, v []float64, shape ...int) { w.Feed(name, optest.F32(v, shape...)) }
				exact = widen
			}
			param := []float64{1, 2, 3, -1, -2, 0.5}
			mom := make([]float64, len(param))
			feed("param", param, 2, 3)
			feed("mom", mom, 2, 3)
			feed("lr", []float64{lr})
			feed("grad", grads[0], 2, 3)
			outParam := "param"
			if !tc.inPlace {
				outParam = "param_out"
			}
			op := create(t, w, netdef.NewOperator("MomentumSGDUpdate", []string{"grad", "mom", "lr", "param"},
				[]string{"grad", "mom", outParam}, netdef.ArgFloat("momentum", float32(mu)), netdef.ArgBool("nesterov", tc.nesterov)))
			for _, g := range grads {
				feed("grad", g, 2, 3)
				if !tc.inPlace {
					feed("param", param, 2, 3)
				}
				run(t, op)
				var adj []float64
				adj, mom = momentumRef(exact(g), mom, lr, mu, tc.nesterov)
				fed := append([]float64(nil), param...)
				for i := range param {
					param[i] -= adj[i]
				}
				optest.CheckClose(t, "adjusted grad", values(t, w, "grad"), adj, tol)
				optest.CheckClose(t, "momentum", values(t, w, "mom"), mom, tol)
				optest.CheckClose(t, "param", values(t, w, outParam), param, tol)
				if x := w.Tensor(outParam); x.DataType() != tc.dtype || len(x.Dims()) != 2 || x.Dim(0) != 2 || x.Dim(1) != 3 {
					t.Fatalf("param is %v", x)
				}
				if !tc.inPlace {
					optest.CheckClose(t, "input param", values(t, w, "param"), exact(fed), 0)
				}
			}
		})
	}
}

// adamRef is one Adam step in float64; it returns the new param, moments
// and effective gradient.
func adamRef(p, g, m1, m2 []float64, lr, b1, b2, eps float64, iter int) (np, nm1, nm2, eg []float64) {
	n := len(p)
	np, nm1, nm2, eg = make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	step := float64(iter + 1)
	corr := math.Sqrt(1-math.Pow(b2, step)) / (1 - math.Pow(b1, step))
	for i := range p {
		nm1[i] = b1*m1[i] + (1-b1)*g[i]
		nm2[i] = b2*m2[i] + (1-b2)*g[i]*g[i]
		eg[i] = corr * nm1[i] / (math.Sqrt(nm2[i]) + eps)
		np[i] = p[i] + lr*eg[i]
	}
	return np, nm1, nm2, eg
}

func TestAdamSteps(t *testing.T) {
	grads := [][]float64{{0.5, -1, 2, 0.25}, {-0.2, 0.4, 1, -2}, {1, 1, -1, 0.5}, {0.3, -0.3, 0.03, 4}}
	for _, tc := range []struct {
		name    string
		outputs int
		args    []*netdef.Argument
		b1, b2  float64
		eps     float64
	}{
		{"defaults", 3, nil, 0.9, 0.999, 1e-5},
		{"effective grad", 4, []*netdef.Argument{netdef.ArgFloat("beta1", 0.8), netdef.ArgFloat("beta2", 0.99), netdef.ArgFloat("epsilon", 1e-3)}, 0.8, 0.99, 1e-3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b1, b2, eps := float64(float32(tc.b1)), float64(float32(tc.b2)), float64(float32(tc.eps))
			lr := float64(float32(-0.01))
			w := optest.NewWorkspace()
			p := []float64{1, -2, 0.5, 3}
			m1, m2 := make([]float64, 4), make([]float64, 4)
			w.Feed("p", optest.F32(p))
			w.Feed("m1", optest.F32(m1))
			w.Feed("m2", optest.F32(m2))
			w.Feed("lr", optest.F32([]float64{lr}))
			w.Feed("g", optest.F32(grads[0]))
			w.Feed("iter", blob.MustFromSlice([]int64{0}))
			outs := []string{"p", "m1", "m2", "eg"}[:tc.outputs]
			op := create(t, w, netdef.NewOperator("Adam", []string{"p", "m1", "m2", "g", "lr", "iter"}, outs, tc.args...))
			for step, g := range grads {
				w.Feed("g", optest.F32(g))
				blob.Data[int64](w.Tensor("iter"))[0] = int64(step)
				run(t, op)
				var eg []float64
				p, m1, m2, eg = adamRef(p, widen(g), m1, m2, lr, b1, b2, eps, step)
				optest.CheckClose(t, "param", values(t, w, "p"), p, 1e-5)
				optest.CheckClose(t, "moment_1", values(t, w, "m1"), m1, 1e-5)
				optest.CheckClose(t, "moment_2", values(t, w, "m2"), m2, 1e-5)
				if tc.outputs == 4 {
					optest.CheckClose(t, "effective grad", values(t, w, "eg"), eg, 1e-5)
				}
			}
		})
	}
}

func TestAdagradSteps(t *testing.T) {
	grads := [][]float64{{0.5, -1, 2, 0.25, 3, -3}, {-0.2, 0.4, 1, -2, 0, 1}, {1, 1, -1, 0.5, 0.1, -0.1}}
	for _, outputs := range []int{2, 3, 4} {
		for _, decay := range []float64{1, 0.9} {
			w := optest.NewWorkspace()
			const eps, lr = 1e-3, 0.1
			p := []float64{1, -2, 0.5, 3, 0, 0}
			h := make([]float64, len(p))
			w.Feed("p", optest.F32(p, 3, 2))
			w.Feed("h", optest.F32(h, 3, 2))
			w.Feed("g", optest.F32(grads[0], 3, 2))
			w.Feed("lr", optest.F32([]float64{lr}))
			outs := []string{"p", "h", "elr", "upd"}[:outputs]
			op := create(t, w, netdef.NewOperator("Adagrad", []string{"p", "h", "g", "lr"}, outs,
				netdef.ArgFloat("epsilon", eps), netdef.ArgFloat("decay", float32(decay))))
			for _, g := range grads {
				w.Feed("g", optest.F32(g, 3, 2))
				run(t, op)
				g = widen(g)
				elr, upd := make([]float64, len(p)), make([]float64, len(p))
				for i := range p {
					h[i] = float64(float32(decay))*h[i] + g[i]*g[i]
					elr[i] = float64(float32(lr)) / (math.Sqrt(h[i]) + float64(float32(eps)))
					upd[i] = elr[i] * g[i]
					p[i] += upd[i]
				}
				optest.CheckClose(t, "param", values(t, w, "p"), p, 1e-5)
				optest.CheckClose(t, "moment", values(t, w, "h"), h, 1e-5)
				if outputs > 2 {
					optest.CheckClose(t, "effective lr", values(t, w, "elr"), elr, 1e-5)
				}
				if outputs > 3 {
					optest.CheckClose(t, "update", values(t, w, "upd"), upd, 1e-5)
				}
			}
		}
	}
}

func TestUpdateInputErrors(t *testing.T) {
	v4 := blob.MustFromSlice([]float32{1, 2, 3, 4})
	v3 := blob.MustFromSlice([]float32{1, 2, 3})
	lr := blob.MustFromSlice([]float32{0.1})
	lr2 := blob.MustFromSlice([]float32{0.1, 0.2})
	d4 := blob.MustFromSlice([]float64{1, 2, 3, 4})
	it := blob.MustFromSlice([]int64{3})
	itF := blob.MustFromSlice([]float32{3})
	msgd := netdef.NewOperator("MomentumSGDUpdate", []string{"g", "m", "lr", "p"}, []string{"g", "m", "p"})
	adam := netdef.NewOperator("Adam", []string{"p", "m1", "m2", "g", "lr", "it"}, []string{"p", "m1", "m2"})
	adagrad := netdef.NewOperator("Adagrad", []string{"p", "h", "g", "lr"}, []string{"p", "h"})
	for _, tc := range []struct {
		name   string
		def    *netdef.OperatorDef
		inputs []*blob.Tensor
		want   string
	}{
		{"momentum size", msgd, []*blob.Tensor{v4, v3, lr, v4}, `"m"`},
		{"param size", msgd, []*blob.Tensor{v4, v4, lr, v3}, `"p"`},
		{"lr size", msgd, []*blob.Tensor{v4, v4, lr2, v4}, `"lr"`},
		{"mixed types", msgd, []*blob.Tensor{v4, d4, lr, v4}, `"m"`},
		{"int grad", msgd, []*blob.Tensor{it, it, it, it}, `"g"`},
		{"adam iter type", adam, []*blob.Tensor{v4, v4, v4, v4, lr, itF}, `"it"`},
		{"adam moment size", adam, []*blob.Tensor{v4, v4, v3, v4, lr, it}, `"m2"`},
		{"adagrad size", adagrad, []*blob.Tensor{v4, v4, v3, lr}, `"g"`},
		{"adagrad lr", adagrad, []*blob.Tensor{v4, v4, v4, lr2}, `"lr"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := optest.RunOp(tc.def, tc.inputs...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one naming %s", err, tc.want)
			}
		})
	}
}

func TestAdamAdagradFloat64(t *testing.T) {
	p, g := []float64{1, -2, 0.5}, []float64{0.3, -0.1, 2}
	m1, m2 := []float64{0.1, 0.2, -0.3}, []float64{0.01, 0.02, 0.03}
	f64 := func(v []float64) *blob.Tensor { return blob.MustFromSlice(append([]float64(nil), v...)) }
	adam := netdef.NewOperator("Adam", []string{"p", "m1", "m2", "g", "lr", "it"}, []string{"p", "m1", "m2"})
	out, err := optest.RunOp(adam, f64(p), f64(m1), f64(m2), f64(g), f64([]float64{-0.1}), blob.MustFromSlice([]int64{4}))
	if err != nil {
		t.Fatal(err)
	}
	b1, b2, eps := float64(float32(0.9)), float64(float32(0.999)), float64(float32(1e-5))
	np, nm1, nm2, _ := adamRef(p, g, m1, m2, -0.1, b1, b2, eps, 4)
	optest.CheckClose(t, "Adam param", out[0].AsFloat64s(), np, 1e-12)
	optest.CheckClose(t, "Adam moment_1", out[1].AsFloat64s(), nm1, 1e-12)
	optest.CheckClose(t, "Adam moment_2", out[2].AsFloat64s(), nm2, 1e-12)

	adagrad := netdef.NewOperator("Adagrad", []string{"p", "h", "g", "lr"}, []string{"p", "h", "elr", "upd"})
	out, err = optest.RunOp(adagrad, f64(p), f64(m2), f64(g), f64([]float64{0.1}))
	if err != nil {
		t.Fatal(err)
	}
	wantP, wantH, wantE, wantU := make([]float64, 3), make([]float64, 3), make([]float64, 3), make([]float64, 3)
	for i := range p {
		wantH[i] = m2[i] + g[i]*g[i]
		wantE[i] = 0.1 / (math.Sqrt(wantH[i]) + eps)
		wantU[i] = wantE[i] * g[i]
		wantP[i] = p[i] + wantU[i]
	}
	for i, want := range [][]float64{wantP, wantH, wantE, wantU} {
		optest.CheckClose(t, adagrad.Output[i], out[i].AsFloat64s(), want, 1e-12)
	}
}
