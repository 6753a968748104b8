package brew

// FC adds a fully connected layer, Caffe2's brew.fc: parameters
// out+"_w" of shape [dimOut, dimIn] (XavierFill, tagged Weight) and
// out+"_b" of shape [dimOut] (ConstantFill 0, tagged Bias), then
// FC([in, w, b]) → out. WeightInit and BiasInit replace the
// initializers; every other option becomes an argument of the FC operator
// (for example Axis). It returns the output's full name; an empty out gets
// an automatic name.
func FC(m *Model, in, out string, dimIn, dimOut int, opts ...Option) string {
	return sticky(m, func() (string, error) {
		c, err := m.begin(HelperFC, "FC", out, "", opts)
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
		w, err := c.param("_w", []int64{int64(dimOut), int64(dimIn)}, keyWeightInit, Init("XavierFill"), Weight)
		if err != nil {
			return "", err
		}
		b, err := c.param("_b", []int64{int64(dimOut)}, keyBiasInit, Init("ConstantFill"), Bias)
		if err != nil {
			return "", err
		}
		c.emit(m.Net, "FC", []string{x, w, b}, []string{c.out}, c.rest())
		return c.out, nil
	})
}
