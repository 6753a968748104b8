package rnn

import (
	"fmt"
	"slices"

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
