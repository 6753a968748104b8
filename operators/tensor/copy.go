package tensor

import (
	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/operators"
)

// The copy operators are registered for every device (operators.AnyDevice):
// they move elements only with blob.Tensor.CopyFrom and ShareData, which
// copy between Go memory and a device's memory as needed. Where each input
// is read and each output placed follows Caffe2's device inference.
func init() {
	oneToOne := func(s operators.Schema, f operators.Factory) {
		s.MinInputs, s.MaxInputs, s.MinOutputs, s.MaxOutputs = 1, 1, 1, 1
		operators.MustRegisterAnyDevice(s, f)
	}

	oneToOne(operators.Schema{Type: "Copy", InputsCanCrossDevices: true,
		Doc: "Copies the input tensor, from any device, into the output on the operator's device."}, newCopy)
	operators.MustRegisterGradient("Copy", func(g *operators.GradientContext) error {
		g.Op("CopyOnDeviceLike", []string{g.GO(0), g.I(0)}, []string{g.GI(0)})
		return nil
	})

	operators.MustRegisterAnyDevice(operators.Schema{
		Type: "CopyOnDeviceLike", MinInputs: 2, MaxInputs: 2, MinOutputs: 1, MaxOutputs: 1,
		InputsCanCrossDevices: true, DynamicOutputDevices: true,
		Doc: "Copies input 0 into the output on the device input 1 lives on.",
	}, func(b *operators.Base) (operators.Operator, error) { return &copyLikeOp{Base: b}, nil })

	oneToOne(operators.Schema{Type: "CopyCPUToGPU", CPUInputs: []int{0},
		Doc: "Copies a CPU tensor into the output on the operator's device (a GPU)."}, newCopy)
	operators.MustRegisterGradient("CopyCPUToGPU", func(g *operators.GradientContext) error {
		g.Op("CopyGPUToCPU", []string{g.GO(0)}, []string{g.GI(0)})
		return nil
	})
	oneToOne(operators.Schema{Type: "CopyGPUToCPU", CPUOutputs: []int{0},
		Doc: "Copies a tensor on the operator's device (a GPU) into a CPU tensor."}, newCopy)
	operators.MustRegisterGradient("CopyGPUToCPU", func(g *operators.GradientContext) error {
		g.Op("CopyCPUToGPU", []string{g.GO(0)}, []string{g.GI(0)})
		return nil
	})
	oneToOne(operators.Schema{Type: "CopyFromCPUInput", CPUInputs: []int{0},
		Doc: "Copies a CPU tensor into the output on the operator's device (GPU or CPU)."}, newCopy)

	oneToOne(operators.Schema{Type: "EnsureCPUOutput", InputsCanCrossDevices: true, CPUOutputs: []int{0},
		Doc: "Copies the input, from any device, into a CPU tensor."}, newCopy)
	operators.MustRegisterNoGradient("EnsureCPUOutput")

	oneToOne(operators.Schema{Type: "StopGradient", AllowInplace: operators.InplacePairs([2]int{0, 0}),
		Doc: "Identity in the forward pass; no gradient flows through it."}, newCopy)
	operators.MustRegisterNoGradient("StopGradient")

	oneToOne(operators.Schema{Type: "Alias",
		Doc: "Makes the output share the input's storage, type, shape and device."},
		func(b *operators.Base) (operators.Operator, error) { return &aliasOp{Base: b}, nil })
	operators.MustRegisterGradient("Alias", func(g *operators.GradientContext) error {
		g.SetDense(0, g.GO(0))
		return nil
	})
}

// copyOp copies input 0 into output 0, which lives where the schema puts
// it (Copy, CopyCPUToGPU, CopyGPUToCPU, CopyFromCPUInput, EnsureCPUOutput,
// StopGradient); in place it does nothing.
type copyOp struct{ *operators.Base }

func newCopy(b *operators.Base) (operators.Operator, error) { return &copyOp{Base: b}, nil }

func (o *copyOp) Run() error {
	x, err := o.Input(0)
	if err != nil {
		return err
	}
	return o.Output(0).CopyFrom(x)
}

// copyLikeOp copies input 0 onto the device input 1 lives on
// (CopyOnDeviceLike).
type copyLikeOp struct{ *operators.Base }

func (o *copyLikeOp) Run() error {
	x, err := o.Input(0)
	if err != nil {
		return err
	}
	like, err := o.Input(1)
	if err != nil {
		return err
	}
	y := o.OutputBlob(0).MutableTensor()
	y.SetDevice(like.Device())
	return y.CopyFrom(x)
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

// copyReshaped makes y a copy of x (unless they are the same tensor) with
// the given shape, whose element count the caller has checked.
func copyReshaped(y, x *blob.Tensor, shape []int) error {
	if y != x {
		if err := y.CopyFrom(x); err != nil {
			return err
		}
	}
	return y.Reshape(shape...)
}
