package caffe

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/netdef"
)

// ErrUnsupported is wrapped by Convert's errors for a layer type, or a
// setting of a supported layer, that has no Caffe2 translation here.
var ErrUnsupported = errors.New("not supported")

// Option is an optional setting of Convert.
type Option func(*options)

type options struct {
	shapes map[string][]int
	level  int32
	stages []string
	phase  Phase
	fill   bool
}

// InputShape gives the shape of an input blob of the net: a top of a data
// layer (Data, ImageData, MemoryData, HDF5Data), whose shape only the data
// set knows, or an Input layer's top, replacing the shape the prototxt
// declares. For a data layer with a transform_param the shape is that of the
// fed data, before cropping. Layers whose translation depends on their
// input's shape (pooling's rounding, Softmax, Flatten, Reshape, Slice, ...)
// need it.
func InputShape(name string, dims ...int) Option {
	dims = slices.Clone(dims)
	return func(o *options) {
		if o.shapes == nil {
			o.shapes = map[string][]int{}
		}
		o.shapes[name] = dims
	}
}

// Level sets the level of the NetState that include and exclude rules are
// matched against (default 0).
func Level(level int) Option { return func(o *options) { o.level = int32(level) } }

// Stages sets the stages of the NetState that include and exclude rules are
// matched against (default none).
func Stages(stages ...string) Option {
	stages = slices.Clone(stages)
	return func(o *options) { o.stages = stages }
}

// InPhase sets the phase the net is instantiated in (default Phase_TEST).
// In Phase_TRAIN the layers kept are those of Caffe's training net and
// Dropout drops (is_test 0); the training-time data augmentation of a
// transform_param (crop_size, mirror) and BatchNorm with batch statistics
// are not translated and are reported with ErrUnsupported.
func InPhase(p Phase) Option { return func(o *options) { o.phase = p } }

// FromFillers creates the learned parameters of Convolution,
// Deconvolution and InnerProduct layers that the weights do not hold from
// the layers' weight_filler and bias_filler, as Caffe initializes a net
// for training: constant → ConstantFill, uniform → UniformFill, gaussian
// → GaussianFill, xavier → UniformFill in ±sqrt(3/n), msra →
// GaussianFill with std sqrt(2/n), n being the fan-in, fan-out or their
// mean as variance_norm says. The parameter's shape must be known (see
// InputShape). Convert then accepts nil weights.
func FromFillers() Option { return func(o *options) { o.fill = true } }

// Converted is a Caffe net translated to Caffe2.
type Converted struct {
	// Init creates every parameter blob: GivenTensorFill with the trained
	// values, ConstantFill for the constants the translation adds (a zero
	// bias for an InnerProduct without one, ...).
	Init *netdef.NetDef
	// Predict is the forward pass. Its external inputs are Inputs followed
	// by the parameters; its external outputs are Outputs.
	Predict *netdef.NetDef
	// Inputs are the blobs to feed: the tops of Input and data layers and
	// the net's legacy inputs, in the net's order.
	Inputs []string
	// Outputs are the blobs that the net computes and no layer reads, as
	// Caffe reports its net's outputs.
	Outputs []string
	// Layers are the translated layers, in the net's order.
	Layers []Layer
	// Shapes are the shapes of the predict net's blobs as far as the
	// converter knows them: nil for an unknown shape, -1 for an unknown
	// dimension.
	Shapes map[string][]int
}

// Layer is one Caffe layer's translation.
type Layer struct {
	// Name and Type are the Caffe layer's (the BatchNorm's for a BatchNorm
	// merged with the Scale after it).
	Name, Type string
	// First and End delimit the layer's operators: Predict.Op[First:End]
	// (none for an Input layer).
	First, End int
	// Tops are the layer's Caffe tops; Blobs are the Caffe2 blobs holding
	// them after the layer's operators ran. A blob has its top's name
	// except where an in-place layer's operator cannot run in place (its
	// output then gets a new name, which later layers read) and for data
	// preprocessed by a data layer's transform_param (<top>_transformed).
	Tops, Blobs []string
	// Params are the parameter blobs the layer's operators read.
	Params []string
	// Shapes are the tops' shapes as far as they are known: nil for an
	// unknown shape, -1 for an unknown dimension.
	Shapes [][]int
	// Merged names a layer translated together with this one (the Scale
	// layer after a BatchNorm); Tops and Blobs are then the merged layer's.
	Merged string
	// Learned are the layer's Caffe parameter blobs, in Caffe's order (the
	// weights, then the bias), as Caffe2 blob names: the Params that a
	// caffemodel stores for the layer and that training updates
	// (Convolution, Deconvolution, InnerProduct and PReLU layers; not a
	// BatchNorm's statistics, a Scale layer's factors, nor the constants a
	// translation adds).
	Learned []string
	// LRMult and DecayMult are the learning-rate and weight-decay
	// multipliers of Learned, from the layer's param specs (1 when unset).
	LRMult, DecayMult []float32
}

// Convert translates a Caffe net to a Caffe2 init net and predict net for
// inference or, with InPhase(Phase_TRAIN) and FromFillers, for training
// (the predict net is then the forward pass of the training net). net describes the layers (a deploy or train_val prototxt; see
// ParseNet); weights holds the trained blobs of the layers by name (a
// caffemodel; see ParseWeights). The net is instantiated in Caffe's TEST
// phase (or the InPhase option's), at the level and stages of the options: layers whose include and
// exclude rules do not match are left out, as Caffe does. Both the current
// (layer) and the V1 (layers) formats are read.
//
// Each layer becomes Caffe2 operators with Caffe's arithmetic; see the
// package documentation for the translation of each layer type. An error
// names the layer, its type and what cannot be translated; an unsupported
// layer type or setting wraps ErrUnsupported.
func Convert(net, weights *NetParameter, opts ...Option) (conv *Converted, err error) {
	var c *converter
	defer func() {
		// A translation bug must not take the caller down.
		if r := recover(); r != nil {
			layer := "?"
			if c != nil && c.l != nil {
				layer = fmt.Sprintf("%q (%s)", c.l.GetName(), c.l.GetType())
			}
			conv, err = nil, fmt.Errorf("caffe: internal error translating layer %s: %v", layer, r)
		}
	}()
	if net == nil {
		return nil, errors.New("caffe: no net")
	}
	o := options{phase: Phase_TEST}
	for _, opt := range opts {
		opt(&o)
	}
	if weights == nil {
		if !o.fill {
			return nil, errors.New("caffe: no weights")
		}
		weights = &NetParameter{}
	}
	layers, err := netLayers(net)
	if err != nil {
		return nil, err
	}
	trained, err := weightsByName(weights)
	if err != nil {
		return nil, err
	}
	c = newConverter(net, &o, trained)
	if err := c.run(layers); err != nil {
		return nil, err
	}
	return c.result(), nil
}

// netLayers returns the net's layers in the current format: V1 layers are
// upgraded, and legacy inputs (input with input_shape or input_dim) become
// an Input layer in front.
func netLayers(net *NetParameter) ([]*LayerParameter, error) {
	if len(net.Layer) > 0 && len(net.Layers) > 0 {
		return nil, errors.New("caffe: the net has layers in both the current (layer) and the V1 (layers) format")
	}
	layers := net.Layer
	if len(net.Layers) > 0 {
		var err error
		if layers, err = upgradeV1(net.Layers); err != nil {
			return nil, err
		}
	}
	if len(net.Input) == 0 {
		if len(net.InputShape) > 0 || len(net.InputDim) > 0 {
			return nil, errors.New("caffe: the net has input_shape or input_dim but no input")
		}
		return layers, nil
	}
	in := &LayerParameter{Name: proto.String("input"), Type: proto.String("Input"), Top: net.Input, InputParam: &InputParameter{}}
	switch {
	case len(net.InputShape) > 0:
		if len(net.InputShape) != len(net.Input) {
			return nil, fmt.Errorf("caffe: the net has %d inputs but %d input_shape", len(net.Input), len(net.InputShape))
		}
		in.InputParam.Shape = net.InputShape
	case len(net.InputDim) > 0:
		if len(net.InputDim) != 4*len(net.Input) {
			return nil, fmt.Errorf("caffe: the net has %d inputs but %d input_dim (want 4 per input)", len(net.Input), len(net.InputDim))
		}
		for i := range net.Input {
			s := &BlobShape{}
			for _, d := range net.InputDim[4*i : 4*i+4] {
				s.Dim = append(s.Dim, int64(d))
			}
			in.InputParam.Shape = append(in.InputParam.Shape, s)
		}
	}
	return append([]*LayerParameter{in}, layers...), nil
}

// weightsByName maps layer names to their trained blobs, from the current
// and the V1 layers.
func weightsByName(w *NetParameter) (map[string][]*BlobProto, error) {
	m := map[string][]*BlobProto{}
	add := func(name string, blobs []*BlobProto) error {
		if _, dup := m[name]; dup && len(blobs) > 0 && len(m[name]) > 0 {
			return fmt.Errorf("caffe weights: two layers are named %q", name)
		}
		if len(blobs) > 0 || m[name] == nil {
			m[name] = blobs
		}
		return nil
	}
	for _, l := range w.Layer {
		if err := add(l.GetName(), l.Blobs); err != nil {
			return nil, err
		}
	}
	for _, l := range w.Layers {
		blobs := l.Blobs
		if l.Layer != nil && len(blobs) == 0 {
			blobs = l.Layer.Blobs
		}
		if err := add(l.GetName(), blobs); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// converter holds the state of one translation.
type converter struct {
	opts    *options
	trained map[string][]*BlobProto
	state   *NetState

	name  string
	ops   []*netdef.OperatorDef
	init  []*netdef.OperatorDef
	names map[string]bool // every blob name in use
	cur   map[string]string
	shape map[string][]int // Caffe2 blob → shape (nil: unknown)

	inputs   []string
	params   []string
	layers   []Layer
	fresh    []string        // Caffe blob names in order of production
	consumed map[string]bool // Caffe blob names read since last produced
	produced map[string]bool // Caffe blob names produced by operators

	// the layer being translated
	l     *LayerParameter
	rec   *Layer
	skipN int // layers the current one consumed (BatchNorm + Scale)
}

func newConverter(net *NetParameter, o *options, trained map[string][]*BlobProto) *converter {
	c := &converter{
		opts: o, trained: trained,
		state:    &NetState{Phase: o.phase.Enum(), Level: &o.level, Stage: o.stages},
		name:     net.GetName(),
		names:    map[string]bool{},
		cur:      map[string]string{},
		shape:    map[string][]int{},
		consumed: map[string]bool{},
		produced: map[string]bool{},
	}
	if c.name == "" {
		c.name = "caffe"
	}
	return c
}

func (c *converter) run(all []*LayerParameter) error {
	var layers []*LayerParameter
	for _, l := range all {
		if includes(c.state, l) {
			layers = append(layers, l)
		}
	}
	seen := map[string]bool{}
	for _, l := range layers {
		if seen[l.GetName()] && l.GetName() != "" {
			return fmt.Errorf("caffe: two layers are named %q", l.GetName())
		}
		seen[l.GetName()] = true
		for _, b := range l.Bottom {
			c.names[b] = true
		}
		for _, t := range l.Top {
			c.names[t] = true
		}
	}
	for i := 0; i < len(layers); i++ {
		l := layers[i]
		c.l = l
		c.rec = &Layer{Name: l.GetName(), Type: l.GetType(), First: len(c.ops)}
		c.skipN = 0
		if err := c.layer(layers[i+1:]); err != nil {
			return fmt.Errorf("caffe: layer %q (%s): %w", l.GetName(), l.GetType(), err)
		}
		c.rec.End = len(c.ops)
		for _, t := range c.rec.Blobs {
			c.rec.Shapes = append(c.rec.Shapes, slices.Clone(c.shape[t]))
		}
		c.layers = append(c.layers, *c.rec)
		i += c.skipN
	}
	for _, name := range sortedKeys(c.opts.shapes) {
		if !slices.Contains(c.inputs, name) {
			return fmt.Errorf("caffe: InputShape names blob %q, which is not an input of the net (its inputs: %s)", name, strings.Join(c.inputs, ", "))
		}
	}
	return nil
}

// includes reports whether layer l is part of the net in state s: Caffe's
// rule (net.cpp StateMeetsRule): with include rules, one must match; no
// exclude rule may match.
func includes(s *NetState, l *LayerParameter) bool {
	if len(l.Include) > 0 {
		for _, r := range l.Include {
			if meets(s, r) {
				return true
			}
		}
		return false
	}
	for _, r := range l.Exclude {
		if meets(s, r) {
			return false
		}
	}
	return true
}

func meets(s *NetState, r *NetStateRule) bool {
	if r.Phase != nil && r.GetPhase() != s.GetPhase() {
		return false
	}
	if r.MinLevel != nil && s.GetLevel() < r.GetMinLevel() {
		return false
	}
	if r.MaxLevel != nil && s.GetLevel() > r.GetMaxLevel() {
		return false
	}
	for _, st := range r.Stage {
		if !slices.Contains(s.Stage, st) {
			return false
		}
	}
	for _, st := range r.NotStage {
		if slices.Contains(s.Stage, st) {
			return false
		}
	}
	return true
}

func (c *converter) result() *Converted {
	predict := &netdef.NetDef{Name: proto.String(c.name), Op: c.ops}
	predict.ExternalInput = append(slices.Clone(c.inputs), c.params...)
	var outputs []string
	for _, b := range c.fresh {
		if !c.consumed[b] && c.produced[b] {
			outputs = append(outputs, c.cur[b])
		}
	}
	predict.ExternalOutput = outputs
	init := &netdef.NetDef{Name: proto.String(c.name + "_init"), Op: c.init, ExternalOutput: slices.Clone(c.params)}
	shapes := make(map[string][]int, len(c.shape))
	for name, s := range c.shape {
		shapes[name] = slices.Clone(s)
	}
	return &Converted{Init: init, Predict: predict, Inputs: slices.Clone(c.inputs), Outputs: slices.Clone(outputs),
		Layers: c.layers, Shapes: shapes}
}

// newName returns base, or base_1, base_2, … when base is taken, and
// reserves it.
func (c *converter) newName(base string) string {
	name := base
	for i := 1; c.names[name]; i++ {
		name = fmt.Sprintf("%s_%d", base, i)
	}
	c.names[name] = true
	return name
}

// bottom returns the Caffe2 blob holding bottom i of the layer and its
// shape (nil when unknown), and marks it read.
func (c *converter) bottom(i int) (string, []int, error) {
	if i >= len(c.l.Bottom) {
		return "", nil, fmt.Errorf("has %d bottoms, want at least %d", len(c.l.Bottom), i+1)
	}
	b := c.l.Bottom[i]
	name, ok := c.cur[b]
	if !ok {
		return "", nil, fmt.Errorf("bottom %q is not produced by an earlier layer or an input", b)
	}
	c.consumed[b] = true
	return name, c.shape[name], nil
}

// bottoms returns all bottoms of the layer (see bottom).
func (c *converter) bottoms() ([]string, [][]int, error) {
	var names []string
	var shapes [][]int
	for i := range c.l.Bottom {
		n, s, err := c.bottom(i)
		if err != nil {
			return nil, nil, err
		}
		names, shapes = append(names, n), append(shapes, s)
	}
	return names, shapes, nil
}

// top returns the Caffe2 name for top i of the layer and records it with
// its shape. An in-place top (one that is also a bottom) keeps its blob
// when the operator writing it may run in place; otherwise it gets a new
// name, which later layers read.
func (c *converter) top(i int, inplaceOK bool, shape []int) (string, error) {
	if i >= len(c.l.Top) {
		return "", fmt.Errorf("has %d tops, want at least %d", len(c.l.Top), i+1)
	}
	t := c.l.Top[i]
	name := t
	if prev, ok := c.cur[t]; ok {
		if !slices.Contains(c.l.Bottom, t) {
			return "", fmt.Errorf("top %q is already produced by an earlier layer", t)
		}
		name = prev
		if !inplaceOK {
			name = c.newName(t)
		}
	}
	c.cur[t] = name
	c.shape[name] = slices.Clone(shape)
	if !slices.Contains(c.fresh, t) {
		c.fresh = append(c.fresh, t)
	}
	c.consumed[t] = false
	c.produced[t] = true
	c.rec.Tops = append(c.rec.Tops, t)
	c.rec.Blobs = append(c.rec.Blobs, name)
	return name, nil
}

// input declares top i of an input layer as an external input.
func (c *converter) input(i int, shape []int) error {
	t := c.l.Top[i]
	if _, ok := c.cur[t]; ok {
		return fmt.Errorf("input %q is already produced by an earlier layer", t)
	}
	if s, ok := c.opts.shapes[t]; ok {
		shape = s
	}
	c.cur[t] = t
	c.shape[t] = slices.Clone(shape)
	c.inputs = append(c.inputs, t)
	c.rec.Tops = append(c.rec.Tops, t)
	c.rec.Blobs = append(c.rec.Blobs, t)
	return nil
}

// temp reserves a blob name for an intermediate result of the layer.
func (c *converter) temp(suffix string, shape []int) string {
	name := c.newName(c.l.GetName() + "_" + suffix)
	c.shape[name] = slices.Clone(shape)
	return name
}

// op appends an operator of the layer to the predict net.
func (c *converter) op(typ string, in, out []string, args ...*netdef.Argument) {
	op := netdef.NewOperator(typ, in, out, args...)
	op.Name = proto.String(c.l.GetName())
	c.ops = append(c.ops, op)
}

// param adds a parameter blob named after the layer, created in the init
// net by GivenTensorFill with the given values, and returns its name.
func (c *converter) param(suffix string, t tensor) string {
	name := c.newName(c.l.GetName() + "_" + suffix)
	c.init = append(c.init, netdef.NewOperator("GivenTensorFill", nil, []string{name},
		netdef.ArgInts("shape", int64s(t.shape)...), netdef.ArgFloats("values", t.data...)))
	c.params = append(c.params, name)
	c.rec.Params = append(c.rec.Params, name)
	return name
}

// learned adds the layer's learned parameter blob i (its Caffe blob i,
// what it is; suffix names the Caffe2 blob): the trained blob from blobs,
// which must have the shape want (see fit), or, when the weights hold no
// blobs for the layer and FromFillers is set, a fill operator from filler.
// It records the blob in Layer.Learned with the multipliers of the
// layer's param spec i.
func (c *converter) learned(blobs []*BlobProto, i int, what, suffix string, filler *FillerParameter, want ...int) (string, error) {
	var name string
	if blobs == nil && c.opts.fill {
		for _, d := range want {
			if d < 0 {
				return "", fmt.Errorf("the %s's shape %s is not known, so it cannot be filled: give the net's input shape with InputShape", what, wantString(want))
			}
		}
		typ, args, err := fillOp(filler, want)
		if err != nil {
			return "", fmt.Errorf("%s filler: %w", what, err)
		}
		name = c.newName(c.l.GetName() + "_" + suffix)
		args = append([]*netdef.Argument{netdef.ArgInts("shape", int64s(want)...)}, args...)
		c.init = append(c.init, netdef.NewOperator(typ, nil, []string{name}, args...))
		c.params = append(c.params, name)
		c.rec.Params = append(c.rec.Params, name)
	} else {
		t, err := fit(blobs, i, what, want...)
		if err != nil {
			return "", err
		}
		name = c.param(suffix, t)
	}
	lr, decay := float32(1), float32(1)
	if i < len(c.l.Param) {
		lr, decay = c.l.Param[i].GetLrMult(), c.l.Param[i].GetDecayMult()
	}
	c.rec.Learned = append(c.rec.Learned, name)
	c.rec.LRMult = append(c.rec.LRMult, lr)
	c.rec.DecayMult = append(c.rec.DecayMult, decay)
	return name, nil
}

// trainedOrFilled returns the layer's n trained blobs, or nil when the
// weights hold none for it and FromFillers is set.
func (c *converter) trainedOrFilled(n int, what string) ([]*BlobProto, error) {
	if c.opts.fill && len(c.trained[c.l.GetName()]) == 0 {
		return nil, nil
	}
	return c.blobs(n, n, what)
}

// constant adds a parameter blob of the given shape filled with v by
// ConstantFill in the init net, and returns its name.
func (c *converter) constant(suffix string, v float32, shape ...int) string {
	name := c.newName(c.l.GetName() + "_" + suffix)
	c.init = append(c.init, netdef.NewOperator("ConstantFill", nil, []string{name},
		netdef.ArgInts("shape", int64s(shape)...), netdef.ArgFloat("value", v)))
	c.params = append(c.params, name)
	c.rec.Params = append(c.rec.Params, name)
	return name
}

// blobs returns the layer's trained blobs, checking that there are between
// lo and hi of them.
func (c *converter) blobs(lo, hi int, what string) ([]*BlobProto, error) {
	b, ok := c.trained[c.l.GetName()]
	if !ok || len(b) == 0 {
		if lo == 0 {
			return nil, nil
		}
		return nil, fmt.Errorf("the weights have no blobs for this layer (want %s)", what)
	}
	if len(b) < lo || len(b) > hi {
		return nil, fmt.Errorf("the weights have %d blobs for this layer, want %s", len(b), what)
	}
	return b, nil
}

func int64s(v []int) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// shapeString formats a shape for errors ("unknown" when nil).
func shapeString(s []int) string {
	if s == nil {
		return "unknown"
	}
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = fmt.Sprint(d)
	}
	return "[" + strings.Join(parts, " ") + "]"
}
