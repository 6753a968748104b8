package convpool

import (
	"github.com/caffe2go/caffe2go/operators/internal/convargs"
	"slices"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// create instantiates def with an input blob X (and W, b for convolutions)
// that holds a small tensor; it returns the operator or the creation error.
func create(def *netdef.OperatorDef) (operators.Operator, error) {
	w := optest.NewWorkspace()
	for _, in := range def.Input {
		w.Feed(in, blob.MustFromSlice([]float32{0}, 1))
	}
	return operators.Create(def, w, -1)
}

// TestArgumentForms checks how ConvPoolOpBase's argument forms resolve,
// including std::vector::resize's truncation when a single-value form meets
// a longer list.
func TestArgumentForms(t *testing.T) {
	for _, c := range []struct {
		name                           string
		args                           []*netdef.Argument
		kernel, stride, dilation, pads []int
	}{
		{"kernel", []*netdef.Argument{ai("kernel", 3)}, []int{3, 3}, []int{1, 1}, []int{1, 1}, []int{0, 0, 0, 0}},
		{"kernel_h kernel_w", []*netdef.Argument{ai("kernel_h", 3), ai("kernel_w", 2), ai("stride_h", 2), ai("stride_w", 1)}, []int{3, 2}, []int{2, 1}, []int{1, 1}, []int{0, 0, 0, 0}},
		{"kernels 3-D", []*netdef.Argument{ais("kernels", 1, 2, 3), ais("dilations", 2, 1, 1), ais("pads", 1, 0, 1, 0, 1, 0)}, []int{1, 2, 3}, []int{1, 1, 1}, []int{2, 1, 1}, []int{1, 0, 1, 0, 1, 0}},
		{"kernel extends kernels", []*netdef.Argument{ais("kernels", 3), ai("kernel", 5)}, []int{3, 5}, []int{1, 1}, []int{1, 1}, []int{0, 0, 0, 0}},
		{"kernel truncates kernels", []*netdef.Argument{ais("kernels", 3, 3, 3), ai("kernel", 5)}, []int{3, 3}, []int{1, 1}, []int{1, 1}, []int{0, 0, 0, 0}},
		{"kernel wins over kernel_h", []*netdef.Argument{ai("kernel", 4), ai("kernel_h", 3), ai("kernel_w", 2)}, []int{4, 4}, []int{1, 1}, []int{1, 1}, []int{0, 0, 0, 0}},
		{"pad", []*netdef.Argument{ai("kernel", 3), ai("pad", 1), ai("stride", 2), ai("dilation", 2)}, []int{3, 3}, []int{2, 2}, []int{2, 2}, []int{1, 1, 1, 1}},
		{"pad_t pad_l pad_b pad_r", []*netdef.Argument{ai("kernel", 3), ai("pad_t", 1), ai("pad_l", 2), ai("pad_b", 0), ai("pad_r", 1)}, []int{3, 3}, []int{1, 1}, []int{1, 1}, []int{1, 2, 0, 1}},
		{"three pad sides are ignored", []*netdef.Argument{ai("kernel", 3), ai("pad_t", 1), ai("pad_l", 2), ai("pad_b", 0)}, []int{3, 3}, []int{1, 1}, []int{1, 1}, []int{0, 0, 0, 0}},
		{"dilation_h dilation_w", []*netdef.Argument{ai("kernel", 3), ai("dilation_h", 2), ai("dilation_w", 3)}, []int{3, 3}, []int{1, 1}, []int{2, 3}, []int{0, 0, 0, 0}},
	} {
		o, err := create(op("Conv", []string{"X", "W"}, []string{"Y"}, c.args...))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		a := o.(*convOp).args
		if !slices.Equal(a.Kernel, c.kernel) || !slices.Equal(a.Stride, c.stride) || !slices.Equal(a.Dilation, c.dilation) || !slices.Equal(a.Pads, c.pads) {
			t.Errorf("%s: kernel %v stride %v dilation %v pads %v, want %v %v %v %v", c.name, a.Kernel, a.Stride, a.Dilation, a.Pads, c.kernel, c.stride, c.dilation, c.pads)
		}
	}
}

// TestArgumentErrors checks the argument checks of ConvPoolOpBase, the
// pooling and padding operators and ConvTransposeUnpoolBase.
func TestArgumentErrors(t *testing.T) {
	for _, c := range []struct {
		name, typ string
		args      []*netdef.Argument
		frag      string
	}{
		{"no kernel", "Conv", nil, "set explicitly the kernel size"},
		{"kernel_h alone", "Conv", []*netdef.Argument{ai("kernel_h", 3)}, "set explicitly the kernel size"},
		{"VALID with pad", "Conv", []*netdef.Argument{ai("kernel", 3), ai("legacy_pad", convargs.PadValid), ai("pad", 1)}, "legacy padding VALID or SAME"},
		{"SAME with pads", "MaxPool", []*netdef.Argument{ai("kernel", 3), ai("legacy_pad", convargs.PadSame), ais("pads", 0, 0, 0, 0)}, "legacy padding VALID or SAME"},
		{"bad legacy_pad", "Conv", []*netdef.Argument{ai("kernel", 3), ai("legacy_pad", 7)}, "not a LegacyPadding value"},
		{"strides count", "Conv", []*netdef.Argument{ais("kernels", 3, 3), ais("strides", 1, 1, 1)}, "3 strides"},
		{"dilations count", "Conv", []*netdef.Argument{ais("kernels", 3, 3), ais("dilations", 1)}, "1 dilations"},
		{"pads count", "Conv", []*netdef.Argument{ais("kernels", 3, 3), ais("pads", 1, 1)}, "2 pads"},
		{"negative pad", "Conv", []*netdef.Argument{ai("kernel", 3), ai("pad", -1)}, "non-negative"},
		{"zero stride", "Conv", []*netdef.Argument{ai("kernel", 3), ai("stride", 0)}, "strides [0 0] > 0"},
		{"bad order", "Conv", []*netdef.Argument{ai("kernel", 3), astr("order", "CHWN")}, "unknown storage order"},
		{"global with stride", "AveragePool", []*netdef.Argument{ai("global_pooling", 1), ai("stride", 2)}, "global_pooling is set"},
		{"pool dilation", "MaxPool", []*netdef.Argument{ai("kernel", 3), ai("dilation", 2)}, "does not support dilation"},
		{"pool pad ≥ kernel", "AveragePool", []*netdef.Argument{ai("kernel", 2), ai("pad", 2)}, "pad should be smaller than kernel"},
		{"group 0", "Conv", []*netdef.Argument{ai("kernel", 3), ai("group", 0)}, "group 0"},
		{"pad image legacy", "PadImage", []*netdef.Argument{ai("pad", 1), ai("legacy_pad", convargs.PadCaffeLegacyPool)}, "explicit pad values"},
		{"pad image stride", "PadImage", []*netdef.Argument{ai("pad", 1), ai("stride", 2)}, "does not support dilation or stride"},
		{"pad image mode", "PadImage", []*netdef.Argument{ai("pad", 1), astr("mode", "wrap")}, "unknown padding mode: wrap"},
		{"pad image 3-D", "PadImage", []*netdef.Argument{ais("pads", 1, 1, 1, 1, 1, 1), ais("kernels", 1, 1, 1)}, "two spatial dimensions"},
		{"index NHWC", "MaxPoolWithIndex", []*netdef.Argument{ai("kernel", 2), astr("order", "NHWC")}, "only the NCHW order"},
		{"transpose adj > stride", "ConvTranspose", []*netdef.Argument{ai("kernel", 3), ai("stride", 2), ai("adj", 3)}, "adjs [3 3]"},
		{"transpose no kernel", "ConvTranspose", nil, "kernel [0 0] > 0"},
		{"transpose legacy pooling", "ConvTranspose", []*netdef.Argument{ai("kernel", 3), ai("legacy_pad", convargs.PadCaffeLegacyPool)}, "no longer supported"},
		{"transpose SAME with pad", "ConvTranspose", []*netdef.Argument{ai("kernel", 3), ai("legacy_pad", convargs.PadSame), ai("pad", 1)}, "legacy padding VALID or SAME"},
	} {
		in := []string{"X"}
		if strings.HasPrefix(c.typ, "Conv") {
			in = []string{"X", "W"}
		}
		out := []string{"Y"}
		if c.typ == "MaxPoolWithIndex" {
			out = []string{"Y", "I"}
		}
		_, err := create(op(c.typ, in, out, c.args...))
		if err == nil || !strings.Contains(err.Error(), c.frag) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.frag)
		}
	}
}
