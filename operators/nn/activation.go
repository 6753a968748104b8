package nn

import (
	"math"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
	"github.com/caffe2go/caffe2go/operators/internal/parallel"
	"github.com/caffe2go/caffe2go/operators/internal/vec"
)

// activation names an elementwise activation function.
type activation int

const (
	actRelu activation = iota
	actLeakyRelu
	actSigmoid
	actTanh
)

type activationSpec struct {
	typ  string
	kind activation
	args []operators.ArgSpec
	doc  string
	// gradDoc documents the gradient operator.
	gradDoc string
}

var alphaArg = operators.ArgSpec{Name: "alpha", Default: float32(0.01), Doc: "slope of the negative part"}

var activations = []activationSpec{
	{typ: "Relu", kind: actRelu,
		doc:     "Relu computes Y = max(0, X) elementwise.",
		gradDoc: "ReluGradient(Y, dY) computes dX = dY where Y > 0, else 0."},
	{typ: "LeakyRelu", kind: actLeakyRelu, args: []operators.ArgSpec{alphaArg},
		doc:     "LeakyRelu computes Y = X for X ≥ 0 and alpha·X otherwise, elementwise.",
		gradDoc: "LeakyReluGradient(Y, dY) computes dX = dY where Y ≥ 0, else alpha·dY."},
	{typ: "Sigmoid", kind: actSigmoid,
		doc:     "Sigmoid computes Y = 1/(1 + exp(−X)) elementwise.",
		gradDoc: "SigmoidGradient(Y, dY) computes dX = dY·Y·(1 − Y)."},
	{typ: "Tanh", kind: actTanh,
		doc:     "Tanh computes Y = tanh(X) elementwise.",
		gradDoc: "TanhGradient(Y, dY) computes dX = dY·(1 − Y²)."},
}

func init() {
	for _, s := range activations {
		operators.MustRegisterCPU(operators.Schema{
			Type: s.typ, MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
			AllowInplace: operators.InplacePairs([2]int{0, 0}),
			Args:         s.args, Doc: s.doc,
		}, func(b *operators.Base) (operators.Operator, error) {
			return &activationOp{Base: b, jobs: newActivationJobs(s.kind, false, b.ArgFloat("alpha", 0.01))}, nil
		})
		grad := s.typ + "Gradient"
		operators.MustRegisterCPU(operators.Schema{
			Type: grad, MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
			AllowInplace: operators.InplacePairs([2]int{1, 0}),
			Args:         s.args, Doc: s.gradDoc,
		}, func(b *operators.Base) (operators.Operator, error) {
			return &activationGradOp{Base: b, jobs: newActivationJobs(s.kind, true, b.ArgFloat("alpha", 0.01))}, nil
		})
		operators.MustRegisterGradient(s.typ, func(g *operators.GradientContext) error {
			g.Op(grad, []string{g.O(0), g.GO(0)}, []string{g.GI(0)})
			return nil
		})
	}
}

// activationOp applies an activation function elementwise.
type activationOp struct {
	*operators.Base
	jobs activationJobs
}

// activationJob is an activation or its gradient over a range of elements,
// split over the operator's thread budget. ReLU is bound by memory
// bandwidth, which one core does not saturate, so that the convnet
// benchmark's large activations gain from a second part
// (BenchmarkOps/Relu*Convnet).
type activationJob[T blob.Float] struct {
	grad    bool
	kind    activation
	alpha   T
	a, b, c []T // x and y, or y, dy and dx
}

// activationJobs is an operator's job for each element type, made once
// with the operator.
type activationJobs struct {
	j32 activationJob[float32]
	j64 activationJob[float64]
}

func newActivationJobs(kind activation, grad bool, alpha float32) activationJobs {
	return activationJobs{
		j32: activationJob[float32]{grad: grad, kind: kind, alpha: alpha},
		j64: activationJob[float64]{grad: grad, kind: kind, alpha: float64(alpha)},
	}
}

// run runs the job of a's element type on the tensors' data (c nil for
// the activation itself).
func (js *activationJobs) run(threads int, a, b, c *blob.Tensor) {
	if a.DataType() == blob.Float32 {
		js.j32.run(threads, blob.Data[float32](a), blob.Data[float32](b), dataOrNil[float32](c))
	} else {
		js.j64.run(threads, blob.Data[float64](a), blob.Data[float64](b), dataOrNil[float64](c))
	}
}

// run computes the activation from x = a into y = b, or its gradient from
// y = a and dy = b into dx = c, split over the elements of a with at most
// threads parts, then drops the slices so that the operator holds no
// tensor memory between runs.
func (j *activationJob[T]) run(threads int, a, b, c []T) {
	j.a, j.b, j.c = a, b, c
	n := len(a)
	work := n
	if j.kind == actSigmoid || j.kind == actTanh {
		work *= 16 // a transcendental function per element
	}
	parallel.Run(j, n, parallel.Parts(threads, n, work))
	j.a, j.b, j.c = nil, nil, nil
}

// RunRange computes the elements [lo, hi).
func (j *activationJob[T]) RunRange(_, lo, hi int) {
	if j.grad {
		activateGrad(j.kind, j.alpha, j.a[lo:hi], j.b[lo:hi], j.c[lo:hi])
	} else {
		activate(j.kind, j.alpha, j.a[lo:hi], j.b[lo:hi])
	}
}

func (o *activationOp) Run() error {
	x, err := o.FloatInput(0)
	if err != nil {
		return err
	}
	y := o.Output(0)
	if err := y.Init(x.DataType(), x.Dims()...); err != nil {
		return o.Errorf("output %q: %v", o.OutputName(0), err)
	}
	o.jobs.run(o.Threads(), x, y, nil)
	return nil
}

// activate computes y = f(x); y may be x.
func activate[T blob.Float](kind activation, alpha T, x, y []T) {
	y = y[:len(x)]
	switch kind {
	case actRelu:
		if x32, ok := any(x).([]float32); ok {
			vec.Relu32(x32, any(y).([]float32))
			return
		}
		for i, v := range x {
			y[i] = max(v, 0)
		}
	case actLeakyRelu:
		for i, v := range x {
			y[i] = max(v, 0) + min(v, 0)*alpha
		}
	case actSigmoid:
		for i, v := range x {
			y[i] = T(1 / (1 + math.Exp(-float64(v))))
		}
	case actTanh:
		for i, v := range x {
			y[i] = T(math.Tanh(float64(v)))
		}
	}
}

// activationGradOp computes dX from the activation's output Y and dY.
type activationGradOp struct {
	*operators.Base
	jobs activationJobs
}

func (o *activationGradOp) Run() error {
	y, dy, err := outputAndGradient(o.Base)
	if err != nil {
		return err
	}
	dx := o.Output(0)
	if err := dx.Init(y.DataType(), y.Dims()...); err != nil {
		return o.Errorf("output %q: %v", o.OutputName(0), err)
	}
	o.jobs.run(o.Threads(), y, dy, dx)
	return nil
}

// activateGrad computes dx from the output y and its gradient dy; dx may be
// dy.
func activateGrad[T blob.Float](kind activation, alpha T, y, dy, dx []T) {
	dy = dy[:len(y)]
	dx = dx[:len(y)]
	switch kind {
	case actRelu:
		switch y := any(y).(type) {
		case []float32:
			vec.ReluGrad32(y, any(dy).([]float32), any(dx).([]float32))
		case []float64:
			reluGrad64(y, any(dy).([]float64), any(dx).([]float64))
		}
	case actLeakyRelu:
		for i, v := range y {
			if v >= 0 {
				dx[i] = dy[i]
			} else {
				dx[i] = alpha * dy[i]
			}
		}
	case actSigmoid:
		for i, v := range y {
			dx[i] = dy[i] * v * (1 - v)
		}
	case actTanh:
		for i, v := range y {
			dx[i] = dy[i] * (1 - v*v)
		}
	}
}

// reluGrad64 is vec.ReluGrad32 for float64.
func reluGrad64(y, dy, dx []float64) {
	dy = dy[:len(y)]
	dx = dx[:len(y)]
	for i, v := range y {
		b := int64(math.Float64bits(v))
		keep := ^((b - 1) | b) >> 63
		dx[i] = math.Float64frombits(math.Float64bits(dy[i]) & uint64(keep))
	}
}
