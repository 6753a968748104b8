package optim

import (
	"math"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	operators.MustRegisterCPU(operators.Schema{
		Type:      "RmsProp",
		MinInputs: 4, MaxInputs: 4, MinOutputs: 3, MaxOutputs: 3,
		AllowInplace: operators.InplacePairs([2]int{0, 0}, [2]int{1, 1}, [2]int{2, 2}),
		Args: []operators.ArgSpec{
			{Name: "decay", Default: 0.9, Doc: "decay of the mean-square estimate"},
			{Name: "momentum", Default: 0.0, Doc: "momentum coefficient"},
			{Name: "epsilon", Default: 1e-5, Doc: "added to the mean square before the square root"},
		},
		Doc: "(grad, mean_squares, mom, lr) → (output_grad, mean_squares, mom): " +
			"ms' = ms + (1−decay)·(g² − ms), mom' = momentum·mom + lr·g/√(ε + ms'), output_grad = mom'. " +
			"Add the output gradient to the parameter with MomentumSGDUpdate.",
	}, newRmsProp)
	operators.MustRegisterGradientForbidden("RmsProp")
}

type rmsPropOp struct {
	*operators.Base
	decay, momentum, epsilon float32
	in                       [4]*blob.Tensor
}

func newRmsProp(b *operators.Base) (operators.Operator, error) {
	return &rmsPropOp{
		Base:     b,
		decay:    b.ArgFloat("decay", 0.9),
		momentum: b.ArgFloat("momentum", 0),
		epsilon:  b.ArgFloat("epsilon", 1e-5),
	}, nil
}

func (o *rmsPropOp) Run() error {
	dt, err := floatInputs(o.Base, o.in[:], 0, 1, 2, 3)
	if err != nil {
		return err
	}
	g, ms, mom, lr := o.in[0], o.in[1], o.in[2], o.in[3]
	if err := scalarInput(o.Base, lr, 3); err != nil {
		return err
	}
	if err := sameSize(o.Base, ms, 1, g, 0); err != nil {
		return err
	}
	if err := sameSize(o.Base, mom, 2, g, 0); err != nil {
		return err
	}
	ng, err := resizeLike(o.Base, 0, g, false)
	if err != nil {
		return err
	}
	nms, err := resizeLike(o.Base, 1, ms, false)
	if err != nil {
		return err
	}
	nmom, err := resizeLike(o.Base, 2, mom, false)
	if err != nil {
		return err
	}
	if dt == blob.Float32 {
		rmsProp(blob.Data[float32](g), blob.Data[float32](ms), blob.Data[float32](mom),
			blob.Data[float32](ng), blob.Data[float32](nms), blob.Data[float32](nmom),
			o.decay, o.momentum, o.epsilon, blob.Data[float32](lr)[0])
	} else {
		rmsProp(blob.Data[float64](g), blob.Data[float64](ms), blob.Data[float64](mom),
			blob.Data[float64](ng), blob.Data[float64](nms), blob.Data[float64](nmom),
			float64(o.decay), float64(o.momentum), float64(o.epsilon), blob.Data[float64](lr)[0])
	}
	return nil
}

// rmsProp computes one RMSProp step from gradient g, mean squares ms and
// momentum mom into ng, nms and nmom (which may alias g, ms and mom): the
// new mean square, the new momentum, and the new momentum again as the
// output gradient.
func rmsProp[T blob.Float](g, ms, mom, ng, nms, nmom []T, decay, momentum, eps, lr T) {
	ms, mom, ng, nms, nmom = ms[:len(g)], mom[:len(g)], ng[:len(g)], nms[:len(g)], nmom[:len(g)]
	for i, gi := range g {
		s := ms[i] + (1-decay)*(gi*gi-ms[i])
		m := momentum*mom[i] + lr*gi/T(math.Sqrt(float64(eps+s)))
		nms[i], nmom[i], ng[i] = s, m, m
	}
}
