package image

import (
	"fmt"
	"slices"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// TestOrderSwitchGolden compares both order switches and their gradients
// with PyTorch's permute on tensors of rank 3, 4 and 5.
func TestOrderSwitchGolden(t *testing.T) {
	for _, rank := range []int{3, 4, 5} {
		name := fmt.Sprintf("nchw2nhwc_r%d", rank)
		x, y := golden(t, name+"_x"), golden(t, name+"_y")
		dy, dx := golden(t, name+"_dy"), golden(t, name+"_dx")
		y32, dx32 := optest.F32(y.AsFloat64s(), y.Shape()...), optest.F32(dx.AsFloat64s(), dx.Shape()...)

		toNHWC := netdef.NewOperator("NCHW2NHWC", []string{"X"}, []string{"Y"})
		checkLike(t, name+" NCHW2NHWC", optest.MustRunOp(t, toNHWC, x)[0], blob.Float32, y, 0)
		w := runGradient(t, toNHWC, map[string]*blob.Tensor{"Y_grad": dy})
		checkLike(t, name+" NCHW2NHWC dX", w.Tensor("X_grad"), blob.Float32, dx, 0)

		toNCHW := netdef.NewOperator("NHWC2NCHW", []string{"X"}, []string{"Y"})
		checkLike(t, name+" NHWC2NCHW", optest.MustRunOp(t, toNCHW, y32)[0], blob.Float32, x, 0)
		w = runGradient(t, toNCHW, map[string]*blob.Tensor{"Y_grad": dx32})
		checkLike(t, name+" NHWC2NCHW dX", w.Tensor("X_grad"), blob.Float32, dy, 0)
	}
}

// refToNHWC is a naive NCHW → NHWC permutation of x (shape dims).
func refToNHWC[T any](x []T, dims []int) []T {
	n, c, hw := dims[0], dims[1], numel(dims[2:])
	y := make([]T, len(x))
	for i := range n {
		for k := range c {
			for p := range hw {
				y[(i*hw+p)*c+k] = x[(i*c+k)*hw+p]
			}
		}
	}
	return y
}

// TestOrderSwitchTypes checks every element type on shapes that cross the
// transpose tiles, against a naive permutation.
func TestOrderSwitchTypes(t *testing.T) {
	for _, dims := range [][]int{{2, 37, 5, 9}, {1, 3, 70, 33}, {3, 65, 1}, {1, 1, 2, 2, 2}} {
		n := numel(dims)
		nhwc := append(append([]int{dims[0]}, dims[2:]...), dims[1])
		idx := make([]int32, n)
		for i := range idx {
			idx[i] = int32(i)
		}
		want := refToNHWC(idx, dims)
		mk := map[blob.DataType]func([]int32) *blob.Tensor{
			blob.Float32: func(v []int32) *blob.Tensor { return conv(v, func(i int32) float32 { return float32(i) }, dims) },
			blob.Float64: func(v []int32) *blob.Tensor { return conv(v, func(i int32) float64 { return float64(i) }, dims) },
			blob.Float16: func(v []int32) *blob.Tensor { return conv(v, half, dims) },
			blob.Int8:    func(v []int32) *blob.Tensor { return conv(v, func(i int32) int8 { return int8(i) }, dims) },
			blob.Int16:   func(v []int32) *blob.Tensor { return conv(v, func(i int32) int16 { return int16(i) }, dims) },
			blob.Int32:   func(v []int32) *blob.Tensor { return conv(v, func(i int32) int32 { return i }, dims) },
			blob.Int64:   func(v []int32) *blob.Tensor { return conv(v, func(i int32) int64 { return int64(i) }, dims) },
			blob.Uint8:   func(v []int32) *blob.Tensor { return conv(v, func(i int32) uint8 { return uint8(i) }, dims) },
			blob.Uint16:  func(v []int32) *blob.Tensor { return conv(v, func(i int32) uint16 { return uint16(i) }, dims) },
			blob.Bool:    func(v []int32) *blob.Tensor { return conv(v, func(i int32) bool { return i%3 == 0 }, dims) },
			blob.String:  func(v []int32) *blob.Tensor { return conv(v, func(i int32) string { return fmt.Sprint(i) }, dims) },
		}
		for dt, f := range mk {
			x := f(idx)
			wantT := f(want)
			y := optest.MustRunOp(t, netdef.NewOperator("NCHW2NHWC", []string{"X"}, []string{"Y"}), x)[0]
			if y.DataType() != dt || !slices.Equal(y.Dims(), nhwc) || fmt.Sprint(y.Raw()) != fmt.Sprint(wantT.Raw()) {
				t.Fatalf("NCHW2NHWC %v %v: got %v %v", dims, dt, y.DataType(), y.Dims())
			}
			back := optest.MustRunOp(t, netdef.NewOperator("NHWC2NCHW", []string{"Y"}, []string{"X"}), y)[0]
			if !slices.Equal(back.Dims(), dims) || fmt.Sprint(back.Raw()) != fmt.Sprint(x.Raw()) {
				t.Fatalf("NHWC2NCHW %v %v does not invert NCHW2NHWC", dims, dt)
			}
		}
	}
}

// half is a Float16 value of i (exact below 2048).
func half(i int32) blob.Half { return blob.HalfFromFloat32(float32(i % 2048)) }

func conv[T blob.Element](v []int32, f func(int32) T, dims []int) *blob.Tensor {
	out := make([]T, len(v))
	for i, x := range v {
		out[i] = f(x)
	}
	return blob.MustFromSlice(out, dims...)
}

func TestOrderSwitchShapes(t *testing.T) {
	for _, c := range []struct {
		typ     string
		in, out []int
	}{
		{"NCHW2NHWC", []int{0, 3, 4, 5}, []int{0, 4, 5, 3}},
		{"NCHW2NHWC", []int{2, 0, 4}, []int{2, 4, 0}},
		{"NHWC2NCHW", []int{2, 4, 5, 0}, []int{2, 0, 4, 5}},
		{"NHWC2NCHW", []int{2, 0, 5, 3}, []int{2, 3, 0, 5}},
	} {
		y := optest.MustRunOp(t, netdef.NewOperator(c.typ, []string{"X"}, []string{"Y"}), blob.MustFromSlice([]float32{}, c.in...))[0]
		if !slices.Equal(y.Dims(), c.out) {
			t.Errorf("%s %v: shape %v, want %v", c.typ, c.in, y.Dims(), c.out)
		}
	}
	for _, typ := range []string{"NCHW2NHWC", "NHWC2NCHW"} {
		expectError(t, typ+" rank 2", netdef.NewOperator(typ, []string{"X"}, []string{"Y"}), "at least 3 dimensions", blob.MustFromSlice([]float32{1, 2}, 1, 2))
	}
}

func TestOrderSwitchGradientDefs(t *testing.T) {
	checkGradDefs(t, netdef.NewOperator("NCHW2NHWC", []string{"X"}, []string{"Y"}),
		optest.GradOp("NHWC2NCHW", []string{"Y_grad"}, []string{"X_grad"}))
	checkGradDefs(t, netdef.NewOperator("NHWC2NCHW", []string{"X"}, []string{"Y"}),
		optest.GradOp("NCHW2NHWC", []string{"Y_grad"}, []string{"X_grad"}))
}
