package rnn

import (
	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

// param is a parameter of the step net: the input, its gradient (an
// output of the gradient operator) and the blob the backward step net
// writes each timestep's share of it to.
type param struct {
	param, grad, cell string
}

// stateGradient is the gradient of a state tensor and the output
// gradients that flow into it: external at every timestep (an all-rows
// alias), last at the final one.
type stateGradient struct {
	state, grad, external, last string
}

type recurrentNetworkGradient struct {
	*operators.Base
	stepNet    *netdef.NetDef
	links      []link
	writes     []bool
	params     []param
	states     []stateGradient
	initial    []recurrentInput
	gradInputs int // the output gradients before the forward inputs
	timestep   string
	views      [][]float32    // each link's rows at the current timestep
	grads      []*blob.Tensor // each state's gradient
	inputGrad  string         // the gradient of the sequence input
}

func (o *recurrentNetworkGradient) remapped(name string) string {
	return o.ArgString(name+".rename", name)
}

func newRecurrentNetworkGradient(b *operators.Base) (operators.Operator, error) {
	net, ok, err := stepNetArg(b, "backward_step_net")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, b.Errorf("argument backward_step_net is required")
	}
	ids := b.ArgInts("outputs_with_grads", nil)
	o := &recurrentNetworkGradient{Base: b, stepNet: net, gradInputs: len(ids), timestep: b.ArgString("timestep", "timestep")}
	if o.gradInputs+2 > b.NumInputs() {
		return nil, b.Errorf("%d inputs for %d output gradients: want the gradients, the forward inputs, the forward outputs", b.NumInputs(), len(ids))
	}
	fwd, err := readLinks(b, "link", true)
	if err != nil {
		return nil, err
	}
	bwd, err := readLinks(b, "backward_link", false)
	if err != nil {
		return nil, err
	}
	for _, l := range append(fwd, bwd...) {
		l.internal, l.external = o.remapped(l.internal), o.remapped(l.external)
		o.links = append(o.links, l)
	}
	if o.initial, err = recurrentInputs(b, o.gradInputs); err != nil {
		return nil, err
	}
	params := b.ArgInts("param", nil)
	if want := 1 + len(params) + len(o.initial); b.NumOutputs() != want {
		return nil, b.Errorf("%d outputs, want %d: the input gradient, %d parameter gradients and %d initial state gradients",
			b.NumOutputs(), want, len(params), len(o.initial))
	}
	paramGrads := b.ArgStrings("param_grads", nil)
	if len(paramGrads) != 0 && len(paramGrads) != len(params) {
		return nil, b.Errorf("param_grads has %d entries for %d params", len(paramGrads), len(params))
	}
	// Each timestep's parameter gradient goes to a blob of its own, which
	// a Sum appended to the step net adds to the output.
	o.stepNet = proto.Clone(net).(*netdef.NetDef)
	for i, p := range params {
		k := int64(o.gradInputs) + p
		if p < 0 || k >= int64(b.NumInputs()-1) {
			return nil, b.Errorf("param[%d] = %d is not an input", i, p)
		}
		pr := param{param: b.InputName(int(k)), grad: b.OutputName(1 + i)}
		name := pr.grad
		if len(paramGrads) > 0 {
			name = o.remapped(paramGrads[i])
		}
		pr.cell = name + "_tmpstep"
		renameBlob(o.stepNet, name, pr.cell)
		sum := netdef.NewOperator("Sum", []string{pr.grad, pr.cell}, []string{pr.grad})
		if opt := b.Def().GetDeviceOption(); opt != nil {
			sum.DeviceOption = proto.Clone(opt).(*netdef.DeviceOption)
		}
		o.stepNet.Op = append(o.stepNet.Op, sum)
		o.params = append(o.params, pr)
	}
	if o.states, err = o.stateGradients(ids); err != nil {
		return nil, err
	}
	w := written(o.stepNet)
	for _, l := range o.links {
		o.writes = append(o.writes, w[l.internal])
	}
	o.views = make([][]float32, len(o.links))
	o.grads = make([]*blob.Tensor, len(o.states))
	o.inputGrad = o.remapped(b.InputName(o.gradInputs) + operators.GradSuffix)
	return o, nil
}

// stateGradients is Caffe2's constructRecurrentGradients.
func (o *recurrentNetworkGradient) stateGradients(ids []int64) ([]stateGradient, error) {
	aliases, err := readAliases(o.Base)
	if err != nil {
		return nil, err
	}
	var out []stateGradient
	for _, s := range o.initial {
		sg := stateGradient{state: s.state, grad: o.remapped(s.state + operators.GradSuffix)}
		for j, a := range aliases {
			if a.src != s.state {
				continue
			}
			idx := -1
			for k, id := range ids {
				if id == int64(j) {
					idx = k
				}
			}
			if idx < 0 {
				continue
			}
			switch a.offset {
			case 1:
				sg.external = o.InputName(idx)
			case -1:
				sg.last = o.InputName(idx)
			default:
				return nil, o.Errorf("alias %d (%q → %q) has offset %d: an alias with a gradient must have offset 1 or -1", j, a.src, a.dst, a.offset)
			}
		}
		out = append(out, sg)
	}
	return out, nil
}

// renameBlob renames blob from to to in every operator of net.
func renameBlob(net *netdef.NetDef, from, to string) {
	for _, op := range net.GetOp() {
		for i, in := range op.Input {
			if in == from {
				op.Input[i] = to
			}
		}
		for i, out := range op.Output {
			if out == from {
				op.Output[i] = to
			}
		}
	}
}

// zeroedLike initializes bl as a zero FLOAT tensor of ref's shape.
func (o *recurrentNetworkGradient) zeroedLike(bl *blob.Blob, name string, ref *blob.Tensor) (*blob.Tensor, error) {
	t := bl.MutableTensor()
	if err := t.Init(blob.Float32, ref.Dims()...); err != nil {
		return nil, o.Errorf("%q: %w", name, err)
	}
	clear(blob.Data[float32](t))
	return t, nil
}

// floatBlob returns the FLOAT tensor in Go memory that the named blob of
// ws holds.
func floatBlob(b *operators.Base, ws operators.Workspace, name, what string) (*blob.Tensor, error) {
	bl := ws.GetBlob(name)
	if bl == nil {
		return nil, b.Errorf("%s %q: %w", what, name, operators.ErrBlobNotFound)
	}
	t := bl.Tensor()
	if t == nil || t.DataType() != blob.Float32 || !t.OnHost() {
		return nil, b.Errorf("%s %q must be a FLOAT tensor in Go memory, got %s", what, name, describe(bl))
	}
	return t, nil
}

func (o *recurrentNetworkGradient) Run() error {
	x, err := o.InputOf(o.gradInputs, blob.Float32)
	if err != nil {
		return err
	}
	if x.NumDims() < 2 {
		return o.Errorf("input %d (%q) has shape %v, want [T, N, …]", o.gradInputs, o.InputName(o.gradInputs), x.Dims())
	}
	seqLen, batch := x.Dim(0), x.Dim(1)
	last := o.NumInputs() - 1
	sc, ok := o.InputBlob(last).Get().(*scratch)
	if !ok || sc.shared == nil || len(sc.steps) < seqLen || sc.shared.parent != o.Workspace() {
		return o.Errorf("input %d (%q) holds %s, not the step workspaces of a RecurrentNetwork run with a backward_step_net over %d timesteps in this workspace",
			last, o.InputName(last), o.InputBlob(last).TypeName(), seqLen)
	}
	ws := o.Workspace()
	for i, p := range o.params {
		pt, err := floatBlob(o.Base, ws, p.param, "parameter")
		if err != nil {
			return err
		}
		if _, err := o.zeroedLike(o.OutputBlob(1+i), p.grad, pt); err != nil {
			return err
		}
	}
	grads := o.grads
	for i, s := range o.states {
		st, err := floatBlob(o.Base, ws, s.state, "state")
		if err != nil {
			return err
		}
		if st.NumDims() != 3 {
			return o.Errorf("state %q has shape %v, want 3 dims", s.state, st.Dims())
		}
		if grads[i], err = o.zeroedLike(ws.CreateBlob(s.grad), s.grad, st); err != nil {
			return err
		}
		if s.last != "" {
			og, err := floatBlob(o.Base, ws, s.last, "gradient")
			if err != nil {
				return err
			}
			row := grads[i].Size() / grads[i].Dim(0)
			if og.Size() != row {
				return o.Errorf("gradient %q has shape %v; the last row of %q has %d elements", s.last, og.Dims(), s.state, row)
			}
			add(blob.Data[float32](grads[i])[grads[i].Size()-row:], blob.Data[float32](og))
		}
	}
	inGrad := o.inputGrad
	ib := ws.GetBlob(inGrad)
	if ib == nil {
		return o.Errorf("the gradient %q of input %q: %w", inGrad, o.InputName(o.gradInputs), operators.ErrBlobNotFound)
	}
	if _, err := o.zeroedLike(ib, inGrad, x); err != nil {
		return err
	}
	if len(sc.steps) > 0 && sc.steps[0] != nil {
		for _, op := range o.stepNet.GetOp() {
			for _, out := range op.GetOutput() {
				if sc.steps[0].GetBlob(out) == nil {
					sc.shared.CreateBlob(out)
				}
			}
		}
	}
	ctx := o.Context()
	for t := seqLen - 1; t >= 0; t-- {
		if err := ctx.Err(); err != nil {
			return err
		}
		w := sc.steps[t]
		if w == nil {
			return o.Errorf("no step workspace for timestep %d", t)
		}
		for i, s := range o.states {
			if s.external != "" {
				if err := o.accumulate(grads[i], s, t); err != nil {
					return err
				}
			}
		}
		for i, l := range o.links {
			if o.views[i], err = l.apply(o.Base, w, t); err != nil {
				return err
			}
		}
		if w.bwd == nil {
			if w.bwd, err = createStepNet(o.Base, o.stepNet, w); err != nil {
				return err
			}
		}
		if err := runStepNet(ctx, o.stepNet, w.bwd, t); err != nil {
			return err
		}
		for i, l := range o.links {
			if o.writes[i] {
				if err := l.checkView(o.Base, w, o.views[i]); err != nil {
					return err
				}
			}
		}
	}
	for i, s := range o.initial {
		if err := o.initialGradient(1+len(o.params)+i, s, grads[i], batch); err != nil {
			return err
		}
	}
	return nil
}

// accumulate adds row t of the output gradient s.external to row t+1 of
// the state gradient g.
func (o *recurrentNetworkGradient) accumulate(g *blob.Tensor, s stateGradient, t int) error {
	og, err := floatBlob(o.Base, o.Workspace(), s.external, "gradient")
	if err != nil {
		return err
	}
	row := g.Size() / g.Dim(0)
	if og.NumDims() < 1 || og.Dim(0) <= t || og.Size()/og.Dim(0) != row || t+1 >= g.Dim(0) {
		return o.Errorf("gradient %q has shape %v; at timestep %d it must have a row %d of %d elements for %q (shape %v)",
			s.external, og.Dims(), t, t, row, s.grad, g.Dims())
	}
	add(blob.Data[float32](g)[(t+1)*row:(t+2)*row], blob.Data[float32](og)[t*row:(t+1)*row])
	return nil
}

// initialGradient writes output out, the gradient of the initial value of
// s: the first rows of the state gradient g, summed over the batch when
// the initial value is one [D] row for every sequence.
func (o *recurrentNetworkGradient) initialGradient(out int, s recurrentInput, g *blob.Tensor, batch int) error {
	init, err := o.InputOf(s.index, blob.Float32)
	if err != nil {
		return err
	}
	y := o.Output(out)
	if err := y.Init(blob.Float32, init.Dims()...); err != nil {
		return o.Errorf("output %d (%q): %w", out, o.OutputName(out), err)
	}
	dst, src := blob.Data[float32](y), blob.Data[float32](g)
	if init.NumDims() >= 2 {
		if len(src) < len(dst) {
			return o.Errorf("the gradient of %q has %d elements, fewer than its initial value %q (shape %v)", s.state, len(src), s.input, init.Dims())
		}
		copy(dst, src)
		return nil
	}
	clear(dst)
	d := len(dst)
	if len(src) < batch*d {
		return o.Errorf("the gradient of %q has %d elements, fewer than %d sequences of %d", s.state, len(src), batch, d)
	}
	for n := 0; n < batch && d > 0; n++ {
		add(dst, src[n*d:(n+1)*d])
	}
	return nil
}

func add(dst, src []float32) {
	for i, v := range src {
		dst[i] += v
	}
}
