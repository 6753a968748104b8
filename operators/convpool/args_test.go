package convpool

import (
	"slices"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// TestComputeSizeAndPad is a table of Caffe2's output-size rule, worked by
// hand: out, and the head and tail pads used.
func TestComputeSizeAndPad(t *testing.T) {
	for _, c := range []struct {
		name                                 string
		in, stride, kernel, dilation, legacy int
		padHead, padTail                     int
		out, head, tail                      int
		err                                  string
	}{
		{name: "explicit 3x3 pad 1", in: 7, stride: 1, kernel: 3, dilation: 1, padHead: 1, padTail: 1, out: 7, head: 1, tail: 1},
		{name: "explicit rounds down", in: 9, stride: 2, kernel: 3, dilation: 1, padHead: 1, padTail: 2, out: 5, head: 1, tail: 2},
		{name: "explicit dilation", in: 8, stride: 1, kernel: 3, dilation: 2, padHead: 2, padTail: 2, out: 8, head: 2, tail: 2},
		{name: "resnet conv1", in: 224, stride: 2, kernel: 7, dilation: 1, padHead: 3, padTail: 3, out: 112, head: 3, tail: 3},
		{name: "explicit too small", in: 2, stride: 1, kernel: 5, dilation: 1, padHead: 1, padTail: 1, err: "smaller than the dilated kernel"},
		{name: "VALID", in: 7, stride: 2, kernel: 3, dilation: 1, legacy: padValid, padHead: 5, padTail: 5, out: 3},
		{name: "VALID truncates toward zero", in: 2, stride: 2, kernel: 3, dilation: 1, legacy: padValid, out: 1},
		{name: "VALID empty", in: 1, stride: 1, kernel: 5, dilation: 1, legacy: padValid, out: -3},
		{name: "SAME even", in: 7, stride: 2, kernel: 3, dilation: 1, legacy: padSame, out: 4, head: 1, tail: 1},
		{name: "SAME odd pad goes to the tail", in: 8, stride: 2, kernel: 3, dilation: 1, legacy: padSame, out: 4, head: 0, tail: 1},
		{name: "SAME negative need", in: 5, stride: 3, kernel: 1, dilation: 1, legacy: padSame, out: 2, head: 0, tail: -1},
		{name: "SAME dilation", in: 5, stride: 1, kernel: 3, dilation: 2, legacy: padSame, err: "dilation not supported"},
		{name: "Caffe pooling ceil", in: 112, stride: 2, kernel: 3, dilation: 1, legacy: padCaffeLegacyPool, out: 56, head: 0, tail: 2},
		{name: "Caffe pooling exact", in: 111, stride: 2, kernel: 3, dilation: 1, legacy: padCaffeLegacyPool, out: 55, head: 0, tail: 0},
		{name: "Caffe pooling pad 1 stride 1", in: 28, stride: 1, kernel: 3, dilation: 1, legacy: padCaffeLegacyPool, padHead: 1, padTail: 7, out: 28, head: 1, tail: 1},
		{name: "Caffe pooling ceil with pad", in: 8, stride: 2, kernel: 3, dilation: 1, legacy: padCaffeLegacyPool, padHead: 1, out: 5, head: 1, tail: 3},
		{name: "Caffe pooling last window clipped", in: 5, stride: 2, kernel: 2, dilation: 1, legacy: padCaffeLegacyPool, padHead: 1, out: 3, head: 1, tail: 1},
		{name: "Caffe pooling negative pad", in: 5, stride: 2, kernel: 2, dilation: 1, legacy: padCaffeLegacyPool, padHead: -1, err: "negative pad"},
	} {
		out, head, tail, err := computeSizeAndPad(c.in, c.stride, c.kernel, c.dilation, c.legacy, c.padHead, c.padTail)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want one containing %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || out != c.out || head != c.head || tail != c.tail {
			t.Errorf("%s: got out %d pads %d, %d (err %v), want out %d pads %d, %d", c.name, out, head, tail, err, c.out, c.head, c.tail)
		}
	}
}

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
		if !slices.Equal(a.kernel, c.kernel) || !slices.Equal(a.stride, c.stride) || !slices.Equal(a.dilation, c.dilation) || !slices.Equal(a.pads, c.pads) {
			t.Errorf("%s: kernel %v stride %v dilation %v pads %v, want %v %v %v %v", c.name, a.kernel, a.stride, a.dilation, a.pads, c.kernel, c.stride, c.dilation, c.pads)
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
		{"VALID with pad", "Conv", []*netdef.Argument{ai("kernel", 3), ai("legacy_pad", padValid), ai("pad", 1)}, "legacy padding VALID or SAME"},
		{"SAME with pads", "MaxPool", []*netdef.Argument{ai("kernel", 3), ai("legacy_pad", padSame), ais("pads", 0, 0, 0, 0)}, "legacy padding VALID or SAME"},
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
		{"pad image legacy", "PadImage", []*netdef.Argument{ai("pad", 1), ai("legacy_pad", padCaffeLegacyPool)}, "explicit pad values"},
		{"pad image stride", "PadImage", []*netdef.Argument{ai("pad", 1), ai("stride", 2)}, "does not support dilation or stride"},
		{"pad image mode", "PadImage", []*netdef.Argument{ai("pad", 1), astr("mode", "wrap")}, "unknown padding mode: wrap"},
		{"pad image 3-D", "PadImage", []*netdef.Argument{ais("pads", 1, 1, 1, 1, 1, 1), ais("kernels", 1, 1, 1)}, "two spatial dimensions"},
		{"index NHWC", "MaxPoolWithIndex", []*netdef.Argument{ai("kernel", 2), astr("order", "NHWC")}, "only the NCHW order"},
		{"transpose adj > stride", "ConvTranspose", []*netdef.Argument{ai("kernel", 3), ai("stride", 2), ai("adj", 3)}, "adjs [3 3]"},
		{"transpose no kernel", "ConvTranspose", nil, "kernel [0 0] > 0"},
		{"transpose legacy pooling", "ConvTranspose", []*netdef.Argument{ai("kernel", 3), ai("legacy_pad", padCaffeLegacyPool)}, "no longer supported"},
		{"transpose SAME with pad", "ConvTranspose", []*netdef.Argument{ai("kernel", 3), ai("legacy_pad", padSame), ai("pad", 1)}, "legacy padding VALID or SAME"},
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
