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
	}, newLSTMUnit)
	operators.MustRegisterCPU(operators.Schema{
		Type: "LSTMUnitGradient", MinInputs: 8, MaxInputs: 9, MinOutputs: 3, MaxOutputs: 3, Args: lstmArgs,
		Doc: "LSTMUnitGradient(hidden_prev, cell_prev, gates, [seq_lengths,] timestep, hidden, cell, hidden_grad, cell_grad) → " +
			"(hidden_prev_grad, cell_prev_grad, gates_grad).",
	}, newLSTMUnitGradient)
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
	}, newGRUUnit)
	operators.MustRegisterCPU(operators.Schema{
		Type: "GRUUnitGradient", MinInputs: 5, MaxInputs: 6, MinOutputs: 2, MaxOutputs: 2, Args: unitArgs,
		Doc: "GRUUnitGradient(hidden_prev, gates, [seq_lengths,] timestep, hidden, hidden_grad) → (hidden_prev_grad, gates_grad).",
	}, newGRUUnitGradient)
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
// after the gates (with or without seq_lengths), the flags, and the
// checks of the state and gate tensors.
type unit struct {
	*operators.Base
	gates      int  // gates per state element: 4 (LSTM) or 3 (GRU)
	seqIn      int  // index of seq_lengths, -1 when left out
	stepIn     int  // index of timestep
	drop       bool // drop_states
	forgetBias float64
}

// newUnit reads the arguments of a unit operator whose seq_lengths input
// (when there is one) is at index seqIdx, and checks the input count:
// fixed inputs before timestep, plus extra after it.
func newUnit(b *operators.Base, gates, seqIdx, extra int) (*unit, error) {
	u := &unit{Base: b, gates: gates, seqIn: seqIdx, stepIn: seqIdx + 1,
		drop: b.ArgBool("drop_states", false), forgetBias: float64(b.ArgFloat("forget_bias", 0))}
	if !b.ArgBool("sequence_lengths", true) {
		u.seqIn, u.stepIn = -1, seqIdx
	}
	if want := u.stepIn + 1 + extra; b.NumInputs() != want {
		return nil, b.Errorf("%d inputs, want %d (sequence_lengths=%v)", b.NumInputs(), want, u.seqIn >= 0)
	}
	return u, nil
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

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

type lstmUnit struct{ *unit }

func newLSTMUnit(b *operators.Base) (operators.Operator, error) {
	u, err := newUnit(b, 4, 3, 0)
	if err != nil {
		return nil, err
	}
	return &lstmUnit{u}, nil
}

func (o *lstmUnit) Run() error {
	n, d, cPrev, x, err := o.dims(1, 2)
	if err != nil {
		return err
	}
	hPrev, err := o.like(0, cPrev)
	if err != nil {
		return err
	}
	t, lengths, err := o.step(n)
	if err != nil {
		return err
	}
	h, err := o.output(0, cPrev)
	if err != nil {
		return err
	}
	c, err := o.output(1, cPrev)
	if err != nil {
		return err
	}
	if cPrev.Size() == 0 {
		return nil
	}
	if cPrev.DataType() == blob.Float32 {
		lstmForward(n, d, t, lengths, o.drop, o.forgetBias, blob.Data[float32](hPrev), blob.Data[float32](cPrev), blob.Data[float32](x), blob.Data[float32](h), blob.Data[float32](c))
	} else {
		lstmForward(n, d, t, lengths, o.drop, o.forgetBias, blob.Data[float64](hPrev), blob.Data[float64](cPrev), blob.Data[float64](x), blob.Data[float64](h), blob.Data[float64](c))
	}
	return nil
}

// lstmForward is Caffe2's LstmUnitImpl: gates x hold i, f, o, g (D each)
// per sequence.
func lstmForward[T blob.Float](n, d int, t int32, lengths []int32, drop bool, forgetBias float64, hPrev, cPrev, x, h, c []T) {
	for s := 0; s < n; s++ {
		hp, cp, xs, hs, cs := hPrev[s*d:(s+1)*d], cPrev[s*d:(s+1)*d], x[s*4*d:(s+1)*4*d], h[s*d:(s+1)*d], c[s*d:(s+1)*d]
		if !valid(lengths, s, t) {
			if drop {
				clear(hs)
				clear(cs)
			} else {
				copy(hs, hp)
				copy(cs, cp)
			}
			continue
		}
		for k := 0; k < d; k++ {
			i := sigmoid(float64(xs[k]))
			f := sigmoid(float64(xs[d+k]) + forgetBias)
			og := sigmoid(float64(xs[2*d+k]))
			g := math.Tanh(float64(xs[3*d+k]))
			cv := f*float64(cp[k]) + i*g
			cs[k] = T(cv)
			hs[k] = T(og * math.Tanh(cv))
		}
	}
}

type lstmUnitGradient struct{ *unit }

func newLSTMUnitGradient(b *operators.Base) (operators.Operator, error) {
	u, err := newUnit(b, 4, 3, 4)
	if err != nil {
		return nil, err
	}
	return &lstmUnitGradient{u}, nil
}

func (o *lstmUnitGradient) Run() error {
	n, d, cPrev, x, err := o.dims(1, 2)
	if err != nil {
		return err
	}
	hPrev, err := o.like(0, cPrev)
	if err != nil {
		return err
	}
	t, lengths, err := o.step(n)
	if err != nil {
		return err
	}
	var st [4]*blob.Tensor // hidden, cell, hidden_grad, cell_grad
	for k := range st {
		if st[k], err = o.like(o.stepIn+1+k, cPrev); err != nil {
			return err
		}
	}
	dhPrev, err := o.output(0, hPrev)
	if err != nil {
		return err
	}
	dcPrev, err := o.output(1, cPrev)
	if err != nil {
		return err
	}
	dx, err := o.output(2, x)
	if err != nil {
		return err
	}
	if cPrev.Size() == 0 {
		return nil
	}
	if cPrev.DataType() == blob.Float32 {
		lstmBackward(n, d, t, lengths, o.drop, o.forgetBias, blob.Data[float32](cPrev), blob.Data[float32](x), blob.Data[float32](st[1]),
			blob.Data[float32](st[2]), blob.Data[float32](st[3]), blob.Data[float32](dhPrev), blob.Data[float32](dcPrev), blob.Data[float32](dx))
	} else {
		lstmBackward(n, d, t, lengths, o.drop, o.forgetBias, blob.Data[float64](cPrev), blob.Data[float64](x), blob.Data[float64](st[1]),
			blob.Data[float64](st[2]), blob.Data[float64](st[3]), blob.Data[float64](dhPrev), blob.Data[float64](dcPrev), blob.Data[float64](dx))
	}
	return nil
}

// lstmBackward is Caffe2's LstmUnitGradientImpl. Where a sequence runs,
// hidden_prev gets no gradient here (it reaches the gates through the
// step net's FC); where it has ended, the state gradients pass through.
func lstmBackward[T blob.Float](n, d int, t int32, lengths []int32, drop bool, forgetBias float64, cPrev, x, c, dh, dc, dhPrev, dcPrev, dx []T) {
	for s := 0; s < n; s++ {
		lo, hi := s*d, (s+1)*d
		dxs := dx[4*lo : 4*hi]
		if !valid(lengths, s, t) {
			if drop {
				clear(dhPrev[lo:hi])
				clear(dcPrev[lo:hi])
			} else {
				copy(dhPrev[lo:hi], dh[lo:hi])
				copy(dcPrev[lo:hi], dc[lo:hi])
			}
			clear(dxs)
			continue
		}
		xs := x[4*lo : 4*hi]
		for k := 0; k < d; k++ {
			i := sigmoid(float64(xs[k]))
			f := sigmoid(float64(xs[d+k]) + forgetBias)
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
	}
}

type gruUnit struct{ *unit }

func newGRUUnit(b *operators.Base) (operators.Operator, error) {
	u, err := newUnit(b, 3, 2, 0)
	if err != nil {
		return nil, err
	}
	return &gruUnit{u}, nil
}

func (o *gruUnit) Run() error {
	n, d, hPrev, x, err := o.dims(0, 1)
	if err != nil {
		return err
	}
	t, lengths, err := o.step(n)
	if err != nil {
		return err
	}
	h, err := o.output(0, hPrev)
	if err != nil {
		return err
	}
	if hPrev.Size() == 0 {
		return nil
	}
	if hPrev.DataType() == blob.Float32 {
		gruForward(n, d, t, lengths, o.drop, blob.Data[float32](hPrev), blob.Data[float32](x), blob.Data[float32](h))
	} else {
		gruForward(n, d, t, lengths, o.drop, blob.Data[float64](hPrev), blob.Data[float64](x), blob.Data[float64](h))
	}
	return nil
}

// gruForward is Caffe2's GRUUnit kernel: gates x hold reset (unused
// here), update and output, D each, per sequence.
func gruForward[T blob.Float](n, d int, t int32, lengths []int32, drop bool, hPrev, x, h []T) {
	for s := 0; s < n; s++ {
		lo, hi := s*d, (s+1)*d
		if !valid(lengths, s, t) {
			if drop {
				clear(h[lo:hi])
			} else {
				copy(h[lo:hi], hPrev[lo:hi])
			}
			continue
		}
		xs := x[3*lo : 3*hi]
		for k := 0; k < d; k++ {
			u := sigmoid(float64(xs[d+k]))
			h[lo+k] = T(float64(hPrev[lo+k])*u + math.Tanh(float64(xs[2*d+k]))*(1-u))
		}
	}
}

type gruUnitGradient struct{ *unit }

func newGRUUnitGradient(b *operators.Base) (operators.Operator, error) {
	u, err := newUnit(b, 3, 2, 2)
	if err != nil {
		return nil, err
	}
	return &gruUnitGradient{u}, nil
}

func (o *gruUnitGradient) Run() error {
	n, d, hPrev, x, err := o.dims(0, 1)
	if err != nil {
		return err
	}
	t, lengths, err := o.step(n)
	if err != nil {
		return err
	}
	if _, err := o.like(o.stepIn+1, hPrev); err != nil {
		return err
	}
	dh, err := o.like(o.stepIn+2, hPrev)
	if err != nil {
		return err
	}
	dhPrev, err := o.output(0, hPrev)
	if err != nil {
		return err
	}
	dx, err := o.output(1, x)
	if err != nil {
		return err
	}
	if hPrev.Size() == 0 {
		return nil
	}
	if hPrev.DataType() == blob.Float32 {
		gruBackward(n, d, t, lengths, o.drop, blob.Data[float32](hPrev), blob.Data[float32](x), blob.Data[float32](dh), blob.Data[float32](dhPrev), blob.Data[float32](dx))
	} else {
		gruBackward(n, d, t, lengths, o.drop, blob.Data[float64](hPrev), blob.Data[float64](x), blob.Data[float64](dh), blob.Data[float64](dhPrev), blob.Data[float64](dx))
	}
	return nil
}

// gruBackward is Caffe2's GRUUnitGradient kernel; the reset gate gets no
// gradient here.
func gruBackward[T blob.Float](n, d int, t int32, lengths []int32, drop bool, hPrev, x, dh, dhPrev, dx []T) {
	for s := 0; s < n; s++ {
		lo, hi := s*d, (s+1)*d
		dxs := dx[3*lo : 3*hi]
		if !valid(lengths, s, t) {
			if drop {
				clear(dhPrev[lo:hi])
			} else {
				copy(dhPrev[lo:hi], dh[lo:hi])
			}
			clear(dxs)
			continue
		}
		xs := x[3*lo : 3*hi]
		for k := 0; k < d; k++ {
			u := sigmoid(float64(xs[d+k]))
			og := math.Tanh(float64(xs[2*d+k]))
			g := float64(dh[lo+k])
			dhPrev[lo+k] = T(g * u)
			dxs[k] = 0
			dxs[d+k] = T((g*float64(hPrev[lo+k]) - g*og) * u * (1 - u))
			dxs[2*d+k] = T(g * (1 - u) * (1 - og*og))
		}
	}
}
