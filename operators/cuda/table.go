package cuda

// native names the operator types with CUDA implementations of their own
// (kernels of this package, cuBLAS or cuDNN), besides the element-wise
// table. Inside some of them, cases cuDNN or the kernels do not handle run
// on the host: broadcasts other than one-element ones (Add, Sub, Mul, Div),
// asymmetric pads and Caffe's ceil-mode sizes (Conv, pooling).
var native = []string{
	"Add", "Sub", "Mul", "Div",
	"Sum", "WeightedSum",
	"SumElements", "SumElementsGradient", "AveragedLoss", "AveragedLossGradient",
	"FC", "FCGradient", "FCTransposed", "FCTransposedGradient",
	"Softmax", "SoftmaxGradient", "SoftmaxWithLoss", "SoftmaxWithLossGradient", "Accuracy", "MatMul",
	"MomentumSGD", "MomentumSGDUpdate", "Adam", "Adagrad",
	"Conv", "ConvGradient", "Conv1D", "Conv1DGradient", "Conv2D", "Conv2DGradient", "Conv3D", "Conv3DGradient",
	"MaxPool", "MaxPoolGradient", "MaxPool1D", "MaxPool1DGradient", "MaxPool2D", "MaxPool2DGradient", "MaxPool3D", "MaxPool3DGradient",
	"AveragePool", "AveragePoolGradient", "AveragePool1D", "AveragePool1DGradient", "AveragePool2D", "AveragePool2DGradient",
	"AveragePool3D", "AveragePool3DGradient",
}

// hostOnly names the CPU operator types that get no CUDA implementation:
// strings cannot live in GPU memory, and Allreduce's CUDA engines are
// registered apart.
var hostOnly = []string{"GivenTensorStringFill", "Allreduce"}

// implementedTypes returns every type the element-wise table and native
// name.
func implementedTypes() []string {
	out := append([]string{}, native...)
	for _, op := range elementwise {
		out = append(out, op.Type)
	}
	return out
}
