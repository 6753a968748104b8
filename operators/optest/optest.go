// Package optest helps test operator implementations: a map-backed
// workspace, a one-call way to run an operator on given tensors, a numeric
// gradient checker that compares an operator's registered gradient with
// central finite differences, checks that an operator in steady state does
// not allocate, builders of tensors and expected gradient operators, a
// reader of the NumPy .npy files of Caffe2's serialized operator tests, and
// the conformance suite (Case, CheckRegistry) that holds every registered
// implementation — every device, every engine — to the same checks.
//
// Everything here honours the operator's device option: inputs are fed onto
// the operator's device (the CPU for its schema's CPU inputs) and outputs
// come back to Go memory, so one test runs on any device.
package optest

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

// Workspace is a minimal operators.Workspace backed by a map.
type Workspace struct {
	Blobs map[string]*blob.Blob
	Root  string
	// Created lists the implementation of every operator Run created, in
	// order.
	Created []operators.Implementation
}

// NewWorkspace returns an empty workspace whose root folder is ".".
func NewWorkspace() *Workspace { return &Workspace{Blobs: map[string]*blob.Blob{}, Root: "."} }

// GetBlob implements operators.Workspace.
func (w *Workspace) GetBlob(name string) *blob.Blob { return w.Blobs[name] }

// CreateBlob implements operators.Workspace.
func (w *Workspace) CreateBlob(name string) *blob.Blob {
	if b, ok := w.Blobs[name]; ok {
		return b
	}
	b := &blob.Blob{}
	w.Blobs[name] = b
	return b
}

// RootFolder implements operators.Workspace.
func (w *Workspace) RootFolder() string { return w.Root }

// Feed stores a copy of t under name, in Go memory.
func (w *Workspace) Feed(name string, t *blob.Tensor) { w.CreateBlob(name).Set(t.Clone()) }

// FeedInput stores a copy of t as input i of def, on the device def reads
// that input on: its device, or the CPU for the schema's CPU inputs.
func (w *Workspace) FeedInput(def *netdef.OperatorDef, i int, t *blob.Tensor) error {
	dev := def.GetDeviceOption()
	if s, ok := operators.SchemaOf(def.GetType()); ok && slices.Contains(s.CPUInputs, i) {
		dev = nil
	}
	c, err := t.CopyTo(dev)
	if err != nil {
		return fmt.Errorf("optest: feeding input %d (%q) of %s: %w", i, def.Input[i], def.GetType(), err)
	}
	w.CreateBlob(def.Input[i]).Set(c)
	return nil
}

// Fetch returns a copy of the tensor stored under name in Go memory, or nil
// when there is none.
func (w *Workspace) Fetch(name string) (*blob.Tensor, error) {
	t := w.Tensor(name)
	if t == nil {
		return nil, nil
	}
	h, err := t.ToHost()
	if err != nil {
		return nil, fmt.Errorf("optest: fetching %q: %w", name, err)
	}
	return h, nil
}

// Tensor returns the tensor stored under name, or nil.
func (w *Workspace) Tensor(name string) *blob.Tensor {
	if b := w.Blobs[name]; b != nil {
		return b.Tensor()
	}
	return nil
}

// Run creates def in w, checks that its inputs live where it reads them
// (operators.CheckDevices), and runs it once.
func (w *Workspace) Run(def *netdef.OperatorDef) error {
	op, err := operators.Create(def, w, -1)
	if err != nil {
		return err
	}
	w.Created = append(w.Created, op.OpBase().Implementation())
	if err := operators.CheckDevices([]operators.Operator{op}); err != nil {
		return err
	}
	if err := operators.RunSafely(op); err != nil {
		return &operators.OpError{Index: -1, Type: def.GetType(), Name: def.GetName(), Err: err}
	}
	return nil
}

// RunOp feeds inputs (by the operator's input names, in order, each on the
// device def reads it on), runs def once in a fresh workspace and returns
// its output tensors in order, in Go memory.
func RunOp(def *netdef.OperatorDef, inputs ...*blob.Tensor) ([]*blob.Tensor, error) {
	w := NewWorkspace()
	if err := w.feedAll(def, inputs); err != nil {
		return nil, err
	}
	if err := w.Run(def); err != nil {
		return nil, err
	}
	return w.fetchAll(def.Output)
}

// feedAll feeds inputs as def's inputs, in order.
func (w *Workspace) feedAll(def *netdef.OperatorDef, inputs []*blob.Tensor) error {
	if len(inputs) != len(def.Input) {
		return fmt.Errorf("optest: %d inputs given for %d operator inputs", len(inputs), len(def.Input))
	}
	for i, t := range inputs {
		if err := w.FeedInput(def, i, t); err != nil {
			return err
		}
	}
	return nil
}

// fetchAll fetches each name (nil where there is no tensor).
func (w *Workspace) fetchAll(names []string) ([]*blob.Tensor, error) {
	out := make([]*blob.Tensor, len(names))
	for i, name := range names {
		t, err := w.Fetch(name)
		if err != nil {
			return nil, err
		}
		out[i] = t
	}
	return out, nil
}

// GradientCheck configures CheckGradient.
type GradientCheck struct {
	// Step is the finite-difference step (default 1e-3 for float32 inputs).
	Step float64
	// Threshold bounds |analytic − numeric| relative to max(1, |numeric|)
	// (default 5e-3).
	Threshold float64
	// OutputsWithGrad are the outputs the loss is taken over (default: all
	// float outputs). The loss is Σ ½·y² over them, so dL/dy = y.
	OutputsWithGrad []int
}

// CheckGradient compares the gradient that the registered gradient maker of
// def computes for input inputIndex against central finite differences of
// the loss Σ ½·y² over the chosen outputs. It returns the largest error
// seen, and an error describing the first element outside the threshold.
// def runs on its device; the finite differences are taken there too.
func CheckGradient(def *netdef.OperatorDef, inputs []*blob.Tensor, inputIndex int, cfg GradientCheck) (float64, error) {
	if cfg.Step == 0 {
		cfg.Step = 1e-3
	}
	if cfg.Threshold == 0 {
		cfg.Threshold = 5e-3
	}
	if inputIndex < 0 || inputIndex >= len(inputs) {
		return 0, fmt.Errorf("optest: input index %d out of range", inputIndex)
	}
	g, err := Gradients(def, inputs, cfg.OutputsWithGrad, inputIndex)
	if err != nil {
		return 0, err
	}
	analyticT := g.Inputs[0]
	analytic := analyticT.AsFloat64s()
	x := inputs[inputIndex]
	if analyticT.Size() != x.Size() {
		return 0, fmt.Errorf("optest: the gradient of input %d has %d elements, the input has %d", inputIndex, analyticT.Size(), x.Size())
	}
	loss := func(in []*blob.Tensor) (float64, error) {
		w := NewWorkspace()
		if err := w.feedAll(def, in); err != nil {
			return 0, err
		}
		if err := w.Run(def); err != nil {
			return 0, err
		}
		var l float64
		for _, o := range g.Outputs {
			y, err := w.Fetch(def.Output[o])
			if err != nil {
				return 0, err
			}
			for _, v := range y.AsFloat64s() {
				l += 0.5 * v * v
			}
		}
		return l, nil
	}
	var worst float64
	for k := 0; k < x.Size(); k++ {
		perturbed := func(delta float64) (float64, error) {
			in := make([]*blob.Tensor, len(inputs))
			copy(in, inputs)
			xc := x.Clone()
			if err := addAt(xc, k, delta); err != nil {
				return 0, err
			}
			in[inputIndex] = xc
			return loss(in)
		}
		lp, err := perturbed(cfg.Step)
		if err != nil {
			return 0, err
		}
		lm, err := perturbed(-cfg.Step)
		if err != nil {
			return 0, err
		}
		numeric := (lp - lm) / (2 * cfg.Step)
		diff := math.Abs(analytic[k] - numeric)
		scaled := diff / math.Max(1, math.Abs(numeric))
		worst = math.Max(worst, scaled)
		if scaled > cfg.Threshold || math.IsNaN(analytic[k]) {
			return worst, fmt.Errorf("optest: %s d/d%s[%d]: analytic %g, numeric %g", def.GetType(), def.Input[inputIndex], k, analytic[k], numeric)
		}
	}
	return worst, nil
}

// GradientResult is what Gradients computes.
type GradientResult struct {
	// Outputs are the outputs the loss was taken over.
	Outputs []int
	// Y holds def's outputs, in Go memory.
	Y []*blob.Tensor
	// Inputs holds the gradients of the inputs asked for, in that order,
	// in Go memory.
	Inputs []*blob.Tensor
	// Created lists the implementations of def and of its gradient
	// operators, in the order they ran.
	Created []operators.Implementation
}

// Gradients runs def on inputs and then its registered gradient operators
// (on def's device, with its engine, as AddGradientOperators places them),
// seeding the gradient of each output in outs with the output itself (the
// gradient of the loss Σ ½·y²), and returns the gradients of the inputs
// listed in wrt. outs nil means every FLOAT or DOUBLE output.
func Gradients(def *netdef.OperatorDef, inputs []*blob.Tensor, outs []int, wrt ...int) (*GradientResult, error) {
	w := NewWorkspace()
	if err := w.feedAll(def, inputs); err != nil {
		return nil, err
	}
	if err := w.Run(def); err != nil {
		return nil, err
	}
	ys, err := w.fetchAll(def.Output)
	if err != nil {
		return nil, err
	}
	if outs == nil {
		for i, t := range ys {
			if t != nil && (t.DataType() == blob.Float32 || t.DataType() == blob.Float64) {
				outs = append(outs, i)
			}
		}
	}
	res := &GradientResult{Outputs: outs, Y: ys}
	// The output gradients get names of their own (as AddGradientOperators'
	// seeds do), so that an in-place operator's input gradient X_grad does
	// not overwrite them. They live where the outputs do.
	gradOut := make([]operators.Gradient, len(def.Output))
	for _, o := range outs {
		if o < 0 || o >= len(ys) || ys[o] == nil {
			return nil, fmt.Errorf("optest: %s has no output %d to take the loss over", def.GetType(), o)
		}
		gname := def.Output[o] + "_autogen_grad"
		gradOut[o] = operators.Dense(gname)
		seed, err := ys[o].CopyTo(w.Tensor(def.Output[o]).Device())
		if err != nil {
			return nil, err
		}
		w.CreateBlob(gname).Set(seed)
	}
	gd, err := operators.GetGradientDefs(def, gradOut)
	if err != nil {
		return nil, err
	}
	for _, gop := range gd.Ops {
		if err := w.Run(proto.Clone(gop).(*netdef.OperatorDef)); err != nil {
			return nil, fmt.Errorf("optest: gradient operator %s: %w", gop.GetType(), err)
		}
	}
	for _, i := range wrt {
		if i < 0 || i >= len(gd.InputGrad) {
			return nil, fmt.Errorf("optest: input index %d out of range", i)
		}
		gin := gd.InputGrad[i]
		if gin.Dense == "" {
			return nil, fmt.Errorf("optest: %s gives input %d (%q) no dense gradient", def.GetType(), i, def.Input[i])
		}
		gt, err := w.Fetch(gin.Dense)
		if err != nil {
			return nil, err
		}
		if gt == nil {
			return nil, fmt.Errorf("optest: gradient blob %q was not produced", gin.Dense)
		}
		res.Inputs = append(res.Inputs, gt)
	}
	res.Created = w.Created
	return res, nil
}

func addAt(t *blob.Tensor, k int, delta float64) error {
	switch t.DataType() {
	case blob.Float32:
		blob.Data[float32](t)[k] += float32(delta)
	case blob.Float64:
		blob.Data[float64](t)[k] += delta
	default:
		return fmt.Errorf("optest: cannot perturb a %v input", t.DataType())
	}
	return nil
}

// SortedArgs returns a copy of op with its arguments sorted by name, the way
// Caffe2's serialized tests compare gradient definitions.
func SortedArgs(op *netdef.OperatorDef) *netdef.OperatorDef {
	c := proto.Clone(op).(*netdef.OperatorDef)
	sort.SliceStable(c.Arg, func(i, j int) bool { return c.Arg[i].GetName() < c.Arg[j].GetName() })
	return c
}
