package detect

import (
	"math"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

// orderArg is the order argument of the layout-aware operators.
var orderArg = operators.ArgSpec{Name: "order", Default: "NCHW", Doc: `storage order of X, "NCHW" or "NHWC"`}

// channelsLast reads the order argument: false for "NCHW", true for "NHWC".
func channelsLast(b *operators.Base) (bool, error) {
	switch s := b.ArgString("order", "NCHW"); s {
	case "NCHW":
		return false, nil
	case "NHWC":
		return true, nil
	default:
		return false, b.Errorf("argument order is %q; want \"NCHW\" or \"NHWC\"", s)
	}
}

// image is a batch of feature maps: n images of c channels, h×w pixels,
// stored channels-first or, with nhwc, channels-last.
type image struct {
	n, c, h, w int
	nhwc       bool
}

func imageOf(t *blob.Tensor, nhwc bool) image {
	d := t.Dims()
	if nhwc {
		return image{d[0], d[3], d[1], d[2], true}
	}
	return image{d[0], d[1], d[2], d[3], false}
}

// pooledDims appends to dst the shape of r pooled maps of ph×pw pixels.
func (m image) pooledDims(dst []int, r, ph, pw int) []int {
	if m.nhwc {
		return append(dst, r, ph, pw, m.c)
	}
	return append(dst, r, m.c, ph, pw)
}

// at returns the offset of pixel p (y·w + x) of channel k of image b, and
// the stride between its pixels is 1 (NCHW) or c (NHWC).
func (m image) at(b, k, p int) int {
	if m.nhwc {
		return (b*m.h*m.w+p)*m.c + k
	}
	return (b*m.c+k)*m.h*m.w + p
}

// pooledAt returns the offset of bin (i, j) of channel k of pooled map r.
func (m image) pooledAt(r, k, i, j, ph, pw int) int {
	if m.nhwc {
		return ((r*ph+i)*pw+j)*m.c + k
	}
	return ((r*m.c+k)*ph+i)*pw + j
}

// finite reports whether every value is finite.
func finite(v []float32) bool {
	for _, f := range v {
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return false
		}
	}
	return true
}

// pooledArgs reads pooled_h and pooled_w, which must be positive.
func pooledArgs(b *operators.Base) (ph, pw int, err error) {
	h, w := b.ArgInt("pooled_h", 1), b.ArgInt("pooled_w", 1)
	if h <= 0 || w <= 0 || h > math.MaxInt32 || w > math.MaxInt32 {
		return 0, 0, b.Errorf("pooled_h %d and pooled_w %d must be positive int32 values", h, w)
	}
	return int(h), int(w), nil
}

// poolShape is the shape function of RoIAlign and RoIPool: (R, C, ph, pw)
// or, for NHWC, (R, ph, pw, C); RoIPool's argmaxes have Y's shape.
func poolShape(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	x, r := in[0], in[1]
	if x.Unknown || r.Unknown {
		return nil, nil
	}
	if x.Rank() != 4 || r.Rank() != 2 {
		return nil, b.InputShapeError(in, "X must have rank 4 and the RoIs rank 2")
	}
	ph, pw := b.ArgInt("pooled_h", 1), b.ArgInt("pooled_w", 1)
	if ph <= 0 || pw <= 0 || ph > math.MaxInt32 || pw > math.MaxInt32 {
		return nil, nil
	}
	dims := []int{r.Dims[0], x.Dims[1], int(ph), int(pw)}
	if b.ArgString("order", "NCHW") == "NHWC" {
		dims = []int{r.Dims[0], int(ph), int(pw), x.Dims[3]}
	}
	out := []operators.TensorShape{operators.Shape(blob.Float32, dims...)}
	if len(b.Def().GetOutput()) > 1 {
		out = append(out, operators.Shape(blob.Int32, dims...))
	}
	return out, nil
}

// likeInput0 is the shape function of gradient operators whose output has
// the shape of input 0 (X) and type FLOAT.
func likeInput0(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	if in[0].Unknown {
		return nil, nil
	}
	return []operators.TensorShape{in[0].WithType(blob.Float32)}, nil
}

// roiInputs reads the inputs the RoI pooling operators and their gradients
// begin with: X (input 0, FLOAT of rank 4), the RoIs (input 1, FLOAT) and
// the layout of X's images.
func roiInputs(o *operators.Base, nhwc bool) (x, r *blob.Tensor, m image, err error) {
	if x, err = o.InputOf(0, blob.Float32); err != nil {
		return nil, nil, image{}, err
	}
	if x.NumDims() != 4 {
		return nil, nil, image{}, o.Errorf("input 0 (%q) has shape %v; want rank 4", o.InputName(0), x.Dims())
	}
	if r, err = o.InputOf(1, blob.Float32); err != nil {
		return nil, nil, image{}, err
	}
	return x, r, imageOf(x, nhwc), nil
}

// roiGradInit initializes a RoI pooling gradient's output dX to zeros of
// X's shape and returns its elements. With an empty dY that is all (ok
// false); otherwise it checks the RoIs (see checkRoIs) and returns their
// number of columns.
func roiGradInit(o *operators.Base, x, r, dy *blob.Tensor, m image, batch bool) (dx []float32, cols int, ok bool, err error) {
	t := o.Output(0)
	if err := t.Init(blob.Float32, x.Dims()...); err != nil {
		return nil, 0, false, o.Errorf("output %q: %v", o.OutputName(0), err)
	}
	dx = blob.Data[float32](t)
	clear(dx)
	if dy.Size() == 0 {
		return dx, 0, false, nil
	}
	if cols, err = checkRoIs(o, r, 1, m, batch); err != nil {
		return nil, 0, false, err
	}
	return dx, cols, true, nil
}
