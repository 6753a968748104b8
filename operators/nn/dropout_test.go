package nn

import (
	"math"
	"slices"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
)

func TestDropoutTestMode(t *testing.T) {
	for _, dt := range []blob.DataType{blob.Float32, blob.Float64} {
		x := rounded(dt, randVals(newRand(41), 12, -2, 2))
		for _, outs := range [][]string{{"Y"}, {"Y", "mask"}} {
			def := opDef("Dropout", []string{"X"}, outs, argInt("is_test", 1), argFloat("ratio", 0.7))
			out := optest.MustRunOp(t, def, tensorOf(dt, x, 3, 4))
			expectTensor(t, "Y", out[0], dt, []int{3, 4}, x, 0)
		}
		// In place.
		w := optest.NewWorkspace()
		w.Feed("X", tensorOf(dt, x, 3, 4))
		if err := w.Run(opDef("Dropout", []string{"X"}, []string{"X"}, argInt("is_test", 1))); err != nil {
			t.Fatal(err)
		}
		expectTensor(t, "X", w.Tensor("X"), dt, []int{3, 4}, x, 0)

		// The test-mode gradient is a copy, with or without the mask input.
		dy := rounded(dt, randVals(newRand(42), 12, -2, 2))
		out := optest.MustRunOp(t, opDef("DropoutGrad", []string{"dY"}, []string{"dX"}, argInt("is_test", 1)), tensorOf(dt, dy, 4, 3))
		expectTensor(t, "dX", out[0], dt, []int{4, 3}, dy, 0)
		out = optest.MustRunOp(t, opDef("DropoutGrad", []string{"dY", "mask"}, []string{"dX"}, argInt("is_test", 1)),
			tensorOf(dt, dy, 4, 3), blob.MustFromSlice(make([]bool, 12), 4, 3))
		expectTensor(t, "dX", out[0], dt, []int{4, 3}, dy, 0)
	}
}

func TestDropoutTraining(t *testing.T) {
	const n = 20000
	for _, dt := range []blob.DataType{blob.Float32, blob.Float64} {
		for _, ratio := range []float32{0, 0.3, 0.5, 0.9} {
			x := rounded(dt, randVals(newRand(43), n, -2, 2))
			def := optest.Seeded(opDef("Dropout", []string{"X"}, []string{"Y", "mask"}, argFloat("ratio", ratio)), 7)
			out := optest.MustRunOp(t, def, tensorOf(dt, x, 100, n/100))
			if out[1].DataType() != blob.Bool || !slices.Equal(out[1].Dims(), []int{100, n / 100}) {
				t.Fatalf("mask is %v %v", out[1].DataType(), out[1].Dims())
			}
			mask := blob.Data[bool](out[1])
			kept := 0
			want := make([]float64, n)
			scale := 1 / (1 - float64(ratio))
			for i, m := range mask {
				if m {
					kept++
					want[i] = x[i] * scale
				}
			}
			frac := float64(kept) / n
			if math.Abs(frac-(1-float64(ratio))) > 0.015 {
				t.Errorf("ratio %v: kept %.4f of the elements", ratio, frac)
			}
			expectTensor(t, "Y", out[0], dt, []int{100, n / 100}, want, 1e-6)

			// Same seed, same mask; another seed, another mask.
			again := optest.MustRunOp(t, def, tensorOf(dt, x, 100, n/100))
			if !slices.Equal(blob.Data[bool](again[1]), mask) {
				t.Errorf("ratio %v: the same seed gave another mask", ratio)
			}
			if ratio > 0 {
				other := optest.MustRunOp(t, optest.Seeded(opDef("Dropout", []string{"X"}, []string{"Y", "mask"}, argFloat("ratio", ratio)), 8), tensorOf(dt, x, 100, n/100))
				if slices.Equal(blob.Data[bool](other[1]), mask) {
					t.Errorf("ratio %v: another seed gave the same mask", ratio)
				}
			}

			// DropoutGrad applies the same mask and scale.
			dy := rounded(dt, randVals(newRand(44), n, -2, 2))
			wantDx := make([]float64, n)
			for i, m := range mask {
				if m {
					wantDx[i] = dy[i] * scale
				}
			}
			g := optest.MustRunOp(t, opDef("DropoutGrad", []string{"dY", "mask"}, []string{"dX"}, argFloat("ratio", ratio)), tensorOf(dt, dy, n), out[1])
			expectTensor(t, "dX", g[0], dt, []int{n}, wantDx, 1e-6)
		}
	}
}

func TestDropoutInPlaceTraining(t *testing.T) {
	w := optest.NewWorkspace()
	x := []float64{1, 2, 3, 4, 5, 6, 7, 8}
	w.Feed("X", optest.F32(x, 8))
	if err := w.Run(optest.Seeded(opDef("Dropout", []string{"X"}, []string{"X", "mask"}), 3)); err != nil {
		t.Fatal(err)
	}
	mask := blob.Data[bool](w.Tensor("mask"))
	want := make([]float64, len(x))
	for i, m := range mask {
		if m {
			want[i] = 2 * x[i]
		}
	}
	expectTensor(t, "X", w.Tensor("X"), blob.Float32, []int{8}, want, 0)
}

func TestDropoutErrors(t *testing.T) {
	x := optest.F32([]float64{1, 2, 3}, 3)
	cases := []struct {
		name   string
		def    *netdef.OperatorDef
		inputs []*blob.Tensor
	}{
		{"ratio 1", opDef("Dropout", []string{"X"}, []string{"Y", "mask"}, argFloat("ratio", 1)), []*blob.Tensor{x}},
		{"negative ratio", opDef("Dropout", []string{"X"}, []string{"Y", "mask"}, argFloat("ratio", -0.1)), []*blob.Tensor{x}},
		{"gradient ratio", opDef("DropoutGrad", []string{"X", "mask"}, []string{"Y"}, argFloat("ratio", 1.5)), []*blob.Tensor{x, blob.MustFromSlice([]bool{true, false, true}, 3)}},
		{"training without mask", opDef("Dropout", []string{"X"}, []string{"Y"}), []*blob.Tensor{x}},
		{"gradient without mask", opDef("DropoutGrad", []string{"X"}, []string{"Y"}), []*blob.Tensor{x}},
		{"mask type", opDef("DropoutGrad", []string{"X", "mask"}, []string{"Y"}), []*blob.Tensor{x, optest.F32([]float64{1, 0, 1}, 3)}},
		{"mask size", opDef("DropoutGrad", []string{"X", "mask"}, []string{"Y"}), []*blob.Tensor{x, blob.MustFromSlice([]bool{true, false}, 2)}},
		{"int input", opDef("Dropout", []string{"X"}, []string{"Y", "mask"}), []*blob.Tensor{blob.MustFromSlice([]int64{1}, 1)}},
		{"mask in place", opDef("Dropout", []string{"X"}, []string{"Y", "X"}), []*blob.Tensor{x}},
	}
	for _, tc := range cases {
		if _, err := optest.RunOp(tc.def, tc.inputs...); err == nil {
			t.Errorf("%s: no error", tc.name)
		} else {
			t.Logf("%s: %v", tc.name, err)
		}
	}
	// The training-mode gradient needs the mask output.
	def := opDef("Dropout", []string{"X"}, []string{"Y"})
	if _, err := operators.GetGradientDefs(def, []operators.Gradient{operators.Dense("Y_grad")}); err == nil {
		t.Error("gradient of a training Dropout without a mask output: no error")
	}
}
