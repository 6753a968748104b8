package nn

import (
	"fmt"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// TestNumericGradients checks every differentiable operator of the package
// against finite differences, one row per operator, configuration and
// input.
func TestNumericGradients(t *testing.T) {
	type row struct {
		name   string
		def    *netdef.OperatorDef
		inputs []*blob.Tensor
		input  int
	}
	var rows []row
	add := func(name string, def *netdef.OperatorDef, inputs []*blob.Tensor, idx ...int) {
		for _, i := range idx {
			rows = append(rows, row{fmt.Sprintf("%s/d%s", name, def.Input[i]), def, inputs, i})
		}
	}
	r := newRand(51)
	x := func(shape ...int) *blob.Tensor { return optest.F32(randVals(r, numel(shape), -1, 1), shape...) }
	x64 := func(shape ...int) *blob.Tensor {
		return tensorOf(blob.Float64, randVals(r, numel(shape), -1, 1), shape...)
	}
	kinked := func(shape ...int) *blob.Tensor { return optest.F32(awayFromZero(r, numel(shape)), shape...) }

	add("Relu", opDef("Relu", []string{"X"}, []string{"Y"}), []*blob.Tensor{kinked(3, 4)}, 0)
	add("LeakyRelu", opDef("LeakyRelu", []string{"X"}, []string{"Y"}, argFloat("alpha", 0.2)), []*blob.Tensor{kinked(3, 4)}, 0)
	add("LeakyRelu default alpha", opDef("LeakyRelu", []string{"X"}, []string{"Y"}), []*blob.Tensor{kinked(2, 5)}, 0)
	add("Sigmoid", opDef("Sigmoid", []string{"X"}, []string{"Y"}), []*blob.Tensor{optest.F32(randVals(r, 12, -3, 3), 3, 4)}, 0)
	add("Tanh", opDef("Tanh", []string{"X"}, []string{"Y"}), []*blob.Tensor{optest.F32(randVals(r, 12, -2, 2), 3, 4)}, 0)
	add("Tanh double", opDef("Tanh", []string{"X"}, []string{"Y"}), []*blob.Tensor{x64(3, 4)}, 0)
	add("Softmax", opDef("Softmax", []string{"X"}, []string{"Y"}), []*blob.Tensor{x(2, 3, 4)}, 0)
	add("Softmax axis 2", opDef("Softmax", []string{"X"}, []string{"Y"}, argInt("axis", 2)), []*blob.Tensor{x(2, 3, 4)}, 0)
	add("Softmax double", opDef("Softmax", []string{"X"}, []string{"Y"}), []*blob.Tensor{x64(3, 5)}, 0)

	fcIn := []string{"X", "W", "b"}
	add("FC", opDef("FC", fcIn, []string{"Y"}), []*blob.Tensor{x(3, 4), x(5, 4), x(5)}, 0, 1, 2)
	add("FC axis 2", opDef("FC", fcIn, []string{"Y"}, argInt("axis", 2)), []*blob.Tensor{x(2, 3, 4), x(2, 4), x(2)}, 0, 1, 2)
	add("FC axis_w 2", opDef("FC", fcIn, []string{"Y"}, argInt("axis_w", 2)), []*blob.Tensor{x(2, 3), x(2, 2, 3), x(4)}, 0, 1, 2)
	add("FC double", opDef("FC", fcIn, []string{"Y"}), []*blob.Tensor{x64(2, 3, 2), x64(4, 6), x64(4)}, 0, 1, 2)
	add("FCTransposed", opDef("FCTransposed", fcIn, []string{"Y"}), []*blob.Tensor{x(3, 4), x(4, 5), x(5)}, 0, 1, 2)
	add("FCTransposed axis 2", opDef("FCTransposed", fcIn, []string{"Y"}, argInt("axis", 2)), []*blob.Tensor{x(2, 2, 3), x(3, 2), x(2)}, 0, 1, 2)

	for _, tA := range []int64{0, 1} {
		for _, tB := range []int64{0, 1} {
			as, bs := []int{3, 4}, []int{4, 5}
			if tA == 1 {
				as = []int{4, 3}
			}
			if tB == 1 {
				bs = []int{5, 4}
			}
			name := fmt.Sprintf("MatMul tA%d tB%d", tA, tB)
			add(name, opDef("MatMul", []string{"A", "B"}, []string{"Y"}, argInt("trans_a", tA), argInt("trans_b", tB)), []*blob.Tensor{x(as...), x(bs...)}, 0, 1)

			bas, bbs := append([]int{2}, as...), append([]int{2}, bs...)
			name = fmt.Sprintf("BatchMatMul tA%d tB%d", tA, tB)
			add(name, opDef("BatchMatMul", []string{"A", "B"}, []string{"Y"}, argInt("trans_a", tA), argInt("trans_b", tB)), []*blob.Tensor{x(bas...), x(bbs...)}, 0, 1)
		}
	}
	add("MatMul 3-D A", opDef("MatMul", []string{"A", "B"}, []string{"Y"}), []*blob.Tensor{x(3, 2, 2), x(4, 2)}, 0, 1)
	add("MatMul 3-D B", opDef("MatMul", []string{"A", "B"}, []string{"Y"}, argInt("trans_b", 1)), []*blob.Tensor{x(3, 4), x(2, 2, 2)}, 0, 1)
	add("MatMul axis_a 2 of 3-D A, axis_b 2 of 3-D B", opDef("MatMul", []string{"A", "B"}, []string{"Y"}, argInt("axis_a", 2), argInt("axis_b", 2)), []*blob.Tensor{x(2, 3, 4), x(2, 2, 5)}, 0, 1)
	add("MatMul axis_a 1 of 3-D A, trans_a", opDef("MatMul", []string{"A", "B"}, []string{"Y"}, argInt("trans_a", 1), argInt("axis_a", 1)), []*blob.Tensor{x(4, 3, 1), x(4, 2)}, 0, 1)
	add("MatMul double", opDef("MatMul", []string{"A", "B"}, []string{"Y"}), []*blob.Tensor{x64(3, 4), x64(4, 2)}, 0, 1)
	add("BatchMatMul 4-D", opDef("BatchMatMul", []string{"A", "B"}, []string{"Y"}), []*blob.Tensor{x(2, 2, 3, 2), x(2, 2, 2, 3)}, 0, 1)
	add("BatchMatMul double", opDef("BatchMatMul", []string{"A", "B"}, []string{"Y"}, argInt("trans_b", 1)), []*blob.Tensor{x64(2, 3, 2), x64(2, 4, 2)}, 0, 1)

	add("Dropout training", optest.Seeded(opDef("Dropout", []string{"X"}, []string{"Y", "mask"}, argFloat("ratio", 0.4)), 9), []*blob.Tensor{x(4, 5)}, 0)
	add("Dropout test", opDef("Dropout", []string{"X"}, []string{"Y"}, argInt("is_test", 1)), []*blob.Tensor{x(4, 5)}, 0)

	for _, rw := range rows {
		t.Run(rw.name, func(t *testing.T) {
			worst, err := optest.CheckGradient(rw.def, rw.inputs, rw.input, optest.GradientCheck{})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("worst scaled error %.2g", worst)
		})
	}
}

func parseOp(t *testing.T, text string) *netdef.OperatorDef {
	t.Helper()
	var op netdef.OperatorDef
	if err := prototext.Unmarshal([]byte(text), &op); err != nil {
		t.Fatalf("%v in %s", err, text)
	}
	return &op
}

// TestGradientDefs compares the emitted gradient operators with the ones
// Caffe2's gradient makers emit. Caffe2's serialized operator tests
// (tests/conformance_test.go) cover Relu, LeakyRelu, Tanh, Softmax, FC,
// MatMul and Dropout with is_test in their default configurations.
func TestGradientDefs(t *testing.T) {
	cases := []struct {
		name string
		fwd  string
		want []string
	}{
		{"sigmoid",
			`input: "X" output: "Y" type: "Sigmoid"`,
			[]string{`input: "Y" input: "Y_grad" output: "X_grad" name: "" type: "SigmoidGradient" is_gradient_op: true`}},
		{"softmax axis",
			`input: "X" output: "Y" type: "Softmax" arg { name: "axis" i: 2 }`,
			[]string{`input: "Y" input: "Y_grad" output: "X_grad" name: "" type: "SoftmaxGradient" arg { name: "axis" i: 2 } is_gradient_op: true`}},
		{"fc transposed",
			`input: "X" input: "W" input: "b" output: "Y" type: "FCTransposed" arg { name: "axis" i: 2 }`,
			[]string{`input: "X" input: "W" input: "Y_grad" output: "W_grad" output: "b_grad" output: "X_grad" name: "" type: "FCTransposedGradient" arg { name: "axis" i: 2 } is_gradient_op: true`}},
		{"matmul A'B",
			`input: "A" input: "B" output: "Y" type: "MatMul" arg { name: "trans_a" i: 1 } arg { name: "axis_b" i: 0 }`,
			[]string{
				`input: "B" input: "Y_grad" input: "A" output: "A_grad" name: "" type: "MatMul" arg { name: "trans_b" i: 1 } arg { name: "axis_a" i: 0 } is_gradient_op: true`,
				`input: "A" input: "Y_grad" input: "B" output: "B_grad" name: "" type: "MatMul" arg { name: "axis_a" i: 1 } is_gradient_op: true`,
			}},
		{"matmul AB' with axes past 1 (passed through, unlike Caffe2)",
			`input: "A" input: "B" output: "Y" type: "MatMul" arg { name: "trans_b" i: 1 } arg { name: "axis_a" i: 2 } arg { name: "axis_b" i: 3 }`,
			[]string{
				`input: "Y_grad" input: "B" input: "A" output: "A_grad" name: "" type: "MatMul" arg { name: "axis_b" i: 3 } is_gradient_op: true`,
				`input: "Y_grad" input: "A" input: "B" output: "B_grad" name: "" type: "MatMul" arg { name: "trans_a" i: 1 } arg { name: "axis_b" i: 2 } is_gradient_op: true`,
			}},
		{"matmul A'B'",
			`input: "A" input: "B" output: "Y" type: "MatMul" arg { name: "trans_a" i: 1 } arg { name: "trans_b" i: 1 }`,
			[]string{
				`input: "B" input: "Y_grad" input: "A" output: "A_grad" name: "" type: "MatMul" arg { name: "trans_a" i: 1 } arg { name: "trans_b" i: 1 } arg { name: "axis_a" i: 1 } is_gradient_op: true`,
				`input: "Y_grad" input: "A" input: "B" output: "B_grad" name: "" type: "MatMul" arg { name: "trans_a" i: 1 } arg { name: "trans_b" i: 1 } arg { name: "axis_b" i: 1 } is_gradient_op: true`,
			}},
		{"batch matmul",
			`input: "A" input: "B" output: "Y" type: "BatchMatMul" engine: "" device_option { device_type: 0 }`,
			[]string{
				`input: "Y_grad" input: "B" output: "A_grad" name: "" type: "BatchMatMul" arg { name: "trans_b" i: 1 } engine: "" device_option { device_type: 0 } is_gradient_op: true`,
				`input: "A" input: "Y_grad" output: "B_grad" name: "" type: "BatchMatMul" arg { name: "trans_a" i: 1 } engine: "" device_option { device_type: 0 } is_gradient_op: true`,
			}},
		{"batch matmul A'B",
			`input: "A" input: "B" output: "Y" type: "BatchMatMul" arg { name: "trans_a" i: 1 } arg { name: "broadcast" i: 0 }`,
			[]string{
				`input: "B" input: "Y_grad" output: "A_grad" name: "" type: "BatchMatMul" arg { name: "trans_b" i: 1 } is_gradient_op: true`,
				`input: "A" input: "Y_grad" output: "B_grad" name: "" type: "BatchMatMul" is_gradient_op: true`,
			}},
		{"batch matmul AB'",
			`input: "A" input: "B" output: "Y" type: "BatchMatMul" arg { name: "trans_b" i: 1 }`,
			[]string{
				`input: "Y_grad" input: "B" output: "A_grad" name: "" type: "BatchMatMul" is_gradient_op: true`,
				`input: "Y_grad" input: "A" output: "B_grad" name: "" type: "BatchMatMul" arg { name: "trans_a" i: 1 } is_gradient_op: true`,
			}},
		{"batch matmul A'B'",
			`input: "A" input: "B" output: "Y" type: "BatchMatMul" arg { name: "trans_a" i: 1 } arg { name: "trans_b" i: 1 }`,
			[]string{
				`input: "B" input: "Y_grad" output: "A_grad" name: "" type: "BatchMatMul" arg { name: "trans_a" i: 1 } arg { name: "trans_b" i: 1 } is_gradient_op: true`,
				`input: "Y_grad" input: "A" output: "B_grad" name: "" type: "BatchMatMul" arg { name: "trans_a" i: 1 } arg { name: "trans_b" i: 1 } is_gradient_op: true`,
			}},
		{"dropout training",
			`input: "X" output: "Y" output: "mask" type: "Dropout" arg { name: "ratio" f: 0.3 }`,
			[]string{`input: "Y_grad" input: "mask" output: "X_grad" name: "" type: "DropoutGrad" arg { name: "ratio" f: 0.3 } is_gradient_op: true`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fwd := parseOp(t, tc.fwd)
			gradOut := make([]operators.Gradient, len(fwd.Output))
			for i, o := range fwd.Output {
				if i == 0 {
					gradOut[i] = operators.Dense(operators.GradientName(o))
				}
			}
			gd, err := operators.GetGradientDefs(fwd, gradOut)
			if err != nil {
				t.Fatal(err)
			}
			if len(gd.Ops) != len(tc.want) {
				t.Fatalf("%d gradient ops, want %d", len(gd.Ops), len(tc.want))
			}
			for i, w := range tc.want {
				got, want := optest.SortedArgs(gd.Ops[i]), optest.SortedArgs(parseOp(t, w))
				if !proto.Equal(got, want) {
					t.Errorf("op %d:\n got %s\nwant %s", i, prototext.Format(got), prototext.Format(want))
				}
			}
			// Every forward input that is differentiable gets X_grad.
			for i, in := range fwd.Input {
				if g := gd.InputGrad[i]; g.Dense != in+"_grad" {
					t.Errorf("input %d (%s): gradient %+v", i, in, g)
				}
			}
		})
	}
}

func TestGradientErrors(t *testing.T) {
	for _, def := range []*netdef.OperatorDef{
		opDef("BatchMatMul", []string{"A", "B"}, []string{"Y"}, argInt("broadcast", 1)),
		opDef("Dropout", []string{"X"}, []string{"Y"}),
	} {
		if _, err := operators.GetGradientDefs(def, []operators.Gradient{operators.Dense("Y_grad")}); err == nil {
			t.Errorf("%s: no error", prototext.Format(def))
		} else {
			t.Logf("%v", err)
		}
	}
}
