package rnn

import (
	"fmt"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

var recurrentArgs = []operators.ArgSpec{
	{Name: "step_net", Doc: "the NetDef run at each timestep (a NetDef or its text format)"},
	{Name: "backward_step_net", Doc: "the gradient of the step net; without it the operator runs forward only"},
	{Name: "recurrent_states", Doc: "names of the [T+L, N, D] state tensors, one per recurrent input"},
	{Name: "initial_recurrent_state_ids", Doc: "the input holding each state's initial value: [L, N, D], [N, D] or [D]"},
	{Name: "link_internal", Doc: "step-net blob names that are views of rows of link_external at t + link_offset"},
	{Name: "link_external"}, {Name: "link_offset"}, {Name: "link_window", Doc: "rows per link (default 1 each)"},
	{Name: "backward_link_internal", Doc: "the links of the backward step net, after the forward ones"},
	{Name: "backward_link_external"}, {Name: "backward_link_offset"},
	{Name: "alias_src", Doc: "tensors whose rows from alias_offset on (negative: from the end) become the output alias_dst"},
	{Name: "alias_dst"}, {Name: "alias_offset"},
	{Name: "param", Doc: "indices of the inputs that are parameters of the step net (they get gradients)"},
	{Name: "param_grads", Doc: "the names the backward step net gives the parameters' gradients, when not param + \"_grad\""},
	{Name: "outputs_with_grads", Doc: "the outputs (aliases) whose gradients flow back; the gradient needs one at least"},
	{Name: "recompute_blobs_on_backward", Doc: "step-net blobs kept once for all timesteps: the backward step net recomputes them"},
	{Name: "timestep", Default: "timestep", Doc: "name of the int32 blob holding the step index in each step workspace"},
	{Name: "enable_rnn_executor", Default: false, Doc: "accepted and ignored: timesteps run one after another"},
}

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type: "RecurrentNetwork", MinInputs: 1, MaxInputs: operators.Unbounded, MinOutputs: 2, MaxOutputs: operators.Unbounded,
		Args: recurrentArgs,
		Doc: "RecurrentNetwork(input [T, N, …], initial states…, parameters…) → (aliases…, step_workspaces): runs step_net " +
			"once per timestep in a step workspace of its own, linking its blobs to rows of the state tensors (see package rnn).",
	}, newRecurrentNetwork)
	operators.MustRegisterCPU(operators.Schema{
		Type: "RecurrentNetworkGradient", MinInputs: 3, MaxInputs: operators.Unbounded, MinOutputs: 1, MaxOutputs: operators.Unbounded,
		Args: recurrentArgs,
		Doc: "RecurrentNetworkGradient(output gradients…, RecurrentNetwork's inputs…, its outputs…) → (input_grad, " +
			"parameter gradients…, initial state gradients…): runs backward_step_net from the last timestep to the first.",
	}, newRecurrentNetworkGradient)
	operators.MustRegisterGradient("RecurrentNetwork", recurrentGradient)
	operators.MustRegisterShapeFunc("RecurrentNetwork", recurrentShape)
	operators.MustRegisterShapeFunc("RecurrentNetworkGradient", recurrentGradientShape)
}

// recurrentGradient is Caffe2's GetRecurrentNetworkGradient: the gradients
// of the outputs in outputs_with_grads, then every input and every output
// of the forward operator, give the gradients of input 0, of the params
// and of the initial states.
func recurrentGradient(g *operators.GradientContext) error {
	ids := intsArg(g.Arg("outputs_with_grads"), nil)
	if len(ids) == 0 {
		return fmt.Errorf("RecurrentNetwork: outputs_with_grads names no output: the gradient needs at least one")
	}
	var in []string
	for _, id := range ids {
		if id < 0 || int(id) >= g.NumOutputs()-1 {
			return fmt.Errorf("RecurrentNetwork: outputs_with_grads names output %d of %d", id, g.NumOutputs()-1)
		}
		in = append(in, g.GO(int(id)))
	}
	for i := 0; i < g.NumInputs(); i++ {
		in = append(in, g.I(i))
	}
	for i := 0; i < g.NumOutputs(); i++ {
		in = append(in, g.O(i))
	}
	out := []string{g.GI(0)}
	for _, name := range []string{"param", "initial_recurrent_state_ids"} {
		for _, id := range intsArg(g.Arg(name), nil) {
			if id < 0 || int(id) >= g.NumInputs() {
				return fmt.Errorf("RecurrentNetwork: %s names input %d of %d", name, id, g.NumInputs())
			}
			out = append(out, g.GI(int(id)))
		}
	}
	g.Op("RecurrentNetworkGradient", in, out)
	return nil
}

func intsArg(a *netdef.Argument, def []int64) []int64 {
	if a == nil {
		return def
	}
	return a.Ints
}

// recurrentInput is a state tensor and the input that initializes it.
type recurrentInput struct {
	state, input string
	index        int
}

// alias exposes the rows of src from offset on (from the end when
// negative) as output out.
type alias struct {
	src, dst string
	offset   int
	out      int
}

func readAliases(b *operators.Base) ([]alias, error) {
	src := b.ArgStrings("alias_src", nil)
	dst := b.ArgStrings("alias_dst", nil)
	off := b.ArgInts("alias_offset", nil)
	if len(src) != len(off) || len(dst) != len(off) {
		return nil, b.Errorf("alias_src, alias_dst and alias_offset have %d, %d and %d entries: want one each per alias", len(src), len(dst), len(off))
	}
	out := make([]alias, len(off))
	for i := range out {
		if off[i] < -(1<<30) || off[i] > 1<<30 {
			return nil, b.Errorf("alias %d (%q → %q) has offset %d", i, src[i], dst[i], off[i])
		}
		out[i] = alias{src: src[i], dst: dst[i], offset: int(off[i]), out: -1}
	}
	return out, nil
}

// recurrentInputs reads recurrent_states and initial_recurrent_state_ids.
func recurrentInputs(b *operators.Base, inputOffset int) ([]recurrentInput, error) {
	states := b.ArgStrings("recurrent_states", nil)
	ids := b.ArgInts("initial_recurrent_state_ids", nil)
	if len(states) != len(ids) {
		return nil, b.Errorf("recurrent_states has %d entries, initial_recurrent_state_ids %d: want one initial input per state", len(states), len(ids))
	}
	out := make([]recurrentInput, len(states))
	for i, s := range states {
		k := int64(inputOffset) + ids[i]
		if ids[i] < 0 || k >= int64(b.NumInputs()) {
			return nil, b.Errorf("initial_recurrent_state_ids[%d] = %d is not an input", i, ids[i])
		}
		out[i] = recurrentInput{state: s, input: b.InputName(int(k)), index: int(k)}
	}
	return out, nil
}

type recurrentNetwork struct {
	*operators.Base
	stepNet     *netdef.NetDef
	links       []link
	writes      []bool // links whose internal blob the step net writes
	aliases     []alias
	states      []recurrentInput
	timestep    string
	hasBackward bool
	recompute   []string
	views       [][]float32 // each link's rows at the current timestep
}

func newRecurrentNetwork(b *operators.Base) (operators.Operator, error) {
	net, ok, err := stepNetArg(b, "step_net")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, b.Errorf("argument step_net is required")
	}
	_, hasBackward, err := stepNetArg(b, "backward_step_net")
	if err != nil {
		return nil, err
	}
	o := &recurrentNetwork{Base: b, stepNet: net, hasBackward: hasBackward,
		timestep: b.ArgString("timestep", "timestep"), recompute: b.ArgStrings("recompute_blobs_on_backward", nil)}
	if o.links, err = readLinks(b, "link", true); err != nil {
		return nil, err
	}
	w := written(net)
	for _, l := range o.links {
		o.writes = append(o.writes, w[l.internal])
	}
	o.views = make([][]float32, len(o.links))
	if o.aliases, err = readAliases(b); err != nil {
		return nil, err
	}
	for i := range o.aliases {
		o.aliases[i].out = slices.Index(b.Def().GetOutput()[:b.NumOutputs()-1], o.aliases[i].dst)
		if o.aliases[i].out < 0 {
			return nil, b.Errorf("alias_dst %q is not one of the outputs before step_workspaces", o.aliases[i].dst)
		}
	}
	if o.states, err = recurrentInputs(b, 0); err != nil {
		return nil, err
	}
	// The states are blobs of the workspace the operator runs in, shared
	// with the gradient operator, as in Caffe2.
	for _, s := range o.states {
		b.Workspace().CreateBlob(s.state)
	}
	return o, nil
}

// scratchOf returns the step workspaces held by blob bl, creating them
// when it holds none.
func scratchOf(bl *blob.Blob) *scratch {
	if s, ok := bl.Get().(*scratch); ok {
		return s
	}
	s := &scratch{}
	bl.Set(s)
	return s
}

func (o *recurrentNetwork) Run() error {
	x, err := o.InputOf(0, blob.Float32)
	if err != nil {
		return err
	}
	if x.NumDims() < 2 {
		return o.Errorf("input 0 (%q) has shape %v, want [T, N, …]", o.InputName(0), x.Dims())
	}
	seqLen, batch := x.Dim(0), x.Dim(1)
	workspaces := 2
	if o.hasBackward {
		workspaces = seqLen
	}
	if err := blob.CheckAllocation(int64(workspaces) * stepCost); err != nil {
		return o.Errorf("%d timesteps of input 0 (%q, shape %v): %w", seqLen, o.InputName(0), x.Dims(), err)
	}
	ws := o.Workspace()
	for _, s := range o.states {
		if err := initState(o.Base, ws, s, seqLen, batch); err != nil {
			return err
		}
	}
	sc := scratchOf(o.OutputBlob(o.NumOutputs() - 1))
	if sc.shared == nil || sc.shared.parent != ws {
		sc.shared, sc.steps = newStepWorkspace(ws), nil
	}
	for _, name := range o.recompute {
		sc.shared.CreateBlob(name)
	}
	if len(sc.steps) < workspaces {
		sc.steps = append(sc.steps, make([]*stepWorkspace, workspaces-len(sc.steps))...)
	}
	ctx := o.Context()
	for t := 0; t < seqLen; t++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		k := t
		if !o.hasBackward {
			k = t % workspaces
		}
		if sc.steps[k] == nil {
			sc.steps[k] = newStepWorkspace(sc.shared)
		}
		w := sc.steps[k]
		if err := timestepBlob(o.Base, w, o.timestep, t); err != nil {
			return err
		}
		for i, l := range o.links {
			if o.views[i], err = l.apply(o.Base, w, t); err != nil {
				return err
			}
		}
		if w.fwd == nil {
			if w.fwd, err = createStepNet(o.Base, o.stepNet, w); err != nil {
				return err
			}
		}
		if err := runStepNet(ctx, o.stepNet, w.fwd, t); err != nil {
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
	for _, a := range o.aliases {
		if err := o.applyAlias(a); err != nil {
			return err
		}
	}
	return nil
}

// initState is Caffe2's initializeRecurrentInput: the state tensor
// becomes [T+L, N, D] with its first L rows the initial value ([L, N, D],
// [N, D], or [D] repeated for every sequence).
func initState(b *operators.Base, ws operators.Workspace, s recurrentInput, seqLen, batch int) error {
	init, err := b.InputOf(s.index, blob.Float32)
	if err != nil {
		return err
	}
	if init.NumDims() < 1 || init.NumDims() > 3 {
		return b.Errorf("input %d (%q), the initial value of %q, has shape %v: want [D], [N, D] or [L, N, D]", s.index, s.input, s.state, init.Dims())
	}
	d := init.Dim(init.NumDims() - 1)
	l := 1
	if init.NumDims() == 3 {
		l = init.Dim(0)
	}
	if init.NumDims() >= 2 && init.Dim(init.NumDims()-2) != batch {
		return b.Errorf("input %d (%q), the initial value of %q, has shape %v for a batch of %d", s.index, s.input, s.state, init.Dims(), batch)
	}
	st := ws.CreateBlob(s.state).MutableTensor()
	if err := st.Init(blob.Float32, seqLen+l, batch, d); err != nil {
		return b.Errorf("state %q: %w", s.state, err)
	}
	dst, src := blob.Data[float32](st), blob.Data[float32](init)
	if init.NumDims() >= 2 {
		copy(dst, src)
		return nil
	}
	for n := 0; n < batch && d > 0; n++ {
		copy(dst[n*d:(n+1)*d], src)
	}
	return nil
}

// applyAlias makes output a.out a view of a.src's rows from a.offset on.
func (o *recurrentNetwork) applyAlias(a alias) error {
	sb := o.Workspace().GetBlob(a.src)
	if sb == nil {
		return o.Errorf("alias_src %q: %w", a.src, operators.ErrBlobNotFound)
	}
	src := sb.Tensor()
	if src == nil || src.DataType() != blob.Float32 || src.NumDims() < 1 || !src.OnHost() {
		return o.Errorf("alias_src %q must be a FLOAT tensor in Go memory, got %s", a.src, describe(sb))
	}
	rows := src.Dim(0)
	start := a.offset
	if start < 0 {
		start += rows
	}
	if start < 0 || start > rows {
		return o.Errorf("alias %q → %q: offset %d of a tensor of shape %v", a.src, a.dst, a.offset, src.Dims())
	}
	row := 0
	if rows > 0 {
		row = src.Size() / rows
	}
	o.Output(a.out) // on the operator's device, like every output
	if err := shareRows(o.OutputBlob(a.out), src, blob.Data[float32](src)[start*row:], rows-start); err != nil {
		return o.Errorf("alias %q → %q: %w", a.src, a.dst, err)
	}
	return nil
}

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

// recurrentShape infers the aliases' shapes: a state is [T+L, N, D] for an
// input [T, N, …] and an initial value whose last dim is D (and first L,
// when it has 3 dims).
func recurrentShape(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	out := make([]operators.TensorShape, b.NumOutputs())
	for i := range out {
		out[i] = operators.UnknownShape
	}
	if len(in) == 0 || in[0].Unknown || in[0].Rank() < 2 {
		return out, nil
	}
	states := b.ArgStrings("recurrent_states", nil)
	ids := b.ArgInts("initial_recurrent_state_ids", nil)
	aliases, err := readAliases(b)
	if err != nil || len(states) != len(ids) {
		return out, nil
	}
	for _, a := range aliases {
		k := slices.Index(states, a.src)
		j := slices.Index(b.Def().GetOutput(), a.dst)
		if k < 0 || j < 0 || j >= len(out)-1 || ids[k] < 0 || ids[k] >= int64(len(in)) {
			continue
		}
		init := in[ids[k]]
		if init.Unknown || init.Rank() < 1 || init.Rank() > 3 {
			continue
		}
		l := 1
		if init.Rank() == 3 {
			l = init.Dim(0)
		}
		rows := operators.AnyDim
		if t := in[0].Dim(0); t >= 0 && l >= 0 {
			rows = t + l
		}
		first := operators.AnyDim
		switch {
		case rows >= 0 && a.offset >= 0:
			first = max(rows-a.offset, 0)
		case rows >= 0:
			first = min(-a.offset, rows)
		case a.offset < 0:
			first = -a.offset
		}
		out[j] = operators.Shape(blob.Float32, first, in[0].Dim(1), init.Dim(init.Rank()-1))
	}
	return out, nil
}

// recurrentGradientShape: input 0's gradient is shaped like it, each
// parameter's like the parameter, each initial state's like its value.
func recurrentGradientShape(b *operators.Base, in []operators.TensorShape) ([]operators.TensorShape, error) {
	out := make([]operators.TensorShape, b.NumOutputs())
	for i := range out {
		out[i] = operators.UnknownShape
	}
	off := int64(len(b.ArgInts("outputs_with_grads", nil)))
	like := []int64{0}
	like = append(like, b.ArgInts("param", nil)...)
	like = append(like, b.ArgInts("initial_recurrent_state_ids", nil)...)
	for i, id := range like {
		if i < len(out) && id >= 0 && off+id < int64(len(in)) {
			out[i] = in[off+id]
		}
	}
	return out, nil
}
