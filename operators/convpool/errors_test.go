package convpool

import (
	"github.com/caffe2go/caffe2go/operators/internal/convargs"
	"slices"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// TestRunErrors checks that bad shapes and types fail with errors that name
// the blobs and their shapes, and never panic.
func TestRunErrors(t *testing.T) {
	z := func(shape ...int) *blob.Tensor { return blob.MustFromSlice(make([]float32, numel(shape)), shape...) }
	conv := func(args ...*netdef.Argument) *netdef.OperatorDef {
		return op("Conv", []string{"data", "conv1_w", "conv1_b"}, []string{"conv1"}, args...)
	}
	k3 := ai("kernel", 3)
	for _, c := range []struct {
		name  string
		def   *netdef.OperatorDef
		in    []*blob.Tensor
		frags []string
	}{
		{"kernel larger than padded input", conv(ai("kernel", 5), ai("pad", 1)), []*blob.Tensor{z(1, 3, 2, 8), z(4, 3, 5, 5), z(4)},
			[]string{`"data"`, "[1 3 2 8]", "input size 2 with pads 1 and 1 is smaller than the dilated kernel 5"}},
		{"channels mismatch", conv(k3), []*blob.Tensor{z(1, 3, 8, 8), z(4, 2, 3, 3), z(4)},
			[]string{`"conv1_w"`, "[4 2 3 3]", "want [4 3 3 3]", `"data"`, "[1 3 8 8]"}},
		{"group does not divide", conv(k3, ai("group", 2)), []*blob.Tensor{z(1, 3, 8, 8), z(4, 1, 3, 3), z(4)},
			[]string{"group 2", `"data"`, "[1 3 8 8]", `"conv1_w"`}},
		{"group mismatch", conv(k3, ai("group", 2)), []*blob.Tensor{z(1, 4, 8, 8), z(4, 4, 3, 3), z(4)},
			[]string{`"conv1_w"`, "[4 4 3 3]", "want [4 2 3 3]", "group 2"}},
		{"filter kernel", conv(k3), []*blob.Tensor{z(1, 3, 8, 8), z(4, 3, 3, 2), z(4)},
			[]string{`"conv1_w"`, "[4 3 3 2]", "want [4 3 3 3]"}},
		{"filter NHWC layout", conv(k3, astr("order", "NHWC")), []*blob.Tensor{z(1, 8, 8, 2), z(4, 2, 3, 3), z(4)},
			[]string{`"conv1_w"`, "[4 2 3 3]", "want [4 3 3 2]"}},
		{"filter NHWC kernel", conv(k3, astr("order", "NHWC")), []*blob.Tensor{z(1, 8, 8, 3), z(4, 3, 2, 3), z(4)},
			[]string{`"conv1_w"`, "[4 3 2 3]", "want [4 3 3 3]", "order NHWC"}},
		{"filter rank", conv(k3), []*blob.Tensor{z(1, 3, 8, 8), z(4, 27), z(4)},
			[]string{`"conv1_w"`, "[4 27]", `"data"`, "[1 3 8 8]"}},
		{"bias", conv(k3), []*blob.Tensor{z(1, 3, 8, 8), z(4, 3, 3, 3), z(5)},
			[]string{`"conv1_b"`, "[5]", "want [4]"}},
		{"kernel rank", conv(ais("kernels", 3, 3, 3)), []*blob.Tensor{z(1, 3, 8, 8), z(4, 3, 3, 3), z(4)},
			[]string{`"data"`, "3-D kernel [3 3 3]", "2 spatial dimensions"}},
		{"X rank", conv(k3), []*blob.Tensor{z(3, 8), z(4, 3), z(4)},
			[]string{`"data"`, "[3 8]"}},
		{"type mismatch", conv(k3), []*blob.Tensor{z(1, 3, 8, 8), blob.MustFromSlice(make([]float64, 108), 4, 3, 3, 3), z(4)},
			[]string{`"conv1_w"`, "DOUBLE", "FLOAT"}},
		{"int input", conv(k3), []*blob.Tensor{blob.MustFromSlice(make([]int32, 192), 1, 3, 8, 8), z(4, 3, 3, 3), z(4)},
			[]string{`"data"`, "INT32"}},
		{"conv gradient dY", op("ConvGradient", []string{"X", "W", "dY"}, []string{"dW", "db", "dX"}, k3),
			[]*blob.Tensor{z(1, 3, 8, 8), z(4, 3, 3, 3), z(1, 4, 5, 5)},
			[]string{`"dY"`, "[1 4 5 5]", "want [1 4 6 6]"}},
		{"conv gradient bias output", op("ConvGradient", []string{"X", "W", "dY"}, []string{"dW"}, k3),
			[]*blob.Tensor{z(1, 3, 8, 8), z(4, 3, 3, 3), z(1, 4, 6, 6)},
			[]string{"1 outputs", "no_bias"}},
		{"pool too small", op("MaxPool", []string{"pool_in"}, []string{"Y"}, ai("kernel", 4), ai("stride", 2)), []*blob.Tensor{z(2, 3, 3, 9)},
			[]string{`"pool_in"`, "[2 3 3 9]", "smaller than the dilated kernel 4"}},
		{"pool VALID empty", op("AveragePool", []string{"pool_in"}, []string{"Y"}, ai("kernel", 5), ai("legacy_pad", convargs.PadValid)), []*blob.Tensor{z(1, 1, 1, 9)},
			[]string{`"pool_in"`, "output size of -3"}},
		{"pool gradient Y", op("MaxPoolGradient", []string{"X", "Y", "dY"}, []string{"dX"}, ai("kernel", 2)),
			[]*blob.Tensor{z(1, 1, 4, 4), z(1, 1, 2, 2), z(1, 1, 3, 3)},
			[]string{`"Y"`, "[1 1 2 2]", "want [1 1 3 3]", `"X"`}},
		{"pool gradient dY", op("AveragePoolGradient", []string{"X", "Y", "dY"}, []string{"dX"}, ai("kernel", 2)),
			[]*blob.Tensor{z(1, 1, 4, 4), z(1, 1, 3, 3), z(1, 1, 3, 2)},
			[]string{`"dY"`, "[1 1 3 2]", "want [1 1 3 3]"}},
		{"index gradient", op("MaxPoolWithIndexGradient", []string{"X", "dY", "I"}, []string{"dX"}, ai("kernel", 2)),
			[]*blob.Tensor{z(1, 1, 4, 4), z(1, 1, 3, 3), blob.MustFromSlice(make([]int32, 4), 4)},
			[]string{`"I"`, "[4]", `"dY"`, "[1 1 3 3]"}},
		{"index 3-D", op("MaxPoolWithIndex", []string{"X"}, []string{"Y", "I"}, ais("kernels", 2)), []*blob.Tensor{z(1, 1, 4)},
			[]string{`"X"`, "[1 1 4]", "4-D"}},
		{"transpose filter", op("ConvTranspose", []string{"X", "W", "b"}, []string{"Y"}, k3), []*blob.Tensor{z(1, 3, 4, 4), z(2, 5, 3, 3), z(5)},
			[]string{`"W"`, "[2 5 3 3]", "want 3 filters", `"X"`, "[1 3 4 4]"}},
		{"transpose bias", op("ConvTranspose", []string{"X", "W", "b"}, []string{"Y"}, k3), []*blob.Tensor{z(1, 3, 4, 4), z(3, 5, 3, 3), z(3)},
			[]string{`"b"`, "[3]", "want [5]"}},
		{"transpose rank", op("ConvTranspose", []string{"X", "W", "b"}, []string{"Y"}, k3), []*blob.Tensor{z(3, 4, 4), z(3, 5, 3, 3), z(5)},
			[]string{`"X"`, "[3 4 4]", "4-D"}},
		{"transpose output size", op("ConvTranspose", []string{"X", "W"}, []string{"Y"}, k3, ai("pad", 3)), []*blob.Tensor{z(1, 3, 1, 1), z(3, 5, 3, 3)},
			[]string{`"X"`, "[1 3 1 1]", "output size of -3"}},
		{"transpose gradient dY", op("ConvTransposeGradient", []string{"X", "W", "dY"}, []string{"dW", "db", "dX"}, k3),
			[]*blob.Tensor{z(1, 3, 4, 4), z(3, 5, 3, 3), z(1, 5, 5, 5)},
			[]string{`"dY"`, "[1 5 5 5]", "want [1 5 6 6]"}},
		{"pad reflect too large", op("PadImage", []string{"img"}, []string{"Y"}, ai("pad", 3), astr("mode", "reflect")), []*blob.Tensor{z(1, 1, 3, 8)},
			[]string{"reflect", "3×8"}},
		{"pad crops everything", op("PadImage", []string{"img"}, []string{"Y"}, ai("pad_t", -2), ai("pad_l", 0), ai("pad_b", -1), ai("pad_r", 0)), []*blob.Tensor{z(1, 1, 3, 8)},
			[]string{"3×8 into 0×8"}},
		{"pad rank", op("PadImage", []string{"img"}, []string{"Y"}, ai("pad", 1)), []*blob.Tensor{z(1, 3, 8)},
			[]string{`"img"`, "[1 3 8]", "4-D"}},
	} {
		_, err := optest.RunOp(c.def, c.in...)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		for _, f := range c.frags {
			if !strings.Contains(err.Error(), f) {
				t.Errorf("%s: error %q does not contain %q", c.name, err, f)
			}
		}
		if strings.Contains(err.Error(), "panic") {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// TestEmptyBatch checks that a batch of no images gives empty outputs of the
// right shapes (and zero filter and bias gradients).
func TestEmptyBatch(t *testing.T) {
	z := func(shape ...int) *blob.Tensor { return blob.MustFromSlice(make([]float32, numel(shape)), shape...) }
	k3 := ai("kernel", 3)
	for _, c := range []struct {
		def  *netdef.OperatorDef
		in   []*blob.Tensor
		want [][]int
	}{
		{op("Conv", []string{"X", "W", "b"}, []string{"Y"}, k3), []*blob.Tensor{z(0, 2, 5, 5), z(3, 2, 3, 3), z(3)}, [][]int{{0, 3, 3, 3}}},
		{op("ConvGradient", []string{"X", "W", "dY"}, []string{"dW", "db", "dX"}, k3), []*blob.Tensor{z(0, 2, 5, 5), z(3, 2, 3, 3), z(0, 3, 3, 3)}, [][]int{{3, 2, 3, 3}, {3}, {0, 2, 5, 5}}},
		{op("ConvTranspose", []string{"X", "W"}, []string{"Y"}, k3), []*blob.Tensor{z(0, 2, 5, 5), z(2, 3, 3, 3)}, [][]int{{0, 3, 7, 7}}},
		{op("MaxPool", []string{"X"}, []string{"Y"}, k3, astr("order", "NHWC")), []*blob.Tensor{z(0, 5, 5, 2)}, [][]int{{0, 3, 3, 2}}},
		{op("PadImage", []string{"X"}, []string{"Y"}, ai("pad", 1)), []*blob.Tensor{z(0, 2, 5, 5)}, [][]int{{0, 2, 7, 7}}},
	} {
		out, err := optest.RunOp(c.def, c.in...)
		if err != nil {
			t.Errorf("%s: %v", c.def.GetType(), err)
			continue
		}
		for i, w := range c.want {
			if !slices.Equal(out[i].Dims(), w) {
				t.Errorf("%s output %d: shape %v, want %v", c.def.GetType(), i, out[i].Dims(), w)
			}
			for _, v := range out[i].AsFloat64s() {
				if v != 0 {
					t.Errorf("%s output %d: %v, want zeros", c.def.GetType(), i, out[i].AsFloat64s())
					break
				}
			}
		}
	}
}
