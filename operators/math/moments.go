package math

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

// Statistics of a tensor: Moments (mean and variance over axes),
// BatchMoments (per-channel mean and mean square) and LpNorm, with their
// gradients. FLOAT, as in Caffe2.
func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "Moments", MinInputs: 1, MaxInputs: 1, MinOutputs: 2, MaxOutputs: 2,
		Args: []operators.ArgSpec{
			{Name: "axes", Doc: "the axes to reduce (negative from the end); all when absent"},
			{Name: "keepdims", Default: true, Doc: "keep the reduced axes as 1s"},
		},
		Doc: "X → (mean, variance) over the axes; the variance is the population variance (divided by the count).",
	}, func(b *operators.Base) (operators.Operator, error) { return newMoments(b, false) })
	operators.MustRegisterCPU(operators.Schema{
		Type: "MomentsGradient", MinInputs: 4, MaxInputs: 4, MinOutputs: 1, MaxOutputs: 1,
		Args: []operators.ArgSpec{{Name: "axes"}, {Name: "keepdims", Default: true}},
		Doc:  "(dmean, dvariance, X, mean) → dX = (dmean + 2·dvariance·(X − mean))/n, n the count of each reduction.",
	}, func(b *operators.Base) (operators.Operator, error) { return newMoments(b, true) })
	operators.MustRegisterGradient("Moments", func(g *operators.GradientContext) error {
		g.Op("MomentsGradient", []string{g.GO(0), g.GO(1), g.I(0), g.O(0)}, []string{g.GI(0)})
		return nil
	})
	operators.MustRegisterShapeFunc("Moments", momentsShape)
	operators.MustRegisterShapeFunc("MomentsGradient", operators.SameShapes([]int{2}, 2))

	orderArg := operators.ArgSpec{Name: "order", Default: "NCHW", Doc: "NCHW or NHWC"}
	operators.MustRegisterCPU(operators.Schema{
		Type: "BatchMoments", MinInputs: 1, MaxInputs: 1, MinOutputs: 2, MaxOutputs: 2,
		Args: []operators.ArgSpec{orderArg},
		Doc:  "X [N, C, …] (or [N, …, C] in NHWC) → (mu [C], var [C]): the mean and the mean square (not the variance) of each channel.",
	}, func(b *operators.Base) (operators.Operator, error) { return newBatchMoments(b, false) })
	operators.MustRegisterCPU(operators.Schema{
		Type: "BatchMomentsGradient", MinInputs: 3, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1,
		Args: []operators.ArgSpec{orderArg},
		Doc:  "(dmu, dvar, X) → dX = (dmu + 2·dvar·X)/(N·HxW) per channel.",
	}, func(b *operators.Base) (operators.Operator, error) { return newBatchMoments(b, true) })
	operators.MustRegisterGradient("BatchMoments", func(g *operators.GradientContext) error {
		g.Op("BatchMomentsGradient", []string{g.GO(0), g.GO(1), g.I(0)}, []string{g.GI(0)})
		return nil
	})
	operators.MustRegisterShapeFunc("BatchMoments", batchMomentsShape)
	operators.MustRegisterShapeFunc("BatchMomentsGradient", operators.SameShapes([]int{2}, 2))

	lpArgs := []operators.ArgSpec{
		{Name: "p", Default: 2, Doc: "1 or 2"},
		{Name: "average", Default: false, Doc: "divide by the element count"},
	}
	operators.MustRegisterCPU(operators.Schema{
		Type: "LpNorm", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1, Args: lpArgs,
		Doc: "X → Z [1]: Σ|x| (p = 1) or Σx² (p = 2, no square root), divided by X's size with average.",
	}, func(b *operators.Base) (operators.Operator, error) { return newLpNorm(b, false) })
	operators.MustRegisterCPU(operators.Schema{
		Type: "LpNormGradient", MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1, Args: lpArgs,
		Doc: "(X, dZ) → dX = dZ·sign(X) (0 within 1e-12 of 0) for p = 1, dZ·2X for p = 2, divided by X's size with average.",
	}, func(b *operators.Base) (operators.Operator, error) { return newLpNorm(b, true) })
	operators.MustRegisterGradient("LpNorm", func(g *operators.GradientContext) error {
		g.Op("LpNormGradient", []string{g.I(0), g.GO(0)}, []string{g.GI(0)})
		return nil
	})
	operators.MustRegisterShapeFunc("LpNorm", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		return []operators.TensorShape{operators.Shape(blob.Float32, 1)}, nil
	})
	operators.MustRegisterShapeFunc("LpNormGradient", operators.SameShapes(nil, 0))
}

// reduceAxes marks in red (reused, r long) the axes of the axes argument
// for a tensor of rank r (all of them when absent).
func reduceAxes(b *operators.Base, r int, red []bool) ([]bool, error) {
	red = append(red[:0], make([]bool, r)...)
	axes := b.ArgInts("axes", nil)
	if axes == nil {
		for i := range red {
			red[i] = true
		}
		return red, nil
	}
	for _, a := range axes {
		c, ok := operators.CanonicalAxis(int(a), r)
		if !ok || a < int64(-r) || a >= int64(r) {
			return nil, b.Errorf("axis %d is out of range for a tensor of rank %d", a, r)
		}
		red[c] = true
	}
	return red, nil
}

// reducedDims appends to out the dims of a reduction of dims over red.
func reducedDims(out, dims []int, red []bool, keep bool) []int {
	for i, d := range dims {
		switch {
		case !red[i]:
			out = append(out, d)
		case keep:
			out = append(out, 1)
		}
	}
	return out
}

func momentsShape(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	x := in[0]
	if x.Unknown {
		return nil, nil
	}
	red, err := reduceAxes(b, x.Rank(), nil)
	if err != nil {
		return nil, err
	}
	s := operators.Shape(blob.Float32, reducedDims(nil, x.Dims, red, b.ArgBool("keepdims", true))...)
	return []operators.TensorShape{s, s}, nil
}

type momentsOp struct {
	*operators.Base
	grad bool
	keep bool
	// scratch, kept between runs
	red        []bool
	odims      []int
	walk       []int
	sum, sumSq []float64
}

func newMoments(b *operators.Base, grad bool) (operators.Operator, error) {
	return &momentsOp{Base: b, grad: grad, keep: b.ArgBool("keepdims", true)}, nil
}

// outIndex maps each flat index of a tensor of dims to the flat index of
// its reduction over red, calling f(in, out) in order; walk is scratch of
// 2·len(dims) ints.
func outIndex(dims []int, red []bool, walk []int, f func(in, out int)) {
	n := 1
	for _, d := range dims {
		n *= d
	}
	if n == 0 {
		return
	}
	r := len(dims)
	// ostride[i] is the stride of axis i in the output, 0 where reduced.
	ostride, idx := walk[:r], walk[r:2*r]
	clear(walk[:2*r])
	s := 1
	for i := r - 1; i >= 0; i-- {
		if !red[i] {
			ostride[i] = s
			s *= dims[i]
		}
	}
	out := 0
	for in := range n {
		f(in, out)
		for i := r - 1; i >= 0; i-- {
			idx[i]++
			out += ostride[i]
			if idx[i] < dims[i] {
				break
			}
			out -= ostride[i] * idx[i]
			idx[i] = 0
		}
	}
}

func (o *momentsOp) Run() error {
	xi := 0
	if o.grad {
		xi = 2
	}
	x, err := o.InputOf(xi, blob.Float32)
	if err != nil {
		return err
	}
	red, err := reduceAxes(o.Base, x.NumDims(), o.red)
	if err != nil {
		return err
	}
	o.red = red
	dims := x.Dims()
	o.odims = reducedDims(o.odims[:0], dims, red, o.keep)
	odims := o.odims
	o.walk = append(o.walk[:0], make([]int, 2*len(dims))...)
	count := 1
	m := 1
	for i, d := range dims {
		if red[i] {
			count *= d
		} else {
			m *= d
		}
	}
	xv := blob.Data[float32](x)
	if !o.grad {
		mean, variance := o.Output(0), o.Output(1)
		if err := mean.Init(blob.Float32, odims...); err != nil {
			return err
		}
		if err := variance.Init(blob.Float32, odims...); err != nil {
			return err
		}
		mv, vv := blob.Data[float32](mean), blob.Data[float32](variance)
		if err := blob.CheckElements(blob.Float64, 2*len(mv)); err != nil {
			return o.Errorf("scratch for the sums: %v", err)
		}
		o.sum = append(o.sum[:0], make([]float64, len(mv))...)
		o.sumSq = append(o.sumSq[:0], make([]float64, len(mv))...)
		sum, sq := o.sum, o.sumSq
		outIndex(dims, red, o.walk, func(in, out int) {
			v := float64(xv[in])
			sum[out] += v
			sq[out] += v * v
		})
		for i := range mv {
			mu := sum[i] / float64(count)
			mv[i] = float32(mu)
			vv[i] = float32(sq[i]/float64(count) - mu*mu)
		}
		return nil
	}
	var in [3][]float32 // dmean, dvariance, mean
	for k, i := range [3]int{0, 1, 3} {
		t, err := o.InputOf(i, blob.Float32)
		if err != nil {
			return err
		}
		if t.Size() != m {
			return o.Errorf("input %d (%q) has shape %v, want %d elements, the reduction of X %v", i, o.InputName(i), t.Dims(), m, dims)
		}
		in[k] = blob.Data[float32](t)
	}
	dx := o.Output(0)
	if err := dx.Init(blob.Float32, dims...); err != nil {
		return err
	}
	dxv, dm, dvar, mean := blob.Data[float32](dx), in[0], in[1], in[2]
	c := float32(count)
	outIndex(dims, red, o.walk, func(i, out int) {
		dxv[i] = (dm[out] + 2*dvar[out]*(xv[i]-mean[out])) / c
	})
	return nil
}

// batchMomentsShape: mu and var have one element per channel.
func batchMomentsShape(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	x := in[0]
	c := operators.AnyDim
	if !x.Unknown {
		if x.Rank() < 2 {
			return nil, b.InputShapeError(in, "X must have a batch and a channel dimension")
		}
		c = x.Dim(1)
		if b.ArgString("order", "NCHW") == "NHWC" {
			c = x.Dim(x.Rank() - 1)
		}
	}
	s := operators.Shape(blob.Float32, c)
	return []operators.TensorShape{s, s}, nil
}

type batchMomentsOp struct {
	*operators.Base
	grad, nhwc bool
	dims       [1]int
}

func newBatchMoments(b *operators.Base, grad bool) (operators.Operator, error) {
	order := b.ArgString("order", "NCHW")
	if order != "NCHW" && order != "NHWC" {
		return nil, b.Errorf("order is %q, want NCHW or NHWC", order)
	}
	return &batchMomentsOp{Base: b, grad: grad, nhwc: order == "NHWC"}, nil
}

func (o *batchMomentsOp) Run() error {
	xi := 0
	if o.grad {
		xi = 2
	}
	x, err := o.InputOf(xi, blob.Float32)
	if err != nil {
		return err
	}
	if x.NumDims() < 2 {
		return o.Errorf("X (%q) has shape %v: it needs a batch and a channel dimension", o.InputName(xi), x.Dims())
	}
	n := x.Dim(0)
	c := x.Dim(1)
	if o.nhwc {
		c = x.Dim(x.NumDims() - 1)
	}
	hw := 0
	if n > 0 && c > 0 {
		hw = x.Size() / (n * c)
	}
	// channel returns the channel of flat index i.
	channel := func(i int) int {
		if o.nhwc {
			return i % c
		}
		return (i / hw) % c
	}
	xv := blob.Data[float32](x)
	scale := 1 / float64(n*hw)
	if !o.grad {
		o.dims[0] = c
		mu, v := o.Output(0), o.Output(1)
		if err := mu.Init(blob.Float32, o.dims[:]...); err != nil {
			return err
		}
		if err := v.Init(blob.Float32, o.dims[:]...); err != nil {
			return err
		}
		muv, vv := blob.Data[float32](mu), blob.Data[float32](v)
		if err := blob.CheckElements(blob.Float64, 2*c); err != nil {
			return o.Errorf("scratch for the sums: %v", err)
		}
		sum, sq := make([]float64, c), make([]float64, c)
		for i, e := range xv {
			k, f := channel(i), float64(e)
			sum[k] += f
			sq[k] += f * f
		}
		for k := range muv {
			muv[k], vv[k] = float32(sum[k]*scale), float32(sq[k]*scale)
		}
		return nil
	}
	dmu, err := o.InputOf(0, blob.Float32)
	if err != nil {
		return err
	}
	dvar, err := o.InputOf(1, blob.Float32)
	if err != nil {
		return err
	}
	if dmu.Size() != c || dvar.Size() != c {
		return o.Errorf("dmu (%q) and dvar (%q) have shapes %v and %v, want %d elements, one per channel", o.InputName(0), o.InputName(1), dmu.Dims(), dvar.Dims(), c)
	}
	dx := o.Output(0)
	if err := dx.Init(blob.Float32, x.Dims()...); err != nil {
		return err
	}
	dxv, dm, dv := blob.Data[float32](dx), blob.Data[float32](dmu), blob.Data[float32](dvar)
	for i, e := range xv {
		k := channel(i)
		dxv[i] = float32((float64(dm[k]) + 2*float64(dv[k])*float64(e)) * scale)
	}
	return nil
}

type lpNormOp struct {
	*operators.Base
	grad, average bool
	p             int64
	dims          [1]int
}

func newLpNorm(b *operators.Base, grad bool) (operators.Operator, error) {
	p := b.ArgInt("p", 2)
	if p != 1 && p != 2 {
		return nil, b.Errorf("p is %d: only 1 and 2 are supported", p)
	}
	return &lpNormOp{Base: b, grad: grad, p: p, average: b.ArgBool("average", false)}, nil
}

func (o *lpNormOp) Run() error {
	x, err := o.InputOf(0, blob.Float32)
	if err != nil {
		return err
	}
	size := 1.0
	if o.average {
		if x.Size() == 0 {
			return o.Errorf("X (%q) has no elements to average over", o.InputName(0))
		}
		size = float64(x.Size())
	}
	xv := blob.Data[float32](x)
	if !o.grad {
		o.dims[0] = 1
		z := o.Output(0)
		if err := z.Init(blob.Float32, o.dims[:]...); err != nil {
			return err
		}
		var s float64
		for _, v := range xv {
			f := float64(v)
			if o.p == 1 {
				s += max(f, -f)
			} else {
				s += f * f
			}
		}
		blob.Data[float32](z)[0] = float32(s / size)
		return nil
	}
	dz, err := o.InputOf(1, blob.Float32)
	if err != nil {
		return err
	}
	if dz.NumDims() != 1 || dz.Dim(0) != 1 {
		return o.Errorf("dZ (%q) has shape %v, want [1]", o.InputName(1), dz.Dims())
	}
	dx := o.Output(0)
	if err := dx.Init(blob.Float32, x.Dims()...); err != nil {
		return err
	}
	g := float32(float64(blob.Data[float32](dz)[0]) / size)
	dxv := blob.Data[float32](dx)
	for i, v := range xv {
		if o.p == 2 {
			dxv[i] = 2 * v * g
			continue
		}
		switch {
		case v < -1e-12:
			dxv[i] = -g
		case v > 1e-12:
			dxv[i] = g
		default:
			dxv[i] = 0
		}
	}
	return nil
}
