package detect

import (
	"math"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

var legacyArg = operators.ArgSpec{Name: "legacy_plus_one", Default: true, Doc: "count a box [x1, x2] as x2 − x1 + 1 pixels wide (Detectron's convention)"}

var angleArgs = []operators.ArgSpec{
	{Name: "angle_bound_on", Default: true, Doc: "rotated boxes: bring angles into [angle_bound_lo, angle_bound_hi]"},
	{Name: "angle_bound_lo", Default: -90, Doc: "lower angle bound, degrees"},
	{Name: "angle_bound_hi", Default: 90, Doc: "upper angle bound, degrees"},
	{Name: "clip_angle_thresh", Default: 1.0, Doc: "rotated boxes within this many degrees of upright are clipped to the image; negative: none"},
}

// angleBounds reads the angle arguments; the bounds must span a positive
// multiple of 180° when they are on.
func angleBounds(b *operators.Base) (on bool, lo, hi int, thresh float32, err error) {
	on = b.ArgBool("angle_bound_on", true)
	l, h := b.ArgInt("angle_bound_lo", -90), b.ArgInt("angle_bound_hi", 90)
	if on && (h-l <= 0 || (h-l)%180 != 0 || l < math.MinInt32 || h > math.MaxInt32) {
		return false, 0, 0, 0, b.Errorf("angle_bound_lo %d and angle_bound_hi %d must span a positive multiple of 180", l, h)
	}
	return on, int(l), int(h), b.ArgFloat("clip_angle_thresh", 1), nil
}

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "BBoxTransform", MinInputs: 3, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 2,
		Args: append([]operators.ArgSpec{
			{Name: "weights", Default: []float32{1, 1, 1, 1}, Doc: "weights [wx, wy, ww, wh] the deltas are divided by"},
			{Name: "apply_scale", Default: true, Doc: "scale the boxes back to the input image's scale after the transform"},
			{Name: "rotated", Default: false, Doc: "boxes are [ctr_x, ctr_y, w, h, angle°] and deltas have a fifth (angle, radians)"},
			legacyArg,
		}, angleArgs...),
		Doc: "BBoxTransform(rois, deltas, im_info) → (box_out[, roi_batch_splits]) applies per-class regression deltas " +
			"(M, 4K) to the boxes (M, 4) or (M, 5) with a batch index column, grouped by image, in the coordinates of " +
			"im_info's (batch, 3) [height, width, scale]: boxes are unscaled, transformed, clipped to the image and " +
			"(apply_scale) rescaled. roi_batch_splits (FLOAT) counts the boxes of each image.",
	}, func(b *operators.Base) (operators.Operator, error) {
		w := b.ArgFloats("weights", []float32{1, 1, 1, 1})
		if len(w) != 4 {
			return nil, b.Errorf("weights has %d values; want 4", len(w))
		}
		on, lo, hi, thresh, err := angleBounds(b)
		if err != nil {
			return nil, err
		}
		return &bboxOp{Base: b, weights: w, applyScale: b.ArgBool("apply_scale", true), rotated: b.ArgBool("rotated", false),
			legacy: b.ArgBool("legacy_plus_one", true), angleOn: on, angleLo: lo, angleHi: hi, clipThresh: thresh}, nil
	})
	operators.MustRegisterNoGradient("BBoxTransform")
	operators.MustRegisterShapeFunc("BBoxTransform", func(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
		out := []operators.TensorShape{in[1].WithType(blob.Float32)}
		if in[1].Unknown {
			out[0] = operators.UnknownShape
		}
		if len(b.Def().GetOutput()) > 1 {
			out = append(out, operators.Shape(blob.Float32, in[2].Dim(0)))
		}
		return out, nil
	})
}

type bboxOp struct {
	*operators.Base
	weights                              []float32
	applyScale, rotated, legacy, angleOn bool
	angleLo, angleHi                     int
	clipThresh                           float32
	counts                               []int
	box                                  []float32
}

func (o *bboxOp) Run() error {
	var in [3]*blob.Tensor
	for i := range in {
		t, err := o.InputOf(i, blob.Float32)
		if err != nil {
			return err
		}
		in[i] = t
	}
	rois, deltas, info := in[0], in[1], in[2]
	dim := 4
	if o.rotated {
		dim = 5
	}
	if rois.NumDims() != 2 || (rois.Dim(1) != dim && rois.Dim(1) != dim+1) {
		return o.Errorf("input 0 (%q) has shape %v; want (M, %d) or (M, %d)", o.InputName(0), rois.Dims(), dim, dim+1)
	}
	m := rois.Dim(0)
	if deltas.NumDims() != 2 || deltas.Dim(0) != m || deltas.Dim(1)%dim != 0 {
		return o.Errorf("input 1 (%q) has shape %v; want (%d, %d·K)", o.InputName(1), deltas.Dims(), m, dim)
	}
	if info.NumDims() != 2 || info.Dim(1) != 3 {
		return o.Errorf("input 2 (%q) has shape %v; want (batch, 3)", o.InputName(2), info.Dims())
	}
	batch, k := info.Dim(0), deltas.Dim(1)/dim
	rv, dv, iv := blob.Data[float32](rois), blob.Data[float32](deltas), blob.Data[float32](info)
	if err := blob.CheckElements(blob.Int64, batch); err != nil {
		return o.Errorf("input 2 (%q) of shape %v: %v", o.InputName(2), info.Dims(), err)
	}
	o.counts = append(o.counts[:0], make([]int, batch)...)
	cols := rois.Dim(1)
	if cols == dim {
		if batch != 1 {
			return o.Errorf("input 0 (%q) has no batch column, so input 2 (%q) must describe 1 image, not %d", o.InputName(0), o.InputName(2), batch)
		}
		o.counts[0] = m
	} else {
		for i := range m {
			v := rv[i*cols]
			if !(v > -1 && v < float32(batch)) {
				return o.Errorf("input 0 (%q): RoI %d has batch index %v, but input 2 (%q) describes %d images", o.InputName(0), i, v, o.InputName(2), batch)
			}
			o.counts[int(v)]++
		}
	}
	for i := range batch {
		h, w, s := iv[i*3], iv[i*3+1], iv[i*3+2]
		if !finite(iv[i*3:i*3+3]) || !(s > 0) || math.Abs(float64(h/s)) > maxRoICoord || math.Abs(float64(w/s)) > maxRoICoord {
			return o.Errorf("input 2 (%q): image %d has [height, width, scale] %v", o.InputName(2), i, iv[i*3:i*3+3])
		}
	}
	if o.angleOn && o.rotated && !finite(rv) {
		return o.Errorf("input 0 (%q) holds a value that is not finite", o.InputName(0))
	}
	y := o.Output(0)
	if err := y.Init(blob.Float32, deltas.Dims()...); err != nil {
		return o.Errorf("output %q: %v", o.OutputName(0), err)
	}
	yd := blob.Data[float32](y)
	o.box = append(o.box[:0], make([]float32, dim)...)
	row := 0
	for i := range batch {
		h, w, s := iv[i*3], iv[i*3+1], iv[i*3+2]
		after := float32(1)
		if o.applyScale {
			after = s
		}
		ih, iw := int(h/s+0.5), int(w/s+0.5)
		for r := row; r < row+o.counts[i]; r++ {
			copy(o.box, rv[r*cols+cols-dim:(r+1)*cols])
			for q := range 4 {
				o.box[q] /= s
			}
			for c := range k {
				out := yd[r*k*dim+c*dim:][:dim]
				transformBox(o.box, dv[r*k*dim+c*dim:][:dim], out, o.weights, o.legacy, o.angleOn, o.angleLo, o.angleHi)
				clipBox(out, ih, iw, o.clipThresh, o.legacy)
				for q := range 4 {
					out[q] *= after
				}
			}
		}
		row += o.counts[i]
	}
	if o.NumOutputs() > 1 {
		sp := o.Output(1)
		if err := sp.Init(blob.Float32, batch); err != nil {
			return o.Errorf("output %q: %v", o.OutputName(1), err)
		}
		for i, c := range o.counts {
			blob.Data[float32](sp)[i] = float32(c)
		}
	}
	return nil
}
