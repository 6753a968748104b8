package optest

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

// Case is one conformance check of an operator type. CheckRegistry runs it
// on every implementation registered for the type: on the CPU's default
// implementation it checks the outputs against shape inference and the
// gradients of Grad against finite differences; on every other device and
// engine it checks outputs and gradients against the CPU's.
type Case struct {
	// Name tells cases of one type apart (optional).
	Name string
	// Op is the operator. Its device option and engine are replaced by
	// each implementation's (a random_seed it sets is kept).
	Op *netdef.OperatorDef
	// Inputs are fed by Op's input names, in order; inputs past them must
	// be made by Before.
	Inputs []*blob.Tensor
	// Before are operators run first, on the CPU, in the same workspace:
	// they make the inputs that are not tensors (a DB reader, a mutex).
	// A case with Before checks no gradients.
	Before []*netdef.OperatorDef
	// Grad lists the inputs whose gradients are checked; an operator whose
	// type has a gradient maker needs a case that lists some, or its
	// gradient operators go unchecked.
	Grad []int
	// GradOutputs are the outputs the loss Σ ½·y² is taken over (nil: every
	// FLOAT or DOUBLE output).
	GradOutputs []int
	// Check tunes the finite differences on the CPU.
	Check GradientCheck
	// Tol bounds |device − CPU| relative to max(1, |CPU|) (default 1e-4).
	Tol float64
	// Random says the outputs are random draws: other devices are compared
	// with the CPU on element types and shapes only, and gradients are not
	// checked numerically.
	Random bool
}

func (c *Case) label() string {
	if c.Name == "" {
		return c.Op.GetType()
	}
	return c.Op.GetType() + "/" + c.Name
}

// place returns a copy of the case's operator on device dev with engine.
func (c *Case) place(dev *netdef.DeviceOption, engine string) *netdef.OperatorDef {
	def := proto.Clone(c.Op).(*netdef.OperatorDef)
	var seed *uint32
	if c.Op.DeviceOption != nil {
		seed = c.Op.DeviceOption.RandomSeed
	}
	def.DeviceOption = nil
	if dev != nil {
		def.DeviceOption = proto.Clone(dev).(*netdef.DeviceOption)
	}
	if seed != nil {
		if def.DeviceOption == nil {
			def.DeviceOption = &netdef.DeviceOption{}
		}
		def.DeviceOption.RandomSeed = proto.Uint32(*seed)
	}
	def.Engine = nil
	if engine != "" {
		def.Engine = proto.String(engine)
	}
	return def
}

// result is what one run of a case produced.
type result struct {
	y       []*blob.Tensor
	grads   []*blob.Tensor
	created []operators.Implementation
}

// run runs the case on dev with engine: the forward pass, then (when the
// case lists gradients) the gradient operators.
func (c *Case) run(dev *netdef.DeviceOption, engine string) (*result, error) {
	def := c.place(dev, engine)
	if len(c.Grad) == 0 {
		w := NewWorkspace()
		for _, b := range c.Before {
			if err := w.Run(b); err != nil {
				return nil, fmt.Errorf("before the case: %w", err)
			}
		}
		if len(c.Inputs) > len(def.Input) {
			return nil, fmt.Errorf("%d inputs given for %d operator inputs", len(c.Inputs), len(def.Input))
		}
		for i, in := range c.Inputs {
			if err := w.FeedInput(def, i, in); err != nil {
				return nil, err
			}
		}
		if err := w.Run(def); err != nil {
			return nil, err
		}
		y, err := w.fetchAll(def.Output)
		if err != nil {
			return nil, err
		}
		return &result{y: y, created: w.Created}, nil
	}
	if len(c.Before) > 0 {
		return nil, fmt.Errorf("a case with Before operators cannot check gradients")
	}
	g, err := Gradients(def, c.Inputs, c.GradOutputs, c.Grad...)
	if err != nil {
		return nil, err
	}
	return &result{y: g.Y, grads: g.Inputs, created: g.Created}, nil
}

// checkReference holds a CPU default run to what needs no other
// implementation: the outputs agree with shape inference, and the
// gradients with finite differences.
func (c *Case) checkReference(ref *result) error {
	if len(c.Before) > 0 {
		return nil // the inputs Before makes have no shapes to infer from
	}
	inShapes := map[string]operators.TensorShape{}
	for i, t := range c.Inputs {
		inShapes[c.Op.Input[i]] = operators.ShapeOf(t)
	}
	def := c.place(nil, "")
	shapes, err := operators.InferShapes(&netdef.NetDef{Op: []*netdef.OperatorDef{def}}, func(name string) operators.TensorShape {
		if s, ok := inShapes[name]; ok {
			return s
		}
		return operators.UnknownShape
	})
	if err != nil {
		return fmt.Errorf("shape inference rejects the case: %w", err)
	}
	for i, name := range def.Output {
		s, ok := shapes[name]
		if !ok || s.Unknown || ref.y[i] == nil {
			continue
		}
		if got := operators.ShapeOf(ref.y[i]); !s.Agrees(got) || (s.Type != blob.Undefined && s.Type != got.Type) {
			return fmt.Errorf("output %d (%q) is %v %v, shape inference says %v %v", i, name, got.Type, got, s.Type, s)
		}
	}
	if c.Random {
		return nil
	}
	for _, i := range c.Grad {
		cfg := c.Check
		cfg.OutputsWithGrad = c.GradOutputs
		if _, err := CheckGradient(def, c.Inputs, i, cfg); err != nil {
			return err
		}
	}
	return nil
}

// compare reports the first difference between a run on another
// implementation and the CPU's.
func (c *Case) compare(got, ref *result) error {
	tol := c.Tol
	if tol == 0 {
		tol = 1e-4
	}
	same := func(what string, a, b *blob.Tensor) error {
		switch {
		case a == nil && b == nil:
			return nil
		case a == nil || b == nil:
			return fmt.Errorf("%s: %v here, %v on the CPU", what, a, b)
		case a.DataType() != b.DataType() || !slices.Equal(a.Dims(), b.Dims()):
			return fmt.Errorf("%s: %v %v here, %v %v on the CPU", what, a.DataType(), a.Dims(), b.DataType(), b.Dims())
		case c.Random || a.DataType() == blob.String:
			if a.DataType() == blob.String && !c.Random && !slices.Equal(blob.Data[string](a), blob.Data[string](b)) {
				return fmt.Errorf("%s: %q here, %q on the CPU", what, blob.Data[string](a), blob.Data[string](b))
			}
			return nil
		}
		x, y := a.AsFloat64s(), b.AsFloat64s()
		for i := range x {
			if d := math.Abs(x[i] - y[i]); !(d <= tol*math.Max(1, math.Abs(y[i]))) && !(math.IsNaN(x[i]) && math.IsNaN(y[i])) {
				return fmt.Errorf("%s[%d] = %.9g here, %.9g on the CPU", what, i, x[i], y[i])
			}
		}
		return nil
	}
	for i := range ref.y {
		if err := same(fmt.Sprintf("output %d (%q)", i, c.Op.Output[i]), got.y[i], ref.y[i]); err != nil {
			return err
		}
	}
	for k, i := range c.Grad {
		if err := same(fmt.Sprintf("gradient of input %d (%q)", i, c.Op.Input[i]), got.grads[k], ref.grads[k]); err != nil {
			return err
		}
	}
	return nil
}

// target is one place a case runs: a device (id 0 of its type) and an
// engine.
type target struct {
	device netdef.DeviceType
	engine string
}

func (t target) option() *netdef.DeviceOption {
	if t.device == netdef.CPU {
		return nil
	}
	return netdef.NewDeviceOption(t.device, 0)
}

func (t target) String() string {
	s := t.device.String()
	if t.engine != "" {
		s += "/" + t.engine
	}
	return s
}

// CheckRegistry is the conformance suite: it runs every case on every
// implementation registered for its operator type — each device type, each
// engine; an implementation for operators.AnyDevice runs on the CPU and on
// every registered device type with memory of its own — and then fails t
// for every registered implementation that no case exercised, the
// operators' own or their gradient operators'. A case whose type is not
// registered fails too. So a new implementation (a CUDA kernel, an engine)
// is held to the checks its type's cases make on the CPU, and one without a
// case cannot go unnoticed.
func CheckRegistry(t *testing.T, cases []Case) {
	t.Helper()
	covered := map[operators.Implementation]bool{}
	for _, miss := range CheckCases(t, cases, covered) {
		t.Error(miss)
	}
}

// CheckCases runs the cases as CheckRegistry does, recording in covered
// every implementation they exercised, and returns one line for each
// registered implementation left unexercised and each case whose type is
// not registered.
func CheckCases(t *testing.T, cases []Case, covered map[operators.Implementation]bool) []string {
	t.Helper()
	byType := map[string][]*Case{}
	for i := range cases {
		c := &cases[i]
		byType[c.Op.GetType()] = append(byType[c.Op.GetType()], c)
	}
	var memoryTypes []netdef.DeviceType
	for _, d := range devicescope.DeviceTypes() {
		if _, ok := devicescope.MemoryOf(netdef.NewDeviceOption(d, 0)); ok {
			memoryTypes = append(memoryTypes, d)
		}
	}
	impls := operators.Implementations("")
	var missing []string
	types := map[string]bool{}
	for _, impl := range impls {
		types[impl.Type] = true
	}
	for typ := range byType {
		if !types[typ] {
			missing = append(missing, fmt.Sprintf("a conformance case names %s, which is not registered", typ))
		}
	}
	for _, impl := range impls {
		var targets []target
		switch impl.Device {
		case operators.AnyDevice:
			targets = append(targets, target{netdef.CPU, impl.Engine})
			for _, d := range memoryTypes {
				targets = append(targets, target{d, impl.Engine})
			}
		default:
			targets = append(targets, target{impl.Device, impl.Engine})
		}
		for _, tg := range targets {
			if _, err := devicescope.Get(tg.option()); err != nil {
				continue // a device type this machine cannot create: nothing runs there
			}
			for _, c := range byType[impl.Type] {
				t.Run(impl.Type+"/"+tg.String()+"/"+c.label(), func(t *testing.T) {
					if err := c.check(tg, covered); err != nil {
						t.Fatal(err)
					}
				})
			}
		}
	}
	for _, impl := range impls {
		if !covered[impl] {
			missing = append(missing, fmt.Sprintf("%v: no conformance case exercises it", impl))
		}
	}
	return missing
}

// check runs c on tg and checks it, recording what it exercised in
// covered.
func (c *Case) check(tg target, covered map[operators.Implementation]bool) error {
	ref, err := c.run(nil, "")
	if err != nil {
		return fmt.Errorf("%s on the CPU: %w", c.label(), err)
	}
	got := ref
	if tg == (target{device: netdef.CPU}) {
		if err := c.checkReference(ref); err != nil {
			return fmt.Errorf("%s: %w", c.label(), err)
		}
	} else {
		if got, err = c.run(tg.option(), tg.engine); err != nil {
			return fmt.Errorf("%s on %v: %w", c.label(), tg, err)
		}
		if err := c.compare(got, ref); err != nil {
			return fmt.Errorf("%s on %v: %w", c.label(), tg, err)
		}
	}
	for _, impl := range got.created {
		covered[impl] = true
	}
	return nil
}
