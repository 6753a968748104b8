package detect

import (
	"math"
	"slices"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

var roiAlignArgs = []operators.ArgSpec{
	orderArg,
	{Name: "spatial_scale", Default: 1.0, Doc: "scale of X relative to the image the RoIs are in (0.0625 for a stride of 16)"},
	{Name: "pooled_h", Default: 1, Doc: "height of each pooled map"},
	{Name: "pooled_w", Default: 1, Doc: "width of each pooled map"},
	{Name: "sampling_ratio", Default: -1, Doc: "sampling points per bin along each axis; ≤ 0: ⌈RoI side / pooled side⌉"},
	{Name: "aligned", Default: false, Doc: "shift the RoIs by half a pixel (pixel centres at .5) and let them be smaller than a pixel"},
}

// maxRoISamples bounds the sampling points of one RoI (bins × points per
// bin): a RoI of astronomic size in a net from a file would otherwise keep
// the operator busy for ever.
const maxRoISamples = 1 << 24

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "RoIAlign", MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		Args: roiAlignArgs,
		Doc: "RoIAlign(X, RoIs) → Y pools each RoI (a row [batch index, x1, y1, x2, y2], or [x1, y1, x2, y2] " +
			"for image 0) of the float feature maps X into pooled_h × pooled_w bins, each the mean of bilinear " +
			"samples on a regular grid (Mask R-CNN). Y is (R, C, pooled_h, pooled_w), or (R, pooled_h, pooled_w, C) for NHWC.",
	}, newRoIAlign(false))
	operators.MustRegisterCPU(operators.Schema{
		Type: "RoIAlignGradient", MinInputs: 3, MaxInputs: 3, MinOutputs: 1, MaxOutputs: 1,
		Args: roiAlignArgs,
		Doc:  "RoIAlignGradient(X, RoIs, dY) → dX spreads each bin's gradient over the pixels its samples interpolated, with the same weights.",
	}, newRoIAlign(true))
	operators.MustRegisterGradient("RoIAlign", func(g *operators.GradientContext) error {
		g.Op("RoIAlignGradient", []string{g.I(0), g.I(1), g.GO(0)}, []string{g.GI(0)})
		return nil
	})
	operators.MustRegisterShapeFunc("RoIAlign", poolShape)
	operators.MustRegisterShapeFunc("RoIAlignGradient", likeInput0)
}

func newRoIAlign(grad bool) operators.Factory {
	return func(b *operators.Base) (operators.Operator, error) {
		nhwc, err := channelsLast(b)
		if err != nil {
			return nil, err
		}
		ph, pw, err := pooledArgs(b)
		if err != nil {
			return nil, err
		}
		return &roiAlignOp{Base: b, grad: grad, nhwc: nhwc, ph: ph, pw: pw,
			scale: b.ArgFloat("spatial_scale", 1), ratio: int(max(min(b.ArgInt("sampling_ratio", -1), math.MaxInt32), -1)),
			aligned: b.ArgBool("aligned", false)}, nil
	}
}

type roiAlignOp struct {
	*operators.Base
	grad, nhwc, aligned bool
	ph, pw, ratio       int
	scale               float32
	taps                []roiTap // scratch, kept between runs
	dims                []int    // scratch for an output shape
}

// roiTap is one bilinear sample: four pixel offsets (y·w + x) and weights;
// a sample outside the map has ok false.
type roiTap struct {
	p  [4]int
	w  [4]float32
	ok bool
}

// checkRoIs checks the RoIs tensor against the images X holds and returns
// its number of columns (4 or 5).
// With batch false the batch column is optional (4 or 5 columns), with
// batch true it is required (5 columns).
func checkRoIs(o *operators.Base, r *blob.Tensor, ri int, m image, batch bool) (int, error) {
	if r.NumDims() != 2 || (r.Dim(1) != 5 && (batch || r.Dim(1) != 4)) {
		want := "(R, 4) or (R, 5)"
		if batch {
			want = "(R, 5)"
		}
		return 0, o.Errorf("input %d (%q) has shape %v; want %s RoIs", ri, o.InputName(ri), r.Dims(), want)
	}
	v := blob.Data[float32](r)
	if !finite(v) {
		return 0, o.Errorf("input %d (%q) holds a coordinate that is not finite", ri, o.InputName(ri))
	}
	nc := r.Dim(1)
	if nc == 5 {
		for i := 0; i < len(v); i += nc {
			if b := int(v[i]); v[i] <= -1 || b >= m.n {
				return 0, o.Errorf("input %d (%q): RoI %d has batch index %v, but X holds %d images", ri, o.InputName(ri), i/nc, v[i], m.n)
			}
		}
	} else if m.n < 1 && r.Dim(0) > 0 {
		return 0, o.Errorf("input %d (%q) has RoIs of image 0, but X holds no image", ri, o.InputName(ri))
	}
	return nc, nil
}

func (o *roiAlignOp) Run() error {
	x, r, m, err := roiInputs(o.Base, o.nhwc)
	if err != nil {
		return err
	}
	if o.grad {
		return o.runGrad(x, r, m)
	}
	y := o.Output(0)
	if r.Size() == 0 {
		o.dims = m.pooledDims(o.dims[:0], 0, o.ph, o.pw)
		if err := y.Init(blob.Float32, o.dims...); err != nil {
			return o.Errorf("output %q: %v", o.OutputName(0), err)
		}
		return nil
	}
	cols, err := checkRoIs(o.Base, r, 1, m, false)
	if err != nil {
		return err
	}
	o.dims = m.pooledDims(o.dims[:0], r.Dim(0), o.ph, o.pw)
	if err := y.Init(blob.Float32, o.dims...); err != nil {
		return o.Errorf("output %q: %v", o.OutputName(0), err)
	}
	yd, xd := blob.Data[float32](y), blob.Data[float32](x)
	if y.Size() == 0 {
		return nil
	}
	return o.each(r, cols, m, func(n, b int, taps []roiTap, gh, gw int, count float32) {
		for k := range m.c {
			t := 0
			for i := range o.ph {
				for j := range o.pw {
					var acc float32
					for range gh * gw {
						tp := &taps[t]
						t++
						if !tp.ok {
							continue
						}
						acc += tp.w[0]*xd[m.at(b, k, tp.p[0])] + tp.w[1]*xd[m.at(b, k, tp.p[1])] +
							tp.w[2]*xd[m.at(b, k, tp.p[2])] + tp.w[3]*xd[m.at(b, k, tp.p[3])]
					}
					yd[m.pooledAt(n, k, i, j, o.ph, o.pw)] = acc * (1 / count)
				}
			}
		}
	})
}

func (o *roiAlignOp) runGrad(x, r *blob.Tensor, m image) error {
	dy, err := o.InputOf(2, blob.Float32)
	if err != nil {
		return err
	}
	dxd, cols, ok, err := roiGradInit(o.Base, x, r, dy, m, false)
	if !ok {
		return err
	}
	if o.dims = m.pooledDims(o.dims[:0], r.Dim(0), o.ph, o.pw); !sameDims(dy.Dims(), o.dims) {
		return o.Errorf("input 2 (%q) has shape %v; RoIAlign's output for X %v and RoIs %v is %v", o.InputName(2), dy.Dims(), x.Dims(), r.Dims(), slices.Clone(o.dims))
	}
	dyd := blob.Data[float32](dy)
	return o.each(r, cols, m, func(n, b int, taps []roiTap, gh, gw int, count float32) {
		for k := range m.c {
			t := 0
			for i := range o.ph {
				for j := range o.pw {
					g := dyd[m.pooledAt(n, k, i, j, o.ph, o.pw)]
					for range gh * gw {
						tp := &taps[t]
						t++
						if !tp.ok {
							continue
						}
						for q := range 4 {
							dxd[m.at(b, k, tp.p[q])] += g * tp.w[q] / count
						}
					}
				}
			}
		}
	})
}

func sameDims(a, b []int) bool {
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

// each computes, for every RoI n (of image b), the bilinear taps of its
// sampling grid (bins in row-major order, gh×gw samples each) and calls f
// with them and the samples per bin (at least 1). The sampling points are
// rounded as Caffe2's kernels round them: the forward pass steps by
// bin/grid, the gradient divides (iy + ½)·bin by the grid.
func (o *roiAlignOp) each(r *blob.Tensor, cols int, m image, f func(n, b int, taps []roiTap, gh, gw int, count float32)) error {
	rv := blob.Data[float32](r)
	var offset float32
	if o.aligned {
		offset = 0.5
	}
	for n := range r.Dim(0) {
		row := rv[n*cols : (n+1)*cols]
		b := 0
		if cols == 5 {
			b = int(row[0])
			row = row[1:]
		}
		x1, y1 := row[0]*o.scale-offset, row[1]*o.scale-offset
		x2, y2 := row[2]*o.scale-offset, row[3]*o.scale-offset
		rw, rh := x2-x1, y2-y1
		if !o.aligned {
			rw, rh = max(rw, 1), max(rh, 1)
		} else if rw < 0 || rh < 0 {
			return o.Errorf("RoI %d %v has a negative size: aligned RoIs must have x2 ≥ x1 and y2 ≥ y1", n, row)
		}
		bh, bw := rh/float32(o.ph), rw/float32(o.pw)
		gh, gw := o.ratio, o.ratio
		if o.ratio <= 0 {
			gh, gw = gridSide(rh/float32(o.ph)), gridSide(rw/float32(o.pw))
		}
		if gh < 0 || gw < 0 || float64(gh)*float64(gw)*float64(o.ph)*float64(o.pw) > maxRoISamples {
			return o.Errorf("RoI %d %v samples a %d×%d grid in each of %d×%d bins, more than %d points", n, row, gh, gw, o.ph, o.pw, maxRoISamples)
		}
		count := float32(max(gh*gw, 1))
		need := gh * gw * o.ph * o.pw
		if cap(o.taps) < need {
			if err := blob.CheckAllocation(int64(need) * 56); err != nil {
				return o.Errorf("RoI %d: sampling grid: %v", n, err)
			}
			o.taps = make([]roiTap, need)
		}
		taps := o.taps[:need]
		t := 0
		for i := range o.ph {
			for j := range o.pw {
				for iy := range gh {
					sy := y1 + float32(i)*bh + (float32(iy)+0.5)*bh/float32(gh)
					if !o.grad {
						sy = y1 + float32(i)*bh + (float32(iy)+0.5)*(bh/float32(gh))
					}
					for ix := range gw {
						sx := x1 + float32(j)*bw + (float32(ix)+0.5)*bw/float32(gw)
						if !o.grad {
							sx = x1 + float32(j)*bw + (float32(ix)+0.5)*(bw/float32(gw))
						}
						taps[t] = bilinearTap(m.h, m.w, sy, sx)
						t++
					}
				}
			}
		}
		f(n, b, taps, gh, gw, count)
	}
	return nil
}

// gridSide is ⌈v⌉ for the adaptive sampling grid, clamped so that a huge
// RoI fails the sample bound instead of overflowing.
func gridSide(v float32) int {
	c := math.Ceil(float64(v))
	if c > maxRoISamples {
		return maxRoISamples + 1
	}
	return max(int(c), 0)
}

// bilinearTap is Caffe2's bilinear sample of an h×w map at (y, x): none
// outside [-1, h] × [-1, w] (nor at a NaN); coordinates below 0 clamp to 0, and the last
// row or column takes the whole weight.
func bilinearTap(h, w int, y, x float32) roiTap {
	if !(y >= -1 && y <= float32(h) && x >= -1 && x <= float32(w)) || h == 0 || w == 0 {
		return roiTap{}
	}
	y, x = max(y, 0), max(x, 0)
	yl, xl := int(y), int(x)
	yh, xh := yl+1, xl+1
	if yl >= h-1 {
		yl, yh = h-1, h-1
		y = float32(yl)
	}
	if xl >= w-1 {
		xl, xh = w-1, w-1
		x = float32(xl)
	}
	ly, lx := y-float32(yl), x-float32(xl)
	hy, hx := 1-ly, 1-lx
	return roiTap{
		p:  [4]int{yl*w + xl, yl*w + xh, yh*w + xl, yh*w + xh},
		w:  [4]float32{hy * hx, hy * lx, ly * hx, ly * lx},
		ok: true,
	}
}
