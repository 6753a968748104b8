package brew

import "github.com/caffe2go/caffe2go/netdef"

// SpatialBN adds spatial batch normalization over dimIn channels, Caffe2's
// brew.spatial_bn. It creates four parameters of shape [dimIn]: the scale
// out+"_s" (ConstantFill init_scale, default 1, tagged Weight), the bias
// out+"_b" (ConstantFill init_bias, default 0, tagged Bias), the running
// mean out+"_rm" (ConstantFill 0) and the running inverse variance
// out+"_riv" (ConstantFill 1), both tagged ComputedParam. ScaleInit,
// BiasInit, RunningMeanInit and RunningVarInit replace the initializers;
// Arg(netdef.ArgFloat("init_scale", v)) and "init_bias" set the constants.
//
// For training (IsTest absent or false) it emits
// SpatialBN([in, s, b, rm, riv]) → [out, rm, riv, out+"_sm", out+"_siv"];
// with IsTest(true), SpatialBN([in, s, b, rm, riv]) → out. The operator
// gets argument order (default "NCHW") and the other options (is_test,
// epsilon, momentum, …).
func SpatialBN(m *Model, in, out string, dimIn int, opts ...Option) string {
	return sticky(m, func() (string, error) {
		c, err := m.begin(HelperSpatialBN, "SpatialBN", out, "", opts)
		if err != nil {
			return "", err
		}
		if err := c.positive([]string{"dim_in"}, dimIn); err != nil {
			return "", err
		}
		x, err := c.input(in)
		if err != nil {
			return "", err
		}
		_, orderArg, err := c.order()
		if err != nil {
			return "", err
		}
		initScale, err := c.kw.popFloat("init_scale", 1)
		if err != nil {
			return "", c.errorf("%v", err)
		}
		initBias, err := c.kw.popFloat("init_bias", 0)
		if err != nil {
			return "", c.errorf("%v", err)
		}
		isTest := c.kw.Arg("is_test")
		test := isTest.GetI() != 0 || isTest.GetF() != 0
		shape := []int64{int64(dimIn)}
		constant := func(v float32) Initializer { return Init("ConstantFill", netdef.ArgFloat("value", v)) }
		params := []struct {
			suffix, key string
			init        Initializer
			tag         Tag
		}{
			{"_s", keyScaleInit, constant(initScale), Weight},
			{"_b", keyBiasInit, constant(initBias), Bias},
			{"_rm", keyRunningMeanInit, constant(0), ComputedParam},
			{"_riv", keyRunningVarInit, constant(1), ComputedParam},
		}
		ins := []string{x}
		for _, p := range params {
			name, err := c.param(p.suffix, shape, p.key, p.init, p.tag)
			if err != nil {
				return "", err
			}
			ins = append(ins, name)
		}
		outs := []string{c.out}
		if !test {
			outs = append(outs, ins[3], ins[4], c.out+"_sm", c.out+"_siv")
		}
		c.emit(m.Net, "SpatialBN", ins, outs, append([]*netdef.Argument{orderArg}, c.rest()...))
		return c.out, nil
	})
}

// LRN adds local response normalization, Caffe2's brew.lrn:
// LRN(in) → [out, "_"+out+"_scale"] with argument order (default "NCHW")
// and the other options (size, alpha, beta, bias).
func LRN(m *Model, in, out string, opts ...Option) string {
	return sticky(m, func() (string, error) {
		c, err := m.begin(HelperLRN, "LRN", out, "LRN", opts)
		if err != nil {
			return "", err
		}
		x, err := c.input(in)
		if err != nil {
			return "", err
		}
		_, orderArg, err := c.order()
		if err != nil {
			return "", err
		}
		c.emit(m.Net, "LRN", []string{x}, []string{c.out, c.derived("_", "_scale")},
			append([]*netdef.Argument{orderArg}, c.rest()...))
		return c.out, nil
	})
}

// Dropout adds Dropout(in) → [out, "_"+out+"_mask"], Caffe2's
// brew.dropout, with engine "DEFAULT" (unless Engine says otherwise) and
// the options as arguments (ratio, default 0.5). IsTest is required, as
// in Caffe2: IsTest(false) for a train net, IsTest(true) for a test net.
// in and out may be the same blob.
func Dropout(m *Model, in, out string, opts ...Option) string {
	return sticky(m, func() (string, error) {
		c, err := m.begin(HelperDropout, "Dropout", out, "Dropout", opts)
		if err != nil {
			return "", err
		}
		if c.kw.Arg("is_test") == nil {
			return "", c.errorf("argument is_test is required: give IsTest(false) for training or IsTest(true) for testing")
		}
		x, err := c.input(in)
		if err != nil {
			return "", err
		}
		if c.engine == "" {
			c.engine = "DEFAULT"
		}
		c.emit(m.Net, "Dropout", []string{x}, []string{c.out, c.derived("_", "_mask")}, c.rest())
		return c.out, nil
	})
}
