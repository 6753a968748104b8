package image

import (
	"github.com/caffe2go/caffe2go/operators"
)

var shuffleArgs = []operators.ArgSpec{
	{Name: "group", Default: int64(1), Doc: "number of channel groups G; the channel count must be a multiple of it"},
	orderArg,
}

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "ChannelShuffle", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		Args: shuffleArgs,
		Doc: "ChannelShuffle(X) → Y views the C = G·K channels of X (dimension 1 for NCHW, the last for NHWC, " +
			"rank ≥ 2) as a G×K matrix and transposes it: channel k·G + g of Y is channel g·K + k of X.",
	}, func(b *operators.Base) (operators.Operator, error) {
		return newShuffle(b, false)
	})
	operators.MustRegisterCPU(operators.Schema{
		Type: "ChannelShuffleGradient", MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		Args: shuffleArgs,
		Doc:  "ChannelShuffleGradient(dY) → dX undoes ChannelShuffle: channel g·K + k of dX is channel k·G + g of dY.",
	}, func(b *operators.Base) (operators.Operator, error) {
		return newShuffle(b, true)
	})
	operators.MustRegisterGradient("ChannelShuffle", func(g *operators.GradientContext) error {
		g.Op("ChannelShuffleGradient", []string{g.GO(0)}, []string{g.GI(0)})
		return nil
	})
}

// shuffleOp is ChannelShuffle, or ChannelShuffleGradient (inverse).
type shuffleOp struct {
	*operators.Base
	group   int
	nhwc    bool
	inverse bool
}

func newShuffle(b *operators.Base, inverse bool) (operators.Operator, error) {
	nhwc, err := channelsLast(b)
	if err != nil {
		return nil, err
	}
	g := b.ArgInt("group", 1)
	if g < 1 {
		return nil, b.Errorf("argument group is %d; it must be at least 1", g)
	}
	return &shuffleOp{Base: b, group: int(g), nhwc: nhwc, inverse: inverse}, nil
}

func (o *shuffleOp) Run() error {
	x, err := o.Input(0)
	if err != nil {
		return err
	}
	nd := x.NumDims()
	if nd < 2 {
		return o.Errorf("input 0 (%q) has shape %v; it must have at least 2 dimensions", o.InputName(0), x.Dims())
	}
	c := x.Dim(1)
	if o.nhwc {
		c = x.Dim(nd - 1)
	}
	if c%o.group != 0 {
		return o.Errorf("input 0 (%q) has shape %v: its %d channels are not a multiple of group %d", o.InputName(0), x.Dims(), c, o.group)
	}
	y := o.Output(0)
	if err := y.Init(x.DataType(), x.Dims()...); err != nil {
		return o.Errorf("output %q: %v", o.OutputName(0), err)
	}
	if x.Size() == 0 {
		return nil
	}
	rows, cols := o.group, c/o.group
	if o.inverse {
		rows, cols = cols, rows
	}
	if o.nhwc {
		transposeTensor(x, y, x.Size()/c, rows, cols, 1)
	} else {
		n := x.Dim(0)
		transposeTensor(x, y, n, rows, cols, x.Size()/(n*c))
	}
	return nil
}
