package rnn

import (
	"math"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

// unitArgs are the arguments LSTMUnit, GRUUnit and their gradients share.
var unitArgs = []operators.ArgSpec{
	{Name: "sequence_lengths", Default: true, Doc: "when false, the seq_lengths input is left out and the inputs after it move up by one"},
	{Name: "drop_states", Default: false, Doc: "past a sequence's length, zero the state instead of carrying the previous one"},
}

func init() {
	lstmArgs := append([]operators.ArgSpec{{Name: "forget_bias", Default: float32(0), Doc: "added to the forget gate's input before its sigmoid"}}, unitArgs...)
	operators.MustRegisterCPU(operators.Schema{
		Type: "LSTMUnit", MinInputs: 4, MaxInputs: 5, MinOutputs: 2, MaxOutputs: 2, Args: lstmArgs,
		Doc: "LSTMUnit(hidden_prev, cell_prev, gates, [seq_lengths,] timestep) → (hidden, cell): one LSTM step over " +
			"gates [1, N, 4D] in Caffe2's order i, f, o, g; sequences whose length is at most timestep keep (or, with drop_states, zero) their state.",
	}, newUnitOp(4, 3, 0, lstmForward[float32], lstmForward[float64]))
	operators.MustRegisterCPU(operators.Schema{
		Type: "LSTMUnitGradient", MinInputs: 8, MaxInputs: 9, MinOutputs: 3, MaxOutputs: 3, Args: lstmArgs,
		Doc: "LSTMUnitGradient(hidden_prev, cell_prev, gates, [seq_lengths,] timestep, hidden, cell, hidden_grad, cell_grad) → " +
			"(hidden_prev_grad, cell_prev_grad, gates_grad).",
	}, newUnitOp(4, 3, 4, lstmBackward[float32], lstmBackward[float64]))
	operators.MustRegisterGradient("LSTMUnit", func(g *operators.GradientContext) error {
		in := []string{g.I(0), g.I(1), g.I(2), g.I(3)}
		if seqLengthsArg(g.Arg("sequence_lengths")) {
			in = append(in, g.I(4))
		}
		in = append(in, g.O(0), g.O(1), g.GO(0), g.GO(1))
		g.Op("LSTMUnitGradient", in, []string{g.GI(0), g.GI(1), g.GI(2)})
		return nil
	})
	operators.MustRegisterCPU(operators.Schema{
		Type: "GRUUnit", MinInputs: 3, MaxInputs: 4, MinOutputs: 1, MaxOutputs: 1, Args: unitArgs,
		Doc: "GRUUnit(hidden_prev, gates, [seq_lengths,] timestep) → hidden: one GRU step over gates [1, N, 3D] " +
			"(reset, update, output; the reset gate is applied before, by the step net): h = h_prev·σ(u) + tanh(o)·(1 − σ(u)).",
	}, newUnitOp(3, 2, 0, gruForward[float32], gruForward[float64]))
	operators.MustRegisterCPU(operators.Schema{
		Type: "GRUUnitGradient", MinInputs: 5, MaxInputs: 6, MinOutputs: 2, MaxOutputs: 2, Args: unitArgs,
		Doc: "GRUUnitGradient(hidden_prev, gates, [seq_lengths,] timestep, hidden, hidden_grad) → (hidden_prev_grad, gates_grad).",
	}, newUnitOp(3, 2, 2, gruBackward[float32], gruBackward[float64]))
	operators.MustRegisterGradient("GRUUnit", func(g *operators.GradientContext) error {
		in := []string{g.I(0), g.I(1), g.I(2)}
		if seqLengthsArg(g.Arg("sequence_lengths")) {
			in = append(in, g.I(3))
		}
		in = append(in, g.O(0), g.GO(0))
		g.Op("GRUUnitGradient", in, []string{g.GI(0), g.GI(1)})
		return nil
	})
	// hidden and cell have the shape of cell_prev (LSTM), of hidden_prev
	// (GRU); the gradients have the shapes of the inputs they belong to.
	operators.MustRegisterShapeFunc("LSTMUnit", operators.SameShapes(nil, 1, 1))
	operators.MustRegisterShapeFunc("LSTMUnitGradient", operators.SameShapes(nil, 0, 1, 2))
	operators.MustRegisterShapeFunc("GRUUnit", operators.SameShapes(nil, 0))
	operators.MustRegisterShapeFunc("GRUUnitGradient", operators.SameShapes(nil, 0, 1))
}

// seqLengthsArg reads the sequence_lengths flag (default true) of a
// gradient maker's forward operator.
func seqLengthsArg(a *netdef.Argument) bool {
	if a == nil {
		return true
	}
	if a.I != nil {
		return a.GetI() != 0
	}
	if a.F != nil {
		return a.GetF() != 0
	}
	return true
}

// unit is what the four unit operators share: the layout of their inputs
// (with or without seq_lengths), the flags, the checks of their tensors and
// the loop of their kernels over the batch.
type unit struct {
	*operators.Base
	gates      int  // gates per state element: 4 (LSTM) or 3 (GRU)
	stateIn    int  // index of the state input (cell_prev, hidden_prev); the gates follow it
	seqIn      int  // index of seq_lengths, -1 when left out
	stepIn     int  // index of timestep
	grad       bool // a gradient operator: its last output is the gates' gradient
	drop       bool // drop_states
	forgetBias float64
}

// newUnit reads the arguments of a unit operator whose seq_lengths input
// (when there is one) is at index seqIdx, after the state and the gates,
// and checks the input count: fixed inputs before timestep, plus extra
// after it (a gradient operator's).
func newUnit(b *operators.Base, gates, seqIdx, extra int) (*unit, error) {
	u := &unit{Base: b, gates: gates, stateIn: seqIdx - 2, seqIn: seqIdx, stepIn: seqIdx + 1, grad: extra > 0,
		drop: b.ArgBool("drop_states", false), forgetBias: float64(b.ArgFloat("forget_bias", 0))}
	if !b.ArgBool("sequence_lengths", true) {
		u.seqIn, u.stepIn = -1, seqIdx
	}
	if want := u.stepIn + 1 + extra; b.NumInputs() != want {
		return nil, b.Errorf("%d inputs, want %d (sequence_lengths=%v)", b.NumInputs(), want, u.seqIn >= 0)
	}
	return u, nil
}

// maxUnitInputs and maxUnitOutputs bound the unit operators' tensors
// (LSTMUnitGradient's).
const (
	maxUnitInputs  = 9
	maxUnitOutputs = 3
)

// step is one run of a unit operator, its tensors checked: N sequences of
// D state elements at timestep t, the sequence lengths (nil without them),
// the operator's layout and flags, the inputs by index (nil at seq_lengths
// and timestep) and the outputs.
type step struct {
	n, d       int
	t          int32
	lengths    []int32
	gates      int
	stepIn     int
	drop       bool
	forgetBias float64
	in         [maxUnitInputs]*blob.Tensor
	out        [maxUnitOutputs]*blob.Tensor
}

// kernel is a unit operator's computation on the elements of a run's
// tensors, indexed as step's. It takes its arguments by value: a call
// through a func value would move pointers to them to the heap.
type kernel[T blob.Float] func(s step, in [maxUnitInputs][]T, out [maxUnitOutputs][]T)

// unitOp is one of the unit operators: its layout and its kernels.
type unitOp struct {
	*unit
	f32 kernel[float32]
	f64 kernel[float64]
}

// newUnitOp is the factory of a unit operator (see newUnit) that runs the
// kernel of its inputs' element type.
func newUnitOp(gates, seqIdx, extra int, f32 kernel[float32], f64 kernel[float64]) operators.Factory {
	return func(b *operators.Base) (operators.Operator, error) {
		u, err := newUnit(b, gates, seqIdx, extra)
		if err != nil {
			return nil, err
		}
		return &unitOp{unit: u, f32: f32, f64: f64}, nil
	}
}

// Run checks the operator's tensors, initializes its outputs and runs the
// kernel of their element type.
func (o *unitOp) Run() error {
	var s step
	if err := o.prepare(&s); err != nil {
		return err
	}
	state := s.in[o.stateIn]
	if state.Size() == 0 {
		return nil
	}
	if state.DataType() == blob.Float32 {
		runKernel(&s, o.f32)
	} else {
		runKernel(&s, o.f64)
	}
	return nil
}

// runKernel runs k on the elements of s's tensors, which are Ts.
func runKernel[T blob.Float](s *step, k kernel[T]) {
	var in [maxUnitInputs][]T
	var out [maxUnitOutputs][]T
	for i, t := range s.in {
		if t != nil {
			in[i] = blob.Data[T](t)
		}
	}
	for i, t := range s.out {
		if t != nil {
			out[i] = blob.Data[T](t)
		}
	}
	k(*s, in, out)
}

// prepare checks the inputs in this order: the state and the gates,
// the inputs before the state (LSTM's hidden_prev, like the state), the
// timestep and the lengths, then the inputs after the timestep (a
// gradient's, like the state). It initializes the outputs like the state,
// but a gradient's last output, which is like the gates.
func (u *unit) prepare(s *step) error {
	n, d, state, gates, err := u.dims(u.stateIn, u.stateIn+1)
	if err != nil {
		return err
	}
	s.n, s.d, s.gates, s.stepIn, s.drop, s.forgetBias = n, d, u.gates, u.stepIn, u.drop, u.forgetBias
	s.in[u.stateIn], s.in[u.stateIn+1] = state, gates
	for i := range u.stateIn {
		if s.in[i], err = u.like(i, state); err != nil {
			return err
		}
	}
	if s.t, s.lengths, err = u.step(n); err != nil {
		return err
	}
	for i := u.stepIn + 1; i < u.NumInputs(); i++ {
		if s.in[i], err = u.like(i, state); err != nil {
			return err
		}
	}
	for i := range u.NumOutputs() {
		ref := state
		if u.grad && i == u.NumOutputs()-1 {
			ref = gates
		}
		if s.out[i], err = u.output(i, ref); err != nil {
			return err
		}
	}
	return nil
}

// dims checks the state input s ([1, N, D]) and the gates input g ([1,
// N, gates·D]) and returns N and D.
func (u *unit) dims(s, g int) (n, d int, state, gates *blob.Tensor, err error) {
	if state, err = u.FloatInput(s); err != nil {
		return 0, 0, nil, nil, err
	}
	if state.NumDims() != 3 || state.Dim(0) != 1 {
		return 0, 0, nil, nil, u.Errorf("input %d (%q) has shape %v, want [1, N, D]", s, u.InputName(s), state.Dims())
	}
	n, d = state.Dim(1), state.Dim(2)
	if gates, err = u.InputOf(g, state.DataType()); err != nil {
		return 0, 0, nil, nil, err
	}
	if gates.NumDims() != 3 || gates.Dim(0) != 1 || gates.Dim(1) != n || gates.Dim(2) != u.gates*d {
		return 0, 0, nil, nil, u.Errorf("input %d (%q) has shape %v, want [1, %d, %d] for a state of shape %v",
			g, u.InputName(g), gates.Dims(), n, u.gates*d, state.Dims())
	}
	return n, d, state, gates, nil
}

// like returns input i after checking that it has ref's type and shape.
func (u *unit) like(i int, ref *blob.Tensor) (*blob.Tensor, error) {
	t, err := u.InputOf(i, ref.DataType())
	if err != nil {
		return nil, err
	}
	if !sameDims(t.Dims(), ref.Dims()) {
		return nil, u.Errorf("input %d (%q) has shape %v, want %v", i, u.InputName(i), t.Dims(), ref.Dims())
	}
	return t, nil
}

func sameDims(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// step returns the timestep and the sequence lengths (nil without them).
func (u *unit) step(n int) (t int32, lengths []int32, err error) {
	ts, err := u.InputOf(u.stepIn, blob.Int32)
	if err != nil {
		return 0, nil, err
	}
	if ts.Size() < 1 {
		return 0, nil, u.Errorf("input %d (%q), the timestep, is empty", u.stepIn, u.InputName(u.stepIn))
	}
	t = blob.Data[int32](ts)[0]
	if u.seqIn < 0 {
		return t, nil, nil
	}
	sl, err := u.InputOf(u.seqIn, blob.Int32)
	if err != nil {
		return 0, nil, err
	}
	if sl.Size() != n {
		return 0, nil, u.Errorf("input %d (%q), the sequence lengths, has %d elements for a batch of %d", u.seqIn, u.InputName(u.seqIn), sl.Size(), n)
	}
	return t, blob.Data[int32](sl), nil
}

// output initializes output i with ref's type and shape.
func (u *unit) output(i int, ref *blob.Tensor) (*blob.Tensor, error) {
	y := u.Output(i)
	if err := y.Init(ref.DataType(), ref.Dims()...); err != nil {
		return nil, u.Errorf("output %d (%q): %w", i, u.OutputName(i), err)
	}
	return y, nil
}

// valid reports whether sequence n is still running at timestep t.
func valid(lengths []int32, n int, t int32) bool { return lengths == nil || t < lengths[n] }

// sequences is the unit kernels' loop over the batch. For each sequence
// still running at the timestep it calls run with the range [lo, hi) of
// its state elements. For one that has ended, each carry[k] (nil: none)
// takes from[k] over that range, or zeros with drop_states, and gateGrad
// (a gradient's output over the gates; nil in a forward pass) gets zeros.
func sequences[T blob.Float](s *step, carry, from [2][]T, gateGrad []T, run func(lo, hi int)) {
	for i := 0; i < s.n; i++ {
		lo, hi := i*s.d, (i+1)*s.d
		if valid(s.lengths, i, s.t) {
			run(lo, hi)
			continue
		}
		for k, dst := range carry {
			switch {
			case dst == nil:
			case s.drop:
				clear(dst[lo:hi])
			default:
				copy(dst[lo:hi], from[k][lo:hi])
			}
		}
		if gateGrad != nil {
			clear(gateGrad[s.gates*lo : s.gates*hi])
		}
	}
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// lstmForward is Caffe2's LstmUnitImpl: gates x hold i, f, o, g (D each)
// per sequence.
func lstmForward[T blob.Float](s step, in [maxUnitInputs][]T, out [maxUnitOutputs][]T) {
	hPrev, cPrev, x, h, c := in[0], in[1], in[2], out[0], out[1]
	d := s.d
	sequences(&s, [2][]T{h, c}, [2][]T{hPrev, cPrev}, nil, func(lo, hi int) {
		xs, cp, hs, cs := x[4*lo:4*hi], cPrev[lo:hi], h[lo:hi], c[lo:hi]
		for k := 0; k < d; k++ {
			i := sigmoid(float64(xs[k]))
			f := sigmoid(float64(xs[d+k]) + s.forgetBias)
			og := sigmoid(float64(xs[2*d+k]))
			g := math.Tanh(float64(xs[3*d+k]))
			cv := f*float64(cp[k]) + i*g
			cs[k] = T(cv)
			hs[k] = T(og * math.Tanh(cv))
		}
	})
}

// lstmBackward is Caffe2's LstmUnitGradientImpl. Where a sequence runs,
// hidden_prev gets no gradient here (it reaches the gates through the
// step net's FC); where it has ended, the state gradients pass through.
func lstmBackward[T blob.Float](s step, in [maxUnitInputs][]T, out [maxUnitOutputs][]T) {
	// Inputs: hidden_prev, cell_prev, gates, [seq_lengths,] timestep,
	// hidden, cell, hidden_grad, cell_grad.
	cPrev, x, c, dh, dc := in[1], in[2], in[s.stepIn+2], in[s.stepIn+3], in[s.stepIn+4]
	dhPrev, dcPrev, dx := out[0], out[1], out[2]
	d := s.d
	sequences(&s, [2][]T{dhPrev, dcPrev}, [2][]T{dh, dc}, dx, func(lo, hi int) {
		xs, dxs := x[4*lo:4*hi], dx[4*lo:4*hi]
		for k := 0; k < d; k++ {
			i := sigmoid(float64(xs[k]))
			f := sigmoid(float64(xs[d+k]) + s.forgetBias)
			og := sigmoid(float64(xs[2*d+k]))
			g := math.Tanh(float64(xs[3*d+k]))
			tc := math.Tanh(float64(c[lo+k]))
			dcTerm := float64(dc[lo+k]) + float64(dh[lo+k])*og*(1-tc*tc)
			dcPrev[lo+k] = T(dcTerm * f)
			dhPrev[lo+k] = 0
			dxs[k] = T(dcTerm * g * i * (1 - i))
			dxs[d+k] = T(dcTerm * float64(cPrev[lo+k]) * f * (1 - f))
			dxs[2*d+k] = T(float64(dh[lo+k]) * tc * og * (1 - og))
			dxs[3*d+k] = T(dcTerm * i * (1 - g*g))
		}
	})
}

// gruForward is Caffe2's GRUUnit kernel: gates x hold reset (unused
// here), update and output, D each, per sequence.
func gruForward[T blob.Float](s step, in [maxUnitInputs][]T, out [maxUnitOutputs][]T) {
	hPrev, x, h := in[0], in[1], out[0]
	d := s.d
	sequences(&s, [2][]T{h}, [2][]T{hPrev}, nil, func(lo, hi int) {
		xs := x[3*lo : 3*hi]
		for k := 0; k < d; k++ {
			u := sigmoid(float64(xs[d+k]))
			h[lo+k] = T(float64(hPrev[lo+k])*u + math.Tanh(float64(xs[2*d+k]))*(1-u))
		}
	})
}

// gruBackward is Caffe2's GRUUnitGradient kernel; the reset gate gets no
// gradient here.
func gruBackward[T blob.Float](s step, in [maxUnitInputs][]T, out [maxUnitOutputs][]T) {
	// Inputs: hidden_prev, gates, [seq_lengths,] timestep, hidden,
	// hidden_grad.
	hPrev, x, dh, dhPrev, dx := in[0], in[1], in[s.stepIn+2], out[0], out[1]
	d := s.d
	sequences(&s, [2][]T{dhPrev}, [2][]T{dh}, dx, func(lo, hi int) {
		xs, dxs := x[3*lo:3*hi], dx[3*lo:3*hi]
		for k := 0; k < d; k++ {
			u := sigmoid(float64(xs[d+k]))
			og := math.Tanh(float64(xs[2*d+k]))
			g := float64(dh[lo+k])
			dhPrev[lo+k] = T(g * u)
			dxs[k] = 0
			dxs[d+k] = T((g*float64(hPrev[lo+k]) - g*og) * u * (1 - u))
			dxs[2*d+k] = T(g * (1 - u) * (1 - og*og))
		}
	})
}
