package brew

import "github.com/caffe2go/caffe2go/netdef"

// Relu adds Relu(in) → out, Caffe2's brew.relu: the operator gets argument
// order (default "NCHW") and the other options. in and out may be the same
// blob (in place). It returns the output's full name; an empty out gets an
// automatic name.
func Relu(m *Model, in, out string, opts ...Option) string {
	return m.unary(HelperRelu, "Relu", "Relu", in, out, true, opts)
}

// LeakyRelu adds LeakyRelu(in) → out with argument order and the other
// options (the slope is argument alpha, default 0.01). Caffe2 has no brew
// helper for it; this one follows Relu.
func LeakyRelu(m *Model, in, out string, opts ...Option) string {
	return m.unary(HelperLeakyRelu, "LeakyRelu", "LeakyRelu", in, out, true, opts)
}

// Tanh adds Tanh(in) → out, Caffe2's brew.tanh, with argument order and
// the other options.
func Tanh(m *Model, in, out string, opts ...Option) string {
	return m.unary(HelperTanh, "Tanh", "Tanh", in, out, true, opts)
}

// Sigmoid adds Sigmoid(in) → out with argument order and the other
// options. Caffe2 has no brew helper for it; this one follows Tanh.
func Sigmoid(m *Model, in, out string, opts ...Option) string {
	return m.unary(HelperSigmoid, "Sigmoid", "Sigmoid", in, out, true, opts)
}

// Softmax adds Softmax(in) → out, Caffe2's brew.softmax; the options
// become the operator's arguments (for example Axis). An empty out gets
// the name NextName("Softmax"), as in Caffe2.
func Softmax(m *Model, in, out string, opts ...Option) string {
	return m.unary(HelperSoftmax, "Softmax", "Softmax", in, out, false, opts)
}

// PRelu adds a parametric Relu, Caffe2's brew.prelu: a slope parameter
// out+"_slope" of shape [numChannels] (ConstantFill 0.25; SlopeInit
// replaces it), then PRelu([in, slope]) → out. Caffe2 calls it with
// num_channels=1 by default: one slope shared by all channels.
func PRelu(m *Model, in, out string, numChannels int, opts ...Option) string {
	return sticky(m, func() (string, error) {
		c, err := m.begin(HelperPRelu, "PRelu", out, "PRelu", opts)
		if err != nil {
			return "", err
		}
		if err := c.positive([]string{"num_channels"}, numChannels); err != nil {
			return "", err
		}
		x, err := c.input(in)
		if err != nil {
			return "", err
		}
		slope, err := c.param("_slope", []int64{int64(numChannels)}, keySlopeInit,
			Init("ConstantFill", netdef.ArgFloat("value", 0.25)))
		if err != nil {
			return "", err
		}
		c.emit(m.Net, "PRelu", []string{x, slope}, []string{c.out}, c.rest())
		return c.out, nil
	})
}

// SoftmaxWithLoss adds SoftmaxWithLoss([logits, labels]) → [softmax, loss]
// with the options as arguments (for example scale or label_prob), and
// returns the two output names ("" and "" after an error, see Model.Err).
// Caffe2 has no brew helper for it (users call model.SoftmaxWithLoss);
// this one resolves names like the others. Empty output names get
// automatic ones.
func SoftmaxWithLoss(m *Model, logits, labels, softmax, loss string, opts ...Option) (softmaxOut, lossOut string) {
	outs := sticky(m, func() ([2]string, error) {
		if softmax == "" {
			softmax = m.Net.NextName("SoftmaxWithLoss", 0)
		}
		if loss == "" {
			loss = m.Net.NextName("SoftmaxWithLoss", 1)
		}
		c, err := m.begin(HelperSoftmaxWithLoss, "SoftmaxWithLoss", softmax, "", opts)
		if err != nil {
			return [2]string{}, err
		}
		ins, err := c.inputs([]string{logits, labels})
		if err != nil {
			return [2]string{}, err
		}
		l := c.output(loss)
		c.emit(m.Net, "SoftmaxWithLoss", ins, []string{c.out, l}, c.rest())
		return [2]string{c.out, l}, nil
	})
	return outs[0], outs[1]
}

// LabelCrossEntropy adds LabelCrossEntropy([predictions, labels]) → out:
// the cross entropy −log(predictions[i, labels[i]]) of each example, from
// probabilities (a Softmax's output) and int32 class labels. The options
// become the operator's arguments. Caffe2 has no brew helper for it (users
// call model.LabelCrossEntropy); an empty out gets the name
// NextName("LabelCrossEntropy").
func LabelCrossEntropy(m *Model, predictions, labels, out string, opts ...Option) string {
	return sticky(m, func() (string, error) {
		c, err := m.begin(HelperLabelCrossEntropy, "LabelCrossEntropy", out, "LabelCrossEntropy", opts)
		if err != nil {
			return "", err
		}
		ins, err := c.inputs([]string{predictions, labels})
		if err != nil {
			return "", err
		}
		c.emit(m.Net, "LabelCrossEntropy", ins, []string{c.out}, c.rest())
		return c.out, nil
	})
}

// AveragedLoss adds AveragedLoss(in) → out, the mean of in's elements as a
// scalar loss, with the options as arguments. Caffe2 has no brew helper
// for it (users call model.AveragedLoss); an empty out gets the name
// NextName("AveragedLoss").
func AveragedLoss(m *Model, in, out string, opts ...Option) string {
	return m.unary(HelperAveragedLoss, "AveragedLoss", "AveragedLoss", in, out, false, opts)
}
