package convpool

import (
	"fmt"
	"github.com/caffe2go/caffe2go/operators/internal/convargs"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

var padArgSpecs = []operators.ArgSpec{
	{Name: "pad", Default: int64(0), Doc: "padding of every side; or pad_t, pad_l, pad_b and pad_r; or pads [t, l, b, r] (negative values crop)"},
	{Name: "mode", Default: "constant", Doc: "constant, reflect (mirror without repeating the edge) or edge (repeat the edge)"},
	{Name: "value", Default: float32(0), Doc: "the fill value of constant mode"},
	{Name: "order", Default: "NCHW", Doc: "storage order, NCHW or NHWC"},
}

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "PadImage", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1, Args: padArgSpecs,
		Doc: "PadImage(X) pads the two spatial dimensions of a 4-D image tensor: Y has H + pad_t + pad_b rows " +
			"and W + pad_l + pad_r columns.",
	}, func(b *operators.Base) (operators.Operator, error) {
		p, err := newPadBase(b)
		if err != nil {
			return nil, err
		}
		return &padImageOp{p}, nil
	})
	operators.MustRegisterCPU(operators.Schema{
		Type: "PadImageGradient", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1, Args: padArgSpecs,
		Doc: "PadImageGradient(dY) computes dX of PadImage: each element of dY is added to the input element it copies.",
	}, func(b *operators.Base) (operators.Operator, error) {
		p, err := newPadBase(b)
		if err != nil {
			return nil, err
		}
		return &padImageGradOp{p}, nil
	})
	operators.MustRegisterGradient("PadImage", func(g *operators.GradientContext) error {
		g.Op("PadImageGradient", []string{g.GO(0)}, []string{g.GI(0)})
		return nil
	})
}

type padMode int

const (
	padConstant padMode = iota
	padReflect
	padEdge
)

// padBase is what PadImage and its gradient share.
type padBase struct {
	*operators.Base
	mode                     padMode
	value                    float32
	order                    convargs.Order
	top, left, bottom, right int
	shape                    []int
}

func newPadBase(b *operators.Base) (padBase, error) {
	a, err := convargs.Parse(b, convargs.KindPad)
	if err != nil {
		return padBase{}, err
	}
	if len(a.Pads) != 4 {
		return padBase{}, fmt.Errorf("pads %v: PadImage pads two spatial dimensions (want pad_t, pad_l, pad_b, pad_r)", a.Pads)
	}
	p := padBase{Base: b, order: a.Order, value: b.ArgFloat("value", 0),
		top: a.Pads[0], left: a.Pads[1], bottom: a.Pads[2], right: a.Pads[3]}
	switch m := b.ArgString("mode", "constant"); m {
	case "constant":
		p.mode = padConstant
	case "reflect":
		p.mode = padReflect
	case "edge":
		p.mode = padEdge
	default:
		return padBase{}, fmt.Errorf("unknown padding mode: %s", m)
	}
	return p, nil
}

// dims splits a 4-D image tensor's shape into batch, channels, height and
// width.
func (o *padBase) dims(t *blob.Tensor, name int) (n, c, h, w int, err error) {
	if t.NumDims() != 4 {
		return 0, 0, 0, 0, o.Errorf("input %d (%q) has shape %v: PadImage wants a 4-D tensor", name, o.InputName(name), t.Dims())
	}
	d := t.Dims()
	if o.order == convargs.NHWC {
		return d[0], d[3], d[1], d[2], nil
	}
	return d[0], d[1], d[2], d[3], nil
}

// checkSizes checks that an h×w input padded to ph×pw is valid for the mode.
func (o *padBase) checkSizes(h, w, ph, pw int) error {
	if h <= 0 || w <= 0 || ph <= 0 || pw <= 0 {
		return o.Errorf("pads t=%d l=%d b=%d r=%d turn an image of %d×%d into %d×%d", o.top, o.left, o.bottom, o.right, h, w, ph, pw)
	}
	if o.mode == padReflect && (o.top >= h || o.bottom >= h || o.left >= w || o.right >= w) {
		return o.Errorf("reflect padding t=%d l=%d b=%d r=%d needs pads smaller than the image of %d×%d", o.top, o.left, o.bottom, o.right, h, w)
	}
	return nil
}

// source returns the input row (or column) that output row r copies, or -1
// for a constant-mode fill.
func (o *padBase) source(r, head, size int) int {
	i := r - head
	switch o.mode {
	case padReflect:
		i = max(i, -i)
		i = min(i, 2*size-i-2)
	case padEdge:
		i = min(max(i, 0), size-1)
	default:
		if i < 0 || i >= size {
			return -1
		}
	}
	return i
}

// padImageOp is PadImage.
type padImageOp struct{ padBase }

func (o *padImageOp) Run() error {
	x, err := o.FloatInput(0)
	if err != nil {
		return err
	}
	n, c, h, w, err := o.dims(x, 0)
	if err != nil {
		return err
	}
	ph, pw := h+o.top+o.bottom, w+o.left+o.right
	if err := o.checkSizes(h, w, ph, pw); err != nil {
		return err
	}
	o.shape = convargs.ImageShape(o.shape, o.order, n, c, []int{ph, pw})
	y := o.Output(0)
	if err := y.Init(x.DataType(), o.shape...); err != nil {
		return o.Errorf("output %q: %v", o.OutputName(0), err)
	}
	if x.DataType() == blob.Float32 {
		padImage(&o.padBase, n, c, h, w, blob.Data[float32](x), blob.Data[float32](y))
	} else {
		padImage(&o.padBase, n, c, h, w, blob.Data[float64](x), blob.Data[float64](y))
	}
	return nil
}

// padImage pads n images of c channels and h×w positions from x into y.
func padImage[T blob.Float](o *padBase, n, c, h, w int, x, y []T) {
	ph, pw := h+o.top+o.bottom, w+o.left+o.right
	fill := T(o.value)
	if o.order == convargs.NCHW {
		for p := 0; p < n*c; p++ {
			src := x[p*h*w : (p+1)*h*w]
			dst := y[p*ph*pw : (p+1)*ph*pw]
			for r := 0; r < ph; r++ {
				row := dst[r*pw : (r+1)*pw]
				sr := o.source(r, o.top, h)
				if sr < 0 {
					for i := range row {
						row[i] = fill
					}
					continue
				}
				srow := src[sr*w : (sr+1)*w]
				// The columns that copy the row as is, then the others.
				lo, hi := max(o.left, 0), min(o.left+w, pw)
				if lo < hi {
					copy(row[lo:hi], srow[lo-o.left:hi-o.left])
				}
				for col := 0; col < pw; col++ {
					if col >= lo && col < hi {
						continue
					}
					if sc := o.source(col, o.left, w); sc < 0 {
						row[col] = fill
					} else {
						row[col] = srow[sc]
					}
				}
			}
		}
		return
	}
	for b := 0; b < n; b++ {
		src := x[b*h*w*c : (b+1)*h*w*c]
		dst := y[b*ph*pw*c : (b+1)*ph*pw*c]
		for r := 0; r < ph; r++ {
			sr := o.source(r, o.top, h)
			for col := 0; col < pw; col++ {
				d := dst[(r*pw+col)*c : (r*pw+col+1)*c]
				sc := o.source(col, o.left, w)
				if sr < 0 || sc < 0 {
					for i := range d {
						d[i] = fill
					}
					continue
				}
				copy(d, src[(sr*w+sc)*c:(sr*w+sc+1)*c])
			}
		}
	}
}

// padImageGradOp is PadImageGradient.
type padImageGradOp struct{ padBase }

func (o *padImageGradOp) Run() error {
	dy, err := o.FloatInput(0)
	if err != nil {
		return err
	}
	n, c, ph, pw, err := o.dims(dy, 0)
	if err != nil {
		return err
	}
	h, w := ph-o.top-o.bottom, pw-o.left-o.right
	if err := o.checkSizes(h, w, ph, pw); err != nil {
		return err
	}
	o.shape = convargs.ImageShape(o.shape, o.order, n, c, []int{h, w})
	dx := o.Output(0)
	if err := dx.Init(dy.DataType(), o.shape...); err != nil {
		return o.Errorf("output %q: %v", o.OutputName(0), err)
	}
	if dy.DataType() == blob.Float32 {
		padImageGrad(&o.padBase, n, c, h, w, blob.Data[float32](dy), blob.Data[float32](dx))
	} else {
		padImageGrad(&o.padBase, n, c, h, w, blob.Data[float64](dy), blob.Data[float64](dx))
	}
	return nil
}

// padImageGrad adds each element of dy to the element of dx it was copied
// from.
func padImageGrad[T blob.Float](o *padBase, n, c, h, w int, dy, dx []T) {
	ph, pw := h+o.top+o.bottom, w+o.left+o.right
	clear(dx)
	// Unit strides: NCHW walks n·c planes of single elements, NHWC n images
	// of c-element pixels.
	planes, ch := n*c, 1
	if o.order == convargs.NHWC {
		planes, ch = n, c
	}
	for p := 0; p < planes; p++ {
		src := dy[p*ph*pw*ch : (p+1)*ph*pw*ch]
		dst := dx[p*h*w*ch : (p+1)*h*w*ch]
		for r := 0; r < ph; r++ {
			sr := o.source(r, o.top, h)
			if sr < 0 {
				continue
			}
			for col := 0; col < pw; col++ {
				sc := o.source(col, o.left, w)
				if sc < 0 {
					continue
				}
				d := dst[(sr*w+sc)*ch : (sr*w+sc+1)*ch]
				for i, v := range src[(r*pw+col)*ch : (r*pw+col+1)*ch] {
					d[i] += v
				}
			}
		}
	}
}
