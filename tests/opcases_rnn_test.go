package tests

import (
	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators/optest"
)

// The RNN family (operators/rnn): the LSTM and GRU cells, and
// RecurrentNetwork as brew.LSTM builds it (the gradient checks difference
// the whole recurrence, so they hold RecurrentNetworkGradient's backward
// step net, links and accumulations to the forward).
func init() {
	caseSets = append(caseSets, func(s *sampler) []optest.Case {
		op := cgParse
		ai := netdef.ArgInt
		af := netdef.ArgFloat
		const n, d = 3, 2
		// Sequence 1 has ended at timestep 2: its state carries over.
		lengths, step := i32(3, 2, 4), i32(2)
		state := func() *blob.Tensor { return s.x(1, n, d) }
		lstm := "LSTMUnit(h_prev, c_prev, gates, seq_lengths, t) -> h, c"
		gru := "GRUUnit(h_prev, gates, seq_lengths, t) -> h"
		cases := []optest.Case{
			{Op: op(lstm), Inputs: ts(state(), state(), s.x(1, n, 4*d), lengths, step), Grad: []int{0, 1, 2}},
			{Name: "forget_bias, drop_states", Op: op(lstm, af("forget_bias", 1), ai("drop_states", 1)),
				Inputs: ts(state(), state(), s.x(1, n, 4*d), lengths, step), Grad: []int{0, 1, 2}},
			{Name: "no sequence lengths", Op: op("LSTMUnit(h_prev, c_prev, gates, t) -> h, c", ai("sequence_lengths", 0)),
				Inputs: ts(state(), state(), s.x(1, n, 4*d), step), Grad: []int{0, 1, 2}},
			{Name: "double", Op: op(lstm), Inputs: ts(f64(state()), f64(state()), f64(s.x(1, n, 4*d)), lengths, step), Grad: []int{0, 1, 2}},
			{Op: op(gru), Inputs: ts(state(), s.x(1, n, 3*d), lengths, step), Grad: []int{0, 1}},
			{Name: "drop_states", Op: op(gru, ai("drop_states", 1)), Inputs: ts(state(), s.x(1, n, 3*d), lengths, step), Grad: []int{0, 1}},
			{Name: "no sequence lengths", Op: op("GRUUnit(h_prev, gates, t) -> h", ai("sequence_lengths", 0)),
				Inputs: ts(state(), s.x(1, n, 3*d), step), Grad: []int{0, 1}},
			{Name: "double", Op: op(gru), Inputs: ts(f64(state()), f64(s.x(1, n, 3*d)), lengths, step), Grad: []int{0, 1}},
		}
		// RecurrentNetwork(i2h, h0, c0, seq_lengths, gates_t_w, gates_t_b).
		const seqLen = 4
		rnn := func(o brew.LSTMOptions) *netdef.OperatorDef {
			m := brew.NewModel("rnn_case")
			m.AddExternalInputs("x", "seq_lengths", "h0", "c0")
			brew.LSTM(m, "x", "seq_lengths", [2]string{"h0", "c0"}, 2, d, "LSTM", o)
			if err := m.Err(); err != nil {
				panic(err)
			}
			return proto.Clone(m.Net.Proto().GetOp()[1]).(*netdef.OperatorDef)
		}
		rnnInputs := func(initialDims ...int) []*blob.Tensor {
			return ts(s.x(seqLen, n, 4*d), s.x(initialDims...), s.x(initialDims...), lengths, s.x(4*d, d), s.x(4*d))
		}
		all := []int{0, 1, 2, 3}
		forwardOnly := rnn(brew.LSTMOptions{})
		for i, a := range forwardOnly.Arg {
			if a.GetName() == "backward_step_net" {
				forwardOnly.Arg = append(forwardOnly.Arg[:i], forwardOnly.Arg[i+1:]...)
				break
			}
		}
		cases = append(cases,
			optest.Case{Op: rnn(brew.LSTMOptions{}), Inputs: rnnInputs(1, n, d), Grad: []int{0, 1, 2, 4, 5}, GradOutputs: []int{0}},
			optest.Case{Name: "every output, one initial row for all", Op: rnn(brew.LSTMOptions{OutputsWithGrads: all, ForgetBias: 1}),
				Inputs: rnnInputs(d), Grad: []int{0, 1, 2, 4, 5}, GradOutputs: all},
			optest.Case{Name: "gates recomputed on backward", Op: rnn(brew.LSTMOptions{MemoryOptimization: true}),
				Inputs: rnnInputs(1, n, d), Grad: []int{0, 1, 2, 4, 5}, GradOutputs: []int{0}},
			optest.Case{Name: "forward only", Op: forwardOnly, Inputs: rnnInputs(n, d)},
		)
		return cases
	})
}
