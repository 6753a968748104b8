package image

import (
	"fmt"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// TestNumericGradients checks every differentiable operator of the package
// against finite differences, one row per operator, configuration and
// input.
func TestNumericGradients(t *testing.T) {
	r := newRand(3)
	x := func(shape ...int) *blob.Tensor { return randF32(r, shape...) }
	// awayFromZero keeps PRelu's kink at 0 out of finite-difference reach.
	awayFromZero := func(shape ...int) *blob.Tensor {
		v := x(shape...)
		for i, f := range blob.Data[float32](v) {
			if f >= 0 {
				blob.Data[float32](v)[i] = f + 0.1
			} else {
				blob.Data[float32](v)[i] = f - 0.1
			}
		}
		return v
	}
	nhwc := netdef.ArgString("order", "NHWC")
	prelu := func(args ...*netdef.Argument) *netdef.OperatorDef {
		return netdef.NewOperator("PRelu", []string{"X", "slope"}, []string{"Y"}, args...)
	}
	for _, c := range []struct {
		name   string
		def    *netdef.OperatorDef
		inputs []*blob.Tensor
		input  int
	}{
		{"NCHW2NHWC", netdef.NewOperator("NCHW2NHWC", []string{"X"}, []string{"Y"}), []*blob.Tensor{x(2, 3, 2, 2)}, 0},
		{"NCHW2NHWC rank 3", netdef.NewOperator("NCHW2NHWC", []string{"X"}, []string{"Y"}), []*blob.Tensor{x(2, 3, 4)}, 0},
		{"NHWC2NCHW", netdef.NewOperator("NHWC2NCHW", []string{"X"}, []string{"Y"}), []*blob.Tensor{x(2, 2, 2, 3)}, 0},
		{"NHWC2NCHW rank 5", netdef.NewOperator("NHWC2NCHW", []string{"X"}, []string{"Y"}), []*blob.Tensor{x(1, 2, 2, 2, 3)}, 0},
		{"ChannelShuffle", netdef.NewOperator("ChannelShuffle", []string{"X"}, []string{"Y"}, netdef.ArgInt("group", 2)), []*blob.Tensor{x(2, 6, 2, 2)}, 0},
		{"ChannelShuffle NHWC", netdef.NewOperator("ChannelShuffle", []string{"X"}, []string{"Y"}, netdef.ArgInt("group", 3), nhwc), []*blob.Tensor{x(2, 2, 2, 6)}, 0},
		{"PRelu", prelu(), []*blob.Tensor{awayFromZero(2, 3, 2, 2), x(3)}, 0},
		{"PRelu", prelu(), []*blob.Tensor{awayFromZero(2, 3, 2, 2), x(3)}, 1},
		{"PRelu shared", prelu(), []*blob.Tensor{awayFromZero(2, 3, 2, 2), x(1)}, 0},
		{"PRelu shared", prelu(), []*blob.Tensor{awayFromZero(2, 3, 2, 2), x(1)}, 1},
		{"PRelu NHWC", prelu(nhwc), []*blob.Tensor{awayFromZero(2, 2, 2, 3), x(3)}, 0},
		{"PRelu NHWC", prelu(nhwc), []*blob.Tensor{awayFromZero(2, 2, 2, 3), x(3)}, 1},
		{"PRelu NHWC shared", prelu(nhwc), []*blob.Tensor{awayFromZero(2, 2, 2, 3), x(1)}, 1},
		{"PRelu double", prelu(), []*blob.Tensor{toF64(awayFromZero(2, 3, 4)), toF64(x(3))}, 0},
		{"PRelu double", prelu(), []*blob.Tensor{toF64(awayFromZero(2, 3, 4)), toF64(x(3))}, 1},
	} {
		t.Run(fmt.Sprintf("%s/d%s", c.name, c.def.Input[c.input]), func(t *testing.T) {
			if _, err := optest.CheckGradient(c.def, c.inputs, c.input, optest.GradientCheck{}); err != nil {
				t.Error(err)
			}
		})
	}
}
