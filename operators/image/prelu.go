package image

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "PRelu", MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		AllowInplace: operators.InplacePairs([2]int{0, 0}),
		Args:         []operators.ArgSpec{orderArg},
		Doc: "PRelu(X, slope) → Y computes Y = X where X > 0 and slope·X elsewhere. slope has one element " +
			"(shared by every channel) or one per channel (dimension 1 of X for NCHW, the last for NHWC).",
	}, func(b *operators.Base) (operators.Operator, error) {
		nhwc, err := channelsLast(b)
		if err != nil {
			return nil, err
		}
		return &preluOp{Base: b, nhwc: nhwc}, nil
	})
	operators.MustRegisterCPU(operators.Schema{
		Type: "PReluGradient", MinInputs: 4, MaxInputs: 4, MinOutputs: 2, MaxOutputs: 2,
		Args: []operators.ArgSpec{orderArg},
		Doc: "PReluGradient(Y, dY, X, slope) → (dX, dslope): dX = dY where X > 0 and slope·dY elsewhere; " +
			"dslope sums dY·X over the elements with X ≤ 0 of each channel (of all of them for a shared slope). " +
			"Y must not be X: an in-place PRelu cannot be differentiated.",
	}, func(b *operators.Base) (operators.Operator, error) {
		nhwc, err := channelsLast(b)
		if err != nil {
			return nil, err
		}
		return &preluGradOp{Base: b, nhwc: nhwc}, nil
	})
	operators.MustRegisterGradient("PRelu", func(g *operators.GradientContext) error {
		g.Op("PReluGradient", []string{g.O(0), g.GO(0), g.I(0), g.I(1)}, []string{g.GI(0), g.GI(1)})
		return nil
	})
}

// preluLayout is how the elements of X map to slopes: X is outer blocks of
// c channels, each channel a run of inner elements (inner = 1 for NHWC);
// with a shared slope, c = 1 and inner is the whole tensor.
type preluLayout struct{ outer, c, inner int }

// preluShape checks X and slope (same float type, slope of size 1 or C) and
// returns the layout.
func preluShape(o *operators.Base, nhwc bool, x *blob.Tensor, xi int, w *blob.Tensor, wi int) (preluLayout, error) {
	if w.DataType() != x.DataType() {
		return preluLayout{}, o.Errorf("input %d (%q) has type %v, but input %d (%q) has type %v", wi, o.InputName(wi), w.DataType(), xi, o.InputName(xi), x.DataType())
	}
	nd := x.NumDims()
	if nd < 1 || (!nhwc && nd < 2) {
		return preluLayout{}, o.Errorf("input %d (%q) has shape %v; it needs a channel dimension", xi, o.InputName(xi), x.Dims())
	}
	if w.Size() == 1 {
		return preluLayout{outer: 1, c: 1, inner: x.Size()}, nil
	}
	c := x.Dim(nd - 1)
	if !nhwc {
		c = x.Dim(1)
	}
	if w.Size() != c {
		return preluLayout{}, o.Errorf("input %d (%q) has %d slopes, but input %d (%q) of shape %v has %d channels", wi, o.InputName(wi), w.Size(), xi, o.InputName(xi), x.Dims(), c)
	}
	if nhwc {
		return preluLayout{outer: x.Size() / max(c, 1), c: c, inner: 1}, nil
	}
	outer := x.Dim(0)
	if x.Size() == 0 {
		outer = 0 // no elements: no images to loop over, however many dim 0 says
	}
	return preluLayout{outer: outer, c: c, inner: x.SizeFromDim(2)}, nil
}

type preluOp struct {
	*operators.Base
	nhwc bool
}

func (o *preluOp) Run() error {
	x, err := o.FloatInput(0)
	if err != nil {
		return err
	}
	w, err := o.Input(1)
	if err != nil {
		return err
	}
	l, err := preluShape(o.Base, o.nhwc, x, 0, w, 1)
	if err != nil {
		return err
	}
	y := o.Output(0)
	if err := y.Init(x.DataType(), x.Dims()...); err != nil {
		return o.Errorf("output %q: %v", o.OutputName(0), err)
	}
	switch x.DataType() {
	case blob.Float32:
		prelu(l, blob.Data[float32](x), blob.Data[float32](w), blob.Data[float32](y))
	case blob.Float64:
		prelu(l, blob.Data[float64](x), blob.Data[float64](w), blob.Data[float64](y))
	}
	return nil
}

// prelu computes y = max(x, 0) + min(x, 0)·w (Caffe2's formula: x where
// x > 0, w·x elsewhere) with the slope of each element's channel; y may be
// x. The formula has no branch to mispredict on mixed signs.
func prelu[T blob.Float](l preluLayout, x, w, y []T) {
	if l.inner == 1 {
		for o := range l.outer {
			xr, yr := x[o*l.c:(o+1)*l.c], y[o*l.c:(o+1)*l.c]
			for k, v := range xr {
				yr[k] = max(v, 0) + min(v, 0)*w[k]
			}
		}
		return
	}
	for o := range l.outer {
		for k := range l.c {
			s := w[k]
			off := (o*l.c + k) * l.inner
			xr, yr := x[off:off+l.inner], y[off:off+l.inner]
			for i, v := range xr {
				yr[i] = max(v, 0) + min(v, 0)*s
			}
		}
	}
}

type preluGradOp struct {
	*operators.Base
	nhwc bool
	acc  []float64 // per-slope sums, kept between runs
}

func (o *preluGradOp) Run() error {
	if o.InputBlob(0) == o.InputBlob(2) {
		return o.Errorf("input 0 (%q) is input 2: cannot backpropagate through an in-place PRelu", o.InputName(0))
	}
	y, err := o.FloatInput(0)
	if err != nil {
		return err
	}
	var in [3]*blob.Tensor
	for i := 1; i < 4; i++ {
		t, err := o.Input(i)
		if err != nil {
			return err
		}
		if t.DataType() != y.DataType() {
			return o.Errorf("input %d (%q) has type %v, but input 0 (%q) has type %v", i, o.InputName(i), t.DataType(), o.InputName(0), y.DataType())
		}
		in[i-1] = t
	}
	dy, x, w := in[0], in[1], in[2]
	if dy.Size() != y.Size() || x.Size() != y.Size() {
		return o.Errorf("inputs 0 (%q), 1 (%q) and 2 (%q) have shapes %v, %v and %v; they must have one size", o.InputName(0), o.InputName(1), o.InputName(2), y.Dims(), dy.Dims(), x.Dims())
	}
	l, err := preluShape(o.Base, o.nhwc, x, 2, w, 3)
	if err != nil {
		return err
	}
	dx, dw := o.Output(0), o.Output(1)
	if err := dx.Init(y.DataType(), y.Dims()...); err != nil {
		return o.Errorf("output %q: %v", o.OutputName(0), err)
	}
	if err := dw.Init(w.DataType(), w.Dims()...); err != nil {
		return o.Errorf("output %q: %v", o.OutputName(1), err)
	}
	if cap(o.acc) < l.c {
		o.acc = make([]float64, l.c)
	}
	acc := o.acc[:l.c]
	switch y.DataType() {
	case blob.Float32:
		preluGrad(l, blob.Data[float32](dy), blob.Data[float32](x), blob.Data[float32](w), blob.Data[float32](dx), blob.Data[float32](dw), acc)
	case blob.Float64:
		preluGrad(l, blob.Data[float64](dy), blob.Data[float64](x), blob.Data[float64](w), blob.Data[float64](dx), blob.Data[float64](dw), acc)
	}
	return nil
}

// preluGrad computes dx = x > 0 ? dy : w·dy and dw = Σ dy·x over x ≤ 0
// per slope, summing in float64 in acc (one element per slope).
func preluGrad[T blob.Float](l preluLayout, dy, x, w, dx, dw []T, acc []float64) {
	clear(acc)
	if l.inner == 1 {
		for o := range l.outer {
			off := o * l.c
			xr, dyr, dxr := x[off:off+l.c], dy[off:off+l.c], dx[off:off+l.c]
			for k, v := range xr {
				if v > 0 {
					dxr[k] = dyr[k]
				} else {
					dxr[k] = w[k] * dyr[k]
					acc[k] += float64(dyr[k]) * float64(v)
				}
			}
		}
	} else {
		for o := range l.outer {
			for k := range l.c {
				s := w[k]
				off := (o*l.c + k) * l.inner
				xr, dyr, dxr := x[off:off+l.inner], dy[off:off+l.inner], dx[off:off+l.inner]
				var sum float64
				for i, v := range xr {
					if v > 0 {
						dxr[i] = dyr[i]
					} else {
						dxr[i] = s * dyr[i]
						sum += float64(dyr[i]) * float64(v)
					}
				}
				acc[k] += sum
			}
		}
	}
	for k, v := range acc {
		dw[k] = T(v)
	}
}
