// Package optest helps test operator implementations: a map-backed
// workspace, a one-call way to run an operator on given tensors, a numeric
// gradient checker that compares an operator's registered gradient with
// central finite differences, checks that an operator in steady state does
// not allocate, builders of tensors and expected gradient operators, and a
// reader of the NumPy .npy files of Caffe2's serialized operator tests.
package optest

import (
	"fmt"
	"math"
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

// Feed stores a copy of t under name.
func (w *Workspace) Feed(name string, t *blob.Tensor) { w.CreateBlob(name).Set(t.Clone()) }

// Tensor returns the tensor stored under name, or nil.
func (w *Workspace) Tensor(name string) *blob.Tensor {
	if b := w.Blobs[name]; b != nil {
		return b.Tensor()
	}
	return nil
}

// Run creates def in w and runs it once.
func (w *Workspace) Run(def *netdef.OperatorDef) error {
	op, err := operators.Create(def, w, -1)
	if err != nil {
		return err
	}
	if err := operators.RunSafely(op); err != nil {
		return &operators.OpError{Index: -1, Type: def.GetType(), Name: def.GetName(), Err: err}
	}
	return nil
}

// RunOp feeds inputs (by the operator's input names, in order), runs def
// once in a fresh workspace and returns its output tensors in order.
func RunOp(def *netdef.OperatorDef, inputs ...*blob.Tensor) ([]*blob.Tensor, error) {
	w := NewWorkspace()
	if len(inputs) != len(def.Input) {
		return nil, fmt.Errorf("optest: %d inputs given for %d operator inputs", len(inputs), len(def.Input))
	}
	for i, t := range inputs {
		w.Feed(def.Input[i], t)
	}
	if err := w.Run(def); err != nil {
		return nil, err
	}
	out := make([]*blob.Tensor, len(def.Output))
	for i, name := range def.Output {
		out[i] = w.Tensor(name)
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
	outs := cfg.OutputsWithGrad
	if outs == nil {
		fwd, err := RunOp(def, inputs...)
		if err != nil {
			return 0, err
		}
		for i, t := range fwd {
			if t != nil && (t.DataType() == blob.Float32 || t.DataType() == blob.Float64) {
				outs = append(outs, i)
			}
		}
	}
	loss := func(in []*blob.Tensor) (float64, []*blob.Tensor, *Workspace, error) {
		w := NewWorkspace()
		for i, t := range in {
			w.Feed(def.Input[i], t)
		}
		if err := w.Run(def); err != nil {
			return 0, nil, nil, err
		}
		var l float64
		ys := make([]*blob.Tensor, len(def.Output))
		for _, o := range outs {
			y := w.Tensor(def.Output[o])
			ys[o] = y
			for _, v := range y.AsFloat64s() {
				l += 0.5 * v * v
			}
		}
		return l, ys, w, nil
	}
	_, ys, w, err := loss(inputs)
	if err != nil {
		return 0, err
	}
	// Analytic gradient: feed dL/dy = y and run the gradient operators. The
	// output gradients get names of their own (as AddGradientOperators'
	// seeds do), so that an in-place operator's input gradient X_grad does
	// not overwrite them.
	gradOut := make([]operators.Gradient, len(def.Output))
	for _, o := range outs {
		gname := def.Output[o] + "_autogen_grad"
		gradOut[o] = operators.Dense(gname)
		w.Feed(gname, ys[o])
	}
	gd, err := operators.GetGradientDefs(def, gradOut)
	if err != nil {
		return 0, err
	}
	for _, gop := range gd.Ops {
		if err := w.Run(proto.Clone(gop).(*netdef.OperatorDef)); err != nil {
			return 0, fmt.Errorf("optest: gradient operator %s: %w", gop.GetType(), err)
		}
	}
	gin := gd.InputGrad[inputIndex]
	if gin.Dense == "" {
		return 0, fmt.Errorf("optest: %s gives input %d (%q) no dense gradient", def.GetType(), inputIndex, def.Input[inputIndex])
	}
	analyticT := w.Tensor(gin.Dense)
	if analyticT == nil {
		return 0, fmt.Errorf("optest: gradient blob %q was not produced", gin.Dense)
	}
	analytic := analyticT.AsFloat64s()
	x := inputs[inputIndex]
	if analyticT.Size() != x.Size() {
		return 0, fmt.Errorf("optest: gradient %q has %d elements, input has %d", gin.Dense, analyticT.Size(), x.Size())
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
			l, _, _, err := loss(in)
			return l, err
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
