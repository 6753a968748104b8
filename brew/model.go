package brew

import (
	"fmt"
	"slices"
	"strings"

	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

// Tag classifies a parameter, as Caffe2's ParameterTags do.
type Tag int

const (
	// Weight marks a trained weight (FC and Conv filters, BN scales).
	Weight Tag = iota
	// Bias marks a trained bias.
	Bias
	// ComputedParam marks a parameter that is not trained but is synced
	// and checkpointed, such as batch-norm running statistics.
	ComputedParam
)

// String returns Caffe2's name of the tag.
func (t Tag) String() string {
	switch t {
	case Weight:
		return "WEIGHT"
	case Bias:
		return "BIAS"
	case ComputedParam:
		return "COMPUTED_PARAM"
	}
	return fmt.Sprintf("Tag(%d)", int(t))
}

// ParamInfo describes one parameter of a Model.
type ParamInfo struct {
	// Name is the parameter's blob name, name scope included.
	Name string
	// Grad is the gradient blob, set by Model.AddGradientOperators; empty
	// before that and for parameters without a gradient.
	Grad string
	// Shape is the shape the parameter was created with (nil when it was
	// added with AddParameter and its shape is unknown).
	Shape []int64
	// Tags are the tags the parameter was created with.
	Tags []Tag
}

// HasTag reports whether the parameter carries t.
func (p *ParamInfo) HasTag(t Tag) bool { return slices.Contains(p.Tags, t) }

// Initializer says which fill operator creates a parameter in the init
// net: Caffe2's ("XavierFill", {}) tuples in typed form. The zero value
// means "the helper's default". Use Init to make one.
type Initializer struct {
	// Op is the fill operator type, for example "ConstantFill".
	Op string
	// Args are the fill's arguments besides shape.
	Args []*netdef.Argument
	// External marks a parameter that is provided from outside (loaded or
	// fed): no init operator is emitted.
	External bool
}

// Init returns an Initializer that runs the fill operator op with args, as
// Caffe2's weight_init=("ConstantFill", {"value": 1.0}).
func Init(op string, args ...*netdef.Argument) Initializer {
	return Initializer{Op: op, Args: args}
}

// ExternalInit is the Initializer of a parameter that is loaded or fed
// rather than initialized by the init net.
var ExternalInit = Initializer{External: true}

// Model is Caffe2's ModelHelper: a train net, the init net that creates
// its parameters, and the record of those parameters.
type Model struct {
	// Name is the model's name; the nets are named after it.
	Name string
	// Net is the main (train or predict) net.
	Net *netdef.Net
	// InitNet creates the parameters (Caffe2's param_init_net).
	InitNet *netdef.Net
	// InitParams is false for a model whose parameters exist already
	// (loaded, or shared with another model): CreateParam then emits no
	// init operator.
	InitParams bool

	state *paramState
	// gradAdded records that AddGradientOperators ran.
	gradAdded bool
	gradMap   map[string]operators.Gradient
}

// paramState is what a model shares with the models built on it
// (Caffe2's param_model): its parameters, their infos and the init net.
type paramState struct {
	params   []string // trainable, in creation order
	computed []string // COMPUTED_PARAM, in creation order
	weights  []string
	biases   []string
	infos    map[string]*ParamInfo
}

// NewModel returns an empty model named name ("model" when empty) with
// fresh nets name and name+"_init".
func NewModel(name string) *Model {
	if name == "" {
		name = "model"
	}
	return &Model{
		Name:       name,
		Net:        netdef.NewNet(name),
		InitNet:    netdef.NewNet(name + "_init"),
		InitParams: true,
		state:      &paramState{infos: map[string]*ParamInfo{}},
	}
}

// CreateParam creates the parameter name (resolved in the current name
// scope) with the given shape. The init net gets the initializer's fill
// operator unless the model does not initialize its parameters or init is
// ExternalInit. Creating a parameter that exists returns it when the shape
// matches and is an error otherwise.
func (m *Model) CreateParam(name string, shape []int64, init Initializer, tags ...Tag) (string, error) {
	full := devicescope.Current().Scoped(name)
	if p, ok := m.state.infos[full]; ok {
		if p.Shape != nil && !slices.Equal(p.Shape, shape) {
			return "", fmt.Errorf("brew: model %q: parameter %q exists with shape %v, asked for %v", m.Name, full, p.Shape, shape)
		}
		return full, nil
	}
	if init.Op == "" && !init.External {
		return "", fmt.Errorf("brew: model %q: parameter %q has no initializer", m.Name, full)
	}
	if m.InitParams && !init.External {
		args := append([]*netdef.Argument{netdef.ArgInts("shape", shape...)}, init.Args...)
		devicescope.Current().Op(m.InitNet, init.Op, nil, []string{full}, args...)
	}
	m.addParameter(full, slices.Clone(shape), tags)
	return full, nil
}

// AddParameter records an existing blob as a parameter of the model with
// the given tags, emitting nothing.
func (m *Model) AddParameter(name string, tags ...Tag) {
	if _, ok := m.state.infos[name]; ok {
		return
	}
	m.addParameter(name, nil, tags)
}

func (m *Model) addParameter(name string, shape []int64, tags []Tag) {
	s := m.state
	s.infos[name] = &ParamInfo{Name: name, Shape: shape, Tags: slices.Clone(tags)}
	if slices.Contains(tags, ComputedParam) {
		s.computed = append(s.computed, name)
		return
	}
	s.params = append(s.params, name)
	if slices.Contains(tags, Weight) {
		s.weights = append(s.weights, name)
	}
	if slices.Contains(tags, Bias) {
		s.biases = append(s.biases, name)
	}
}

// inScope filters names to those under scope ("" = all), keeping order.
func inScope(names []string, scope string) []string {
	if scope != "" && !strings.HasSuffix(scope, "/") {
		scope += "/"
	}
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, scope) {
			out = append(out, n)
		}
	}
	return out
}

// GetParams returns the trainable parameters in the current name scope,
// in creation order. Use ParamsIn for another scope.
func (m *Model) GetParams() []string { return m.ParamsIn(devicescope.Current().Name()) }

// ParamsIn returns the trainable parameters whose names start with scope
// ("" = all of them), in creation order.
func (m *Model) ParamsIn(scope string) []string { return inScope(m.state.params, scope) }

// ComputedParamsIn returns the computed parameters under scope ("" = all).
func (m *Model) ComputedParamsIn(scope string) []string { return inScope(m.state.computed, scope) }

// AllParamsIn returns the trainable then the computed parameters under
// scope ("" = all), as Caffe2's GetAllParams.
func (m *Model) AllParamsIn(scope string) []string {
	return append(m.ParamsIn(scope), m.ComputedParamsIn(scope)...)
}

// Weights returns the parameters tagged Weight, in creation order.
func (m *Model) Weights() []string { return slices.Clone(m.state.weights) }

// Biases returns the parameters tagged Bias, in creation order.
func (m *Model) Biases() []string { return slices.Clone(m.state.biases) }

// ParamInfo returns the record of parameter name, or nil.
func (m *Model) ParamInfo(name string) *ParamInfo { return m.state.infos[name] }

// ParamToGrad returns each trainable parameter's gradient blob, once
// AddGradientOperators has run (empty before).
func (m *Model) ParamToGrad() map[string]string {
	out := map[string]string{}
	for _, p := range m.state.params {
		if g := m.state.infos[p].Grad; g != "" {
			out[p] = g
		}
	}
	return out
}

// Validate returns the parameters recorded more than once (none for a
// well-formed model).
func (m *Model) Validate() []string {
	seen := map[string]bool{}
	var dup []string
	for _, p := range append(slices.Clone(m.state.params), m.state.computed...) {
		if seen[p] && !slices.Contains(dup, p) {
			dup = append(dup, p)
		}
		seen[p] = true
	}
	return dup
}

// AddGradientOperators appends the backward pass of the model's net for
// the given losses (see operators.AddGradientOperators) and records each
// parameter's gradient. It may run only once per model.
func (m *Model) AddGradientOperators(losses ...string) (map[string]operators.Gradient, error) {
	if m.gradAdded {
		return nil, fmt.Errorf("brew: model %q: AddGradientOperators may run only once", m.Name)
	}
	if dup := m.Validate(); len(dup) > 0 {
		return nil, fmt.Errorf("brew: model %q: duplicate params: %v", m.Name, dup)
	}
	grads, err := operators.AddGradientOperators(m.Net.Proto(), losses, nil)
	if err != nil {
		return nil, fmt.Errorf("brew: model %q: %w", m.Name, err)
	}
	m.gradAdded = true
	m.gradMap = grads
	for _, p := range m.state.params {
		if g, ok := grads[p]; ok && g.Dense != "" {
			m.state.infos[p].Grad = g.Dense
		}
	}
	return grads, nil
}
