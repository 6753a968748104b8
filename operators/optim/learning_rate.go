package optim

import (
	"fmt"
	"math"
	"strconv"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type:      "LearningRate",
		MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
		CPUInputs: []int{0}, // the iteration counter
		Args: []operators.ArgSpec{
			{Name: "base_lr", Doc: "base learning rate (required)"},
			{Name: "policy", Doc: "learning rate policy (required)"},
			{Name: "lr_scale", Default: 1.0, Doc: "multiplies base_lr (not for composite, whose sub-policies have their own)"},
			{Name: "stepsize", Default: 0, Doc: "step, cyclical: iterations per step (> 0)"},
			{Name: "gamma", Default: 0.0, Doc: "step, exp, inv, hill, multistep: decay factor (> 0)"},
			{Name: "power", Default: 0.0, Doc: "inv, poly, hill: exponent (> 0)"},
			{Name: "max_iter", Default: -1, Doc: "poly: iteration where the rate reaches 0 (> 0)"},
			{Name: "num_iter", Default: 0, Doc: "gate, linearWarmup, constantWarmup, hill: warmup length"},
			{Name: "start_multiplier", Default: 0.0, Doc: "linearWarmup, hill: first multiplier"},
			{Name: "multiplier", Default: 0.5, Doc: "constantWarmup: multiplier during warmup"},
			{Name: "multiplier_1", Default: 1.0, Doc: "gate: multiplier before num_iter"},
			{Name: "multiplier_2", Default: 1.0, Doc: "gate: multiplier from num_iter on"},
			{Name: "m1", Default: 0.5, Doc: "pieceWarmup: multiplier before n1"},
			{Name: "n1", Default: 0, Doc: "pieceWarmup: end of the first piece"},
			{Name: "m2", Default: 0.5, Doc: "pieceWarmup: multiplier before n2"},
			{Name: "n2", Default: 0, Doc: "pieceWarmup: end of the second piece"},
			{Name: "m3", Default: 0.5, Doc: "pieceWarmup: multiplier from n2 on"},
			{Name: "active_first", Default: true, Doc: "alter: start with the active period"},
			{Name: "active_period", Default: -1, Doc: "alter: active iterations (>= 0)"},
			{Name: "inactive_period", Default: -1, Doc: "alter: inactive iterations (>= 0)"},
			{Name: "end_multiplier", Default: 0.0, Doc: "hill: lower bound of the multiplier"},
			{Name: "sub_policy_num_iters", Doc: "composite: iterations of each sub-policy; sub-policy i reads sub_policy_<i>_policy, sub_policy_<i>_lr_scale and sub_policy_<i>_<arg>"},
			{Name: "max_lr", Doc: "cyclical (0.005): upper rate; cosine (0.5): upper multiplier"},
			{Name: "decay", Default: 1.0, Doc: "cyclical: decay per cycle"},
			{Name: "min_lr", Default: 0.1, Doc: "cosine: lower multiplier"},
			{Name: "period", Default: 50, Doc: "cosine: first period (> 0)"},
			{Name: "t_mult", Default: 1.0, Doc: "cosine: period growth factor (> 0)"},
			{Name: "lr_shrink", Default: 0.99, Doc: "cosine: shrink per period"},
			{Name: "start_warmup_multiplier", Default: 0.1, Doc: "constantThenLinearWarmup, compositeCyclical, compositeCosine"},
			{Name: "constant_warmup_num_iter", Default: 10000000, Doc: "constantThenLinearWarmup, compositeCyclical, compositeCosine"},
			{Name: "linear_warmup_num_iter", Default: 10000000, Doc: "constantThenLinearWarmup, compositeCyclical, compositeCosine"},
			{Name: "cyclical_max_lr", Default: 0.05, Doc: "compositeCyclical"},
			{Name: "cyclical_step_size", Default: 1000000, Doc: "compositeCyclical"},
			{Name: "cyclical_decay", Default: 1.0, Doc: "compositeCyclical"},
			{Name: "cosine_min_lr", Default: 0.1, Doc: "compositeCosine"},
			{Name: "cosine_max_lr", Default: 0.5, Doc: "compositeCosine"},
			{Name: "cosine_period", Default: 50, Doc: "compositeCosine"},
			{Name: "cosine_t_mult", Default: 1.0, Doc: "compositeCosine"},
			{Name: "cosine_lr_shrink", Default: 0.99, Doc: "compositeCosine"},
			{Name: "drop_factor", Default: 0.1, Doc: "piecewise (MATLAB's LearnRateDropFactor): multiplier applied once per period, in [0, 1]"},
			{Name: "drop_period", Default: 10, Doc: "piecewise (MATLAB's LearnRateDropPeriod, counted in iterations): iterations per period (> 0)"},
			{Name: "stepvalue", Doc: "multistep (Caffe1 extension): iterations where the rate is multiplied by gamma; also accepted as stepvalues"},
		},
		Doc: "lr = base_lr · lr_scale · f(iter) as a float 0-d tensor, for the int64 CPU iteration counter iter.",
	}, newLearningRate)
	operators.MustRegisterNoGradient("LearningRate")
}

type learningRateOp struct {
	*operators.Base
	baseLR float64 // base_lr · lr_scale
	policy lrPolicy
}

func newLearningRate(b *operators.Base) (operators.Operator, error) {
	if !b.HasArg("base_lr") || b.ArgFloat("base_lr", 0) == math.MaxFloat32 {
		return nil, fmt.Errorf("base learning rate must be set (argument \"base_lr\")")
	}
	base := float64(b.ArgFloat("base_lr", 0))
	name := b.ArgString("policy", "")
	if name == "" {
		return nil, fmt.Errorf("must specify a learning rate policy (argument \"policy\")")
	}
	a := lrArgs{b: b, policy: name, baseLR: base}
	p, err := a.build()
	if err != nil {
		return nil, err
	}
	scale := 1.0
	if name != "composite" {
		scale = float64(b.ArgFloat("lr_scale", 1))
	}
	return &learningRateOp{Base: b, baseLR: float64(float32(base * scale)), policy: p}, nil
}

func (o *learningRateOp) Run() error {
	it, err := o.InputOf(0, blob.Int64)
	if err != nil {
		return err
	}
	if it.Size() < 1 {
		return o.Errorf("iteration input %q is empty", o.InputName(0))
	}
	iter := blob.Data[int64](it)[0]
	y := o.Output(0)
	if err := y.Init(blob.Float32); err != nil {
		return err
	}
	blob.Data[float32](y)[0] = float32(o.baseLR * o.policy.multiplier(iter))
	return nil
}

// lrPolicy is a learning rate policy: the multiplier f(iter) of the base
// learning rate.
type lrPolicy interface {
	multiplier(iter int64) float64
}

// lrArgs reads one policy's arguments, each name prefixed by prefix (the
// "sub_policy_<i>_" of a composite sub-policy).
type lrArgs struct {
	b      *operators.Base
	prefix string
	policy string
	baseLR float64
}

func (a lrArgs) float(name string, def float64) float64 {
	return float64(a.b.ArgFloat(a.prefix+name, float32(def)))
}

func (a lrArgs) int(name string, def int64) int64 { return a.b.ArgInt(a.prefix+name, def) }

func (a lrArgs) ints(name string) []int64 {
	v := a.b.ArgInts(a.prefix+name, nil)
	if len(v) == 0 && a.b.HasArg(a.prefix+name) {
		v = []int64{a.b.ArgInt(a.prefix+name, 0)}
	}
	return v
}

func (a lrArgs) errorf(arg, format string, args ...any) error {
	return fmt.Errorf("learning rate policy %q: argument %q %s", a.policy, a.prefix+arg, fmt.Sprintf(format, args...))
}

// positive reads a float argument that must be > 0.
func (a lrArgs) positive(name string, def float64) (float64, error) {
	v := a.float(name, def)
	if !(v > 0) {
		return 0, a.errorf(name, "must be > 0, got %g", float32(v))
	}
	return v, nil
}

// count reads an integer argument that must be >= min.
func (a lrArgs) count(name string, def, min int64) (int64, error) {
	v := a.int(name, def)
	if v < min {
		if min == 1 {
			return 0, a.errorf(name, "must be > 0, got %d", v)
		}
		return 0, a.errorf(name, "must be >= %d, got %d", min, v)
	}
	return v, nil
}

// unit reads a float argument that must lie in [0, 1].
func (a lrArgs) unit(name string, def float64) (float64, error) {
	v := a.float(name, def)
	if !(v >= 0 && v <= 1) {
		return 0, a.errorf(name, "must be in [0, 1], got %g", float32(v))
	}
	return v, nil
}

// build creates the policy a.policy from its arguments, validating them.
func (a lrArgs) build() (lrPolicy, error) {
	switch a.policy {
	case "fixed":
		return fixedLR{}, nil
	case "step":
		stepsize, err := a.count("stepsize", 0, 1)
		if err != nil {
			return nil, err
		}
		gamma, err := a.positive("gamma", 0)
		if err != nil {
			return nil, err
		}
		return stepLR{stepsize: stepsize, gamma: gamma}, nil
	case "exp":
		gamma, err := a.positive("gamma", 0)
		if err != nil {
			return nil, err
		}
		return expLR{gamma: gamma}, nil
	case "gate":
		return gateLR{m1: a.float("multiplier_1", 1), m2: a.float("multiplier_2", 1), numIter: a.int("num_iter", 0)}, nil
	case "inv":
		return a.inv()
	case "poly":
		power, err := a.positive("power", 0)
		if err != nil {
			return nil, err
		}
		maxIter, err := a.count("max_iter", -1, 1)
		if err != nil {
			return nil, err
		}
		return polyLR{power: power, maxIter: maxIter}, nil
	case "linearWarmup":
		start := a.float("start_multiplier", 0)
		if !(start >= 0) {
			return nil, a.errorf("start_multiplier", "must be >= 0, got %g", float32(start))
		}
		n, err := a.count("num_iter", 0, 0)
		if err != nil {
			return nil, err
		}
		return linearWarmupLR{start: start, numIter: n}, nil
	case "constantWarmup":
		m, err := a.positive("multiplier", 0.5)
		if err != nil {
			return nil, err
		}
		n, err := a.count("num_iter", 0, 0)
		if err != nil {
			return nil, err
		}
		return constantWarmupLR{m: m, numIter: n}, nil
	case "pieceWarmup":
		return pieceWarmupLR{
			m1: a.float("m1", 0.5), n1: a.int("n1", 0),
			m2: a.float("m2", 0.5), n2: a.int("n2", 0),
			m3: a.float("m3", 0.5),
		}, nil
	case "alter":
		active, err := a.count("active_period", -1, 0)
		if err != nil {
			return nil, err
		}
		inactive, err := a.count("inactive_period", -1, 0)
		if err != nil {
			return nil, err
		}
		if active+inactive == 0 {
			return nil, a.errorf("active_period", "and %q must not both be 0", a.prefix+"inactive_period")
		}
		return alterLR{active: active, inactive: inactive, activeFirst: a.b.ArgBool(a.prefix+"active_first", true)}, nil
	case "hill":
		n, err := a.count("num_iter", 0, 1)
		if err != nil {
			return nil, err
		}
		start, err := a.unit("start_multiplier", 0)
		if err != nil {
			return nil, err
		}
		inv, err := a.inv()
		if err != nil {
			return nil, err
		}
		end, err := a.unit("end_multiplier", 0)
		if err != nil {
			return nil, err
		}
		return hillLR{warmup: linearWarmupLR{start: start, numIter: n}, inv: inv, numIter: n, end: end}, nil
	case "composite":
		return a.composite()
	case "cyclical":
		return a.cyclical("max_lr", 0.005, "stepsize", 0, "decay", 1)
	case "cosine":
		return a.cosine("min_lr", 0.1, "max_lr", 0.5, "period", "t_mult", "lr_shrink")
	case "constantThenLinearWarmup":
		return a.constantThenLinear()
	case "compositeCyclical":
		w, err := a.constantThenLinear()
		if err != nil {
			return nil, err
		}
		c, err := a.cyclical("cyclical_max_lr", 0.05, "cyclical_step_size", 1000000, "cyclical_decay", 1)
		if err != nil {
			return nil, err
		}
		return warmupThenLR{warmup: w, after: c}, nil
	case "compositeCosine":
		w, err := a.constantThenLinear()
		if err != nil {
			return nil, err
		}
		c, err := a.cosine("cosine_min_lr", 0.1, "cosine_max_lr", 0.5, "cosine_period", "cosine_t_mult", "cosine_lr_shrink")
		if err != nil {
			return nil, err
		}
		return warmupThenLR{warmup: w, after: c}, nil
	case "piecewise":
		factor, err := a.unit("drop_factor", 0.1)
		if err != nil {
			return nil, err
		}
		period, err := a.count("drop_period", 10, 1)
		if err != nil {
			return nil, err
		}
		return piecewiseLR{factor: factor, period: period}, nil
	case "multistep":
		steps := a.ints("stepvalue")
		name := "stepvalue"
		if len(steps) == 0 {
			steps, name = a.ints("stepvalues"), "stepvalues"
		}
		if len(steps) == 0 {
			return nil, a.errorf(name, "(or %q) must list at least one iteration", a.prefix+"stepvalue")
		}
		gamma, err := a.positive("gamma", 0)
		if err != nil {
			return nil, err
		}
		return multistepLR{steps: append([]int64(nil), steps...), gamma: gamma}, nil
	}
	if a.prefix != "" {
		if a.policy == "" {
			return nil, fmt.Errorf("must specify a learning rate policy (argument %q)", a.prefix+"policy")
		}
		return nil, fmt.Errorf("unknown learning rate policy %q (argument %q)", a.policy, a.prefix+"policy")
	}
	return nil, fmt.Errorf("unknown learning rate policy: %s", a.policy)
}

func (a lrArgs) inv() (invLR, error) {
	gamma, err := a.positive("gamma", 0)
	if err != nil {
		return invLR{}, err
	}
	power, err := a.positive("power", 0)
	if err != nil {
		return invLR{}, err
	}
	return invLR{gamma: gamma, power: power}, nil
}

func (a lrArgs) cyclical(maxName string, maxDef float64, stepName string, stepDef int64, decayName string, decayDef float64) (cyclicalLR, error) {
	maxLR := a.float(maxName, maxDef)
	stepsize, err := a.count(stepName, stepDef, 1)
	if err != nil {
		return cyclicalLR{}, err
	}
	if a.baseLR == 0 {
		return cyclicalLR{}, fmt.Errorf("learning rate policy %q: argument \"base_lr\" must not be 0", a.policy)
	}
	if !(maxLR >= a.baseLR) {
		return cyclicalLR{}, a.errorf(maxName, "(%g) must be >= base_lr (%g)", float32(maxLR), float32(a.baseLR))
	}
	return cyclicalLR{baseLR: a.baseLR, maxLR: maxLR, stepsize: stepsize, decay: a.float(decayName, decayDef)}, nil
}

func (a lrArgs) cosine(minName string, minDef float64, maxName string, maxDef float64, periodName, tMultName, shrinkName string) (cosineLR, error) {
	minLR, maxLR := a.float(minName, minDef), a.float(maxName, maxDef)
	if !(maxLR >= minLR) {
		return cosineLR{}, a.errorf(maxName, "(%g) must be >= %q (%g)", float32(maxLR), a.prefix+minName, float32(minLR))
	}
	period, err := a.count(periodName, 50, 1)
	if err != nil {
		return cosineLR{}, err
	}
	tMult, err := a.positive(tMultName, 1)
	if err != nil {
		return cosineLR{}, err
	}
	return cosineLR{minLR: minLR, maxLR: maxLR, period: period, tMult: tMult, shrink: a.float(shrinkName, 0.99)}, nil
}

func (a lrArgs) constantThenLinear() (constantThenLinearLR, error) {
	start := a.float("start_warmup_multiplier", 0.1)
	if !(start >= 0) {
		return constantThenLinearLR{}, a.errorf("start_warmup_multiplier", "must be >= 0, got %g", float32(start))
	}
	cn, err := a.count("constant_warmup_num_iter", 10000000, 0)
	if err != nil {
		return constantThenLinearLR{}, err
	}
	ln, err := a.count("linear_warmup_num_iter", 10000000, 0)
	if err != nil {
		return constantThenLinearLR{}, err
	}
	return constantThenLinearLR{start: start, constantIter: cn, linearIter: ln}, nil
}

func (a lrArgs) composite() (lrPolicy, error) {
	if a.prefix != "" {
		return nil, fmt.Errorf("defining composite LR policy as a subpolicy of composite LR policy is not allowed (argument %q)", a.prefix+"policy")
	}
	iters := a.b.ArgInts("sub_policy_num_iters", nil)
	if len(iters) == 0 {
		return nil, a.errorf("sub_policy_num_iters", "must specify at least one sub learning rate policy")
	}
	c := compositeLR{items: make([]compositeItem, len(iters))}
	start := int64(1)
	for i, n := range iters {
		if n <= 0 {
			return nil, a.errorf("sub_policy_num_iters", "entry %d: the number of iterations for a sub learning rate policy must be positive, got %d", i, n)
		}
		sub := lrArgs{b: a.b, prefix: "sub_policy_" + strconv.Itoa(i) + "_", baseLR: a.baseLR}
		sub.policy = a.b.ArgString(sub.prefix+"policy", "")
		if sub.policy == "composite" {
			return nil, fmt.Errorf("defining composite LR policy as a subpolicy of composite LR policy is not allowed (argument %q)", sub.prefix+"policy")
		}
		p, err := sub.build()
		if err != nil {
			return nil, err
		}
		c.items[i] = compositeItem{start: start, scale: sub.float("lr_scale", 1), policy: p}
		start += n
	}
	return c, nil
}

type fixedLR struct{}

func (fixedLR) multiplier(int64) float64 { return 1 }

// stepLR is gamma^⌊iter/stepsize⌋.
type stepLR struct {
	stepsize int64
	gamma    float64
}

func (p stepLR) multiplier(iter int64) float64 {
	return math.Pow(p.gamma, float64(iter/p.stepsize))
}

// expLR is gamma^iter.
type expLR struct{ gamma float64 }

func (p expLR) multiplier(iter int64) float64 { return math.Pow(p.gamma, float64(iter)) }

// gateLR is m1 before numIter and m2 from then on.
type gateLR struct {
	m1, m2  float64
	numIter int64
}

func (p gateLR) multiplier(iter int64) float64 {
	if iter >= p.numIter {
		return p.m2
	}
	return p.m1
}

// invLR is (1 + gamma·iter)^(−power).
type invLR struct{ gamma, power float64 }

func (p invLR) multiplier(iter int64) float64 {
	return math.Pow(1+p.gamma*float64(iter), -p.power)
}

// polyLR is (1 − iter/maxIter)^power.
type polyLR struct {
	power   float64
	maxIter int64
}

func (p polyLR) multiplier(iter int64) float64 {
	return math.Pow(1-float64(iter)/float64(p.maxIter), p.power)
}

// linearWarmupLR rises linearly from start to 1 over numIter iterations.
type linearWarmupLR struct {
	start   float64
	numIter int64
}

func (p linearWarmupLR) multiplier(iter int64) float64 {
	if iter >= p.numIter {
		return 1
	}
	return p.start + (1-p.start)*float64(iter)/float64(p.numIter)
}

// constantWarmupLR is multiplier for numIter iterations, then 1.
type constantWarmupLR struct {
	m       float64
	numIter int64
}

func (p constantWarmupLR) multiplier(iter int64) float64 {
	if iter >= p.numIter {
		return 1
	}
	return p.m
}

// pieceWarmupLR is m1 before n1, m2 before n2, then m3.
type pieceWarmupLR struct {
	m1, m2, m3 float64
	n1, n2     int64
}

func (p pieceWarmupLR) multiplier(iter int64) float64 {
	switch {
	case iter < p.n1:
		return p.m1
	case iter < p.n2:
		return p.m2
	}
	return p.m3
}

// alterLR alternates 1 for the active period and 0 for the inactive one.
type alterLR struct {
	active, inactive int64
	activeFirst      bool
}

func (p alterLR) multiplier(iter int64) float64 {
	first := p.inactive
	if p.activeFirst {
		first = p.active
	}
	if (iter%(p.active+p.inactive) < first) == p.activeFirst {
		return 1
	}
	return 0
}

// hillLR warms up linearly for numIter iterations, then decays as inv,
// bounded below by end.
type hillLR struct {
	warmup  linearWarmupLR
	inv     invLR
	numIter int64
	end     float64
}

func (p hillLR) multiplier(iter int64) float64 {
	if iter < p.numIter {
		return p.warmup.multiplier(iter)
	}
	return math.Max(p.end, p.inv.multiplier(iter-p.numIter))
}

// compositeItem is one sub-policy of a composite policy, active from
// iteration start on.
type compositeItem struct {
	start  int64
	scale  float64
	policy lrPolicy
}

// compositeLR runs its sub-policies one after the other: sub-policy i is
// active from iteration 1 + Σ_{j<i} n_j and is evaluated at the global
// iteration, times its own lr_scale. Iteration 0 uses the first one.
type compositeLR struct{ items []compositeItem }

func (p compositeLR) multiplier(iter int64) float64 {
	it := p.items[0]
	for _, c := range p.items[1:] {
		if c.start > iter {
			break
		}
		it = c
	}
	return it.policy.multiplier(iter) * it.scale
}

// cyclicalLR is the triangular cyclical rate of arXiv:1506.01186 with period
// 2·stepsize between base_lr and max_lr, decayed by decay each cycle.
type cyclicalLR struct {
	baseLR, maxLR float64
	stepsize      int64
	decay         float64
}

func (p cyclicalLR) multiplier(iter int64) float64 {
	cycles := iter / (2 * p.stepsize)
	x := math.Abs(float64(iter)/float64(p.stepsize) - float64(2*(cycles+1)) + 1)
	return 1 + (math.Abs(p.maxLR)/math.Abs(p.baseLR)-1)*math.Max(0, 1-x)*math.Pow(p.decay, float64(cycles))
}

// cosineLR is the cosine schedule with warm restarts of arXiv:1608.03983.
type cosineLR struct {
	minLR, maxLR float64
	period       int64
	tMult        float64
	shrink       float64
}

func (p cosineLR) multiplier(iter int64) float64 {
	var i, ti, tcur float64
	period := float64(p.period)
	if p.tMult != 1 {
		i = math.Floor(math.Log(1-float64(iter)/period*(1-p.tMult)) / math.Log(p.tMult))
		ti = math.Pow(p.tMult, i) * period
		tcur = float64(iter) - (1-math.Pow(p.tMult, i))/(1-p.tMult)*period
	} else {
		i = math.Floor(float64(iter) / period)
		ti = period
		tcur = float64(iter) - ti*i
	}
	s := math.Pow(p.shrink, i)
	lo, hi := p.minLR*s, p.maxLR*s
	return lo + 0.5*(hi-lo)*(1+math.Cos(math.Pi*tcur/ti))
}

// constantThenLinearLR is start for constantIter iterations, then rises
// linearly from start to 1 over linearIter iterations, then 1.
type constantThenLinearLR struct {
	start                    float64
	constantIter, linearIter int64
}

func (p constantThenLinearLR) multiplier(iter int64) float64 {
	switch {
	case iter < p.constantIter:
		return p.start
	case iter < p.constantIter+p.linearIter:
		return linearWarmupLR{start: p.start, numIter: p.linearIter}.multiplier(iter - p.constantIter)
	}
	return 1
}

// warmupThenLR is a constant-then-linear warmup followed by another policy
// counted from the end of the warmup (compositeCyclical, compositeCosine).
type warmupThenLR struct {
	warmup constantThenLinearLR
	after  lrPolicy
}

func (p warmupThenLR) multiplier(iter int64) float64 {
	n := p.warmup.constantIter + p.warmup.linearIter
	if iter < n {
		return p.warmup.multiplier(iter)
	}
	return p.after.multiplier(iter - n)
}

// multistepLR is Caffe1's multistep: gamma^(number of steps ≤ iter).
type multistepLR struct {
	steps []int64
	gamma float64
}

func (p multistepLR) multiplier(iter int64) float64 {
	n := 0
	for _, s := range p.steps {
		if s <= iter {
			n++
		}
	}
	return math.Pow(p.gamma, float64(n))
}

// piecewiseLR is MATLAB trainNetwork's "piecewise" schedule counted in
// iterations: the rate starts at base_lr and is multiplied by factor after
// every period iterations. With the optimizer's iteration counter, which
// reads k during the k-th run, runs 1…period use base_lr, runs
// period+1…2·period use base_lr·factor, and so on; iteration 0 uses base_lr.
type piecewiseLR struct {
	factor float64
	period int64
}

func (p piecewiseLR) multiplier(iter int64) float64 {
	if iter <= 0 {
		return 1
	}
	return math.Pow(p.factor, float64((iter-1)/p.period))
}
