package brew

import "github.com/caffe2go/caffe2go/netdef"

// Conv adds a 2-D convolution, Caffe2's brew.conv: a filter out+"_w"
// (XavierFill, tagged Weight) of shape [dimOut, dimIn/group, kh, kw] in
// NCHW order or [dimOut, kh, kw, dimIn/group] in NHWC order, a bias
// out+"_b" of shape [dimOut] (ConstantFill 0, tagged Bias) unless NoBias
// is given, then Conv([in, w(, b)]) → out with arguments kernel (or
// kernel_h and kernel_w), order, the remaining options (Stride, Pad, …)
// and group when it is not 1.
//
// kernel is the square kernel size; a Kernel or KernelHW option replaces
// it (kernel may then be 0). Group, Order, NoBias, WeightInit and
// BiasInit are read by the helper. dimIn must be divisible by the group.
// It returns the output's full name; an empty out gets an automatic name.
func Conv(m *Model, in, out string, dimIn, dimOut, kernel int, opts ...Option) string {
	return m.convLike(HelperConv, "Conv", in, out, dimIn, dimOut, kernel, opts)
}

// ConvTranspose adds a 2-D transposed convolution, Caffe2's
// brew.conv_transpose: a filter out+"_w" of shape [dimIn, dimOut, kh, kw]
// in NCHW order or [dimIn, kh, kw, dimOut] in NHWC order (XavierFill,
// tagged Weight), a bias out+"_b" of shape [dimOut] (ConstantFill 0,
// tagged Bias) unless NoBias is given, then ConvTranspose([in, w(, b)]) →
// out with arguments kernel (or kernel_h and kernel_w), order and the
// remaining options (Stride, Pad, adj, …). Options are read as by Conv,
// except that group is passed through to the operator.
func ConvTranspose(m *Model, in, out string, dimIn, dimOut, kernel int, opts ...Option) string {
	return m.convLike(HelperConvTranspose, "ConvTranspose", in, out, dimIn, dimOut, kernel, opts)
}

func (m *Model) convLike(h Helper, typ, in, out string, dimIn, dimOut, kernel int, opts []Option) string {
	return sticky(m, func() (string, error) {
		c, err := m.begin(h, typ, out, "", opts)
		if err != nil {
			return "", err
		}
		if err := c.positive([]string{"dim_in", "dim_out"}, dimIn, dimOut); err != nil {
			return "", err
		}
		x, err := c.input(in)
		if err != nil {
			return "", err
		}
		kh, kw, kernelArgs, err := c.kernel(kernel)
		if err != nil {
			return "", err
		}
		order, orderArg, err := c.order()
		if err != nil {
			return "", err
		}
		noBias := c.kw.pop("no_bias").GetI() != 0
		group := int64(1)
		if h == HelperConv {
			if group, err = c.kw.popInt("group", 1); err != nil {
				return "", c.errorf("%v", err)
			}
			if group < 1 || int64(dimIn)%group != 0 {
				return "", c.errorf("group must be a positive divisor of dim_in %d, got %d", dimIn, group)
			}
		}
		var shape []int64
		switch {
		case h == HelperConv && order == "NCHW":
			shape = []int64{int64(dimOut), int64(dimIn) / group, kh, kw}
		case h == HelperConv:
			shape = []int64{int64(dimOut), kh, kw, int64(dimIn) / group}
		case order == "NCHW":
			shape = []int64{int64(dimIn), int64(dimOut), kh, kw}
		default:
			shape = []int64{int64(dimIn), kh, kw, int64(dimOut)}
		}
		w, err := c.param("_w", shape, keyWeightInit, Init("XavierFill"), Weight)
		if err != nil {
			return "", err
		}
		ins := []string{x, w}
		if !noBias {
			b, err := c.param("_b", []int64{int64(dimOut)}, keyBiasInit, Init("ConstantFill"), Bias)
			if err != nil {
				return "", err
			}
			ins = append(ins, b)
		}
		args := append(append(kernelArgs, orderArg), c.rest()...)
		if group != 1 {
			args = append(args, netdef.ArgInt("group", group))
		}
		c.emit(m.Net, typ, ins, []string{c.out}, args)
		return c.out, nil
	})
}

// kernel removes the kernel options and returns the kernel size with the
// arguments to emit: kernel_h and kernel_w if given, else kernel if
// given, else the size k given as a parameter.
func (c *call) kernel(k int) (kh, kw int64, args []*netdef.Argument, err error) {
	h, w, sq := c.kw.pop("kernel_h"), c.kw.pop("kernel_w"), c.kw.pop("kernel")
	switch {
	case h != nil || w != nil:
		if h == nil || w == nil || h.I == nil || w.I == nil {
			return 0, 0, nil, c.errorf("kernel_h and kernel_w must both be integers")
		}
		kh, kw, args = h.GetI(), w.GetI(), []*netdef.Argument{h, w}
	case sq != nil:
		if sq.I == nil {
			return 0, 0, nil, c.errorf("kernel must be an integer, got %v", sq)
		}
		kh, kw, args = sq.GetI(), sq.GetI(), []*netdef.Argument{sq}
	default:
		kh, kw, args = int64(k), int64(k), []*netdef.Argument{netdef.ArgInt("kernel", int64(k))}
	}
	if kh <= 0 || kw <= 0 {
		return 0, 0, nil, c.errorf("kernel must be positive, got %d×%d", kh, kw)
	}
	return kh, kw, args, nil
}
