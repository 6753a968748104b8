//go:build cuda && cgo

package cuda

import (
	"slices"
	"strings"

	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/operators"
)

func init() {
	for _, spec := range elementwise {
		operators.MustRegister(spec.Type, netdef.CUDA, "", newElementwise(spec))
	}
	reg := func(f operators.Factory, types ...string) {
		for _, t := range types {
			operators.MustRegister(t, netdef.CUDA, "", f)
		}
	}
	for typ := range binaryOps {
		reg(newBinary(typ), typ)
	}
	reg(newSum, "Sum")
	reg(newWeightedSum, "WeightedSum")
	reg(newReduce(false, false), "SumElements")
	reg(newReduce(false, true), "SumElementsGradient")
	reg(newReduce(true, false), "AveragedLoss")
	reg(newReduce(true, true), "AveragedLossGradient")
	reg(newFCImpl(false, false), "FC")
	reg(newFCImpl(false, true), "FCGradient")
	reg(newFCImpl(true, false), "FCTransposed")
	reg(newFCImpl(true, true), "FCTransposedGradient")
	reg(newSoftmax(false), "Softmax")
	reg(newSoftmax(true), "SoftmaxGradient")
	reg(newSoftmaxLoss(false), "SoftmaxWithLoss")
	reg(newSoftmaxLoss(true), "SoftmaxWithLossGradient")
	reg(newAccuracy, "Accuracy")
	reg(newMatMul, "MatMul")
	reg(newMomentum(false), "MomentumSGD")
	reg(newMomentum(true), "MomentumSGDUpdate")
	reg(newAdam, "Adam")
	reg(newAdagrad, "Adagrad")
	for _, typ := range []string{"Conv", "Conv1D", "Conv2D", "Conv3D"} {
		reg(newConv, typ)
		reg(newConvGradient, typ+"Gradient")
	}
	for _, kind := range []string{"Max", "Average"} {
		for _, dim := range []string{"", "1D", "2D", "3D"} {
			typ := kind + "Pool" + dim
			reg(newPool(kind == "Max", false), typ)
			reg(newPool(kind == "Max", true), typ+"Gradient")
		}
	}
}

// RegisterHostFallbacks registers, for every operator type with a CPU
// implementation but none for CUDA (other than the host-only ones: files,
// databases, strings, Allreduce), a CUDA implementation that runs the CPU
// one on host copies (operators.HostFallback), so that any net the CPU runs
// also runs on a GPU. operators/std calls it once the standard operators
// are registered; call it again after registering CPU operators of your
// own.
func RegisterHostFallbacks() {
	for _, impl := range operators.Implementations("") {
		if impl.Device != netdef.CPU || impl.Engine != "" || slices.Contains(hostOnly, impl.Type) || strings.HasPrefix(impl.Type, "Test") {
			continue
		}
		if slices.ContainsFunc(operators.Implementations(impl.Type), func(i operators.Implementation) bool {
			return i.Device == netdef.CUDA && i.Engine == ""
		}) {
			continue
		}
		operators.MustRegister(impl.Type, netdef.CUDA, "", newFallback)
	}
}
