package brew

import (
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/workspace"
)

// Blob names the optimizers share with Caffe2.
const (
	// OptimizerIterationBlob is the int64 [1] CPU iteration counter that the
	// learning-rate schedules (and Adam) read.
	OptimizerIterationBlob = "optimizer_iteration"
	// IterationMutexBlob is the mutex AtomicIter holds while it increments
	// the counter.
	IterationMutexBlob = "iteration_mutex"
	// LRInjectionBlob is the float [1] multiplier of every learning rate
	// that BuildOptions.AllowLRInjection creates (1 at start).
	LRInjectionBlob = "lr_injection"
	// ClipScope is the name scope of the global-norm gradient clipping ops.
	ClipScope = "norm_clipped_grad_update"
)

// optimizerInstances counts the optimizers made per class, process-wide,
// as Caffe2's _optimizer_instance_count does: the count is part of every
// blob name an optimizer makes unique ("SgdOptimizer_0_lr_cpu").
var optimizerInstances = struct {
	sync.Mutex
	n map[string]int
}{n: map[string]int{}}

// nextInstance returns the instance number of a new optimizer of class.
func nextInstance(class string) int {
	optimizerInstances.Lock()
	defer optimizerInstances.Unlock()
	n := optimizerInstances.n[class]
	optimizerInstances.n[class] = n + 1
	return n
}

// ResetOptimizerInstanceCount forgets how many optimizers of each class
// were made, so the next one of each class is number 0 again (Caffe2's
// reset_optimizer_instance_count). Tests call it to get predictable blob
// names; a program that builds several models into one workspace must not,
// or their learning-rate blobs collide.
func ResetOptimizerInstanceCount() {
	optimizerInstances.Lock()
	defer optimizerInstances.Unlock()
	clear(optimizerInstances.n)
}

// OptimizerInstanceCount returns how many optimizers of the class (for
// example "SgdOptimizer") were made since the process started or the last
// ResetOptimizerInstanceCount: the instance number the next one gets.
func OptimizerInstanceCount(class string) int {
	optimizerInstances.Lock()
	defer optimizerInstances.Unlock()
	return optimizerInstances.n[class]
}

// AuxParams are the blobs an optimizer keeps besides the parameters:
// Caffe2's get_auxiliary_parameters().
type AuxParams struct {
	// Local holds one blob per parameter and state, such as a momentum or
	// a squared-gradient sum.
	Local []string
	// Shared holds blobs common to all the parameters, such as the ONE
	// constants and the iteration counter. Like Caffe2, the optimizer
	// records one entry per parameter it updates, so names repeat.
	Shared []string
}

// Optimizer adds the operators that update parameters from their
// gradients: one of Caffe2's optimizer classes (SgdOptimizer,
// AdamOptimizer, AdagradOptimizer, RmsPropOptimizer). Make one with NewSGD,
// NewAdam, NewAdagrad or NewRMSProp, then apply it to a whole model with
// Build, or to single parameters with Apply; BuildSGD and the other
// Build functions do both steps.
//
// An Optimizer records the auxiliary blobs it creates and is not safe for
// concurrent use.
type Optimizer struct {
	class string
	num   int
	rule  updateRule
	aux   AuxParams
	// lrMultiplier multiplies every learning rate this optimizer builds
	// from then on (Caffe2's add_lr_multiplier); "" for none.
	lrMultiplier string
}

// updateRule adds the update of one parameter: the part of an optimizer
// class that differs between classes.
type updateRule interface {
	update(o *Optimizer, s *optSite, param string, grad operators.Gradient) error
}

func newOptimizer(class string, rule updateRule) *Optimizer {
	return &Optimizer{class: class, num: nextInstance(class), rule: rule}
}

// ClassName returns the Caffe2 class the optimizer mirrors, such as
// "SgdOptimizer"; its blob names start with it.
func (o *Optimizer) ClassName() string { return o.class }

// InstanceNum returns the optimizer's number among those of its class.
func (o *Optimizer) InstanceNum() int { return o.num }

// AuxiliaryParameters returns copies of the lists of blobs the optimizer
// has created besides the parameters.
func (o *Optimizer) AuxiliaryParameters() AuxParams {
	return AuxParams{Local: append([]string(nil), o.aux.Local...), Shared: append([]string(nil), o.aux.Shared...)}
}

// CPUBlobName returns the name of the optimizer's blob base on a CPU
// device: "<Class>_<n>_<base><nodeName>_cpu", for example
// "SgdOptimizer_0_lr_cpu" (Caffe2's get_cpu_blob_name).
func (o *Optimizer) CPUBlobName(base, nodeName string) string {
	return o.class + "_" + strconv.Itoa(o.num) + "_" + base + nodeName + "_cpu"
}

// GPUBlobName returns the name of the optimizer's blob base on GPU gpuID:
// "<Class>_<n>_<base><nodeName>_gpu<id>", for example
// "SgdOptimizer_0_lr_gpu1" (Caffe2's get_gpu_blob_name).
func (o *Optimizer) GPUBlobName(base string, gpuID int, nodeName string) string {
	return o.class + "_" + strconv.Itoa(o.num) + "_" + base + nodeName + "_gpu" + strconv.Itoa(gpuID)
}

// uniqueName is Caffe2's make_unique_blob_name: the blob name base that is
// unique to this optimizer and the device dev (nil = CPU).
func (o *Optimizer) uniqueName(base string, dev *netdef.DeviceOption) string {
	if isGPU(dev) {
		return o.GPUBlobName(base, int(dev.GetDeviceId()), dev.GetNodeName())
	}
	return o.CPUBlobName(base, dev.GetNodeName())
}

// isGPU reports whether dev is a CUDA or HIP device.
func isGPU(dev *netdef.DeviceOption) bool {
	t := dev.Type()
	return t == netdef.CUDA || t == netdef.HIP
}

// Apply adds the update of one parameter to the model's nets under the
// current device and name scope, as calling a Caffe2 optimizer
// (optimizer(net, param_init_net, param, grad)) does. grad is the
// parameter's gradient; its zero value means the gradient that
// Model.AddGradientOperators recorded. Use ParamDevice and
// devicescope.DeviceScope to place the update where the parameter lives, as
// Build does. A model with an error is refused: Apply returns its Err.
func (o *Optimizer) Apply(m *Model, param string, grad operators.Gradient) error {
	if m == nil {
		return errors.New("brew: Optimizer.Apply: nil model")
	}
	if err := m.Err(); err != nil {
		return err
	}
	if grad.IsNone() {
		var ok bool
		if grad, ok = m.gradMap[param]; !ok || grad.IsNone() {
			return fmt.Errorf("brew: %s: parameter %q of model %q has no gradient (run AddGradientOperators first, or pass the gradient)", o.class, param, m.Name)
		}
	}
	cur := devicescope.Current()
	return o.apply(&optSite{m: m, scope: cur, dev: cur.Device()}, param, grad)
}

func (o *Optimizer) apply(s *optSite, param string, grad operators.Gradient) error {
	if o == nil || o.rule == nil {
		return fmt.Errorf("brew: parameter %q of model %q: the optimizer was not made by NewSGD, NewAdam, NewAdagrad or NewRMSProp", param, s.m.Name)
	}
	if err := o.rule.update(o, s, param, grad); err != nil {
		return fmt.Errorf("brew: %s: parameter %q of model %q: %w", o.class, param, s.m.Name, err)
	}
	return nil
}

// optSite is where one parameter's update is built: the model, the
// caller's name scope (names that Caffe2 passes as strings are resolved in
// it) and the device of the parameter (nil when none is set).
type optSite struct {
	m     *Model
	scope devicescope.Scope
	dev   *netdef.DeviceOption
}

// name resolves name in the name scope, as Caffe2 does for blob names given
// as strings.
func (s *optSite) name(name string) string { return s.scope.Scoped(name) }

// exact returns a scope that takes blob names as given and places ops on
// dev (on the caller's device scope when dev is nil).
func (s *optSite) exact(dev *netdef.DeviceOption) devicescope.Scope {
	sc := s.scope.WithNameReset("")
	if dev != nil {
		sc = sc.WithDevice(dev)
	}
	return sc
}

// op appends an operator on the site's device to net, taking the blob names
// as given, and returns it.
func (s *optSite) op(net *netdef.Net, typ string, in, out []string, args ...*netdef.Argument) *netdef.OperatorDef {
	return s.exact(s.dev).Op(net, typ, in, out, args...)
}

// defined returns the blob of name that net defines: name itself, or name
// in the name scope; ok is false when neither is defined.
func (s *optSite) defined(net *netdef.Net, name string) (blob string, ok bool) {
	for _, b := range []string{name, s.name(name)} {
		if net.BlobIsDefined(b) {
			return b, true
		}
	}
	return "", false
}

// deviceConstant creates, in the init net, the float [1] constant
// "<prefix>_<device type>_<device id><suffix>" (suffix is the node name
// for SGD's ONE) and returns its name.
func (s *optSite) deviceConstant(prefix, suffix string, value float32) string {
	name := s.name(fmt.Sprintf("%s_%d_%d%s", prefix, s.dev.GetDeviceType(), s.dev.GetDeviceId(), suffix))
	s.op(s.m.InitNet, "ConstantFill", nil, []string{name}, netdef.ArgInts("shape", 1), netdef.ArgFloat("value", value))
	return name
}

// zerosLike creates, in the init net, a zero-filled blob shaped like param.
func (s *optSite) zerosLike(param, name string) string {
	s.op(s.m.InitNet, "ConstantFill", []string{param}, []string{name}, netdef.ArgFloat("value", 0))
	return name
}

// lrSchedule is the learning-rate part of an optimizer's options.
type lrSchedule struct {
	policy  string
	args    []*netdef.Argument
	iterVal int64
}

// buildLR is Caffe2's build_lr: it creates the iteration counter once per
// init net (a CPU ConstantFill and CreateMutex in the init net, AtomicIter
// in the train net), the LearningRate op with base_lr = −baseLR once per
// optimizer and device, and the products with the optimizer's learning-rate
// multiplier and with local (the LARS scale; "" for none). It returns the
// learning-rate blob and the iteration counter.
func (o *Optimizer) buildLR(s *optSite, baseLR float32, sched lrSchedule, local string) (lr, iter string) {
	m := s.m
	iter, ok := s.defined(m.InitNet, OptimizerIterationBlob)
	if !ok {
		iter = s.name(OptimizerIterationBlob)
		mutex := s.name(IterationMutexBlob)
		cpu := s.exact(devicescope.CPU())
		cpu.Op(m.InitNet, "ConstantFill", nil, []string{iter}, netdef.ArgInts("shape", 1),
			netdef.ArgInt("value", sched.iterVal), netdef.ArgInt("dtype", int64(blob.Int64)))
		cpu.Op(m.InitNet, "CreateMutex", nil, []string{mutex})
		cpu.Op(m.Net, "AtomicIter", []string{mutex, iter}, []string{iter})
	}
	lrName := o.uniqueName("lr", s.dev)
	if lr, ok = s.defined(m.Net, lrName); !ok {
		lr = s.name(lrName)
		policy := sched.policy
		if policy == "" {
			policy = "fixed"
		}
		args := append([]*netdef.Argument{netdef.ArgFloat("base_lr", -baseLR), netdef.ArgString("policy", policy)}, sched.args...)
		s.op(m.Net, "LearningRate", []string{iter}, []string{lr}, args...)
	}
	if o.lrMultiplier != "" {
		mult := o.lrMultiplier
		scaled := s.name(o.uniqueName("scaled_lr", s.dev))
		if !m.Net.BlobIsDefined(scaled) {
			if isGPU(s.dev) {
				copied := s.name(o.uniqueName("lr_multiplier", s.dev))
				s.op(m.Net, "CopyFromCPUInput", []string{mult}, []string{copied})
				mult = copied
			}
			s.op(m.Net, "Mul", []string{lr, mult}, []string{scaled}, netdef.ArgInt("broadcast", 1))
		}
		lr = scaled
	}
	if local != "" {
		scaled := s.name(o.uniqueName("local_scaled_lr", s.dev))
		s.op(m.Net, "Mul", []string{lr, local}, []string{scaled}, netdef.ArgInt("broadcast", 1))
		lr = scaled
	}
	return lr, iter
}

// lars adds the LARS scale of param (Caffe2's Lars op with the given
// offset) and returns its blob.
func (o *Optimizer) lars(s *optSite, param, grad string, offset float32) string {
	out := s.name(o.uniqueName(param+"_lars", s.dev))
	s.op(s.m.Net, "Lars", []string{param, grad}, []string{out}, netdef.ArgFloat("offset", offset))
	return out
}

// BuildOptions are the model-wide settings of Build (Caffe2's _build
// arguments). The zero value is Caffe2's default: no clipping, no
// injection, no per-parameter optimizers.
type BuildOptions struct {
	// MaxGradientNorm, when > 0, scales every learning rate by
	// clip/max(clip, ‖g‖₂), where ‖g‖₂ is the global norm of all the
	// gradients being optimized (Caffe2's max_gradient_norm). The ops are
	// built in the name scope ClipScope; the ratio is
	// "norm_clipped_grad_update/norm_ratio".
	MaxGradientNorm float32
	// AllowLRInjection adds the blob LRInjectionBlob (1 at start) as a
	// multiplier of every learning rate, to be changed while training with
	// SetLRInjection. With clipping the multiplier is the product
	// "lr_multiplier" of the two.
	AllowLRInjection bool
	// ParamOptimizers names parameters that another optimizer updates
	// instead of the one being built (Caffe2's per-parameter optimizers,
	// which it attaches with UseOptimizer). These optimizers keep their own
	// learning-rate multipliers.
	ParamOptimizers map[string]*Optimizer
}

// optParam is a parameter to update, its gradient and its device.
type optParam struct {
	name string
	grad operators.Gradient
	dev  *netdef.DeviceOption
}

// Build adds the update of every trainable parameter of m that has a
// gradient (in creation order) with opt, or with the parameter's entry in
// ParamOptimizers: Caffe2's optimizer._build. Each update is built on the
// device of the operator that creates the parameter. The model must have
// its gradient operators (Model.AddGradientOperators) and no error (Build
// returns its Err, as BuildSGD, the other Build functions and
// AddWeightDecay do).
func Build(m *Model, opt *Optimizer, o BuildOptions) error {
	return build(m, opt, o, false, true)
}

// build is Caffe2's _build; weightsOnly keeps the parameters tagged Weight,
// and useParamOptims honours o.ParamOptimizers.
func build(m *Model, opt *Optimizer, o BuildOptions, weightsOnly, useParamOptims bool) error {
	switch {
	case m == nil:
		return errors.New("brew: building an optimizer: nil model")
	case m.Err() != nil:
		return m.Err()
	case opt == nil:
		return fmt.Errorf("brew: model %q: nil optimizer", m.Name)
	}
	params, err := optimizationParams(m, weightsOnly)
	if err != nil {
		return fmt.Errorf("brew: %s: %w", opt.class, err)
	}
	cur := devicescope.Current()
	mult := ""
	if o.MaxGradientNorm < 0 {
		return fmt.Errorf("brew: %s: model %q: MaxGradientNorm must be >= 0, got %g", opt.class, m.Name, o.MaxGradientNorm)
	}
	if o.MaxGradientNorm > 0 {
		if mult, err = clipByGlobalNorm(m, cur, params, o.MaxGradientNorm); err != nil {
			return fmt.Errorf("brew: %s: %w", opt.class, err)
		}
	}
	if o.AllowLRInjection {
		exact := cur.WithNameReset("") // the names below are resolved already
		inj := cur.Scoped(LRInjectionBlob)
		if !m.InitNet.BlobIsDefined(inj) {
			exact.Op(m.InitNet, "ConstantFill", nil, []string{inj}, netdef.ArgInts("shape", 1), netdef.ArgFloat("value", 1))
		}
		if mult == "" {
			mult = inj
		} else {
			prod := cur.Scoped("lr_multiplier")
			exact.Op(m.Net, "Mul", []string{mult, inj}, []string{prod}, netdef.ArgInt("broadcast", 1))
			mult = prod
		}
	}
	opt.lrMultiplier = mult
	for _, p := range params {
		use := opt
		if useParamOptims && o.ParamOptimizers[p.name] != nil {
			use = o.ParamOptimizers[p.name]
		}
		if err := use.apply(&optSite{m: m, scope: cur.WithDevice(p.dev), dev: p.dev}, p.name, p.grad); err != nil {
			return err
		}
	}
	return nil
}

// optimizationParams returns the trainable parameters of m that have a
// gradient, in creation order, with their devices (Caffe2's
// GetOptimizationParamInfo plus get_param_device).
func optimizationParams(m *Model, weightsOnly bool) ([]optParam, error) {
	if !m.gradAdded {
		return nil, fmt.Errorf("model %q: run AddGradientOperators before building an optimizer", m.Name)
	}
	if dup := m.Validate(); len(dup) > 0 {
		return nil, fmt.Errorf("model %q: duplicate params: %v", m.Name, dup)
	}
	weights := map[string]bool{}
	for _, w := range m.Weights() {
		weights[w] = true
	}
	devices := blobDevices(m)
	var params []optParam
	for _, p := range m.ParamsIn("") {
		g, ok := m.gradMap[p]
		if !ok || g.IsNone() || (weightsOnly && !weights[p]) {
			continue
		}
		dev, err := paramDevice(devices, p, g)
		if err != nil {
			return nil, fmt.Errorf("model %q: %w", m.Name, err)
		}
		params = append(params, optParam{name: p, grad: g, dev: dev})
	}
	return params, nil
}

// blobDevices maps every blob the model's nets produce to the device of
// its last producer, the init net's producers taking precedence (Caffe2's
// InferBlobDevices over the train net, then the init net). An op without a
// device option maps to an empty DeviceOption, Caffe2's default (CPU).
func blobDevices(m *Model) map[string]*netdef.DeviceOption {
	out := map[string]*netdef.DeviceOption{}
	for _, net := range []*netdef.Net{m.Net, m.InitNet} {
		for _, op := range net.Proto().GetOp() {
			dev := devicescope.Clone(op.GetDeviceOption())
			if dev == nil {
				dev = &netdef.DeviceOption{}
			}
			for _, b := range op.GetOutput() {
				out[b] = dev
			}
		}
	}
	return out
}

// paramDevice is Caffe2's get_param_device: the device of the parameter's
// producer, else of its gradient's.
func paramDevice(devices map[string]*netdef.DeviceOption, param string, grad operators.Gradient) (*netdef.DeviceOption, error) {
	for _, b := range []string{param, grad.Dense, grad.Values, grad.Indices} {
		if b == "" {
			continue
		}
		if dev, ok := devices[b]; ok {
			return devicescope.Clone(dev), nil
		}
	}
	return nil, fmt.Errorf("cannot infer device for %s: no op creates it", param)
}

// ParamDevice returns the device on which Build updates param: that of the
// operator that creates the parameter (in the init net, else in the train
// net), else that of the operator that creates its gradient. An operator
// without a device option yields an empty DeviceOption (the CPU).
func ParamDevice(m *Model, param string) (*netdef.DeviceOption, error) {
	if m == nil {
		return nil, errors.New("brew: ParamDevice: nil model")
	}
	dev, err := paramDevice(blobDevices(m), param, m.gradMap[param])
	if err != nil {
		return nil, fmt.Errorf("brew: model %q: %w", m.Name, err)
	}
	return dev, nil
}

// clipByGlobalNorm adds the global-norm clipping ops in the name scope
// ClipScope (Caffe2's _calc_norm_ratio) and returns the ratio blob,
// clip/max(clip, ‖g‖₂).
func clipByGlobalNorm(m *Model, cur devicescope.Scope, params []optParam, clip float32) (string, error) {
	if len(params) == 0 {
		return "", fmt.Errorf("model %q: MaxGradientNorm is set but no parameter has a gradient", m.Name)
	}
	sc := cur.WithName(ClipScope)
	exact := sc.WithNameReset("") // the names below are resolved already
	sums := make([]string, len(params))
	for i, p := range params {
		onDev := exact.WithDevice(p.dev)
		g := p.grad.Dense
		if g == "" {
			g = p.grad.Values
		}
		sq := sc.Scoped(fmt.Sprintf("grad_%d_squared_sum", i))
		onDev.Op(m.Net, "SumSqrElements", []string{g}, []string{sq})
		sums[i] = nextNetName(m.Net, sc, "EnsureCPUOutput")
		onDev.Op(m.Net, "EnsureCPUOutput", []string{sq}, []string{sums[i]})
	}
	cpu := exact.WithDevice(devicescope.CPU())
	full, norm, clipNorm := sc.Scoped("grad_squared_full_sum"), sc.Scoped("global_norm"), sc.Scoped("clip_norm")
	maxNorm, ratio := sc.Scoped("max_norm"), sc.Scoped("norm_ratio")
	cpu.Op(m.Net, "Sum", sums, []string{full})
	cpu.Op(m.Net, "Pow", []string{full}, []string{norm}, netdef.ArgFloat("exponent", 0.5))
	cpu.Op(m.InitNet, "ConstantFill", nil, []string{clipNorm}, netdef.ArgInts("shape"), netdef.ArgFloat("value", clip))
	cpu.Op(m.Net, "Max", []string{norm, clipNorm}, []string{maxNorm})
	cpu.Op(m.Net, "Div", []string{clipNorm, maxNorm}, []string{ratio})
	return ratio, nil
}

// nextNetName is Caffe2's Net.NextName(prefix) for an op created in scope
// sc: "<net>/<prefix>" in the name scope, or with "_2", "_3", … appended to
// the prefix while that blob is defined.
func nextNetName(net *netdef.Net, sc devicescope.Scope, prefix string) string {
	base := net.Name() + "/" + prefix
	name := sc.Scoped(base)
	for i := 2; net.BlobIsDefined(name); i++ {
		name = sc.Scoped(base + "_" + strconv.Itoa(i))
	}
	return name
}

// LRInjection returns the current learning-rate injection, the value of
// LRInjectionBlob in ws (nil = the current workspace): Caffe2's
// get_lr_injection. The model must have been built with AllowLRInjection
// and its init net run.
func LRInjection(ws *workspace.Workspace) (float32, error) {
	if ws == nil {
		ws = workspace.Current()
	}
	t, err := ws.FetchBlob(LRInjectionBlob)
	if err != nil {
		return 0, fmt.Errorf("brew: learning-rate injection: %w", err)
	}
	if t.DataType() != blob.Float32 || t.Size() != 1 {
		return 0, fmt.Errorf("brew: learning-rate injection blob %q holds %v %v, want one FLOAT", LRInjectionBlob, t.DataType(), t.Dims())
	}
	return blob.Data[float32](t)[0], nil
}

// SetLRInjection sets the multiplier of every learning rate of the models
// built with AllowLRInjection in ws (nil = the current workspace): Caffe2's
// set_lr_injection. It takes effect on the next run of the train net.
func SetLRInjection(ws *workspace.Workspace, v float32) error {
	if ws == nil {
		ws = workspace.Current()
	}
	t, err := blob.FromSlice([]float32{v}, 1)
	if err != nil {
		return fmt.Errorf("brew: learning-rate injection: %w", err)
	}
	if err := ws.FeedBlob(LRInjectionBlob, t); err != nil {
		return fmt.Errorf("brew: learning-rate injection: %w", err)
	}
	return nil
}
