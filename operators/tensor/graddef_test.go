package tensor

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
)

var gop = optest.GradOp

// TestGradientDefs checks the exact gradient operators (types, inputs,
// outputs, arguments in order) and input gradients against what Caffe2's
// gradient makers produce.
func TestGradientDefs(t *testing.T) {
	x, y := []string{"X"}, []string{"Y"}
	dense := operators.Dense
	withDev := op("Transpose", x, y, argIs("axes", 1, 2, 0), argI("foo", 3))
	withDev.DeviceOption = netdef.NewDeviceOption(netdef.CPU, 1)
	withDev.Engine = proto.String("E")
	wantDev := gop("Transpose", []string{"Y_grad"}, []string{"X_grad"}, argIs("axes", 2, 0, 1), argI("foo", 3))
	wantDev.DeviceOption = netdef.NewDeviceOption(netdef.CPU, 1)
	wantDev.Engine = proto.String("E")

	cases := []struct {
		name     string
		def      *netdef.OperatorDef
		withGrad []int
		want     []*netdef.OperatorDef
		inGrad   []operators.Gradient
	}{
		{"Copy", op("Copy", x, y), []int{0},
			[]*netdef.OperatorDef{gop("CopyOnDeviceLike", []string{"Y_grad", "X"}, []string{"X_grad"})},
			[]operators.Gradient{dense("X_grad")}},
		{"Alias", op("Alias", x, y), []int{0}, nil, []operators.Gradient{dense("Y_grad")}},
		{"StopGradient", op("StopGradient", x, y), []int{0}, nil, []operators.Gradient{{}}},
		{"EnsureCPUOutput", op("EnsureCPUOutput", x, y), []int{0}, nil, []operators.Gradient{{}}},
		{"OneHot", op("OneHot", []string{"I", "N"}, y), []int{0}, nil, []operators.Gradient{{}, {}}},
		{"Reshape", op("Reshape", x, []string{"Y", "old"}, argIs("shape", -1)), []int{0},
			[]*netdef.OperatorDef{gop("Reshape", []string{"Y_grad", "old"}, []string{"X_grad", "_X_grad_dims"})},
			[]operators.Gradient{dense("X_grad")}},
		{"Reshape/input", op("Reshape", []string{"X", "S"}, []string{"Y", "old"}), []int{0, 1},
			[]*netdef.OperatorDef{gop("Reshape", []string{"Y_grad", "old"}, []string{"X_grad", "_X_grad_dims"})},
			[]operators.Gradient{dense("X_grad"), {}}},
		{"Flatten", op("Flatten", x, y, argI("axis", 2)), []int{0},
			[]*netdef.OperatorDef{gop("ResizeLike", []string{"Y_grad", "X"}, []string{"X_grad"}, argI("axis", 2))},
			[]operators.Gradient{dense("X_grad")}},
		{"FlattenToVec", op("FlattenToVec", x, y), []int{0},
			[]*netdef.OperatorDef{gop("ResizeLike", []string{"Y_grad", "X"}, []string{"X_grad"})},
			[]operators.Gradient{dense("X_grad")}},
		{"ExpandDims", op("ExpandDims", x, y, argIs("dims", 0)), []int{0},
			[]*netdef.OperatorDef{gop("Squeeze", []string{"Y_grad"}, []string{"X_grad"}, argIs("dims", 0))},
			[]operators.Gradient{dense("X_grad")}},
		{"Squeeze", op("Squeeze", x, y, argIs("dims", 1)), []int{0},
			[]*netdef.OperatorDef{gop("ExpandDims", []string{"Y_grad"}, []string{"X_grad"}, argIs("dims", 1))},
			[]operators.Gradient{dense("X_grad")}},
		{"Concat", op("Concat", []string{"A", "B"}, []string{"Y", "info"}, argI("axis", 0)), []int{0},
			[]*netdef.OperatorDef{gop("Split", []string{"Y_grad", "info"}, []string{"A_grad", "B_grad"}, argI("axis", 0))},
			[]operators.Gradient{dense("A_grad"), dense("B_grad")}},
		{"Concat/no-output-gradient", op("Concat", []string{"A", "B"}, []string{"Y", "info"}), []int{1},
			nil, []operators.Gradient{{}, {}}},
		{"Split", op("Split", x, []string{"A", "B"}, argI("axis", 1), argIs("split", 1, 2)), []int{0, 1},
			[]*netdef.OperatorDef{gop("Concat", []string{"A_grad", "B_grad"}, []string{"X_grad", "_X_grad_dims"}, argI("axis", 1), argIs("split", 1, 2))},
			[]operators.Gradient{dense("X_grad")}},
		{"Split/partial", op("Split", []string{"X", "S"}, []string{"A", "B", "C"}), []int{0, 2},
			[]*netdef.OperatorDef{gop("Concat", []string{"A_grad", "C_grad"}, []string{"X_grad", "_X_grad_dims"})},
			[]operators.Gradient{dense("X_grad"), {}}},
		{"Split/none", op("Split", x, []string{"A", "B"}), nil, nil, []operators.Gradient{{}}},
		{"Transpose/default", op("Transpose", x, y), []int{0},
			[]*netdef.OperatorDef{gop("Transpose", []string{"Y_grad"}, []string{"X_grad"})},
			[]operators.Gradient{dense("X_grad")}},
		{"Transpose/axes", withDev, []int{0}, []*netdef.OperatorDef{wantDev}, []operators.Gradient{dense("X_grad")}},
		{"Cast", op("Cast", x, y, argStr("to", "double"), argI("from_type", 1), argI("other", 7)), []int{0},
			[]*netdef.OperatorDef{gop("Cast", []string{"Y_grad"}, []string{"X_grad"}, argI("to", 1), argI("from_type", 13))},
			[]operators.Gradient{dense("X_grad")}},
		{"Gather", op("Gather", []string{"D", "I"}, y), []int{0}, nil,
			[]operators.Gradient{{Indices: "I", Values: "Y_grad"}, {}}},
		{"Gather/dense", op("Gather", []string{"D", "I"}, y, argI("dense_gradient", 1)), []int{0},
			[]*netdef.OperatorDef{gop("SparseToDense", []string{"I", "Y_grad", "D"}, []string{"D_grad"}, argI("dense_gradient", 1))},
			[]operators.Gradient{dense("D_grad"), {}}},
		{"Gather/axis", op("Gather", []string{"D", "I"}, y, argI("axis", 2)), []int{0},
			[]*netdef.OperatorDef{gop("BatchGatherGradient", []string{"D", "I", "Y_grad"}, []string{"D_grad"}, argI("axis", 2), argI("axis", 2))},
			[]operators.Gradient{dense("D_grad"), {}}},
		{"Tile", op("Tile", x, y, argI("tiles", 2), argI("axis", 1)), []int{0},
			[]*netdef.OperatorDef{gop("TileGradient", []string{"Y_grad"}, []string{"X_grad"}, argI("tiles", 2), argI("axis", 1))},
			[]operators.Gradient{dense("X_grad")}},
		{"Tile/inputs", op("Tile", []string{"X", "T", "A"}, y), []int{0},
			[]*netdef.OperatorDef{gop("TileGradient", []string{"Y_grad", "T", "A"}, []string{"X_grad"})},
			[]operators.Gradient{dense("X_grad"), {}, {}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			gd := gradDefs(t, c.def, c.withGrad...)
			if len(gd.Ops) != len(c.want) {
				t.Fatalf("%d gradient operators %v, want %d", len(gd.Ops), gd.Ops, len(c.want))
			}
			for i, w := range c.want {
				if !proto.Equal(gd.Ops[i], w) {
					t.Errorf("gradient operator %d:\n got %v\nwant %v", i, gd.Ops[i], w)
				}
			}
			for i, w := range c.inGrad {
				if gd.InputGrad[i] != w {
					t.Errorf("gradient of input %d (%s) = %+v, want %+v", i, c.def.Input[i], gd.InputGrad[i], w)
				}
			}
		})
	}
}

func TestGradientErrors(t *testing.T) {
	cases := []struct {
		name string
		def  *netdef.OperatorDef
		frag string
	}{
		{"Print", op("Print", []string{"X"}, nil), "should not do gradient"},
		{"ResizeLike", op("ResizeLike", []string{"X", "L"}, []string{"Y"}), "should not do gradient"},
		{"Shape", op("Shape", []string{"X"}, []string{"Y"}), "should not do gradient"},
		{"Cast/no-from_type", op("Cast", []string{"X"}, []string{"Y"}, argI("to", 10)), "from_type"},
		{"Cast/bad-name", op("Cast", []string{"X"}, []string{"Y"}, argStr("to", "quux"), argI("from_type", 1)), "QUUX"},
		{"Transpose/bad-axes", op("Transpose", []string{"X"}, []string{"Y"}, argIs("axes", 0, 0)), "not a permutation"},
		{"Gather/axis-sparse", op("Gather", []string{"D", "I"}, []string{"Y"}, argI("axis", 1), argI("dense_gradient", 0)), "dense_gradient"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := operators.GetGradientDefs(c.def, optest.DenseGradients(c.def))
			wantErr(t, err, c.frag)
		})
	}
}
