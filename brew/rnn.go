package brew

import (
	"fmt"
	"slices"

	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

// LSTMOptions are the optional settings of LSTM.
type LSTMOptions struct {
	// ForgetBias is added to the forget gate's input (LSTMUnit's
	// forget_bias; Caffe2's default 0).
	ForgetBias float32
	// DropStates zeroes the state past a sequence's length instead of
	// carrying it.
	DropStates bool
	// OutputsWithGrads lists the outputs (hidden_all, hidden_last,
	// cell_all, cell_last) whose gradients flow back; nil means hidden_all
	// alone, Caffe2's default.
	OutputsWithGrads []int
	// MemoryOptimization keeps one gates_t for all timesteps instead of
	// one per timestep; the backward step net recomputes it (Caffe2's
	// memory_optimization).
	MemoryOptimization bool
}

// LSTM adds a one-layer LSTM over input [T, N, dimIn], Caffe2's
// rnn_cell.LSTM: an FC scope+"/i2h" to 4·dimOut gates for all timesteps
// at once, then a RecurrentNetwork operator whose step net is
// FC(hidden_t_prev) scope+"/gates_t" + that timestep's i2h row, then
// LSTMUnit (gates in Caffe2's order i, f, o, g). initialStates are the
// hidden and cell state blobs at t = 0 ([1, N, dimOut], [N, dimOut] or
// [dimOut]); seqLengths is an int32 [N] blob of sequence lengths. It
// returns the outputs: all hidden states [T, N, dimOut], the last one [1,
// N, dimOut], all cell states and the last one, named scope+"/hidden_t_all"
// and so on.
func LSTM(m *Model, input, seqLengths string, initialStates [2]string, dimIn, dimOut int, scope string, o LSTMOptions) (hiddenAll, hiddenLast, cellAll, cellLast string) {
	outs := sticky(m, func() ([]string, error) { return lstm(m, input, seqLengths, initialStates, dimIn, dimOut, scope, o) })
	if len(outs) != 4 {
		return "", "", "", ""
	}
	return outs[0], outs[1], outs[2], outs[3]
}

func lstm(m *Model, input, seqLengths string, initialStates [2]string, dimIn, dimOut int, scope string, o LSTMOptions) ([]string, error) {
	if scope == "" {
		return nil, fmt.Errorf("brew: LSTM(%q): empty scope", input)
	}
	s := func(name string) string { return scope + "/" + name }
	i2h := FC(m, input, s("i2h"), dimIn, 4*dimOut, Axis(2))
	if m.err != nil {
		return nil, m.err
	}
	step, err := NewModelWith(scope, ModelOptions{ParamModel: m, NoInitParams: !m.InitParams})
	if err != nil {
		return nil, err
	}
	inputT, timestep, hPrev, cPrev := s("input_t"), s("timestep"), s("hidden_t_prev"), s("cell_t_prev")
	if err := step.Net.AddExternalInput(inputT, timestep, hPrev, cPrev, seqLengths); err != nil {
		return nil, fmt.Errorf("brew: LSTM(%q): %w", input, err)
	}
	gates := FC(step, hPrev, s("gates_t"), dimOut, 4*dimOut, Axis(2))
	step.Op("Sum", []string{gates, inputT}, []string{gates})
	hT, cT := s("hidden_t"), s("cell_t")
	step.Op("LSTMUnit", []string{hPrev, cPrev, gates, seqLengths, timestep}, []string{hT, cT},
		netdef.ArgFloat("forget_bias", o.ForgetBias), netdef.ArgBool("drop_states", o.DropStates))
	if err := step.Err(); err != nil {
		return nil, fmt.Errorf("brew: LSTM(%q): step net: %w", input, err)
	}
	// The step net reads the gate FC's parameters, which the outer model
	// owns, as external inputs (Caffe2's references).
	for _, p := range []string{gates + "_w", gates + "_b"} {
		if !slices.Contains(step.Net.ExternalInputs(), p) {
			if err := step.Net.AddExternalInput(p); err != nil {
				return nil, fmt.Errorf("brew: LSTM(%q): %w", input, err)
			}
		}
	}
	if err := step.Net.AddExternalOutput(hT, cT); err != nil {
		return nil, fmt.Errorf("brew: LSTM(%q): %w", input, err)
	}
	var recompute []string
	if o.MemoryOptimization {
		recompute = []string{gates}
	}
	return RecurrentNet(m, step.Net.Proto(), RecurrentNetOptions{
		Input:                    [2]string{inputT, i2h},
		InitialStates:            [][2]string{{hPrev, initialStates[0]}, {cPrev, initialStates[1]}},
		Links:                    map[string]string{hPrev: hT, cPrev: cT},
		Timestep:                 timestep,
		Scope:                    scope,
		OutputsWithGrads:         o.OutputsWithGrads,
		RecomputeBlobsOnBackward: recompute,
	})
}

// RecurrentNetOptions describe a recurrent net for RecurrentNet (the
// arguments of Caffe2's recurrent.recurrent_net).
type RecurrentNetOptions struct {
	// Input is the step net's input blob and the [T, N, …] sequence whose
	// row t it is at timestep t.
	Input [2]string
	// InitialStates pairs each step-net state input (the state at t−1)
	// with the blob holding its value at t = 0.
	InitialStates [][2]string
	// Links maps each state input to the step-net output that becomes it
	// at the next timestep.
	Links map[string]string
	// Timestep is the name of the step net's int32 timestep blob
	// ("timestep" when empty).
	Timestep string
	// Scope prefixes the state tensors and step workspaces
	// (scope+"/"+name).
	Scope string
	// OutputsWithGrads lists the outputs whose gradients flow back
	// (default: output 0, all of the first state).
	OutputsWithGrads []int
	// RecomputeBlobsOnBackward lists step-net blobs the backward step net
	// recomputes instead of keeping one per timestep.
	RecomputeBlobsOnBackward []string
}

// RecurrentNet adds a RecurrentNetwork operator running cell, the step
// net, over a sequence, as Caffe2's recurrent.recurrent_net does: it
// derives the backward step net with the gradient registry, the links of
// the state tensors (scope/<state>_states, [T+1, N, D]) and of the input,
// and the aliases that expose each state's outputs <output>_all (rows 1 to
// T) and <output>_last (row T). The blobs cell reads that are none of
// those (parameters, sequence lengths) are passed as inputs too; those
// with a gradient are the operator's params. It returns the outputs: for
// each state, <output>_all and <output>_last.
func RecurrentNet(m *Model, cell *netdef.NetDef, o RecurrentNetOptions) ([]string, error) {
	if err := m.Err(); err != nil {
		return nil, err
	}
	fail := func(format string, args ...any) ([]string, error) {
		return nil, fmt.Errorf("brew: RecurrentNet(%q): %s", o.Scope, fmt.Sprintf(format, args...))
	}
	timestep := o.Timestep
	if timestep == "" {
		timestep = "timestep"
	}
	s := func(name string) string { return o.Scope + "/" + name }
	known := []string{o.Input[0], o.Input[1], timestep}
	for _, st := range o.InitialStates {
		known = append(known, st[0], st[1])
	}
	var references []string
	for _, b := range cell.GetExternalInput() {
		if !slices.Contains(known, b) && !slices.Contains(references, b) {
			references = append(references, b)
		}
	}
	given := map[string]operators.Gradient{}
	for _, out := range cell.GetExternalOutput() {
		given[out] = operators.Dense(out + operators.GradSuffix)
	}
	work := &netdef.NetDef{Op: slices.Clone(cell.GetOp())}
	grads, err := operators.AddGradientOperators(work, nil, given)
	if err != nil {
		return fail("the step net's gradient: %v", err)
	}
	backward := &netdef.NetDef{Name: ptr("RecurrentBackwardStep"), Type: ptr("simple")}
	for _, op := range cell.GetOp() {
		for _, out := range op.GetOutput() {
			if slices.Contains(o.RecomputeBlobsOnBackward, out) {
				backward.Op = append(backward.Op, op)
				break
			}
		}
	}
	backward.Op = append(backward.Op, work.Op[len(cell.GetOp()):]...)
	backwardWrites := map[string]bool{}
	for _, op := range backward.Op {
		for _, out := range op.GetOutput() {
			backwardWrites[out] = true
		}
	}
	// The forward step's blobs the backward step reads come from the step
	// workspaces.
	forwardWrites := map[string]bool{}
	for _, op := range cell.GetOp() {
		for _, out := range op.GetOutput() {
			forwardWrites[out] = true
		}
	}
	for _, op := range backward.Op {
		for _, in := range op.GetInput() {
			if forwardWrites[in] && !slices.Contains(cell.GetExternalOutput(), in) && !slices.Contains(backward.ExternalInput, in) {
				backward.ExternalInput = append(backward.ExternalInput, in)
			}
		}
	}
	var (
		linkIn, linkEx, bwdIn, bwdEx, aliasSrc, aliasDst, states, outputs []string
		linkOff, bwdOff, aliasOff                                         []int64
	)
	addLink := func(in, ex string, off int64) {
		linkIn, linkEx, linkOff = append(linkIn, in), append(linkEx, ex), append(linkOff, off)
	}
	addBwd := func(in, ex string, off int64) {
		bwdIn, bwdEx, bwdOff = append(bwdIn, in), append(bwdEx, ex), append(bwdOff, off)
	}
	for _, st := range o.InitialStates {
		cellIn := st[0]
		cellOut, ok := o.Links[cellIn]
		if !ok {
			return fail("no link gives the state input %q its next value", cellIn)
		}
		state := s(cellIn + "_states")
		stateGrad := state + operators.GradSuffix
		addLink(cellIn, state, 0)
		addLink(cellOut, state, 1)
		addBwd(cellOut+operators.GradSuffix, stateGrad, 1)
		backward.ExternalInput = append(backward.ExternalInput, cellOut+operators.GradSuffix)
		aliasSrc, aliasDst, aliasOff = append(aliasSrc, state, state), append(aliasDst, cellOut+"_all", cellOut+"_last"), append(aliasOff, 1, -1)
		outputs = append(outputs, cellOut+"_all", cellOut+"_last")
		states = append(states, state)
		if inGrad := cellIn + operators.GradSuffix; backwardWrites[inGrad] {
			addBwd(inGrad, stateGrad, 0)
		} else if g := grads[cellIn]; g.Dense != "" {
			addBwd(g.Dense, stateGrad, 0)
		}
	}
	for _, ref := range references {
		if g, ok := grads[ref]; ok && g.Dense != "" && g.Dense != ref+operators.GradSuffix {
			backward.Op = append(backward.Op, netdef.NewOperator("Alias", []string{g.Dense}, []string{ref + operators.GradSuffix}))
		}
	}
	addLink(o.Input[0], o.Input[1], 0)
	g, ok := grads[o.Input[0]]
	if !ok || g.Dense == "" {
		return fail("the step net gives its input %q no dense gradient", o.Input[0])
	}
	addBwd(g.Dense, o.Input[1]+operators.GradSuffix, 0)
	backward.ExternalInput = append(backward.ExternalInput, cell.GetExternalInput()...)
	backward.ExternalInput = append(backward.ExternalInput, cell.GetExternalOutput()...)

	allInputs := []string{o.Input[1]}
	for _, st := range o.InitialStates {
		allInputs = append(allInputs, st[1])
	}
	allInputs = append(allInputs, references...)
	var params, initialIDs []int64
	for _, ref := range references {
		if g, ok := grads[ref]; ok && !g.IsNone() {
			params = append(params, int64(slices.Index(allInputs, ref)))
		}
	}
	for _, st := range o.InitialStates {
		initialIDs = append(initialIDs, int64(slices.Index(allInputs, st[1])))
	}
	withGrads := []int64{0}
	if len(o.OutputsWithGrads) > 0 {
		withGrads = withGrads[:0]
		for _, i := range o.OutputsWithGrads {
			withGrads = append(withGrads, int64(i))
		}
	}
	stepDef := &netdef.NetDef{Name: ptr(cell.GetName()), Type: ptr("simple"), Op: cell.GetOp(),
		ExternalInput: cell.GetExternalInput(), ExternalOutput: cell.GetExternalOutput()}
	stepText, err := netdef.MarshalText(stepDef)
	if err != nil {
		return fail("%v", err)
	}
	backwardText, err := netdef.MarshalText(backward)
	if err != nil {
		return fail("%v", err)
	}
	args := []*netdef.Argument{
		netdef.ArgInts("param", params...),
		netdef.ArgStrings("alias_src", aliasSrc...),
		netdef.ArgStrings("alias_dst", aliasDst...),
		netdef.ArgInts("alias_offset", aliasOff...),
		netdef.ArgStrings("recurrent_states", states...),
		netdef.ArgInts("initial_recurrent_state_ids", initialIDs...),
		netdef.ArgStrings("link_internal", linkIn...),
		netdef.ArgStrings("link_external", linkEx...),
		netdef.ArgInts("link_offset", linkOff...),
		netdef.ArgStrings("backward_link_internal", bwdIn...),
		netdef.ArgStrings("backward_link_external", bwdEx...),
		netdef.ArgInts("backward_link_offset", bwdOff...),
		netdef.ArgString("step_net", string(stepText)),
		netdef.ArgString("backward_step_net", string(backwardText)),
		netdef.ArgString("timestep", timestep),
		netdef.ArgInts("outputs_with_grads", withGrads...),
		netdef.ArgStrings("recompute_blobs_on_backward", o.RecomputeBlobsOnBackward...),
	}
	m.Op("RecurrentNetwork", allInputs, append(slices.Clone(outputs), s("step_workspaces")), args...)
	if err := m.Err(); err != nil {
		return nil, err
	}
	return outputs, nil
}

func ptr[T any](v T) *T { return &v }
