package image

import (
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/optest"
)

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x1a9e)) }

func numel(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// randF32 returns a float32 tensor of the shape with values uniform in
// [-1, 1).
func randF32(r *rand.Rand, shape ...int) *blob.Tensor {
	v := make([]float64, numel(shape))
	for i := range v {
		v[i] = 2*r.Float64() - 1
	}
	return optest.F32(v, shape...)
}

// golden reads testdata/torch/name.npy, written by testdata/gen_golden.py.
func golden(t testing.TB, name string) *blob.Tensor {
	t.Helper()
	g, err := optest.ReadNPY(filepath.Join("testdata", "torch", name+".npy"))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// toF64 returns a float64 copy of a float tensor.
func toF64(x *blob.Tensor) *blob.Tensor { return blob.MustFromSlice(x.AsFloat64s(), x.Shape()...) }

// checkTensor fails t unless got has the type, the shape and, within
// optest.CheckClose's tolerance tol, the values.
func checkTensor(t testing.TB, what string, got *blob.Tensor, dtype blob.DataType, shape []int, want []float64, tol float64) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: no tensor", what)
	}
	if got.DataType() != dtype || !slices.Equal(got.Dims(), shape) {
		t.Fatalf("%s: %v %v, want %v %v", what, got.DataType(), got.Dims(), dtype, shape)
	}
	optest.CheckClose(t, what, got.AsFloat64s(), want, tol)
}

// checkLike compares got with the golden want (type dtype, want's shape).
func checkLike(t testing.TB, what string, got *blob.Tensor, dtype blob.DataType, want *blob.Tensor, tol float64) {
	t.Helper()
	checkTensor(t, what, got, dtype, want.Dims(), want.AsFloat64s(), tol)
}

// runGradient runs the gradient operators that def's registered maker
// emits for dense output gradients named <output>_grad, in a workspace fed
// with feeds, and returns that workspace.
func runGradient(t testing.TB, def *netdef.OperatorDef, feeds map[string]*blob.Tensor) *optest.Workspace {
	t.Helper()
	gd, err := operators.GetGradientDefs(def, optest.DenseGradients(def))
	if err != nil {
		t.Fatal(err)
	}
	w := optest.NewWorkspace()
	for name, v := range feeds {
		w.Feed(name, v)
	}
	for _, op := range gd.Ops {
		if err := w.Run(op); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// checkGradDefs fails t unless def's gradient maker emits exactly want.
func checkGradDefs(t *testing.T, def *netdef.OperatorDef, want ...*netdef.OperatorDef) {
	t.Helper()
	gd, err := operators.GetGradientDefs(def, optest.DenseGradients(def))
	if err != nil {
		t.Fatal(err)
	}
	if len(gd.Ops) != len(want) {
		t.Fatalf("%s: %d gradient operators, want %d", def.GetType(), len(gd.Ops), len(want))
	}
	for i := range want {
		if !proto.Equal(optest.SortedArgs(gd.Ops[i]), optest.SortedArgs(want[i])) {
			t.Errorf("%s: gradient operator %d is\n%v\nwant\n%v", def.GetType(), i, gd.Ops[i], want[i])
		}
	}
}

// expectError fails t unless running def on inputs fails with an error
// containing frag.
func expectError(t *testing.T, name string, def *netdef.OperatorDef, frag string, inputs ...*blob.Tensor) {
	t.Helper()
	_, err := optest.RunOp(def, inputs...)
	if err == nil || !strings.Contains(err.Error(), frag) {
		t.Errorf("%s: error %v, want one containing %q", name, err, frag)
	}
}
