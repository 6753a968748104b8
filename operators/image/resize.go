package image

import (
	"math"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

// scaleArgs are the arguments of the resizing operators.
var scaleArgs = []operators.ArgSpec{
	{Name: "width_scale", Default: 1.0, Doc: "scale along the width; the output width is ⌊W·width_scale⌋"},
	{Name: "height_scale", Default: 1.0, Doc: "scale along the height; the output height is ⌊H·height_scale⌋"},
}

func init() {
	nearestArgs := append([]operators.ArgSpec{orderArg}, scaleArgs...)
	operators.MustRegisterCPU(operators.Schema{
		Type: "ResizeNearest", MinInputs: 1, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		Args: nearestArgs,
		Doc: "ResizeNearest(X[, scales]) → Y resizes the spatial dims of a float image batch (N, C, H, W) or " +
			"(N, H, W, C) by nearest neighbour: Y has ⌊H·height_scale⌋ × ⌊W·width_scale⌋ pixels, output pixel " +
			"(y, x) taking input pixel (min(⌊y/height_scale⌋, H−1), min(⌊x/width_scale⌋, W−1)). The optional " +
			"input scales = [height_scale, width_scale] overrides the arguments.",
	}, func(b *operators.Base) (operators.Operator, error) {
		nhwc, err := channelsLast(b)
		if err != nil {
			return nil, err
		}
		hs, ws, err := scaleArgValues(b)
		if err != nil {
			return nil, err
		}
		return &resizeOp{Base: b, nhwc: nhwc, hs: hs, ws: ws}, nil
	})
	operators.MustRegisterCPU(operators.Schema{
		Type: "ResizeNearestGradient", MinInputs: 2, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1,
		Args: nearestArgs,
		Doc: "ResizeNearestGradient(dY, X[, scales]) → dX adds each element of dY to the input pixel " +
			"ResizeNearest read it from; dX has X's spatial dims and dY's batch and channels.",
	}, func(b *operators.Base) (operators.Operator, error) {
		nhwc, err := channelsLast(b)
		if err != nil {
			return nil, err
		}
		hs, ws, err := scaleArgValues(b)
		if err != nil {
			return nil, err
		}
		return &resizeOp{Base: b, nhwc: nhwc, hs: hs, ws: ws, grad: true}, nil
	})
	operators.MustRegisterCPU(operators.Schema{
		Type: "UpsampleBilinear", MinInputs: 1, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		Args: scaleArgs,
		Doc: "UpsampleBilinear(X[, scales]) → Y resizes the spatial dims of a float NCHW image batch by " +
			"bilinear interpolation with the corners aligned: Y has ⌊H·height_scale⌋ × ⌊W·width_scale⌋ " +
			"pixels, output row y sampling input row y·(H−1)/(H'−1) (0 when H' = 1), and likewise for columns. " +
			"The optional input scales = [height_scale, width_scale] overrides the arguments.",
	}, func(b *operators.Base) (operators.Operator, error) {
		hs, ws, err := scaleArgValues(b)
		if err != nil {
			return nil, err
		}
		return &resizeOp{Base: b, bilinear: true, hs: hs, ws: ws}, nil
	})
	operators.MustRegisterCPU(operators.Schema{
		Type: "UpsampleBilinearGradient", MinInputs: 2, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1,
		Args: scaleArgs,
		Doc: "UpsampleBilinearGradient(dY, X[, scales]) → dX spreads each element of dY over the four input " +
			"pixels UpsampleBilinear interpolated it from, with the same weights.",
	}, func(b *operators.Base) (operators.Operator, error) {
		hs, ws, err := scaleArgValues(b)
		if err != nil {
			return nil, err
		}
		return &resizeOp{Base: b, bilinear: true, hs: hs, ws: ws, grad: true}, nil
	})
	for _, typ := range []string{"ResizeNearest", "UpsampleBilinear"} {
		operators.MustRegisterGradient(typ, func(g *operators.GradientContext) error {
			in := []string{g.GO(0), g.I(0)}
			if g.NumInputs() == 2 {
				in = append(in, g.I(1))
			}
			g.Op(typ+"Gradient", in, []string{g.GI(0)})
			return nil
		})
	}
	operators.MustRegisterShapeFunc("ResizeNearest", resizeShape, "UpsampleBilinear")
	operators.MustRegisterShapeFunc("ResizeNearestGradient", resizeGradShape, "UpsampleBilinearGradient")
}

// scaleArgValues reads height_scale and width_scale, which must be positive.
func scaleArgValues(b *operators.Base) (hs, ws float32, err error) {
	hs, ws = b.ArgFloat("height_scale", 1), b.ArgFloat("width_scale", 1)
	if !(hs > 0) || !(ws > 0) || math.IsInf(float64(hs), 0) || math.IsInf(float64(ws), 0) {
		return 0, 0, b.Errorf("height_scale %v and width_scale %v must be positive and finite", hs, ws)
	}
	return hs, ws, nil
}

// isNHWC reports whether a resizing operator's order argument is NHWC
// (UpsampleBilinear has none: it is NCHW).
func isNHWC(b *operators.Base) bool {
	return b.Type() != "UpsampleBilinear" && b.Type() != "UpsampleBilinearGradient" && b.ArgString("order", "NCHW") == "NHWC"
}

// maxSide bounds a resized side: Caffe2 computes it in an int.
const maxSide = math.MaxInt32

// scaledSide returns ⌊n·scale⌋ in float32 arithmetic, as Caffe2 does, and
// whether it fits an int32.
func scaledSide(n int, scale float32) (int, bool) {
	v := float32(n) * scale
	if !(v < maxSide) {
		return 0, false
	}
	return int(v), true
}

func resizeShape(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	x := in[0]
	if x.Unknown {
		return nil, nil
	}
	if x.Rank() != 4 {
		return nil, b.InputShapeError(in, "X must have rank 4")
	}
	hAxis, wAxis := 2, 3
	if isNHWC(b) {
		hAxis, wAxis = 1, 2
	}
	dims := append([]int{}, x.Dims...)
	dims[hAxis], dims[wAxis] = operators.AnyDim, operators.AnyDim
	if len(in) == 1 {
		hs, ws := b.ArgFloat("height_scale", 1), b.ArgFloat("width_scale", 1)
		if h := x.Dims[hAxis]; h >= 0 {
			if v, ok := scaledSide(h, hs); ok {
				dims[hAxis] = v
			}
		}
		if w := x.Dims[wAxis]; w >= 0 {
			if v, ok := scaledSide(w, ws); ok {
				dims[wAxis] = v
			}
		}
	}
	return []operators.TensorShape{operators.Shape(blob.Float32, dims...)}, nil
}

func resizeGradShape(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	dy, x := in[0], in[1]
	if dy.Unknown || x.Unknown {
		return nil, nil
	}
	if dy.Rank() != 4 || x.Rank() != 4 {
		return nil, b.InputShapeError(in, "dY and X must have rank 4")
	}
	dims := []int{dy.Dims[0], dy.Dims[1], x.Dims[2], x.Dims[3]}
	if isNHWC(b) {
		dims = []int{dy.Dims[0], x.Dims[1], x.Dims[2], dy.Dims[3]}
	}
	return []operators.TensorShape{operators.Shape(blob.Float32, dims...)}, nil
}

// resizeOp is ResizeNearest, UpsampleBilinear (bilinear) or their
// gradients (grad).
type resizeOp struct {
	*operators.Base
	nhwc, bilinear, grad bool
	hs, ws               float32 // the arguments' scales
}

// layout is a batch of images: n images of c channels, h×w pixels.
type layout struct{ n, c, h, w int }

// dims returns the layout as a shape in the given order.
func (l layout) dims(nhwc bool) []int {
	if nhwc {
		return []int{l.n, l.h, l.w, l.c}
	}
	return []int{l.n, l.c, l.h, l.w}
}

func layoutOf(t *blob.Tensor, nhwc bool) layout {
	d := t.Dims()
	if nhwc {
		return layout{d[0], d[3], d[1], d[2]}
	}
	return layout{d[0], d[1], d[2], d[3]}
}

// scales returns the scales: the arguments', or those of the scales input
// at index i when there is one.
func (o *resizeOp) scales(i int) (hs, ws float32, err error) {
	if o.NumInputs() <= i {
		return o.hs, o.ws, nil
	}
	s, err := o.InputOf(i, blob.Float32)
	if err != nil {
		return 0, 0, err
	}
	if s.NumDims() != 1 || s.Size() != 2 {
		return 0, 0, o.Errorf("input %d (%q) has shape %v; want [2] (height_scale, width_scale)", i, o.InputName(i), s.Dims())
	}
	v := blob.Data[float32](s)
	hs, ws = v[0], v[1]
	if !(hs > 0) || !(ws > 0) || math.IsInf(float64(hs), 0) || math.IsInf(float64(ws), 0) {
		return 0, 0, o.Errorf("input %d (%q) holds scales %v; they must be positive and finite", i, o.InputName(i), v)
	}
	return hs, ws, nil
}

func (o *resizeOp) Run() error {
	x, err := o.InputOf(0, blob.Float32)
	if err != nil {
		return err
	}
	if x.NumDims() != 4 {
		return o.Errorf("input 0 (%q) has shape %v; want rank 4", o.InputName(0), x.Dims())
	}
	if o.grad {
		return o.runGrad(x)
	}
	hs, ws, err := o.scales(1)
	if err != nil {
		return err
	}
	in := layoutOf(x, o.nhwc)
	out := in
	var ok1, ok2 bool
	out.h, ok1 = scaledSide(in.h, hs)
	out.w, ok2 = scaledSide(in.w, ws)
	if !ok1 || !ok2 {
		return o.Errorf("input 0 (%q) of shape %v scaled by (%v, %v) is too large", o.InputName(0), x.Dims(), hs, ws)
	}
	y := o.Output(0)
	if err := y.Init(blob.Float32, out.dims(o.nhwc)...); err != nil {
		return o.Errorf("output %q: %v", o.OutputName(0), err)
	}
	if y.Size() == 0 {
		return nil
	}
	xd, yd := blob.Data[float32](x), blob.Data[float32](y)
	if o.bilinear {
		upsampleBilinear(in, out, xd, yd, false)
		return nil
	}
	resizeNearest(in, out, hs, ws, o.nhwc, xd, yd, false)
	return nil
}

// runGrad runs a gradient operator: input 0 is dY, input 1 is X.
func (o *resizeOp) runGrad(dy *blob.Tensor) error {
	x, err := o.Input(1)
	if err != nil {
		return err
	}
	if x.NumDims() != 4 {
		return o.Errorf("input 1 (%q) has shape %v; want rank 4", o.InputName(1), x.Dims())
	}
	hs, ws, err := o.scales(2)
	if err != nil {
		return err
	}
	gy := layoutOf(dy, o.nhwc)
	gx := layoutOf(x, o.nhwc)
	gx.n, gx.c = gy.n, gy.c
	dx := o.Output(0)
	if err := dx.Init(blob.Float32, gx.dims(o.nhwc)...); err != nil {
		return o.Errorf("output %q: %v", o.OutputName(0), err)
	}
	dxd := blob.Data[float32](dx)
	clear(dxd)
	if dx.Size() == 0 || dy.Size() == 0 {
		return nil
	}
	if o.bilinear {
		upsampleBilinear(gx, gy, dxd, blob.Data[float32](dy), true)
		return nil
	}
	resizeNearest(gx, gy, hs, ws, o.nhwc, dxd, blob.Data[float32](dy), true)
	return nil
}

// resizeNearest copies x (layout in) to y (layout out) by nearest
// neighbour, or, with back, adds y into x at the pixels the forward pass
// reads. Both layouts hold elements.
func resizeNearest(in, out layout, hs, ws float32, nhwc bool, x, y []float32, back bool) {
	srcRow := func(r int) int { return min(int(float32(r)/hs), in.h-1) }
	srcCol := func(c int) int { return min(int(float32(c)/ws), in.w-1) }
	if nhwc {
		c := in.c
		for n := range in.n {
			xb, yb := x[n*in.h*in.w*c:], y[n*out.h*out.w*c:]
			for r := range out.h {
				ir := srcRow(r)
				for col := range out.w {
					xs := xb[(ir*in.w+srcCol(col))*c:][:c]
					ys := yb[(r*out.w+col)*c:][:c]
					if back {
						for k, v := range ys {
							xs[k] += v
						}
					} else {
						copy(ys, xs)
					}
				}
			}
		}
		return
	}
	for p := range in.n * in.c {
		xp, yp := x[p*in.h*in.w:][:in.h*in.w], y[p*out.h*out.w:][:out.h*out.w]
		for r := range out.h {
			xr, yr := xp[srcRow(r)*in.w:][:in.w], yp[r*out.w:][:out.w]
			for col := range yr {
				if back {
					xr[srcCol(col)] += yr[col]
				} else {
					yr[col] = xr[srcCol(col)]
				}
			}
		}
	}
}

// bilinearTap is where one output coordinate samples its input axis: the
// lower index, the step to the upper one (0 at the edge) and the weights.
type bilinearTap struct {
	lo, step int
	l0, l1   float32
}

// bilinearTapAt computes the tap of output position i of out over in input
// positions, corners aligned, in float32 arithmetic as Caffe2 does.
func bilinearTapAt(in, out, i int) bilinearTap {
	var ratio float32
	if out > 1 {
		ratio = float32(in-1) / float32(out-1)
	}
	r := ratio * float32(i)
	lo := int(r)
	step := 0
	if lo < in-1 {
		step = 1
	}
	l1 := r - float32(lo)
	return bilinearTap{lo: lo, step: step, l0: 1 - l1, l1: l1}
}

// upsampleBilinear interpolates x (layout in, NCHW) into y (layout out),
// or, with back, adds the transpose of that map applied to y into x.
func upsampleBilinear(in, out layout, x, y []float32, back bool) {
	planes := in.n * in.c
	for r := range out.h {
		th := bilinearTapAt(in.h, out.h, r)
		for col := range out.w {
			tw := bilinearTapAt(in.w, out.w, col)
			i00 := th.lo*in.w + tw.lo
			i01 := i00 + tw.step
			i10 := i00 + th.step*in.w
			i11 := i10 + tw.step
			w00, w01 := th.l0*tw.l0, th.l0*tw.l1
			w10, w11 := th.l1*tw.l0, th.l1*tw.l1
			for p := range planes {
				xp := x[p*in.h*in.w:][:in.h*in.w]
				yi := p*out.h*out.w + r*out.w + col
				if back {
					g := y[yi]
					xp[i00] += w00 * g
					xp[i01] += w01 * g
					xp[i10] += w10 * g
					xp[i11] += w11 * g
				} else {
					y[yi] = th.l0*(tw.l0*xp[i00]+tw.l1*xp[i01]) + th.l1*(tw.l0*xp[i10]+tw.l1*xp[i11])
				}
			}
		}
	}
}
