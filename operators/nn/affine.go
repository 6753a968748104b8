package nn

import (
	"math"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

// Per-feature affine layers and gates: ElementwiseLinear, AffineChannel,
// RMSNorm (with their gradients) and Glu. FLOAT only, unlike the rest of
// the package.
func init() {
	axisArg := operators.ArgSpec{Name: "axis", Default: 1, Doc: "X is [N, D] flattened at this axis"}
	operators.MustRegisterCPU(operators.Schema{
		Type: "ElementwiseLinear", MinInputs: 3, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1,
		Args: []operators.ArgSpec{axisArg},
		Doc:  "(X, a [D], b [D]) → Y = X·a + b for each of the N rows of X flattened to [N, D] at axis.",
	}, func(b *operators.Base) (operators.Operator, error) { return &elementwiseLinearOp{Base: b}, nil })
	operators.MustRegisterCPU(operators.Schema{
		Type: "ElementwiseLinearGradient", MinInputs: 3, MaxInputs: 3, MinOutputs: 3, MaxOutputs: 3,
		Args: []operators.ArgSpec{axisArg},
		Doc:  "(dY, X, a) → (dX = dY·a, da = Σ_rows dY·X, db = Σ_rows dY).",
	}, func(b *operators.Base) (operators.Operator, error) {
		return &elementwiseLinearOp{Base: b, grad: true}, nil
	})
	operators.MustRegisterGradient("ElementwiseLinear", func(g *operators.GradientContext) error {
		g.Op("ElementwiseLinearGradient", []string{g.GO(0), g.I(0), g.I(1)}, []string{g.GI(0), g.GI(1), g.GI(2)})
		return nil
	})
	operators.MustRegisterShapeFunc("ElementwiseLinear", operators.SameAsInput0)
	operators.MustRegisterShapeFunc("ElementwiseLinearGradient", operators.SameShapes([]int{0, 1}, 1, 2, 2))

	affineArgs := []operators.ArgSpec{
		{Name: "order", Default: "NCHW", Doc: "NCHW or NHWC"},
		{Name: "is_learnable", Default: false, Doc: "whether scale and bias get gradients"},
	}
	operators.MustRegisterCPU(operators.Schema{
		Type: "AffineChannel", MinInputs: 3, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1,
		AllowInplace: operators.InplacePairs([2]int{0, 0}),
		Args:         affineArgs,
		Doc:          "(X, scale [C], bias [C]) → Y = X·scale[c] + bias[c] for each channel c of X [N, C, …] (or [N, …, C] in NHWC).",
	}, func(b *operators.Base) (operators.Operator, error) { return newAffineChannel(b, false) })
	operators.MustRegisterCPU(operators.Schema{
		Type: "AffineChannelGradient", MinInputs: 2, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 3,
		AllowInplace: operators.InplacePairs([2]int{0, 0}),
		Args:         affineArgs,
		Doc: "(dY, scale) → dX = dY·scale[c]; with is_learnable (dY, X, scale) → (dX, dscale = Σ dY·X, dbias = Σ dY) " +
			"per channel.",
	}, func(b *operators.Base) (operators.Operator, error) { return newAffineChannel(b, true) })
	operators.MustRegisterGradient("AffineChannel", func(g *operators.GradientContext) error {
		if g.ArgInt("is_learnable", 0) != 0 {
			g.Op("AffineChannelGradient", []string{g.GO(0), g.I(0), g.I(1)}, []string{g.GI(0), g.GI(1), g.GI(2)})
		} else {
			g.Op("AffineChannelGradient", []string{g.GO(0), g.I(1)}, []string{g.GI(0)})
		}
		return nil
	})
	operators.MustRegisterShapeFunc("AffineChannel", operators.SameAsInput0)
	operators.MustRegisterShapeFunc("AffineChannelGradient", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		if len(in) == 3 {
			return []operators.TensorShape{in[0], in[2], in[2]}[:b.NumOutputs()], nil
		}
		return []operators.TensorShape{in[0]}, nil
	})

	rmsArgs := []operators.ArgSpec{axisArg, {Name: "eps", Default: float32(0), Doc: "added to the mean square"}}
	operators.MustRegisterCPU(operators.Schema{
		Type: "RMSNorm", MinInputs: 3, MaxInputs: 3, MinOutputs: 2, MaxOutputs: 2,
		Args: rmsArgs,
		Doc: "(X, gamma [D], beta [D]) → (Y, rrms): each row x of X flattened to [M, D] at axis becomes " +
			"x·rrms·gamma + beta with rrms = 1/√(mean(x²) + eps); rrms has X's dims before axis. X has rank ≥ 2.",
	}, func(b *operators.Base) (operators.Operator, error) { return &rmsNormOp{Base: b}, nil })
	operators.MustRegisterCPU(operators.Schema{
		Type: "RMSNormGradient", MinInputs: 4, MaxInputs: 4, MinOutputs: 3, MaxOutputs: 3,
		Args: rmsArgs,
		Doc:  "(dY, X, gamma, rrms) → (dX, dgamma, dbeta), the gradient of RMSNorm.",
	}, func(b *operators.Base) (operators.Operator, error) { return &rmsNormOp{Base: b, grad: true}, nil })
	operators.MustRegisterGradient("RMSNorm", func(g *operators.GradientContext) error {
		g.Op("RMSNormGradient", []string{g.GO(0), g.I(0), g.I(1), g.O(1)}, []string{g.GI(0), g.GI(1), g.GI(2)})
		return nil
	})
	operators.MustRegisterShapeFunc("RMSNorm", rmsNormShape)
	operators.MustRegisterShapeFunc("RMSNormGradient", operators.SameShapes([]int{0, 1}, 1, 2, 2))

	operators.MustRegisterCPU(operators.Schema{
		Type: "Glu", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		Args: []operators.ArgSpec{{Name: "dim", Default: -1, Doc: "the dimension split in halves A and B"}},
		Doc:  "X → Y = A·σ(B), A and B the halves of X along dim (which must be even); Caffe2 gives it no gradient.",
	}, func(b *operators.Base) (operators.Operator, error) { return &gluOp{Base: b}, nil })
	operators.MustRegisterShapeFunc("Glu", gluShape)
}

// rowsAt splits dims at axis into N rows of D elements.
func rowsAt(b *operators.Base, x *blob.Tensor, axis int64) (n, d int, ax int, err error) {
	ax, ok := operators.CanonicalAxis(int(axis), x.NumDims())
	if !ok || axis < int64(-x.NumDims()) || axis >= int64(x.NumDims()) {
		return 0, 0, 0, b.Errorf("axis %d is out of range for X (%q) of shape %v", axis, b.InputName(0), x.Dims())
	}
	n = 1
	for _, v := range x.Dims()[:ax] {
		n *= v
	}
	d = 1
	for _, v := range x.Dims()[ax:] {
		d *= v
	}
	return n, d, ax, nil
}

// float32Vector returns input i, which must hold d FLOATs.
func float32Vector(b *operators.Base, i, d int) ([]float32, error) {
	t, err := b.InputOf(i, blob.Float32)
	if err != nil {
		return nil, err
	}
	if t.Size() != d {
		return nil, b.Errorf("input %d (%q) has shape %v, want %d elements", i, b.InputName(i), t.Dims(), d)
	}
	return blob.Data[float32](t), nil
}

type elementwiseLinearOp struct {
	*operators.Base
	grad bool
}

func (o *elementwiseLinearOp) Run() error {
	xi := 0
	if o.grad {
		xi = 1
	}
	x, err := o.InputOf(xi, blob.Float32)
	if err != nil {
		return err
	}
	n, d, _, err := rowsAt(o.Base, x, o.ArgInt("axis", 1))
	if err != nil {
		return err
	}
	ai := 1
	if o.grad {
		ai = 2
	}
	a, err := float32Vector(o.Base, ai, d)
	if err != nil {
		return err
	}
	if x.Size() == 0 {
		n = 0 // rows of nothing: dims beside a 0 may be huge
	}
	xv := blob.Data[float32](x)
	if !o.grad {
		bv, err := float32Vector(o.Base, 2, d)
		if err != nil {
			return err
		}
		y := o.Output(0)
		if err := y.Init(blob.Float32, x.Dims()...); err != nil {
			return err
		}
		yv := blob.Data[float32](y)
		for i := range n {
			for j := range d {
				yv[i*d+j] = xv[i*d+j]*a[j] + bv[j]
			}
		}
		return nil
	}
	dyv, err := float32Vector(o.Base, 0, n*d)
	if err != nil {
		return err
	}
	dx, da, db := o.Output(0), o.Output(1), o.Output(2)
	if err := dx.Init(blob.Float32, x.Dims()...); err != nil {
		return err
	}
	at, _ := o.Input(2)
	for _, t := range []*blob.Tensor{da, db} {
		if err := t.Init(blob.Float32, at.Dims()...); err != nil {
			return err
		}
	}
	dxv, dav, dbv := blob.Data[float32](dx), blob.Data[float32](da), blob.Data[float32](db)
	clear(dav)
	clear(dbv)
	for i := range n {
		for j := range d {
			g := dyv[i*d+j]
			dxv[i*d+j] = g * a[j]
			dav[j] += g * xv[i*d+j]
			dbv[j] += g
		}
	}
	return nil
}

type affineChannelOp struct {
	*operators.Base
	grad, nhwc, learnable bool
}

func newAffineChannel(b *operators.Base, grad bool) (operators.Operator, error) {
	order := b.ArgString("order", "NCHW")
	if order != "NCHW" && order != "NHWC" {
		return nil, b.Errorf("order is %q, want NCHW or NHWC", order)
	}
	o := &affineChannelOp{Base: b, grad: grad, nhwc: order == "NHWC", learnable: b.ArgBool("is_learnable", false)}
	if grad && o.learnable != (b.NumInputs() == 3 && b.NumOutputs() == 3) {
		return nil, b.Errorf("with is_learnable the gradient takes (dY, X, scale) and gives (dX, dscale, dbias), without it (dY, scale) and dX alone")
	}
	return o, nil
}

func (o *affineChannelOp) Run() error {
	x, err := o.InputOf(0, blob.Float32) // X, or dY for the gradient
	if err != nil {
		return err
	}
	if x.NumDims() < 2 {
		return o.Errorf("input 0 (%q) has shape %v: it needs a batch and a channel dimension", o.InputName(0), x.Dims())
	}
	c := x.Dim(1)
	if o.nhwc {
		c = x.Dim(x.NumDims() - 1)
	}
	si := 1 // scale's input: (X, scale, bias), (dY, scale) or (dY, X, scale)
	if o.grad && o.learnable {
		si = 2
	}
	scale, err := float32Vector(o.Base, si, c)
	if err != nil {
		return err
	}
	// channel returns the channel of flat index i.
	hw := 0
	if n := x.Dim(0); n > 0 && c > 0 {
		hw = x.Size() / (n * c)
	}
	channel := func(i int) int {
		if o.nhwc {
			return i % c
		}
		return (i / hw) % c
	}
	xv := blob.Data[float32](x)
	y := o.Output(0)
	if y != x {
		if err := y.Init(blob.Float32, x.Dims()...); err != nil {
			return err
		}
	}
	yv := blob.Data[float32](y)
	if !o.grad {
		bias, err := float32Vector(o.Base, 2, c)
		if err != nil {
			return err
		}
		for i, v := range xv {
			k := channel(i)
			yv[i] = v*scale[k] + bias[k]
		}
		return nil
	}
	if o.learnable {
		// dscale and dbias need dY before dX may overwrite it in place.
		fx, err := float32Vector(o.Base, 1, x.Size())
		if err != nil {
			return err
		}
		ds, db := o.Output(1), o.Output(2)
		st, _ := o.Input(2)
		for _, t := range []*blob.Tensor{ds, db} {
			if err := t.Init(blob.Float32, st.Dims()...); err != nil {
				return err
			}
		}
		dsv, dbv := blob.Data[float32](ds), blob.Data[float32](db)
		clear(dsv)
		clear(dbv)
		for i, g := range xv {
			k := channel(i)
			dsv[k] += g * fx[i]
			dbv[k] += g
		}
	}
	for i, g := range xv {
		yv[i] = g * scale[channel(i)]
	}
	return nil
}

// rmsNormShape: Y like X, rrms X's dims before axis.
func rmsNormShape(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	x := in[0]
	if x.Unknown {
		return []operators.TensorShape{x, operators.UnknownShape}, nil
	}
	axis := b.ArgInt("axis", 1)
	ax, ok := operators.CanonicalAxis(int(axis), x.Rank())
	if !ok || x.Rank() < 2 {
		return nil, b.InputShapeError(in, "axis %d does not fit X (RMSNorm needs rank ≥ 2)", axis)
	}
	return []operators.TensorShape{x, operators.Shape(x.Type, append([]int(nil), x.Dims[:ax]...)...)}, nil
}

type rmsNormOp struct {
	*operators.Base
	grad bool
}

func (o *rmsNormOp) Run() error {
	xi := 0
	if o.grad {
		xi = 1
	}
	x, err := o.InputOf(xi, blob.Float32)
	if err != nil {
		return err
	}
	if x.NumDims() < 2 {
		return o.Errorf("X (%q) has shape %v: RMSNorm requires input dim >= 2", o.InputName(xi), x.Dims())
	}
	m, d, ax, err := rowsAt(o.Base, x, o.ArgInt("axis", 1))
	if err != nil {
		return err
	}
	gamma, err := float32Vector(o.Base, xi+1, d)
	if err != nil {
		return err
	}
	xv := blob.Data[float32](x)
	eps := float64(o.ArgFloat("eps", 0))
	if !o.grad {
		beta, err := float32Vector(o.Base, 2, d)
		if err != nil {
			return err
		}
		y, r := o.Output(0), o.Output(1)
		if err := y.Init(blob.Float32, x.Dims()...); err != nil {
			return err
		}
		if err := r.Init(blob.Float32, x.Dims()[:ax]...); err != nil {
			return err
		}
		yv, rv := blob.Data[float32](y), blob.Data[float32](r)
		for i := range rv {
			row := xv[i*d : (i+1)*d]
			rr := 1 / math.Sqrt(dot64(row, row)/float64(d)+eps)
			rv[i] = float32(rr)
			for j, v := range row {
				yv[i*d+j] = float32(rr*float64(v))*gamma[j] + beta[j]
			}
		}
		return nil
	}
	dy, err := float32Vector(o.Base, 0, m*d)
	if err != nil {
		return err
	}
	rrms, err := float32Vector(o.Base, 3, m)
	if err != nil {
		return err
	}
	dx, dg, db := o.Output(0), o.Output(1), o.Output(2)
	if err := dx.Init(blob.Float32, x.Dims()...); err != nil {
		return err
	}
	gt, _ := o.Input(2)
	for _, t := range []*blob.Tensor{dg, db} {
		if err := t.Init(blob.Float32, gt.Dims()...); err != nil {
			return err
		}
	}
	dxv, dgv, dbv := blob.Data[float32](dx), blob.Data[float32](dg), blob.Data[float32](db)
	clear(dgv)
	clear(dbv)
	for i := range rrms {
		r := float64(rrms[i])
		var ds float64
		for j := range d {
			ds += float64(dy[i*d+j]) * float64(xv[i*d+j]) * float64(gamma[j])
		}
		c2 := -ds * r * r * r / float64(d)
		for j := range d {
			g, v := float64(dy[i*d+j]), float64(xv[i*d+j])
			dxv[i*d+j] = float32(r*g*float64(gamma[j]) + c2*v)
			dgv[j] += float32(g * v * r)
			dbv[j] += float32(g)
		}
	}
	return nil
}

// dot64 is Σ a[i]·b[i] in float64.
func dot64(a, b []float32) float64 {
	b = b[:len(a)]
	var s float64
	for i, v := range a {
		s += float64(v) * float64(b[i])
	}
	return s
}

// gluShape halves X's dim.
func gluShape(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	x := in[0]
	if x.Unknown {
		return nil, nil
	}
	dim := b.ArgInt("dim", -1)
	ax, ok := operators.CanonicalAxis(int(dim), x.Rank())
	if !ok {
		return nil, b.InputShapeError(in, "dim %d is out of range", dim)
	}
	dims := append([]int(nil), x.Dims...)
	if dims[ax] >= 0 {
		if dims[ax]%2 != 0 {
			return nil, b.InputShapeError(in, "dimension %d (%d) must be even to split", ax, dims[ax])
		}
		dims[ax] /= 2
	}
	return []operators.TensorShape{operators.Shape(x.Type, dims...)}, nil
}

type gluOp struct {
	*operators.Base
	dims []int // the output's, kept between runs
}

func (o *gluOp) Run() error {
	x, err := o.InputOf(0, blob.Float32)
	if err != nil {
		return err
	}
	dim := o.ArgInt("dim", -1)
	ax, ok := operators.CanonicalAxis(int(dim), x.NumDims())
	if !ok || dim < int64(-x.NumDims()) || dim >= int64(x.NumDims()) {
		return o.Errorf("dim %d is out of range for X (%q) of shape %v", dim, o.InputName(0), x.Dims())
	}
	dims := x.Dims()
	if dims[ax]%2 != 0 {
		return o.Errorf("X (%q) has shape %v: dimension %d must be even to split in halves", o.InputName(0), dims, ax)
	}
	split := dims[ax] / 2
	outer, inner := 1, 1
	for _, v := range dims[:ax] {
		outer *= v
	}
	for _, v := range dims[ax+1:] {
		inner *= v
	}
	o.dims = append(o.dims[:0], dims...)
	ydims := o.dims
	ydims[ax] = split
	y := o.Output(0)
	if err := y.Init(blob.Float32, ydims...); err != nil {
		return err
	}
	if y.Size() == 0 {
		return nil
	}
	xv, yv := blob.Data[float32](x), blob.Data[float32](y)
	for i := range outer {
		for j := range split {
			a := xv[(i*2*split+j)*inner:][:inner]
			b := xv[(i*2*split+j+split)*inner:][:inner]
			out := yv[(i*split+j)*inner:][:inner]
			for k := range out {
				out[k] = float32(float64(a[k]) / (1 + math.Exp(-float64(b[k]))))
			}
		}
	}
	return nil
}
