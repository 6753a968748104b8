package brew

// MaxPool adds MaxPool(in) → out, Caffe2's brew.max_pool: the operator
// gets argument order (default "NCHW") and the other options, typically
// Kernel (or KernelHW), Stride and Pad, or
// Arg(netdef.ArgBool("global_pooling", true)). It returns the output's
// full name; an empty out gets an automatic name.
func MaxPool(m *Model, in, out string, opts ...Option) string {
	return m.unary(HelperMaxPool, "MaxPool", "MaxPool", in, out, true, opts)
}

// AveragePool adds AveragePool(in) → out, Caffe2's brew.average_pool,
// with arguments as MaxPool.
func AveragePool(m *Model, in, out string, opts ...Option) string {
	return m.unary(HelperAveragePool, "AveragePool", "AveragePool", in, out, true, opts)
}
