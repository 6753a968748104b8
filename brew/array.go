package brew

// Concat adds Concat(ins) → [out, "_"+out+"_concat_dims"], Caffe2's
// brew.concat, with the options as arguments. When an axis is given the
// order argument is dropped (the operator derives the axis from order
// only when there is no axis).
func Concat(m *Model, ins []string, out string, opts ...Option) string {
	return m.concat(HelperConcat, "Concat", ins, out, opts)
}

// DepthConcat is Caffe2's deprecated brew.depth_concat: Concat under its
// own helper name (so arg scopes can tell them apart).
func DepthConcat(m *Model, ins []string, out string, opts ...Option) string {
	return m.concat(HelperDepthConcat, "DepthConcat", ins, out, opts)
}

func (m *Model) concat(h Helper, name string, ins []string, out string, opts []Option) string {
	return sticky(m, func() (string, error) {
		c, err := m.begin(h, name, out, "Concat", opts)
		if err != nil {
			return "", err
		}
		xs, err := c.inputs(ins)
		if err != nil {
			return "", err
		}
		if c.kw.Arg("axis") != nil {
			c.kw.pop("order")
		}
		c.emit(m.Net, "Concat", xs, []string{c.out, c.derived("_", "_concat_dims")}, c.rest())
		return c.out, nil
	})
}

// Sum adds Sum(ins) → out, Caffe2's brew.sum, with the options as
// arguments. out may be one of the inputs (in place).
func Sum(m *Model, ins []string, out string, opts ...Option) string {
	return sticky(m, func() (string, error) {
		c, err := m.begin(HelperSum, "Sum", out, "Sum", opts)
		if err != nil {
			return "", err
		}
		xs, err := c.inputs(ins)
		if err != nil {
			return "", err
		}
		c.emit(m.Net, "Sum", xs, []string{c.out}, c.rest())
		return c.out, nil
	})
}

// Transpose adds Transpose(in) → out, Caffe2's brew.transpose, with the
// options as arguments (axes; by default the dimensions are reversed).
func Transpose(m *Model, in, out string, opts ...Option) string {
	return m.unary(HelperTranspose, "Transpose", "Transpose", in, out, false, opts)
}
