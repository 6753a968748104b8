package brew

import (
	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
)

// Iter adds an iteration counter, Caffe2's brew.iter: the init net gets
// ConstantFill([], out, shape=[1], value=0, dtype=INT64) on the CPU and
// the net Iter(out) → out, which increments it on every run. The options
// become arguments of both operators. It returns the counter's full name.
func Iter(m *Model, out string, opts ...Option) string {
	return sticky(m, func() (string, error) {
		c, err := m.begin(HelperIter, "Iter", out, "Iter", opts)
		if err != nil {
			return "", err
		}
		rest := c.rest()
		initArgs := append([]*netdef.Argument{
			netdef.ArgInts("shape", 1),
			netdef.ArgInt("value", 0),
			netdef.ArgInt("dtype", int64(netdef.TensorProto_INT64)),
		}, c.kw.Args()...)
		fill := c.scope.WithDevice(devicescope.CPU()).WithNameReset("").
			Op(m.InitNet, "ConstantFill", nil, []string{c.out}, initArgs...)
		if c.engine != "" {
			fill.Engine = &c.engine
		}
		c.emit(m.Net, "Iter", []string{c.out}, []string{c.out}, rest)
		return c.out, nil
	})
}

// Accuracy adds Accuracy([predictions, labels]) → out, Caffe2's
// brew.accuracy, with the options as arguments (top_k, default 1).
func Accuracy(m *Model, predictions, labels, out string, opts ...Option) string {
	return sticky(m, func() (string, error) {
		c, err := m.begin(HelperAccuracy, "Accuracy", out, "Accuracy", opts)
		if err != nil {
			return "", err
		}
		ins, err := c.inputs([]string{predictions, labels})
		if err != nil {
			return "", err
		}
		c.emit(m.Net, "Accuracy", ins, []string{c.out}, c.rest())
		return c.out, nil
	})
}
