package convpool

import (
	"github.com/caffe2go/caffe2go/operators/internal/convargs"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
)

// goldenCase is one PyTorch golden (testdata/gen_goldens.py): the operator
// that should reproduce it, with its arguments and which golden tensors are
// its inputs.
type goldenCase struct {
	name   string
	typ    string
	args   []*netdef.Argument
	inputs []string // golden tensor names, in operator input order
}

var goldenCases = []goldenCase{
	{"conv_basic", "Conv", []*netdef.Argument{ai("kernel", 3), ai("pad", 1)}, []string{"X", "W", "b"}},
	{"conv_stride_asympad", "Conv2D", []*netdef.Argument{ai("kernel_h", 3), ai("kernel_w", 2), ai("stride_h", 2), ai("stride_w", 1),
		ai("pad_t", 1), ai("pad_l", 0), ai("pad_b", 2), ai("pad_r", 1)}, []string{"X", "W", "b"}},
	{"conv_group_dilation", "Conv", []*netdef.Argument{ai("kernel", 3), ai("dilation", 2), ai("pad", 2), ai("group", 2)}, []string{"X", "W", "b"}},
	{"conv_1x1", "Conv", []*netdef.Argument{ai("kernel", 1)}, []string{"X", "W"}},
	{"conv_depthwise", "Conv", []*netdef.Argument{ai("kernel", 3), ai("stride", 2), ai("pad", 1), ai("group", 4)}, []string{"X", "W", "b"}},
	{"conv_1x1_stride", "Conv", []*netdef.Argument{ai("kernel", 1), ai("stride", 2)}, []string{"X", "W", "b"}},
	{"conv1d", "Conv1D", []*netdef.Argument{ais("kernels", 4), ais("strides", 2), ais("pads", 1, 2)}, []string{"X", "W", "b"}},
	{"conv3d", "Conv3D", []*netdef.Argument{ais("kernels", 2, 3, 2), ais("strides", 1, 2, 1), ais("pads", 1, 1, 0, 1, 0, 1)}, []string{"X", "W", "b"}},
	{"convt_basic", "ConvTranspose", []*netdef.Argument{ai("kernel", 3), ai("stride", 2), ai("pad", 1), ai("adj", 1)}, []string{"X", "W", "b"}},
	{"convt_group", "ConvTranspose", []*netdef.Argument{ai("kernel_h", 2), ai("kernel_w", 3), ai("stride_h", 1), ai("stride_w", 2), ai("group", 2)}, []string{"X", "W"}},
	{"convt_1x1", "ConvTranspose", []*netdef.Argument{ai("kernel", 1)}, []string{"X", "W", "b"}},
	{"maxpool_k3s2p1", "MaxPool", []*netdef.Argument{ai("kernel", 3), ai("stride", 2), ai("pad", 1)}, []string{"X"}},
	{"maxpool_k2s2", "MaxPool2D", []*netdef.Argument{ai("kernel", 2), ai("stride", 2)}, []string{"X"}},
	{"maxpool_ceil", "MaxPool", []*netdef.Argument{ai("kernel", 3), ai("stride", 2), ai("pad", 1), ai("legacy_pad", convargs.PadCaffeLegacyPool)}, []string{"X"}},
	{"avgpool_k3s2p1", "AveragePool", []*netdef.Argument{ai("kernel", 3), ai("stride", 2), ai("pad", 1)}, []string{"X"}},
	{"avgpool_rect", "AveragePool2D", []*netdef.Argument{ai("kernel_h", 3), ai("kernel_w", 2), ai("stride_h", 1), ai("stride_w", 2),
		ai("pad_t", 1), ai("pad_l", 0), ai("pad_b", 1), ai("pad_r", 0)}, []string{"X"}},
	{"avgpool_ceil", "AveragePool", []*netdef.Argument{ai("kernel", 3), ai("stride", 2), ai("pad", 1), ai("legacy_pad", convargs.PadCaffeLegacyPool)}, []string{"X"}},
	{"avgpool_global", "AveragePool", []*netdef.Argument{ai("global_pooling", 1)}, []string{"X"}},
	{"maxpool_global", "MaxPool", []*netdef.Argument{ai("global_pooling", 1)}, []string{"X"}},
	{"maxpool3d", "MaxPool3D", []*netdef.Argument{ais("kernels", 2, 3, 2), ais("strides", 2, 2, 1), ais("pads", 1, 1, 0, 1, 1, 0)}, []string{"X"}},
	{"avgpool1d", "AveragePool1D", []*netdef.Argument{ais("kernels", 3), ais("strides", 2), ais("pads", 1, 1)}, []string{"X"}},
	{"pad_constant", "PadImage", []*netdef.Argument{ai("pad_t", 1), ai("pad_l", 2), ai("pad_b", 0), ai("pad_r", 3), af("value", 0.5)}, []string{"X"}},
	{"pad_reflect", "PadImage", []*netdef.Argument{ais("pads", 2, 1, 1, 3), astr("mode", "reflect")}, []string{"X"}},
	{"pad_edge", "PadImage", []*netdef.Argument{ai("pad_t", 3), ai("pad_l", 0), ai("pad_b", 2), ai("pad_r", 1), astr("mode", "edge")}, []string{"X"}},
	{"pad_crop", "PadImage", []*netdef.Argument{ai("pad_t", -1), ai("pad_l", 2), ai("pad_b", 1), ai("pad_r", -2)}, []string{"X"}},
}

// TestPyTorchGoldens runs every golden case forward and backward, in float32
// and float64, NCHW and NHWC (inputs, filters and expected tensors moved to
// channels-last for NHWC), and compares Y and every input gradient with
// PyTorch's.
func TestPyTorchGoldens(t *testing.T) {
	for _, c := range goldenCases {
		for _, order := range []string{"NCHW", "NHWC"} {
			for _, dtype := range []blob.DataType{blob.Float32, blob.Float64} {
				t.Run(c.name+"/"+order+"/"+dtype.String(), func(t *testing.T) {
					tol := 2e-5
					if dtype == blob.Float64 {
						tol = 1e-11
					}
					nhwc := order == "NHWC"
					// channels-last for image tensors and filters (both have
					// their channel-like axis at 1); biases stay.
					conv := func(g *blob.Tensor) *blob.Tensor {
						g = as(g, dtype)
						if nhwc && g.NumDims() > 1 {
							return toNHWC(g)
						}
						return g
					}
					names := make([]string, len(c.inputs))
					inputs := make([]*blob.Tensor, len(c.inputs))
					for i, n := range c.inputs {
						names[i] = n
						inputs[i] = conv(golden(t, c.name+"."+n))
					}
					args := append([]*netdef.Argument{astr("order", order)}, c.args...)
					def := op(c.typ, names, []string{"Y"}, args...)
					y, grads := runGrad(t, def, inputs, conv(golden(t, c.name+".dY")))
					checkTensor(t, "Y", y, conv(golden(t, c.name+".Y")), tol)
					for i, n := range c.inputs {
						checkTensor(t, "d"+n, grads[i], conv(golden(t, c.name+".d"+n)), tol)
					}
				})
			}
		}
	}
}
