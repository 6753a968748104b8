package cuda

import (
	"embed"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"
)

//go:embed kernels/*.cu
var kernelFiles embed.FS

// ewArg is a float argument of an element-wise operator, passed to its
// device function after the elements.
type ewArg struct {
	Name    string
	Default float32
}

// ewOp is an element-wise operator: out = Fn(in0[, in1], args...) element
// by element, over inputs of one size.
type ewOp struct {
	Type   string  // the operator type
	Fn     string  // the device function template in kernels/elementwise.cu
	Inputs int     // 1, or 2 for a gradient (Y or X, then dY)
	Args   []ewArg // operator arguments, in the device function's order
}

// elementwise is the table of element-wise operators with CUDA kernels.
// Each gets one kernel per float type, ew_<Type>_f32 and ew_<Type>_f64.
var elementwise = []ewOp{
	{"Relu", "c2g_relu", 1, nil},
	{"ReluGradient", "c2g_relu_grad", 2, nil},
	{"LeakyRelu", "c2g_leaky_relu", 1, []ewArg{{"alpha", 0.01}}},
	{"LeakyReluGradient", "c2g_leaky_relu_grad", 2, []ewArg{{"alpha", 0.01}}},
	{"Sigmoid", "c2g_sigmoid", 1, nil},
	{"SigmoidGradient", "c2g_sigmoid_grad", 2, nil},
	{"Tanh", "c2g_tanh", 1, nil},
	{"TanhGradient", "c2g_tanh_grad", 2, nil},
	{"Negative", "c2g_negative", 1, nil},
	{"Exp", "c2g_exp", 1, nil},
	{"Log", "c2g_log", 1, nil},
	{"Sqrt", "c2g_sqrt", 1, nil},
	{"Sqr", "c2g_sqr", 1, nil},
	{"Abs", "c2g_abs", 1, nil},
	{"AbsGradient", "c2g_abs_grad", 2, nil},
	{"Scale", "c2g_scale", 1, []ewArg{{"scale", 1}}},
	{"Clip", "c2g_clip", 1, []ewArg{{"min", -3.4028235e38}, {"max", 3.4028235e38}}},
	{"ClipGradient", "c2g_clip_grad", 2, []ewArg{{"min", -3.4028235e38}, {"max", 3.4028235e38}}},
}

// kernelSpec is a kernel that instantiates a device function template of
// kernels/*.cu for several element types.
type kernelSpec struct {
	Name   string   // the kernels are Name_<suffix>
	Fn     string   // the device function template
	Params string   // its C parameters, T standing for the element type
	Types  []string // element type suffixes (see cTypes)
}

// cTypes maps an element type suffix to its C type.
var cTypes = map[string]string{"f32": "float", "f64": "double", "i32": "int", "i64": "long long"}

var (
	floats   = []string{"f32", "f64"}
	numerics = []string{"f32", "f64", "i32", "i64"}
)

// kernels is the table of templated kernels the operators launch.
var kernels = []kernelSpec{
	{"binary", "c2g_binary_strided", "int op, const T* a, const T* b, T* c, long long n, long long d1, long long d2, long long d3, " +
		"long long as0, long long as1, long long as2, long long as3, long long bs0, long long bs1, long long bs2, long long bs3", numerics},
	{"binary_same", "c2g_binary_same", "int op, const T* a, const T* b, T* c, long long n", numerics},
	{"add_into", "c2g_add_into", "const T* x, T* y, long long n", numerics},
	{"weighted_first", "c2g_weighted_first", "const T* x, const T* w, T* y, long long n", floats},
	{"weighted_add", "c2g_weighted_add", "const T* x, const T* w, T* y, long long n", floats},
	{"fill", "c2g_fill", "T* y, T v, long long n", numerics},
	{"softmax_rows", "c2g_softmax_rows", "const T* x, T* p, int n, int d, const int* labels, const T* probs, const T* w, double* row_loss, double* row_w", floats},
	{"softmax_loss_total", "c2g_softmax_loss_total", "const double* row_loss, double* row_w, int n, double scale, T* loss", floats},
	{"softmax_loss_grad", "c2g_softmax_loss_grad", "const T* p, T* dx, int n, int d, const int* labels, const T* probs, const T* w, const T* dloss, double scale", floats},
	{"softmax_grad", "c2g_softmax_grad", "const T* y, const T* dy, T* dx, int n, int d", floats},
	{"mean", "c2g_mean", "const T* x, long long n, double scale, T* y", floats},
	{"fill_scaled", "c2g_fill_scaled", "const T* g, double scale, T* y, long long n", floats},
	{"accuracy", "c2g_accuracy", "const T* x, const int* labels, int n, int d, int top_k, float* y", floats},
	{"label_xent", "c2g_label_xent", "const T* x, const int* labels, int n, int d, T* y", floats},
	{"label_xent_grad", "c2g_label_xent_grad", "const T* x, const int* labels, const T* dy, int n, int d, T* dx", floats},
	{"col_sums", "c2g_col_sums", "const T* x, int m, int n, T* s", floats},
	{"add_bias", "c2g_add_bias", "T* y, const T* b, int m, int n", floats},
	{"momentum_sgd", "c2g_momentum_sgd", "const T* g, const T* m, const T* lr, T* ng, T* nm, T* param, double momentum, int nesterov, long long n", floats},
	{"adam", "c2g_adam", "const T* w, const T* g, const T* m, const T* v, const T* lr, T* nw, T* nm, T* nv, T* ng, " +
		"double beta1, double beta2, double eps, double corr, long long n", floats},
	{"adagrad", "c2g_adagrad", "const T* w, const T* g, const T* h, const T* lr, T* nw, T* nh, T* elr, T* upd, double eps, double decay, long long n", floats},
}

// kernelName names the kernel of a table entry (an element-wise operator
// type or a kernelSpec name) for an element type suffix.
func kernelName(name, suffix string) string { return name + "_" + suffix }

// ewKernel names the kernel of element-wise operator typ.
func ewKernel(typ, suffix string) string { return kernelName("ew_"+typ, suffix) }

// elementType matches the T standing for the element type in
// kernelSpec.Params.
var elementType = regexp.MustCompile(`\bT\b`)

// specSource generates the templated kernels' extern "C" wrappers.
func specSource() string {
	var sb strings.Builder
	sb.WriteString("\n// Generated from the kernel table in source.go.\n")
	for _, k := range kernels {
		var names []string
		for _, p := range strings.Split(k.Params, ",") {
			f := strings.Fields(strings.NewReplacer("*", " ").Replace(p))
			names = append(names, f[len(f)-1])
		}
		for _, suffix := range k.Types {
			ct := cTypes[suffix]
			params := elementType.ReplaceAllString(k.Params, ct)
			fmt.Fprintf(&sb, "extern \"C\" __global__ void %s(%s) { %s<%s>(%s); }\n",
				kernelName(k.Name, suffix), params, k.Fn, ct, strings.Join(names, ", "))
		}
	}
	return sb.String()
}

// ewSource generates the element-wise operators' kernels: a grid-stride
// loop applying the operator's device function.
func ewSource() string {
	var sb strings.Builder
	sb.WriteString("\n// Generated from the element-wise table in source.go.\n")
	for _, op := range elementwise {
		for _, suffix := range floats {
			t := cTypes[suffix]
			params := make([]string, 0, op.Inputs+2+len(op.Args))
			call := make([]string, 0, op.Inputs+len(op.Args))
			for i := range op.Inputs {
				params = append(params, fmt.Sprintf("const %s* in%d", t, i))
				call = append(call, fmt.Sprintf("in%d[i]", i))
			}
			params = append(params, t+"* out")
			for i := range op.Args {
				params = append(params, fmt.Sprintf("double a%d", i))
				call = append(call, fmt.Sprintf("a%d", i))
			}
			params = append(params, "long long n")
			fmt.Fprintf(&sb, "extern \"C\" __global__ void %s(%s) {\n", ewKernel(op.Type, suffix), strings.Join(params, ", "))
			sb.WriteString("\tfor (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x)\n")
			fmt.Fprintf(&sb, "\t\tout[i] = %s<%s>(%s);\n}\n", op.Fn, t, strings.Join(call, ", "))
		}
	}
	return sb.String()
}

// Source returns the CUDA C source of every kernel the operators launch:
// the device functions under kernels/ followed by the generated kernels.
// It needs no header: NVRTC provides the CUDA built-ins and math
// functions.
func Source() string {
	var sb strings.Builder
	names, err := fs.Glob(kernelFiles, "kernels/*.cu")
	if err != nil {
		panic(err) // the pattern is valid: Glob fails only on a bad pattern
	}
	slices.Sort(names)
	for _, name := range names {
		b, err := kernelFiles.ReadFile(name)
		if err != nil {
			panic(err) // embedded at build time: a read cannot fail
		}
		fmt.Fprintf(&sb, "// %s\n%s\n", name, b)
	}
	sb.WriteString(specSource())
	sb.WriteString(ewSource())
	return sb.String()
}

// threadsPerBlock is the block size of the grid-stride kernels; the
// row-reduction kernels of kernels/loss.cu need exactly rowThreads.
const (
	threadsPerBlock = 256
	rowThreads      = 128
	maxBlocks       = 1 << 16
)

// blocks returns the grid size for a grid-stride kernel over n elements:
// one thread per element up to maxBlocks blocks, at least one.
func blocks(n int64) int {
	b := (n + threadsPerBlock - 1) / threadsPerBlock
	return int(min(max(b, 1), maxBlocks))
}
