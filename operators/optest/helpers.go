package optest

import (
	"math"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

// F32 returns a float32 tensor of the given shape holding values rounded to
// float32.
func F32(values []float64, shape ...int) *blob.Tensor {
	v := make([]float32, len(values))
	for i, x := range values {
		v[i] = float32(x)
	}
	return blob.MustFromSlice(v, shape...)
}

// MustRunOp is RunOp that fails tb on an error.
func MustRunOp(tb testing.TB, def *netdef.OperatorDef, inputs ...*blob.Tensor) []*blob.Tensor {
	tb.Helper()
	out, err := RunOp(def, inputs...)
	if err != nil {
		tb.Fatalf("%s: %v", def.GetType(), err)
	}
	return out
}

// Seeded gives def a device option with random_seed seed, so that a random
// operator draws the same numbers on every run, and returns def.
func Seeded(def *netdef.OperatorDef, seed uint32) *netdef.OperatorDef {
	def.DeviceOption = &netdef.DeviceOption{RandomSeed: proto.Uint32(seed)}
	return def
}

// GradOp builds an expected gradient operator the way gradient makers emit
// it and Caffe2 serializes it: an empty name and is_gradient_op set.
func GradOp(typ string, inputs, outputs []string, args ...*netdef.Argument) *netdef.OperatorDef {
	op := netdef.NewOperator(typ, inputs, outputs, args...)
	op.Name = proto.String("")
	op.IsGradientOp = proto.Bool(true)
	return op
}

// DenseGradients returns, for operators.GetGradientDefs, a dense gradient
// named X_grad for every output X of def.
func DenseGradients(def *netdef.OperatorDef) []operators.Gradient {
	g := make([]operators.Gradient, len(def.GetOutput()))
	for i, out := range def.GetOutput() {
		g[i] = operators.Dense(operators.GradientName(out))
	}
	return g
}

// CheckClose fails tb unless got and want have one length and every
// |got[i] − want[i]| ≤ tol·max(1, |want[i]|); a NaN matches nothing.
func CheckClose(tb testing.TB, what string, got, want []float64, tol float64) {
	tb.Helper()
	if len(got) != len(want) {
		tb.Fatalf("%s: %d elements, want %d", what, len(got), len(want))
	}
	for i := range got {
		if d := math.Abs(got[i] - want[i]); !(d <= tol*math.Max(1, math.Abs(want[i]))) {
			tb.Fatalf("%s[%d] = %.9g, want %.9g", what, i, got[i], want[i])
		}
	}
}

// RefSoftmax is a naive softmax of the rows of x, d elements each: a
// reference to compare softmax operators with.
func RefSoftmax(x []float64, d int) []float64 {
	y := make([]float64, len(x))
	for r := 0; r < len(x)/d; r++ {
		var s float64
		for j := 0; j < d; j++ {
			s += math.Exp(x[r*d+j])
		}
		for j := 0; j < d; j++ {
			y[r*d+j] = math.Exp(x[r*d+j]) / s
		}
	}
	return y
}
