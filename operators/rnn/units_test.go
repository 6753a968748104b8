package rnn_test

//go:generate python3 testdata/gen_units.py

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
	_ "github.com/caffe2go/caffe2go/operators/std"
)

// golden is testdata/units.json, PyTorch's LSTMCell and GRUCell on the same
// gates (see gen_units.py).
type golden struct {
	N, D, T      int
	Lengths      []int32
	ForgetBias   float32 `json:"forget_bias"`
	LSTM, GRU    map[string][]float32
	TorchVersion string `json:"torch"`
}

func readGolden(t *testing.T) golden {
	t.Helper()
	b, err := os.ReadFile("testdata/units.json")
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

func check(t *testing.T, what string, got *blob.Tensor, want []float32) {
	t.Helper()
	v := blob.Data[float32](got)
	if len(v) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(v), len(want))
	}
	for i := range v {
		if d := math.Abs(float64(v[i] - want[i])); d > 1e-5*math.Max(1, math.Abs(float64(want[i]))) {
			t.Errorf("%s[%d] = %g, PyTorch %g", what, i, v[i], want[i])
		}
	}
}

// TestLSTMUnitMatchesTorch checks LSTMUnit and its gradient against
// PyTorch's LSTMCell, which orders the gates i, f, g, o where Caffe2 orders
// them i, f, o, g, with a forget bias and sequences that have ended.
func TestLSTMUnitMatchesTorch(t *testing.T) {
	g := readGolden(t)
	n, d := g.N, g.D
	state := func(v []float32) *blob.Tensor { return blob.MustFromSlice(v, 1, n, d) }
	gates := blob.MustFromSlice(g.LSTM["gates"], 1, n, 4*d)
	def := netdef.NewOperator("LSTMUnit", []string{"h_prev", "c_prev", "gates", "seq_lengths", "t"}, []string{"h", "c"},
		netdef.ArgFloat("forget_bias", g.ForgetBias))
	in := []*blob.Tensor{state(g.LSTM["h_prev"]), state(g.LSTM["c_prev"]), gates, blob.MustFromSlice(g.Lengths, n), blob.MustFromSlice([]int32{int32(g.T)}, 1)}
	res, err := optest.Gradients(def, in, []int{0, 1}, 0, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	check(t, "h", res.Y[0], g.LSTM["h"])
	check(t, "c", res.Y[1], g.LSTM["c"])
	check(t, "h_prev_grad", res.Inputs[0], g.LSTM["h_prev_grad"])
	check(t, "c_prev_grad", res.Inputs[1], g.LSTM["c_prev_grad"])
	check(t, "gates_grad", res.Inputs[2], g.LSTM["gates_grad"])
}

// TestGRUUnitMatchesTorch checks GRUUnit and its gradient against PyTorch's
// GRUCell with no recurrent weights (so its reset gate, which Caffe2's step
// net applies before GRUUnit, has no effect and no gradient).
func TestGRUUnitMatchesTorch(t *testing.T) {
	g := readGolden(t)
	n, d := g.N, g.D
	def := netdef.NewOperator("GRUUnit", []string{"h_prev", "gates", "seq_lengths", "t"}, []string{"h"})
	in := []*blob.Tensor{blob.MustFromSlice(g.GRU["h_prev"], 1, n, d), blob.MustFromSlice(g.GRU["gates"], 1, n, 3*d),
		blob.MustFromSlice(g.Lengths, n), blob.MustFromSlice([]int32{int32(g.T)}, 1)}
	res, err := optest.Gradients(def, in, []int{0}, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	check(t, "h", res.Y[0], g.GRU["h"])
	check(t, "h_prev_grad", res.Inputs[0], g.GRU["h_prev_grad"])
	check(t, "gates_grad", res.Inputs[1], g.GRU["gates_grad"])
}

// TestUnitErrors: malformed inputs are errors that name the blob.
func TestUnitErrors(t *testing.T) {
	f := func(shape ...int) *blob.Tensor {
		n := 1
		for _, d := range shape {
			n *= d
		}
		return blob.MustFromSlice(make([]float32, n), shape...)
	}
	lstm := func(args ...*netdef.Argument) *netdef.OperatorDef {
		return netdef.NewOperator("LSTMUnit", []string{"h_prev", "c_prev", "gates", "seq_lengths", "t"}, []string{"h", "c"}, args...)
	}
	for _, c := range []struct {
		name string
		def  *netdef.OperatorDef
		in   []*blob.Tensor
	}{
		{"gates too narrow", lstm(), []*blob.Tensor{f(1, 2, 3), f(1, 2, 3), f(1, 2, 11), blob.MustFromSlice([]int32{1, 1}, 2), blob.MustFromSlice([]int32{0}, 1)}},
		{"state not [1, N, D]", lstm(), []*blob.Tensor{f(2, 2, 3), f(2, 2, 3), f(2, 2, 12), blob.MustFromSlice([]int32{1, 1}, 2), blob.MustFromSlice([]int32{0}, 1)}},
		{"lengths of another batch", lstm(), []*blob.Tensor{f(1, 2, 3), f(1, 2, 3), f(1, 2, 12), blob.MustFromSlice([]int32{1}, 1), blob.MustFromSlice([]int32{0}, 1)}},
		{"empty timestep", lstm(), []*blob.Tensor{f(1, 2, 3), f(1, 2, 3), f(1, 2, 12), blob.MustFromSlice([]int32{1, 1}, 2), blob.MustFromSlice([]int32{}, 0)}},
		{"five inputs without lengths", lstm(netdef.ArgInt("sequence_lengths", 0)), []*blob.Tensor{f(1, 2, 3), f(1, 2, 3), f(1, 2, 12), blob.MustFromSlice([]int32{1, 1}, 2), blob.MustFromSlice([]int32{0}, 1)}},
	} {
		if _, err := optest.RunOp(c.def, c.in...); err == nil {
			t.Errorf("%s: no error", c.name)
		} else {
			t.Logf("%s: %v", c.name, err)
		}
	}
	// Zero elements with a huge batch dim: nothing to loop over.
	huge := []*blob.Tensor{f(1, 1<<40, 0), f(1, 1<<40, 0), f(1, 1<<40, 0), blob.MustFromSlice([]int32{0}, 1)}
	out, err := optest.RunOp(netdef.NewOperator("LSTMUnit", []string{"h_prev", "c_prev", "gates", "t"}, []string{"h", "c"}, netdef.ArgInt("sequence_lengths", 0)), huge...)
	if err != nil {
		t.Fatal(err)
	}
	if out[0].Size() != 0 {
		t.Errorf("h has %d elements", out[0].Size())
	}
}
