package operators

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
)

// Names autodiff gives to the blobs and operators it generates.
const (
	// AutogenGradSuffix names the all-ones gradient emitted for a target
	// blob y that has no given gradient: y + "_autogen_grad".
	AutogenGradSuffix = "_autogen_grad"
	// StopGradientType is the operator type whose output must be read by a
	// later operator (Caffe2's "StopGradient's output is orphan" check).
	StopGradientType = "StopGradient"
	// ZeroGradientType is the operator type whose gradient is generated even
	// though it has no outputs.
	ZeroGradientType = "ZeroGradient"
)

// AddGradientOperators appends the backward pass of net's operators to
// net.Op, as Caffe2's Net.AddGradientOperators does, and returns the
// gradient of every blob that has one (including the targets themselves).
//
// ys lists the blobs to differentiate. given supplies their gradients: a
// dense blob name or a sparse (indices, values) slice. A key of given that
// is not in ys is a target too (after those of ys, in name order). A target
// without a gradient, or whose given gradient is none, gets
// ConstantFill([y], [y+"_autogen_grad"], value=1.0), emitted first in the
// order of ys.
//
// The algorithm is Caffe2's (spec §3.7): the forward operators are replayed
// in SSA form, then visited in reverse; each operator with an output
// gradient (and every ZeroGradient) has its registered gradient maker run,
// the inputs of the emitted gradient operators are checked to be at the
// versions the forward operator saw, and when a blob version read by several
// operators receives several gradients they are accumulated: dense ones are
// renamed "_" + X_grad + "_autosplit_k" and summed by a Sum into X_grad,
// sparse ones are concatenated by two Concat operators. The operators
// autodiff creates itself (ConstantFill, Sum, Concat) take the current
// devicescope device option; Sum and Concat then take the device option of
// the first gradient operator that generated one of their inputs, if it has
// one.
//
// On error net is left unchanged; the error names the operator (index and
// type) and the blob involved.
func AddGradientOperators(net *netdef.NetDef, ys []string, given map[string]Gradient) (map[string]Gradient, error) {
	if net == nil {
		return nil, fmt.Errorf("autodiff: nil net")
	}
	targets, err := gradientTargets(ys, given)
	if err != nil {
		return nil, err
	}
	r, err := newIR(net.Op)
	if err != nil {
		return nil, err
	}
	ops, grads, err := r.backwardPass(targets)
	if err != nil {
		return nil, err
	}
	net.Op = append(net.Op, ops...)
	out := make(map[string]Gradient, len(grads.m))
	for name, g := range grads.m {
		if !g.IsNone() {
			out[name] = g
		}
	}
	return out, nil
}

// target is one blob to differentiate and its given gradient (none when
// autodiff must generate it).
type target struct {
	name string
	grad Gradient
}

func gradientTargets(ys []string, given map[string]Gradient) ([]target, error) {
	var targets []target
	seen := map[string]bool{}
	add := func(y string) error {
		if seen[y] {
			return nil
		}
		if y == "" {
			return fmt.Errorf("autodiff: empty target blob name")
		}
		seen[y] = true
		g := given[y]
		if err := checkGradient(g); err != nil {
			return fmt.Errorf("autodiff: given gradient of %q: %w", y, err)
		}
		targets = append(targets, target{y, g})
		return nil
	}
	for _, y := range ys {
		if err := add(y); err != nil {
			return nil, err
		}
	}
	var extra []string
	for y := range given {
		if !seen[y] {
			extra = append(extra, y)
		}
	}
	slices.Sort(extra)
	for _, y := range extra {
		if err := add(y); err != nil {
			return nil, err
		}
	}
	return targets, nil
}

// checkGradient rejects a gradient that is neither none, dense nor a
// complete sparse slice.
func checkGradient(g Gradient) error {
	switch {
	case g.IsNone():
		return nil
	case g.Dense != "" && g.IsSparse():
		return fmt.Errorf("gradient sets both a dense blob (%q) and a sparse slice (%q, %q)", g.Dense, g.Indices, g.Values)
	case g.IsSparse() && (g.Indices == "" || g.Values == ""):
		return fmt.Errorf("sparse gradient needs both indices and values, got (%q, %q)", g.Indices, g.Values)
	}
	return nil
}

// vblob is a blob at one SSA version.
type vblob struct {
	name    string
	version int
}

// opSSA is one forward operator with the version of each input it read and
// of each output it wrote (by name, as Caffe2 keys them).
type opSSA struct {
	op  *netdef.OperatorDef
	in  map[string]int
	out map[string]int
}

// versionEvent records that operator op read or wrote a blob at version.
type versionEvent struct {
	op      int
	version int
}

// genMeta is one generator of a gradient of a blob version: the gradient
// operator (and output index) producing it, or none for a gradient passed
// through without an operator. Sparse generators have an operator for the
// indices and one for the values (either may be absent).
type genMeta struct {
	sparse bool
	op     *netdef.OperatorDef // dense
	idx    int
	opI    *netdef.OperatorDef // sparse indices
	idxI   int
	opV    *netdef.OperatorDef // sparse values
	idxV   int
	grad   Gradient
}

// gradOps returns the gradient operators behind g (none for a pass-through).
func (g *genMeta) gradOps() []*netdef.OperatorDef {
	var ops []*netdef.OperatorDef
	for _, op := range []*netdef.OperatorDef{g.op, g.opI, g.opV} {
		if op != nil {
			ops = append(ops, op)
		}
	}
	return ops
}

// gradMap maps blob names to gradients, remembering which names are present
// with a none gradient (Caffe2 distinguishes "absent" from "None").
type gradMap struct {
	m map[string]Gradient
}

func (g *gradMap) get(name string) (Gradient, bool) {
	v, ok := g.m[name]
	return v, ok
}

// ir is Caffe2's IR: the SSA replay of the forward operators and the state
// of the backward sweep.
type ir struct {
	ssa          []opSSA
	usages       map[vblob][]int
	readNames    map[string]bool
	frontier     map[string]int
	gradFrontier map[string]int
	generators   map[vblob][]*genMeta
	outHistory   map[string][]versionEvent
	inHistory    map[string][]versionEvent
}

func newIR(ops []*netdef.OperatorDef) (*ir, error) {
	r := &ir{
		usages:       map[vblob][]int{},
		readNames:    map[string]bool{},
		frontier:     map[string]int{},
		gradFrontier: map[string]int{},
		generators:   map[vblob][]*genMeta{},
		outHistory:   map[string][]versionEvent{},
		inHistory:    map[string][]versionEvent{},
	}
	for i, op := range ops {
		if op == nil {
			return nil, fmt.Errorf("autodiff: operator %d is nil", i)
		}
		r.play(op)
	}
	if err := r.sanityCheck(); err != nil {
		return nil, err
	}
	return r, nil
}

// play replays op: inputs are read at their current version (a blob never
// seen is at version 0), and each output moves to the next version (a new
// blob starts at 0).
func (r *ir) play(op *netdef.OperatorDef) {
	idx := len(r.ssa)
	s := opSSA{op: op, in: make(map[string]int, len(op.Input)), out: make(map[string]int, len(op.Output))}
	for _, name := range op.Input {
		v := r.frontier[name]
		r.frontier[name] = v
		s.in[name] = v
		key := vblob{name, v}
		r.usages[key] = append(r.usages[key], idx)
		r.readNames[name] = true
		r.inHistory[name] = append(r.inHistory[name], versionEvent{idx, v})
	}
	for _, name := range op.Output {
		if v, ok := r.frontier[name]; ok {
			r.frontier[name] = v + 1
		} else {
			r.frontier[name] = 0
		}
		s.out[name] = r.frontier[name]
		r.outHistory[name] = append(r.outHistory[name], versionEvent{idx, r.frontier[name]})
	}
	r.ssa = append(r.ssa, s)
}

// sanityCheck rejects a StopGradient whose output no operator reads: the
// gradient would be stopped on a blob nothing uses.
func (r *ir) sanityCheck() error {
	for i, s := range r.ssa {
		if s.op.GetType() != StopGradientType {
			continue
		}
		if len(s.op.Output) == 0 {
			return fmt.Errorf("autodiff: operator %d (%s) has no output", i, StopGradientType)
		}
		if out := s.op.Output[0]; !r.readNames[out] {
			return fmt.Errorf("autodiff: operator %d (%s): StopGradient's output %q is orphan: no operator reads it. "+
				"You typically want the same blob as input and output of StopGradient", i, StopGradientType, out)
		}
	}
	return nil
}

func (r *ir) opLabel(idx int) string {
	return fmt.Sprintf("operator %d (%s)", idx, r.ssa[idx].op.GetType())
}

func (r *ir) describeOp(idx int) string {
	op := r.ssa[idx].op
	return fmt.Sprintf("operator %d %s(%s) -> (%s)", idx, op.GetType(), strings.Join(op.Input, ", "), strings.Join(op.Output, ", "))
}

// versionHistory is the "DEBUG HELP" text Caffe2 appends to version errors:
// the versions at which operators wrote name (for an output) or read it (for
// an input, with the writes interleaved, since one of them overwrote it).
func (r *ir) versionHistory(name string, out bool) string {
	var sb strings.Builder
	sb.WriteString("\nDEBUG HELP:\n")
	if out {
		sb.WriteString("Maybe you use the same output blob twice for different ops?\n")
	} else {
		sb.WriteString("Maybe the blob was overwritten by another op?\n")
	}
	fmt.Fprintf(&sb, "== Version history of blob [%s]\n", name)
	ins, outs := r.inHistory[name], r.outHistory[name]
	if out {
		ins = nil
	}
	for len(ins) > 0 || len(outs) > 0 {
		if len(outs) == 0 || (len(ins) > 0 && ins[0].op <= outs[0].op) {
			fmt.Fprintf(&sb, "version (in) %d <-- %s\n", ins[0].version, r.describeOp(ins[0].op))
			ins = ins[1:]
		} else {
			fmt.Fprintf(&sb, "version (out) %d <-- %s\n", outs[0].version, r.describeOp(outs[0].op))
			outs = outs[1:]
		}
	}
	return sb.String()
}

// gradIndex returns the index of the gradient in list that is, or whose
// sparse indices or values are, the blob name; -1 if none.
func gradIndex(list []Gradient, name string) int {
	if name == "" {
		return -1
	}
	for i, g := range list {
		if g.Dense == name || g.Indices == name || g.Values == name {
			return i
		}
	}
	return -1
}

// backwardPass builds the gradient operators for targets.
func (r *ir) backwardPass(targets []target) ([]*netdef.OperatorDef, *gradMap, error) {
	end := len(r.ssa)
	for _, t := range targets {
		v := r.frontier[t.name]
		r.gradFrontier[t.name] = v
		key := vblob{t.name, v}
		r.usages[key] = append(r.usages[key], end)
	}
	grads := &gradMap{m: map[string]Gradient{}}
	var ops []*netdef.OperatorDef
	for _, t := range targets {
		g := t.grad
		if g.IsNone() {
			fill := r.newOp("ConstantFill", []string{t.name}, []string{t.name + AutogenGradSuffix}, netdef.ArgFloat("value", 1.0))
			ops = append(ops, fill)
			g = Dense(fill.Output[0])
			key := vblob{t.name, r.frontier[t.name]}
			r.generators[key] = append(r.generators[key], &genMeta{op: fill, idx: 0, grad: g})
		}
		grads.m[t.name] = g
	}
	for idx := end - 1; idx >= 0; idx-- {
		gops, err := r.gradientsForOp(idx, grads)
		if err != nil {
			return nil, nil, err
		}
		ops = append(ops, gops...)
		sums, err := r.accumulate(idx, grads)
		if err != nil {
			return nil, nil, err
		}
		ops = append(ops, sums...)
	}
	return ops, grads, nil
}

// newOp builds an operator autodiff emits itself as Caffe2's CreateOperator
// does: with an (empty) name set, on the current device scope's device (none
// when there is no device scope).
func (r *ir) newOp(typ string, inputs, outputs []string, args ...*netdef.Argument) *netdef.OperatorDef {
	op := netdef.NewOperator(typ, inputs, outputs, args...)
	op.Name = proto.String("")
	op.DeviceOption = devicescope.Current().Device()
	return op
}

// gradientsForOp runs the gradient maker of forward operator idx when one of
// its outputs has a gradient (or it is a ZeroGradient), checks the emitted
// operators and records their gradients.
func (r *ir) gradientsForOp(idx int, grads *gradMap) ([]*netdef.OperatorDef, error) {
	s := r.ssa[idx]
	op := s.op
	gOut := make([]Gradient, len(op.Output))
	hasGrad := false
	for i, name := range op.Output {
		gOut[i], _ = grads.get(name)
		if !gOut[i].IsNone() {
			hasGrad = true
		}
	}
	if !hasGrad && op.GetType() != ZeroGradientType {
		return nil, nil
	}
	defs, err := r.makeGradient(idx, gOut)
	if err != nil {
		return nil, err
	}
	if err := r.buildGenerators(idx, defs.Ops, gOut, defs.InputGrad); err != nil {
		return nil, err
	}
	// A none gradient does not overwrite an existing entry unless the input
	// is also an output of the operator (its version changes there).
	updates := make(map[string]Gradient, len(op.Input))
	for i, name := range op.Input {
		g := defs.InputGrad[i]
		_, present := grads.get(name)
		if !g.IsNone() || !present || contains(op.Output, name) {
			updates[name] = g
		}
	}
	for name, g := range updates {
		grads.m[name] = g
	}
	return defs.Ops, nil
}

// makeGradient runs the forward operator's gradient maker (which checks the
// operator against its schema first) and validates what it returns.
func (r *ir) makeGradient(idx int, gOut []Gradient) (*GradientDefs, error) {
	op := r.ssa[idx].op
	label := r.opLabel(idx)
	defs, err := GetGradientDefs(op, gOut)
	if err != nil {
		return nil, fmt.Errorf("autodiff: %s: creating the gradient: %w", label, err)
	}
	if len(defs.InputGrad) != len(op.Input) {
		return nil, fmt.Errorf("autodiff: %s: gradient maker gave %d input gradients for %d inputs", label, len(defs.InputGrad), len(op.Input))
	}
	for i, g := range defs.InputGrad {
		if err := checkGradient(g); err != nil {
			return nil, fmt.Errorf("autodiff: %s: gradient of input %d (%q): %w", label, i, op.Input[i], err)
		}
	}
	for i, gop := range defs.Ops {
		if gop == nil {
			return nil, fmt.Errorf("autodiff: %s: gradient operator %d is nil", label, i)
		}
	}
	return defs, nil
}

// checkGradientInput checks that blob name, read by a gradient operator of
// forward operator idx, is available at the version the gradient needs.
func (r *ir) checkGradientInput(idx int, gop *netdef.OperatorDef, name string, gOut []Gradient, local map[string]bool) error {
	s := r.ssa[idx]
	label := r.opLabel(idx)
	if oi := gradIndex(gOut, name); oi >= 0 {
		orig := s.op.Output[oi]
		want := s.out[orig]
		have, ok := r.gradFrontier[orig]
		if !ok || have != want {
			return fmt.Errorf("autodiff: %s: gradient operator %s reads %q as the gradient of version %d of %q, but the gradient available is for version %d%s",
				label, gop.GetType(), name, want, orig, have, r.versionHistory(orig, true))
		}
		return nil
	}
	if v, ok := s.out[name]; ok {
		if cur := r.frontier[name]; cur != v {
			return fmt.Errorf("autodiff: %s: gradient operator %s needs output %q at version %d, but it is at version %d (overwritten later)%s",
				label, gop.GetType(), name, v, cur, r.versionHistory(name, true))
		}
		return nil
	}
	if v, ok := s.in[name]; ok {
		if cur := r.frontier[name]; cur != v {
			return fmt.Errorf("autodiff: %s: gradient operator %s needs input %q at version %d, but it is at version %d (overwritten later)%s",
				label, gop.GetType(), name, v, cur, r.versionHistory(name, false))
		}
		return nil
	}
	if !local[name] {
		return fmt.Errorf("autodiff: %s: gradient operator %s reads blob %q, which is not an input, output or output gradient of %s nor produced by one of its earlier gradient operators",
			label, gop.GetType(), name, r.describeOp(idx))
	}
	return nil
}

// buildGenerators checks the gradient operators of forward operator idx,
// records which of them generate the gradients of its inputs, and moves the
// gradient frontier of those inputs to the versions the operator read.
func (r *ir) buildGenerators(idx int, gops []*netdef.OperatorDef, gOut, gIn []Gradient) error {
	s := r.ssa[idx]
	label := r.opLabel(idx)
	local := map[string]bool{}
	var sparseKeys []vblob
	sparse := map[vblob][]*genMeta{}
	for _, gop := range gops {
		for _, name := range gop.Input {
			if err := r.checkGradientInput(idx, gop, name, gOut, local); err != nil {
				return err
			}
		}
		for _, o := range gop.Output {
			local[o] = true
		}
		for i, o := range gop.Output {
			ii := gradIndex(gIn, o)
			if ii < 0 {
				continue
			}
			name := s.op.Input[ii]
			key := vblob{name, s.in[name]}
			g := gIn[ii]
			if !g.IsSparse() {
				r.generators[key] = append(r.generators[key], &genMeta{op: gop, idx: i, grad: g})
				continue
			}
			m := &genMeta{sparse: true, grad: g}
			if g.Indices == o {
				m.opI, m.idxI = gop, i
			} else {
				m.opV, m.idxV = gop, i
			}
			if _, seen := sparse[key]; !seen {
				sparseKeys = append(sparseKeys, key)
			}
			sparse[key] = append(sparse[key], m)
		}
	}
	// Merge the indices and values generators of each sparse gradient.
	for _, key := range sparseKeys {
		parts := sparse[key]
		m := parts[0]
		switch len(parts) {
		case 1:
		case 2:
			a, b := parts[0], parts[1]
			if a.grad != b.grad || (a.opI != nil && b.opI != nil) || (a.opV != nil && b.opV != nil) {
				return fmt.Errorf("autodiff: %s: the sparse gradient of %q is generated inconsistently by its gradient operators", label, key.name)
			}
			m = &genMeta{sparse: true, grad: a.grad, opI: a.opI, idxI: a.idxI + b.idxI, opV: a.opV, idxV: a.idxV + b.idxV}
			if m.opI == nil {
				m.opI = b.opI
			}
			if m.opV == nil {
				m.opV = b.opV
			}
		default:
			return fmt.Errorf("autodiff: %s: the sparse gradient of %q is generated by %d gradient operator outputs, want at most 2", label, key.name, len(parts))
		}
		r.generators[key] = append(r.generators[key], m)
	}
	// Gradients passed through without an operator (Sum, Add, Sub…).
	for i, g := range gIn {
		if g.IsNone() {
			continue
		}
		name := s.op.Input[i]
		key := vblob{name, s.in[name]}
		if g.IsSparse() {
			if !local[g.Indices] && !local[g.Values] {
				r.generators[key] = append(r.generators[key], &genMeta{sparse: true, grad: g})
			}
		} else if !local[g.Dense] {
			r.generators[key] = append(r.generators[key], &genMeta{grad: g})
		}
	}
	for i, g := range gIn {
		if !g.IsNone() {
			name := s.op.Input[i]
			r.gradFrontier[name] = s.in[name]
		}
	}
	return nil
}

// accumulate emits the operators that add up the gradients of each input
// version of forward operator idx that several operators read, once idx,
// the first reader, has been processed.
func (r *ir) accumulate(idx int, grads *gradMap) ([]*netdef.OperatorDef, error) {
	s := r.ssa[idx]
	var ops []*netdef.OperatorDef
	done := map[string]bool{}
	for _, name := range s.op.Input {
		if done[name] {
			continue
		}
		done[name] = true
		key := vblob{name, s.in[name]}
		use := r.usages[key]
		if len(use) <= 1 || use[0] != idx {
			continue
		}
		gens := r.generators[key]
		need, err := verifyGenerators(gens)
		if err != nil {
			return nil, fmt.Errorf("autodiff: %s: gradients of %q (version %d) failed to verify: %w", r.opLabel(idx), name, key.version, err)
		}
		if !need {
			continue
		}
		sums, g, err := r.makeSumOps(name, gens)
		if err != nil {
			return nil, fmt.Errorf("autodiff: %s: accumulating the gradients of %q: %w", r.opLabel(idx), name, err)
		}
		ops = append(ops, sums...)
		grads.m[name] = g
	}
	return ops, nil
}

// verifyGenerators reports whether gens need accumulating (two or more),
// after checking they are all dense or all sparse and that their gradient
// operators share one device option.
func verifyGenerators(gens []*genMeta) (bool, error) {
	for _, g := range gens {
		if g.sparse != gens[0].sparse {
			return false, fmt.Errorf("automatic aggregation of a mix of sparse and dense gradients is not supported")
		}
	}
	if len(gens) < 2 {
		return false, nil
	}
	var first *netdef.OperatorDef
	for _, g := range gens {
		for _, op := range g.gradOps() {
			if first == nil {
				first = op
			} else if !sameDeviceOption(first.DeviceOption, op.DeviceOption) {
				return false, fmt.Errorf("not all gradient operators have the same device option: %s has %s, %s has %s",
					first.GetType(), describeDevice(first.DeviceOption), op.GetType(), describeDevice(op.DeviceOption))
			}
		}
	}
	return true, nil
}

// sameDeviceOption compares two device options field by field, an absent
// option being equal to an empty one (Caffe2 compares the protobufs).
func sameDeviceOption(a, b *netdef.DeviceOption) bool {
	if a == nil {
		a = &netdef.DeviceOption{}
	}
	if b == nil {
		b = &netdef.DeviceOption{}
	}
	return proto.Equal(a, b)
}

func describeDevice(d *netdef.DeviceOption) string {
	if d == nil {
		return "no device option"
	}
	return fmt.Sprintf("device option {%v}", d)
}

// sumOutputName is the name of the accumulated gradient: the output of the
// first generating operator (for sparse ones without the "_indices" or
// "_values" suffix), else input + "_grad".
func sumOutputName(gens []*genMeta, input string) string {
	for _, g := range gens {
		switch {
		case !g.sparse && g.op != nil:
			return g.op.Output[g.idx]
		case g.sparse && g.opI != nil:
			return strings.TrimSuffix(g.opI.Output[g.idxI], "_indices")
		case g.sparse && g.opV != nil:
			return strings.TrimSuffix(g.opV.Output[g.idxV], "_values")
		}
	}
	return GradientName(input)
}

// autosplit renames output idx of op to "_" + name + "_autosplit_" + cnt.
func autosplit(op *netdef.OperatorDef, idx, cnt int) string {
	op.Output[idx] = "_" + op.Output[idx] + "_autosplit_" + strconv.Itoa(cnt)
	return op.Output[idx]
}

// makeSumOps builds the accumulation of gens, the gradients of input.
func (r *ir) makeSumOps(input string, gens []*genMeta) ([]*netdef.OperatorDef, Gradient, error) {
	base := sumOutputName(gens, input)
	conflict := func(name string) error {
		if name == base {
			return fmt.Errorf("the gradient %q passed through without an operator has the name of the accumulated gradient", name)
		}
		return nil
	}
	var ops []*netdef.OperatorDef
	var result Gradient
	if !gens[0].sparse {
		inputs := make([]string, 0, len(gens))
		cnt := 0
		first := true
		for _, g := range gens {
			if g.op == nil {
				if err := conflict(g.grad.Dense); err != nil {
					return nil, Gradient{}, err
				}
				inputs = append(inputs, g.grad.Dense)
				continue
			}
			if first {
				first = false
				inputs = append(inputs, g.op.Output[g.idx])
				continue
			}
			inputs = append(inputs, autosplit(g.op, g.idx, cnt))
			cnt++
		}
		// Sum works in place only on its first input.
		if i := indexOf(inputs, base); i > 0 {
			inputs[0], inputs[i] = inputs[i], inputs[0]
		}
		ops = append(ops, r.newOp("Sum", inputs, []string{base}))
		result = Dense(base)
	} else {
		var indices, values []string
		cntI, cntV := 0, 0
		for _, g := range gens {
			if g.opI != nil {
				indices = append(indices, autosplit(g.opI, g.idxI, cntI))
				cntI++
			} else {
				if err := conflict(g.grad.Indices); err != nil {
					return nil, Gradient{}, err
				}
				indices = append(indices, g.grad.Indices)
			}
			if g.opV != nil {
				values = append(values, autosplit(g.opV, g.idxV, cntV))
				cntV++
			} else {
				if err := conflict(g.grad.Values); err != nil {
					return nil, Gradient{}, err
				}
				values = append(values, g.grad.Values)
			}
		}
		result = Gradient{Indices: base + "_indices_concat", Values: base + "_values_concat"}
		ops = append(ops,
			r.newOp("Concat", indices, []string{result.Indices, base + "_indices_concat_split"}, netdef.ArgInt("axis", 0)),
			r.newOp("Concat", values, []string{result.Values, base + "_values_concat_split"}, netdef.ArgInt("axis", 0)))
	}
	// The accumulation runs where the first generating operator does.
	for _, g := range gens {
		gops := g.gradOps()
		if len(gops) == 0 {
			continue
		}
		src := gops[0]
		if g.sparse && g.opV != nil {
			src = g.opV
		}
		if src.DeviceOption != nil {
			for _, op := range ops {
				op.DeviceOption = proto.Clone(src.DeviceOption).(*netdef.DeviceOption)
			}
		}
		break
	}
	return ops, result, nil
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

func contains(list []string, s string) bool { return indexOf(list, s) >= 0 }
