package operators

import (
	"fmt"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/netdef"
)

// GradSuffix is appended to a blob name to name its dense gradient.
const GradSuffix = "_grad"

// GradientName returns the name of the dense gradient of blob x ("x_grad").
func GradientName(x string) string { return x + GradSuffix }

// Gradient is the gradient of one blob: dense (Dense set), sparse (Indices
// and Values set, Caffe2's GradientSlice), or none (all empty).
type Gradient struct {
	Dense   string
	Indices string
	Values  string
}

// IsNone reports whether there is no gradient.
func (g Gradient) IsNone() bool { return g.Dense == "" && g.Indices == "" && g.Values == "" }

// IsSparse reports whether the gradient is a (indices, values) slice.
func (g Gradient) IsSparse() bool { return g.Indices != "" || g.Values != "" }

// Dense returns a dense gradient named name.
func Dense(name string) Gradient { return Gradient{Dense: name} }

// GradientContext is what a gradient maker sees and builds: the forward
// operator, the gradients of its outputs, the gradient operators it emits
// and the gradients it assigns to the forward inputs. It mirrors Caffe2's
// GradientMakerBase vocabulary (I, O, GO, GI, SetDense…).
type GradientContext struct {
	def     *netdef.OperatorDef
	gradOut []Gradient
	gradIn  []Gradient
	ops     []*netdef.OperatorDef
	// CopyArguments controls whether the emitted operators get the forward
	// operator's arguments (default true, as in Caffe2).
	CopyArguments bool
	// CopyDeviceOption controls whether they get its device option (default true).
	CopyDeviceOption bool
	// CopyEngine controls whether they get its engine (default true).
	CopyEngine bool
}

// Def returns the forward operator.
func (g *GradientContext) Def() *netdef.OperatorDef { return g.def }

// I returns the name of forward input i.
func (g *GradientContext) I(i int) string { return g.def.Input[i] }

// O returns the name of forward output i.
func (g *GradientContext) O(i int) string { return g.def.Output[i] }

// NumInputs returns the number of forward inputs.
func (g *GradientContext) NumInputs() int { return len(g.def.Input) }

// NumOutputs returns the number of forward outputs.
func (g *GradientContext) NumOutputs() int { return len(g.def.Output) }

// Arg returns the forward operator's argument called name, or nil.
func (g *GradientContext) Arg(name string) *netdef.Argument { return netdef.FindArg(g.def.Arg, name) }

// HasArg reports whether the forward operator has the argument name.
func (g *GradientContext) HasArg(name string) bool { return g.Arg(name) != nil }

// ArgInt returns the forward operator's integer argument name, read as
// Base.ArgInt reads it, or def when it is absent.
func (g *GradientContext) ArgInt(name string, def int64) int64 { return intValue(g.Arg(name), def) }

// HasGO reports whether forward output i has a gradient.
func (g *GradientContext) HasGO(i int) bool { return !g.gradOut[i].IsNone() }

// GO returns the dense gradient name of forward output i. It panics inside
// the maker (recovered by GetGradientDefs as an error) when that gradient is
// absent or sparse.
func (g *GradientContext) GO(i int) string {
	if g.gradOut[i].Dense == "" {
		panic(gradientError{fmt.Errorf("gradient of output %d (%q) of %s is not available as a dense gradient", i, g.def.Output[i], g.def.GetType())})
	}
	return g.gradOut[i].Dense
}

// GOGradient returns the full gradient (dense or sparse) of forward output i.
func (g *GradientContext) GOGradient(i int) Gradient { return g.gradOut[i] }

// GI declares that forward input i gets the dense gradient I(i)+"_grad" and
// returns that name.
func (g *GradientContext) GI(i int) string {
	name := GradientName(g.def.Input[i])
	g.gradIn[i] = Dense(name)
	return name
}

// GISparse declares a sparse gradient for forward input i and returns the
// names of its indices and values (I(i)+"_grad_indices", "_grad_values").
func (g *GradientContext) GISparse(i int) (indices, values string) {
	base := GradientName(g.def.Input[i])
	g.gradIn[i] = Gradient{Indices: base + "_indices", Values: base + "_values"}
	return g.gradIn[i].Indices, g.gradIn[i].Values
}

// SetDense makes name the gradient of forward input i without an operator
// (a pass-through, as Sum, Add or Alias do).
func (g *GradientContext) SetDense(i int, name string) { g.gradIn[i] = Dense(name) }

// SetGradient sets forward input i's gradient to gr.
func (g *GradientContext) SetGradient(i int, gr Gradient) { g.gradIn[i] = gr }

// Op emits a gradient operator.
func (g *GradientContext) Op(typ string, inputs, outputs []string, args ...*netdef.Argument) *netdef.OperatorDef {
	op := netdef.NewOperator(typ, inputs, outputs, args...)
	op.Name = proto.String("") // Caffe2 always sets the (empty) name of gradient ops
	g.ops = append(g.ops, op)
	return op
}

// GradientMaker builds the gradient of one forward operator in g.
type GradientMaker func(g *GradientContext) error

type gradKind int

const (
	gradMaker gradKind = iota
	gradNone
	gradForbidden
	gradNotImplemented
)

type gradEntry struct {
	kind  gradKind
	maker GradientMaker
}

var gradients struct {
	sync.RWMutex
	m map[string]gradEntry
}

func registerGradient(typ string, e gradEntry) error {
	gradients.Lock()
	defer gradients.Unlock()
	if gradients.m == nil {
		gradients.m = map[string]gradEntry{}
	}
	if _, dup := gradients.m[typ]; dup {
		return fmt.Errorf("operators: gradient for %s registered twice", typ)
	}
	gradients.m[typ] = e
	return nil
}

func mustRegisterGradient(typ string, e gradEntry) {
	if err := registerGradient(typ, e); err != nil {
		panic(err)
	}
}

// RegisterGradient registers the gradient maker of typ. A nil maker, or a
// second registration for the same type, is an error.
func RegisterGradient(typ string, m GradientMaker) error {
	if m == nil {
		return fmt.Errorf("operators: RegisterGradient(%q) needs a gradient maker", typ)
	}
	return registerGradient(typ, gradEntry{kind: gradMaker, maker: m})
}

// MustRegisterGradient is RegisterGradient for init functions: it panics on
// an error.
func MustRegisterGradient(typ string, m GradientMaker) {
	if err := RegisterGradient(typ, m); err != nil {
		panic(err)
	}
}

// RegisterNoGradient marks typ as having no gradient (Caffe2's
// NO_GRADIENT): the backward pass skips it silently. A second registration
// for the type is an error.
func RegisterNoGradient(typ string) error { return registerGradient(typ, gradEntry{kind: gradNone}) }

// MustRegisterNoGradient is RegisterNoGradient for init functions.
func MustRegisterNoGradient(typ string) { mustRegisterGradient(typ, gradEntry{kind: gradNone}) }

// RegisterGradientForbidden marks typ as never differentiable (Caffe2's
// SHOULD_NOT_DO_GRADIENT): reaching it in the backward pass is an error. A
// second registration for the type is an error.
func RegisterGradientForbidden(typ string) error {
	return registerGradient(typ, gradEntry{kind: gradForbidden})
}

// MustRegisterGradientForbidden is RegisterGradientForbidden for init
// functions.
func MustRegisterGradientForbidden(typ string) {
	mustRegisterGradient(typ, gradEntry{kind: gradForbidden})
}

// RegisterGradientNotImplemented marks typ's gradient as not yet
// implemented: reaching it in the backward pass is an error. A second
// registration for the type is an error.
func RegisterGradientNotImplemented(typ string) error {
	return registerGradient(typ, gradEntry{kind: gradNotImplemented})
}

// MustRegisterGradientNotImplemented is RegisterGradientNotImplemented for
// init functions.
func MustRegisterGradientNotImplemented(typ string) {
	mustRegisterGradient(typ, gradEntry{kind: gradNotImplemented})
}

type gradientError struct{ err error }

// GradientDefs is the result of one gradient maker: the operators to emit and
// the gradient of each forward input (none where it has none).
type GradientDefs struct {
	Ops       []*netdef.OperatorDef
	InputGrad []Gradient
}

// GetGradientDefs runs the gradient maker of def given the gradients of its
// outputs (one per output; none where absent). The emitted operators copy
// the forward operator's device option, engine and arguments unless the
// maker opts out, and are marked is_gradient_op. An operator type without a
// registered gradient, one that fails its schema check, one whose gradient
// is forbidden, or a maker that panics, is an error.
func GetGradientDefs(def *netdef.OperatorDef, gradOut []Gradient) (res *GradientDefs, err error) {
	gradients.RLock()
	e, ok := gradients.m[def.GetType()]
	gradients.RUnlock()
	if !ok {
		return nil, fmt.Errorf("operator %s (%q): no gradient is registered for this operator type", def.GetType(), def.GetName())
	}
	switch e.kind {
	case gradNone:
		return &GradientDefs{InputGrad: make([]Gradient, len(def.Input))}, nil
	case gradForbidden:
		return nil, fmt.Errorf("operator %s (%q): should not do gradient for this operator", def.GetType(), def.GetName())
	case gradNotImplemented:
		return nil, fmt.Errorf("operator %s (%q): gradient not implemented yet", def.GetType(), def.GetName())
	}
	if len(gradOut) != len(def.Output) {
		return nil, fmt.Errorf("operator %s (%q): %d output gradients given for %d outputs", def.GetType(), def.GetName(), len(gradOut), len(def.Output))
	}
	// As in Caffe2, a malformed operator is rejected before its maker runs.
	if s, ok := SchemaOf(def.GetType()); ok {
		if err := s.Verify(def); err != nil {
			return nil, fmt.Errorf("operator %s (%q): operator def did not pass schema checking: %w", def.GetType(), def.GetName(), err)
		}
	}
	g := &GradientContext{
		def: def, gradOut: gradOut, gradIn: make([]Gradient, len(def.Input)),
		CopyArguments: true, CopyDeviceOption: true, CopyEngine: true,
	}
	defer func() {
		if r := recover(); r != nil {
			if ge, isGradErr := r.(gradientError); isGradErr {
				res, err = nil, ge.err
				return
			}
			res, err = nil, fmt.Errorf("operator %s (%q): gradient maker panicked: %v", def.GetType(), def.GetName(), r)
		}
	}()
	if err := e.maker(g); err != nil {
		return nil, fmt.Errorf("operator %s (%q): gradient: %w", def.GetType(), def.GetName(), err)
	}
	for _, op := range g.ops {
		if g.CopyDeviceOption && def.DeviceOption != nil {
			op.DeviceOption = proto.Clone(def.DeviceOption).(*netdef.DeviceOption)
		}
		if g.CopyEngine && def.Engine != nil {
			op.Engine = proto.String(def.GetEngine())
		}
		if g.CopyArguments && len(def.Arg) > 0 {
			for _, a := range def.Arg {
				op.Arg = append(op.Arg, proto.Clone(a).(*netdef.Argument))
			}
		}
		op.IsGradientOp = proto.Bool(true)
	}
	return &GradientDefs{Ops: g.ops, InputGrad: g.gradIn}, nil
}

// HasGradient reports whether a gradient entry (of any kind) exists for typ.
func HasGradient(typ string) bool {
	gradients.RLock()
	defer gradients.RUnlock()
	_, ok := gradients.m[typ]
	return ok
}
