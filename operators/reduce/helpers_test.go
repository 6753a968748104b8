package reduce

import (
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// distinct returns n values that are pairwise at least 0.13 apart and at
// least 0.05 away from 0, in a seeded random order.
func distinct(n int, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([]float64, n)
	for i, p := range r.Perm(n) {
		out[i] = (float64(p)-float64(n)/2)*0.13 + 0.05
	}
	return out
}

// unravel returns the multi-index of flat position f in dims.
func unravel(f int, dims []int) []int {
	idx := make([]int, len(dims))
	for d := len(dims) - 1; d >= 0; d-- {
		idx[d] = f % dims[d]
		f /= dims[d]
	}
	return idx
}

// ravel returns the flat position of multi-index idx in dims.
func ravel(idx, dims []int) int {
	f := 0
	for d := range dims {
		f = f*dims[d] + idx[d]
	}
	return f
}

func prod(dims []int) int {
	n := 1
	for _, d := range dims {
		n *= d
	}
	return n
}

// checkDims fails unless got equals want.
func checkDims(t testing.TB, what string, got, want []int) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: shape %v, want %v", what, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: shape %v, want %v", what, got, want)
		}
	}
}

// gradientCase is one row of a numeric gradient check.
type gradientCase struct {
	name   string
	def    *netdef.OperatorDef
	inputs []*blob.Tensor
	input  int
}

func runGradientChecks(t *testing.T, cases []gradientCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := optest.CheckGradient(tc.def, tc.inputs, tc.input, optest.GradientCheck{}); err != nil {
				t.Error(err)
			}
		})
	}
}

// checkGradientDef compares the single gradient operator Caffe2 would emit
// for def (all outputs having gradients) with want.
func checkGradientDef(t *testing.T, def, want *netdef.OperatorDef) {
	t.Helper()
	gd, err := operators.GetGradientDefs(def, optest.DenseGradients(def))
	if err != nil {
		t.Fatalf("%s: %v", def.GetType(), err)
	}
	if len(gd.Ops) != 1 {
		t.Fatalf("%s: %d gradient ops, want 1", def.GetType(), len(gd.Ops))
	}
	if got := optest.SortedArgs(gd.Ops[0]); !proto.Equal(got, optest.SortedArgs(want)) {
		t.Errorf("%s gradient:\n got %v\nwant %v", def.GetType(), got, want)
	}
	if g := gd.InputGrad[0]; g.Dense != def.Input[0]+"_grad" {
		t.Errorf("%s: input 0 gradient %+v", def.GetType(), g)
	}
	for i := 1; i < len(def.Input); i++ {
		if !gd.InputGrad[i].IsNone() {
			t.Errorf("%s: input %d (%q) has gradient %+v, want none", def.GetType(), i, def.Input[i], gd.InputGrad[i])
		}
	}
}
