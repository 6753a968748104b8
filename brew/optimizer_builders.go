package brew

import (
	"errors"
	"fmt"

	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

// SGDOptions configure stochastic gradient descent (Caffe2's build_sgd and
// SgdOptimizer). Zero values take Caffe2's defaults.
type SGDOptions struct {
	// BaseLR is the base learning rate. 0 adds no update at all (as
	// build_sgd(model, 0) does); a negative rate is an error.
	BaseLR float32
	// Policy is the LearningRate policy; "" means "fixed".
	Policy string
	// LRArgs are the policy's further LearningRate arguments, for example
	// netdef.ArgInt("stepsize", 100) and netdef.ArgFloat("gamma", 0.9) for
	// "step" (Caffe2's **kwargs).
	LRArgs []*netdef.Argument
	// IterVal is the first value of the iteration counter, when this
	// optimizer is the one that creates it (Caffe2's iter_val; default 0).
	IterVal int64
	// Momentum, when > 0, updates with MomentumSGDUpdate and a per-parameter
	// "<param>_momentum" blob; 0 (the default) updates with WeightedSum.
	Momentum float32
	// NoNesterov turns Nesterov momentum off. Caffe2's default, nesterov=1,
	// is on.
	NoNesterov bool
	// Lars scales each dense parameter's learning rate by its LARS factor
	// 1/(‖∇w‖/‖w‖ + LarsOffset) (Caffe2's lars=offset; off by default).
	Lars bool
	// LarsOffset is the LARS offset, >= 0.
	LarsOffset float32
	// BuildOptions are used by BuildSGD; NewSGD ignores them.
	BuildOptions
}

// NewSGD returns a new SGD optimizer, Caffe2's SgdOptimizer. Its instance
// number is the next one of class "SgdOptimizer".
func NewSGD(o SGDOptions) (*Optimizer, error) {
	switch {
	case o.BaseLR < 0:
		return nil, fmt.Errorf("brew: SgdOptimizer: base learning rate must be >= 0, got %g", o.BaseLR)
	case o.Momentum < 0:
		return nil, fmt.Errorf("brew: SgdOptimizer: momentum must be >= 0, got %g", o.Momentum)
	case o.Lars && o.LarsOffset < 0:
		return nil, fmt.Errorf("brew: SgdOptimizer: LARS offset must be >= 0, got %g", o.LarsOffset)
	}
	return newOptimizer("SgdOptimizer", &sgdRule{o: o, sched: lrSchedule{o.Policy, o.LRArgs, o.IterVal}}), nil
}

// BuildSGD adds SGD updates of every parameter of m that has a gradient
// (Caffe2's optimizer.build_sgd) and returns the optimizer.
//
// Per parameter, in the init net: ONE_<device type>_<device id><node name>
// (1.0), plus "<param>_momentum" (zeros) with momentum; in the train net:
// AtomicIter on "optimizer_iteration" (once), LearningRate into
// "SgdOptimizer_<n>_lr_cpu" (once per device) with base_lr −BaseLR, or
// +BaseLR with momentum, then WeightedSum([param, ONE, grad, lr]) or
// MomentumSGDUpdate([grad, momentum, lr, param]). A gradient slice updates
// with ScatterWeightedSum or SparseMomentumSGDUpdate.
func BuildSGD(m *Model, o SGDOptions) (*Optimizer, error) {
	opt, err := NewSGD(o)
	if err != nil {
		return nil, err
	}
	return opt, Build(m, opt, o.BuildOptions)
}

type sgdRule struct {
	o     SGDOptions
	sched lrSchedule
}

func (r *sgdRule) update(o *Optimizer, s *optSite, param string, grad operators.Gradient) error {
	if r.o.BaseLR == 0 {
		return nil
	}
	local := ""
	if r.o.Lars && !grad.IsSparse() {
		local = o.lars(s, param, grad.Dense, r.o.LarsOffset)
	}
	// WeightedSum adds lr·grad, so the rate is negative; MomentumSGDUpdate
	// subtracts, so it is positive.
	sign := float32(1)
	if r.o.Momentum > 0 {
		sign = -1
	}
	lr, _ := o.buildLR(s, sign*r.o.BaseLR, r.sched, local)
	one := s.deviceConstant("ONE", s.dev.GetNodeName(), 1)
	o.aux.Shared = append(o.aux.Shared, one)
	var mom string
	var args []*netdef.Argument
	if r.o.Momentum > 0 {
		mom = s.zerosLike(param, s.name(param+"_momentum"))
		o.aux.Local = append(o.aux.Local, mom)
		args = []*netdef.Argument{netdef.ArgFloat("momentum", r.o.Momentum), netdef.ArgBool("nesterov", !r.o.NoNesterov)}
	}
	net := s.m.Net
	switch {
	case grad.IsSparse() && mom != "":
		s.op(net, "SparseMomentumSGDUpdate", []string{grad.Values, mom, lr, param, grad.Indices}, []string{grad.Values, mom, param}, args...)
	case grad.IsSparse():
		s.op(net, "ScatterWeightedSum", []string{param, one, grad.Indices, grad.Values, lr}, []string{param})
	case mom != "":
		s.op(net, "MomentumSGDUpdate", []string{grad.Dense, mom, lr, param}, []string{grad.Dense, mom, param}, args...)
	default:
		s.op(net, "WeightedSum", []string{param, one, grad.Dense, lr}, []string{param})
	}
	return nil
}

// AdamOptions configure Adam (Caffe2's build_adam and AdamOptimizer). Zero
// values take Caffe2's defaults.
type AdamOptions struct {
	// BaseLR is the base learning rate (Caffe2's alpha); <= 0 adds no
	// update.
	BaseLR float32
	// Policy is the LearningRate policy; "" means "fixed".
	Policy string
	// LRArgs are the policy's further LearningRate arguments.
	LRArgs []*netdef.Argument
	// IterVal is the first value of the iteration counter, when this
	// optimizer is the one that creates it.
	IterVal int64
	// Beta1 is the decay of the first moment; 0 means 0.9.
	Beta1 float32
	// Beta2 is the decay of the second moment; 0 means 0.999.
	Beta2 float32
	// Epsilon is added to the root of the second moment; 0 means 1e-8.
	Epsilon float32
	// Engine is the engine of the update operators ("" = the default).
	Engine string
	// BuildOptions are used by BuildAdam; NewAdam ignores them.
	BuildOptions
}

// NewAdam returns a new Adam optimizer, Caffe2's AdamOptimizer.
func NewAdam(o AdamOptions) (*Optimizer, error) {
	o.Beta1 = orDefault(o.Beta1, 0.9)
	o.Beta2 = orDefault(o.Beta2, 0.999)
	o.Epsilon = orDefault(o.Epsilon, 1e-8)
	if !(o.Beta1 > 0 && o.Beta1 < 1) || !(o.Beta2 > 0 && o.Beta2 < 1) || o.Epsilon < 0 {
		return nil, fmt.Errorf("brew: AdamOptimizer: want 0 < beta1, beta2 < 1 and epsilon >= 0, got %g, %g and %g", o.Beta1, o.Beta2, o.Epsilon)
	}
	return newOptimizer("AdamOptimizer", &adamRule{o: o, sched: lrSchedule{o.Policy, o.LRArgs, o.IterVal}}), nil
}

// BuildAdam adds Adam updates of every parameter of m that has a gradient
// (Caffe2's optimizer.build_adam) and returns the optimizer: per parameter
// "<param>_first_moment" and "<param>_second_moment" (zeros) and
// Adam([param, m1, m2, grad, lr, optimizer_iteration]), or SparseAdam for a
// gradient slice.
func BuildAdam(m *Model, o AdamOptions) (*Optimizer, error) {
	opt, err := NewAdam(o)
	if err != nil {
		return nil, err
	}
	return opt, Build(m, opt, o.BuildOptions)
}

type adamRule struct {
	o     AdamOptions
	sched lrSchedule
}

func (r *adamRule) update(o *Optimizer, s *optSite, param string, grad operators.Gradient) error {
	if r.o.BaseLR <= 0 {
		return nil
	}
	lr, iter := o.buildLR(s, r.o.BaseLR, r.sched, "")
	// Caffe2 names the moments param + suffix, outside the name scope.
	m1 := s.zerosLike(param, param+"_first_moment")
	m2 := s.zerosLike(param, param+"_second_moment")
	o.aux.Shared = append(o.aux.Shared, iter)
	o.aux.Local = append(o.aux.Local, m1, m2)
	args := []*netdef.Argument{netdef.ArgFloat("beta1", r.o.Beta1), netdef.ArgFloat("beta2", r.o.Beta2), netdef.ArgFloat("epsilon", r.o.Epsilon)}
	var op *netdef.OperatorDef
	if grad.IsSparse() {
		op = s.op(s.m.Net, "SparseAdam", []string{param, m1, m2, grad.Indices, grad.Values, lr, iter}, []string{param, m1, m2}, args...)
	} else {
		op = s.op(s.m.Net, "Adam", []string{param, m1, m2, grad.Dense, lr, iter}, []string{param, m1, m2}, args...)
	}
	setEngine(op, r.o.Engine)
	return nil
}

// AdagradOptions configure Adagrad (Caffe2's build_adagrad and
// AdagradOptimizer). Zero values take Caffe2's defaults.
type AdagradOptions struct {
	// BaseLR is the base learning rate (Caffe2's alpha); <= 0 adds no
	// update.
	BaseLR float32
	// Policy is the LearningRate policy; "" means "fixed".
	Policy string
	// LRArgs are the policy's further LearningRate arguments.
	LRArgs []*netdef.Argument
	// IterVal is the first value of the iteration counter, when this
	// optimizer is the one that creates it.
	IterVal int64
	// Epsilon is added to the root of the squared-gradient sum; 0 means
	// 1e-4.
	Epsilon float32
	// Decay multiplies the squared-gradient sum before each update; 0
	// means 1 (no decay). Gradient slices need 1.
	Decay float32
	// Lars scales each dense parameter's learning rate by its LARS factor
	// with offset LarsOffset (off by default).
	Lars bool
	// LarsOffset is the LARS offset, >= 0.
	LarsOffset float32
	// Engine is the engine of the update operators ("" = the default).
	Engine string
	// RowWise keeps one squared-gradient average per row,
	// "<param>_avg_squared_sum", and updates with RowWiseSparseAdagrad
	// (Caffe2's rowWise=True). It needs gradient slices and parameters
	// created with a shape (CreateParam).
	RowWise bool
	// BuildOptions are used by BuildAdagrad; NewAdagrad ignores them.
	BuildOptions
}

// NewAdagrad returns a new Adagrad optimizer, Caffe2's AdagradOptimizer.
func NewAdagrad(o AdagradOptions) (*Optimizer, error) {
	o.Epsilon = orDefault(o.Epsilon, 1e-4)
	o.Decay = orDefault(o.Decay, 1)
	switch {
	case o.Epsilon < 0 || o.Decay < 0:
		return nil, fmt.Errorf("brew: AdagradOptimizer: epsilon and decay must be >= 0, got %g and %g", o.Epsilon, o.Decay)
	case o.Lars && o.LarsOffset < 0:
		return nil, fmt.Errorf("brew: AdagradOptimizer: LARS offset must be >= 0, got %g", o.LarsOffset)
	}
	return newOptimizer("AdagradOptimizer", &adagradRule{o: o, sched: lrSchedule{o.Policy, o.LRArgs, o.IterVal}}), nil
}

// BuildAdagrad adds Adagrad updates of every parameter of m that has a
// gradient (Caffe2's optimizer.build_adagrad) and returns the optimizer:
// per parameter "<param>_squared_sum" (zeros) and
// Adagrad([param, squared_sum, grad, lr]), or SparseAdagrad for a gradient
// slice.
func BuildAdagrad(m *Model, o AdagradOptions) (*Optimizer, error) {
	opt, err := NewAdagrad(o)
	if err != nil {
		return nil, err
	}
	return opt, Build(m, opt, o.BuildOptions)
}

type adagradRule struct {
	o     AdagradOptions
	sched lrSchedule
}

func (r *adagradRule) update(o *Optimizer, s *optSite, param string, grad operators.Gradient) error {
	if r.o.BaseLR <= 0 {
		return nil
	}
	if grad.IsSparse() && r.o.Decay != 1 {
		return fmt.Errorf("Adagrad of a gradient slice needs decay 1, got %g", r.o.Decay)
	}
	local := ""
	if r.o.Lars && !grad.IsSparse() {
		local = o.lars(s, param, grad.Dense, r.o.LarsOffset)
	}
	if r.o.RowWise {
		return r.rowWise(o, s, param, grad)
	}
	lr, _ := o.buildLR(s, r.o.BaseLR, r.sched, local)
	ss := s.zerosLike(param, s.name(param+"_squared_sum"))
	o.aux.Local = append(o.aux.Local, ss)
	var op *netdef.OperatorDef
	if grad.IsSparse() {
		op = s.op(s.m.Net, "SparseAdagrad", []string{param, ss, grad.Indices, grad.Values, lr}, []string{param, ss},
			netdef.ArgFloat("epsilon", r.o.Epsilon))
	} else {
		op = s.op(s.m.Net, "Adagrad", []string{param, ss, grad.Dense, lr}, []string{param, ss},
			netdef.ArgFloat("epsilon", r.o.Epsilon), netdef.ArgFloat("decay", r.o.Decay))
	}
	setEngine(op, r.o.Engine)
	return nil
}

// rowWise adds Caffe2's row-wise Adagrad of a gradient slice: a moment of
// one element per row of param, and RowWiseSparseAdagrad.
func (r *adagradRule) rowWise(o *Optimizer, s *optSite, param string, grad operators.Gradient) error {
	if !grad.IsSparse() {
		return fmt.Errorf("row-wise Adagrad needs a gradient slice; %q has a dense gradient", param)
	}
	info := s.m.ParamInfo(param)
	if info == nil || len(info.Shape) == 0 {
		return fmt.Errorf("row-wise Adagrad needs the shape of %q (create it with CreateParam)", param)
	}
	lr, _ := o.buildLR(s, r.o.BaseLR, r.sched, "")
	ss := s.name(param + "_avg_squared_sum")
	s.op(s.m.InitNet, "ConstantFill", nil, []string{ss}, netdef.ArgInts("shape", info.Shape[0]), netdef.ArgFloat("value", 0))
	o.aux.Local = append(o.aux.Local, ss)
	op := s.op(s.m.Net, "RowWiseSparseAdagrad", []string{param, ss, grad.Indices, grad.Values, lr}, []string{param, ss},
		netdef.ArgFloat("epsilon", r.o.Epsilon))
	setEngine(op, r.o.Engine)
	return nil
}

// RMSPropOptions configure RMSProp (Caffe2's build_rms_prop and
// RmsPropOptimizer). Zero values take Caffe2's defaults.
type RMSPropOptions struct {
	// BaseLR is the base learning rate (Caffe2's alpha); it must be > 0.
	BaseLR float32
	// Policy is the LearningRate policy; "" means "fixed".
	Policy string
	// LRArgs are the policy's further LearningRate arguments.
	LRArgs []*netdef.Argument
	// IterVal is the first value of the iteration counter, when this
	// optimizer is the one that creates it.
	IterVal int64
	// Decay is the decay of the mean-square estimate; 0 means 0.9.
	Decay float32
	// Momentum is the momentum coefficient (default 0).
	Momentum float32
	// Epsilon is added to the mean square under the root; 0 means 1e-5.
	Epsilon float32
	// Engine is the engine of the RmsProp operators ("" = the default).
	Engine string
	// BuildOptions are used by BuildRMSProp; NewRMSProp ignores them.
	BuildOptions
}

// NewRMSProp returns a new RMSProp optimizer, Caffe2's RmsPropOptimizer.
func NewRMSProp(o RMSPropOptions) (*Optimizer, error) {
	o.Decay = orDefault(o.Decay, 0.9)
	o.Epsilon = orDefault(o.Epsilon, 1e-5)
	switch {
	case !(o.BaseLR > 0):
		return nil, fmt.Errorf("brew: RmsPropOptimizer: base learning rate must be > 0, got %g", o.BaseLR)
	case o.Momentum < 0 || o.Epsilon < 0 || !(o.Decay > 0 && o.Decay <= 1):
		return nil, fmt.Errorf("brew: RmsPropOptimizer: want 0 < decay <= 1, momentum >= 0 and epsilon >= 0, got %g, %g and %g", o.Decay, o.Momentum, o.Epsilon)
	}
	return newOptimizer("RmsPropOptimizer", &rmsPropRule{o: o, sched: lrSchedule{o.Policy, o.LRArgs, o.IterVal}}), nil
}

// BuildRMSProp adds RMSProp updates of every parameter of m that has a
// gradient (Caffe2's optimizer.build_rms_prop) and returns the optimizer:
// per parameter ONE_<device type>_<device id>, "<param>_grad_o",
// "<param>_mean_squares" and "<param>_momentum" (zeros) in the init net,
// then RmsProp([grad, mean_squares, momentum, ONE]) into grad_o and
// MomentumSGDUpdate([grad_o, momentum, lr, param]) with base_lr +BaseLR.
// Gradient slices are an error.
func BuildRMSProp(m *Model, o RMSPropOptions) (*Optimizer, error) {
	opt, err := NewRMSProp(o)
	if err != nil {
		return nil, err
	}
	return opt, Build(m, opt, o.BuildOptions)
}

type rmsPropRule struct {
	o     RMSPropOptions
	sched lrSchedule
}

func (r *rmsPropRule) update(o *Optimizer, s *optSite, param string, grad operators.Gradient) error {
	if grad.IsSparse() {
		return errors.New("RmsPropOptimizer does not support gradient slices")
	}
	one := s.deviceConstant("ONE", "", 1)
	lr, _ := o.buildLR(s, -r.o.BaseLR, r.sched, "")
	gradO := s.zerosLike(param, s.name(param+"_grad_o"))
	ms := s.zerosLike(param, s.name(param+"_mean_squares"))
	mom := s.zerosLike(param, s.name(param+"_momentum"))
	o.aux.Local = append(o.aux.Local, ms, mom)
	op := s.op(s.m.Net, "RmsProp", []string{grad.Dense, ms, mom, one}, []string{gradO, ms, mom},
		netdef.ArgFloat("decay", r.o.Decay), netdef.ArgFloat("momentum", r.o.Momentum), netdef.ArgFloat("epsilon", r.o.Epsilon))
	setEngine(op, r.o.Engine)
	s.op(s.m.Net, "MomentumSGDUpdate", []string{gradO, mom, lr, param}, []string{gradO, mom, param})
	return nil
}

// AddWeightDecay adds L2 regularization to the weights of m (the
// parameters tagged Weight that have a gradient): grad += weightDecay·param,
// as WeightedSum([grad, ONE_<type>_<id>, param, wd_<type>_<id>]) on the
// weight's device, with the constants ONE_… (1) and wd_… (weightDecay) in
// the init net (Caffe2's optimizer.add_weight_decay). It rewrites the
// gradients in place, so call it after Model.AddGradientOperators and
// before building the optimizer. Gradient slices are an error. It makes
// no optimizer instance.
func AddWeightDecay(m *Model, weightDecay float32) error {
	opt := &Optimizer{class: "WeightDecayBuilder", rule: weightDecayRule(weightDecay)}
	return build(m, opt, BuildOptions{}, true, false)
}

type weightDecayRule float32

func (r weightDecayRule) update(_ *Optimizer, s *optSite, param string, grad operators.Gradient) error {
	if grad.IsSparse() {
		return errors.New("weight decay does not yet support sparse gradients")
	}
	one := s.deviceConstant("ONE", "", 1)
	wd := s.deviceConstant("wd", "", float32(r))
	s.op(s.m.Net, "WeightedSum", []string{grad.Dense, one, param, wd}, []string{grad.Dense})
	return nil
}

// orDefault returns v, or def when v is 0.
func orDefault(v, def float32) float32 {
	if v == 0 {
		return def
	}
	return v
}

// setEngine sets op's engine when one is given (Caffe2's default is the
// empty engine, which selects the default implementation).
func setEngine(op *netdef.OperatorDef, engine string) {
	if engine != "" {
		op.Engine = &engine
	}
}
