package norm

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// largeCase is an operator on inputs large enough to be split over worker
// goroutines. spatial marks the NCHW inputs and outputs that an NHWC run
// transposes.
type largeCase struct {
	name       string
	def        *netdef.OperatorDef
	inputs     []*blob.Tensor
	spatialIn  []bool
	spatialOut []bool
	nhwc       bool
}

func largeCases() []largeCase {
	r := newRand(11)
	x := func(lo, hi float64, shape ...int) *blob.Tensor { return randT(r, blob.Float32, lo, hi, shape...) }
	big := []int{8, 16, 32, 32} // 2¹⁷ elements: 4 parts of minPartWork
	X, dY := x(-1, 3, big...), x(-1, 1, big...)
	c := func(lo, hi float64) *blob.Tensor { return x(lo, hi, 16) }
	scale, bias, rm, rv := c(0.5, 1.5), c(-1, 1), c(-1, 1), c(0.5, 2)
	yes, no := true, false
	return []largeCase{
		{"SpatialBN", op("SpatialBN", []string{"X", "s", "b", "rm", "rv"}, []string{"Y", "rm", "rv", "sm", "siv"}),
			[]*blob.Tensor{X, scale, bias, rm, rv}, []bool{yes, no, no, no, no}, []bool{yes, no, no, no, no}, true},
		{"SpatialBN test", op("SpatialBN", []string{"X", "s", "b", "rm", "rv"}, []string{"Y"}, argInt("is_test", 1)),
			[]*blob.Tensor{X, scale, bias, rm, rv}, []bool{yes, no, no, no, no}, []bool{yes}, true},
		{"SpatialBNGradient", op("SpatialBNGradient", []string{"X", "s", "dY", "sm", "siv"}, []string{"dX", "ds", "db"}),
			[]*blob.Tensor{X, scale, dY, c(0.5, 1.5), c(0.5, 1.5)}, []bool{yes, no, yes, no, no}, []bool{yes, no, no}, true},
		{"ChannelStats", op("ChannelStats", []string{"X"}, []string{"sum", "sumsq"}),
			[]*blob.Tensor{X}, []bool{yes}, []bool{no, no}, true},
		{"ChannelBackpropStats", op("ChannelBackpropStats", []string{"X", "m", "r", "dY"}, []string{"ds", "db"}),
			[]*blob.Tensor{X, rm, rv, dY}, []bool{yes, no, no, yes}, []bool{no, no}, true},
		{"InstanceNorm", op("InstanceNorm", []string{"X", "s", "b"}, []string{"Y", "m", "r"}),
			[]*blob.Tensor{X, scale, bias}, []bool{yes, no, no}, []bool{yes, no, no}, true},
		{"InstanceNormGradient", op("InstanceNormGradient", []string{"X", "s", "b", "dY"}, []string{"dX", "ds", "db"}),
			[]*blob.Tensor{X, scale, bias, dY}, []bool{yes, no, no, yes}, []bool{yes, no, no}, true},
		{"GroupNorm", op("GroupNorm", []string{"X", "g", "b"}, []string{"Y", "m", "r"}, argInt("group", 4)),
			[]*blob.Tensor{X, scale, bias}, []bool{yes, no, no}, []bool{yes, no, no}, true},
		{"GroupNormGradient", op("GroupNormGradient", []string{"dY", "X", "g", "b", "m", "r"}, []string{"dX", "dg", "db"}, argInt("group", 4)),
			[]*blob.Tensor{dY, X, scale, bias, x(0, 1, 8, 4), x(0.5, 1.5, 8, 4)}, []bool{yes, yes, no, no, no, no}, []bool{yes, no, no}, true},
		{"LRN", op("LRN", []string{"X"}, []string{"Y", "scale"}, argInt("size", 5), argFloat("alpha", 0.1), argFloat("beta", 0.75)),
			[]*blob.Tensor{X}, []bool{yes}, []bool{yes, yes}, true},
		{"LRNGradient", op("LRNGradient", []string{"X", "Y", "dY"}, []string{"dX"}, argInt("size", 4), argFloat("alpha", 0.1), argFloat("beta", 0.75)),
			[]*blob.Tensor{X, x(-1, 1, big...), dY}, []bool{yes, yes, yes}, []bool{yes}, true},
		{"LayerNorm", op("LayerNorm", []string{"X", "g", "b"}, []string{"Y", "m", "sd"}, argInt("axis", 2), argInt("elementwise_affine", 1)),
			[]*blob.Tensor{X, x(0.5, 1.5, 32, 32), x(-1, 1, 32, 32)}, nil, nil, false},
		{"LayerNormGradient", op("LayerNormGradient", []string{"dY", "Y", "m", "sd", "X", "g"}, []string{"dX", "dg", "db"}, argInt("elementwise_affine", 1)),
			[]*blob.Tensor{dY, X, x(-1, 1, 8, 1), x(0.5, 2, 8, 1), X, x(0.5, 1.5, 16, 32, 32)}, nil, nil, false},
	}
}

// TestParallelAndOrders runs each operator on large inputs with one
// goroutine and with four, in NCHW and in NHWC order, and requires the same
// results: the work split (including NHWC partial sums) and the layouts
// must not change what is computed.
func TestParallelAndOrders(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, c := range largeCases() {
		t.Run(c.name, func(t *testing.T) {
			runtime.GOMAXPROCS(1)
			ref := optest.MustRunOp(t, c.def, c.inputs...)
			orders := []string{"NCHW"}
			if c.nhwc {
				orders = append(orders, "NHWC")
			}
			for _, procs := range []int{1, 4} {
				for _, order := range orders {
					runtime.GOMAXPROCS(procs)
					def := op(c.def.GetType(), c.def.Input, c.def.Output, append([]*netdef.Argument{argStr("order", order)}, c.def.Arg...)...)
					in := make([]*blob.Tensor, len(c.inputs))
					for i, x := range c.inputs {
						in[i] = x
						if order == "NHWC" && c.spatialIn[i] {
							in[i] = toNHWC(x)
						}
					}
					got := optest.MustRunOp(t, def, in...)
					for i, g := range got {
						if order == "NHWC" && c.spatialOut[i] {
							g = toNCHW(g)
						}
						expectTensor(t, fmt.Sprintf("%s %d procs output %d", order, procs, i), g, ref[i], 1e-5)
					}
				}
			}
		})
	}
}
