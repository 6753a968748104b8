package caffe

import (
	"fmt"
	"math"
	"slices"

	"github.com/caffe2go/caffe2go/netdef"
)

// layer translates c.l; rest are the layers after it, which a layer may
// merge with (BatchNorm with the Scale after it).
func (c *converter) layer(rest []*LayerParameter) error {
	switch c.l.GetType() {
	case "Input":
		return c.inputLayer()
	case "Data", "ImageData", "MemoryData", "HDF5Data":
		return c.dataLayer()
	case "Convolution":
		return c.convolution()
	case "Deconvolution":
		return c.deconvolution()
	case "Pooling":
		return c.pooling()
	case "InnerProduct":
		return c.innerProduct()
	case "ReLU":
		return c.relu()
	case "PReLU":
		return c.prelu()
	case "Sigmoid":
		return c.unary("Sigmoid", true)
	case "TanH":
		return c.unary("Tanh", true)
	case "AbsVal":
		return c.unary("Abs", false)
	case "LRN":
		return c.lrn()
	case "BatchNorm":
		return c.batchNorm(rest)
	case "Scale":
		return c.scale()
	case "Eltwise":
		return c.eltwise()
	case "Concat":
		return c.concat()
	case "Dropout":
		return c.dropout()
	case "Softmax":
		return c.softmax()
	case "SoftmaxWithLoss":
		return c.softmaxWithLoss()
	case "Accuracy":
		return c.accuracy()
	case "Flatten":
		return c.flatten()
	case "Reshape":
		return c.reshape()
	case "Slice":
		return c.slice()
	case "Split":
		return c.split()
	case "Power":
		return c.power()
	case "Silence":
		if err := c.counts(1, -1, 0, 0); err != nil {
			return err
		}
		_, _, err := c.bottoms()
		return err
	}
	return fmt.Errorf("the layer type is %w", ErrUnsupported)
}

// counts checks the numbers of bottoms and tops (hi < 0: no upper bound).
func (c *converter) counts(bLo, bHi, tLo, tHi int) error {
	check := func(n, lo, hi int, what string) error {
		if n >= lo && (hi < 0 || n <= hi) {
			return nil
		}
		want := fmt.Sprint(lo)
		switch {
		case hi < 0:
			want = fmt.Sprintf("at least %d", lo)
		case hi != lo:
			want = fmt.Sprintf("%d to %d", lo, hi)
		}
		return fmt.Errorf("has %d %s, want %s", n, what, want)
	}
	if err := check(len(c.l.Bottom), bLo, bHi, "bottoms"); err != nil {
		return err
	}
	return check(len(c.l.Top), tLo, tHi, "tops")
}

// inPlaceFirst reports whether top 0 may share a blob with bottom 0 only:
// it is no other bottom.
func (c *converter) inPlaceFirst() bool {
	return len(c.l.Top) > 0 && !slices.Contains(c.l.Bottom[1:], c.l.Top[0])
}

func (c *converter) inputLayer() error {
	if err := c.counts(0, 0, 1, -1); err != nil {
		return err
	}
	shapes := c.l.GetInputParam().GetShape()
	if n := len(shapes); n > 1 && n != len(c.l.Top) {
		return fmt.Errorf("input_param has %d shapes for %d tops (want 0, 1 or one per top)", n, len(c.l.Top))
	}
	for i := range c.l.Top {
		var shape []int
		if len(shapes) > 0 {
			s := shapes[0]
			if len(shapes) > 1 {
				s = shapes[i]
			}
			if len(s.Dim) > maxAxes {
				return fmt.Errorf("input_param shape %v has more than Caffe's %d axes", s.Dim, maxAxes)
			}
			shape = []int{}
			for _, d := range s.Dim {
				if d < 0 {
					return fmt.Errorf("input_param shape %v has a negative dimension", s.Dim)
				}
				shape = append(shape, int(d))
			}
		}
		if err := c.input(i, shape); err != nil {
			return err
		}
	}
	return nil
}

// transform is a data layer's preprocessing (TransformationParameter, or
// the fields a data layer had before it).
type transform struct {
	scale     float32
	mirror    bool
	crop      int
	meanFile  string
	meanValue []float32
}

func (c *converter) dataLayer() error {
	if err := c.counts(0, 0, 1, -1); err != nil {
		return err
	}
	l := c.l
	tp := orEmpty(l.GetTransformParam())
	tr := transform{scale: tp.GetScale(), mirror: tp.GetMirror(), crop: int(tp.GetCropSize()),
		meanFile: tp.GetMeanFile(), meanValue: tp.GetMeanValue()}
	var data []int
	switch l.GetType() {
	case "Data":
		dp := orEmpty(l.GetDataParam())
		if dp.Scale != nil || dp.MeanFile != nil || dp.CropSize != nil || dp.Mirror != nil {
			tr = transform{scale: dp.GetScale(), mirror: dp.GetMirror(), crop: int(dp.GetCropSize()), meanFile: dp.GetMeanFile()}
		}
		if dp.BatchSize != nil {
			data = []int{int(dp.GetBatchSize()), -1, -1, -1}
		}
	case "ImageData":
		ip := orEmpty(l.GetImageDataParam())
		if ip.Scale != nil || ip.MeanFile != nil || ip.CropSize != nil || ip.Mirror != nil {
			tr = transform{scale: ip.GetScale(), mirror: ip.GetMirror(), crop: int(ip.GetCropSize()), meanFile: ip.GetMeanFile()}
		}
		ch, h, w := 1, -1, -1
		if ip.GetIsColor() {
			ch = 3
		}
		if ip.GetNewHeight() > 0 && ip.GetNewWidth() > 0 {
			h, w = int(ip.GetNewHeight()), int(ip.GetNewWidth())
		}
		data = []int{int(ip.GetBatchSize()), ch, h, w}
	case "MemoryData":
		mp := orEmpty(l.GetMemoryDataParam())
		data = []int{int(mp.GetBatchSize()), int(mp.GetChannels()), int(mp.GetHeight()), int(mp.GetWidth())}
	case "HDF5Data":
		tr = transform{scale: 1}
	}
	for i := range l.Top {
		var shape []int
		switch {
		case i == 0:
			shape = data
		case i == 1 && data != nil:
			shape = data[:1]
		}
		if err := c.input(i, shape); err != nil {
			return err
		}
	}
	return c.applyTransform(tr)
}

// applyTransform adds a data layer's preprocessing of its top 0, in Caffe's
// order (DataTransformer): the test phase's centre crop, the mean, the
// scale. Random mirroring, a training-time augmentation, is not part of
// the translation.
func (c *converter) applyTransform(tr transform) error {
	if c.opts.phase == Phase_TRAIN && (tr.crop > 0 || tr.mirror) {
		return fmt.Errorf("the training-time augmentation of transform_param (random crop_size, mirror) is %w", ErrUnsupported)
	}
	if tr.meanFile != "" {
		return fmt.Errorf("transform_param mean_file %q is %w: subtract the mean from the data before feeding it, or give mean_value", tr.meanFile, ErrUnsupported)
	}
	if tr.crop == 0 && len(tr.meanValue) == 0 && tr.scale == 1 {
		return nil
	}
	t := c.l.Top[0]
	x := c.cur[t]
	shape := c.shape[x]
	out := c.newName(t + "_transformed")
	if tr.crop > 0 {
		if len(shape) != 4 || shape[2] < 0 || shape[3] < 0 {
			return fmt.Errorf("transform_param crop_size needs the height and width of top %q, whose shape is %s: give it with InputShape", t, shapeString(shape))
		}
		h, w := shape[2], shape[3]
		if tr.crop > h || tr.crop > w {
			return fmt.Errorf("transform_param crop_size %d is larger than top %q of shape %s", tr.crop, t, shapeString(shape))
		}
		hOff, wOff := (h-tr.crop)/2, (w-tr.crop)/2
		c.op("PadImage", []string{x}, []string{out},
			netdef.ArgInts("pads", int64(-hOff), int64(-wOff), int64(-(h-tr.crop-hOff)), int64(-(w-tr.crop-wOff))))
		shape = []int{shape[0], shape[1], tr.crop, tr.crop}
		x = out
	}
	if n := len(tr.meanValue); n > 0 {
		if n > 1 && len(shape) > 1 && shape[1] >= 0 && shape[1] != n {
			return fmt.Errorf("transform_param has %d mean_value for top %q of shape %s (want 1 or one per channel)", n, t, shapeString(shape))
		}
		mean := c.param("mean", tensor{shape: []int{n}, data: tr.meanValue})
		if n == 1 {
			c.op("Sub", []string{x, mean}, []string{out})
		} else {
			c.op("Sub", []string{x, mean}, []string{out}, netdef.ArgInt("broadcast", 1), netdef.ArgInt("axis", 1))
		}
		x = out
	}
	if tr.scale != 1 {
		c.op("Scale", []string{x}, []string{out}, netdef.ArgFloat("scale", tr.scale))
	}
	c.cur[t] = out
	c.shape[out] = shape
	c.rec.Blobs[0] = out
	return nil
}

// spatial reads a ConvolutionParameter's repeated kernel, stride, pad or
// dilation field (or its _h and _w form) for n spatial axes.
func spatial(n int, list []uint32, hasHW bool, h, w uint32, def int, what string) ([]int, error) {
	if hasHW {
		if n != 2 {
			return nil, fmt.Errorf("%s_h and %s_w are for 2 spatial axes, the bottom has %d", what, what, n)
		}
		if len(list) > 0 {
			return nil, fmt.Errorf("has both %s and %s_h/%s_w", what, what, what)
		}
		return []int{int(h), int(w)}, nil
	}
	out := make([]int, n)
	switch len(list) {
	case 0:
		if def < 0 {
			return nil, fmt.Errorf("has no %s", what)
		}
		for i := range out {
			out[i] = def
		}
	case 1:
		for i := range out {
			out[i] = int(list[0])
		}
	case n:
		for i, v := range list {
			out[i] = int(v)
		}
	default:
		return nil, fmt.Errorf("has %d values of %s for %d spatial axes (want 1 or %d)", len(list), what, n, n)
	}
	return out, nil
}

// convGeometry is a convolution's window.
type convGeometry struct {
	kernel, stride, pad, dilation []int
}

func convParams(cp *ConvolutionParameter, x []int) (int, convGeometry, error) {
	var g convGeometry
	if cp == nil {
		return 0, g, fmt.Errorf("has no convolution_param")
	}
	axis, err := canonicalAxis(cp.GetAxis(), rankOf(x), "convolution_param axis")
	if err != nil {
		return 0, g, err
	}
	if axis != 1 {
		return 0, g, fmt.Errorf("convolution_param axis %d (channels not on axis 1) is %w", cp.GetAxis(), ErrUnsupported)
	}
	n := 2
	switch {
	case x != nil:
		n = len(x) - 2
	case len(cp.KernelSize) > 1:
		n = len(cp.KernelSize)
	}
	if n < 1 {
		return 0, g, fmt.Errorf("bottom of shape %s has no spatial axes", shapeString(x))
	}
	if g.kernel, err = spatial(n, cp.KernelSize, cp.KernelH != nil || cp.KernelW != nil, cp.GetKernelH(), cp.GetKernelW(), -1, "kernel"); err != nil {
		return 0, g, err
	}
	if g.stride, err = spatial(n, cp.Stride, cp.StrideH != nil || cp.StrideW != nil, cp.GetStrideH(), cp.GetStrideW(), 1, "stride"); err != nil {
		return 0, g, err
	}
	if g.pad, err = spatial(n, cp.Pad, cp.PadH != nil || cp.PadW != nil, cp.GetPadH(), cp.GetPadW(), 0, "pad"); err != nil {
		return 0, g, err
	}
	if g.dilation, err = spatial(n, cp.Dilation, false, 0, 0, 1, "dilation"); err != nil {
		return 0, g, err
	}
	for i := range n {
		if g.kernel[i] <= 0 || g.stride[i] <= 0 || g.dilation[i] <= 0 {
			return 0, g, fmt.Errorf("kernel %v, stride %v and dilation %v must be positive", g.kernel, g.stride, g.dilation)
		}
	}
	if cp.GetNumOutput() == 0 {
		return 0, g, fmt.Errorf("convolution_param has no num_output")
	}
	if cp.GetGroup() == 0 || cp.GetNumOutput()%cp.GetGroup() != 0 {
		return 0, g, fmt.Errorf("num_output %d is not a multiple of group %d", cp.GetNumOutput(), cp.GetGroup())
	}
	return n, g, nil
}

// orEmpty returns a layer's parameter message, or an empty one (all
// defaults) when the layer has none.
func orEmpty[T any](p *T) *T {
	if p == nil {
		return new(T)
	}
	return p
}

// rankOf is the rank of shape s, -1 when unknown.
func rankOf(s []int) int {
	if s == nil {
		return -1
	}
	return len(s)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// channels returns the channel count of bottom x (-1 when unknown) and
// checks that group divides it.
func channels(x []int, group int) (int, error) {
	if len(x) < 2 || x[1] < 0 {
		return -1, nil
	}
	if x[1]%group != 0 {
		return 0, fmt.Errorf("the bottom's %d channels are not a multiple of group %d", x[1], group)
	}
	return x[1], nil
}

func (c *converter) convolution() error {
	if err := c.counts(1, 1, 1, 1); err != nil {
		return err
	}
	xn, x, err := c.bottom(0)
	if err != nil {
		return err
	}
	cp := orEmpty(c.l.GetConvolutionParam())
	n, g, err := convParams(cp, x)
	if err != nil {
		return err
	}
	group, out := int(cp.GetGroup()), int(cp.GetNumOutput())
	ch, err := channels(x, group)
	if err != nil {
		return err
	}
	blobs, err := c.trainedOrFilled(1+boolInt(cp.GetBiasTerm()), "weights"+map[bool]string{true: " and bias"}[cp.GetBiasTerm()])
	if err != nil {
		return err
	}
	cg := -1
	if ch >= 0 {
		cg = ch / group
	}
	w, err := c.learned(blobs, 0, "weights", "w", cp.GetWeightFiller(), append([]int{out, cg}, g.kernel...)...)
	if err != nil {
		return err
	}
	in := []string{xn, w}
	if cp.GetBiasTerm() {
		b, err := c.learned(blobs, 1, "bias", "b", cp.GetBiasFiller(), out)
		if err != nil {
			return err
		}
		in = append(in, b)
	}
	var shape []int
	if x != nil {
		shape = []int{x[0], out}
		for i := range n {
			shape = append(shape, convOut(x[2+i], g.kernel[i], g.stride[i], g.pad[i], g.dilation[i]))
		}
	}
	y, err := c.top(0, false, shape)
	if err != nil {
		return err
	}
	args := []*netdef.Argument{
		netdef.ArgInts("kernels", int64s(g.kernel)...), netdef.ArgInts("strides", int64s(g.stride)...),
		netdef.ArgInts("pads", int64s(append(slices.Clone(g.pad), g.pad...))...),
		netdef.ArgInts("dilations", int64s(g.dilation)...), netdef.ArgString("order", "NCHW"),
	}
	if group != 1 {
		args = append(args, netdef.ArgInt("group", int64(group)))
	}
	c.op("Conv", in, []string{y}, args...)
	return nil
}

func (c *converter) deconvolution() error {
	if err := c.counts(1, 1, 1, 1); err != nil {
		return err
	}
	xn, x, err := c.bottom(0)
	if err != nil {
		return err
	}
	cp := orEmpty(c.l.GetConvolutionParam())
	n, g, err := convParams(cp, x)
	if err != nil {
		return err
	}
	if n != 2 {
		return fmt.Errorf("a deconvolution over %d spatial axes is %w (only 2-D)", n, ErrUnsupported)
	}
	if g.dilation[0] != 1 || g.dilation[1] != 1 {
		return fmt.Errorf("dilation %v is %w by Deconvolution's translation (ConvTranspose)", g.dilation, ErrUnsupported)
	}
	group, out := int(cp.GetGroup()), int(cp.GetNumOutput())
	ch, err := channels(x, group)
	if err != nil {
		return err
	}
	blobs, err := c.trainedOrFilled(1+boolInt(cp.GetBiasTerm()), "weights"+map[bool]string{true: " and bias"}[cp.GetBiasTerm()])
	if err != nil {
		return err
	}
	w, err := c.learned(blobs, 0, "weights", "w", cp.GetWeightFiller(), ch, out/group, g.kernel[0], g.kernel[1])
	if err != nil {
		return err
	}
	in := []string{xn, w}
	if cp.GetBiasTerm() {
		b, err := c.learned(blobs, 1, "bias", "b", cp.GetBiasFiller(), out)
		if err != nil {
			return err
		}
		in = append(in, b)
	}
	var shape []int
	if x != nil {
		shape = []int{x[0], out}
		for i := range 2 {
			shape = append(shape, deconvOut(x[2+i], g.kernel[i], g.stride[i], g.pad[i]))
		}
	}
	y, err := c.top(0, false, shape)
	if err != nil {
		return err
	}
	args := []*netdef.Argument{
		netdef.ArgInts("kernels", int64s(g.kernel)...), netdef.ArgInts("strides", int64s(g.stride)...),
		netdef.ArgInts("pads", int64s(append(slices.Clone(g.pad), g.pad...))...), netdef.ArgString("order", "NCHW"),
	}
	if group != 1 {
		args = append(args, netdef.ArgInt("group", int64(group)))
	}
	c.op("ConvTranspose", in, []string{y}, args...)
	return nil
}

// pair reads a PoolingParameter's single value or its _h and _w form.
func pair(v *uint32, h, w *uint32, def uint32, what string) ([2]int, error) {
	switch {
	case h != nil || w != nil:
		if v != nil {
			return [2]int{}, fmt.Errorf("has both %s and %s_h/%s_w", what, what, what)
		}
		if h == nil || w == nil {
			return [2]int{}, fmt.Errorf("has only one of %s_h and %s_w", what, what)
		}
		return [2]int{int(*h), int(*w)}, nil
	case v != nil:
		return [2]int{int(*v), int(*v)}, nil
	}
	return [2]int{int(def), int(def)}, nil
}

func (c *converter) pooling() error {
	if err := c.counts(1, 1, 1, 1); err != nil {
		if len(c.l.Top) == 2 {
			return fmt.Errorf("a second top (the max pooling mask) is %w", ErrUnsupported)
		}
		return err
	}
	xn, x, err := c.bottom(0)
	if err != nil {
		return err
	}
	if x != nil && len(x) != 4 {
		return fmt.Errorf("bottom of shape %s: Caffe pools 4-D blobs only", shapeString(x))
	}
	pp := orEmpty(c.l.GetPoolingParam())
	if pp == nil {
		pp = &PoolingParameter{}
	}
	typ := "MaxPool"
	switch pp.GetPool() {
	case PoolingParameter_MAX:
	case PoolingParameter_AVE:
		typ = "AveragePool"
	default:
		return fmt.Errorf("pool %v is %w", pp.GetPool(), ErrUnsupported)
	}
	pad, err := pair(pp.Pad, pp.PadH, pp.PadW, 0, "pad")
	if err != nil {
		return err
	}
	stride, err := pair(pp.Stride, pp.StrideH, pp.StrideW, 1, "stride")
	if err != nil {
		return err
	}
	args := []*netdef.Argument{netdef.ArgString("order", "NCHW")}
	if pp.GetGlobalPooling() {
		if pp.KernelSize != nil || pp.KernelH != nil || pp.KernelW != nil {
			return fmt.Errorf("global_pooling takes no kernel size")
		}
		if pad != [2]int{} || stride != [2]int{1, 1} {
			return fmt.Errorf("global_pooling needs pad 0 and stride 1, got pad %v and stride %v", pad, stride)
		}
		var shape []int
		if x != nil {
			shape = []int{x[0], x[1], 1, 1}
		}
		y, err := c.top(0, false, shape)
		if err != nil {
			return err
		}
		c.op(typ, []string{xn}, []string{y}, append(args, netdef.ArgInt("global_pooling", 1))...)
		return nil
	}
	if pp.KernelSize == nil && (pp.KernelH == nil || pp.KernelW == nil) {
		return fmt.Errorf("has no kernel_size (or kernel_h and kernel_w)")
	}
	kernel, err := pair(pp.KernelSize, pp.KernelH, pp.KernelW, 0, "kernel")
	if err != nil {
		return err
	}
	for i := range 2 {
		if kernel[i] <= 0 || stride[i] <= 0 {
			return fmt.Errorf("kernel %v and stride %v must be positive", kernel, stride)
		}
		if pad[i] >= kernel[i] {
			return fmt.Errorf("pad %v must be smaller than kernel %v", pad, kernel)
		}
	}
	floor := pp.GetRoundMode() == PoolingParameter_FLOOR
	args = append(args, netdef.ArgInts("kernels", int64(kernel[0]), int64(kernel[1])),
		netdef.ArgInts("strides", int64(stride[0]), int64(stride[1])))
	var shape []int
	if x != nil {
		shape = []int{x[0], x[1], -1, -1}
	}
	hw := x != nil && x[2] >= 0 && x[3] >= 0
	if hw {
		for i := range 2 {
			shape[2+i] = poolOut(x[2+i], kernel[i], stride[i], pad[i], floor)
		}
	}
	ave := typ == "AveragePool"
	hasPad := pad != [2]int{}
	if !hw {
		// Without the input's size the tail pads are unknown. Rounding
		// down (FLOOR) is Caffe2's rule, and every window then ends within
		// the padded input, so average pooling divides by the whole kernel.
		// Rounding up, Caffe2's CAFFE_LEGACY_POOLING computes Caffe's size
		// at run time: Caffe's rule for max pooling and for average pooling
		// without padding; with padding the divisor depends on the size.
		args = append(args, netdef.ArgInts("pads", int64(pad[0]), int64(pad[1]), int64(pad[0]), int64(pad[1])))
		switch {
		case floor && ave && hasPad:
			args = append(args, netdef.ArgInt("count_include_pad", 1))
		case floor:
		case ave && hasPad:
			return fmt.Errorf("average pooling with pad %v needs the size of bottom %q, whose shape is %s: give the net's input shape with InputShape", pad, c.l.Bottom[0], shapeString(x))
		default:
			args = append(args, netdef.ArgInt("legacy_pad", 3))
		}
		y, err := c.top(0, false, shape)
		if err != nil {
			return err
		}
		c.op(typ, []string{xn}, []string{y}, args...)
		return nil
	}
	// Caffe2 rounds down: tail pads make it reach Caffe's size.
	in := []int{x[2], x[3]}
	tail := func(i, head int, size int) int {
		t := (shape[2+i]-1)*stride[i] + kernel[i] - size - head
		return max(t, 0)
	}
	overhang := false
	for i := range 2 {
		if shape[2+i] < 1 || (shape[2+i]-1)*stride[i] >= in[i]+pad[i] {
			return fmt.Errorf("kernel %v, stride %v and pad %v leave bottom %q of shape %s no input in Caffe's last window", kernel, stride, pad, c.l.Bottom[0], shapeString(x))
		}
		if (shape[2+i]-1)*stride[i]+kernel[i] > in[i]+pad[i] {
			overhang = true
		}
	}
	if ave && hasPad && overhang {
		// Caffe divides by the window clipped to the padded input, which
		// Caffe2 has no argument for: pad with zeros first, then divide by
		// the window clipped to that.
		padded := c.temp("padded", []int{x[0], x[1], in[0] + 2*pad[0], in[1] + 2*pad[1]})
		c.op("PadImage", []string{xn}, []string{padded},
			netdef.ArgInts("pads", int64(pad[0]), int64(pad[1]), int64(pad[0]), int64(pad[1])))
		xn = padded
		args = append(args, netdef.ArgInts("pads", 0, 0,
			int64(tail(0, 0, in[0]+2*pad[0])), int64(tail(1, 0, in[1]+2*pad[1]))))
	} else {
		args = append(args, netdef.ArgInts("pads", int64(pad[0]), int64(pad[1]),
			int64(max(pad[0], tail(0, pad[0], in[0]))), int64(max(pad[1], tail(1, pad[1], in[1])))))
		if ave && hasPad {
			// Every window lies inside the padded input: Caffe divides by
			// the whole kernel.
			args = append(args, netdef.ArgInt("count_include_pad", 1))
		}
	}
	y, err := c.top(0, false, shape)
	if err != nil {
		return err
	}
	c.op(typ, []string{xn}, []string{y}, args...)
	return nil
}

func (c *converter) innerProduct() error {
	if err := c.counts(1, 1, 1, 1); err != nil {
		return err
	}
	xn, x, err := c.bottom(0)
	if err != nil {
		return err
	}
	ip := orEmpty(c.l.GetInnerProductParam())
	if ip.GetNumOutput() == 0 {
		return fmt.Errorf("inner_product_param has no num_output")
	}
	r := -1
	if x != nil {
		r = len(x)
	}
	axis, err := canonicalAxis(ip.GetAxis(), r, "inner_product_param axis")
	if err != nil {
		return err
	}
	n, k := int(ip.GetNumOutput()), -1
	if x != nil {
		k = count(x, axis, len(x))
	}
	blobs, err := c.trainedOrFilled(1+boolInt(ip.GetBiasTerm()), "weights"+map[bool]string{true: " and bias"}[ip.GetBiasTerm()])
	if err != nil {
		return err
	}
	want, typ := []int{n, k}, "FC"
	if ip.GetTranspose() {
		want, typ = []int{k, n}, "FCTransposed"
	}
	w, err := c.learned(blobs, 0, "weights", "w", ip.GetWeightFiller(), want...)
	if err != nil {
		return err
	}
	in := []string{xn, w}
	if ip.GetBiasTerm() {
		b, err := c.learned(blobs, 1, "bias", "b", ip.GetBiasFiller(), n)
		if err != nil {
			return err
		}
		in = append(in, b)
	} else {
		in = append(in, c.constant("b", 0, n))
	}
	var shape []int
	if x != nil {
		shape = append(slices.Clone(x[:axis]), n)
	} else {
		shape = append(unknownDims(axis), n)
	}
	y, err := c.top(0, false, shape)
	if err != nil {
		return err
	}
	var args []*netdef.Argument
	if axis != 1 {
		args = append(args, netdef.ArgInt("axis", int64(axis)))
	}
	c.op(typ, in, []string{y}, args...)
	return nil
}

func (c *converter) relu() error {
	if err := c.counts(1, 1, 1, 1); err != nil {
		return err
	}
	xn, x, err := c.bottom(0)
	if err != nil {
		return err
	}
	y, err := c.top(0, true, x)
	if err != nil {
		return err
	}
	if s := c.l.GetReluParam().GetNegativeSlope(); s != 0 {
		c.op("LeakyRelu", []string{xn}, []string{y}, netdef.ArgFloat("alpha", s))
	} else {
		c.op("Relu", []string{xn}, []string{y})
	}
	return nil
}

func (c *converter) unary(typ string, inplace bool) error {
	if err := c.counts(1, 1, 1, 1); err != nil {
		return err
	}
	xn, x, err := c.bottom(0)
	if err != nil {
		return err
	}
	y, err := c.top(0, inplace, x)
	if err != nil {
		return err
	}
	c.op(typ, []string{xn}, []string{y})
	return nil
}

func (c *converter) prelu() error {
	if err := c.counts(1, 1, 1, 1); err != nil {
		return err
	}
	xn, x, err := c.bottom(0)
	if err != nil {
		return err
	}
	if x != nil && len(x) < 2 {
		return fmt.Errorf("bottom of shape %s has no channel axis", shapeString(x))
	}
	blobs, err := c.blobs(1, 1, "1 (the slopes)")
	if err != nil {
		return err
	}
	n := 1
	if !c.l.GetPreluParam().GetChannelShared() {
		n = -1
		if x != nil {
			n = x[1]
		}
	}
	s, err := c.learned(blobs, 0, "slopes", "slope", nil, n)
	if err != nil {
		return err
	}
	y, err := c.top(0, true, x)
	if err != nil {
		return err
	}
	c.op("PRelu", []string{xn, s}, []string{y}, netdef.ArgString("order", "NCHW"))
	return nil
}

func (c *converter) lrn() error {
	if err := c.counts(1, 1, 1, 1); err != nil {
		return err
	}
	xn, x, err := c.bottom(0)
	if err != nil {
		return err
	}
	if x != nil && len(x) != 4 {
		return fmt.Errorf("bottom of shape %s: Caffe normalizes 4-D blobs only", shapeString(x))
	}
	p := orEmpty(c.l.GetLrnParam())
	if p == nil {
		p = &LRNParameter{}
	}
	size := int(p.GetLocalSize())
	if size%2 == 0 {
		return fmt.Errorf("local_size %d must be odd", size)
	}
	switch p.GetNormRegion() {
	case LRNParameter_ACROSS_CHANNELS:
		y, err := c.top(0, false, x)
		if err != nil {
			return err
		}
		c.op("LRN", []string{xn}, []string{y}, netdef.ArgInt("size", int64(size)),
			netdef.ArgFloat("alpha", p.GetAlpha()), netdef.ArgFloat("beta", p.GetBeta()),
			netdef.ArgFloat("bias", p.GetK()), netdef.ArgString("order", "NCHW"))
		return nil
	case LRNParameter_WITHIN_CHANNEL:
		// Caffe builds it from layers: x · (1 + alpha · avg(x²))^-beta,
		// the average over size × size windows padded by (size-1)/2 and
		// divided by size² everywhere.
		pad := int64((size - 1) / 2)
		sq := c.temp("sq", x)
		scale := c.temp("scale", x)
		one := c.constant("one", 1, 1)
		c.op("Sqr", []string{xn}, []string{sq})
		c.op("AveragePool", []string{sq}, []string{scale}, netdef.ArgInts("kernels", int64(size), int64(size)),
			netdef.ArgInts("strides", 1, 1), netdef.ArgInts("pads", pad, pad, pad, pad),
			netdef.ArgInt("count_include_pad", 1), netdef.ArgString("order", "NCHW"))
		c.op("Scale", []string{scale}, []string{scale}, netdef.ArgFloat("scale", p.GetAlpha()))
		c.op("Add", []string{scale, one}, []string{scale})
		c.op("Pow", []string{scale}, []string{scale}, netdef.ArgFloat("exponent", -p.GetBeta()))
		y, err := c.top(0, true, x)
		if err != nil {
			return err
		}
		c.op("Mul", []string{xn, scale}, []string{y})
		return nil
	}
	return fmt.Errorf("norm_region %v is %w", p.GetNormRegion(), ErrUnsupported)
}

// batchNorm translates BatchNorm to SpatialBN with Caffe's stored
// statistics, divided by its scale factor. A Scale layer right after it on
// its top (bias_term or not, on the channel axis) is merged into the
// SpatialBN's scale and bias, as Caffe2's translator does.
func (c *converter) batchNorm(rest []*LayerParameter) error {
	if err := c.counts(1, 1, 1, 1); err != nil {
		return err
	}
	xn, x, err := c.bottom(0)
	if err != nil {
		return err
	}
	bp := orEmpty(c.l.GetBatchNormParam())
	if c.opts.phase == Phase_TRAIN && !bp.GetUseGlobalStats() {
		return fmt.Errorf("training with the batch's statistics (use_global_stats false, the TRAIN phase's default) is %w", ErrUnsupported)
	}
	if bp.UseGlobalStats != nil && !bp.GetUseGlobalStats() {
		return fmt.Errorf("use_global_stats false (normalizing with the batch's statistics at inference) is %w", ErrUnsupported)
	}
	ch := -1
	if len(x) > 1 {
		ch = x[1]
	} else if len(x) == 1 {
		ch = 1
	}
	blobs, err := c.blobs(3, 3, "3 (mean, variance, scale factor)")
	if err != nil {
		return err
	}
	mean, err := fit(blobs, 0, "mean", ch)
	if err != nil {
		return err
	}
	ch = mean.shape[0]
	variance, err := fit(blobs, 1, "variance", ch)
	if err != nil {
		return err
	}
	factor, err := fit(blobs, 2, "scale factor", 1)
	if err != nil {
		return err
	}
	// Caffe: scale_factor = blobs[2] == 0 ? 0 : 1 / blobs[2], in float.
	f := float32(0)
	if factor.data[0] != 0 {
		f = 1 / factor.data[0]
	}
	mean.data, variance.data = scaled(mean.data, f), scaled(variance.data, f)

	var sc *LayerParameter
	if len(rest) > 0 && rest[0].GetType() == "Scale" && includes(c.state, rest[0]) && mergeable(c.l, rest[0], rest[1:]) {
		sc = rest[0]
	}
	var scale, bias string
	if sc == nil {
		scale, bias = c.constant("scale", 1, ch), c.constant("bias", 0, ch)
	} else {
		bn := c.l
		c.l = sc
		sblobs, err := c.blobs(1+boolInt(sc.GetScaleParam().GetBiasTerm()), 1+boolInt(sc.GetScaleParam().GetBiasTerm()),
			"scale"+map[bool]string{true: " and bias"}[sc.GetScaleParam().GetBiasTerm()])
		if err == nil {
			var g, b tensor
			if g, err = fit(sblobs, 0, "scale", ch); err == nil {
				scale = c.param("w", g)
				if sc.GetScaleParam().GetBiasTerm() {
					if b, err = fit(sblobs, 1, "bias", ch); err == nil {
						bias = c.param("b", b)
					}
				} else {
					bias = c.constant("b", 0, ch)
				}
			}
		}
		c.l = bn
		if err != nil {
			return fmt.Errorf("merging Scale layer %q: %w", sc.GetName(), err)
		}
	}
	m, v := c.param("mean", mean), c.param("var", variance)
	var y string
	if sc == nil {
		y, err = c.top(0, true, x)
	} else {
		c.rec.Merged = sc.GetName()
		c.skipN = 1
		y, err = c.mergedTop(sc, x)
	}
	if err != nil {
		return err
	}
	c.op("SpatialBN", []string{xn, scale, bias, m, v}, []string{y}, netdef.ArgInt("is_test", 1),
		netdef.ArgFloat("epsilon", bp.GetEps()), netdef.ArgString("order", "NCHW"))
	return nil
}

// mergeable reports whether Scale layer sc can be merged into the BatchNorm
// bn before it: it scales bn's top on the channel axis with learned blobs,
// and no later layer reads bn's output.
func mergeable(bn, sc *LayerParameter, later []*LayerParameter) bool {
	p := orEmpty(sc.GetScaleParam())
	if len(sc.Bottom) != 1 || len(sc.Top) != 1 || sc.Bottom[0] != bn.Top[0] ||
		p.GetAxis() != 1 || p.GetNumAxes() != 1 {
		return false
	}
	if sc.Top[0] == sc.Bottom[0] {
		return true
	}
	for _, l := range later {
		if slices.Contains(l.Bottom, bn.Top[0]) {
			return false
		}
	}
	return true
}

// mergedTop records the top of a BatchNorm merged with Scale layer sc: the
// Scale's top, produced by the BatchNorm's operator.
func (c *converter) mergedTop(sc *LayerParameter, x []int) (string, error) {
	bn := c.l
	bnTop := bn.Top[0]
	if bnTop != bn.Bottom[0] {
		// The BatchNorm's own top is never computed.
		c.consumed[bnTop] = true
	}
	c.l = &LayerParameter{Name: bn.Name, Type: bn.Type, Bottom: append(slices.Clone(bn.Bottom), sc.Bottom...), Top: sc.Top}
	defer func() { c.l = bn }()
	return c.top(0, true, x)
}

func scaled(v []float32, f float32) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = f * x
	}
	return out
}

func (c *converter) scale() error {
	if err := c.counts(1, 2, 1, 1); err != nil {
		return err
	}
	xn, x, err := c.bottom(0)
	if err != nil {
		return err
	}
	p := orEmpty(c.l.GetScaleParam())
	r := -1
	if x != nil {
		r = len(x)
	}
	axis, err := canonicalAxis(p.GetAxis(), r, "scale_param axis")
	if err != nil {
		return err
	}
	var want []int
	var s string
	var bias tensor
	hasBias := p.GetBiasTerm()
	if len(c.l.Bottom) == 2 {
		sn, sshape, err := c.bottom(1)
		if err != nil {
			return err
		}
		if x != nil && sshape != nil {
			if axis+len(sshape) > len(x) || !dimsMatch(x[axis:axis+len(sshape)], sshape) {
				return fmt.Errorf("bottom 1 %q of shape %s does not match bottom 0 of shape %s from axis %d", c.l.Bottom[1], shapeString(sshape), shapeString(x), axis)
			}
		}
		s, want = sn, sshape
		if hasBias {
			blobs, err := c.blobs(1, 1, "1 (the bias)")
			if err != nil {
				return err
			}
			if want == nil {
				return fmt.Errorf("the bias needs the shape of bottom %q, which is unknown: give the net's input shape with InputShape", c.l.Bottom[1])
			}
			if bias, err = fit(blobs, 0, "bias", want...); err != nil {
				return err
			}
		}
	} else {
		switch n := p.GetNumAxes(); {
		case n == -1 && x != nil:
			want = slices.Clone(x[axis:])
		case n == -1:
			return fmt.Errorf("num_axes -1 needs the shape of bottom %q, which is unknown: give the net's input shape with InputShape", c.l.Bottom[0])
		case n < -1 || n > maxAxes:
			return fmt.Errorf("num_axes %d must be -1 to %d", n, maxAxes)
		case x != nil:
			if axis+int(n) > len(x) {
				return fmt.Errorf("axis %d and num_axes %d go past bottom 0 of shape %s", axis, n, shapeString(x))
			}
			want = slices.Clone(x[axis : axis+int(n)])
		default:
			want = unknownDims(int(n))
		}
		blobs, err := c.blobs(1+boolInt(hasBias), 1+boolInt(hasBias), "scale"+map[bool]string{true: " and bias"}[hasBias])
		if err != nil {
			return err
		}
		w, err := fit(blobs, 0, "scale", want...)
		if err != nil {
			return err
		}
		want = w.shape
		s = c.param("w", w)
		if hasBias {
			if bias, err = fit(blobs, 1, "bias", want...); err != nil {
				return err
			}
		}
	}
	y, err := c.top(0, c.inPlaceFirst(), x)
	if err != nil {
		return err
	}
	bcast := []*netdef.Argument{netdef.ArgInt("broadcast", 1), netdef.ArgInt("axis", int64(axis))}
	if len(want) == 0 {
		bcast = nil // a scalar broadcasts the NumPy way
	}
	c.op("Mul", []string{xn, s}, []string{y}, bcast...)
	if hasBias {
		c.op("Add", []string{y, c.param("b", bias)}, []string{y}, bcast...)
	}
	return nil
}

// dimsMatch compares shapes whose unknown dimensions match anything.
func dimsMatch(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] >= 0 && b[i] >= 0 && a[i] != b[i] {
			return false
		}
	}
	return true
}

// sameShapes checks that the bottoms' known shapes agree and returns the
// most known one.
func (c *converter) sameShapes(shapes [][]int) ([]int, error) {
	var out []int
	for i, s := range shapes {
		if s == nil {
			continue
		}
		if out != nil && !dimsMatch(out, s) {
			return nil, fmt.Errorf("bottom %d %q has shape %s, bottom 0 %q has %s", i, c.l.Bottom[i], shapeString(s), c.l.Bottom[0], shapeString(shapes[0]))
		}
		if out == nil || (!known(out) && known(s)) {
			out = s
		}
	}
	return out, nil
}

func (c *converter) eltwise() error {
	if err := c.counts(2, -1, 1, 1); err != nil {
		return err
	}
	xs, shapes, err := c.bottoms()
	if err != nil {
		return err
	}
	shape, err := c.sameShapes(shapes)
	if err != nil {
		return err
	}
	p := orEmpty(c.l.GetEltwiseParam())
	coeff := p.GetCoeff()
	if len(coeff) > 0 && p.GetOperation() != EltwiseParameter_SUM {
		return fmt.Errorf("coeff is for the SUM operation only, the operation is %v", p.GetOperation())
	}
	if len(coeff) > 0 && len(coeff) != len(xs) {
		return fmt.Errorf("has %d coeff for %d bottoms", len(coeff), len(xs))
	}
	y, err := c.top(0, c.inPlaceFirst(), shape)
	if err != nil {
		return err
	}
	switch p.GetOperation() {
	case EltwiseParameter_PROD:
		c.op("Mul", xs[:2], []string{y})
		for _, x := range xs[2:] {
			c.op("Mul", []string{y, x}, []string{y})
		}
	case EltwiseParameter_MAX:
		c.op("Max", xs, []string{y})
	case EltwiseParameter_SUM:
		ones := true
		for _, v := range coeff {
			ones = ones && v == 1
		}
		if ones {
			c.op("Sum", xs, []string{y})
			return nil
		}
		var in []string
		for i, x := range xs {
			in = append(in, x, c.constant(fmt.Sprintf("coeff%d", i), coeff[i], 1))
		}
		c.op("WeightedSum", in, []string{y})
	default:
		return fmt.Errorf("operation %v is %w", p.GetOperation(), ErrUnsupported)
	}
	return nil
}

func (c *converter) concat() error {
	if err := c.counts(1, -1, 1, 1); err != nil {
		return err
	}
	xs, shapes, err := c.bottoms()
	if err != nil {
		return err
	}
	p := orEmpty(c.l.GetConcatParam())
	r := -1
	for _, s := range shapes {
		if s != nil {
			r = len(s)
		}
	}
	var axis int
	switch {
	case p.Axis != nil && p.ConcatDim != nil:
		return fmt.Errorf("has both axis and concat_dim")
	case p.ConcatDim != nil:
		axis = int(p.GetConcatDim())
		if r >= 0 && axis >= r {
			return fmt.Errorf("concat_dim %d is out of range for bottoms of %d axes", axis, r)
		}
	default:
		if axis, err = canonicalAxis(p.GetAxis(), r, "concat_param axis"); err != nil {
			return err
		}
	}
	var shape []int
	if r >= 0 {
		shape = unknownDims(r)
		shape[axis] = 0
		for i, s := range shapes {
			if s == nil {
				shape[axis] = -1
				continue
			}
			if len(s) != r {
				return fmt.Errorf("bottom %d %q has shape %s, bottoms must have %d axes", i, c.l.Bottom[i], shapeString(s), r)
			}
			for j, d := range s {
				switch {
				case j == axis:
					if d < 0 || shape[axis] < 0 {
						shape[axis] = -1
					} else {
						shape[axis] += d
					}
				case shape[j] < 0:
					shape[j] = d
				case d >= 0 && d != shape[j]:
					return fmt.Errorf("bottom %d %q has shape %s, which differs from the others off axis %d", i, c.l.Bottom[i], shapeString(s), axis)
				}
			}
		}
	}
	y, err := c.top(0, false, shape)
	if err != nil {
		return err
	}
	if len(xs) == 1 {
		c.op("Copy", xs, []string{y})
		return nil
	}
	c.op("Concat", xs, []string{y, c.temp("split_info", []int{len(xs)})}, netdef.ArgInt("axis", int64(axis)))
	return nil
}

func (c *converter) dropout() error {
	if err := c.counts(1, 1, 1, 1); err != nil {
		return err
	}
	xn, x, err := c.bottom(0)
	if err != nil {
		return err
	}
	y, err := c.top(0, true, x)
	if err != nil {
		return err
	}
	// At test time Caffe's dropout passes its input through.
	c.op("Dropout", []string{xn}, []string{y}, netdef.ArgFloat("ratio", c.l.GetDropoutParam().GetDropoutRatio()),
		netdef.ArgInt("is_test", int64(boolInt(c.opts.phase == Phase_TEST))))
	return nil
}

// lastAxis moves axis of x (shape) to the end with a Transpose when it is
// not there or only followed by ones, and returns the blob, its shape,
// and the permutation used (nil for none).
func (c *converter) lastAxis(xn string, x []int, axis int, suffix string) (string, []int, []int) {
	if count(x, axis+1, len(x)) == 1 {
		return xn, x, nil
	}
	var perm []int
	for i := range x {
		if i != axis {
			perm = append(perm, i)
		}
	}
	perm = append(perm, axis)
	shape := make([]int, len(x))
	for i, p := range perm {
		shape[i] = x[p]
	}
	t := c.temp(suffix, shape)
	c.op("Transpose", []string{xn}, []string{t}, netdef.ArgInts("axes", int64s(perm)...))
	return t, shape, perm
}

// axisAndInner canonicalizes the axis of a layer that works along one axis
// of bottom x, which needs x's rank and the size of its trailing axes.
func (c *converter) axisAndInner(x []int, axis int32, what string) (int, error) {
	if x == nil {
		return 0, fmt.Errorf("needs the shape of bottom %q, which is unknown: give the net's input shape with InputShape", c.l.Bottom[0])
	}
	a, err := canonicalAxis(axis, len(x), what)
	if err != nil {
		return 0, err
	}
	if count(x, a+1, len(x)) < 0 {
		return 0, fmt.Errorf("needs the axes after axis %d of bottom %q, whose shape is %s: give the net's input shape with InputShape", a, c.l.Bottom[0], shapeString(x))
	}
	return a, nil
}

// softmax translates Softmax, which Caffe computes along one axis;
// Caffe2's Softmax runs over all the axes from axis on, so other axes after
// it are moved in front first.
func (c *converter) softmax() error {
	if err := c.counts(1, 1, 1, 1); err != nil {
		return err
	}
	xn, x, err := c.bottom(0)
	if err != nil {
		return err
	}
	axis, err := c.axisAndInner(x, c.l.GetSoftmaxParam().GetAxis(), "softmax_param axis")
	if err != nil {
		return err
	}
	t, ts, perm := c.lastAxis(xn, x, axis, "t")
	y, err := c.top(0, false, x)
	if err != nil {
		return err
	}
	if perm == nil {
		c.op("Softmax", []string{xn}, []string{y}, netdef.ArgInt("axis", int64(axis)))
		return nil
	}
	st := c.temp("t_softmax", ts)
	c.op("Softmax", []string{t}, []string{st}, netdef.ArgInt("axis", int64(len(x)-1)))
	c.op("Transpose", []string{st}, []string{y}, netdef.ArgInts("axes", int64s(inverse(perm))...))
	return nil
}

func inverse(perm []int) []int {
	inv := make([]int, len(perm))
	for i, p := range perm {
		inv[p] = i
	}
	return inv
}

// flatLabels returns a label blob as the 1-D tensor Caffe2's losses and
// Accuracy read, reshaping it unless it is known to be 1-D already.
func (c *converter) flatLabels(ln string, l []int, n int) (string, error) {
	if l != nil && n >= 0 {
		if cnt := count(l, 0, len(l)); cnt >= 0 && cnt != n {
			return "", fmt.Errorf("bottom 1 %q of shape %s holds %d labels, want %d", c.l.Bottom[1], shapeString(l), cnt, n)
		}
	}
	if len(l) == 1 {
		return ln, nil
	}
	flat := c.temp("labels", []int{n})
	c.op("Reshape", []string{ln}, []string{flat, c.temp("labels_old_shape", nil)}, netdef.ArgInts("shape", -1))
	return flat, nil
}

func (c *converter) softmaxWithLoss() error {
	if err := c.counts(2, 2, 1, 2); err != nil {
		return err
	}
	xn, x, err := c.bottom(0)
	if err != nil {
		return err
	}
	ln, l, err := c.bottom(1)
	if err != nil {
		return err
	}
	lp := orEmpty(c.l.GetLossParam())
	if lp.IgnoreLabel != nil {
		return fmt.Errorf("loss_param ignore_label is %w", ErrUnsupported)
	}
	axis, err := c.axisAndInner(x, c.l.GetSoftmaxParam().GetAxis(), "softmax_param axis")
	if err != nil {
		return err
	}
	outer, inner := count(x, 0, axis), count(x, axis+1, len(x))
	norm := lp.GetNormalization()
	if lp.Normalization == nil && lp.Normalize != nil && !lp.GetNormalize() {
		norm = LossParameter_BATCH_SIZE
	}
	// Caffe2 averages over the outer·inner rows, as Caffe's VALID and FULL
	// normalizations do without an ignore_label.
	scale := float32(1)
	switch norm {
	case LossParameter_BATCH_SIZE:
		scale = float32(inner)
	case LossParameter_NONE:
		if outer < 0 {
			return fmt.Errorf("normalization NONE needs the batch size of bottom %q, which is unknown: give the net's input shape with InputShape", c.l.Bottom[0])
		}
		scale = float32(outer * inner)
	}
	rows := -1
	if outer >= 0 {
		rows = outer * inner
	}
	labels, err := c.flatLabels(ln, l, rows)
	if err != nil {
		return err
	}
	t, ts, perm := c.lastAxis(xn, x, axis, "t")
	lossAxis := axis
	if perm != nil {
		lossAxis = len(x) - 1
	}
	var prob string
	if len(c.l.Top) == 2 && perm == nil {
		prob = "" // written below, once the loss top is recorded
	} else {
		prob = c.temp("prob", ts)
	}
	loss, err := c.top(0, false, []int{})
	if err != nil {
		return err
	}
	if len(c.l.Top) == 2 && perm == nil {
		if prob, err = c.top(1, false, x); err != nil {
			return err
		}
	}
	args := []*netdef.Argument{netdef.ArgInt("axis", int64(lossAxis))}
	if scale != 1 {
		args = append(args, netdef.ArgFloat("scale", scale))
	}
	c.op("SoftmaxWithLoss", []string{t, labels}, []string{prob, loss}, args...)
	if len(c.l.Top) == 2 && perm != nil {
		p, err := c.top(1, false, x)
		if err != nil {
			return err
		}
		c.op("Transpose", []string{prob}, []string{p}, netdef.ArgInts("axes", int64s(inverse(perm))...))
	}
	return nil
}

func (c *converter) accuracy() error {
	if err := c.counts(2, 2, 1, 1); err != nil {
		if len(c.l.Top) == 2 {
			return fmt.Errorf("a second top (per-class accuracies) is %w", ErrUnsupported)
		}
		return err
	}
	xn, x, err := c.bottom(0)
	if err != nil {
		return err
	}
	ln, l, err := c.bottom(1)
	if err != nil {
		return err
	}
	p := orEmpty(c.l.GetAccuracyParam())
	if p.IgnoreLabel != nil {
		return fmt.Errorf("accuracy_param ignore_label is %w", ErrUnsupported)
	}
	axis, err := c.axisAndInner(x, p.GetAxis(), "accuracy_param axis")
	if err != nil {
		return err
	}
	outer, inner := count(x, 0, axis), count(x, axis+1, len(x))
	rows := -1
	if outer >= 0 {
		rows = outer * inner
	}
	labels, err := c.flatLabels(ln, l, rows)
	if err != nil {
		return err
	}
	// Accuracy takes [rows, classes]: [outer…, classes, 1…] flattened at
	// axis, or [outer…, inner…, classes] (the classes moved last) at the
	// last axis.
	t, ts, perm := c.lastAxis(xn, x, axis, "t")
	cut := axis
	if perm != nil {
		cut = len(ts) - 1
	}
	if len(ts) != 2 || cut != 1 {
		flat := c.temp("flat", []int{rows, x[axis]})
		c.op("Flatten", []string{t}, []string{flat}, netdef.ArgInt("axis", int64(cut)))
		t = flat
	}
	y, err := c.top(0, false, []int{})
	if err != nil {
		return err
	}
	var args []*netdef.Argument
	if k := p.GetTopK(); k != 1 {
		args = append(args, netdef.ArgInt("top_k", int64(k)))
	}
	c.op("Accuracy", []string{t, labels}, []string{y}, args...)
	return nil
}

func (c *converter) flatten() error {
	if err := c.counts(1, 1, 1, 1); err != nil {
		return err
	}
	xn, x, err := c.bottom(0)
	if err != nil {
		return err
	}
	p := orEmpty(c.l.GetFlattenParam())
	r := -1
	if x != nil {
		r = len(x)
	}
	start, err := canonicalAxis(p.GetAxis(), r, "flatten_param axis")
	if err != nil {
		return err
	}
	if r < 0 {
		if p.GetEndAxis() != -1 {
			return fmt.Errorf("flatten_param end_axis %d needs the shape of bottom %q, which is unknown: give the net's input shape with InputShape", p.GetEndAxis(), c.l.Bottom[0])
		}
		// [d0 … d(start-1), the rest]: zeros copy the leading dimensions.
		y, err := c.top(0, true, append(unknownDims(start), -1))
		if err != nil {
			return err
		}
		c.op("Reshape", []string{xn}, []string{y, c.temp("old_shape", nil)}, netdef.ArgInts("shape", append(make([]int64, start), -1)...))
		return nil
	}
	end, err := canonicalAxis(p.GetEndAxis(), r, "flatten_param end_axis")
	if err != nil {
		return err
	}
	if end < start {
		return fmt.Errorf("flatten_param end_axis %d comes before axis %d", end, start)
	}
	shape := append(append(slices.Clone(x[:start]), count(x, start, end+1)), x[end+1:]...)
	target := make([]int64, 0, len(shape))
	for range start {
		target = append(target, 0)
	}
	target = append(target, -1)
	for _, d := range x[end+1:] {
		if d < 0 {
			return fmt.Errorf("needs the axes after end_axis %d of bottom %q, whose shape is %s: give the net's input shape with InputShape", end, c.l.Bottom[0], shapeString(x))
		}
		target = append(target, int64(d))
	}
	y, err := c.top(0, true, shape)
	if err != nil {
		return err
	}
	c.op("Reshape", []string{xn}, []string{y, c.temp("old_shape", nil)}, netdef.ArgInts("shape", target...))
	return nil
}

func (c *converter) reshape() error {
	if err := c.counts(1, 1, 1, 1); err != nil {
		return err
	}
	xn, x, err := c.bottom(0)
	if err != nil {
		return err
	}
	p := orEmpty(c.l.GetReshapeParam())
	if p.GetShape() == nil {
		return fmt.Errorf("reshape_param has no shape")
	}
	dims := p.GetShape().GetDim()
	inferred := 0
	for _, d := range dims {
		switch {
		case d == -1:
			inferred++
		case d < -1:
			return fmt.Errorf("reshape_param shape %v has dimension %d", dims, d)
		}
	}
	if inferred > 1 {
		return fmt.Errorf("reshape_param shape %v infers more than one dimension", dims)
	}
	r := -1
	if x != nil {
		r = len(x)
	}
	// Caffe: axis in [-(r+1), r]; a negative one counts from past the end.
	axis := int(p.GetAxis())
	if axis < 0 {
		if r < 0 {
			return fmt.Errorf("reshape_param axis %d needs the rank of bottom %q, which is unknown: give the net's input shape with InputShape", axis, c.l.Bottom[0])
		}
		axis += r + 1
	}
	if axis < 0 || (r >= 0 && axis > r) {
		return fmt.Errorf("reshape_param axis %d is out of range for bottom of shape %s", p.GetAxis(), shapeString(x))
	}
	n := int(p.GetNumAxes())
	if n < -1 || n > maxAxes {
		return fmt.Errorf("reshape_param num_axes %d must be -1 to %d", n, maxAxes)
	}
	if axis > maxAxes || len(dims) > maxAxes {
		return fmt.Errorf("reshape_param axis %d and shape %v make more than Caffe's %d axes", p.GetAxis(), dims, maxAxes)
	}
	var end int
	switch {
	case n == -1 && r >= 0:
		end = r
	case n == -1:
		end = -1
	default:
		end = axis + n
		if r >= 0 && end > r {
			return fmt.Errorf("reshape_param axis %d and num_axes %d go past bottom of shape %s", axis, n, shapeString(x))
		}
	}
	target := make([]int64, axis) // leading zeros copy dimensions
	for _, d := range dims {
		target = append(target, d)
	}
	if end >= 0 && r >= 0 {
		for j, d := range x[end:] {
			switch {
			case len(dims) == end-axis:
				target = append(target, 0) // same index: copied
			case d >= 0:
				target = append(target, int64(d))
			default:
				return fmt.Errorf("needs the dimension %d of bottom %q, whose shape is %s: give the net's input shape with InputShape", end+j, c.l.Bottom[0], shapeString(x))
			}
		}
	} else if end >= 0 {
		return fmt.Errorf("reshape_param num_axes %d needs the rank of bottom %q, which is unknown: give the net's input shape with InputShape", n, c.l.Bottom[0])
	}
	// The output shape, where the input's is known.
	var shape []int
	if x != nil {
		shape = make([]int, len(target))
		inferAt, prod := -1, 1
		for i, d := range target {
			switch {
			case d == 0:
				if i >= len(x) {
					return fmt.Errorf("reshape_param shape %v copies dimension %d of bottom of shape %s", dims, i, shapeString(x))
				}
				shape[i] = x[i]
			case d == -1:
				inferAt = i
				continue
			default:
				shape[i] = int(d)
			}
			if prod >= 0 && shape[i] >= 0 {
				prod *= shape[i]
			} else {
				prod = -1
			}
		}
		total := count(x, 0, len(x))
		if inferAt >= 0 {
			shape[inferAt] = -1
			if total >= 0 && prod > 0 {
				if total%prod != 0 {
					return fmt.Errorf("reshape_param shape %v does not divide bottom of shape %s", dims, shapeString(x))
				}
				shape[inferAt] = total / prod
			}
		} else if total >= 0 && prod >= 0 && total != prod {
			return fmt.Errorf("reshape_param shape %v gives %d elements, bottom of shape %s has %d", dims, prod, shapeString(x), total)
		}
	}
	y, err := c.top(0, true, shape)
	if err != nil {
		return err
	}
	c.op("Reshape", []string{xn}, []string{y, c.temp("old_shape", nil)}, netdef.ArgInts("shape", target...))
	return nil
}

func (c *converter) slice() error {
	if err := c.counts(1, 1, 1, -1); err != nil {
		return err
	}
	xn, x, err := c.bottom(0)
	if err != nil {
		return err
	}
	p := orEmpty(c.l.GetSliceParam())
	r := -1
	if x != nil {
		r = len(x)
	}
	var axis int
	switch {
	case p.Axis != nil && p.SliceDim != nil:
		return fmt.Errorf("has both axis and slice_dim")
	case p.SliceDim != nil:
		axis = int(p.GetSliceDim())
		if r >= 0 && axis >= r {
			return fmt.Errorf("slice_dim %d is out of range for bottom of shape %s", axis, shapeString(x))
		}
	default:
		if axis, err = canonicalAxis(p.GetAxis(), r, "slice_param axis"); err != nil {
			return err
		}
	}
	tops := len(c.l.Top)
	dim := -1
	if r >= 0 {
		dim = x[axis]
	}
	var sizes []int
	if points := p.GetSlicePoint(); len(points) > 0 {
		if len(points) != tops-1 {
			return fmt.Errorf("has %d slice_point for %d tops (want %d)", len(points), tops, tops-1)
		}
		if dim < 0 {
			return fmt.Errorf("slice_point needs the size of axis %d of bottom %q, whose shape is %s: give the net's input shape with InputShape", axis, c.l.Bottom[0], shapeString(x))
		}
		prev := 0
		for _, pt := range points {
			if int(pt) <= prev || int(pt) >= dim {
				return fmt.Errorf("slice_point %v must increase from above 0 to below %d, the size of axis %d", points, dim, axis)
			}
			sizes = append(sizes, int(pt)-prev)
			prev = int(pt)
		}
		sizes = append(sizes, dim-prev)
	} else if dim >= 0 {
		if dim%tops != 0 {
			return fmt.Errorf("axis %d of size %d does not split into %d equal tops", axis, dim, tops)
		}
		for range tops {
			sizes = append(sizes, dim/tops)
		}
	}
	var outs []string
	for i := range tops {
		var shape []int
		if x != nil {
			shape = slices.Clone(x)
			shape[axis] = -1
			if sizes != nil {
				shape[axis] = sizes[i]
			}
		}
		y, err := c.top(i, false, shape)
		if err != nil {
			return err
		}
		outs = append(outs, y)
	}
	if tops == 1 {
		c.op("Copy", []string{xn}, outs)
		return nil
	}
	args := []*netdef.Argument{netdef.ArgInt("axis", int64(axis))}
	if len(p.GetSlicePoint()) > 0 {
		args = append(args, netdef.ArgInts("split", int64s(sizes)...))
	}
	c.op("Split", []string{xn}, outs, args...)
	return nil
}

func (c *converter) split() error {
	if err := c.counts(1, 1, 1, -1); err != nil {
		return err
	}
	xn, x, err := c.bottom(0)
	if err != nil {
		return err
	}
	for i, t := range c.l.Top {
		if t == c.l.Bottom[0] {
			// The top is the bottom's blob itself.
			c.rec.Tops = append(c.rec.Tops, t)
			c.rec.Blobs = append(c.rec.Blobs, xn)
			c.consumed[t] = false
			continue
		}
		y, err := c.top(i, false, x)
		if err != nil {
			return err
		}
		c.op("Copy", []string{xn}, []string{y})
	}
	return nil
}

// power translates Power, y = (shift + scale·x)^power, with Caffe's
// special cases: no operation for a term that does nothing, and a constant
// when power or scale is 0.
func (c *converter) power() error {
	if err := c.counts(1, 1, 1, 1); err != nil {
		return err
	}
	xn, x, err := c.bottom(0)
	if err != nil {
		return err
	}
	p := orEmpty(c.l.GetPowerParam())
	pw, sc, sh := p.GetPower(), p.GetScale(), p.GetShift()
	if pw == 0 || sc == 0 {
		v := float32(1)
		if pw != 0 {
			v = float32(math.Pow(float64(sh), float64(pw)))
		}
		y, err := c.top(0, true, x)
		if err != nil {
			return err
		}
		c.op("ConstantFill", []string{xn}, []string{y}, netdef.ArgFloat("value", v))
		return nil
	}
	if pw == 1 && sc == 1 && sh == 0 {
		if c.l.Top[0] == c.l.Bottom[0] {
			_, err := c.top(0, true, x)
			return err
		}
		y, err := c.top(0, false, x)
		if err != nil {
			return err
		}
		c.op("Copy", []string{xn}, []string{y})
		return nil
	}
	y, err := c.top(0, true, x)
	if err != nil {
		return err
	}
	in := xn
	if sc != 1 {
		c.op("Scale", []string{in}, []string{y}, netdef.ArgFloat("scale", sc))
		in = y
	}
	if sh != 0 {
		c.op("Add", []string{in, c.constant("shift", sh, 1)}, []string{y})
		in = y
	}
	if pw != 1 {
		c.op("Pow", []string{in}, []string{y}, netdef.ArgFloat("exponent", pw))
	}
	return nil
}
