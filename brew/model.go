package brew

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

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
//
// Building a model records its first error, as bufio.Scanner does: the
// helpers, ResolveKwargs, Op, AddExternalInputs, CreateParam and
// AddParameter return only their result, and once one of them fails the
// later ones do nothing and return zero values. Err reports the failure, naming the helper and the
// blob; the steps that consume a model (AddGradientOperators, Build and the
// optimizer builders) return it before doing anything.
type Model struct {
	// Name is the model's name; the nets are named after it.
	Name string
	// Net is the main (train or predict) net.
	Net *netdef.Net
	// InitNet creates the parameters (Caffe2's param_init_net). Models
	// made with ModelOptions.ParamModel share it.
	InitNet *netdef.Net
	// InitParams is false for a model whose parameters exist already
	// (loaded, or shared with another model): CreateParam then emits no
	// init operator.
	InitParams bool

	state *paramState
	// gradAdded records that AddGradientOperators ran.
	gradAdded bool
	gradMap   map[string]operators.Gradient
	// argScope is the model-level arg scope (Caffe2's model.arg_scope).
	argScope     []Option
	knownOpsOnly bool
	// err is the first error of a building call (see Err).
	err error
}

// Err returns the first error a building call on the model recorded, or
// nil. A nil model's Err is an error too, so that building on a nil model
// is reported rather than a panic.
func (m *Model) Err() error {
	if m == nil {
		return errors.New("brew: nil model")
	}
	return m.err
}

// TakeErr returns Err and clears it, so that later building calls run
// again. It is for interactive front-ends (a REPL, script bindings) that
// report each call's error and let the user go on; the model keeps what
// the calls before the failure added, and whatever the failed call added
// before it failed. Programs that build a model in one go check Err once
// at the end instead.
func (m *Model) TakeErr() error {
	err := m.Err()
	if m != nil {
		m.err = nil
	}
	return err
}

// sticky runs one building call: nothing when the model has an error
// already (or is nil), else step, whose error it records. It returns
// step's result, or the zero value after an error.
func sticky[T any](m *Model, step func() (T, error)) T {
	var zero T
	if m == nil || m.err != nil {
		return zero
	}
	v, err := step()
	if err != nil {
		m.err = err
		return zero
	}
	return v
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

// ModelOptions are the optional settings of NewModelWith, Caffe2's
// ModelHelper keyword arguments. The zero value gives Caffe2's defaults.
type ModelOptions struct {
	// ParamModel, when set, makes the new model share ParamModel's init
	// net and parameter records (parameters, computed parameters, weights,
	// biases, ParamInfos and so gradients): Caffe2's param_model, used to
	// build a test or predict model on a train model's weights. The new
	// model has its own Net.
	ParamModel *Model
	// NoInitParams is Caffe2's init_params=False: helpers record their
	// parameters but emit no init operators, so the blobs must be loaded
	// or fed before the net runs.
	NoInitParams bool
	// KnownOpsOnly is Caffe2's allow_not_known_ops=False: Model.Op then
	// refuses operator types outside ModelHelper's list of operators known
	// to be safe.
	KnownOpsOnly bool
	// ArgScope is merged into the model's arg scope, whose default is
	// {order: "NCHW"}; later options win. Every helper call sees it (see
	// Option for the precedence).
	ArgScope []Option
}

// NewModel returns an empty model named name ("model" when empty) with
// fresh nets name and name+"_init" and Caffe2's default settings.
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
		argScope:   []Option{Order("NCHW")},
	}
}

// NewModelWith is NewModel with options. An invalid arg-scope option is an
// error.
func NewModelWith(name string, o ModelOptions) (*Model, error) {
	for _, opt := range o.ArgScope {
		if err := opt.validate(); err != nil {
			return nil, fmt.Errorf("brew: NewModelWith(%q): arg scope: %v", name, err)
		}
	}
	m := NewModel(name)
	m.argScope = append(m.argScope, o.ArgScope...)
	m.InitParams = !o.NoInitParams
	m.knownOpsOnly = o.KnownOpsOnly
	if p := o.ParamModel; p != nil {
		m.InitNet = p.InitNet
		m.state = p.state
	}
	return m, nil
}

// ArgScope returns the model-level arg scope (Caffe2's model.arg_scope).
func (m *Model) ArgScope() Kwargs {
	var k Kwargs
	for _, o := range m.argScope {
		k.apply(o)
	}
	return k
}

// scoped resolves name in the name scope prefix, as Caffe2's ScopedName
// does, except that a name that already starts with the prefix is kept as
// it is: the names helpers return can be passed to other helpers, as
// Caffe2 passes BlobReferences.
func scoped(prefix, name string) string {
	if prefix == "" || strings.HasPrefix(name, prefix) {
		return name
	}
	return prefix + name
}

// known reports whether the model can read blob: an operator of its net
// produces it, the net declares it as an external input, the init net
// produces it, or it is a parameter.
func (m *Model) known(blob string) bool {
	return m.Net.BlobIsDefined(blob) || m.InitNet.BlobIsDefined(blob) || m.state.infos[blob] != nil
}

// resolveInput resolves the input name of a helper in the name scope
// prefix: the scoped name if the model knows it, else the name as given
// if the model knows that (a blob outside the scope), else an error.
func (m *Model) resolveInput(prefix, name string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("empty input blob name")
	}
	full := scoped(prefix, name)
	if m.known(full) {
		return full, nil
	}
	if full != name && m.known(name) {
		return name, nil
	}
	return "", fmt.Errorf("input blob %q is not produced by an operator of net %q or its init net, "+
		"nor declared as an external input or a parameter (declare fed blobs with AddExternalInputs)",
		full, m.Net.Name())
}

// AddExternalInputs declares blobs that are fed rather than computed
// (data, labels) as external inputs of the model's net, resolved in the
// current name scope. Helpers accept as inputs only blobs the model knows
// of, so a misspelt name is caught when the model is built. Declaring a
// blob twice is an error (recorded in the model, see Err), as in Caffe2's
// AddExternalInput.
func (m *Model) AddExternalInputs(names ...string) {
	sticky(m, func() (struct{}, error) {
		prefix := devicescope.Current().Name()
		full := make([]string, len(names))
		for i, n := range names {
			if n == "" {
				return struct{}{}, fmt.Errorf("brew: model %q: AddExternalInputs: empty blob name", m.Name)
			}
			full[i] = scoped(prefix, n)
		}
		if err := m.Net.AddExternalInput(full...); err != nil {
			return struct{}{}, fmt.Errorf("brew: model %q: %w", m.Name, err)
		}
		return struct{}{}, nil
	})
}

// knownOps are the operator types Caffe2's ModelHelper lets through
// without a warning (allow_not_known_ops).
var knownOps = map[string]bool{
	"Accuracy": true, "Adam": true, "Add": true, "Adagrad": true, "SparseAdagrad": true,
	"AveragedLoss": true, "Cast": true, "Checkpoint": true, "ConstantFill": true,
	"Copy": true, "CopyGPUToCPU": true, "CopyCPUToGPU": true, "DequeueBlobs": true,
	"EnsureCPUOutput": true, "ExpandDims": true, "Flatten": true, "FlattenToVec": true,
	"LabelCrossEntropy": true, "LearningRate": true, "MakeTwoClass": true, "MatMul": true,
	"NCCLAllreduce": true, "NHWC2NCHW": true, "PackSegments": true, "Print": true,
	"PRelu": true, "ReduceFrontSum": true, "Scale": true, "ScatterWeightedSum": true,
	"Sigmoid": true, "SortedSegmentSum": true, "Snapshot": true, "Softmax": true,
	"SoftmaxWithLoss": true, "SquaredL2Distance": true, "Squeeze": true,
	"StopGradient": true, "Summarize": true, "Tanh": true, "Transpose": true,
	"UnpackSegments": true, "WeightedSum": true, "YellowFin": true,
}

// Op appends an operator to the model's net in the current name and
// device scope, as Caffe2's model.<Op>(…) does: names are resolved as
// helpers resolve them (an input the model does not know is scoped and
// becomes an external input, as in Caffe2). The type must be registered;
// with ModelOptions.KnownOpsOnly it must also be on ModelHelper's list of
// operators known to be safe. It returns the operator, or nil after an
// error (see Err).
func (m *Model) Op(typ string, inputs, outputs []string, args ...*netdef.Argument) *netdef.OperatorDef {
	return sticky(m, func() (*netdef.OperatorDef, error) { return m.op(typ, inputs, outputs, args) })
}

func (m *Model) op(typ string, inputs, outputs []string, args []*netdef.Argument) (*netdef.OperatorDef, error) {
	if !operators.IsOperator(typ) {
		return nil, fmt.Errorf("brew: model %q: %s is not a registered operator", m.Name, typ)
	}
	if m.knownOpsOnly && !knownOps[typ] {
		return nil, fmt.Errorf("brew: model %q: operator %s is not known to be safe", m.Name, typ)
	}
	s := devicescope.Current()
	prefix := s.Name()
	ins := make([]string, len(inputs))
	for i, in := range inputs {
		if r, err := m.resolveInput(prefix, in); err == nil {
			ins[i] = r
		} else {
			ins[i] = scoped(prefix, in)
		}
	}
	outs := make([]string, len(outputs))
	for i, out := range outputs {
		outs[i] = scoped(prefix, out)
	}
	return s.WithNameReset("").Op(m.Net, typ, ins, outs, args...), nil
}

// CreateParam creates the parameter name (resolved in the current name
// scope) with the given shape and returns its full name. The init net gets
// the initializer's fill operator, with argument shape first, unless the
// model does not initialize its parameters or init is ExternalInit.
// Creating a parameter that exists returns it when the shape matches and
// is an error otherwise (models sharing parameters rely on this); after an
// error it returns "" (see Err).
func (m *Model) CreateParam(name string, shape []int64, init Initializer, tags ...Tag) string {
	return sticky(m, func() (string, error) { return m.createParam(name, shape, init, tags) })
}

func (m *Model) createParam(name string, shape []int64, init Initializer, tags []Tag) (string, error) {
	if name == "" {
		return "", fmt.Errorf("brew: model %q: CreateParam: empty parameter name", m.Name)
	}
	full := scoped(devicescope.Current().Name(), name)
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
		args := []*netdef.Argument{netdef.ArgInts("shape", shape...)}
		for _, a := range init.Args {
			args = append(args, proto.Clone(a).(*netdef.Argument))
		}
		devicescope.Current().WithNameReset("").Op(m.InitNet, init.Op, nil, []string{full}, args...)
	}
	m.addParameter(full, slices.Clone(shape), tags)
	return full, nil
}

// AddParameter records an existing blob (its full name) as a parameter of
// the model with the given tags, emitting nothing. As in Caffe2 the name
// is appended even when it is recorded already; Validate reports such
// duplicates and AddGradientOperators refuses them. Like the other building
// calls it does nothing on a model that has an error.
func (m *Model) AddParameter(name string, tags ...Tag) {
	if m.Err() != nil {
		return
	}
	if _, ok := m.state.infos[name]; ok {
		m.appendParam(name, tags)
		return
	}
	m.addParameter(name, nil, tags)
}

func (m *Model) addParameter(name string, shape []int64, tags []Tag) {
	m.state.infos[name] = &ParamInfo{Name: name, Shape: shape, Tags: slices.Clone(tags)}
	m.appendParam(name, tags)
}

func (m *Model) appendParam(name string, tags []Tag) {
	s := m.state
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

// GetComputedParams returns the computed parameters in the current name
// scope, in creation order.
func (m *Model) GetComputedParams() []string {
	return m.ComputedParamsIn(devicescope.Current().Name())
}

// GetAllParams returns GetParams followed by GetComputedParams.
func (m *Model) GetAllParams() []string { return m.AllParamsIn(devicescope.Current().Name()) }

// ParamsIn returns the trainable parameters whose names start with scope
// ("" = all of them; "c" and "c/" both mean the scope c/), in creation
// order.
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

// ParamToGrad returns each trainable parameter's dense gradient blob, once
// AddGradientOperators has run (empty before). Sparse gradients are in
// GradMap.
func (m *Model) ParamToGrad() map[string]string {
	out := map[string]string{}
	for _, p := range m.state.params {
		if g := m.state.infos[p].Grad; g != "" {
			out[p] = g
		}
	}
	return out
}

// GradMap returns a copy of the gradient map AddGradientOperators
// returned (Caffe2's model.grad_map): every blob that has a gradient, dense
// or sparse. It is nil before AddGradientOperators.
func (m *Model) GradMap() map[string]operators.Gradient {
	if m.gradMap == nil {
		return nil
	}
	out := make(map[string]operators.Gradient, len(m.gradMap))
	for k, v := range m.gradMap {
		out[k] = v
	}
	return out
}

// Validate returns, sorted, the parameters recorded more than once (none
// for a well-formed model), as Caffe2's _Validate.
func (m *Model) Validate() []string {
	seen := map[string]bool{}
	var dup []string
	for _, p := range append(slices.Clone(m.state.params), m.state.computed...) {
		if seen[p] && !slices.Contains(dup, p) {
			dup = append(dup, p)
		}
		seen[p] = true
	}
	slices.Sort(dup)
	return dup
}

// AddGradientOperators appends the backward pass of the model's net for
// the given losses (see operators.AddGradientOperators) and records each
// parameter's gradient. It may run only once per model, and not on a
// model with duplicate parameters (see Validate) or with an error (it
// returns Err).
func (m *Model) AddGradientOperators(losses ...string) (map[string]operators.Gradient, error) {
	return m.AddGradientOperatorsWith(losses, nil)
}
