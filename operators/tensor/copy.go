package tensor

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	oneToOne := func(typ, doc string, inplace func(in, out int) bool) {
		operators.MustRegisterSchema(operators.Schema{
			Type: typ, MinInputs: 1, MaxInputs: 1, MinOutputs: 1, MaxOutputs: 1,
			AllowInplace: inplace, Doc: doc,
		})
	}

	oneToOne("Copy", "Copies the input tensor into the output.", nil)
	operators.MustRegister("Copy", netdef.CPU, "", newCopy)
	operators.MustRegisterGradient("Copy", func(g *operators.GradientContext) error {
		g.Op("CopyOnDeviceLike", []string{g.GO(0), g.I(0)}, []string{g.GI(0)})
		return nil
	})

	operators.MustRegisterCPU(operators.Schema{
		Type: "CopyOnDeviceLike", MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		Doc: "Copies input 0 into the output on the device of input 1 (on the CPU, a plain copy).",
	}, newCopy)

	oneToOne("EnsureCPUOutput", "Copies the input, from any device, into a CPU tensor.", nil)
	operators.MustRegister("EnsureCPUOutput", netdef.CPU, "", newCopy)
	operators.MustRegisterNoGradient("EnsureCPUOutput")

	oneToOne("StopGradient", "Identity in the forward pass; no gradient flows through it.",
		operators.InplacePairs([2]int{0, 0}))
	operators.MustRegister("StopGradient", netdef.CPU, "", newCopy)
	operators.MustRegisterNoGradient("StopGradient")

	oneToOne("Alias", "Makes the output share the input's storage, type and shape.", nil)
	operators.MustRegister("Alias", netdef.CPU, "", func(b *operators.Base) (operators.Operator, error) {
		return &aliasOp{Base: b}, nil
	})
	operators.MustRegisterGradient("Alias", func(g *operators.GradientContext) error {
		g.SetDense(0, g.GO(0))
		return nil
	})
}

// copyOp copies input 0 into output 0 (Copy, CopyOnDeviceLike,
// EnsureCPUOutput, StopGradient); in place it does nothing.
type copyOp struct{ *operators.Base }

func newCopy(b *operators.Base) (operators.Operator, error) { return &copyOp{Base: b}, nil }

func (o *copyOp) Run() error {
	x, err := o.Input(0)
	if err != nil {
		return err
	}
	y := o.Output(0)
	if y == x {
		return nil
	}
	if err := y.Init(x.DataType(), x.Dims()...); err != nil {
		return err
	}
	copyElements(y, x)
	return nil
}

// copyElements copies the elements of x into y, which has x's type and
// element count. Unlike blob.Tensor.CopyFrom it does not allocate.
func copyElements(y, x *blob.Tensor) {
	n := x.Size()
	elemsOf(x.DataType()).copyMatrix(y, 0, n, x, 0, n, 1, n)
}

type aliasOp struct{ *operators.Base }

func (o *aliasOp) Run() error {
	x, err := o.Input(0)
	if err != nil {
		return err
	}
	if y := o.Output(0); y != x {
		y.ShareData(x)
	}
	return nil
}
