package detect

import (
	"fmt"

	"math"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

var roiPoolArgs = []operators.ArgSpec{
	{Name: "is_test", Default: false, Doc: "inference: write no argmaxes (then the operator has one output)"},
	{Name: "order", Default: "NCHW", Doc: `storage order; only "NCHW"`},
	{Name: "pooled_h", Default: 1, Doc: "height of each pooled map"},
	{Name: "pooled_w", Default: 1, Doc: "width of each pooled map"},
	{Name: "spatial_scale", Default: 1.0, Doc: "scale of X relative to the image the RoIs are in"},
}

// maxRoICoord bounds a scaled, rounded RoI coordinate, which Caffe2 keeps
// in an int.
const maxRoICoord = 1 << 30

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "RoIPool", MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 2,
		Args: roiPoolArgs,
		Doc: "RoIPool(X, rois) → (Y, argmaxes) max-pools each RoI [batch index, x1, y1, x2, y2] (rounded after " +
			"spatial_scale) of the NCHW float maps X into pooled_h × pooled_w bins (Fast R-CNN). argmaxes (INT32, " +
			"Y's shape) holds the pixel y·W + x each maximum came from, −1 for an empty bin (whose Y is 0); with " +
			"is_test there is only Y.",
	}, func(b *operators.Base) (operators.Operator, error) {
		if s := b.ArgString("order", "NCHW"); s != "NCHW" {
			return nil, b.Errorf("argument order is %q; RoIPool supports only \"NCHW\"", s)
		}
		ph, pw, err := pooledArgs(b)
		if err != nil {
			return nil, err
		}
		test := b.ArgBool("is_test", false)
		if !test && b.NumOutputs() < 2 {
			return nil, b.Errorf("needs a second output (argmaxes) unless is_test is set")
		}
		return &roiPoolOp{Base: b, ph: ph, pw: pw, scale: b.ArgFloat("spatial_scale", 1), test: test}, nil
	})
	operators.MustRegisterCPU(operators.Schema{
		Type: "RoIPoolGradient", MinInputs: 4, MaxInputs: 4, MinOutputs: 1, MaxOutputs: 1,
		Args: roiPoolArgs,
		Doc:  "RoIPoolGradient(X, rois, argmaxes, dY) → dX adds each bin's gradient to the pixel its maximum came from.",
	}, func(b *operators.Base) (operators.Operator, error) {
		return &roiPoolGradOp{Base: b}, nil
	})
	operators.MustRegisterGradient("RoIPool", func(g *operators.GradientContext) error {
		if g.NumOutputs() < 2 {
			return fmt.Errorf("RoIPool has no argmaxes output (is_test): it cannot be differentiated")
		}
		g.Op("RoIPoolGradient", []string{g.I(0), g.I(1), g.O(1), g.GO(0)}, []string{g.GI(0)})
		return nil
	})
	operators.MustRegisterShapeFunc("RoIPool", poolShape)
	operators.MustRegisterShapeFunc("RoIPoolGradient", likeInput0)
}

type roiPoolOp struct {
	*operators.Base
	ph, pw int
	scale  float32
	test   bool
	dims   []int // scratch for the output shape
}

// roundCoord is C's round of a scaled coordinate (halves away from 0).
func roundCoord(v float32) (int, bool) {
	r := math.Round(float64(v))
	if !(math.Abs(r) < maxRoICoord) {
		return 0, false
	}
	return int(r), true
}

func (o *roiPoolOp) Run() error {
	x, r, m, err := roiInputs(o.Base, false)
	if err != nil {
		return err
	}
	if _, err := checkRoIs(o.Base, r, 1, m, true); err != nil {
		return err
	}
	nr := r.Dim(0)
	y := o.Output(0)
	o.dims = m.pooledDims(o.dims[:0], nr, o.ph, o.pw)
	if err := y.Init(blob.Float32, o.dims...); err != nil {
		return o.Errorf("output %q: %v", o.OutputName(0), err)
	}
	var arg []int32
	if !o.test {
		a := o.Output(1)
		if err := a.Init(blob.Int32, o.dims...); err != nil {
			return o.Errorf("output %q: %v", o.OutputName(1), err)
		}
		arg = blob.Data[int32](a)
	}
	if y.Size() == 0 {
		return nil
	}
	xd, yd, rv := blob.Data[float32](x), blob.Data[float32](y), blob.Data[float32](r)
	plane := m.h * m.w
	for n := range nr {
		row := rv[n*5 : n*5+5]
		b := int(row[0])
		var c [4]int
		for i := range 4 {
			v, ok := roundCoord(row[i+1] * o.scale)
			if !ok {
				return o.Errorf("input 1 (%q): RoI %d %v scaled by %v is out of range", o.InputName(1), n, row, o.scale)
			}
			c[i] = v
		}
		sw, sh, ew, eh := c[0], c[1], c[2], c[3]
		rh, rw := max(eh-sh+1, 1), max(ew-sw+1, 1)
		bh, bw := float32(rh)/float32(o.ph), float32(rw)/float32(o.pw)
		for k := range m.c {
			xp := xd[(b*m.c+k)*plane:][:plane]
			out := ((n*m.c + k) * o.ph) * o.pw
			for i := range o.ph {
				hs := min(max(int(math.Floor(float64(float32(i)*bh)))+sh, 0), m.h)
				he := min(max(int(math.Ceil(float64(float32(i+1)*bh)))+sh, 0), m.h)
				for j := range o.pw {
					ws := min(max(int(math.Floor(float64(float32(j)*bw)))+sw, 0), m.w)
					we := min(max(int(math.Ceil(float64(float32(j+1)*bw)))+sw, 0), m.w)
					best, at := float32(-math.MaxFloat32), int32(-1)
					if he <= hs || we <= ws {
						best = 0
					}
					for h := hs; h < he; h++ {
						for w := ws; w < we; w++ {
							if v := xp[h*m.w+w]; v > best {
								best, at = v, int32(h*m.w+w)
							}
						}
					}
					yd[out+i*o.pw+j] = best
					if arg != nil {
						arg[out+i*o.pw+j] = at
					}
				}
			}
		}
	}
	return nil
}

type roiPoolGradOp struct{ *operators.Base }

func (o *roiPoolGradOp) Run() error {
	x, r, m, err := roiInputs(o.Base, false)
	if err != nil {
		return err
	}
	a, err := o.InputOf(2, blob.Int32)
	if err != nil {
		return err
	}
	dy, err := o.InputOf(3, blob.Float32)
	if err != nil {
		return err
	}
	dxd, _, ok, err := roiGradInit(o.Base, x, r, dy, m, true)
	if !ok {
		return err
	}
	if dy.NumDims() != 4 || dy.Dim(0) != r.Dim(0) || dy.Dim(1) != m.c || !sameDims(a.Dims(), dy.Dims()) {
		return o.Errorf("inputs 2 (%q) and 3 (%q) have shapes %v and %v; want one (R, C, pooled_h, pooled_w) shape for RoIs %v and X %v",
			o.InputName(2), o.InputName(3), a.Dims(), dy.Dims(), r.Dims(), x.Dims())
	}
	plane, bins := m.h*m.w, dy.Dim(2)*dy.Dim(3)
	rv, ad, dyd := blob.Data[float32](r), blob.Data[int32](a), blob.Data[float32](dy)
	for n := range r.Dim(0) {
		b := int(rv[n*5])
		for k := range m.c {
			xp := dxd[(b*m.c+k)*plane:][:plane]
			off := (n*m.c + k) * bins
			for i, p := range ad[off : off+bins] {
				if p < 0 {
					continue
				}
				if int(p) >= plane {
					return o.Errorf("input 2 (%q) holds argmax %d, beyond the %d×%d map", o.InputName(2), p, m.h, m.w)
				}
				xp[p] += dyd[off+i]
			}
		}
	}
	return nil
}
