package image

import (
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// TestChannelShuffleGolden compares ChannelShuffle and its gradient with
// PyTorch's view/transpose channel shuffle.
func TestChannelShuffleGolden(t *testing.T) {
	for _, c := range []struct {
		name  string
		group int64
		order string
	}{
		{"shuffle_nchw_g2", 2, "NCHW"},
		{"shuffle_nchw_g3", 3, "NCHW"},
		{"shuffle_nchw_r2", 3, "NCHW"},
		{"shuffle_nchw_r3", 4, "NCHW"},
		{"shuffle_nhwc_g3", 3, "NHWC"},
	} {
		x, y := golden(t, c.name+"_x"), golden(t, c.name+"_y")
		dy, dx := golden(t, c.name+"_dy"), golden(t, c.name+"_dx")
		def := netdef.NewOperator("ChannelShuffle", []string{"X"}, []string{"Y"},
			netdef.ArgInt("group", c.group), netdef.ArgString("order", c.order))
		checkLike(t, c.name, optest.MustRunOp(t, def, x)[0], blob.Float32, y, 0)
		w := runGradient(t, def, map[string]*blob.Tensor{"Y_grad": dy})
		checkLike(t, c.name+" dX", w.Tensor("X_grad"), blob.Float32, dx, 0)

		// Other element types move the same way.
		y64 := optest.MustRunOp(t, def, toF64(x))[0]
		checkLike(t, c.name+" double", y64, blob.Float64, y, 0)
	}
}

// TestChannelShuffleIntegers checks a hand-worked NCHW shuffle of int32
// channels and that NHWC shuffles the last dimension.
func TestChannelShuffleIntegers(t *testing.T) {
	// 6 channels of 2 elements, group 2: Y channels are X channels 0 3 1 4 2 5.
	x := blob.MustFromSlice([]int32{0, 1, 10, 11, 20, 21, 30, 31, 40, 41, 50, 51}, 1, 6, 2)
	want := []float64{0, 1, 30, 31, 10, 11, 40, 41, 20, 21, 50, 51}
	def := netdef.NewOperator("ChannelShuffle", []string{"X"}, []string{"Y"}, netdef.ArgInt("group", 2))
	checkTensor(t, "NCHW int32", optest.MustRunOp(t, def, x)[0], blob.Int32, []int{1, 6, 2}, want, 0)
	inv := netdef.NewOperator("ChannelShuffleGradient", []string{"Y"}, []string{"X"}, netdef.ArgInt("group", 2))
	checkTensor(t, "gradient int32", optest.MustRunOp(t, inv, blob.MustFromSlice([]int32{0, 1, 30, 31, 10, 11, 40, 41, 20, 21, 50, 51}, 1, 6, 2))[0],
		blob.Int32, []int{1, 6, 2}, x.AsFloat64s(), 0)

	// NHWC: two pixels of 6 channels, group 3: channels 0 2 4 1 3 5.
	xh := blob.MustFromSlice([]int64{0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15}, 2, 6)
	defh := netdef.NewOperator("ChannelShuffle", []string{"X"}, []string{"Y"}, netdef.ArgInt("group", 3), netdef.ArgString("order", "NHWC"))
	checkTensor(t, "NHWC int64", optest.MustRunOp(t, defh, xh)[0], blob.Int64, []int{2, 6}, []float64{0, 2, 4, 1, 3, 5, 10, 12, 14, 11, 13, 15}, 0)

	// group 1 and group C leave the tensor unchanged.
	for _, g := range []int64{1, 6} {
		d := netdef.NewOperator("ChannelShuffle", []string{"X"}, []string{"Y"}, netdef.ArgInt("group", g))
		checkTensor(t, "identity group", optest.MustRunOp(t, d, x)[0], blob.Int32, []int{1, 6, 2}, x.AsFloat64s(), 0)
	}
	// Empty batch.
	e := optest.MustRunOp(t, def, blob.MustFromSlice([]float32{}, 0, 6, 3))[0]
	checkTensor(t, "empty", e, blob.Float32, []int{0, 6, 3}, nil, 0)
}

func TestChannelShuffleErrors(t *testing.T) {
	x := blob.MustFromSlice(make([]float32, 12), 1, 6, 2)
	expectError(t, "channels not a multiple", netdef.NewOperator("ChannelShuffle", []string{"X"}, []string{"Y"}, netdef.ArgInt("group", 4)), "not a multiple of group 4", x)
	expectError(t, "NHWC channels", netdef.NewOperator("ChannelShuffle", []string{"X"}, []string{"Y"}, netdef.ArgInt("group", 3), netdef.ArgString("order", "NHWC")), "not a multiple of group 3", x)
	expectError(t, "group 0", netdef.NewOperator("ChannelShuffle", []string{"X"}, []string{"Y"}, netdef.ArgInt("group", 0)), "at least 1", x)
	expectError(t, "bad order", netdef.NewOperator("ChannelShuffle", []string{"X"}, []string{"Y"}, netdef.ArgString("order", "CHWN")), "order", x)
	expectError(t, "rank 1", netdef.NewOperator("ChannelShuffleGradient", []string{"X"}, []string{"Y"}), "at least 2 dimensions", blob.MustFromSlice([]float32{1, 2}, 2))
}

func TestChannelShuffleGradientDefs(t *testing.T) {
	args := []*netdef.Argument{netdef.ArgInt("group", 2), netdef.ArgString("order", "NHWC")}
	checkGradDefs(t, netdef.NewOperator("ChannelShuffle", []string{"X"}, []string{"Y"}, args...),
		optest.GradOp("ChannelShuffleGradient", []string{"Y_grad"}, []string{"X_grad"}, args...))
}
