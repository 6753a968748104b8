package main

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/workspace"
)

// TestParamShape checks the shape each rule gives a parameter for the
// shape of its operator's data input, and the dimension left open for
// -width.
func TestParamShape(t *testing.T) {
	f32 := func(dims ...int) operators.TensorShape { return operators.Shape(blob.Float32, dims...) }
	unknown := operators.UnknownShape
	op := func(typ string, args ...*netdef.Argument) *netdef.OperatorDef {
		return netdef.NewOperator(typ, []string{"x", "w", "b"}, []string{"y"}, args...)
	}
	for _, tc := range []struct {
		name    string
		op      *netdef.OperatorDef
		k       int
		in      []operators.TensorShape
		dims    []int
		open    int
		errWant string
	}{
		{"conv filter", op("Conv", netdef.ArgInt("kernel", 3)), 1, []operators.TensorShape{f32(1, 3, 227, 227), unknown},
			[]int{-1, 3, 3, 3}, 0, ""},
		{"conv bias, filter unknown", op("Conv", netdef.ArgInt("kernel", 3)), 2, []operators.TensorShape{f32(1, 3, 227, 227), unknown, unknown},
			[]int{-1}, 0, ""},
		{"conv bias after its filter", op("Conv", netdef.ArgInt("kernel", 3)), 2, []operators.TensorShape{f32(1, 3, 227, 227), f32(64, 3, 3, 3), unknown},
			[]int{64}, -1, ""},
		{"grouped NHWC conv, kernel_h and kernel_w", op("Conv", netdef.ArgString("order", "NHWC"), netdef.ArgInt("group", 2), netdef.ArgInt("kernel_h", 5), netdef.ArgInt("kernel_w", 3)), 1,
			[]operators.TensorShape{f32(1, 32, 32, 8), unknown}, []int{-1, 5, 3, 4}, 0, ""},
		{"3-D conv, kernels", op("Conv3D", netdef.ArgInts("kernels", 3, 2, 1)), 1, []operators.TensorShape{f32(2, 4, 8, 8, 8), unknown},
			[]int{-1, 4, 3, 2, 1}, 0, ""},
		{"conv without kernel", op("Conv"), 1, []operators.TensorShape{f32(1, 3, 8, 8), unknown}, nil, 0,
			"the operator has no kernel argument (kernel, kernels, or kernel_h and kernel_w)"},
		{"conv of a matrix", op("Conv", netdef.ArgInt("kernel", 3)), 1, []operators.TensorShape{f32(4, 3), unknown}, nil, 0,
			"its data input has shape [4 3], but a convolution needs N, C and spatial dimensions"},
		{"conv, channels not known", op("Conv", netdef.ArgInt("kernel", 3)), 1, []operators.TensorShape{f32(1, -1, 8, 8), unknown}, nil, 0,
			"the channels of its data input, of shape [1 ? 8 8], are not known"},
		{"conv input 3", op("Conv", netdef.ArgInt("kernel", 3)), 3, []operators.TensorShape{f32(1, 3, 8, 8), f32(4, 3, 3, 3), f32(4), unknown}, nil, 0,
			"-random-weights makes inputs 1 and 2 (filter and bias) of Conv only"},
		{"fc weights", op("FC"), 1, []operators.TensorShape{f32(2, 3, 4), unknown}, []int{-1, 12}, 0, ""},
		{"fc weights, axis 2", op("FC", netdef.ArgInt("axis", 2)), 1, []operators.TensorShape{f32(2, 3, 4), unknown}, []int{-1, 4}, 0, ""},
		{"transposed fc weights", op("FCTransposed"), 1, []operators.TensorShape{f32(2, 3, 4), unknown}, []int{12, -1}, 1, ""},
		{"fc bias after its weights", op("FC"), 2, []operators.TensorShape{f32(2, 12), f32(10, 12), unknown}, []int{10}, -1, ""},
		{"transposed fc bias after its weights", op("FCTransposed"), 2, []operators.TensorShape{f32(2, 12), f32(12, 10), unknown}, []int{10}, -1, ""},
		{"fc, batch known only", op("FC"), 1, []operators.TensorShape{f32(2, -1), unknown}, nil, 0,
			"its data input has shape [2 ?], whose size from axis 1 is not known"},
		{"fc, axis out of range", op("FC", netdef.ArgInt("axis", 3)), 1, []operators.TensorShape{f32(2, 12), unknown}, nil, 0,
			"axis 3 is out of range for its data input of shape [2 12]"},
		{"batch norm statistics", op("SpatialBN"), 4, []operators.TensorShape{f32(1, 8, 4, 4), f32(8), f32(8), f32(8), unknown}, []int{8}, -1, ""},
		{"NHWC batch norm scale", op("SpatialBN", netdef.ArgString("order", "NHWC")), 1, []operators.TensorShape{f32(1, 4, 4, 6), unknown}, []int{6}, -1, ""},
		{"per-channel Mul", op("Mul", netdef.ArgInt("broadcast", 1), netdef.ArgInt("axis", 1)), 1, []operators.TensorShape{f32(1, 8, 4, 4), unknown}, []int{8}, -1, ""},
		{"broadcast Add, last axis", op("Add", netdef.ArgInt("broadcast", 1)), 1, []operators.TensorShape{f32(1, 8, 4, 5), unknown}, []int{5}, -1, ""},
		{"Sub of one shape", op("Sub"), 1, []operators.TensorShape{f32(2, 3), unknown}, []int{2, 3}, -1, ""},
		{"Div of a partly known shape", op("Div"), 1, []operators.TensorShape{f32(-1, 3), unknown}, nil, 0,
			"its data input has shape [? 3], which is not fully known"},
		{"Mul input 2", op("Mul"), 2, []operators.TensorShape{f32(2, 3), f32(2, 3), unknown}, nil, 0, "-random-weights makes input 1 of Mul only"},
		{"no rule", op("Relu"), 1, []operators.TensorShape{f32(2, 3), unknown}, nil, 0,
			"-random-weights makes the parameters of Conv, FC, FCTransposed, SpatialBN, Add, Sub, Mul and Div only"},
	} {
		dims, open, err := paramShape(tc.op, tc.k, tc.in)
		if tc.errWant != "" {
			if err == nil || err.Error() != tc.errWant {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.errWant)
			}
			continue
		}
		if err != nil || !slices.Equal(dims, tc.dims) || open != tc.open {
			t.Errorf("%s: %v, open %d, error %v; want %v, open %d", tc.name, dims, open, err, tc.dims, tc.open)
		}
	}
}

// TestFillRandomWeights makes the parameters of a small convolutional net
// and checks their shapes, types and ranges, and the errors for a data
// input whose shape inference cannot follow.
func TestFillRandomWeights(t *testing.T) {
	n := netdef.NewNet("cnn")
	n.Op("Conv", []string{"data", "conv_w", "conv_b"}, []string{"conv"}, netdef.ArgInt("kernel", 3), netdef.ArgInt("pad", 1))
	n.Op("SpatialBN", []string{"conv", "bn_s", "bn_b", "bn_m", "bn_v"}, []string{"conv"}, netdef.ArgInt("is_test", 1))
	n.Op("FC", []string{"conv", "fc_w", "fc_b"}, []string{"fc"})
	for _, dt := range []blob.DataType{blob.Float32, blob.Float64} {
		ws := workspace.New(t.TempDir())
		data, err := blob.New(dt, 2, 3, 5, 5)
		if err != nil {
			t.Fatal(err)
		}
		if err := ws.FeedBlob("data", data); err != nil {
			t.Fatal(err)
		}
		made, err := fillRandomWeights(ws, n.Proto(), 4, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatalf("%v data: %v", dt, err)
		}
		if made.count != 8 || !made.usedWidth {
			t.Errorf("%v data: made %+v, want 8 parameters and -width used", dt, made)
		}
		for _, p := range []struct {
			name   string
			dims   []int
			lo, hi float64
		}{
			{"conv_w", []int{4, 3, 3, 3}, -math.Sqrt(3.0 / 27), math.Sqrt(3.0 / 27)},
			{"conv_b", []int{4}, 0.5, 1.5},
			{"bn_v", []int{4}, 0.5, 1.5},
			{"fc_w", []int{4, 100}, -math.Sqrt(3.0 / 100), math.Sqrt(3.0 / 100)},
			{"fc_b", []int{4}, 0.5, 1.5},
		} {
			w, err := ws.FetchBlob(p.name)
			if err != nil {
				t.Fatalf("%v data: %v", dt, err)
			}
			if !slices.Equal(w.Dims(), p.dims) || w.DataType() != dt {
				t.Errorf("%v data: %s is %v %v, want %v", dt, p.name, w.DataType(), w.Dims(), p.dims)
			}
			for _, v := range w.AsFloat64s() {
				if v < p.lo-1e-6 || v > p.hi+1e-6 { // float32 rounding
					t.Errorf("%v data: %s holds %v, outside [%v, %v]", dt, p.name, v, p.lo, p.hi)
					break
				}
			}
		}
		if err := ws.CreateNet(n.Proto(), false); err != nil {
			t.Errorf("%v data: the made-up weights do not fit the net: %v", dt, err)
		}
		ws.Close()
	}

	opaque := netdef.NewNet("opaque")
	opaque.Op("OpWithoutShapeInference", []string{"data"}, []string{"h"})
	opaque.Op("FC", []string{"h", "w", "b"}, []string{"y"})
	ws := workspace.New(t.TempDir())
	defer ws.Close()
	if err := ws.FeedBlob("data", blob.MustFromSlice([]float32{1, 2}, 1, 2)); err != nil {
		t.Fatal(err)
	}
	_, err := fillRandomWeights(ws, opaque.Proto(), 4, rand.New(rand.NewPCG(1, 2)))
	want := `-random-weights: "w" (input 1 of operator 1, FC): its shape follows from the operator's data input "h", whose shape shape inference cannot tell before the net runs (operator 0, OpWithoutShapeInference, writes it); give it with -input w=d0xd1x...`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("after an operator without shape inference: error %v, want %q", err, want)
	}
}
