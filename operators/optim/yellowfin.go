package optim

import (
	"math"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

// yfScalars is the number of scalars YellowFin keeps in scalars_memory:
// the moving averages of ‖g‖, ‖g‖², the curvature range's ends and the
// distance to the optimum.
const yfScalars = 5

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "YellowFin", MinInputs: 10, MaxInputs: 10, MinOutputs: 8, MaxOutputs: 8,
		CPUInputs: []int{9}, // the iteration counter
		AllowInplace: operators.InplacePairs([2]int{0, 0}, [2]int{1, 1}, [2]int{2, 2}, [2]int{3, 3},
			[2]int{4, 4}, [2]int{5, 5}, [2]int{6, 6}, [2]int{7, 7}),
		Args: []operators.ArgSpec{
			{Name: "beta", Default: float32(0.999), Doc: "the coefficient of the moving averages"},
			{Name: "curv_win_width", Default: 20, Doc: "the iterations of squared gradient norms the curvature range spans"},
			{Name: "epsilon", Default: float32(1e-6), Doc: "the floor of norms and the variance"},
			{Name: "nesterov", Default: 0, Doc: "take Nesterov momentum steps"},
			{Name: "zero_debias", Default: true, Doc: "divide the moving averages by 1 − beta^iter"},
		},
		Doc: "(param, moment, lr, mu, curv_win, g_avg, g2_avg, scalars_memory, grad, iter) → the same eight, updated: " +
			"a momentum SGD step with the tuned lr and mu (moment = mu·moment + lr·grad, param −= moment), then " +
			"YellowFin's tuning (arXiv:1706.03471) of lr and mu from moving averages of the gradient, its square, its norm, " +
			"the curvature range over the last curv_win_width iterations and the distance to the optimum. lr and mu hold " +
			"one element, curv_win curv_win_width, scalars_memory 5; iter is an int64 CPU tensor ≥ 1. FLOAT.",
	}, newYellowFin)
	operators.MustRegisterGradientForbidden("YellowFin")
	operators.MustRegisterShapeFunc("YellowFin", operators.SameShapes([]int{0, 1, 5, 6, 8}, 0, 1, 2, 3, 4, 5, 6, 7))
}

type yellowFinOp struct {
	*operators.Base
	beta, eps         float64
	width             int
	nesterov, debias  bool
	in                [9]*blob.Tensor
	out               [8]*blob.Tensor
	gAvg, g2Avg, curv []float32 // copies of the state inputs when an output is another blob
}

func newYellowFin(b *operators.Base) (operators.Operator, error) {
	w := b.ArgInt("curv_win_width", 20)
	if w < 1 || w > math.MaxInt32 {
		return nil, b.Errorf("curv_win_width is %d, want ≥ 1", w)
	}
	return &yellowFinOp{Base: b, beta: float64(b.ArgFloat("beta", 0.999)), eps: float64(b.ArgFloat("epsilon", 1e-6)),
		width: int(w), nesterov: b.ArgInt("nesterov", 0) != 0, debias: b.ArgBool("zero_debias", true)}, nil
}

func (o *yellowFinOp) Run() error {
	if err := float32Inputs(o.Base, o.in[:], 0, 1, 2, 3, 4, 5, 6, 7, 8); err != nil {
		return err
	}
	defer clear(o.in[:])
	defer clear(o.out[:])
	param, moment, lrT, muT, curvT, gAvgT, g2AvgT, memT, grad := o.in[0], o.in[1], o.in[2], o.in[3], o.in[4], o.in[5], o.in[6], o.in[7], o.in[8]
	for _, i := range []int{1, 5, 6, 8} {
		if t := o.in[i]; !equalDims(t.Dims(), param.Dims()) {
			return o.Errorf("input %d (%q) has shape %v, the parameter (%q) %v: they must match", i, o.InputName(i), t.Dims(), o.InputName(0), param.Dims())
		}
	}
	for _, c := range [4][2]int{{2, 1}, {3, 1}, {4, o.width}, {7, yfScalars}} {
		if i, n := c[0], c[1]; o.in[i].Size() != n {
			return o.Errorf("input %d (%q) has shape %v, want %d elements", i, o.InputName(i), o.in[i].Dims(), n)
		}
	}
	it, err := o.InputOf(9, blob.Int64)
	if err != nil {
		return err
	}
	if it.Size() != 1 || blob.Data[int64](it)[0] < 1 {
		return o.Errorf("iter (%q) must hold one int64 ≥ 1, got %v", o.InputName(9), it)
	}
	iter := blob.Data[int64](it)[0]
	f := blob.Data[float32]
	// The state inputs are read after outputs that may be other blobs are
	// written; keep what is needed first.
	lrIn, muIn := float64(f(lrT)[0]), float64(f(muT)[0])
	var mem [yfScalars]float64
	for k, v := range f(memT) {
		mem[k] = float64(v)
	}
	for i, t := range []*blob.Tensor{param, moment, lrT, muT, curvT, gAvgT, g2AvgT, memT} {
		y, err := resizeLike(o.Base, i, t, false)
		if err != nil {
			return err
		}
		o.out[i] = y
	}
	if err := blob.CheckElements(blob.Float32, 2*param.Size()+o.width); err != nil {
		return o.Errorf("scratch for the state: %v", err)
	}
	o.gAvg = append(o.gAvg[:0], f(gAvgT)...)
	o.g2Avg = append(o.g2Avg[:0], f(g2AvgT)...)
	o.curv = append(o.curv[:0], f(curvT)...)

	// The momentum step uses the lr and mu of the previous iteration.
	w, m, g := f(param), f(moment), f(grad)
	nw, nm := f(o.out[0]), f(o.out[1])
	lr, mu := float32(lrIn), float32(muIn)
	for i, gi := range g {
		mi := m[i]
		nm[i] = mu*mi + lr*gi
		if o.nesterov {
			nw[i] = w[i] - (1+mu)*nm[i] + mu*mi
		} else {
			nw[i] = w[i] - nm[i]
		}
	}

	beta := o.beta
	df := 1.0
	if o.debias {
		df = 1 / (1 - math.Pow(beta, float64(iter)))
	}
	// avg moves an average toward x and returns the new value and its
	// debiased one.
	avg := func(old, x float64) (float64, float64) {
		v := beta*old + (1-beta)*x
		return v, df * v
	}
	ng, ng2 := f(o.out[5]), f(o.out[6])
	var norm2, gDebSq float64
	for i, gi := range g {
		x := float64(gi)
		a, deb := avg(float64(o.gAvg[i]), x)
		ng[i] = float32(a)
		gDebSq += deb * deb
		a2, _ := avg(float64(o.g2Avg[i]), x*x)
		ng2[i] = float32(a2)
		norm2 += x * x
	}
	norm2 = max(norm2, o.eps)
	normAvg2, normDeb2 := avg(mem[1], norm2)
	normAvg, _ := avg(mem[0], math.Sqrt(norm2))
	curv := f(o.out[4])
	copy(curv, o.curv)
	curv[int((iter-1)%int64(o.width))] = float32(math.Log(norm2))
	valid := curv[:min(int64(o.width), iter)]
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range valid {
		lo, hi = min(lo, float64(v)), max(hi, float64(v))
	}
	minAvg, minDeb := avg(mem[2], lo)
	maxAvg, maxDeb := avg(mem[3], hi)
	minDeb, maxDeb = max(math.Exp(minDeb), o.eps), max(math.Exp(maxDeb), o.eps)
	variance := max(normDeb2-gDebSq, o.eps)
	distAvg, distDeb := avg(mem[4], normAvg/normAvg2)

	nlr, nmu := f(o.out[2]), f(o.out[3])
	nlr[0], nmu[0] = float32(lrIn), float32(muIn)
	if iter > 1 {
		ratio := math.Sqrt(maxDeb / minDeb)
		limit := (ratio - 1) / (ratio + 1)
		pre := distDeb * minDeb
		p := pre * pre / (2 * variance)
		w3 := (-math.Sqrt(p*p+4.0/27.0*p*p*p) - p) / 2
		wr := math.Cbrt(w3)
		y := wr - p/3/wr
		root := y + 1
		newMu := max(root*root, limit*limit)
		s := 1 - math.Sqrt(newMu)
		newLr := s * s / minDeb
		a, _ := avg(muIn, newMu)
		nmu[0] = float32(a)
		a, _ = avg(lrIn, newLr)
		nlr[0] = float32(a)
	}
	nmem := f(o.out[7])
	for k, v := range [yfScalars]float64{normAvg, normAvg2, minAvg, maxAvg, distAvg} {
		nmem[k] = float32(v)
	}
	return nil
}

// equalDims reports whether a and b are the same dims.
func equalDims(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
