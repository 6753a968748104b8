package brew

import (
	"fmt"
	"slices"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/netdef"
)

// Helper names a helper function for arg scopes and the helper registry:
// Caffe2's helper names ("fc", "conv", …). The helpers of this package are
// registered under the constants below; Register adds more.
type Helper string

// The registered names of this package's helpers.
const (
	HelperFC                Helper = "fc"
	HelperConv              Helper = "conv"
	HelperConvTranspose     Helper = "conv_transpose"
	HelperRelu              Helper = "relu"
	HelperLeakyRelu         Helper = "leaky_relu"
	HelperPRelu             Helper = "prelu"
	HelperTanh              Helper = "tanh"
	HelperSigmoid           Helper = "sigmoid"
	HelperSoftmax           Helper = "softmax"
	HelperSoftmaxWithLoss   Helper = "softmax_with_loss"
	HelperLabelCrossEntropy Helper = "label_cross_entropy"
	HelperAveragedLoss      Helper = "averaged_loss"
	HelperMaxPool           Helper = "max_pool"
	HelperAveragePool       Helper = "average_pool"
	HelperSpatialBN         Helper = "spatial_bn"
	HelperDropout           Helper = "dropout"
	HelperLRN               Helper = "lrn"
	HelperConcat            Helper = "concat"
	HelperDepthConcat       Helper = "depth_concat"
	HelperSum               Helper = "sum"
	HelperTranspose         Helper = "transpose"
	HelperIter              Helper = "iter"
	HelperAccuracy          Helper = "accuracy"
	HelperDBInput           Helper = "db_input"
)

var registry = struct {
	sync.RWMutex
	names map[Helper]bool
}{names: map[Helper]bool{
	HelperFC: true, HelperConv: true, HelperConvTranspose: true, HelperRelu: true,
	HelperLeakyRelu: true, HelperPRelu: true, HelperTanh: true, HelperSigmoid: true,
	HelperSoftmax: true, HelperSoftmaxWithLoss: true, HelperMaxPool: true,
	HelperAveragePool: true, HelperSpatialBN: true, HelperDropout: true, HelperLRN: true,
	HelperConcat: true, HelperDepthConcat: true, HelperSum: true, HelperTranspose: true,
	HelperIter: true, HelperAccuracy: true, HelperDBInput: true,
	HelperLabelCrossEntropy: true, HelperAveragedLoss: true,
}}

// Register adds a helper name, so that arg scopes may name it and
// ResolveKwargs accepts it (Caffe2's brew.Register). Registering a name
// twice, or the empty name, is an error.
func Register(name Helper) error {
	if name == "" {
		return fmt.Errorf("brew: Register: empty helper name")
	}
	registry.Lock()
	defer registry.Unlock()
	if registry.names[name] {
		return fmt.Errorf("brew: Register: helper %q is already registered", name)
	}
	registry.names[name] = true
	return nil
}

// MustRegister is Register for init functions: it panics on an error.
func MustRegister(name Helper) {
	if err := Register(name); err != nil {
		panic(err)
	}
}

// HasHelper reports whether a helper of that name is registered (Caffe2's
// brew.has_helper).
func HasHelper(name Helper) bool {
	registry.RLock()
	defer registry.RUnlock()
	return registry.names[name]
}

// Option is one keyword argument of a helper call, in Caffe2's sense: an
// operator argument (Arg and the typed shortcuts such as Stride or IsTest)
// or a parameter initializer (WeightInit, BiasInit, …). Options given to a
// helper, to WithArgScope or to ModelOptions.ArgScope are resolved in
// that order of precedence: explicit options win over arg scopes, inner
// arg scopes over outer ones, and arg scopes over the model's.
//
// The zero Option is invalid; helpers given one return an error.
type Option struct {
	args    []*netdef.Argument
	initKey string
	init    Initializer
}

// Arg passes a as an argument of the operator the helper emits (unless the
// helper reads it itself, as Conv reads "group" and SpatialBN
// "init_scale"). An argument named "engine" sets the operator's engine
// instead, as in Caffe2.
func Arg(a *netdef.Argument) Option { return Option{args: []*netdef.Argument{a}} }

// Order sets the storage order, "NCHW" or "NHWC" (argument order).
func Order(order string) Option { return Arg(netdef.ArgString("order", order)) }

// Kernel sets a square kernel (argument kernel). For Conv and
// ConvTranspose it replaces the kernel given as a parameter.
func Kernel(k int) Option { return Arg(netdef.ArgInt("kernel", int64(k))) }

// KernelHW sets a kh×kw kernel (arguments kernel_h and kernel_w), Caffe2's
// kernel=[kh, kw]. For Conv and ConvTranspose it replaces the kernel given
// as a parameter.
func KernelHW(kh, kw int) Option {
	return Option{args: []*netdef.Argument{
		netdef.ArgInt("kernel_h", int64(kh)), netdef.ArgInt("kernel_w", int64(kw)),
	}}
}

// Stride sets the stride of every spatial dimension (argument stride).
func Stride(s int) Option { return Arg(netdef.ArgInt("stride", int64(s))) }

// Pad sets the padding of every side (argument pad).
func Pad(p int) Option { return Arg(netdef.ArgInt("pad", int64(p))) }

// Axis sets argument axis (FC, Softmax, Concat, …).
func Axis(a int) Option { return Arg(netdef.ArgInt("axis", int64(a))) }

// IsTest sets argument is_test (SpatialBN, Dropout, …). Dropout requires it.
func IsTest(v bool) Option { return Arg(netdef.ArgBool("is_test", v)) }

// Group sets the number of convolution groups (Conv's group, default 1).
func Group(g int) Option { return Arg(netdef.ArgInt("group", int64(g))) }

// NoBias makes Conv and ConvTranspose create no bias parameter (Caffe2's
// no_bias=True).
func NoBias() Option { return Arg(netdef.ArgBool("no_bias", true)) }

// Engine sets the operator's engine, as Caffe2's engine keyword does.
func Engine(e string) Option { return Arg(netdef.ArgString("engine", e)) }

// Initializer keys read by the helpers.
const (
	keyWeightInit      = "weight_init"
	keyBiasInit        = "bias_init"
	keyScaleInit       = "scale_init"
	keyRunningMeanInit = "running_mean_init"
	keyRunningVarInit  = "running_var_init"
	keySlopeInit       = "slope_init"
)

// WeightInit sets the initializer of the weight parameter (FC, Conv,
// ConvTranspose: Caffe2's weight_init / WeightInitializer).
func WeightInit(i Initializer) Option { return Option{initKey: keyWeightInit, init: i} }

// BiasInit sets the initializer of the bias parameter (FC, Conv,
// ConvTranspose, SpatialBN: Caffe2's bias_init / BiasInitializer).
func BiasInit(i Initializer) Option { return Option{initKey: keyBiasInit, init: i} }

// ScaleInit sets the initializer of SpatialBN's scale (Caffe2's
// ScaleInitializer).
func ScaleInit(i Initializer) Option { return Option{initKey: keyScaleInit, init: i} }

// RunningMeanInit sets the initializer of SpatialBN's running mean
// (Caffe2's RunningMeanInitializer).
func RunningMeanInit(i Initializer) Option { return Option{initKey: keyRunningMeanInit, init: i} }

// RunningVarInit sets the initializer of SpatialBN's running inverse
// variance (Caffe2's RunningVarianceInitializer).
func RunningVarInit(i Initializer) Option { return Option{initKey: keyRunningVarInit, init: i} }

// SlopeInit sets the initializer of PRelu's slope (Caffe2's slope_init).
func SlopeInit(i Initializer) Option { return Option{initKey: keySlopeInit, init: i} }

func (o Option) validate() error {
	if o.initKey != "" {
		if o.init.Op == "" && !o.init.External {
			return fmt.Errorf("initializer %s has no fill operator", o.initKey)
		}
		return nil
	}
	if len(o.args) == 0 {
		return fmt.Errorf("zero Option")
	}
	for _, a := range o.args {
		if a == nil {
			return fmt.Errorf("nil argument")
		}
		if a.GetName() == "" {
			return fmt.Errorf("argument without a name")
		}
	}
	return nil
}

// Kwargs is the resolved set of keyword arguments of one helper call:
// operator arguments in the order they were first set (a later source
// replaces an earlier value in place) and initializers by key.
type Kwargs struct {
	args  []*netdef.Argument
	inits map[string]Initializer
}

func (k *Kwargs) apply(o Option) {
	if o.initKey != "" {
		if k.inits == nil {
			k.inits = map[string]Initializer{}
		}
		k.inits[o.initKey] = o.init
		return
	}
	for _, a := range o.args {
		if i := k.index(a.GetName()); i >= 0 {
			k.args[i] = a
		} else {
			k.args = append(k.args, a)
		}
	}
}

func (k *Kwargs) index(name string) int {
	return slices.IndexFunc(k.args, func(a *netdef.Argument) bool { return a.GetName() == name })
}

// Arg returns a copy of the argument called name, or nil.
func (k Kwargs) Arg(name string) *netdef.Argument {
	if i := k.index(name); i >= 0 {
		return proto.Clone(k.args[i]).(*netdef.Argument)
	}
	return nil
}

// Args returns copies of all the operator arguments, in order.
func (k Kwargs) Args() []*netdef.Argument {
	out := make([]*netdef.Argument, len(k.args))
	for i, a := range k.args {
		out[i] = proto.Clone(a).(*netdef.Argument)
	}
	return out
}

// Initializer returns the initializer set under key ("weight_init",
// "bias_init", "scale_init", "running_mean_init", "running_var_init",
// "slope_init") and whether there is one.
func (k Kwargs) Initializer(key string) (Initializer, bool) {
	i, ok := k.inits[key]
	return i, ok
}

// pop removes and returns the argument called name (nil if absent).
func (k *Kwargs) pop(name string) *netdef.Argument {
	i := k.index(name)
	if i < 0 {
		return nil
	}
	a := k.args[i]
	k.args = slices.Delete(k.args, i, i+1)
	return proto.Clone(a).(*netdef.Argument)
}

// popInt removes an integer argument, returning def when it is absent.
func (k *Kwargs) popInt(name string, def int64) (int64, error) {
	a := k.pop(name)
	if a == nil {
		return def, nil
	}
	if a.I == nil {
		return 0, fmt.Errorf("argument %s must be an integer, got %v", name, a)
	}
	return a.GetI(), nil
}

// popFloat removes a float argument (an integer is accepted too).
func (k *Kwargs) popFloat(name string, def float32) (float32, error) {
	a := k.pop(name)
	switch {
	case a == nil:
		return def, nil
	case a.F != nil:
		return a.GetF(), nil
	case a.I != nil:
		return float32(a.GetI()), nil
	}
	return 0, fmt.Errorf("argument %s must be a number, got %v", name, a)
}

// popString removes a string argument.
func (k *Kwargs) popString(name, def string) (string, error) {
	a := k.pop(name)
	if a == nil {
		return def, nil
	}
	if a.S == nil {
		return "", fmt.Errorf("argument %s must be a string, got %v", name, a)
	}
	return string(a.GetS()), nil
}

// initOr returns the initializer under key, or def.
func (k Kwargs) initOr(key string, def Initializer) Initializer {
	if i, ok := k.inits[key]; ok {
		return i
	}
	return def
}

// argScopes is the process-wide stack of arg scopes: for each helper, the
// options of the enclosing WithArgScope calls, outermost first. It is
// replaced, never modified, so a reader may keep the map it got.
var argScopes = struct {
	sync.Mutex
	cur map[Helper][]Option
}{}

// WithArgScope runs fn with opts added to the arg scope of each helper in
// helpers (Caffe2's brew.arg_scope) and restores the previous scopes when
// fn returns. Scopes nest: a helper call sees the options of every
// enclosing scope, inner ones winning, and its explicit options win over
// all of them. An unregistered helper or an invalid option is an error and
// fn does not run; otherwise WithArgScope returns fn's error.
//
// Like devicescope's current scope, arg scopes are process-wide: build
// models from one goroutine at a time.
func WithArgScope(helpers []Helper, opts []Option, fn func() error) error {
	for _, h := range helpers {
		if !HasHelper(h) {
			return fmt.Errorf("brew: WithArgScope: unknown helper %q", h)
		}
	}
	for _, o := range opts {
		if err := o.validate(); err != nil {
			return fmt.Errorf("brew: WithArgScope: %v", err)
		}
	}
	argScopes.Lock()
	prev := argScopes.cur
	next := make(map[Helper][]Option, len(prev)+len(helpers))
	for h, o := range prev {
		next[h] = o
	}
	for _, h := range helpers {
		next[h] = append(slices.Clip(next[h]), opts...)
	}
	argScopes.cur = next
	argScopes.Unlock()
	defer func() {
		argScopes.Lock()
		argScopes.cur = prev
		argScopes.Unlock()
	}()
	return fn()
}

// scopedOptions returns the options the active arg scopes give helper h.
func scopedOptions(h Helper) []Option {
	argScopes.Lock()
	defer argScopes.Unlock()
	return argScopes.cur[h]
}

// ResolveKwargs returns the keyword arguments a call of helper h on m
// sees: the model's arg scope, then the active arg scopes for h (outer to
// inner), then opts, later sources replacing earlier ones. The helpers of
// this package use it; a helper of one's own (added with Register) can use
// it to take part in arg scopes. Like the building calls it records its
// error in the model (see Model.Err): an unregistered helper or an invalid
// option gives empty Kwargs, and so does a model that has an error.
func ResolveKwargs(m *Model, h Helper, opts ...Option) Kwargs {
	return sticky(m, func() (Kwargs, error) {
		k, err := resolveKwargs(m, h, opts)
		if err != nil {
			return Kwargs{}, fmt.Errorf("brew: helper %s: %v", h, err)
		}
		return k, nil
	})
}

// resolveKwargs is ResolveKwargs with unprefixed errors.
func resolveKwargs(m *Model, h Helper, opts []Option) (Kwargs, error) {
	var k Kwargs
	if !HasHelper(h) {
		return k, fmt.Errorf("unknown helper %q", h)
	}
	for _, src := range [][]Option{m.argScope, scopedOptions(h), opts} {
		for _, o := range src {
			if err := o.validate(); err != nil {
				return Kwargs{}, err
			}
			k.apply(o)
		}
	}
	return k, nil
}
