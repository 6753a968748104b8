package rnn_test

import (
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// TestUnitsSteadyNoAllocs holds the unit operators, which a recurrent net
// runs once per timestep, to the steady-state rule: a second run on inputs
// of the same shapes allocates nothing.
func TestUnitsSteadyNoAllocs(t *testing.T) {
	const n, d = 3, 5
	state := func() *blob.Tensor { return optest.F32(make([]float64, n*d), 1, n, d) }
	gates := func(g int) *blob.Tensor { return optest.F32(make([]float64, n*g*d), 1, n, g*d) }
	lengths, ts := blob.MustFromSlice([]int32{2, 0, 1}, n), blob.MustFromSlice([]int32{0}, 1)
	for _, c := range []struct {
		def    *netdef.OperatorDef
		inputs []*blob.Tensor
	}{
		{netdef.NewOperator("LSTMUnit", []string{"h0", "c0", "g", "l", "t"}, []string{"h", "c"}),
			[]*blob.Tensor{state(), state(), gates(4), lengths, ts}},
		{netdef.NewOperator("LSTMUnitGradient", []string{"h0", "c0", "g", "l", "t", "h", "c", "dh", "dc"}, []string{"dh0", "dc0", "dg"}),
			[]*blob.Tensor{state(), state(), gates(4), lengths, ts, state(), state(), state(), state()}},
		{netdef.NewOperator("GRUUnit", []string{"h0", "g", "l", "t"}, []string{"h"}),
			[]*blob.Tensor{state(), gates(3), lengths, ts}},
		{netdef.NewOperator("GRUUnitGradient", []string{"h0", "g", "l", "t", "h", "dh"}, []string{"dh0", "dg"}),
			[]*blob.Tensor{state(), gates(3), lengths, ts, state(), state()}},
	} {
		t.Run(c.def.GetType(), func(t *testing.T) { optest.AssertNoAllocs(t, c.def, c.inputs...) })
	}
}
